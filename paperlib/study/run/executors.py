"""What executes the study's runs: worker processes on this machine, or a Ray cluster.

An executor is a registry entry (:data:`EXECUTORS`) that opens as a context manager and
``submit(fn, job, cpus, gpus)`` returns a :class:`concurrent.futures.Future`, so the study's
scheduling (``study.run.parallel``) is the same whatever runs the tasks:

- ``local``: a pool of spawned processes that stop with the study (``study.run.workers``);
- ``ray``: Ray tasks (``pip install -e ".[cluster]"``), each asking the cluster for its
  training processes' threads in CPUs (two for a two-rank run of one thread each, on one node)
  and, on a GPU, ``1 / runs_per_device`` of one (Ray gives each task its GPU, so the device is
  ``cuda``, never ``cuda:N``). ``address`` names a running cluster (``ray start --head`` on one
  machine, ``ray start --address HEAD:PORT`` on the others, or Ray on Kubernetes or Slurm);
  without it Ray starts one on this machine with room for the largest run. An address that
  does not answer within :data:`CONNECT_TIMEOUT` seconds is refused by name before Ray is
  started (Ray itself would wait for it without end). A run that no node
  of the cluster can hold, or a GPU run on a cluster without GPUs, is refused by name. Every node
  must see the same repository checkout, virtual environment and results folders at the same paths
  (a shared filesystem): each task writes its run's results where the local executor would, under
  the same run-folder lock, and a finished run is skipped exactly as it is locally. The
  ``PAPERLIB_*`` and ``HF_HUB_OFFLINE`` variables of the study's process travel to every task.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any
from urllib.parse import urlsplit

from paperlib.study.run.workers import worker_pool

FORWARDED_PREFIXES = ("PAPERLIB_", "HF_HUB_OFFLINE", "ATEN_CPU_CAPABILITY", "CUBLAS_")
CONNECT_TIMEOUT = 15.0  # seconds a cluster's head has to accept a connection


class ExecutorUnavailableError(RuntimeError):
    """The executor cannot run the study's tasks here; the message says what is missing."""


@contextlib.contextmanager
def local_executor(
    slots: int, address: str | None = None, cpus: int = 1
) -> Iterator[Callable[..., Future]]:
    """``slots`` worker processes on this machine (``address`` must be None; ``cpus``, the
    largest run's request, is a cluster's concern)."""
    if address is not None:
        raise ValueError("--address names a Ray cluster; it needs --executor ray")
    with worker_pool(slots) as pool:
        yield lambda fn, job, cpus=1, gpus=0.0: pool.submit(fn, job)


def check_reachable(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """ExecutorUnavailableError naming ``address`` (``HOST:PORT`` or ``ray://HOST:PORT``; Ray's
    ``auto`` is left to Ray) unless a TCP connection to it opens within ``timeout`` seconds."""
    if address == "auto":
        return
    target = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        port = target.port
    except ValueError:
        port = None
    if not target.hostname or port is None:
        raise ExecutorUnavailableError(
            f"--address {address!r}: expected HOST:PORT or ray://HOST:PORT (e.g. "
            "10.0.0.1:6379, the head's `ray start --head --port 6379`)"
        )
    try:
        socket.create_connection((target.hostname, port), timeout=timeout).close()
    except OSError as error:
        reason = "no answer" if isinstance(error, TimeoutError) else error.strerror or error
        raise ExecutorUnavailableError(
            f"--address {address}: no Ray cluster answers there ({reason}; waited up to "
            f"{timeout:g} s); start one with `ray start --head --port {port}` on that host, or "
            "leave --address out to start one here"
        ) from None


def forwarded_environment() -> dict[str, str]:
    """The variables of this process that every Ray task gets (module docstring)."""
    return {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_PREFIXES)}


@contextlib.contextmanager
def ray_executor(
    slots: int, address: str | None = None, cpus: int = 1
) -> Iterator[Callable[..., Future]]:
    """Ray tasks on the cluster at ``address``, or on one started here with room for ``slots``
    runs and for the largest run's ``cpus``."""
    try:
        import ray
    except ImportError as error:
        raise ExecutorUnavailableError(
            "--executor ray needs the package 'ray', which is not installed; install the "
            'cluster extra: pip install -e ".[cluster]"'
        ) from error
    runtime = {"env_vars": forwarded_environment()}
    options: dict[str, Any] = {"runtime_env": runtime, "include_dashboard": False}
    if address is None:
        options["num_cpus"] = max(slots, cpus)
    else:
        check_reachable(address)
    ray.init(address=address, log_to_driver=True, **options)
    try:
        nodes = [n["Resources"] for n in ray.nodes() if n.get("Alive")]
        yield functools.partial(_submit_task, ray, where=address or "this machine", nodes=nodes)
    finally:
        ray.shutdown()


def _submit_task(ray, fn, job, cpus=1, gpus=0.0, *, where: str, nodes: list[dict]) -> Future:
    """One Ray task of ``fn(job)``, refused by name where no node can hold it."""
    if not any(n.get("CPU", 0) >= cpus and n.get("GPU", 0) >= gpus for n in nodes):
        largest = max((n.get("CPU", 0) for n in nodes), default=0)
        gpu = f" and {gpus:g} GPU" if gpus else ""
        raise ExecutorUnavailableError(
            f"--executor ray: a run asks for {cpus} CPU(s){gpu} on one node; no node of the "
            f"cluster at {where} has them (the largest has {largest:g} CPU(s), GPUs: "
            f"{sum(n.get('GPU', 0) for n in nodes):g})"
        )
    task = ray.remote(fn).options(num_cpus=cpus, num_gpus=gpus, max_retries=0)
    return task.remote(job).future()


EXECUTORS = {"local": local_executor, "ray": ray_executor}


def open_executor(name: str, slots: int, address: str | None = None, cpus: int = 1):
    """The executor ``name`` of :data:`EXECUTORS` (a context manager yielding ``submit``):
    ``slots`` runs at once, on the cluster at ``address``, the largest run asking ``cpus``."""
    if name not in EXECUTORS:
        raise ValueError(
            f"--executor: unknown executor {name!r}; expected one of {list(EXECUTORS)}"
        )
    return EXECUTORS[name](slots, address, cpus)
