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
and says so (``Estimate.seed_df == 0``): verdicts need a seed variance.

**The pre-trained base as a level** (:func:`based_estimate`). The study's fine-tunes start from
``B`` pre-trained bases (seed ``s`` from base ``b(s)``), so a seed's mean is
``μ + β_b + a_s + ē_s``: the bases are fixed levels, not more seeds. The effect is the mean of
the per-base means, its seed term the pooled *within-base* variance of the seed means times
``Σ_b 1 / (B² n_b)``, with ``S − B`` degrees of freedom; with one base this is
:func:`crossed_estimate`. :func:`interaction_test` asks whether the effect differs between
bases (a one-way ANOVA of the per-seed effects on the base, ``F(B − 1, S − B)``), and
:func:`per_base_estimates` gives each base's own effect with the pooled within-base variance.

:func:`holm` adjusts the p-values of one family of claims (one paper's) for their number:
Holm's step-down procedure, which controls the family-wise error rate at α without any
assumption on how the claims depend on each other. It *decides* (a sign; an equivalence, with
:meth:`Estimate.equivalence_p`); the intervals the tables *show* are simultaneous ones at the
family's size (:func:`bonferroni_alpha`), whose level does not depend on the claim's own p.
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
    df: int | None = None  # the seed term's degrees of freedom (None: seeds − 1)

    @property
    def seeds(self) -> int:
        return len(self.seed_values)

    @property
    def seed_df(self) -> int:
        """Degrees of freedom of the seed term (0: the seed variance is unknown)."""
        return self.seeds - 1 if self.df is None else self.df

    @property
    def se(self) -> float:
        return math.sqrt(self.seed_term + self.item_term)

    def half_width(self, alpha: float = ALPHA) -> float:
        """``sqrt(t² · seed_term + z² · item_term)``: t with S − 1 degrees of freedom, z normal,
        both at ``1 − alpha/2``. Each part keeps its own reference distribution, so the interval
        is exact when either term dominates and errs wide in between (a Satterthwaite t on the
        sum under-covers with 2-3 seeds; ``tests/test_inference.py`` shows both)."""
        z = float(stats.norm.isf(alpha / 2))
        t = float(stats.t.isf(alpha / 2, self.seed_df)) if self.seed_df >= 1 else z
        seed_part = t * t * self.seed_term if self.seed_term > 0 else 0.0
        return math.sqrt(seed_part + z * z * self.item_term)

    def interval(self, alpha: float = ALPHA) -> tuple[float, float]:
        """The two-sided ``1 − alpha`` interval."""
        half = self.half_width(alpha)
        return self.mean - half, self.mean + half

    def p_value(self, value: float = 0.0) -> float:
        """Two-sided p-value of "the mean is ``value``": the ``alpha`` whose interval just
        touches it (the interval's own test, so ``p < alpha`` iff the interval excludes it)."""
        target = abs(self.mean - value)
        if self.seed_term + self.item_term == 0.0:
            return 1.0 if target == 0.0 else 0.0
        if target == 0.0:
            return 1.0
        gap = lambda log_alpha: self.half_width(math.exp(log_alpha)) - target  # noqa: E731
        if gap(math.log(1e-300)) < 0:  # beyond double precision
            return 0.0
        return float(math.exp(optimize.brentq(gap, math.log(1e-300), 0.0, xtol=1e-10)))

    def p_above(self, bound: float) -> float:
        """One-sided p-value of "the mean is at most ``bound``" (small when the mean lies
        clearly above it): half the two-sided p on the side the estimate falls."""
        two_sided = self.p_value(bound)
        return two_sided / 2 if self.mean > bound else 1.0 - two_sided / 2

    def p_below(self, bound: float) -> float:
        """One-sided p-value of "the mean is at least ``bound``"."""
        two_sided = self.p_value(bound)
        return two_sided / 2 if self.mean < bound else 1.0 - two_sided / 2

    def equivalence_p(self, delta: float) -> float:
        """Two one-sided tests (TOST) of ``|mean| < delta``: the larger of the p-values of
        "mean ≤ −delta" and "mean ≥ delta"; small when the effect lies inside ``±delta``."""
        if not delta > 0:
            raise ValueError(f"delta must be positive; got {delta}")
        return max(self.p_above(-delta), self.p_below(delta))


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


def _base_groups(seed_count: int, bases) -> tuple[np.ndarray, list]:
    labels = np.asarray(list(bases))
    if labels.shape != (seed_count,):
        raise ValueError(f"bases must give one base per seed ({seed_count}); got {labels.shape}")
    return labels, sorted(set(labels.tolist()))


def _within_base(seed_values: np.ndarray, labels: np.ndarray, levels: list) -> tuple[float, int]:
    """The pooled within-base variance of the seed values and its degrees of freedom."""
    df = len(seed_values) - len(levels)
    if df < 1:
        return math.nan, 0
    groups = [seed_values[labels == b] for b in levels]
    return sum(float(((g - g.mean()) ** 2).sum()) for g in groups) / df, df


def _item_term(y: np.ndarray) -> float:
    """σ_b² / N of a (seeds, items) table: ``(MS_item − MS_resid) / (S N)``; one seed:
    ``MS_item / N``."""
    ms = mean_squares(y)
    if ms.seeds == 1:
        return ms.item / ms.items
    return max(0.0, ms.item - ms.resid) / (ms.seeds * ms.items)


def based_estimate(values: np.ndarray, bases) -> Estimate:
    """:class:`Estimate` of an (S, N) table whose seeds come from fixed pre-trained ``bases``
    (one label per seed; module docstring): the mean of the per-base means, the pooled
    within-base seed variance with ``S − B`` degrees of freedom (``seed_df == 0`` when no base
    has two seeds, or when the seeds tie within every base, as a discrete metric's can: the seed
    variance is then unknown, not zero) and the crossed model's item term."""
    y = _table(values)
    labels, levels = _base_groups(y.shape[0], bases)
    seed_values = y.mean(axis=1)
    base_means = [float(seed_values[labels == b].mean()) for b in levels]
    within, df = _within_base(seed_values, labels, levels)
    if within == 0.0:  # seeds tied within every base (discrete values): no variance estimate
        df = 0
    weight = sum(1.0 / int((labels == b).sum()) for b in levels) / len(levels) ** 2
    seed_term = 0.0 if df == 0 else within * weight
    mean = float(np.mean(base_means))
    return Estimate(mean, tuple(float(v) for v in seed_values), seed_term, _item_term(y), df)


def per_base_estimates(values: np.ndarray, bases) -> dict:
    """Each base's own :class:`Estimate`: the mean of its seeds, the *pooled* within-base
    variance over its seed count (``S − B`` degrees of freedom) and its own item term."""
    y = _table(values)
    labels, levels = _base_groups(y.shape[0], bases)
    seed_values = y.mean(axis=1)
    within, df = _within_base(seed_values, labels, levels)
    out = {}
    for b in levels:
        rows = y[labels == b]
        seed_term = 0.0 if df == 0 else within / rows.shape[0]
        out[b] = Estimate(
            float(rows.mean()), tuple(float(v) for v in rows.mean(axis=1)), seed_term,
            _item_term(rows), df,
        )  # fmt: skip
    return out


def interaction_test(seed_values, bases) -> dict[str, float] | None:
    """Whether the effect differs between bases: the one-way ANOVA of the per-seed effects on
    the base (``scipy.stats.f_oneway``), ``{"F", "df_between", "df_within", "p"}``; None with
    one base, no within-base degree of freedom, or no spread within any base."""
    values = np.asarray(list(seed_values), dtype=np.float64)
    labels, levels = _base_groups(len(values), bases)
    df_within = len(values) - len(levels)
    if len(levels) < 2 or df_within < 1:
        return None
    groups = [values[labels == b] for b in levels]
    within, _ = _within_base(values, labels, levels)
    if within == 0.0:  # no spread inside any base (tied discrete values): no reference to test
        return None
    f, p = (float(x) for x in stats.f_oneway(*groups))
    return {"F": f, "df_between": len(levels) - 1, "df_within": df_within, "p": p}


def bonferroni_alpha(family_size: int, alpha: float = ALPHA) -> float:
    """The per-claim level of simultaneous intervals over a family of ``family_size``."""
    if family_size < 1:
        raise ValueError(f"family_size must be at least 1; got {family_size}")
    return alpha / family_size


def summary(values: np.ndarray, bases=None, alpha: float = ALPHA) -> dict[str, Any]:
    """A (seeds, items) table's mean, ``1 − alpha`` interval and per-seed means
    (``claims.json``'s form of a variant's own value); with ``bases``, :func:`based_estimate`."""
    estimate = crossed_estimate(values) if bases is None else based_estimate(values, bases)
    return {
        "mean": estimate.mean,
        "interval": list(estimate.interval(alpha)),
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
