"""A training process killed with SIGKILL loses nothing: the next run on the folder resumes
from the last complete checkpoint, logs every step once, removes the temporary file a write cut
short, and is not locked out by the dead run; a live run keeps the folder to itself.

The runs are real ``python -m paperlib.train`` processes. Where the kill must land at a precise
moment (mid-step, mid-checkpoint-write) a small driver installs a hook that sends the process
SIGKILL at that moment, then runs the module unchanged (``runpy``): no sleeps, no races.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml

from paperlib.engine import loop
from tests.engine_helpers import REPO, final_weights, tiny_config
from tests.test_engine_resume import comparable

pytestmark = pytest.mark.slow

STEPS = 12

DRIVER = '''
"""Run ``python -m paperlib.train`` with one test hook: MODE AT CONFIG [overrides]."""
import io, os, runpy, signal, sys, time
from pathlib import Path

import torch

from paperlib.engine import loop

mode, at = sys.argv[1], int(sys.argv[2])
del sys.argv[1:3]
calls = {"update": 0, "save": 0}

if mode == "step":  # SIGKILL inside step AT: weights updated, nothing logged or saved yet
    real_update = loop.apply_update

    def apply_update(*args, **kwargs):
        lr = real_update(*args, **kwargs)
        calls["update"] += 1
        if calls["update"] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return lr

    loop.apply_update = apply_update
elif mode == "write":  # SIGKILL halfway through writing checkpoint number AT
    real_save = torch.save

    def save(obj, f, *args, **kwargs):
        if isinstance(obj, dict) and "optimizer" in obj:
            calls["save"] += 1
            if calls["save"] == at:
                buffer = io.BytesIO()
                real_save(obj, buffer, *args, **kwargs)
                data = buffer.getvalue()
                f.write(data[: len(data) // 2])
                f.flush()
                os.kill(os.getpid(), signal.SIGKILL)
        return real_save(obj, f, *args, **kwargs)

    torch.save = save
elif mode == "hold":  # after step AT: write HOLD_DIR/ready, wait for HOLD_DIR/release
    real_update = loop.apply_update
    hold = Path(os.environ["HOLD_DIR"])

    def apply_update(*args, **kwargs):
        lr = real_update(*args, **kwargs)
        calls["update"] += 1
        if calls["update"] == at:
            (hold / "ready").write_text("")
            deadline = time.monotonic() + 300
            while not (hold / "release").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        return lr

    loop.apply_update = apply_update
runpy.run_module("paperlib.train", run_name="__main__", alter_sys=True)
'''


def _env(**extra: str) -> dict[str, str]:
    threads = str(torch.get_num_threads())
    return {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": threads, **extra}


def _start(tmp_path: Path, raw: dict, mode: str | None = None, at: int = 0, **env: str):
    config = tmp_path / f"{Path(raw['train']['output_dir']).name}.yaml"
    config.write_text(yaml.safe_dump(raw))
    if mode is None:
        argv = [sys.executable, "-m", "paperlib.train", str(config)]
    else:
        driver = tmp_path / "driver.py"
        driver.write_text(DRIVER)
        argv = [sys.executable, str(driver), mode, str(at), str(config)]
    return subprocess.Popen(
        argv, cwd=REPO, env=_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines() if line]


def _logged_steps(out: Path) -> list[int]:
    return [r["step"] for r in _records(out) if "loss" in r]


def _wait(predicate, proc, timeout: float = 180.0) -> bool:
    """Poll ``predicate`` until it holds (True) or ``proc`` exits or time runs out (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        if proc.poll() is not None:
            return predicate()
        time.sleep(0.02)
    return False


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run: its log and weights are what every resumed run must end with."""
    out = tmp_path_factory.mktemp("reference") / "run"
    result = loop.train(tiny_config("clip", out, train={"steps": STEPS}))
    assert (result.status, result.step) == ("finished", STEPS)
    return {r["step"]: r["loss"] for r in result.history}, final_weights(out)


def _assert_resumed_to_the_end(out: Path, reference) -> None:
    losses, weights = reference
    result = loop.train(tiny_config("clip", out, train={"steps": STEPS, "ckpt_every": 4}))
    assert (result.status, result.step) == ("finished", STEPS)
    assert _logged_steps(out) == list(range(1, STEPS + 1))  # each step exactly once
    assert _records(out)[-1] == {"step": STEPS, "status": "finished"}
    assert not list(out.glob(".*.tmp"))  # no half-written checkpoint left for good
    for record in _records(out):
        if "loss" in record:
            assert record["loss"] == pytest.approx(losses[record["step"]], rel=1e-5)
    resumed = final_weights(out)
    for key in weights:
        torch.testing.assert_close(
            comparable(resumed, key), comparable(weights, key), rtol=1e-4, atol=1e-6, msg=key
        )


def test_sigkill_mid_step_then_resume_cuts_the_log_back_and_finishes(tmp_path, reference):
    out = tmp_path / "run"
    raw = tiny_config("clip", out, train={"steps": STEPS, "ckpt_every": 4})
    proc = _start(tmp_path, raw, "step", 7)  # killed inside step 7: checkpoint at 4, log to 6
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err
    assert torch.load(out / "last.pt", weights_only=True)["step"] == 4
    assert _logged_steps(out) == [1, 2, 3, 4, 5, 6]  # steps 5-6 are not in the checkpoint
    assert (out / ".lock").exists()  # the dead run's lock file stays; its flock went with it
    _assert_resumed_to_the_end(out, reference)


def test_sigkill_during_a_checkpoint_write_keeps_the_previous_one(tmp_path, reference):
    out = tmp_path / "run"
    raw = tiny_config("clip", out, train={"steps": STEPS, "ckpt_every": 4})
    proc = _start(tmp_path, raw, "write", 2)  # killed halfway through the step-8 checkpoint
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err
    (orphan,) = out.glob(".last.pt.*.tmp")  # the write window was really hit
    assert 0 < orphan.stat().st_size < (out / "last.pt").stat().st_size
    saved = torch.load(out / "last.pt", weights_only=True)  # the previous file, complete
    assert saved["step"] == 4 and _logged_steps(out) == list(range(1, 9))
    _assert_resumed_to_the_end(out, reference)


def test_sigkill_from_outside_at_any_moment_then_resume(tmp_path, reference):
    out = tmp_path / "run"
    raw = tiny_config("clip", out, train={"steps": STEPS, "ckpt_every": 4})
    proc = _start(tmp_path, raw)

    def five_steps_logged() -> bool:  # complete lines only: the writer may be mid-line
        log = out / "log.jsonl"
        return log.is_file() and sum('"loss"' in x for x in log.read_text().split("\n")[:-1]) >= 5

    logged = _wait(five_steps_logged, proc)
    assert logged, proc.communicate()
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert 5 <= len(_logged_steps(out)) < STEPS  # stopped mid-way, wherever it was
    _assert_resumed_to_the_end(out, reference)


def test_a_live_run_holds_its_folder_and_releases_it_when_done(tmp_path):
    out, hold = tmp_path / "run", tmp_path / "hold"
    hold.mkdir()
    raw = tiny_config("clip", out, train={"steps": 4})
    proc = _start(tmp_path, raw, "hold", 2, HOLD_DIR=str(hold))
    assert _wait(lambda: (hold / "ready").exists(), proc), proc.communicate()
    try:
        held = rf"is in use by another run \(its \.lock is held by process {proc.pid}\)"
        with pytest.raises(RuntimeError, match=held):
            loop.train(tiny_config("clip", out, train={"steps": 4}))
        assert _logged_steps(out) == [1]  # the refused run wrote nothing into the live one
    finally:
        (hold / "release").write_text("")
    out_text, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "finished at step 4" in out_text
    again = loop.train(tiny_config("clip", out, train={"steps": 4}))  # the lock was released
    assert (again.status, again.step) == ("finished", 4)
    assert _logged_steps(out) == [1, 2, 3, 4]
