"""Choosing each arm's learning rate and warm-up on the validation split (the recipe stage).

Every headline arm, variant and baseline alike (:data:`SEARCHED_ARMS`), runs once per point of
its study's grid (:meth:`Scale.recipe_grid`: learning rates × warm-ups, the warm-up a fraction
of the run's steps): seed 0 from base 0 at the arm's full schedule, validated as every study
run is and never evaluated on the test set. Each arm's :class:`Rule` says how a point is chosen.
A point is *retained* when its last validation record keeps at least the rule's ``threshold``
of its step-0 record (the base itself) on every one of the rule's ``guard`` metrics. The pick
is, among the retained points, the one with the best last value of the arm's primary metric
(ties: the smaller learning rate); with no point retained, the point that retains most. A rule
that asks for the ``most_training`` is shared by the arms that have it: they take one point, the
largest learning rate that every one of them retains (then the best mean primary metric), so
they differ in their objective only (:func:`joint_points`). Sweep arms take the pick of the
headline arm they vary (:data:`RECIPE_OF`), so an ablation pair differs in one thing only.
The picks go to ``results/<scale>/recipe.json`` (:func:`write_recipe`), which the study's plan
reads (:func:`apply`). An empty grid: every arm keeps the scale's fixed learning rate and
warm-up.

ARGENT's arms train from random weights, as its paper's do, at the hyperbolic bases' own recipe
(``study.plan.design.scratch_config``): none of them searches. A rule that asks for the
``most_training`` serves arms whose primary metric only falls as they train more (a fine-tune
from a base that already knows it); no arm of the current design has one.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.engine.validation import validation_records
from paperlib.provenance import read_run_record
from paperlib.study.paths import repo_relative, results_dir, slug
from paperlib.study.plan.scales import SCALES, Scale
from paperlib.train import log_records

RETENTION = 0.8  # the share of the base's validation value a retained point keeps
RETENTION_METRICS = ("short_i2t_r1", "zeroshot_L1")  # what the base knew before fine-tuning
_ROUNDING = 1e-9  # a ratio of two hit rates exactly at the threshold (72/90) is retained


@dataclass(frozen=True)
class Rule:
    """How one searched arm's grid point is chosen (see the module's docstring)."""

    study: str
    primary: str  # the validation metric the pick maximises (``most_training``: among warm-ups)
    guard: tuple[str, ...] = RETENTION_METRICS  # what a retained point keeps of its base...
    threshold: float = RETENTION  # ... and how much of it
    # True: one point for every arm of the study with this rule, the largest learning rate they
    # all retain (then the best mean ``primary``)
    most_training: bool = False


# the searched arms: label -> the rule its pick follows (ARGENT's arms train from random
# weights at the hyperbolic bases' own recipe, ``study.plan.design.scratch_config``: none searches)
SEARCHED_ARMS = {
    "MoLo": Rule("himo", "long_i2t_r1"),
    "InfoNCE (λ=0)": Rule("himo", "long_i2t_r1"),
    "Long-CLIP": Rule("himo", "long_i2t_r1"),
}
# every other fine-tune arm -> the searched arm whose recipe it takes (the arm it varies)
RECIPE_OF = {
    "MoLo, half batch": "MoLo",
    "MoLo, double batch": "MoLo",
    "MoLo, 2 ranks, global HiDe": "MoLo",
    "MoLo, 2 ranks, HiDe per rank": "MoLo",
}


class RecipeMissingError(FileNotFoundError):
    """The scale searches its recipe and ``recipe.json`` has no pick for a planned arm."""


def grid(scale: Scale, study: str) -> list[tuple[float, float]]:
    """The (learning rate, warm-up fraction) points ``study``'s arms search at ``scale``; empty:
    no search."""
    lrs, warmups = scale.recipe_grid(study)
    return [(lr, warmup) for lr in lrs for warmup in warmups]


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


def score_point(records: list[dict[str, Any]], rule: Rule) -> dict[str, Any]:
    """A grid point's start and last validation values, retention ratios on ``rule.guard``,
    whether it is retained, and its score (the last value of ``rule.primary``) from its
    training log records."""
    curve = validation_records(records)
    if not curve or curve[0]["step"] != 0:
        raise ValueError("no step-0 validation record: expected one at the start of training")
    start, last = curve[0]["val"], curve[-1]["val"]
    metrics = dict.fromkeys((rule.primary, *rule.guard))
    missing = [m for m in metrics if m not in start or m not in last]
    if missing:
        raise ValueError(f"validation records lack {missing}: expected {list(metrics)} "
                         "(train.val_metrics)")  # fmt: skip
    ratios = {m: retention(start[m], last[m]) for m in rule.guard}
    return {
        "start": {m: start[m] for m in metrics},
        "last": {m: last[m] for m in metrics},
        "last_step": curve[-1]["step"],
        "retention": ratios,
        "retained": all(r >= rule.threshold - _ROUNDING for r in ratios.values()),
        "score": last[rule.primary],
    }


def pick(points: list[dict[str, Any]], rule: Rule) -> dict[str, Any]:
    """The chosen point of scored ``points`` (each with ``lr``, ``warmup``, ``warmup_steps`` and
    :func:`score_point`'s fields) and why, by ``rule``: among the retained points the best
    score (ties to the smaller learning rate, then the shorter warm-up), or with
    ``rule.most_training`` the largest retained learning rate, whether or not every smaller
    one is retained (then the best score, the shorter warm-up); with none retained, the
    highest retention. The points may be :func:`joint_points` of several arms."""
    if not points:
        raise ValueError("no grid points to pick from")
    retained = [p for p in points if p["retained"]]
    guard = f"≥ {rule.threshold:g} of the base's {' and '.join(rule.guard)}"
    if retained and rule.most_training:
        best = max(retained, key=lambda p: (p["lr"], p["score"], -p["warmup"]))
        reason = (f"the largest learning rate of the {len(retained)} of {len(points)} points "
                  f"that keep {guard}, with the best last {rule.primary} "
                  f"({best['score']:.4g}) of its warm-ups")  # fmt: skip
    elif retained:
        best = max(retained, key=lambda p: (p["score"], -p["lr"], -p["warmup"]))
        reason = (f"the best last {rule.primary} ({best['score']:.4g}) of the {len(retained)} "
                  f"of {len(points)} points that keep {guard}")  # fmt: skip
    else:
        best = max(points, key=lambda p: (min(p["retention"].values()), -p["lr"], -p["warmup"]))
        reason = (f"no point keeps {guard}; this one retains most "
                  f"({min(best['retention'].values()):.3g})")  # fmt: skip
    chosen = {k: best[k] for k in ("lr", "warmup", "warmup_steps")}
    edge = grid_edge(best["lr"], [p["lr"] for p in points])
    if edge:
        reason += f"; the pick is the grid's {edge} learning rate (a wider grid might move it)"
    return {**chosen, "retained": bool(retained), "at_grid_edge": edge, "reason": reason}


def joint_points(points_by_arm: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One scored point per grid point of several arms (each arm's points on the same grid):
    retained where every arm's point is, its retention ``{"<arm>: <metric>": share}`` and its
    score the arms' mean score: what a rule shared by the arms picks from."""
    arms = list(points_by_arm)
    by_point = {arm: {(p["lr"], p["warmup"]): p for p in points}
                for arm, points in points_by_arm.items()}  # fmt: skip
    keys = list(by_point[arms[0]])
    if any(set(by_point[arm]) != set(keys) for arm in arms):
        raise ValueError(f"{arms}: a shared recipe needs every arm on the same grid points")
    joint = []
    for key in keys:
        points = [by_point[arm][key] for arm in arms]
        joint.append({
            "lr": key[0], "warmup": key[1], "warmup_steps": points[0]["warmup_steps"],
            "retained": all(p["retained"] for p in points),
            "retention": {f"{arm}: {m}": r for arm, p in zip(arms, points)
                          for m, r in p["retention"].items()},
            "score": sum(p["score"] for p in points) / len(points),
        })  # fmt: skip
    return joint


def grid_edge(lr: float, lrs: list[float]) -> str | None:
    """``"lowest"`` or ``"highest"`` where ``lr`` is the grid's smallest or largest learning
    rate (of a grid with more than one), else None."""
    if len(set(lrs)) < 2:
        return None
    return "lowest" if lr == min(lrs) else "highest" if lr == max(lrs) else None


def searched_arms(studies: tuple[str, ...]) -> list[str]:
    """The searched arms of ``studies``."""
    return [arm for arm, rule in SEARCHED_ARMS.items() if rule.study in studies]


def _scored_point(scale_name: str, arm: str, lr: float, warmup: float) -> dict[str, Any]:
    """One finished grid point of ``arm``: its run record's schedule and provenance, scored."""
    folder = results_dir(scale_name) / point_folder(arm, lr, warmup)
    if not (folder / "run.done").is_file():
        raise FileNotFoundError(f"{folder}/run.done: the recipe run is not finished; run the "
                                f"study (`python -m paperlib.study --scale {scale_name}`)")  # fmt: skip
    record = read_run_record(folder / "run.done")
    try:
        scored = score_point(log_records(folder / "log.jsonl"), SEARCHED_ARMS[arm])
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
    scored = {}
    for arm in searched_arms(studies):  # an arm whose study has no grid has nothing to pick
        if points := grid(scale, SEARCHED_ARMS[arm].study):
            scored[arm] = [_scored_point(scale_name, arm, lr, wu) for lr, wu in points]
    for arm, points in scored.items():
        rule = SEARCHED_ARMS[arm]
        arms[arm] = {"study": rule.study, "primary": rule.primary, "rule": rule_record(rule),
                     "points": points, "pick": _arm_pick(arm, scored)}  # fmt: skip
    arms = {arm: arms[arm] for arm in SEARCHED_ARMS if arm in arms}
    recipe = {"scale": scale_name, "grid": _grid_record(scale), "arms": arms}
    atomic_write_text(recipe_path(scale_name), json.dumps(recipe, indent=1) + "\n")
    return recipe


def _arm_pick(arm: str, scored: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """``arm``'s pick from its scored points, or, where its rule is ``most_training``, the one
    point of every scored arm with that rule (:func:`joint_points`)."""
    rule = SEARCHED_ARMS[arm]
    if not rule.most_training:
        return pick(scored[arm], rule)
    sharing = [a for a in scored if SEARCHED_ARMS[a] == rule]
    chosen = pick(joint_points({a: scored[a] for a in sharing}), rule)
    arms = " and ".join(sharing)
    return {**chosen, "reason": f"{chosen['reason']} (one point for {arms}, scored by their mean)"}


def _other_studies_arms(scale_name: str, studies: tuple[str, ...]) -> dict[str, dict]:
    """The entries of ``recipe.json`` (where it exists and was searched on the scale's grid)
    of the arms outside ``studies``: a study run for one paper leaves the other's picks."""
    path = recipe_path(scale_name)
    if not path.is_file():
        return {}
    saved = json.loads(path.read_text())
    if saved.get("grid") != _grid_record(SCALES[scale_name]):
        return {}
    return {a: e for a, e in saved.get("arms", {}).items()
            if e.get("study") not in studies and _under_its_rule(a, e)}  # fmt: skip


def _under_its_rule(arm: str, entry: dict[str, Any]) -> bool:
    """Whether a ``recipe.json`` entry was picked by ``arm``'s rule as it stands now."""
    return arm in SEARCHED_ARMS and entry.get("rule") == rule_record(SEARCHED_ARMS[arm])


def _grid_record(scale: Scale) -> dict[str, dict[str, list[float]]]:
    """Each searching study's grid: ``{study: {"lrs": [...], "warmups": [...]}}``."""
    studies = sorted({rule.study for rule in SEARCHED_ARMS.values()})
    return {study: dict(zip(("lrs", "warmups"), map(list, scale.recipe_grid(study))))
            for study in studies}  # fmt: skip


def rule_record(rule: Rule) -> dict[str, Any]:
    """``rule`` as ``recipe.json`` records it beside each arm's pick."""
    return {**asdict(rule), "guard": list(rule.guard)}


def recipe_path(scale_name: str) -> Path:
    return results_dir(scale_name) / "recipe.json"


def load_picks(scale_name: str) -> dict[str, dict[str, Any]]:
    """The picks of ``recipe.json`` by arm, of the arms picked under their rule as it stands
    (:func:`_under_its_rule`); a :class:`RecipeMissingError` where the file is missing or
    searched another grid."""
    path, scale = recipe_path(scale_name), SCALES[scale_name]
    hint = f"run the recipe stage first (`python -m paperlib.study --scale {scale_name}` runs it)"
    if not path.is_file():
        raise RecipeMissingError(f"{path}: no recipe picks; scale {scale_name!r} searches "
                                 f"lr × warm-up (Scale.recipe_grid): {hint}")  # fmt: skip
    try:
        recipe = json.loads(path.read_text())
        searched, arms = recipe["grid"], recipe["arms"]
        picks = {arm: entry["pick"] for arm, entry in arms.items() if _under_its_rule(arm, entry)}
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"{path}: not a recipe record ({type(error).__name__}: {error}); "
                         f"expected 'grid' and 'arms', each arm with its 'pick': {hint}") from None  # fmt: skip
    if searched != _grid_record(scale):
        raise RecipeMissingError(f"{path}: grid {searched}, the scale's is "
                                 f"{_grid_record(scale)} (one grid per study): {hint}")  # fmt: skip
    return picks


def apply(config: dict[str, Any], arm: str, scale_name: str) -> dict[str, Any]:
    """``config`` with the learning rate and warm-up picked for ``arm`` (a searched arm or one
    of :data:`RECIPE_OF`); unchanged where the scale has no grid for the arm's study."""
    searched = RECIPE_OF.get(arm, arm)
    if searched not in SEARCHED_ARMS:
        raise ValueError(f"{arm!r}: no recipe; expected a searched arm {list(SEARCHED_ARMS)} "
                         "or an arm of recipe.RECIPE_OF")  # fmt: skip
    if not grid(SCALES[scale_name], SEARCHED_ARMS[searched].study):
        return config
    picks = load_picks(scale_name)
    if searched not in picks:
        raise RecipeMissingError(f"{recipe_path(scale_name)}: no pick for {searched!r} under "
                                 "its rule (recipe.SEARCHED_ARMS); run the recipe stage for "
                                 "its study first")  # fmt: skip
    chosen = picks[searched]
    config = json.loads(json.dumps(config))
    steps = config["train"]["steps"]
    config["optim"].update(lr=chosen["lr"], warmup_steps=warmup_steps(chosen["warmup"], steps))
    return config
