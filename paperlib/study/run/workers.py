"""The study's worker processes: a pool whose workers stop with the process that started them
(``paperlib.processes.stop_with_parent``): a killed study leaves no orphan training, and no
worker takes a task still queued once its parent is gone (``exit_if_orphaned``), and none
waits idle for tasks that cannot come (``watch_parent``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

from paperlib.processes import exit_if_orphaned, stop_with_parent, watch_parent

_RUNNING = threading.Event()  # set while this worker runs a task


def _unless_orphaned(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    exit_if_orphaned()
    _RUNNING.set()
    try:
        return fn(*args, **kwargs)
    finally:
        _RUNNING.clear()


def _bound_to(parent: int) -> None:
    """A worker's initializer: SIGTERM at the parent's death, and an exit once it is gone and
    the worker idle."""
    stop_with_parent(parent)
    watch_parent(_RUNNING.is_set)


class _ParentBoundPool(ProcessPoolExecutor):
    """A process pool whose every task first checks that the pool's creator is alive."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return super().submit(_unless_orphaned, fn, *args, **kwargs)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` fresh (spawned) processes that stop with this one."""
    return _ParentBoundPool(
        workers,
        mp_context=get_context("spawn"),
        initializer=_bound_to,
        initargs=(os.getpid(),),
    )
