"""The hyperbolic learning-rate probe (``scripts/hyperbolic_lr_probe.py``) changes only what it
names, reads only validation records, and its committed curves span the committed schedule."""

from __future__ import annotations

import importlib.util
import json
import math

import pytest

from tests.engine_helpers import REPO

PROBE = REPO / "results/full/probes/hyperbolic-lr.json"


@pytest.fixture(scope="module")
def probe():
    spec = importlib.util.spec_from_file_location("probe", REPO / "scripts/hyperbolic_lr_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_probe_config_differs_from_the_committed_run_only_where_it_says(probe, tmp_path):
    run_done = REPO / "results/full/argent/argent/seed0/run.done"
    committed = json.loads(run_done.read_text())["config"]
    config = probe.probe_config(run_done, 2e-5, 100, 30, tmp_path / "out")
    assert config["optim"] == {**committed["optim"], "lr": 2e-5, "warmup_steps": 100}
    changed = {"output_dir", "val_metrics", "val_every"}
    assert {k: v for k, v in config["train"].items() if k not in changed} == {
        k: v for k, v in committed["train"].items() if k not in changed
    }
    assert config["train"]["val_metrics"] == probe.METRICS and config["train"]["val_every"] == 30
    for section in ("method", "model", "data", "loss"):
        assert config[section] == committed[section], section


def test_validation_curve_reads_only_validation_records(probe, tmp_path):
    log = tmp_path / "log.jsonl"
    lines = [
        {"step": 0, "val": {"zeroshot_L3": 0.3}, "val_size": 5},
        {"step": 5, "loss": 1.0},
        {"step": 30, "val": {"zeroshot_L3": 0.2}, "val_size": 5},
    ]
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert probe.validation_curve(log) == [
        {"step": 0, "zeroshot_L3": 0.3},
        {"step": 30, "zeroshot_L3": 0.2},
    ]


def test_the_committed_probe_starts_at_the_base_and_ends_at_the_committed_schedule():
    record = json.loads(PROBE.read_text())
    steps = json.loads((REPO / record["run"] / "run.done").read_text())["config"]["train"]["steps"]
    starts = {json.dumps(curve[0], sort_keys=True) for curve in record["curves"].values()}
    assert len(starts) == 1  # every setting starts from the same base, before any step
    for curve in record["curves"].values():
        assert curve[-1]["step"] == steps
        assert all(
            0 <= curve[-1][m] <= 1 and not math.isnan(curve[-1][m]) for m in record["metrics"]
        )
