"""One path for write errors: an ``OSError`` while writing, whatever layer raised it, names the
file and the cause; a full disk or quota (``ENOSPC``, ``EDQUOT``) is a full disk whatever the
free space reads after the partial file is removed; every command maps a failed write to exit
4 (never compare's "did not reproduce"); files written as a set are replaced together or not at
all."""

from __future__ import annotations

import errno
import json
import os

import pytest
import torch

from paperlib import atomic
from paperlib.atomic import DiskFullError, WriteError, atomic_write, atomic_write_set
from paperlib.engine import loop
from paperlib.study import compare
from paperlib.train import main as train_main
from tests.engine_helpers import tiny_config


def _failing_writes(monkeypatch, code: int, after_bytes: int = 0):
    """Every ``write`` to a file opened by ``atomic``'s ``os.fdopen`` fails with ``code`` once
    ``after_bytes`` have gone through (the file system fills up mid-file)."""
    real_fdopen = os.fdopen

    class Filling:
        def __init__(self, handle):
            self.handle, self.written = handle, 0

        def write(self, data):
            if self.written + len(data) > after_bytes:
                raise OSError(code, os.strerror(code))
            self.written += len(data)
            return self.handle.write(data)

        def __getattr__(self, name):
            return getattr(self.handle, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.handle.__exit__(*exc)

    monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode: Filling(real_fdopen(fd, mode)))


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_inside_torch_s_serializer_is_named_whatever_the_free_space(
    tmp_path, monkeypatch, code
):
    """The case: a full disk during a large checkpoint write surfaced as torch's "unexpected
    pos" (exit 2): the check read the free space after the partial file was removed."""
    target = tmp_path / "last.pt"
    target.write_bytes(b"previous")
    _failing_writes(monkeypatch, code, after_bytes=100)
    with pytest.raises(DiskFullError, match=rf"while writing {target} .*previous file"):
        atomic_write(target, lambda handle: torch.save({"w": torch.zeros(4096)}, handle))
    assert target.read_bytes() == b"previous" and [p.name for p in tmp_path.iterdir()] == [
        "last.pt"
    ]


def test_other_write_failures_name_the_file_and_the_cause(tmp_path, monkeypatch):
    _failing_writes(monkeypatch, errno.EROFS)
    with pytest.raises(WriteError, match=r"cannot write .*a\.json \(Read-only file system"):
        atomic.atomic_write_text(tmp_path / "a.json", "{}")


def test_a_full_disk_while_logging_exits_4_naming_the_log(tmp_path, monkeypatch, capsys):
    """The case: a full disk during a log write was ``[Errno 28]`` without the file, exit 2."""
    real_open = open

    def full_log(path, mode="r", *args, **kwargs):
        if str(path).endswith("log.jsonl") and "a" in mode:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", full_log)
    config = tmp_path / "c.json"
    config.write_text(json.dumps(tiny_config("clip", tmp_path / "run")))
    assert train_main([str(config)]) == 4
    err = capsys.readouterr().err
    assert f"disk full while writing {tmp_path / 'run' / 'log.jsonl'}" in err
    assert "Traceback" not in err


def test_a_write_set_replaces_every_file_or_none(tmp_path, monkeypatch):
    """The case: a full disk left a new report.md beside an old report.json."""
    md, js = tmp_path / "report.md", tmp_path / "report.json"
    md.write_text("old md")
    js.write_text("old json")
    real = os.fsync

    def full_at_json(fd):
        if ".report.json." in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", full_at_json)
    with pytest.raises(DiskFullError, match="report.json"):
        atomic_write_set({md: "new md", js: "new json"})
    assert (md.read_text(), js.read_text()) == ("old md", "old json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "report.md"]
    monkeypatch.undo()
    atomic_write_set({md: "new md", js: "new json"})
    assert (md.read_text(), js.read_text()) == ("new md", "new json")


def test_study_commands_on_a_full_or_read_only_disk_exit_4_not_with_a_traceback(
    tmp_path, monkeypatch, capsys
):
    """The case: ``--decide-only`` and ``study.compare`` ended in raw tracebacks on a full or
    read-only disk, and compare then exited 1, its "did not reproduce"."""
    from paperlib.study import cli

    monkeypatch.setattr(cli, "refuse_runs_of_other_code", lambda scale: None)
    target = tmp_path / "claims.json"
    monkeypatch.setattr(cli, "summarise", lambda *a: atomic.atomic_write_text(target, "{}"))
    for code in (errno.ENOSPC, errno.EROFS):
        _failing_writes(monkeypatch, code)
        assert cli.main(["--scale", "smoke", "--decide-only"]) == 4
        err = capsys.readouterr().err
        assert f"{target}" in err and "Traceback" not in err and err.startswith("study: ")

        def compare_writes(committed, reproduced, report, scale):
            atomic_write_set({report.with_suffix(".md"): "x", report.with_suffix(".json"): "{}"})

        monkeypatch.setattr(compare, "compare", compare_writes)
        (tmp_path / "again" / "smoke").mkdir(parents=True, exist_ok=True)
        assert compare.main(["--reproduced", str(tmp_path / "again")]) == 4
        assert "smoke-comparison" in capsys.readouterr().err


def test_a_full_disk_mid_run_keeps_the_resume_exact(tmp_path, monkeypatch):
    """Nothing lost: the run stopped by a full log resumes and logs every step once."""
    out = tmp_path / "run"
    real_write, calls = loop.JsonlLog.write, {"n": 0}

    def write(self, record):
        calls["n"] += 1
        if calls["n"] == 3:
            with atomic.writing(self.path):
                raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, record)

    monkeypatch.setattr(loop.JsonlLog, "write", write)
    raw = tiny_config("clip", out, train={"steps": 4, "ckpt_every": 1})
    with pytest.raises(DiskFullError, match="log.jsonl"):
        loop.train(raw)
    monkeypatch.undo()
    assert loop.train(raw).status == "finished"
    steps = [json.loads(x)["step"] for x in (out / "log.jsonl").read_text().splitlines()]
    assert steps[:-1] == [1, 2, 3, 4]
