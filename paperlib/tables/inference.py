"""Intervals for a mean over seeds and shared test items, and Holm's correction over claims.

The study evaluates every run of a comparison on the same held-out items, so a per-item value
(or a paired difference of two runs' values) forms an ``(S, N)`` table: ``S`` training seeds
crossed with ``N`` test items. Its grand mean estimates the effect over the population of
training runs and of test items, under the crossed random-effects model

    y[s, i] = μ + a_s + b_i + e_si,   a ~ (0, σ_a²), b ~ (0, σ_b²), e ~ (0, σ_e²)

(``a_s``: the seed's training randomness; ``b_i``: how hard the item is, shared by every seed;
``e_si``: the seed × item interaction, e.g. which retrievals a run happens to get right). Then

    Var(ȳ) = σ_a² / S + σ_b² / N + σ_e² / (S N) = E[MS_seed + MS_item − MS_resid] / (S N)

with the two-way ANOVA mean squares (:func:`mean_squares`): ``MS_seed / (S N)`` estimates the
first and last terms together, ``(MS_item − MS_resid) / (S N)`` the middle one
(:func:`crossed_estimate`). Adding the
spread of the per-seed means (``MS_seed / (S N)``) to a bootstrap over items of the
seed-averaged values (``≈ MS_item / (S N)``) would count the interaction ``σ_e² / (S N)``
twice; subtracting the residual mean square removes it. The interval gives each part its own
reference distribution (:meth:`Estimate.half_width`); ``tests/test_inference.py`` checks its
coverage on data simulated with a known effect.

With one seed the seed variance is unknown; the interval then holds the test-item term alone
and says so (``Estimate.seeds == 1``): verdicts need at least two seeds.

:func:`holm` adjusts the p-values of one family of claims (one paper's) for their number:
Holm's step-down procedure, which controls the family-wise error rate at α without any
assumption on how the claims depend on each other. :func:`holm_levels` turns each adjusted
p-value into the confidence level of an *adjusted interval* that excludes zero exactly when
Holm rejects the claim's null hypothesis (see its docstring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, stats

ALPHA = 0.05


@dataclass(frozen=True)
class MeanSquares:
    """Two-way ANOVA of an (S, N) table without replication."""

    seeds: int
    items: int
    seed: float  # MS of the seed means, (S − 1) degrees of freedom
    item: float  # MS of the item means, (N − 1)
    resid: float  # MS of the seed × item residuals, (S − 1)(N − 1)


def _table(values: np.ndarray) -> np.ndarray:
    table = np.asarray(values, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] == 0 or table.shape[1] < 2:
        raise ValueError(
            f"values must be a (seeds, items) array with at least 2 items; got shape {table.shape}"
        )
    if not np.isfinite(table).all():
        raise ValueError("values contain NaN or infinite entries")
    return table


def mean_squares(values: np.ndarray) -> MeanSquares:
    """The mean squares of :class:`MeanSquares` for an (S, N) array (S may be 1)."""
    y = _table(values)
    S, N = y.shape
    grand = y.mean()
    seed_means, item_means = y.mean(axis=1), y.mean(axis=0)
    ms_seed = N * float(((seed_means - grand) ** 2).sum()) / (S - 1) if S > 1 else math.nan
    ms_item = S * float(((item_means - grand) ** 2).sum()) / (N - 1)
    resid = y - seed_means[:, None] - item_means[None, :] + grand
    ms_resid = float((resid**2).sum()) / ((S - 1) * (N - 1)) if S > 1 else math.nan
    return MeanSquares(S, N, ms_seed, ms_item, ms_resid)


@dataclass(frozen=True)
class Estimate:
    """A grand mean and the two parts of its variance: ``seed_term`` (σ_a²/S + σ_e²/(S N),
    estimated with S − 1 degrees of freedom) and ``item_term`` (σ_b²/N, estimated from N − 1
    item means: taken as known)."""

    mean: float
    seed_values: tuple[float, ...]  # the per-seed means
    seed_term: float
    item_term: float

    @property
    def seeds(self) -> int:
        return len(self.seed_values)

    @property
    def se(self) -> float:
        return math.sqrt(self.seed_term + self.item_term)

    def half_width(self, alpha: float = ALPHA) -> float:
        """``sqrt(t² · seed_term + z² · item_term)``: t with S − 1 degrees of freedom, z normal,
        both at ``1 − alpha/2``. Each part keeps its own reference distribution, so the interval
        is exact when either term dominates and errs wide in between (a Satterthwaite t on the
        sum under-covers with 2-3 seeds; ``tests/test_inference.py`` shows both)."""
        z = float(stats.norm.isf(alpha / 2))
        t = float(stats.t.isf(alpha / 2, self.seeds - 1)) if self.seeds > 1 else z
        return math.sqrt(t * t * self.seed_term + z * z * self.item_term)

    def interval(self, alpha: float = ALPHA) -> tuple[float, float]:
        """The two-sided ``1 − alpha`` interval."""
        half = self.half_width(alpha)
        return self.mean - half, self.mean + half

    def p_value(self) -> float:
        """Two-sided p-value of "the mean is 0": the ``alpha`` whose interval just touches 0
        (the interval's own test, so ``p < alpha`` iff the interval excludes 0)."""
        target = abs(self.mean)
        if self.seed_term + self.item_term == 0.0:
            return 1.0 if target == 0.0 else 0.0
        if target == 0.0:
            return 1.0
        gap = lambda log_alpha: self.half_width(math.exp(log_alpha)) - target  # noqa: E731
        if gap(math.log(1e-300)) < 0:  # beyond double precision
            return 0.0
        return float(math.exp(optimize.brentq(gap, math.log(1e-300), 0.0, xtol=1e-10)))


def crossed_estimate(values: np.ndarray) -> Estimate:
    """:class:`Estimate` of the grand mean of an (S, N) table under the crossed model (module
    docstring): ``seed_term = MS_seed / (S N)`` (unbiased for σ_a²/S + σ_e²/(S N)) and
    ``item_term = max(0, MS_item − MS_resid) / (S N)`` (for σ_b²/N). One seed: the item mean
    square alone, ``MS_item / N`` (σ_a² is not identified)."""
    y = _table(values)
    ms = mean_squares(y)
    S, N = ms.seeds, ms.items
    seed_values = tuple(float(v) for v in y.mean(axis=1))
    if S == 1:
        return Estimate(float(y.mean()), seed_values, 0.0, ms.item / N)
    seed_term = ms.seed / (S * N)
    item_term = max(0.0, ms.item - ms.resid) / (S * N)
    return Estimate(float(y.mean()), seed_values, seed_term, item_term)


def summary(values: np.ndarray) -> dict[str, Any]:
    """A (seeds, items) table's mean, 95 % interval and per-seed means (``claims.json``'s form of
    a variant's own value)."""
    estimate = crossed_estimate(values)
    return {
        "mean": estimate.mean,
        "interval": list(estimate.interval()),
        "per_seed": list(estimate.seed_values),
    }


def holm(p_values: list[float]) -> list[float]:
    """Holm's adjusted p-values: ``p̃_(r) = max_{k ≤ r} min(1, (m − k + 1) p_(k))`` over the
    p-values sorted ascending; a claim is rejected at level α when ``p̃ < α``."""
    m = len(p_values)
    order = sorted(range(m), key=lambda j: p_values[j])
    adjusted, running = [0.0] * m, 0.0
    for rank, j in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[j]))
        adjusted[j] = running
    return adjusted


def holm_levels(p_values: list[float], alpha: float = ALPHA) -> list[float]:
    """Per claim, the α of its adjusted interval: ``α · p / p̃`` (``p̃``: Holm's adjusted p).

    The raw ``1 − α_j`` interval excludes zero iff ``p < α_j``, i.e. iff ``p̃ < α``: the
    interval shows Holm's decision. ``α / m ≤ α_j ≤ α`` (``p ≤ p̃ ≤ m p``), so it is never
    narrower than the raw 95 % interval nor wider than Bonferroni's.
    """
    adjusted = holm(p_values)
    m = len(p_values)
    return [
        alpha / m if p_adj == 0.0 else alpha * p / p_adj for p, p_adj in zip(p_values, adjusted)
    ]
