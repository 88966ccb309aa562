"""Which finished runs count: each run's record read with its validity decided anew from its
log (collapsed, not converged), and why a run is left out of the claims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paperlib.study.reader import PRETRAIN, results_dir
from paperlib.study.scales import SCALES, Scale
from paperlib.tables.claims import METRICS
from paperlib.tables.plateau import run_plateaus
from paperlib.tables.verdicts import collapse_reason
from paperlib.train import log_records

# the contrastive term of each method's log, the one a collapse leaves at ln B
LOSS_TERM = {
    "clip": "contrastive",
    "himo": "global",
    "longclip": "long",
    "meru": "contrastive",
    "hycoclip": "contrastive",
    "argent": "contrastive",
}


class MissingRunsError(FileNotFoundError):
    """A claim's planned runs have no results; the message names them."""


def run_collapse(info: dict[str, Any], log: list[dict[str, Any]]) -> str | None:
    """:func:`~paperlib.tables.verdicts.collapse_reason` of a finished run's record and log."""
    term = LOSS_TERM[info["config"]["method"]]
    losses = [r[term] for r in log if term in r]
    return collapse_reason(losses, info["config"]["train"]["batch_size"], info["feature_std"])


# the metric each study's plateau is judged on: the primary metric its recipe maximises
# (``study.recipe.SEARCHED_ARMS``), with the smallest effect of interest of the claims' metric
PLATEAU_METRIC = {"himo": ("long_i2t_r1", "long-i2t"), "argent": ("zeroshot_L1", "zs-l1")}


def plateau_deltas(study: str) -> dict[str, float]:
    """``{validation metric: δ}`` of the study's plateau (:data:`PLATEAU_METRIC`)."""
    metric, claimed = PLATEAU_METRIC[study]
    return {metric: METRICS[claimed].smallest}


def run_plateau(records: list[dict[str, Any]], study: str) -> str | None:
    """Why a trained run's primary validation curve still rose past δ over its last fifth
    (``tables.plateau``), or None (also for a run without a curve: the references)."""
    plateaus = run_plateaus(records, smallest=plateau_deltas(study))
    found = [p.reason() for p in plateaus.values() if not p.reached]
    return "; ".join(found) if found else None


def _read_run(done: Path, scale: Scale) -> dict[str, Any]:
    """One ``run.done`` with its validity decided anew from its log (named errors)."""
    try:
        info = json.loads(done.read_text())
        info["config"]["method"], info["seed"], info["variant"]  # noqa: B018 - required keys
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{done}: not a study run record ({type(error).__name__}: {error}); delete its "
            "folder and run the study again"
        ) from None
    log = done.parent / "log.jsonl"
    records = log_records(log) if log.is_file() else []
    steps = [r for r in records if "loss" in r]
    info["collapsed"] = run_collapse(info, steps)
    try:
        info["unconverged"] = run_plateau(records, info["study"])
    except ValueError as error:
        raise ValueError(f"{log}: {error}") from None
    info["base"] = scale.base_of(info["seed"]) if info["variant"] != PRETRAIN else info["seed"]
    return info


def finished_runs(scale_name: str) -> list[dict[str, Any]]:
    """``run.done`` records of every finished run, validity (``collapsed``, ``unconverged``)
    decided anew from its log."""
    scale = SCALES[scale_name]
    return [_read_run(d, scale) for d in sorted(results_dir(scale_name).glob("*/*/seed*/run.done"))]


def invalid_reason(run: dict[str, Any], require_plateau: bool = True) -> str | None:
    """Why a run is left out of the claims (collapsed; not converged where the scale requires
    a plateau), or None."""
    if run.get("collapsed"):
        return f"collapsed: {run['collapsed']}"
    if run.get("unconverged") and require_plateau:
        return f"not converged: {run['unconverged']}"
    return None
