"""A full disk (ENOSPC, mocked at the ``fsync`` of a real atomic write) is a named
:class:`~paperlib.atomic.DiskFullError`: training keeps its previous checkpoint and leaves no
temporary file, the train command exits 4 without a traceback, and evaluation writes no
results file that looks finished."""

from __future__ import annotations

import errno
import json
import os

import pytest
import torch

from paperlib import atomic
from paperlib.atomic import DiskFullError
from paperlib.engine import loop as loop
from paperlib.train import main as train_main
from tests.engine_helpers import tiny_config


def _fail_fsync(monkeypatch, marker: str, after: int = 0) -> dict[str, int]:
    """``fsync`` raises ENOSPC for temporary files whose name holds ``marker``, from the
    ``after + 1``-th such call on (the earlier ones succeed)."""
    real, calls = os.fsync, {"n": 0}

    def fsync(fd: int) -> None:
        name = os.readlink(f"/proc/self/fd/{fd}")
        if marker in os.path.basename(name):
            calls["n"] += 1
            if calls["n"] > after:
                raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    return calls


def test_a_full_disk_at_a_checkpoint_keeps_the_previous_one(tmp_path, monkeypatch):
    out = tmp_path / "run"
    calls = _fail_fsync(monkeypatch, ".last.pt.", after=1)  # the step-2 checkpoint is written
    config = tiny_config("clip", out, train={"steps": 6, "ckpt_every": 2})
    with pytest.raises(DiskFullError, match=r"disk full while writing .*run/last\.pt .*unchanged"):
        loop.train(config)
    assert calls["n"] == 2
    assert torch.load(out / "last.pt", weights_only=True)["step"] == 2
    assert not list(out.glob(".*.tmp"))
    monkeypatch.undo()  # space again: the run resumes from step 2 and finishes
    result = loop.train(config)
    assert (result.status, result.step) == ("finished", 6)
    steps = [
        json.loads(x)["step"] for x in (out / "log.jsonl").read_text().splitlines() if '"loss"' in x
    ]
    assert steps == [1, 2, 3, 4, 5, 6]


def test_the_train_command_exits_4_on_a_full_disk_without_a_traceback(
    tmp_path, monkeypatch, capsys
):
    _fail_fsync(monkeypatch, ".last.pt.")
    (tmp_path / "c.json").write_text(json.dumps(tiny_config("clip", tmp_path / "run")))
    assert train_main([str(tmp_path / "c.json")]) == 4
    err = capsys.readouterr().err
    assert err.startswith("training stopped: disk full while writing") and "Traceback" not in err


def test_a_full_disk_while_writing_results_leaves_no_finished_looking_file(tmp_path, monkeypatch):
    from paperlib.engine import evaluation as ev

    run = loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 1})).output_dir
    _fail_fsync(monkeypatch, ".json.")
    out = tmp_path / "results"
    with pytest.raises(DiskFullError, match=r"disk full while writing .*world-long\.json"):
        ev.evaluate(run, ["world-long"], output_dir=out, world_size=16)
    assert not list(out.glob("*.json")) and not list(out.glob(".*.tmp"))


def test_a_log_record_torn_by_a_full_disk_is_dropped_when_the_run_resumes(tmp_path):
    out = tmp_path / "run"
    loop.train(tiny_config("clip", out, train={"steps": 2}))
    with open(out / "log.jsonl", "a") as log:  # a record cut short: no space for the rest
        log.write('{"step": 3, "lr": 0.001, "lo')
    result = loop.train(tiny_config("clip", out, train={"steps": 4}))
    assert (result.status, result.step) == ("finished", 4)
    records = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records if "loss" in r] == [1, 2, 3, 4]
    assert records[-1] == {"step": 4, "status": "finished"}
