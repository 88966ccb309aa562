"""Verdicts with intervals: paired differences over seeds, a test-set bootstrap, chance floors
and collapsed-run detection.

For a claim "variant beats baseline on metric m", each seed s gives per-item vectors
``a[s]`` and ``b[s]`` on the same held-out items. The effect is ``d̄ = mean_s (mean a[s] −
mean b[s])``. Its 95 % interval combines the two sources of error:

    d̄ ± t_{0.975, S−1} · sqrt( s_d² / S + v_test )

with ``s_d²`` the sample variance of the per-seed differences (training randomness) and
``v_test`` the variance of ``d̄`` over ``n_boot`` bootstrap resamples of the test items,
drawn once and shared by every seed (the items are the same for all runs). With one seed
only the test term remains (z = 1.96). A variant's own value gets the same interval.

Verdicts (``verdict``): ``untestable`` when either side's interval contains its chance level
(or both reach the ceiling), ``inconclusive`` with fewer than :data:`MIN_SEEDS` valid seeds,
else ``reproduces`` / ``contradicts`` when the interval of the signed effect (positive = the
paper's direction) lies above / below zero, else ``inconclusive``. Claims whose metric moves
without the model having learned (text-length effects, generality of captions) also carry a
learning guard: a retrieval metric whose interval must clear :data:`LEARNED_MARGIN` × chance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

VERDICTS = ("reproduces", "contradicts", "inconclusive", "untestable")
COLLAPSE_LOSS_FRACTION = 0.01  # loss within 1 % of ln B over the last fifth of training
COLLAPSE_FEATURE_STD = 1e-3  # features whose std over the test set is below this
LEARNED_MARGIN = 3.0  # a learning guard passes when its metric's interval lies above 3 × chance
MIN_SEEDS = 2  # fewer valid seeds leave the seed variance unknown: no directional verdict


@dataclass(frozen=True)
class Interval:
    """A mean over seeds with its 95 % interval (seed variance + test bootstrap)."""

    mean: float
    low: float
    high: float
    seed_values: tuple[float, ...]


def _t(seeds: int) -> float:
    return 1.959964 if seeds < 2 else float(stats.t.ppf(0.975, seeds - 1))


def bootstrap_indices(n_items: int, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """(n_boot, n_items) item indices drawn with replacement, one draw shared by all runs."""
    return np.random.default_rng(seed).integers(0, n_items, size=(n_boot, n_items))


def interval(per_seed: np.ndarray, boot: np.ndarray) -> Interval:
    """Interval of ``mean_s mean_i per_seed[s, i]`` for an (S, N) array (see module doc)."""
    per_seed = np.asarray(per_seed, dtype=np.float64)
    if per_seed.ndim != 2 or per_seed.shape[0] == 0 or per_seed.shape[1] == 0:
        raise ValueError(f"per_seed must be a non-empty (seeds, items) array; got {per_seed.shape}")
    if not np.isfinite(per_seed).all():
        raise ValueError("per_seed contains non-finite values")
    seed_means = per_seed.mean(axis=1)
    S = len(seed_means)
    seed_var = float(np.var(seed_means, ddof=1)) / S if S > 1 else 0.0
    test_var = float(np.var(per_seed.mean(axis=0)[boot].mean(axis=1)))
    half = _t(S) * math.sqrt(seed_var + test_var)
    m = float(seed_means.mean())
    return Interval(m, m - half, m + half, tuple(float(v) for v in seed_means))


def paired_effect(variant: np.ndarray, baseline: np.ndarray, boot: np.ndarray) -> Interval:
    """Interval of the paired difference variant − baseline; (S, N) arrays, seeds paired."""
    variant, baseline = np.asarray(variant, float), np.asarray(baseline, float)
    if variant.shape != baseline.shape:
        raise ValueError(f"paired arrays differ in shape: {variant.shape} vs {baseline.shape}")
    return interval(variant - baseline, boot)


def at_chance(side: Interval, chance: float | None, better: str = "higher") -> bool:
    """The side's interval contains the chance level: nothing tells it from an information-free
    model. (An interval wholly below chance is a finding, e.g. scores that fall with caption
    length, and stays testable.)"""
    if chance is None:
        return False
    return side.low <= chance <= side.high


def learned(side: Interval, chance: float, margin: float = LEARNED_MARGIN) -> bool:
    """A model's metric clears ``margin`` × its chance level over its whole interval."""
    return side.low > margin * chance


HEADROOM = 0.9  # a baseline's rate should stay below 0.9 × the metric's best value


def headroom(
    mean: float, chance: float | None, ceiling: float, margin: float = LEARNED_MARGIN
) -> bool | None:
    """Whether a baseline's metric leaves room for an effect either way: above ``margin`` ×
    chance and below :data:`HEADROOM` × ``ceiling``. None where the rule cannot apply: no chance
    level, a best value below chance (lower is better), or ``margin`` × chance already beyond
    the upper bound (HiMo@2's 50 %, PEP's 0.5)."""
    if chance is None or ceiling <= chance or margin * chance >= HEADROOM * ceiling:
        return None
    return margin * chance <= mean <= HEADROOM * ceiling


def at_ceiling(side: Interval, ceiling: float, better: str) -> bool:
    return side.high >= ceiling if better == "higher" else side.low <= ceiling


def verdict(
    effect: Interval,
    variant: Interval,
    baseline: Interval,
    chance: float | None,
    ceiling: float,
    better: str,
) -> str:
    """One of :data:`VERDICTS` (module docstring); ``effect`` is variant − baseline."""
    return verdict_with_reason(effect, variant, baseline, chance, ceiling, better)[0]


def verdict_with_reason(
    effect: Interval,
    variant: Interval,
    baseline: Interval,
    chance: float | None,
    ceiling: float,
    better: str,
) -> tuple[str, str]:
    """:func:`verdict` and the rule that decided it, in words."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower'; got {better!r}")
    for name, side in (("variant", variant), ("baseline", baseline)):
        if at_chance(side, chance, better):
            return "untestable", f"the {name}'s interval does not clear chance ({chance:.4g})"
    if at_ceiling(variant, ceiling, better) and at_ceiling(baseline, ceiling, better):
        return "untestable", f"both intervals reach the metric's best value ({ceiling:g})"
    if len(effect.seed_values) < MIN_SEEDS:
        return "inconclusive", f"fewer than {MIN_SEEDS} valid seeds: the seed variance is unknown"
    sign = 1.0 if better == "higher" else -1.0
    low, high = sorted((sign * effect.low, sign * effect.high))
    if low > 0:
        return "reproduces", "the effect's interval lies on the paper's side of zero"
    if high < 0:
        return "contradicts", "the effect's interval lies on the other side of zero"
    return "inconclusive", "the effect's interval contains zero"


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
