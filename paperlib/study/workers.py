"""The study's worker processes: a pool whose workers stop with the process that started them.

A killed parent does not take its ``multiprocessing`` children with it; a worker left behind
would go on training into folders a new invocation also writes. Each worker asks the kernel
for SIGTERM when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), and the training loop
answers SIGTERM by saving ``last.pt`` after the current step, so the next invocation resumes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

PR_SET_PDEATHSIG = 1


def _stop_with_parent(parent: int) -> None:
    """Worker initialiser: SIGTERM to this process when its parent exits (Linux), and at once
    when the parent is already gone."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` fresh (spawned) processes that stop with this one."""
    return ProcessPoolExecutor(
        workers,
        mp_context=get_context("spawn"),
        initializer=_stop_with_parent,
        initargs=(os.getpid(),),
    )
