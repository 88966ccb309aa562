"""Which finished runs count: each run's record read with its validity decided anew from its
log (collapsed, not converged), and why a run is left out of the claims."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paperlib.study.paths import results_dir
from paperlib.study.plan import recipe
from paperlib.study.plan.design import Run, is_base_reference, plan, run_target
from paperlib.study.plan.plateau import run_plateaus
from paperlib.study.plan.scales import SCALES
from paperlib.study.results.files import read_log, read_run_done, refuse
from paperlib.study.results.references import plateau_deltas
from paperlib.study.run.collapse import run_collapse
from paperlib.train import log_records


class MissingRunsError(FileNotFoundError):
    """A claim's planned runs have no results; the message names them."""


def run_plateau(records: list[dict[str, Any]], scale_name: str, study: str) -> str | None:
    """Why a trained run's primary validation curve was still rising past δ at the end of its
    schedule (``study.plan.plateau``), or None (also for a run without a curve: the references)."""
    plateaus = run_plateaus(records, smallest=plateau_deltas(scale_name, study))
    found = [p.reason() for p in plateaus.values() if not p.reached]
    return "; ".join(found) if found else None


def planned_runs(scale_name: str) -> dict[Path, Run]:
    """Every run of the scale's plan (``design.plan``, its fixed recipe) by results folder."""
    return {run_target(r, scale_name): r for r in plan(scale_name, searched=False)}


def check_planned(done: Path, info: dict[str, Any], planned: dict[Path, Run]) -> None:
    """Refuse a ``run.done`` whose folder, study, variant or seed the plan does not hold,
    naming what the plan holds."""
    run = planned.get(done.parent)
    if run is None:
        variant = done.parent.parent
        seeds = sorted(r.seed for folder, r in planned.items() if folder.parent == variant)
        holds = f"seeds {seeds} of {variant.name}" if seeds else f"no variant {variant.name!r}"
        raise refuse(done, "its folder", f"a run of the plan (it holds {holds})", done.parent.name)
    for field, want in (("study", run.study), ("variant", run.variant), ("seed", run.seed)):
        if info[field] != want:
            raise refuse(done, field, f"{want!r}, as the plan holds for its folder", info[field])


def _read_run(done: Path, scale_name: str, planned: dict[Path, Run]) -> dict[str, Any]:
    """One checked ``run.done`` of the plan with its validity decided anew from its log."""
    info = read_run_done(done)
    check_planned(done, info, planned)
    log = done.parent / "log.jsonl"
    records = read_log(done.parent, info, log_records)
    steps = [r for r in records if "loss" in r]
    info["collapsed"] = run_collapse(info, steps)
    try:
        info["unconverged"] = run_plateau(records, scale_name, info["study"])
    except ValueError as error:
        raise ValueError(f"{log}: {error}") from None
    reference = is_base_reference(info["variant"])
    info["base"] = info["seed"] if reference else SCALES[scale_name].base_of(info["seed"])
    return info


def picked_optim(scale_name: str) -> dict[Path, dict[str, Any]] | None:
    """The optimiser settings the plan at the recipe's picks gives each results folder; None
    where the picks cannot be read (no ``recipe.json``, or one of another grid): then no run is
    held to them (``--decide-only`` reads results made before a recipe stage)."""
    try:
        return {run_target(r, scale_name): r.config["optim"] for r in plan(scale_name)}
    except recipe.RecipeMissingError:
        return None


def off_recipe(info: dict[str, Any], optim: dict[str, Any] | None) -> str | None:
    """Why a finished run was not trained at its arm's picked learning rate and warm-up
    (``optim``, from :func:`picked_optim`), or None: a run of an earlier recipe, which a
    comparison must not pair with runs of the current one."""
    done = info["config"].get("optim", {})
    if optim is None or all(done.get(k) == optim.get(k) for k in ("lr", "warmup_steps")):
        return None
    return (f"trained at lr {done.get('lr')}, {done.get('warmup_steps')} warm-up steps; the "
            f"recipe picks lr {optim.get('lr')}, {optim.get('warmup_steps')}")  # fmt: skip


def finished_runs(scale_name: str) -> list[dict[str, Any]]:
    """``run.done`` records of every finished run, each checked (``study.results.files``) and
    one of the plan, validity (``collapsed``, ``unconverged``) decided anew from its log. A run
    of an earlier recipe (:func:`off_recipe`) is not finished: it is named and left out, so
    its claims read as not run rather than pair it with runs of the current recipe."""
    planned = planned_runs(scale_name)
    picked = picked_optim(scale_name) or {}
    runs = []
    for done in sorted(results_dir(scale_name).glob("*/*/seed*/run.done")):
        info = _read_run(done, scale_name, planned)
        if why := off_recipe(info, picked.get(done.parent)):
            print(f"[study] {info['run']}: {why}: left out, not run at the recipe", flush=True)
            continue
        runs.append(info)
    return runs


def invalid_reason(
    run: dict[str, Any], require_plateau: tuple[str, ...] = ("himo", "argent")
) -> str | None:
    """Why a run is left out of the claims (collapsed; not converged where the scale requires
    its study's runs to plateau, ``require_plateau``), or None."""
    if run.get("collapsed"):
        return f"collapsed: {run['collapsed']}"
    if run.get("unconverged") and run["study"] in require_plateau:
        return f"not converged: {run['unconverged']}"
    return None
