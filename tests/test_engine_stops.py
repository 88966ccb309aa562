"""The loop stops cleanly: Ctrl-C is a SIGTERM, and non-finite weights after an update stop the
run, naming the parameter, before a checkpoint could keep them."""

from __future__ import annotations

import math
import os
import signal

import pytest
import torch

from paperlib.engine import loop
from tests.engine_helpers import final_weights, tiny_config


def _on_step(monkeypatch, at: int, action) -> None:
    """Run ``action(module)`` right after the optimiser update of step ``at``."""
    real, calls = loop.apply_update, {"n": 0}

    def update(module, optimizer, scheduler, config):
        lr = real(module, optimizer, scheduler, config)
        calls["n"] += 1
        if calls["n"] == at:
            action(module)
        return lr

    monkeypatch.setattr(loop, "apply_update", update)


def test_ctrl_c_saves_the_checkpoint_and_returns(tmp_path, monkeypatch):
    _on_step(monkeypatch, 2, lambda module: os.kill(os.getpid(), signal.SIGINT))
    before = signal.getsignal(signal.SIGINT)  # default, or ignored in a background job
    result = loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 6}))
    assert (result.status, result.step) == ("interrupted", 2)
    assert torch.load(tmp_path / "run" / "last.pt", weights_only=True)["step"] == 2
    assert signal.getsignal(signal.SIGINT) is before  # the caller's handler restored


def test_non_finite_weights_stop_before_any_checkpoint_keeps_them(tmp_path, monkeypatch):
    def poison(module):
        with torch.no_grad():
            next(module.parameters()).fill_(math.nan)

    _on_step(monkeypatch, 3, poison)
    config = tiny_config("clip", tmp_path / "run", train={"steps": 6, "ckpt_every": 1})
    with pytest.raises(
        loop.NonFiniteLossError,
        match=r"parameter '.+' is not finite after the "
        r"update of step 3",
    ):
        loop.train(config)
    saved = torch.load(tmp_path / "run" / "last.pt", weights_only=True)
    assert saved["step"] == 2
    assert all(
        torch.isfinite(v).all()
        for v in final_weights(tmp_path / "run").values()
        if v.is_floating_point()
    )


def test_check_parameters_names_the_first_bad_parameter():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    loop.check_parameters(model, 1)
    with torch.no_grad():
        model[1].bias.fill_(math.inf)
    with pytest.raises(loop.NonFiniteLossError, match="parameter '1.bias'.*step 7"):
        loop.check_parameters(model, 7)


def test_a_folder_in_use_by_another_run_is_refused(tmp_path):
    import fcntl

    (tmp_path / "run").mkdir()
    with open(tmp_path / "run" / ".lock", "a+") as held:  # another process's lock
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # flock locks are per open file description: a second open in this process conflicts
        with pytest.raises(RuntimeError, match="is in use by another run"):
            loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 1}))
    assert (
        loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 1})).status == "finished"
    )


def test_resume_false_on_a_used_folder_is_refused_and_orphans_are_removed(tmp_path):
    from paperlib.engine.config import ConfigError

    loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 1}))
    with pytest.raises(ConfigError, match="already holds a run; with train.resume=false"):
        loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 1, "resume": False}))
    orphan = tmp_path / "run" / ".last.pt.abc123.tmp"  # a checkpoint write cut short
    orphan.write_bytes(b"partial")
    loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 2}))
    assert not orphan.exists()


def test_a_resumed_run_logs_each_step_once(tmp_path):
    import json

    config = tiny_config("clip", tmp_path / "run", train={"steps": 4, "ckpt_every": 2})
    loop.train(config)
    log = tmp_path / "run" / "log.jsonl"
    state = torch.load(tmp_path / "run" / "last.pt", weights_only=True)
    state["step"] = 2  # as if killed after logging steps 3-4 but before their checkpoint
    torch.save(state, tmp_path / "run" / "last.pt")
    loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 6, "ckpt_every": 2}))
    steps = [
        json.loads(line)["step"]
        for line in log.read_text().splitlines()
        if "loss" in json.loads(line)
    ]
    assert steps == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("content", [b"", b"\x00garbage" * 10, "truncated"])
def test_unreadable_training_checkpoints_name_the_file_and_the_format(tmp_path, content):
    from paperlib.engine.checkpoint import load_checkpoint

    path = tmp_path / "last.pt"
    if content == "truncated":
        torch.save({"model": {"w": torch.zeros(1000)}, "step": 1}, path)
        path.write_bytes(path.read_bytes()[:300])
    else:
        path.write_bytes(content)
    with pytest.raises(
        ValueError,
        match=r"could not read .*last\.pt .*expected a training "
        r"checkpoint written by paperlib's loop",
    ):
        load_checkpoint(path)
    torch.save([1, 2], path)
    with pytest.raises(ValueError, match="holds a list; expected a training checkpoint"):
        load_checkpoint(path)
