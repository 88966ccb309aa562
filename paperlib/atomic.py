"""Atomic file writes: a temporary file in the target's folder, fsync, then ``os.replace``
(atomic on POSIX), so an interrupted write never leaves a half-written file and a failed
one leaves the previous file as it was.

Every file written gets the mode a plain ``open`` would give a new file: ``0o666`` less the
process's umask. A replaced file takes that mode too (it is a new file moved into place; a
mode set by hand on the old file is not carried over). A storage failure is named: a full
file system as :class:`DiskFullError` (``ENOSPC``), a file-size limit (``ulimit -f``, a
quota's ``EFBIG``) as :class:`FileTooLargeError`; both are :class:`StorageError`."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "DiskFullError",
    "FileTooLargeError",
    "StorageError",
    "atomic_write",
    "atomic_write_text",
    "new_file_mode",
]

LOW_SPACE = 1 << 20  # bytes: a failed write with less free space than this is a full disk


class StorageError(OSError):
    """A write failed for want of storage: a full disk or a file-size limit."""


class DiskFullError(StorageError):
    """A write failed because the file system holding its target is full."""


class FileTooLargeError(StorageError):
    """A write failed because the file outgrew the process's file-size limit (``EFBIG``)."""


def new_file_mode() -> int:
    """``0o666`` less the process's umask: the mode ``open`` gives a new file."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _too_large(err: BaseException, written: int) -> bool:
    """Whether ``err`` is a file-size limit: ``EFBIG``, or any error (torch's serializer
    reports one as a ``RuntimeError``) once ``written`` bytes reached ``RLIMIT_FSIZE``."""
    if isinstance(err, OSError) and err.errno == errno.EFBIG:
        return True
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return isinstance(err, Exception) and limit != resource.RLIM_INFINITY and written >= limit


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
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        written = _size(tmp)
        Path(tmp).unlink(missing_ok=True)
        if _too_large(err, written):
            raise FileTooLargeError(
                errno.EFBIG,
                f"file too large (EFBIG) while writing {path}: the process's file-size limit "
                f"(ulimit -f, or a quota) stopped it at {written} bytes; the previous file, "
                "if any, is unchanged; raise the limit or free quota",
            ) from err
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


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))
