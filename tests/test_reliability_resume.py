"""Interrupt and resume in one process: SIGINT or SIGTERM at a seeded random step stops the run
with a checkpoint, and resuming it ends with the losses and weights of an uninterrupted run of
the same seed; the lock of a folder holds its holder's pid, a second run on a held folder is
refused naming that pid and changes nothing of the first, and the lock a dead process left is
taken over."""

from __future__ import annotations

import fcntl
import os
import random
import signal
import subprocess
import sys

import pytest
import torch

from paperlib.engine import loop
from tests.engine_helpers import final_weights, tiny_config
from tests.test_engine_resume import comparable

STEPS = 6


def _config(out, **train):
    return tiny_config("clip", out, data={"size": 32}, train={"steps": STEPS, **train})


def _signal_after_step(monkeypatch, at: int, signum: int) -> None:
    """Send this process ``signum`` right after the optimiser update of step ``at``."""
    real, calls = loop.apply_update, {"n": 0}

    def update(module, optimizer, scheduler, config):
        lr = real(module, optimizer, scheduler, config)
        calls["n"] += 1
        if calls["n"] == at:
            os.kill(os.getpid(), signum)
        return lr

    monkeypatch.setattr(loop, "apply_update", update)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("reference") / "run"
    result = loop.train(_config(out))
    assert (result.status, result.step) == ("finished", STEPS)
    return {r["step"]: r["loss"] for r in result.history}, final_weights(out)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_a_random_step_then_resume_ends_as_the_uninterrupted_run(
    tmp_path, monkeypatch, uninterrupted, signum
):
    at = random.Random(int(signum)).randint(1, STEPS - 1)
    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        _signal_after_step(patch, at, signum)
        stopped = loop.train(_config(out))
    assert (stopped.status, stopped.step) == ("interrupted", at)
    assert torch.load(out / "last.pt", weights_only=True)["step"] == at
    resumed = loop.train(_config(out))
    assert (resumed.status, resumed.step) == ("finished", STEPS)
    assert [r["step"] for r in resumed.history] == list(range(at + 1, STEPS + 1))
    losses, weights = uninterrupted
    for record in stopped.history + resumed.history:
        assert record["loss"] == pytest.approx(losses[record["step"]], rel=1e-5)
    got = final_weights(out)
    for key in weights:
        torch.testing.assert_close(
            comparable(got, key), comparable(weights, key), rtol=1e-4, atol=1e-6, msg=key
        )


def test_a_held_folder_is_refused_naming_the_holder_and_keeps_every_file(tmp_path):
    out = tmp_path / "run"
    loop.train(_config(out, steps=1))
    assert (out / ".lock").read_text() == f"{os.getpid()}\n"  # the pid of the run that held it
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"}
    with open(out / ".lock", "a+") as held:  # another open file: a second holder of the flock
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.seek(0)
        held.truncate()
        held.write("4242\n")
        held.flush()
        with pytest.raises(RuntimeError, match=r"in use by another run \(.*held by process 4242\)"):
            loop.train(_config(out, steps=2))
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.name != ".lock"}
    assert after == before


def test_the_lock_of_a_dead_process_is_taken_over(tmp_path):
    out = tmp_path / "run"
    loop.train(_config(out, steps=1))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    pid = int(dead.stdout)
    (out / ".lock").write_text(f"{pid}\n")  # a run that died: its pid, no flock held
    result = loop.train(_config(out, steps=2))
    assert (result.status, result.step) == ("finished", 2)
    assert (out / ".lock").read_text() == f"{os.getpid()}\n"
