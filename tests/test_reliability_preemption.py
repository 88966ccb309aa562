"""A run stopped by a signal does not pass for a finished one: the train command exits 75, its
checkpoint records the step and the status, and ``evaluate`` refuses it unless asked
(``--allow-partial``), which writes the training's progress, marked partial, into every results
file (a finished run's results record its progress too)."""

from __future__ import annotations

import json
import os
import signal

import pytest
import torch

from paperlib import exit_status
from paperlib.engine import checkpoint, evaluation, loop
from paperlib.evaluate import main as evaluate_main
from paperlib.train import main as train_main
from tests.engine_helpers import tiny_config

STEPS = 8


def _stopped_at(tmp_path, monkeypatch, at: int):
    """``python -m paperlib.train`` (in this process) sent SIGTERM during step ``at``."""
    real, calls = loop.apply_update, {"n": 0}

    def update(*args, **kwargs):
        lr = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == at:
            os.kill(os.getpid(), signal.SIGTERM)
        return lr

    monkeypatch.setattr(loop, "apply_update", update)
    config = tmp_path / "c.json"
    config.write_text(json.dumps(tiny_config("clip", tmp_path / "run", train={"steps": STEPS})))
    code = train_main([str(config)])
    monkeypatch.undo()
    return code, tmp_path / "run"


def test_sigterm_exits_75_with_the_step_and_status_in_the_checkpoint(tmp_path, monkeypatch, capsys):
    code, run = _stopped_at(tmp_path, monkeypatch, 3)
    assert code == exit_status.INTERRUPTED == 75
    assert "interrupted at step 3" in capsys.readouterr().out
    state = torch.load(run / "last.pt", weights_only=True)
    assert (state["step"], state["status"]) == (3, "interrupted")
    assert checkpoint.training_progress(state, run) == {
        "step": 3, "steps": STEPS, "status": "interrupted"
    }  # fmt: skip
    assert loop.train(tiny_config("clip", run, train={"steps": STEPS})).status == "finished"
    done = torch.load(run / "last.pt", weights_only=True)
    assert (done["step"], done["status"]) == (STEPS, "finished")


def test_evaluate_refuses_an_interrupted_run_unless_allowed_and_marks_it(
    tmp_path, monkeypatch, capsys
):
    """The case: SIGTERM stopped training at step 5 of 40 with exit 0, and evaluate scored the
    checkpoint with nothing in its results saying so."""
    _, run = _stopped_at(tmp_path, monkeypatch, 2)
    out = tmp_path / "results"
    argv = [str(run), "--output", str(out), "--benchmarks", "world-long", "--world-size", "8"]
    assert evaluate_main(argv) == 2
    err = capsys.readouterr().err
    assert "stopped at step 2 of 8 (status 'interrupted')" in err and "--allow-partial" in err
    assert not out.exists() or not list(out.glob("*.json"))
    assert evaluate_main([*argv, "--allow-partial"]) == 0
    for path in out.glob("world-long*.json"):
        recorded = json.loads(path.read_text())["training"]
        assert recorded == {"step": 2, "steps": STEPS, "status": "interrupted", "partial": True}


def test_a_periodic_checkpoint_of_a_killed_run_is_partial_too(tmp_path):
    run = loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 4})).output_dir
    state = torch.load(run / "last.pt", weights_only=True)
    state["step"], state["status"] = 2, "running"  # as a kill -9 after the step-2 save leaves it
    torch.save(state, run / "last.pt")
    with pytest.raises(ValueError, match=r"stopped at step 2 of 4 \(status 'running'\)"):
        evaluation.evaluate(run, ["world-long"], output_dir=tmp_path / "out", world_size=8)


def test_a_finished_run_s_results_record_its_progress(tmp_path):
    run = loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 2})).output_dir
    rows = evaluation.evaluate(run, ["world-long"], output_dir=tmp_path / "out", world_size=8)
    assert all(r["training"] == {"step": 2, "steps": 2, "status": "finished", "partial": False}
               for r in rows)  # fmt: skip


def test_a_checkpoint_written_before_statuses_is_read_by_its_step(tmp_path):
    run = loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 2})).output_dir
    state = torch.load(run / "last.pt", weights_only=True)
    del state["status"]
    assert checkpoint.training_progress(state, run)["status"] == "finished"
    state["step"] = 1
    assert checkpoint.training_progress(state, run)["status"] == "running"
    state["status"] = "paused"
    with pytest.raises(ValueError, match="field 'status' must be one of"):
        checkpoint.training_progress(state, run)
