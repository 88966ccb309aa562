"""The from-scratch budget probe: its runs are the hyperbolic bases' config (``study.plan.bases``)
with only the objective and the validated metrics changed, its summary reads a fabricated log
as a naive recount does, and the full scale's budget is the one ``study.plan.scratch_budget`` reads
off its committed record."""

from __future__ import annotations

import importlib.util
import json

from paperlib.study.decide.targets import SCRATCH_TARGETS
from paperlib.study.paths import REPO_ROOT
from paperlib.study.plan import bases, scratch_budget
from paperlib.study.plan.scales import SCALES
from paperlib.study.results.references import PLATEAU_METRICS, plateau_deltas
from tests.test_study import _differences

spec = importlib.util.spec_from_file_location(
    "scratch_budget_probe", REPO_ROOT / "scripts" / "scratch_budget_probe.py"
)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def test_the_probe_runs_are_the_hyperbolic_base_s_config_with_another_objective(tmp_path):
    """Base 0's config (world 0, seed 0, 6,400 steps at batch 128, lr 1e-3 after 200 warm-up
    steps, weight decay 0.1, 200,000 scenes with twins, validated 16 times on 1,000 items),
    with HyCoCLIP's or ARGENT's objective in place of MERU's, validated on the probe's metrics
    (the plateau metrics and the captions' share inside 2K/√c among them), each in a folder
    of its own."""
    base = bases.base_config(bases.MODEL, 0, bases.RECIPES["full"], tmp_path, "hyperbolic")
    assert base["method"] == "meru" and base["model"]["init"] == "random"
    folders = set()
    for arm, method in (("HyCoCLIP", "hycoclip"), ("ARGENT", "argent")):
        config = probe.probe_config(arm, tmp_path)
        assert _differences(config, base) == {"method", "train.val_metrics"}
        assert config["method"] == method and config["train"]["seed"] == 0
        assert set(PLATEAU_METRICS["argent"]) <= set(config["train"]["val_metrics"])
        assert "inside_short" in config["train"]["val_metrics"]
        assert (config["train"]["steps"], config["train"]["batch_size"]) == (6400, 128)
        assert config["train"]["val_every"] == 400 and config["data"]["twins"]
        folders.add(config["train"]["output_dir"])
    assert len(folders) == 2 and all(f.startswith(str(tmp_path)) for f in folders)


def test_the_summary_reads_the_curve_the_terms_and_the_cost_off_the_log(tmp_path, monkeypatch):
    """A fabricated log of validation records, training records (the terms the objective
    logs) and a final status: the curve is every validation record with its samples seen
    (step × 128), the training list every record with a loss and the terms it holds, the cost
    the last CPU seconds logged, and the run finished only with its checkpoint and status."""
    original = probe.probe_config
    monkeypatch.setattr(probe, "probe_config", lambda arm, root=tmp_path: original(arm, tmp_path))
    config = probe.probe_config("ARGENT")
    output = tmp_path / "argent-world0-seed0"
    assert config["train"]["output_dir"] == str(output)
    output.mkdir()
    records = [
        {"step": 0, "val": {"zeroshot_L1": 0.1, "short_i2t_r1": 0.01}, "val_size": 1000},
        {"step": 100, "loss": 5.0, "contrastive": 4.0, "entailment": 0.5, "curv": 0.9,
         "cpu_seconds": 30.0},
        {"step": 200, "loss": 4.0, "contrastive": 3.5, "regularizer": 0.2, "cpu_seconds": 61.5},
        {"step": 400, "val": {"zeroshot_L1": 0.4, "short_i2t_r1": 0.3}, "val_size": 1000},
    ]  # fmt: skip
    (output / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    summary = probe.summarise("ARGENT")
    assert summary["method"] == "argent" and summary["config"] == config
    assert summary["curve"] == [
        {"step": 0, "samples": 0, "zeroshot_L1": 0.1, "short_i2t_r1": 0.01},
        {"step": 400, "samples": 51_200, "zeroshot_L1": 0.4, "short_i2t_r1": 0.3},
    ]
    assert summary["training"] == [
        {"step": 100, "curv": 0.9, "contrastive": 4.0, "entailment": 0.5, "loss": 5.0},
        {"step": 200, "contrastive": 3.5, "regularizer": 0.2, "loss": 4.0},
    ]
    assert summary["cpu_seconds"] == 61.5 and summary["finished"] is False
    (output / "last.pt").write_bytes(b"checkpoint")
    with (output / "log.jsonl").open("a") as log:
        log.write(json.dumps({"step": 400, "status": "finished"}) + "\n")
    assert probe.summarise("ARGENT")["finished"] is True


def test_the_committed_probe_finds_no_plateau_and_the_budget_passes_the_learning_targets():
    """The committed record's budget is what ``study.plan.scratch_budget`` reads off its own curves
    (none: no validated point has both arms flat and staying flat), the record's runs are the
    probe's configs and ran past the full scale's budget, and at ``Scale.scratch_steps`` both
    arms' validation curves pass the learning targets the study asks of its from-scratch arms."""
    record = json.loads(probe.PROBE.read_text())
    assert set(record["arms"]) == set(probe.ARMS)
    curves, batches, items = {}, set(), set()
    full = SCALES["full"]
    for arm, found in record["arms"].items():
        expected = probe.probe_config(arm)
        assert _differences(found["config"], expected) <= {"data.cache_dir"}, arm
        batches.add(found["config"]["train"]["batch_size"])
        items.add(found["config"]["train"]["val_size"])
        curves[arm] = {
            m: [(p["step"], p[m]) for p in found["curve"]] for m in PLATEAU_METRICS["argent"]
        }
        assert max(p["step"] for p in found["curve"]) > full.scratch_steps, arm
        at_budget = next(p for p in found["curve"] if p["step"] == full.scratch_steps)
        for metric, target in zip(PLATEAU_METRICS["argent"], SCRATCH_TARGETS.values()):
            assert at_budget[metric] >= target, (arm, metric)
    (batch,), (n_items,) = batches, items
    found = scratch_budget.budget(curves, batch, n_items, plateau_deltas("full", "argent"))
    assert found == record["budget"]
    assert found["steps"] is None
    assert full.scratch_batch == batch
