"""Storage named: a file-size limit (``ulimit -f``: EFBIG) at a checkpoint exits 4 and keeps
the previous file; atomic writes give files the umask's mode; a world cache whose arrays are
short or git-lfs pointers is refused by file name."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from paperlib.atomic import FileTooLargeError, atomic_write, atomic_write_text
from paperlib.data.world_cache import CachedWorldDataset, cached_world
from tests.engine_helpers import REPO, tiny_config


def _limited(limit_kib: int, code: str) -> subprocess.CompletedProcess:
    """``python -c code`` under ``ulimit -f limit_kib`` with SIGXFSZ ignored (so a write past
    the limit fails with EFBIG instead of killing the process)."""
    script = f'ulimit -f {limit_kib}; exec {sys.executable} -c "$0"'
    prelude = "import signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        ["bash", "-c", script, prelude + code], capture_output=True, text=True, env=env
    )


def test_a_file_size_limit_is_named_and_keeps_the_previous_file(tmp_path):
    target = tmp_path / "big.bin"
    target.write_bytes(b"previous")
    code = (
        "from paperlib.atomic import atomic_write, FileTooLargeError\n"
        f"try: atomic_write({str(target)!r}, lambda h: h.write(bytes(200_000)))\n"
        "except FileTooLargeError as e: print('NAMED', e.errno, e.strerror)\n"
    )
    proc = _limited(64, code)
    assert "NAMED 27 file too large (EFBIG) while writing" in proc.stdout, proc.stderr
    assert str(target) in proc.stdout
    assert target.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["big.bin"]


def test_the_train_command_exits_4_on_a_file_size_limit(tmp_path):
    out = tmp_path / "run"
    config = tmp_path / "c.json"
    config.write_text(json.dumps(tiny_config("clip", out, train={"steps": 1})))
    code = "import sys; from paperlib.train import main; sys.exit(main([sys.argv[1]]))"
    script = f'ulimit -f 2048; exec {sys.executable} -c "$0" "$1"'
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        ["bash", "-c", script, code, str(config)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 4, proc.stderr[-2000:]
    assert "file too large (EFBIG) while writing" in proc.stderr and "last.pt" in proc.stderr
    assert "Traceback" not in proc.stderr and "inline_container" not in proc.stderr
    assert not (out / "last.pt").exists()


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_and_replaced_files_take_the_umask_mode(tmp_path, umask):
    previous = os.umask(umask)
    try:
        new = atomic_write_text(tmp_path / "new.json", "{}")
        old = tmp_path / "old.json"
        old.write_text("[]")
        old.chmod(0o640)
        atomic_write(old, lambda h: h.write(b"{}"))
    finally:
        os.umask(previous)
    assert new.stat().st_mode & 0o777 == 0o666 & ~umask
    assert old.stat().st_mode & 0o777 == 0o666 & ~umask


def test_an_atomic_write_failure_is_not_taken_for_a_size_limit(tmp_path):
    def fail(handle):
        raise OSError(5, "input/output error")

    with pytest.raises(OSError) as err:
        atomic_write(tmp_path / "x", fail)
    assert not isinstance(err.value, FileTooLargeError) and err.value.errno == 5


def test_a_world_cache_with_fewer_rows_than_its_name_is_named(tmp_path):
    folder = cached_world(tmp_path, seed=1, size=8, image_size=32, twins=False)
    images = np.load(folder / "images.npy")
    np.save(folder / "images.npy", images[:5])
    with pytest.raises(ValueError, match=r"images\.npy holds shape \(5, 32, 32, 3\); expected"):
        CachedWorldDataset(tmp_path, seed=1, size=8, image_size=32)


def test_a_git_lfs_pointer_in_a_world_cache_is_named(tmp_path):
    folder = cached_world(tmp_path, seed=1, size=8, image_size=32, twins=False)
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 10\n"
    (folder / "boxes.npy").write_text(pointer)
    with pytest.raises(ValueError, match=r"boxes\.npy is a git-lfs pointer") as err:
        CachedWorldDataset(tmp_path, seed=1, size=8, image_size=32)
    assert "allow_pickle" not in str(err.value)
    (folder / "boxes.npy").write_bytes(b"\x00" * 64)
    with pytest.raises(ValueError, match=r"boxes\.npy is unreadable") as err:
        CachedWorldDataset(tmp_path, seed=1, size=8, image_size=32)
    assert "allow_pickle" not in str(err.value)
