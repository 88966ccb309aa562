"""Atomic writes: a failed write leaves the previous file; a full disk is named."""

from __future__ import annotations

import errno
from collections import namedtuple

import pytest
import torch

from paperlib import atomic
from paperlib.atomic import DiskFullError, atomic_write, atomic_write_text

Usage = namedtuple("Usage", "total used free")


def test_a_failed_write_keeps_the_previous_file_and_leaves_no_temporary(tmp_path):
    target = atomic_write_text(tmp_path / "a.txt", "old")

    def fail(handle):
        handle.write(b"half")
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        atomic_write(target, fail)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_enospc_is_a_named_disk_full_error(tmp_path):
    def full(handle):
        raise OSError(errno.ENOSPC, "No space left on device")

    atomic_write_text(tmp_path / "a.txt", "old")
    with pytest.raises(DiskFullError, match=r"disk full while writing .*a\.txt .*unchanged"):
        atomic_write(tmp_path / "a.txt", full)
    assert (tmp_path / "a.txt").read_text() == "old"


def test_torch_serializer_errors_on_a_full_file_system_are_named(tmp_path, monkeypatch):
    def serializer_fails(handle):
        torch.save({"w": torch.zeros(3)}, handle)
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos")

    monkeypatch.setattr(atomic.shutil, "disk_usage", lambda path: Usage(10, 10, 0))
    with pytest.raises(DiskFullError, match="0 bytes free"):
        atomic_write(tmp_path / "last.pt", serializer_fails)
    monkeypatch.undo()  # with space left, the same error is not a full disk
    with pytest.raises(RuntimeError, match="enforce fail"):
        atomic_write(tmp_path / "last.pt", serializer_fails)


def test_the_train_command_reports_a_full_disk_without_a_traceback(tmp_path, capsys, monkeypatch):
    import json

    import paperlib.train
    from tests.engine_helpers import tiny_config

    def full(config):
        raise DiskFullError(errno.ENOSPC, f"disk full while writing {tmp_path / 'last.pt'}")

    monkeypatch.setattr(paperlib.train, "train", full)
    (tmp_path / "c.json").write_text(json.dumps(tiny_config("clip", tmp_path / "run")))
    assert paperlib.train.main([str(tmp_path / "c.json")]) == 4
    assert "training stopped: disk full while writing" in capsys.readouterr().err
