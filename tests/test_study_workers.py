"""A study worker stops when the process that started it dies (no orphan keeps training)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

PARENT = textwrap.dedent(
    """
    import os, sys, time
    from paperlib.study.run.workers import worker_pool

    def work(path):
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))
        time.sleep(120)

    if __name__ == "__main__":
        with worker_pool(1) as pool:
            pool.submit(work, sys.argv[1])
            time.sleep(120)
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie has exited
        return handle.read().split(") ")[1][0] != "Z"


def _kill_parent_of_worker(tmp_path, source: str) -> int:
    """Start ``source`` as the parent, wait for its worker to write its pid, SIGKILL the parent
    and wait (up to 10 s) for the worker to exit; returns the worker's pid."""
    script, marker = tmp_path / "parent.py", tmp_path / "worker.pid"
    script.write_text(source)
    parent = subprocess.Popen([sys.executable, str(script), str(marker)])
    try:
        for _ in range(300):
            if marker.is_file() and marker.read_text():
                break
            time.sleep(0.1)
        worker = int(marker.read_text())
        assert _alive(worker)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(100):
            if not _alive(worker):
                break
            time.sleep(0.1)
        return worker
    finally:
        parent.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_worker_stops_when_its_parent_is_killed(tmp_path):
    worker = _kill_parent_of_worker(tmp_path, PARENT)
    assert not _alive(worker), "the worker outlived its killed parent"


QUEUED = textwrap.dedent(
    """
    import os, signal, sys, time
    from paperlib.study.run.workers import worker_pool

    def first(path):  # answers SIGTERM as the training loop does: finish, then return
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
        with open(path, "w") as handle:
            handle.write(str(os.getpid()))
        while not stop:
            time.sleep(0.05)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def second(path):
        with open(path + ".second", "w") as handle:
            handle.write("started")
        time.sleep(120)

    if __name__ == "__main__":
        with worker_pool(1) as pool:
            pool.submit(first, sys.argv[1])
            pool.submit(second, sys.argv[1])
            time.sleep(120)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_worker_takes_no_queued_task_once_its_parent_is_gone(tmp_path):
    """The training loop answers SIGTERM by finishing its step and returning: the worker must
    then exit, not start the next run its queue holds."""
    worker = _kill_parent_of_worker(tmp_path, QUEUED)
    assert not _alive(worker), "the worker outlived its killed parent"
    assert not (tmp_path / "worker.pid.second").exists(), "a queued task started"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_a_worker_left_idle_by_its_killed_parent_exits(tmp_path):
    """With nothing queued, a worker whose task returned after its parent's death waits on its
    task queue, whose pipes stay open in the worker itself: it must still exit."""
    idle = QUEUED.replace("        pool.submit(second, sys.argv[1])\n", "")
    assert idle != QUEUED
    worker = _kill_parent_of_worker(tmp_path, idle)
    assert not _alive(worker), "the idle worker outlived its killed parent"
