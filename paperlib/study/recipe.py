"""Choosing each arm's learning rate and warm-up on the validation split (the recipe stage).

Every headline arm, variant and baseline alike (:data:`SEARCHED_ARMS`), runs once per point of
its scale's grid (``Scale.recipe_lrs`` × ``Scale.recipe_warmups``, the warm-up a fraction of the
run's steps): seed 0 from base 0 at the arm's full schedule, validated as every study run is and
never evaluated on the test set. A point is *retained* when its last validation record keeps at
least :data:`RETENTION` of its step-0 record (the base itself) on every
:data:`RETENTION_METRICS`; the pick is the retained point with the best last value of the arm's
primary metric (ties: the smaller learning rate), else the point that retains most. Sweep arms
take the pick of the headline arm they vary (:data:`RECIPE_OF`), so an ablation pair differs in
one thing only. The picks go to ``results/<scale>/recipe.json`` (:func:`write_recipe`), which
the study's plan reads (:func:`apply`). An empty grid: every arm keeps the scale's fixed
learning rate and warm-up.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.engine.validation import validation_records
from paperlib.provenance import read_run_record
from paperlib.study.reader import repo_relative, results_dir, slug
from paperlib.study.scales import SCALES, Scale
from paperlib.tables.claims import APERTURE, SMALLER
from paperlib.train import log_records

RETENTION = 0.8  # the share of the base's validation value a retained point keeps
RETENTION_METRICS = ("short_i2t_r1", "zeroshot_L1")  # what the base knew before fine-tuning
_ROUNDING = 1e-9  # a ratio of two hit rates exactly at the threshold (72/90) is retained
# the searched arms: label -> (study, the primary validation metric its pick maximises)
SEARCHED_ARMS = {
    "MoLo": ("himo", "long_i2t_r1"),
    "InfoNCE (λ=0)": ("himo", "long_i2t_r1"),
    "Long-CLIP": ("himo", "long_i2t_r1"),
    "HyCoCLIP": ("argent", "zeroshot_L1"),
    "ARGENT": ("argent", "zeroshot_L1"),
}
# every other fine-tune arm -> the searched arm whose recipe it takes (the arm it varies)
RECIPE_OF = {
    "MoLo, half batch": "MoLo",
    "MoLo, double batch": "MoLo",
    "MoLo, 2 ranks, global HiDe": "MoLo",
    "MoLo, 2 ranks, HiDe per rank": "MoLo",
    "ARGENT, no weights": "ARGENT",
    "ARGENT, weights on all pairs": "ARGENT",
    "ARGENT, no regularizer": "ARGENT",
    "ARGENT, Ent": "ARGENT",
    f"ARGENT{APERTURE}": "ARGENT",
    f"ARGENT{SMALLER}": "ARGENT",
    "MERU": "HyCoCLIP",
    f"MERU{APERTURE}": "HyCoCLIP",
    f"HyCoCLIP{APERTURE}": "HyCoCLIP",
    f"HyCoCLIP{SMALLER}": "HyCoCLIP",
}


class RecipeMissingError(FileNotFoundError):
    """The scale searches its recipe and ``recipe.json`` has no pick for a planned arm."""


def grid(scale: Scale) -> list[tuple[float, float]]:
    """The scale's (learning rate, warm-up fraction) points; empty: no search."""
    return [(lr, warmup) for lr in scale.recipe_lrs for warmup in scale.recipe_warmups]


def warmup_steps(fraction: float, steps: int) -> int:
    """Warm-up steps of a run of ``steps`` steps at warm-up ``fraction`` (halves round up)."""
    return math.floor(fraction * steps + 0.5)


def _number(value: float) -> str:
    """A number as a folder-name part: ``3e-05`` -> ``3em05``, ``0.05`` -> ``0p05``."""
    return f"{value:.3g}".replace(".", "p").replace("-", "m").replace("+", "")


def point_folder(arm: str, lr: float, warmup: float) -> str:
    """A grid point's results folder relative to ``results/<scale>/``."""
    return f"recipe/{slug(arm)}/lr{_number(lr)}-wu{_number(warmup)}"


def retention(start: float, last: float) -> float:
    """The share of ``start`` that ``last`` keeps (1 where the start is 0: nothing to lose;
    0 where ``last`` is not a number: a diverged run kept nothing)."""
    if not math.isfinite(last):
        return 0.0
    return 1.0 if start <= 0 else last / start


def score_point(records: list[dict[str, Any]], primary: str) -> dict[str, Any]:
    """A grid point's start and last validation values, retention ratios, whether it is
    retained, and its score (the last value of ``primary``) from its training log records."""
    curve = validation_records(records)
    if not curve or curve[0]["step"] != 0:
        raise ValueError("no step-0 validation record: expected one at the start of training")
    start, last = curve[0]["val"], curve[-1]["val"]
    metrics = dict.fromkeys((primary, *RETENTION_METRICS))
    missing = [m for m in metrics if m not in start or m not in last]
    if missing:
        raise ValueError(f"validation records lack {missing}: expected {list(metrics)} "
                         "(train.val_metrics)")  # fmt: skip
    ratios = {m: retention(start[m], last[m]) for m in RETENTION_METRICS}
    return {
        "start": {m: start[m] for m in metrics},
        "last": {m: last[m] for m in metrics},
        "last_step": curve[-1]["step"],
        "retention": ratios,
        "retained": all(r >= RETENTION - _ROUNDING for r in ratios.values()),
        "score": last[primary],
    }


def pick(points: list[dict[str, Any]], primary: str) -> dict[str, Any]:
    """The chosen point of scored ``points`` (each with ``lr``, ``warmup``, ``warmup_steps`` and
    :func:`score_point`'s fields) and why: the best retained score, ties to the smaller
    learning rate (then the shorter warm-up); with none retained, the highest retention."""
    if not points:
        raise ValueError("no grid points to pick from")
    retained = [p for p in points if p["retained"]]
    if retained:
        best = max(retained, key=lambda p: (p["score"], -p["lr"], -p["warmup"]))
        reason = (f"the best last {primary} ({best['score']:.4g}) of the {len(retained)} of "
                  f"{len(points)} points that keep ≥ {RETENTION} of the base's "
                  f"{' and '.join(RETENTION_METRICS)}")  # fmt: skip
    else:
        best = max(points, key=lambda p: (min(p["retention"].values()), -p["lr"], -p["warmup"]))
        reason = (f"no point keeps ≥ {RETENTION} of the base's {' and '.join(RETENTION_METRICS)}; "
                  f"this one retains most ({min(best['retention'].values()):.3g})")  # fmt: skip
    chosen = {k: best[k] for k in ("lr", "warmup", "warmup_steps")}
    edge = grid_edge(best["lr"], [p["lr"] for p in points])
    if edge:
        reason += f"; the pick is the grid's {edge} learning rate (a wider grid might move it)"
    return {**chosen, "retained": bool(retained), "at_grid_edge": edge, "reason": reason}


def grid_edge(lr: float, lrs: list[float]) -> str | None:
    """``"lowest"`` or ``"highest"`` where ``lr`` is the grid's smallest or largest learning
    rate (of a grid with more than one), else None."""
    if len(set(lrs)) < 2:
        return None
    return "lowest" if lr == min(lrs) else "highest" if lr == max(lrs) else None


def searched_arms(studies: tuple[str, ...]) -> list[str]:
    """The searched arms of ``studies``."""
    return [arm for arm, (study, _) in SEARCHED_ARMS.items() if study in studies]


def _scored_point(scale_name: str, arm: str, lr: float, warmup: float) -> dict[str, Any]:
    """One finished grid point of ``arm``: its run record's schedule and provenance, scored."""
    folder = results_dir(scale_name) / point_folder(arm, lr, warmup)
    if not (folder / "run.done").is_file():
        raise FileNotFoundError(f"{folder}/run.done: the recipe run is not finished; run the "
                                f"study (`python -m paperlib.study --scale {scale_name}`)")  # fmt: skip
    record = read_run_record(folder / "run.done")
    try:
        scored = score_point(log_records(folder / "log.jsonl"), SEARCHED_ARMS[arm][1])
    except ValueError as error:
        raise ValueError(f"{folder}/log.jsonl: {error}") from None
    config = record["config"]
    return {
        "lr": lr,
        "warmup": warmup,
        "warmup_steps": config["optim"]["warmup_steps"],
        "steps": config["train"]["steps"],
        "folder": repo_relative(folder),
        **scored,
        "provenance": record.get("provenance"),
        "init_sha256": record.get("init_sha256"),
    }


def write_recipe(scale_name: str, studies: tuple[str, ...] = ("himo", "argent")) -> dict:
    """Score every finished grid point of the searched arms of ``studies``, pick each arm's
    recipe, and write (and return) ``results/<scale>/recipe.json``; the arms of other studies
    keep their entries from the file (:func:`_other_studies_arms`)."""
    scale = SCALES[scale_name]
    arms = _other_studies_arms(scale_name, studies)
    for arm in searched_arms(studies):
        points = [_scored_point(scale_name, arm, lr, wu) for lr, wu in grid(scale)]
        study, primary = SEARCHED_ARMS[arm]
        arms[arm] = {"study": study, "primary": primary, "points": points,
                     "pick": pick(points, primary)}  # fmt: skip
    arms = {arm: arms[arm] for arm in SEARCHED_ARMS if arm in arms}
    recipe = {
        "scale": scale_name,
        "grid": _grid_record(scale),
        "retention_threshold": RETENTION,
        "retention_metrics": list(RETENTION_METRICS),
        "arms": arms,
    }
    atomic_write_text(recipe_path(scale_name), json.dumps(recipe, indent=1) + "\n")
    return recipe


def _other_studies_arms(scale_name: str, studies: tuple[str, ...]) -> dict[str, dict]:
    """The entries of ``recipe.json`` (where it exists and was searched on the scale's grid)
    of the arms outside ``studies``: a study run for one paper leaves the other's picks."""
    path = recipe_path(scale_name)
    if not path.is_file():
        return {}
    saved = json.loads(path.read_text())
    if saved.get("grid") != _grid_record(SCALES[scale_name]):
        return {}
    return {a: e for a, e in saved.get("arms", {}).items() if e.get("study") not in studies}


def _grid_record(scale: Scale) -> dict[str, list[float]]:
    return {"lrs": list(scale.recipe_lrs), "warmups": list(scale.recipe_warmups)}


def recipe_path(scale_name: str) -> Path:
    return results_dir(scale_name) / "recipe.json"


def load_picks(scale_name: str) -> dict[str, dict[str, Any]]:
    """The picks of ``recipe.json`` by arm; a :class:`RecipeMissingError` where the file is
    missing or searched another grid."""
    path, scale = recipe_path(scale_name), SCALES[scale_name]
    hint = f"run the recipe stage first (`python -m paperlib.study --scale {scale_name}` runs it)"
    if not path.is_file():
        raise RecipeMissingError(f"{path}: no recipe picks; scale {scale_name!r} searches "
                                 f"lr × warm-up (Scale.recipe_lrs, recipe_warmups): {hint}")  # fmt: skip
    try:
        recipe = json.loads(path.read_text())
        searched, arms = recipe["grid"], recipe["arms"]
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{path}: not a recipe record ({type(error).__name__}: {error}); "
                         f"expected 'grid' and 'arms': {hint}") from None  # fmt: skip
    if searched != _grid_record(scale):
        raise RecipeMissingError(f"{path}: grid {searched}, the scale's is "
                                 f"{_grid_record(scale)}: {hint}")  # fmt: skip
    return {arm: entry["pick"] for arm, entry in arms.items()}


def apply(config: dict[str, Any], arm: str, scale_name: str) -> dict[str, Any]:
    """``config`` with the learning rate and warm-up picked for ``arm`` (a searched arm or one
    of :data:`RECIPE_OF`); unchanged where the scale has no grid."""
    if not grid(SCALES[scale_name]):
        return config
    searched = RECIPE_OF.get(arm, arm)
    if searched not in SEARCHED_ARMS:
        raise ValueError(f"{arm!r}: no recipe; expected a searched arm {list(SEARCHED_ARMS)} "
                         "or an arm of recipe.RECIPE_OF")  # fmt: skip
    picks = load_picks(scale_name)
    if searched not in picks:
        raise RecipeMissingError(f"{recipe_path(scale_name)}: no pick for {searched!r}; run "
                                 "the recipe stage for its study first")  # fmt: skip
    chosen = picks[searched]
    config = json.loads(json.dumps(config))
    steps = config["train"]["steps"]
    config["optim"].update(lr=chosen["lr"], warmup_steps=warmup_steps(chosen["warmup"], steps))
    return config
