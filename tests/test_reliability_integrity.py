"""Checkpoints are what they say: the resume step lies in [0, train.steps], model tensors are
floating point, a byte changed since saving is named, and the evaluation cache follows the
checkpoint's content, not its path, size and mtime."""

from __future__ import annotations

import os
import shutil
import zipfile

import numpy as np
import pytest
import torch

from paperlib.engine import checkpoint, evaluation
from paperlib.engine import loop as loop
from paperlib.engine.config import ConfigError
from tests.engine_helpers import tiny_config


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A 2-step run, trained once for the module; copy it before changing it."""
    out = tmp_path_factory.mktemp("integrity") / "run"
    loop.train(tiny_config("clip", out, train={"steps": 2}))
    return out


def _copy_with(trained, tmp_path, **changes):
    out = tmp_path / "run"
    shutil.copytree(trained, out)
    state = torch.load(out / "last.pt", weights_only=True)
    state.update(changes)
    torch.save(state, out / "last.pt")
    return out


@pytest.mark.parametrize("step", [-5, 1_000_000, "2", 2.5, True])
def test_a_resume_step_outside_the_run_is_refused_by_name(trained, tmp_path, step):
    out = _copy_with(trained, tmp_path, step=step)
    log = (out / "log.jsonl").read_bytes()
    with pytest.raises(ValueError, match=r"last\.pt: field 'step' must be an int in \[0, "):
        loop.train(tiny_config("clip", out, train={"steps": 3}))
    assert (out / "log.jsonl").read_bytes() == log


def test_integer_model_tensors_are_refused_by_evaluation_and_resume(trained, tmp_path):
    state = torch.load(trained / "last.pt", weights_only=True)
    out = _copy_with(trained, tmp_path, model={k: v.long() for k, v in state["model"].items()})
    with pytest.raises(ValueError, match=r"last\.pt: .*not floating point: .* is torch\.int64"):
        evaluation.load_trained(out)
    with pytest.raises(ValueError, match=r"last\.pt holds weights .*expected floating point"):
        loop.train(tiny_config("clip", out, train={"steps": 3}))


def _flip_data_byte(path):
    """Flip one sign bit inside a tensor record of a torch zip archive (same size)."""
    with zipfile.ZipFile(path) as archive:
        info = next(i for i in archive.infolist() if "/data/" in i.filename and i.file_size > 8)
    data = bytearray(path.read_bytes())
    head = info.header_offset  # the local header's name and extra lengths: bytes 26..29
    start = head + 30 + int.from_bytes(data[head + 26 : head + 28], "little")
    start += int.from_bytes(data[head + 28 : head + 30], "little")
    data[start + 3] ^= 0x80
    stat = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_flipped_byte_is_named_and_changes_the_cache_key(trained, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(trained, out)
    key = evaluation.checkpoint_key(out)
    _flip_data_byte(out / "last.pt")
    assert evaluation.checkpoint_key(out) != key
    with pytest.raises(ValueError, match=r"last\.pt \(record .* does not match the CRC-32"):
        checkpoint.load_checkpoint(out / "last.pt")


def test_the_cache_key_follows_content_not_path_or_mtime(trained, tmp_path):
    copy = tmp_path / "copy.pt"
    shutil.copy(trained / "last.pt", copy)
    os.utime(copy, ns=(0, 0))
    assert evaluation.checkpoint_key(copy) == evaluation.checkpoint_key(trained)
    assert evaluation.checkpoint_key(copy, "m") != evaluation.checkpoint_key(copy)


def test_training_refuses_an_init_inside_its_output_folder(trained, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(trained, out)
    raw = tiny_config("clip", out, model={"init": str(out / "last.pt")}, train={"resume": False})
    with pytest.raises(ConfigError, match=r"model\.init: .*last\.pt' is train\.output_dir or lies"):
        loop.train(raw)
    raw = tiny_config("clip", out, data={"cache_dir": str(out)})
    with pytest.raises(ConfigError, match=r"data\.cache_dir: .* is train\.output_dir"):
        loop.train(raw)


def test_checked_step_accepts_the_range_ends():
    assert checkpoint.checked_step({"step": 0}, 3, "x") == 0
    assert checkpoint.checked_step({"step": 3}, 3, "x") == 3
    with pytest.raises(ValueError, match=r"x: field 'step' .* found 4 \(int\)"):
        checkpoint.checked_step({"step": 4}, 3, "x")
    with pytest.raises(ValueError, match=r"found np"):
        checkpoint.checked_step({"step": np.int64(1)}, 3, "x")
