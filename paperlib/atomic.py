"""Atomic file writes: a temporary file in the target's folder, fsync, then ``os.replace``
(atomic on POSIX), so an interrupted write never leaves a half-written file and a failed
one leaves the previous file as it was."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["DiskFullError", "atomic_write", "atomic_write_text"]

LOW_SPACE = 1 << 20  # bytes: a failed write with less free space than this is a full disk


class DiskFullError(OSError):
    """A write failed because the file system holding its target is full."""


def _disk_full(err: BaseException, folder: Path) -> bool:
    """Whether ``err`` is a full disk: ``ENOSPC``, or any error (torch's serializer reports
    one as a ``RuntimeError``) while the folder's file system has almost no free space."""
    if isinstance(err, OSError) and err.errno == errno.ENOSPC:
        return True
    try:
        return isinstance(err, Exception) and shutil.disk_usage(folder).free < LOW_SPACE
    except OSError:
        return False


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(handle)`` on a binary temporary file, then move it onto ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if _disk_full(err, path.parent):
            free = shutil.disk_usage(path.parent).free
            raise DiskFullError(
                errno.ENOSPC,
                f"disk full while writing {path} ({free} bytes free "
                "on its file system); the previous file, if any, is unchanged; "
                "free space or choose another folder",
            ) from err
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))
