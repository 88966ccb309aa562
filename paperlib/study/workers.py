"""The study's worker processes: a pool whose workers stop with the process that started them
(``paperlib.processes.stop_with_parent``): a killed study leaves no orphan training, and no
worker takes a task still queued once its parent is gone (``exit_if_orphaned``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from paperlib.processes import exit_if_orphaned, stop_with_parent


def _unless_orphaned(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    exit_if_orphaned()
    return fn(*args, **kwargs)


class _ParentBoundPool(ProcessPoolExecutor):
    """A process pool whose every task first checks that the pool's creator is alive."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return super().submit(_unless_orphaned, fn, *args, **kwargs)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` fresh (spawned) processes that stop with this one."""
    return _ParentBoundPool(
        workers,
        mp_context=get_context("spawn"),
        initializer=stop_with_parent,
        initargs=(os.getpid(),),
    )
