"""The checks of the study's results files (``paperlib.study.results.files``): each file kind
refused by name, field, expectation and finding; the committed files pass; the readers refuse
runs the plan does not hold and trained runs without their log; ``compare`` refuses a report
that would land on its inputs."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from paperlib.study import compare
from paperlib.study.report import reproduction
from paperlib.study.report.decided import read_claims
from paperlib.study.results import files
from paperlib.study.results.files import ResultsFileError
from paperlib.study.results.validity import finished_runs
from paperlib.train import log_records
from tests.conftest import REPO

SMOKE = REPO / "results" / "smoke"
MOLO = SMOKE / "himo" / "molo" / "seed0"


def _record() -> dict:
    return json.loads((MOLO / "run.done").read_text())


def _write(tmp_path, data, name="seed0/run.done"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_the_committed_smoke_files_pass_every_checker():
    record = files.read_run_done(MOLO / "run.done")
    assert record["seed"] == 0 and record["config"]["method"] == "himo"
    assert len(files.read_log(MOLO, record, log_records)) > 0
    items = files.read_items(MOLO / "items.npz")
    assert items["world-long/i2t_hit1"].dtype == np.float64
    assert files.read_curves(SMOKE / "curves.json")["validation"]
    assert files.read_study(SMOKE / "study.json")["runs"] >= 1


def test_the_committed_smoke_claims_pass_their_checker():
    assert read_claims(SMOKE / "claims.json")["claims"]
    assert read_claims(REPO / "results" / "full" / "claims.json")["claims"]


@pytest.mark.parametrize(
    "edit, field, found",
    [
        (lambda d: d.update(seed="0"), "seed", "'0'"),
        (lambda d: d.update(seed=True), "seed", "True"),
        (lambda d: d.update(config=[]), "config", "[]"),
        (lambda d: d["config"].update(method="nope"), "config.method", "'nope'"),
        (lambda d: d["config"]["train"].update(steps=2.5), "config.train.steps", "2.5"),
        (lambda d: d.pop("feature_std"), "feature_std", "<missing>"),
        (lambda d: d.update(feature_std=-1.0), "feature_std", "-1.0"),
        (lambda d: d.update(train_seconds=float("nan")), "train_seconds", "nan"),
    ],
)
def test_a_bad_run_done_field_is_refused_by_file_field_and_finding(tmp_path, edit, field, found):
    record = _record()
    edit(record)
    path = _write(tmp_path, record)
    with pytest.raises(ResultsFileError) as refused:
        files.read_run_done(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: {field}: expected ")
    assert message.endswith(f"found {found}") and "\n" not in message


def test_a_run_done_whose_seed_is_not_its_folder_s_is_refused(tmp_path):
    path = _write(tmp_path, {**_record(), "seed": 1})
    with pytest.raises(ResultsFileError, match="seed: expected the seed its folder names"):
        files.read_run_done(path)


def test_a_trained_run_needs_its_log_and_its_validation_curve(tmp_path):
    record = files.read_run_done(MOLO / "run.done")
    with pytest.raises(ResultsFileError, match="log.jsonl: the file: expected the training log"):
        files.read_log(tmp_path, record, log_records)
    steps_only = [
        line for line in (MOLO / "log.jsonl").read_text().splitlines() if '"val"' not in line
    ]
    (tmp_path / "log.jsonl").write_text("\n".join(steps_only) + "\n")
    with pytest.raises(ResultsFileError, match="val: expected the run's validation curve"):
        files.read_log(tmp_path, record, log_records)
    reference = {
        **record,
        "config": {**record["config"], "train": {**record["config"]["train"], "steps": 0}},
    }
    (tmp_path / "log.jsonl").unlink()
    assert files.read_log(tmp_path, reference, log_records) == []


def test_a_validation_value_outside_0_1_is_refused(tmp_path):
    record = files.read_run_done(MOLO / "run.done")
    text = (MOLO / "log.jsonl").read_text().replace('"short_i2t_r1": 1.0', '"short_i2t_r1": 1.5', 1)
    (tmp_path / "log.jsonl").write_text(text)
    with pytest.raises(
        ResultsFileError, match=r"val\.short_i2t_r1: expected a number in \[0, 1\], found 1.5"
    ):
        files.read_log(tmp_path, record, log_records)


def test_items_missing_a_key_or_not_vectors_are_refused(tmp_path):
    path = tmp_path / "items.npz"
    np.savez(path, a=np.ones(3), b=np.ones((2, 2)))
    with pytest.raises(ResultsFileError, match="items.npz: b: expected a non-empty vector"):
        files.read_items(path)
    np.savez(path, a=np.array([1.0, np.nan]))
    with pytest.raises(ResultsFileError, match="a: expected finite values"):
        files.read_items(path)
    with pytest.raises(ResultsFileError, match="c: expected a per-item vector, found <missing>"):
        files.item({"a": np.ones(2)}, "c", path)
    with pytest.raises(ResultsFileError, match="a: expected 2 items"):
        files.stack([(path, np.ones(2)), (tmp_path / "other.npz", np.ones(3))], "a")


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: d.update(claims=None), "claims: expected a list, found None"),
        (lambda d: d.update(claims=[]), "claims: expected the decided claims"),
        (lambda d: d["claims"][0].pop("verdict"), r"claims\[0\].verdict: expected one of"),
        (lambda d: d["claims"][0].update(verdict="great"), r"claims\[0\].verdict: .*found 'great'"),
        (lambda d: d["claims"][0].update(effect="0.1"), r"claims\[0\].effect: expected a finite"),
        (
            lambda d: d["claims"][0].update(interval=[2, 1]),
            r"claims\[0\].interval: expected a list of two",
        ),
        (
            lambda d: d["claims"][0].update(runs_total=1.5),
            r"claims\[0\].runs_total: expected an integer",
        ),
        (
            lambda d: d["claims"][0].update(p_adjusted=2.0),
            r"claims\[0\].p_adjusted: expected a number in \[0, 1\]",
        ),
        (
            lambda d: d["claims"][0].update(seeds=[-1]),
            r"claims\[0\].seeds\[0\]: expected an integer seed",
        ),
    ],
)
def test_a_bad_claims_json_is_refused_by_field(tmp_path, edit, match):
    decided = json.loads((SMOKE / "claims.json").read_text())
    edit(decided)
    path = _write(tmp_path, decided, "claims.json")
    with pytest.raises(ResultsFileError, match=match):
        read_claims(path)


def test_bad_curves_and_study_records_and_a_folder_in_place_are_refused(tmp_path):
    curves = json.loads((SMOKE / "curves.json").read_text())
    curves["validation"][0]["points"][0]["value"] = 3
    with pytest.raises(
        ResultsFileError, match=r"validation\[0\].points\[0\].value: expected a number in"
    ):
        files.read_curves(_write(tmp_path, curves, "curves.json"))
    norm = {**curves["validation"][0], "metric": "norm_box_text"}  # a mean norm, not a rate
    curves["validation"] = [{**norm, "points": [{"step": 0, "value": 3.0}]}]
    assert files.read_curves(_write(tmp_path, curves, "curves.json"))
    curves["validation"][0]["points"][0]["value"] = -1.0
    with pytest.raises(ResultsFileError, match=r"points\[0\].value: expected a finite number ≥ 0"):
        files.read_curves(_write(tmp_path, curves, "curves.json"))
    study = {**json.loads((SMOKE / "study.json").read_text()), "runs_finished": 10**6}
    with pytest.raises(ResultsFileError, match="runs_finished: expected at most runs"):
        files.read_study(_write(tmp_path, study, "study.json"))
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(ResultsFileError, match="folder.json: the file: expected a file"):
        files.writable_file(tmp_path / "folder.json")
    (tmp_path / "half.json").write_text("{half")
    with pytest.raises(ResultsFileError, match="half.json: not valid JSON"):
        files.read_study(tmp_path / "half.json")


def test_a_run_the_plan_does_not_hold_is_refused_naming_the_plan(tmp_path, monkeypatch):
    copy = tmp_path / "results" / "smoke"
    shutil.copytree(SMOKE, copy)
    seed1 = copy / "himo" / "molo" / "seed1"
    shutil.copytree(copy / "himo" / "molo" / "seed0", seed1)
    (seed1 / "run.done").write_text(json.dumps({**_record(), "seed": 1}))
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    with pytest.raises(
        ResultsFileError,
        match=r"seed1/run.done: its folder: .*plan \(it holds seeds \[0\] of molo\)",
    ):
        finished_runs("smoke")


def test_compare_refuses_a_report_on_its_inputs_or_in_the_committed_results(tmp_path):
    inputs = (tmp_path / "c" / "smoke", tmp_path / "r" / "smoke")
    compare.refuse_outputs(tmp_path / "r" / "smoke-comparison", inputs)  # the default: allowed
    with pytest.raises(reproduction.CompareInputError, match="inside the results it compares"):
        compare.refuse_outputs(inputs[1] / "claims", inputs)
    with pytest.raises(reproduction.CompareInputError, match="inside the committed results/"):
        compare.refuse_outputs(REPO / "results" / "smoke" / "claims", inputs)
