"""What the hyperbolic runs' records say about MERU's half aperture (tutorial 03;
``docs/methods/argent.md#aperture-failure``): a training log read at its diagnostic steps, the
from-scratch budget probe's held-out curves, and a study arm's held-out parents at its last
validation, with the spread over its seeds.

A run's curvature is learned as ``log c`` and clamped to ``[c0/10, 10·c0]``
(``models.hyperbolic.CURV_RANGE``): :func:`curvature_floor` is its lower end, where a run whose
curvature keeps falling stops.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from paperlib.models.hyperbolic import CURV_RANGE

#: the training log's keys a :class:`Track` reads at each diagnostic step
CAPTION_NORM = "diag/text/norm_mean"
CAPTIONS_INSIDE = "diag/text->image/frac_parent_inside_radius"
RADIUS = "diag/aperture_radius"
APERTURE = "diag/text->image/aperture_mean"
TRACK_KEYS = ("curv", CAPTION_NORM, CAPTIONS_INSIDE, RADIUS, APERTURE, "entailment")


def curvature_floor(curv_init: float = 1.0) -> float:
    """The lowest curvature a run started at ``curv_init`` can learn (MERU's clamp)."""
    return curv_init / CURV_RANGE


def at_floor(curv: float, curv_init: float = 1.0) -> bool:
    """Whether a learned curvature sits at its lower clamp (to float32 rounding, 0.1 %)."""
    return math.isclose(curv, curvature_floor(curv_init), rel_tol=1e-3)


@dataclass(frozen=True)
class Track:
    """One run's log at the steps that hold every key of ``values`` (its diagnostic steps):
    ``steps`` (T,), ``values[key]`` (T,)."""

    steps: np.ndarray
    values: dict[str, np.ndarray]

    def first(self, key: str) -> float:
        return float(self.values[key][0])

    def last(self, key: str) -> float:
        return float(self.values[key][-1])

    def first_step(self, key: str, reached: float, above: bool = True) -> int | None:
        """The first step at which ``key`` is at or above (``above``) or at or below
        ``reached``, None where it never is."""
        values = self.values[key]
        hit = values >= reached if above else values <= reached
        return int(self.steps[np.argmax(hit)]) if hit.any() else None


def track(log: Iterable[Mapping[str, Any]], keys: Sequence[str] = TRACK_KEYS) -> Track:
    """The :class:`Track` of a training log's records (one step's keys may be split over
    several records; steps missing one of ``keys`` are left out)."""
    by_step: dict[int, dict[str, Any]] = {}
    for record in log:
        if "step" in record:
            by_step.setdefault(int(record["step"]), {}).update(record)
    steps = [s for s, r in sorted(by_step.items()) if all(k in r for k in keys)]
    if not steps:
        raise ValueError(f"no logged step holds every key of {list(keys)}")
    values = {k: np.array([float(by_step[s][k]) for s in steps]) for k in keys}
    return Track(np.array(steps), values)


@dataclass(frozen=True)
class ProbeArm:
    """One arm of the from-scratch budget probe: its held-out validation (``steps``, the share
    of captions inside ``2K/√c`` ``inside`` and their mean norm ``norm``) and its learned
    curvature over training (``curv_steps``, ``curv``)."""

    steps: np.ndarray
    inside: np.ndarray
    norm: np.ndarray
    curv_steps: np.ndarray
    curv: np.ndarray

    def curv_at(self, step: int) -> float:
        """The curvature logged last at or before ``step`` (the first logged one before it)."""
        before = self.curv_steps <= step
        return float(self.curv[np.flatnonzero(before)[-1] if before.any() else 0])


def probe_arms(record: Mapping[str, Any]) -> dict[str, ProbeArm]:
    """The arms of ``results/probes/scratch_budget.json`` (``scripts/scratch_budget_probe.py``)
    as :class:`ProbeArm`, by name."""
    arms = {}
    for name, arm in record["arms"].items():
        curve, training = arm["curve"], [t for t in arm["training"] if "curv" in t]
        arms[name] = ProbeArm(
            steps=np.array([p["step"] for p in curve]),
            inside=np.array([p["inside_short"] for p in curve]),
            norm=np.array([p["norm_short"] for p in curve]),
            curv_steps=np.array([t["step"] for t in training]),
            curv=np.array([t["curv"] for t in training]),
        )
    return arms


@dataclass(frozen=True)
class SeedMean:
    """A mean over seeds with its 95 % t interval (``low``, ``high``: None for one seed) and the
    per-seed values."""

    mean: float
    low: float | None
    high: float | None
    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)


def seed_mean(
    values: Sequence[float], bounds: tuple[float, float] = (-math.inf, math.inf)
) -> SeedMean:
    """The mean of per-seed ``values`` and its 95 % Student-t interval over seeds, clipped to
    the quantity's range ``bounds`` (a share: (0, 1))."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("seed_mean needs at least one seed's value")
    mean = float(x.mean())
    if x.size < 2:
        return SeedMean(mean, None, None, tuple(x.tolist()))
    half = float(stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    low, high = max(mean - half, bounds[0]), min(mean + half, bounds[1])
    return SeedMean(mean, low, high, tuple(x.tolist()))


def paired_difference(a: Mapping[int, float], b: Mapping[int, float]) -> SeedMean:
    """``a − b`` on the seeds both hold ({seed: value}), as a :func:`seed_mean`."""
    seeds = sorted(set(a) & set(b))
    if not seeds:
        raise ValueError("the two arms share no seed")
    return seed_mean([a[s] - b[s] for s in seeds])


def last_values(curves: Iterable[Mapping[str, Any]], variant: str, metric: str) -> dict[int, float]:
    """{seed: value at the last validation} of one variant's ``metric`` curves (``curves.json``'s
    ``validation`` entries)."""
    return {
        int(c["seed"]): float(c["points"][-1]["value"])
        for c in curves
        if c.get("variant") == variant and c["metric"] == metric and c["points"]
    }


def ray_balance(
    norms: Sequence[float], hinge: Sequence[float], slopes: Mapping[str, Sequence[float]], r0: float
) -> dict[str, float | bool]:
    """What a parent moved along a ray against a fixed child shows (tutorial 03, section 4):
    ``hinge`` is MERU's loss at each of ``norms``; ``slopes`` its slope along the ray
    (``"hinge"``) and ARGENT's terms' (``"huber"``, ``"reg"``), each weighted as its objective
    weights it. Returns ``r0``; ``hinge_from``, the smallest norm where the hinge is positive
    (NaN where it never is); ``stationary``, the first norm where ``huber + reg`` changes sign
    (NaN where it never does); ``meru_inward``, the hinge's slope positive wherever it is
    active and zero elsewhere; ``ada_inward``, AdaEnt's slope positive at every norm."""
    norms, hinge = np.asarray(norms, dtype=float), np.asarray(hinge, dtype=float)
    meru, ada = (np.asarray(slopes[k], dtype=float) for k in ("hinge", "huber"))
    total = ada + np.asarray(slopes["reg"], dtype=float)
    active = hinge > 0
    crossing = np.flatnonzero(total[:-1] * total[1:] < 0)
    return {
        "r0": float(r0),
        "hinge_from": float(norms[active].min()) if active.any() else math.nan,
        "stationary": float(norms[crossing[0]]) if crossing.size else math.nan,
        "meru_inward": bool((meru[active] > 0).all() and (meru[~active] == 0).all()),
        "ada_inward": bool((ada > 0).all()),
    }


def arm_summary(
    logs: Mapping[int, Sequence[Mapping[str, Any]]], curves: Iterable[Mapping[str, Any]], arm: str
) -> dict[str, SeedMean]:
    """One study arm at its end, over its seeds: the learned curvature its training logs end at
    (``logs``: {seed: records}), and the share of its held-out captions inside 2K/√c and their
    mean norm at its last validation (``curves``: ``curves.json``'s validation entries)."""
    curves = list(curves)
    return {
        "curv": seed_mean([track(log, ("curv",)).last("curv") for log in logs.values()]),
        "inside": seed_mean(list(last_values(curves, arm, "inside_short").values()), (0, 1)),
        "norm": seed_mean(list(last_values(curves, arm, "norm_short").values())),
    }
