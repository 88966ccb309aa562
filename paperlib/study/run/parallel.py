"""Executing the whole study: the recipe stage's unfinished runs, then every other unfinished
run, on an executor (:mod:`~paperlib.study.run.executors`: local worker processes or a Ray
cluster) and a device (:mod:`~paperlib.study.run.devices`: CPU or a GPU) (:func:`run_study`);
one run's failure stops no other."""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Any

from paperlib.study.plan.design import Run, plan, recipe_plan, stage_of
from paperlib.study.plan.recipe import write_recipe
from paperlib.study.run.devices import CPU, check_device, concurrent_runs, on_device
from paperlib.study.run.execution import execute, finished, study_settings
from paperlib.study.run.executors import open_executor


class RunsFailedError(RuntimeError):
    """Some of the study's runs failed; the message names each with its error."""


def _execute_in_worker(job: tuple[Run, str, int]) -> dict[str, Any]:
    """Worker: :func:`execute` under :func:`study_settings` (results do not depend on how many
    workers run); returns the record and the run's wall seconds."""
    run, scale_name, threads = job
    start = time.perf_counter()
    with study_settings(threads):
        record = execute(run, scale_name)
    return {"record": record, "seconds": time.perf_counter() - start}


@dataclass(frozen=True)
class Execution:
    """How the study's runs execute: on which executor (``address``: a Ray cluster's), with
    how many runs at once (``workers`` on CPU, ``runs_per_device`` on a GPU), with how many
    torch threads each, on which device."""

    workers: int = 2
    threads: int = 1
    executor: str = "local"
    address: str | None = None
    device: str = CPU
    runs_per_device: int = 1

    def check(self) -> None:
        """Refuse a device this machine lacks (where the runs execute here) and a GPU index
        under Ray, which gives each task its own GPU."""
        if self.executor == "ray" and self.device.startswith("cuda:"):
            raise ValueError(f"--device {self.device}: under --executor ray use --device cuda")
        if self.executor != "ray" or self.address is None:
            check_device(self.device)

    @property
    def slots(self) -> int:
        return concurrent_runs(self.device, self.runs_per_device, self.workers)

    def record(self) -> dict[str, Any]:
        """How the runs executed, as ``study.json`` records it."""
        return {
            "workers": self.slots,
            "threads_per_run": self.threads,
            "executor": self.executor,
            "device": self.device,
        }

    def resources(self, run: Run) -> tuple[int, float]:
        """The CPUs and GPU share one run asks a cluster for."""
        on_gpu = self.device != CPU and run.nproc == 1
        return run.nproc * self.threads, (1 / self.runs_per_device if on_gpu else 0.0)


def execute_all(
    runs: list[Run], scale_name: str, execution: Execution = Execution()
) -> dict[str, float]:
    """Execute every run, ``execution.slots`` at a time (each in its own process with
    ``execution.threads`` threads, on ``execution.device``); prints progress; returns the
    wall seconds per stage (summed over its runs)."""
    runs = [on_device(r, execution.device) for r in runs]
    pending = [r for r in runs if not finished(r, scale_name)]
    print(
        f"[study {scale_name}] {len(runs) - len(pending)} of {len(runs)} runs finished; "
        f"{len(pending)} to run, {execution.slots} at a time ({execution.executor}, "
        f"{execution.device})",
        flush=True,
    )
    stages: dict[str, float] = {}
    if not pending:
        return stages
    failed: list[str] = []
    largest = max(execution.resources(r)[0] for r in pending)
    with open_executor(execution.executor, execution.slots, execution.address, largest) as submit:
        futures: dict[Future, Run] = {
            submit(
                _execute_in_worker, (r, scale_name, execution.threads), *execution.resources(r)
            ): r
            for r in pending
        }
        done_count, remaining = 0, set(futures)
        while remaining:
            finished_now, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for future in finished_now:
                run, done_count = futures[future], done_count + 1
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 - one run's failure stops no other run
                    failed.append(f"{run.name}: {type(error).__name__}: {error}")
                    print(
                        f"[study {scale_name}] {done_count}/{len(pending)} {run.name} FAILED: {error}",
                        flush=True,
                    )
                    continue
                stage = stage_of(run)
                stages[stage] = stages.get(stage, 0.0) + result["seconds"]
                print(
                    f"[study {scale_name}] {done_count}/{len(pending)} {run.name} done in "
                    f"{result['seconds']:.0f} s",
                    flush=True,
                )
    if failed:
        raise RunsFailedError(
            f"{len(failed)} run(s) failed (the others are finished and kept; run the study "
            "again to retry them):\n" + "\n".join(failed)
        )
    return stages


def run_study(
    scale_name: str,
    studies: tuple[str, ...] = ("himo", "argent"),
    execution: Execution = Execution(),
) -> tuple[list[Run], dict[str, float]]:
    """Run (or finish) every run of the study: the recipe stage first where the scale has a
    grid (its runs, then ``recipe.json``), then the planned runs at the picked recipes; returns
    the planned runs and the wall seconds per stage. A device this machine lacks is refused
    first (on a Ray cluster, by the cluster: the machine that starts the study needs no GPU)."""
    execution.check()
    stages: dict[str, float] = {}
    if searches := recipe_plan(scale_name, studies):
        stages = execute_all(searches, scale_name, execution)
        write_recipe(scale_name, studies)
    runs = plan(scale_name, studies)
    for stage, seconds in execute_all(runs, scale_name, execution).items():
        stages[stage] = stages.get(stage, 0.0) + seconds
    return runs, stages
