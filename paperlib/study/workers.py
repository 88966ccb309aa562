"""The study's worker processes: a pool whose workers stop with the process that started them
(``paperlib.processes.stop_with_parent``): a killed study leaves no orphan training."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from paperlib.processes import stop_with_parent


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` fresh (spawned) processes that stop with this one."""
    return ProcessPoolExecutor(
        workers,
        mp_context=get_context("spawn"),
        initializer=stop_with_parent,
        initargs=(os.getpid(),),
    )
