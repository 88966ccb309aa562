"""The reproduction check: tolerances per metric kind, out-of-tolerance and verdict flips fail."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from paperlib.study import compare


def _results(root, values: dict[str, float], verdict: str = "inconclusive"):
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
    (root / "claims.json").write_text(json.dumps({"claims": [{"claim": "c1", "verdict": verdict}]}))
    return root


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


def test_metric_kinds_and_their_tolerances():
    assert compare.metric_kind("text_retrieval_recall@1") == "fraction"
    assert compare.metric_kind("acc5") == compare.metric_kind("mean_per_class_recall") == "fraction"
    assert compare.metric_kind("precision") == compare.metric_kind("recall") == "fraction"
    assert compare.metric_kind("himo@2") == "percentage"
    for metric in ("himo@k_pearson", "ssi", "pep_auc_L2", "pep_ap", "d_corr"):
        assert compare.metric_kind(metric) == "continuous", metric
    assert compare.tolerance("fraction", 0.3, 200) == pytest.approx(1 / 200, abs=2e-6)
    assert compare.tolerance("percentage", 40.0, 160) == pytest.approx(100 / 160, abs=2e-4)
    assert compare.tolerance("continuous", -0.53, 200) == pytest.approx(0.0053)
    assert compare.tolerance("continuous", 0.0, 200) == pytest.approx(1e-3)
    # one item more, read back from float32 results files, is within; two items are not
    committed, one_more = np.float32(0.12), np.float32(0.125)
    assert abs(float(one_more) - float(committed)) <= compare.tolerance("fraction", 0.12, 200)
    two_more = np.float32(0.13)
    assert abs(float(two_more) - float(committed)) > compare.tolerance("fraction", 0.12, 200)


def test_within_tolerance_passes_and_writes_the_report(tmp_path):
    committed = _results(tmp_path / "a", BASE)
    near = {
        **BASE,
        "text_retrieval_recall@1": 0.305,
        "cola_accuracy": 0.52,
        "himo@2": 40.6,
        "d_corr": -0.5286,
        "pep_auc": 0.5109,
    }  # one item; a flipped tie; float noise
    reproduced = _results(tmp_path / "b", near)
    assert compare.compare(committed, reproduced, tmp_path / "report")
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["rows"]) == 8 and all(r["within"] for r in report["rows"])
    assert report["largest"]["continuous"]["metric"].endswith("d_corr")
    assert "8 of 8 metrics within tolerance" in (tmp_path / "report.md").read_text()


@pytest.mark.parametrize(
    "metric, value",
    [
        ("text_retrieval_recall@1", 0.311),
        ("cola_accuracy", 0.53),
        ("himo@2", 40.7),
        ("pep_auc", 0.5156),
    ],
)
def test_a_difference_beyond_its_tolerance_fails(tmp_path, metric, value):
    committed = _results(tmp_path / "a", BASE)
    reproduced = _results(tmp_path / "b", {**BASE, metric: value})
    assert not compare.compare(committed, reproduced, tmp_path / "report")
    rows = json.loads((tmp_path / "report.json").read_text())["rows"]
    assert [r["metric"] for r in rows if not r["within"]] == [metric]


def test_a_verdict_flip_or_a_missing_file_fails(tmp_path, capsys):
    committed = _results(tmp_path / "a", BASE)
    flipped = _results(tmp_path / "b", BASE, verdict="untestable")
    assert not compare.compare(committed, flipped, tmp_path / "r1")
    assert "c1: inconclusive → untestable" in (tmp_path / "r1.md").read_text()
    shutil.rmtree(tmp_path / "b")
    missing = _results(tmp_path / "b", BASE)
    (missing / "himo" / "molo" / "seed0" / "world-cola.json").unlink()
    assert not compare.compare(committed, missing, tmp_path / "r2")
    assert (
        "OUT OF TOLERANCE himo/molo/seed0/world-cola.json cola_accuracy" in capsys.readouterr().out
    )
    with pytest.raises(FileNotFoundError, match="no reproduced results"):
        compare.compare(committed, tmp_path / "nowhere", tmp_path / "r3")
