"""What a study leaves beside its runs once they are run: ``curves.json`` (the results stage),
``claims.json`` (the decide stage) and ``study.json`` (the design, the runs planned and
finished, the time each stage took and the environment). It spans the stages, so it belongs to
none: the command calls it after the run stage, or alone for ``--decide-only``."""

from __future__ import annotations

import json
import time
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.provenance import run_provenance
from paperlib.study.decide.decide import decide
from paperlib.study.paths import results_dir
from paperlib.study.plan.design import Run, run_target
from paperlib.study.plan.scales import SCALES
from paperlib.study.results.curves import write_curves
from paperlib.study.results.files import writable_file
from paperlib.study.results.status import stage_seconds
from paperlib.study.run.execution import run_environment

OUTPUTS = ("curves.json", "claims.json", "study.json")  # what a study writes beside its runs


def summarise(
    scale_name: str,
    runs: list[Run],
    partial: bool,
    stages: dict[str, float] | None = None,
    threads: int = 1,
) -> dict[str, Any]:
    """``curves.json``, ``claims.json`` and ``study.json`` from the finished runs (after a study,
    or for ``--decide-only``); returns the decided claims. ``study.json`` records the design,
    the runs planned and finished, and each stage's seconds summed over its finished runs'
    ``run.done`` (training plus evaluation, whichever invocation made them)."""
    for name in OUTPUTS:
        writable_file(results_dir(scale_name) / name)
    start = time.perf_counter()
    write_curves(scale_name, runs)
    stages = {**(stages or {}), "curves": time.perf_counter() - start}
    report = decide(scale_name, partial)
    verdicts = [c["verdict"] for c in report["claims"]]
    print(
        f"[study {scale_name}] claims: "
        + ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts))),
        flush=True,
    )
    done = [run_target(r, scale_name) / "run.done" for r in runs]
    finished_seconds = stage_seconds(runs, scale_name)
    scale = SCALES[scale_name]
    summary = {
        "scale": scale_name,
        "runs": len(runs),
        "runs_finished": sum(path.is_file() for path in done),
        "partial": report["partial"],
        "bases": list(scale.bases),
        "seeds": list(scale.seeds),
        "sweep_seeds": list(scale.sweep_seeds),
        "sweep_arm_seeds": {k: list(v) for k, v in scale.sweep_arm_seeds.items()},
        "stage_seconds_of_finished_runs": {k: round(v) for k, v in finished_seconds.items()},
        "stage_seconds_this_invocation": {k: round(v) for k, v in stages.items()},
        "environment": run_environment(threads),
        "provenance": run_provenance(),
    }
    atomic_write_text(results_dir(scale_name) / "study.json", json.dumps(summary, indent=1) + "\n")
    return report


def record_invocation(scale_name: str, fields: dict[str, Any]) -> None:
    """Add how this invocation ran the study (``fields``: its executor, workers, threads,
    device and seconds) to ``study.json``."""
    path = results_dir(scale_name) / "study.json"
    record = json.loads(path.read_text())
    record.update(fields)
    atomic_write_text(path, json.dumps(record, indent=1) + "\n")
