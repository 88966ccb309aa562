"""Child processes that stop with their parent: the kernel sends SIGTERM when the parent dies.

A killed study or pre-training must not leave workers (or the ``torchrun`` of a distributed
run) training into folders that a new invocation writes as well. On Linux a child asks the
kernel for SIGTERM at its parent's death (``prctl(PR_SET_PDEATHSIG)``); the training loop
answers SIGTERM by saving ``last.pt`` after the current step, so the next invocation resumes.
Elsewhere this is a no-op. A pool worker whose parent is gone must also not take the next
task its queue still holds (the training loop has answered the one SIGTERM): each task starts
with :func:`exit_if_orphaned`; and a worker left idle must not wait for tasks forever: it
waits on its task queue, whose pipes it holds open itself, so :func:`watch_parent` ends it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

PR_SET_PDEATHSIG = 1


ORPHAN_EXIT_CODE = 143  # as a process stopped by SIGTERM
_parent: int | None = None  # the pid a pool worker was started by (stop_with_parent)


def stop_with_parent(parent: int | None = None) -> None:
    """In a child: SIGTERM to this process when its parent exits (Linux), and at once when
    ``parent`` (the pid it was started by) is already gone. Usable as ``preexec_fn``."""
    global _parent
    _parent = parent
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def exit_if_orphaned() -> None:
    """In a pool worker started with ``stop_with_parent(parent)``: exit at once, before a task
    starts, when that parent is gone."""
    if orphaned():
        os._exit(ORPHAN_EXIT_CODE)


def orphaned() -> bool:
    """Whether this pool worker's parent (``stop_with_parent(parent)``) is gone."""
    return _parent is not None and os.getppid() != _parent


def watch_parent(busy: Callable[[], bool], every: float = 0.5) -> threading.Thread:
    """In a pool worker started with ``stop_with_parent(parent)``: a daemon thread that exits
    the process once that parent is gone and ``busy()`` is false (a running task answers the
    parent's death itself: the training loop saves on the SIGTERM and returns)."""

    def watch() -> None:
        while not (orphaned() and not busy()):
            time.sleep(every)
        os._exit(ORPHAN_EXIT_CODE)

    thread = threading.Thread(target=watch, name="watch-parent", daemon=True)
    thread.start()
    return thread
