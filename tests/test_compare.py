"""The reproduction check: tolerances per metric kind, out-of-tolerance and verdict flips fail."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from paperlib.study import compare
from paperlib.study.report import reproduction, variation


def _results(root, values: dict[str, float], verdict: str = "inconclusive", effect=0.01):
    run = root / "himo" / "molo" / "seed0"
    run.mkdir(parents=True)
    np.savez(
        run / "items.npz",
        **{
            "world-long/i2t_hit1": np.zeros(200),
            "world-cola/correct": np.zeros(50),
            "world-monotonicity/himo2": np.zeros(160),
        },
    )
    files = {
        "world-long": ("text_retrieval_recall@1", "image_retrieval_recall@5"),
        "world-cola": ("cola_accuracy",),
        "world-monotonicity": ("himo@2", "himo@k_pearson"),
        "world-hierarchy": ("pep_auc", "d_corr", "precision"),
    }
    for dataset, metrics in files.items():
        payload = {"dataset": dataset, "metrics": {m: values[m] for m in metrics}}
        (run / f"{dataset}.json").write_text(json.dumps(payload))
    claim = {"claim": "c1", "verdict": verdict, "effect": effect, "interval": [0.005, 0.015]}
    (root / "claims.json").write_text(json.dumps({"claims": [claim]}))
    return root


def _variation(committed, spread: dict[str, float]):
    """A measured variation of ``committed``: one configuration moving each metric by its spread."""
    values = variation.metric_values(committed)
    moved = {k: v + spread.get(k.split(":")[1], 0.0) for k, v in values.items()}
    payload = {
        "committed_fingerprint": variation.fingerprint(values),
        "configurations": {"other kernels": {"values": moved}},
    }
    (committed / "variation.json").write_text(json.dumps(payload))


@pytest.fixture(autouse=True)
def _claims_are_decided(monkeypatch):
    """The toy results have no run records to re-decide; that check has its own test."""
    monkeypatch.setattr(
        compare, "check_decided",
        lambda folder, scale, what: reproduction._read_json(folder / "claims.json", what),
    )  # fmt: skip


BASE = {
    "text_retrieval_recall@1": 0.30,
    "image_retrieval_recall@5": 0.6,
    "cola_accuracy": 0.5,
    "himo@2": 40.0,
    "himo@k_pearson": -0.10,
    "pep_auc": 0.51,
    "d_corr": -0.53,
    "precision": 0.2,
}


def test_metric_kinds_and_the_floor_of_their_tolerances():
    assert reproduction.metric_kind("text_retrieval_recall@1") == "fraction"
    assert (
        reproduction.metric_kind("acc5")
        == reproduction.metric_kind("mean_per_class_recall")
        == "fraction"
    )
    assert reproduction.metric_kind("precision") == reproduction.metric_kind("recall") == "fraction"
    assert reproduction.metric_kind("himo@2") == "percentage"
    for metric in ("himo@k_pearson", "ssi", "pep_auc_L2", "pep_ap", "d_corr"):
        assert reproduction.metric_kind(metric) == "continuous", metric
    assert reproduction.floor("fraction", 200) == pytest.approx(1 / 200, abs=2e-6)
    assert reproduction.floor("percentage", 160) == pytest.approx(100 / 160, abs=2e-4)
    assert reproduction.floor("continuous", 200) == pytest.approx(1e-4)
    # a measured spread sets the tolerance (times the margin) where it exceeds the floor
    limit, source = reproduction.tolerance("fraction", 200, 0.01)
    assert limit == pytest.approx(reproduction.MARGIN * 0.01) and "spread" in source
    limit, source = reproduction.tolerance("fraction", 200, 0.0)
    assert limit == pytest.approx(1 / 200, abs=2e-6) and "floor" in source
    # one item more, read back from float32 results files, is within the floor; two are not
    committed, one_more, two_more = np.float32(0.12), np.float32(0.125), np.float32(0.13)
    assert abs(float(one_more) - float(committed)) <= reproduction.floor("fraction", 200)
    assert abs(float(two_more) - float(committed)) > reproduction.floor("fraction", 200)


def test_within_the_measured_tolerance_passes_and_writes_the_report(tmp_path):
    committed = _results(tmp_path / "a", BASE)
    _variation(committed, {"text_retrieval_recall@1": 0.01, "d_corr": 0.002})
    near = {
        **BASE,
        "text_retrieval_recall@1": 0.325,  # 5 items: within 3 × the run's measured 0.01
        "image_retrieval_recall@5": 0.62,  # a rate of the same run: the pooled spread applies
        "d_corr": -0.525,  # within 3 × 0.002
        "pep_auc": 0.51005,
    }
    reproduced = _results(tmp_path / "b", near)
    assert compare.compare(committed, reproduced, tmp_path / "report")
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["rows"]) == 8 and all(r["within"] for r in report["rows"])
    rates = [
        r
        for r in report["rows"]
        if r["kind"] == "fraction" and r["file"].endswith("world-long.json")
    ]
    assert all(r["tolerance"] == pytest.approx(0.03) for r in rates)
    assert "8 of 8 metrics within tolerance" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    "metric, value",
    [
        ("text_retrieval_recall@1", 0.34),  # beyond 3 × 0.01
        ("cola_accuracy", 0.54),  # beyond 3 × the run's pooled rate spread 0.01
        ("himo@2", 40.7),
        ("pep_auc", 0.512),
    ],
)
def test_a_difference_beyond_its_tolerance_fails(tmp_path, metric, value):
    committed = _results(tmp_path / "a", BASE)
    _variation(committed, {"text_retrieval_recall@1": 0.01})
    reproduced = _results(tmp_path / "b", {**BASE, metric: value})
    assert not compare.compare(committed, reproduced, tmp_path / "report")
    rows = json.loads((tmp_path / "report.json").read_text())["rows"]
    assert [r["metric"] for r in rows if not r["within"]] == [metric]


def test_a_verdict_change_a_sign_flip_or_a_missing_file_fails(tmp_path, capsys):
    committed = _results(tmp_path / "a", BASE)
    _variation(committed, {})
    flipped = _results(tmp_path / "b", BASE, verdict="untestable")
    assert not compare.compare(committed, flipped, tmp_path / "r1")
    assert "c1: verdict inconclusive → untestable" in (tmp_path / "r1.md").read_text()
    shutil.rmtree(tmp_path / "b")
    sign = _results(tmp_path / "b", BASE, effect=-0.01)  # its committed interval excludes 0
    assert not compare.compare(committed, sign, tmp_path / "r2")
    assert "c1: effect +0.01 → -0.01" in (tmp_path / "r2.md").read_text()
    shutil.rmtree(tmp_path / "b")
    missing = _results(tmp_path / "b", BASE)
    (missing / "himo" / "molo" / "seed0" / "world-cola.json").unlink()
    assert not compare.compare(committed, missing, tmp_path / "r3")
    assert (
        "OUT OF TOLERANCE himo/molo/seed0/world-cola.json cola_accuracy" in capsys.readouterr().out
    )
    with pytest.raises(reproduction.CompareInputError, match="no reproduced results"):
        compare.compare(committed, tmp_path / "nowhere", tmp_path / "r4")


def test_a_stale_or_missing_variation_and_malformed_results_are_named(tmp_path):
    committed = _results(tmp_path / "a", BASE)
    reproduced = _results(tmp_path / "b", BASE)
    with pytest.raises(reproduction.CompareInputError, match="variation.json: missing"):
        compare.compare(committed, reproduced, tmp_path / "r")
    _variation(committed, {})
    (committed / "himo/molo/seed0/world-long.json").write_text(
        json.dumps(
            {
                "dataset": "world-long",
                "metrics": {"text_retrieval_recall@1": 0.31, "image_retrieval_recall@5": 0.6},
            }
        )
    )
    with pytest.raises(
        reproduction.CompareInputError, match="measured against other committed results"
    ):
        compare.compare(committed, reproduced, tmp_path / "r")
    _variation(committed, {})
    (reproduced / "himo/molo/seed0/world-cola.json").write_text("{broken")
    with pytest.raises(reproduction.CompareInputError, match="world-cola.json: not valid JSON"):
        compare.compare(committed, reproduced, tmp_path / "r")


def test_the_command_line_exits_2_naming_a_bad_input(tmp_path, capsys):
    code = compare.main(["--reproduced", str(tmp_path / "none"), "--committed", str(tmp_path)])
    assert code == 2 and "no reproduced results" in capsys.readouterr().err


def test_a_missing_study_record_is_reported_not_taken_for_the_same_environment(tmp_path):
    committed, reproduced = tmp_path / "committed", tmp_path / "reproduced"
    committed.mkdir()
    reproduced.mkdir()
    (committed / "study.json").write_text(json.dumps({"environment": {"python": "3.11.9"}}))
    env = reproduction.environments(committed, reproduced)
    assert env == [("environment", "recorded", "not recorded (study.json missing)")]
    (reproduced / "study.json").write_text(json.dumps({"environment": {"python": "3.12.1"}}))
    assert ("python", "3.11.9", "3.12.1") in reproduction.environments(committed, reproduced)


def test_a_study_recorded_without_provenance_shows_the_code_difference(tmp_path):
    committed, reproduced = tmp_path / "committed", tmp_path / "reproduced"
    committed.mkdir()
    reproduced.mkdir()
    environment = {"python": "3.11.9"}
    (committed / "study.json").write_text(json.dumps({"environment": environment}))
    provenance = {"commit": "c" * 40, "dirty": False, "code_hash": "h" * 64}
    (reproduced / "study.json").write_text(
        json.dumps({"environment": environment, "provenance": provenance})
    )
    assert reproduction.environments(committed, reproduced) == [
        ("provenance.code_hash", None, "h" * 64),
        ("provenance.commit", None, "c" * 40),
        ("provenance.dirty", None, False),
    ]


def test_a_metric_s_tolerance_covers_its_largest_spread_in_any_run():
    spread = {
        "himo/a/seed0/world-monotonicity.json:ssi": 8.5e-5,  # a run that moved little
        "himo/b/seed0/world-monotonicity.json:ssi": 0.0169,
        "himo/b/seed0/world-monotonicity.json:himo@K_pearson": 0.002,
    }
    pooled = reproduction.pooled_spreads(spread)
    quiet = reproduction.measured_spread(pooled, "himo/a/seed0", "world-monotonicity.json", "ssi")
    assert quiet == 0.0169  # not the run's own 8.5e-5
    other = reproduction.measured_spread(
        pooled, "himo/b/seed0", "world-monotonicity.json", "himo@K_pearson"
    )
    assert other == 0.0169  # its run's largest continuous spread still applies
    assert reproduction.measured_spread(pooled, "himo/c/seed0", "world-long.json", "x") is None
    limit, source = reproduction.tolerance("continuous", 200, quiet)
    assert limit == pytest.approx(3 * 0.0169) and "any run" in source
