"""Design notes: what a claim's committed seed design gives and what would resolve δ.

Before new runs, a claim's simultaneous half-width under
another seed design follows from the committed within-base variance of the seed means
(``σ_a² + σ_e²/N``) and item term: the seed term is that variance times the design's ``W``,
with ``S − B`` degrees of freedom (:func:`design_half_width`; fewer than 2 give no interval),
and the item term estimates ``(σ_b² + σ_g²/B) / N``, which holds no seed count, so it is kept
as measured (for the same items and number of bases; with ``S = B`` it also holds
``W σ_e² / N`` and plans conservatively). No seed count goes below :func:`item_floor`;
:func:`smallest_resolving_design` gives the fewest balanced seeds per base that resolve ``δ``.

:func:`claim_design_note` writes a decided claim's note (``claims.json``'s ``design_note``):
its planned seeds (per base) at the claim's level of the study's error statement, against the
committed within-base spread of its seed effects and its item term
(:mod:`~paperlib.study.decide.inference`).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from scipy import stats

from paperlib.study.decide.inference import seed_weight
from paperlib.study.decide.seed_pairs import expected_seeds
from paperlib.study.plan.claims import Claim
from paperlib.study.plan.scales import Scale


def design_half_width(
    within_variance: float, item_term: float, per_base_counts, alpha: float
) -> float:
    """The half-width ``sqrt(t²_{S−B} · within_variance · W + z² · item_term)`` (both at
    ``1 − alpha / 2``, ``alpha`` the claim's own level: ``study.decide.error_control``) of a design
    with ``per_base_counts`` seeds per base; ``math.inf`` below 2 within-base degrees of freedom
    (no interval by the rule)."""
    counts = [int(n) for n in per_base_counts]
    df = sum(counts) - len(counts)
    if df < 2:
        return math.inf
    level = alpha / 2
    t, z = float(stats.t.isf(level, df)), float(stats.norm.isf(level))
    seed_term = within_variance * seed_weight(counts)
    return math.sqrt(t * t * seed_term + z * z * item_term)


def item_floor(item_term: float, alpha: float) -> float:
    """``z · sqrt(item_term)``, z at ``1 − alpha / 2``: the half-width with the seed term at
    zero, which no number of seeds goes below."""
    return float(stats.norm.isf(alpha / 2)) * math.sqrt(item_term)


def smallest_resolving_design(
    within_variance: float,
    item_term: float,
    bases: int,
    alpha: float,
    delta: float,
    max_per_base: int = 8,
    min_per_base: int = 3,
) -> int | None:
    """The fewest seeds per base ``n`` in ``[min_per_base, max_per_base]`` whose balanced
    design (``n`` seeds on each of ``bases``) has :func:`design_half_width` ``< delta``; None
    when ``max_per_base`` does not reach it or :func:`item_floor` ``≥ delta``."""
    if item_floor(item_term, alpha) >= delta:
        return None
    for per_base in range(min_per_base, max_per_base + 1):
        counts = [per_base] * bases
        if design_half_width(within_variance, item_term, counts, alpha) < delta:
            return per_base
    return None


@dataclass(frozen=True)
class DesignNote:
    """What a claim's committed design gives and what would resolve ``δ`` (:func:`design_note`)."""

    half_width: float  # simultaneous half-width at the committed design (inf: no interval)
    item_floor: float  # the half-width no number of seeds goes below
    resolvable: bool  # the committed design, or one up to max_per_base, gets below δ
    per_base_needed: int | None  # the fewest balanced seeds per base that do
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields; an infinite half-width is ``None``."""
        half = self.half_width if math.isfinite(self.half_width) else None
        return {
            "half_width": half,
            "item_floor": self.item_floor,
            "resolvable": self.resolvable,
            "per_base_needed": self.per_base_needed,
            "reason": self.reason,
        }


def design_note(
    within_variance: float,
    item_term: float,
    per_base_counts,
    alpha: float,
    delta: float,
    max_per_base: int = 8,
    min_per_base: int = 3,
) -> DesignNote:
    """The :class:`DesignNote` of a claim at its committed ``per_base_counts``: its
    :func:`design_half_width`, :func:`item_floor` and :func:`smallest_resolving_design`."""
    counts = [int(n) for n in per_base_counts]
    half = design_half_width(within_variance, item_term, counts, alpha)
    floor = item_floor(item_term, alpha)
    needed = smallest_resolving_design(
        within_variance, item_term, len(counts), alpha, delta, max_per_base, min_per_base
    )
    if floor >= delta:
        reason = f"the item floor ±{floor:.3g} is at least δ = {delta:.3g}: more items, not seeds"
    elif half < delta:
        reason = f"the planned design resolves δ = {delta:.3g} (±{half:.3g})"
    elif needed is None:
        reason = f"{max_per_base} seeds per base do not resolve δ = {delta:.3g}"
    else:
        planned = f"±{half:.3g}" if math.isfinite(half) else "no interval"
        reason = f"{needed} seeds per base resolve δ = {delta:.3g} (planned: {planned})"
    return DesignNote(half, floor, half < delta or needed is not None, needed, reason)


def claim_design_note(
    record: dict, claim: Claim, scale: Scale, alpha: float
) -> dict[str, Any] | None:
    """The claim's design note (``study.decide.design_notes.design_note``): the half-width its
    planned seeds (per base) give at the claim's level ``alpha`` and the committed within-base
    spread of its seed effects, its test-set item floor, and the seeds per base that resolve δ; None
    where the spread is unknown (no base with two valid seeds)."""
    if record["seed_df"] < 1:
        return None
    counts = Counter(record["bases_of_seeds"])
    within = record["seed_term"] / seed_weight([counts[b] for b in sorted(counts)])
    planned = Counter(scale.base_of(s) for s in expected_seeds(claim, scale))
    delta = record["smallest"]
    note = design_note(
        within, record["item_term"], [planned[b] for b in sorted(planned)], alpha, delta
    )
    return {
        **note.as_dict(),
        "delta": delta,
        "planned_per_base": {str(b): planned[b] for b in sorted(planned)},
        "valid_per_base": {str(b): counts[b] for b in sorted(counts)},
        "within_variance": within,
        "within_df": record["seed_df"],
    }
