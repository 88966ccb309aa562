"""Atomic file writes: a temporary file in the target's folder, fsync, then ``os.replace``
(atomic on POSIX), so an interrupted write never leaves a half-written file and a failed
one leaves the previous file as it was.

Every file written gets the mode a plain ``open`` would give a new file: ``0o666`` less the
process's umask. A replaced file takes that mode too (it is a new file moved into place; a
mode set by hand on the old file is not carried over). Files that belong together (a report's
``.md`` and ``.json``) are written as a set (:func:`atomic_write_set`): every temporary file is
written first, and only then are they moved into place, so a failure replaces none of them.

Every write goes through one error path (:func:`write_error`): an ``OSError`` while writing,
whatever layer raised it (torch's serializer reports a failed write as a ``RuntimeError`` whose
context holds it), becomes a :class:`WriteError` naming the file and the cause. A full file
system or quota (``ENOSPC``, ``EDQUOT``, whatever the free space reads afterwards) is a
:class:`DiskFullError`, a file-size limit (``ulimit -f``, a quota's ``EFBIG``) a
:class:`FileTooLargeError`; both are :class:`StorageError`. Appends (a log) go through
:func:`writing`, which names the file the same way."""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "DiskFullError",
    "FileTooLargeError",
    "StorageError",
    "WriteError",
    "atomic_write",
    "atomic_write_set",
    "atomic_write_text",
    "new_file_mode",
    "write_error",
    "writing",
]

LOW_SPACE = 1 << 20  # bytes: a failed write with less free space than this is a full disk
FULL = (errno.ENOSPC, errno.EDQUOT)  # a full file system, an exhausted quota
KEPT = "the previous file, if any, is unchanged"


class WriteError(OSError):
    """A write failed; the message names the file and the cause (errno kept)."""


class StorageError(WriteError):
    """A write failed for want of storage: a full disk or quota, or a file-size limit."""


class DiskFullError(StorageError):
    """A write failed because the file system (or the quota) holding its target is full."""


class FileTooLargeError(StorageError):
    """A write failed because the file outgrew the process's file-size limit (``EFBIG``)."""


def new_file_mode() -> int:
    """``0o666`` less the process's umask: the mode ``open`` gives a new file."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _os_cause(err: BaseException) -> OSError | None:
    """The first ``OSError`` with an errno in ``err``'s chain (itself, its cause, its context):
    torch's serializer reports a failed ``write`` as a ``RuntimeError`` raised while handling
    it."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        if isinstance(err, OSError) and err.errno is not None:
            return err
        err = err.__cause__ or err.__context__
    return None


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def write_error(
    err: BaseException, path: Path, written: int = 0, free: int | None = None
) -> WriteError | None:
    """The named error for a failed write of ``path`` (``written`` bytes had reached the
    file, ``free`` bytes were free on its file system before any partial file was removed), or
    None when ``err`` is no I/O failure (re-raise it as it is). See the module docstring."""
    if isinstance(err, WriteError) or not isinstance(err, Exception):
        return None
    cause = _os_cause(err)
    code = cause.errno if cause is not None else None
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if code == errno.EFBIG or (limit != resource.RLIM_INFINITY and written >= limit):
        return FileTooLargeError(
            errno.EFBIG,
            f"file too large (EFBIG) while writing {path}: the process's file-size limit "
            f"(ulimit -f, or a quota) stopped it at {written} bytes; {KEPT}; raise the limit "
            "or free quota",
        )
    low = code is None and free is not None and free < LOW_SPACE
    if code in FULL or low:
        what = "quota exceeded (EDQUOT)" if code == errno.EDQUOT else "disk full"
        shown = "" if free is None else f" ({free} bytes free on its file system)"
        return DiskFullError(
            code or errno.ENOSPC,
            f"{what} while writing {path}{shown}; {KEPT}; free space or choose another folder",
        )
    if cause is None:
        return None
    reason = cause.strerror or type(cause).__name__
    return WriteError(code, f"cannot write {path} ({reason}, errno {code}); {KEPT}")


@contextlib.contextmanager
def writing(path: str | os.PathLike) -> Iterator[Path]:
    """A block that writes ``path`` in place (an append): an I/O failure in it is the named
    :class:`WriteError` of :func:`write_error`."""
    path = Path(path)
    try:
        yield path
    except Exception as err:  # noqa: BLE001 - every failure is judged by write_error
        named = write_error(err, path, free=_free_bytes(path.parent))
        if named is None:
            raise
        raise named from err


def _temporary(path: Path, write: Callable[[BinaryIO], object]) -> str:
    """``write`` into a new temporary file beside ``path``, flushed and synced; its name. A
    failure removes it and raises :func:`write_error`'s named error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, new_file_mode())
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as err:
        written, free = _size(tmp), _free_bytes(path.parent)  # before the partial file goes
        Path(tmp).unlink(missing_ok=True)
        named = write_error(err, path, written, free)
        if named is None:
            raise
        raise named from err
    return tmp


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(handle)`` on a binary temporary file, then move it onto ``path``."""
    path = Path(path)
    with writing(path):  # the folder itself may be unwritable
        tmp = _temporary(path, write)
        _replace(tmp, path)
    return path


def atomic_write_set(files: Mapping[str | os.PathLike, str]) -> list[Path]:
    """Write the texts of ``files`` (path → UTF-8 text) together: every temporary file first,
    then each moved into place, so a failed write replaces none of them."""
    done: dict[Path, str] = {}
    try:
        for name, text in files.items():
            path = Path(name)
            with writing(path):
                done[path] = _temporary(path, lambda handle, t=text: handle.write(t.encode()))
    except BaseException:
        for tmp in done.values():
            Path(tmp).unlink(missing_ok=True)
        raise
    for path, tmp in done.items():
        with writing(path):
            _replace(tmp, path)
    return list(done)


def _replace(tmp: str, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))
