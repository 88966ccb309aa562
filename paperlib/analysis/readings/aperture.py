"""Tutorial 03's readings: where MERU's half aperture is undefined, what its clamp does to the
gradient, how training drives parents inside the radius, and what ARGENT's losses do there
(``docs/methods/argent.md#aperture-failure``, ``#adaent``, ``#norm-regularizer``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from paperlib.analysis.aperture import (
    APERTURE,
    CAPTION_NORM,
    CAPTIONS_INSIDE,
    RADIUS,
    ProbeArm,
    SeedMean,
    Track,
    at_floor,
)
from paperlib.analysis.readings.words import Reading, listing, number, plural, span, verb, who

HALF_PI = math.pi / 2


def moves(first: float, last: float, down: str = "falls", up: str = "rises") -> str:
    """``down`` or ``up`` as ``last`` lies below or above ``first``, else ``stays``."""
    return down if last < first else up if last > first else "stays"


def domain(radii: Mapping[float, float]) -> Reading:
    """Where the cone exists, ``radii[c]`` = 2K/√c for each curvature shown."""
    low, high = min(radii), max(radii)
    grows = "grows" if radii[low] > radii[high] else "does not grow"
    return Reading(
        f"The cone exists only outside 2K/√c, a radius that {grows} from {radii[high]:.2f} at "
        f"c = {high:g} to {radii[low]:.2f} at c = {low:g}: the smaller the curvature, the "
        "larger the ball of parents that have no cone."
    )


def gradient(
    peaks: Mapping[str, float], inside: float, slope: float, r0: float, curv: float
) -> Reading:
    """The gradient of each implementation near the boundary ``r0`` (``peaks[label]``: its
    largest |dω/d‖x‖|, the exact one first, MERU's second, ours last), the largest one inside
    (``inside``) and the log–log ``slope`` of the exact one over the smallest gaps."""
    exact, meru, ours = peaks.values()
    inside_text = "exactly zero" if inside == 0 else f"at most {inside:.2g}"
    return Reading(
        f"At c = {curv:g} (r₀ = 2K/√c = {r0:.3f}) the exact gradient grows as "
        f"(‖x‖ − r₀)^{slope:+.2f} as the parent nears the boundary (the formula's −½), up to "
        f"{exact:.2g} at the smallest gap shown; MERU's clamp, a no-op in float32, peaks at "
        f"{meru:.2g} rad per unit norm and this project's at {ours:.2g}, {meru / ours:.0f} "
        f"times lower. Inside the radius every version's gradient is {inside_text}: a parent "
        "that crosses the boundary meets a spike of gradient on one side and "
        f"{'none' if inside == 0 else 'almost none'} on the other."
    )


def pretraining(tracks: Mapping[str, Track], floor: float, steps: int) -> Reading:
    """The failure in the hyperbolic bases' pre-training logs (``tracks[base]``, read at the
    diagnostic steps by ``analysis.aperture.track``), the curvature against its clamp
    ``floor``."""
    t = list(tracks.values())

    def first_last(key: str, fmt: str = ".2f") -> tuple[str, str]:
        return span((x.first(key) for x in t), fmt), span((x.last(key) for x in t), fmt)

    curv, norm, radius = (first_last(k) for k in ("curv", CAPTION_NORM, RADIUS))
    inside, aperture = first_last(CAPTIONS_INSIDE, ".0%"), first_last(APERTURE)
    entail = first_last("entailment", ".4f")
    clamped = all(at_floor(x.last("curv"), floor * 10) for x in t)
    reached = span((x.first_step("curv", floor * 1.001, above=False) or 0 for x in t), ",d")
    where = (
        f" — its lower clamp c₀/10 = {floor:g}, reached at step {reached} and held to the end: "
        "past that step the curvature is not learned, it sits at the clamp"
        if clamped
        else f", above its lower clamp {floor:g}"
    )
    half = [x.first_step(CAPTIONS_INSIDE, 0.5) for x in t]
    past = f" (past half from step {span(half, ',d')})" if None not in half else ""
    text = (
        f"{len(t)} bases, {steps:,} steps each from random weights. From the first diagnostic "
        f"(step {t[0].steps[0]:,}) to the last (step {t[0].steps[-1]:,}) the learned curvature "
        f"{_moves(t, 'curv')} from {curv[0]} to {curv[1]}{where}. The batch's mean caption norm "
        f"{_moves(t, CAPTION_NORM)} from {norm[0]} to {norm[1]} while the radius 2K/√c, set by the curvature "
        f"alone, {_moves(t, RADIUS, 'shrinks', 'grows')} from {radius[0]} to {radius[1]}; the share of captions inside the radius {_moves(t, CAPTIONS_INSIDE)} from "
        f"{inside[0]} to {inside[1]}{past}, their mean half aperture from {aperture[0]} to "
        f"{aperture[1]} rad (π/2 = {HALF_PI:.2f}), and the entailment loss from {entail[0]} to "
        f"{entail[1]}. "
    )
    failed = all(
        x.last(CAPTIONS_INSIDE) >= 0.5 and x.last(APERTURE) > 0.95 * HALF_PI
        and x.last("entailment") < 0.05 * x.first("entailment")
        for x in t
    )  # fmt: skip
    if failed:
        text += (
            "The loss goes to zero not because each image now lies in a narrow cone of its "
            "caption, but because most captions sit inside the radius, where every cone is a "
            "half-space: the failure ARGENT describes, in this project's own pre-training."
        )
        point = (
            f"In MERU's own pre-training the curvature falls to {curv[1]} and {inside[1]} of the "
            f"captions end inside 2K/√c, the entailment loss at {entail[1]}: the aperture failure."
        )
    else:
        text += "Most captions do not end inside the radius: the failure does not show here."
        point = "MERU's pre-training does not end with most captions inside 2K/√c."
    return Reading(text, point)


def _moves(tracks: Sequence[Track], key: str, down: str = "falls", up: str = "rises") -> str:
    """One word for every track's change of ``key``, first to last; ``moves`` when they
    differ."""
    words = {moves(x.first(key), x.last(key), down, up) for x in tracks}
    return words.pop() if len(words) == 1 else "moves"


def _side(norm: float, r0: float) -> str:
    return "outside" if norm > r0 else "inside"


def ray(balance: Mapping[float, Mapping[str, float]], c_end: float, c_start: float) -> Reading:
    """A parent on a ray against a fixed child, at the curvature the runs end at (``c_end``) and
    the one they start at (``c_start``): ``balance[c]`` holds ``r0`` (2K/√c), ``hinge_from``
    (the smallest norm where MERU's hinge is positive, NaN where it never is), ``stationary``
    (where γ1·AdaEnt + γ2·Reg has zero slope, NaN where it has none) and the signs read off the
    slopes: ``meru_inward`` (positive wherever the hinge is active, zero elsewhere) and
    ``ada_inward`` (AdaEnt's slope positive at every norm)."""
    end, start = balance[c_end], balance[c_start]
    r0, s = end["r0"], end["stationary"]
    meru = (
        f"MERU's hinge is active for ‖x‖ > {end['hinge_from']:.3f} and its slope along the ray "
        + (
            "is positive wherever it is active and zero elsewhere: descent moves the parent in "
            "and stops only where the loss is zero"
            if end["meru_inward"]
            else "is not positive everywhere it is active"
        )
        if not math.isnan(end["hinge_from"])
        else "MERU's hinge is zero at every norm on this ray"
    )
    ada = (
        "pushes the parent in at every norm"
        if end["ada_inward"]
        else "does not push it in everywhere"
    )
    balanced = (
        f"with the regularizer the push balances at ‖x‖ ≈ {s:.3f}, {_side(s, r0)} the radius "
        f"{r0:.3f}"
        if not math.isnan(s)
        else "with the regularizer there is no balance point on this ray"
    )
    text = (
        f"At c = {c_end:g}, the curvature the bases end at, {meru}. AdaEnt alone {ada}; "
        f"{balanced}. "
    )
    if not math.isnan(start["stationary"]):
        text += (
            f"At c = {c_start:g}, where every run starts, the same balance lies at "
            f"{start['stationary']:.3f}, {_side(start['stationary'], start['r0'])} its radius "
            f"{start['r0']:.3f}: the radius grows as the curvature falls, so where the "
            "balance lies against it depends on the curvature the runs reach. "
        )
    text += (
        "ARGENT's loss has no aperture: a parent inside the radius still gets AdaEnt's "
        "gradient, and where its parents end also depends on the contrastive term this picture "
        "leaves out."
    )
    return Reading(text)


def adaent(
    same_everywhere: bool,
    norms: Sequence[float],
    r0: float,
    hinge_free: float,
    h: tuple[float, float],
    distance: float,
) -> Reading:
    """AdaEnt's penalty against MERU's hinge: whether it is the same for every parent norm tried
    (``norms``), the smallest angle the hinge penalises for a parent inside ``r0``
    (``hinge_free``) and the intra weight at distance 0 and at ``distance`` (``h``)."""
    depends = (
        "by the same amount for each parent norm tried"
        if same_everywhere
        else "by an amount that depends on the parent norm"
    )
    return Reading(
        f"AdaEnt penalises every exterior angle above zero, {depends} "
        f"({', '.join(f'{n:.2f}' for n in sorted(norms))}, inside and outside the radius "
        f"{r0:.2f}), whereas MERU's hinge leaves a parent inside the radius unpenalised for every "
        f"angle below {hinge_free:.3f} rad (π/2 = {HALF_PI:.3f}); the intra weight h rises from "
        f"{h[0]:.2f} for a duplicate to {h[1]:.2f} at d_L = {distance:g}."
    )


def _most_from(arm: ProbeArm) -> int | None:
    """The index, among the validations after step 0, from which at least half of the arm's
    held-out captions stay inside 2K/√c; None where they never do."""
    most = arm.inside[arm.steps > 0] >= 0.5
    first = int(np.argmax(most))
    return first if most.any() and most[first:].all() else None


def _inside_words(arm: ProbeArm) -> str:
    """How one probe arm's held-out share inside 2K/√c goes after step 0, with its norms."""
    trained = arm.steps > 0
    steps, inside, norm = arm.steps[trained], arm.inside[trained], arm.norm[trained]
    first = _most_from(arm)
    if not inside.any():
        return f"is 0 at every validation (mean caption norm {span(norm)})"
    if first is None:
        return f"reaches at most {inside.max():.1%} (mean caption norm {span(norm)})"
    before = f"{span(inside[:first], '.0%')} up to step {steps[first - 1]:,} and " if first else ""
    return (
        f"is {before}{span(inside[first:], '.1%')} from step {steps[first]:,} on (mean caption "
        f"norm {span(norm[first:])})"
    )


def _inside_point(arm: ProbeArm) -> str:
    """One probe arm's held-out captions inside 2K/√c after step 0, in a few words."""
    trained = arm.steps > 0
    first = _most_from(arm)
    if not arm.inside[trained].any():
        return "none at any validation"
    if first is None:
        return f"at most {arm.inside[trained].max():.1%}"
    return f"most from step {arm.steps[trained][first]:,} on"


def probe(arms: Mapping[str, ProbeArm], budget: int, floor: float, val_size: int) -> Reading:
    """The from-scratch budget probe (one seed per arm): each arm's held-out captions inside
    2K/√c over its validations, when its curvature reaches the clamp ``floor``, and the
    curvature at the study's ``budget`` of steps."""
    first = next(iter(arms.values()))
    every = span(np.unique(np.diff(first.steps)), ",d")
    inside = "; ".join(f"{name}'s {_inside_words(arm)}" for name, arm in arms.items())
    reached = {
        name: arm.curv_steps[np.flatnonzero(arm.curv <= floor * 1.001)]
        for name, arm in arms.items()
    }
    clamp = listing(
        f"{name} from step {steps[0]:,}" if steps.size else f"{name} never"
        for name, steps in reached.items()
    )
    at_budget = {name: arm.curv_at(budget) for name, arm in arms.items()}
    where = "at" if all(at_floor(c, floor * 10) for c in at_budget.values()) else "above"
    text = (
        f"One seed of each arm, validated every {every} steps up to step {first.steps[-1]:,} on "
        f"{val_size:,} held-out captions. The share of captions inside 2K/√c: {inside}. The "
        f"learned curvature reaches its clamp {floor:g} ({clamp}); at the study's budget of "
        f"{budget:,} steps it is "
        + listing(f"{c:.3f} ({name})" for name, c in at_budget.items())
        + f", {where} the clamp. One seed per arm gives no spread, so no difference between the "
        "arms is established by this probe: the study's seeds test it (next section)."
    )
    point = (
        "From random weights, in the budget probe (one seed per arm, no spread): held-out "
        "captions inside 2K/√c — "
        + "; ".join(f"{name} {_inside_point(arm)}" for name, arm in arms.items())
        + "."
    )
    return Reading(text, point)


RUN_COLUMNS = {"curv": ("learned curvature", ".3f"), "inside": ("captions inside 2K/√c", ".1%"),
               "norm": ("caption norm", ".3f")}  # fmt: skip


def has_intervals(rows: Mapping[str, Mapping[str, SeedMean]]) -> bool:
    """Whether any arm of :func:`study_runs`' ``rows`` has more than one seed, so an interval."""
    return any(v.low is not None for row in rows.values() for v in row.values())


def runs_table(rows: Mapping[str, Mapping[str, SeedMean]]) -> pd.DataFrame:
    """The study's arms at their last validation (:func:`study_runs`' ``rows``) as a table of
    ``mean [95 % interval]`` over seeds."""
    return pd.DataFrame(
        {
            arm: {RUN_COLUMNS[k][0]: interval_text(v, RUN_COLUMNS[k][1]) for k, v in row.items()}
            for arm, row in rows.items()
        }  # fmt: skip
    ).T


def interval_text(
    value: SeedMean, fmt: str = ".3f", single: str = " (one seed: no interval)"
) -> str:
    """``mean [low, high]`` over seeds, or the one seed's value followed by ``single``."""
    if value.low is None:
        return f"{number(value.mean, fmt)}{single}"
    low, high = (number(v, fmt) for v in (value.low, value.high))
    return f"{number(value.mean, fmt)} [{low}, {high}]"


def _level(value: SeedMean, at: float = 0.5) -> str:
    """``above`` or ``below`` where the interval (one seed: the value) lies wholly on one side
    of ``at``, else ``across``."""
    low, high = (value.mean, value.mean) if value.low is None else (value.low, value.high)
    return "above" if low > at else "below" if high < at else "across"


def _curvatures(rows: Mapping[str, Mapping[str, SeedMean]], floor: float, single: str) -> str:
    """Which arms' curvature sits at its clamp ``floor`` in every seed, and where the others end."""
    clamped = [a for a, r in rows.items() if all(at_floor(c, floor * 10) for c in r["curv"].values)]
    free = [a for a in rows if a not in clamped]
    if len(clamped) == len(rows):
        return f"the learned curvature of every arm sits at its clamp {floor:g} in every seed"
    ends = listing(f"{a} {interval_text(rows[a]['curv'], single=single)}" for a in free)
    if clamped:
        return (
            f"the learned curvature of {listing(clamped)} sits at its clamp {floor:g} in every "
            f"seed; the others end at {ends}"
        )
    return f"no arm's curvature has reached its clamp {floor:g}; they end at {ends}"


def _sides(rows: Mapping[str, Mapping[str, SeedMean]]) -> str:
    """Which arms leave most of their held-out captions inside the radius, which keep most
    outside (each by its interval, or its one seed's value)."""
    side = {a: _level(r["inside"]) for a, r in rows.items()}
    most = [a for a, s in side.items() if s == "above"]
    few = [a for a, s in side.items() if s == "below"]
    parts = [
        f"{who(arms, list(rows), 'no arm', 'every arm')} "
        f"{verb(arms, list(rows), one, many)} most held-out captions {where}"
        for arms, one, many, where in ((most, "leaves", "leave", "inside 2K/√c"),
                                       (few, "keeps", "keep", "outside"))
        if arms
    ]  # fmt: skip
    return "; ".join(parts) or "no arm is clearly on either side of half its captions"


def _regularizer(regularizer: tuple[str, str, SeedMean]) -> str:
    """The paired difference of the held-out caption norm without the regularizer and with it."""
    without, with_, diff = regularizer
    if diff.low is None:
        word = "one seed gives no interval, so no difference is read"
    elif diff.high < 0:
        word = "lower, as the ray of section 4 predicts for AdaEnt alone"
    elif diff.low > 0:
        word = "higher, against the ray's prediction for AdaEnt alone"
    else:
        word = "the interval holds 0: no difference is read"
    return (
        f" {without} ends with a held-out caption norm {interval_text(diff, '+.3f', '')} from "
        f"{with_}'s (paired over {diff.n} {plural(diff.n, 'seed', 'seeds')}): {word}."
    )


def study_runs(
    rows: Mapping[str, Mapping[str, SeedMean]],
    step: int,
    floor: float,
    regularizer: tuple[str, str, SeedMean] | None,
    scale: str,
) -> Reading:
    """The ``scale`` study's arms at their last validation (``rows[arm]``: ``curv``, ``inside``
    and ``norm`` of the held-out captions, each a ``analysis.aperture.seed_mean``), and where
    given the ``regularizer`` comparison (arm without it, arm with it, the paired difference of
    their caption norms). Where no arm has an interval, that is said once."""
    some = has_intervals(rows)
    single = " (one seed: no interval)" if some else ""  # said once where no arm has one
    over = (
        "over each arm's seeds (mean [95 % interval])" if some else "one seed per arm, no interval"
    )
    curv, sides = _curvatures(rows, floor, single), _sides(rows)
    shares = "; ".join(
        f"{a} {interval_text(r['inside'], '.1%', single)} (norm "
        f"{interval_text(r['norm'], '.2f', single)})"
        for a, r in rows.items()
    )
    text = (
        f"In the {scale} study's runs at the last validation (step {step:,}; {over}), {curv}. "
        f"The share of held-out captions inside 2K/√c: {shares}. {sides[0].upper()}{sides[1:]}."
    )
    if regularizer is not None:
        text += _regularizer(regularizer)
    point = f"In the {scale} study's runs (step {step:,}; {over}): {curv.split(';')[0]}; {sides}."
    return Reading(text, point)
