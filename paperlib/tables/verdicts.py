"""The decision rule: from an effect and its multiplicity-adjusted interval to a verdict.

A claim says ``variant`` beats ``baseline`` on a per-item metric (``better``: "higher" or
"lower"). The study estimates the paired effect over seeds and shared test items
(``tables.inference.crossed_estimate``), adjusts its interval for the number of claims of the
same paper (Holm, ``tables.inference.holm_levels``) and decides one of :data:`VERDICTS`:

1. ``untestable`` (:func:`untestable_reason`): a model did not learn (its guard metric's
   interval does not clear the guard's threshold), a side's interval contains the metric's
   chance level (for a metric without a learning guard; where a guard shows both models
   learned, a value at chance is a finding, e.g. Long-CLIP's scores ignoring caption length),
   the baseline has no headroom (less than the smallest effect of interest between it and the
   metric's best value, or between it and chance), or both sides reach the best value.
   Untestable claims are left out of the multiplicity correction.
2. ``inconclusive`` with fewer than :data:`MIN_SEEDS` valid seeds (the seed variance is
   unknown).
3. ``negligible`` (:func:`directional_verdict`): the simultaneous (Bonferroni, α/m) interval
   lies inside ``± smallest`` (the claim's smallest effect of interest, in the metric's units);
4. ``reproduces`` / ``contradicts``: the adjusted interval lies on the paper's / the other
   side of zero, and the seeds of every pre-trained base agree on the sign of the effect
   (:func:`bases_agree`; with one base this holds trivially);
5. else ``inconclusive``.

A run whose contrastive loss stays within 1 % of ln B over its last fifth, or whose features
hardly vary (:func:`collapse_reason`), is collapsed; the study leaves it out and says so.
"""

from __future__ import annotations

import math

import numpy as np

VERDICTS = ("reproduces", "contradicts", "negligible", "inconclusive", "untestable")
COLLAPSE_LOSS_FRACTION = 0.01  # loss within 1 % of ln B over the last fifth of training
COLLAPSE_FEATURE_STD = 1e-3  # features whose std over the test set is below this
MIN_SEEDS = 2  # fewer valid seeds leave the seed variance unknown: no directional verdict


def at_chance(interval: tuple[float, float], chance: float | None) -> bool:
    """The interval contains the chance level: nothing tells the model from an information-free
    one. (An interval wholly below chance is a finding, e.g. scores that fall with caption
    length, and stays testable.)"""
    return chance is not None and interval[0] <= chance <= interval[1]


def at_ceiling(interval: tuple[float, float], ceiling: float, better: str) -> bool:
    """The interval reaches the metric's best value."""
    return interval[1] >= ceiling if better == "higher" else interval[0] <= ceiling


def headroom(
    baseline: float, chance: float | None, ceiling: float, better: str, smallest: float
) -> bool:
    """Whether the baseline's mean leaves room for an effect of ``smallest`` either way: at
    least that much between it and the best value (the paper's side) and, where the metric has
    a chance level, between it and chance (the other side)."""
    sign = 1.0 if better == "higher" else -1.0
    room_up = sign * (ceiling - baseline)
    room_down = math.inf if chance is None else abs(baseline - chance)
    return room_up >= smallest and room_down >= smallest


def untestable_reason(
    variant: tuple[float, float],
    baseline: tuple[float, float],
    baseline_mean: float,
    chance: float | None,
    ceiling: float,
    better: str,
    smallest: float,
) -> str | None:
    """Why a comparison cannot be tested (see the module docstring), or None; ``variant`` and
    ``baseline`` are the two sides' 95 % intervals."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower'; got {better!r}")
    for name, side in (("variant", variant), ("baseline", baseline)):
        if at_chance(side, chance):
            return f"the {name}'s interval does not clear chance ({chance:.4g})"
    if at_ceiling(variant, ceiling, better) and at_ceiling(baseline, ceiling, better):
        return f"both intervals reach the metric's best value ({ceiling:g})"
    if not headroom(baseline_mean, chance, ceiling, better, smallest):
        return (
            f"the baseline ({baseline_mean:.4g}) leaves less than the smallest effect of "
            f"interest ({smallest:g}) to the best value ({ceiling:g})"
            + ("" if chance is None else f" or to chance ({chance:.4g})")
        )
    return None


def signed(interval: tuple[float, float], better: str) -> tuple[float, float]:
    """The interval of the effect with the paper's direction positive."""
    low, high = interval
    return (low, high) if better == "higher" else (-high, -low)


def directional_verdict(
    adjusted: tuple[float, float],
    equivalence: tuple[float, float],
    better: str,
    smallest: float,
    seeds: int,
) -> tuple[str, str]:
    """Steps 2-5 of the module docstring (bases aside): verdict and reason, from the
    multiplicity-adjusted interval of variant − baseline (Holm's, for a direction) and its
    simultaneous one (Bonferroni's, for ``negligible``: an equivalence that holds for every claim
    of the family at once, whatever the claim's own p-value)."""
    if seeds < MIN_SEEDS:
        return "inconclusive", f"fewer than {MIN_SEEDS} valid seeds: the seed variance is unknown"
    if -smallest < equivalence[0] and equivalence[1] < smallest:
        return "negligible", f"the simultaneous interval lies inside ±{smallest:g}"
    low, high = signed(adjusted, better)
    if low > 0:
        return "reproduces", "the adjusted interval lies on the paper's side of zero"
    if high < 0:
        return "contradicts", "the adjusted interval lies on the other side of zero"
    return "inconclusive", "the adjusted interval contains zero"


def bases_agree(per_base: dict[int, float], verdict: str, better: str) -> bool:
    """Whether every pre-trained base's mean effect has the sign a directional verdict says."""
    if verdict not in ("reproduces", "contradicts"):
        return True
    sign = (1.0 if better == "higher" else -1.0) * (1.0 if verdict == "reproduces" else -1.0)
    return all(sign * effect > 0 for effect in per_base.values())


def collapse_reason(losses: list[float], batch_size: int, feature_std: float) -> str | None:
    """Why a run counts as collapsed, or None: its contrastive loss stayed within 1 % of
    ln B over the last fifth of its logged steps (nothing was told apart), or its features
    hardly vary over the test set (std below :data:`COLLAPSE_FEATURE_STD`)."""
    if feature_std < COLLAPSE_FEATURE_STD:
        return f"feature std {feature_std:.2e} < {COLLAPSE_FEATURE_STD:g}"
    if losses:
        tail = losses[-max(1, len(losses) // 5) :]
        level = math.log(batch_size)
        if abs(float(np.mean(tail)) - level) <= COLLAPSE_LOSS_FRACTION * level:
            return f"contrastive loss {np.mean(tail):.3f} within 1% of ln B = {level:.3f}"
    return None
