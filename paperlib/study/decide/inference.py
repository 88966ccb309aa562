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
``B`` pre-trained bases (seed ``s`` from base ``b(s)``, ``n_b`` seeds from base ``b``). The
bases are fixed levels, not more seeds, and the items are sampled, so a base × item interaction
``g`` is random:

    y[s, i] = μ + β_b + a_s + b_i + g_{b,i} + e_si,   g ~ (0, σ_g²),   b = b(s).

The effect ``θ = μ + mean_b β_b`` is estimated by the mean of the per-base means, which is the
mean over items of the base-weighted item means ``c_i = (1/B) Σ_b (1/n_b) Σ_{s∈b} y_si``.
With ``W = Σ_b 1 / (B² n_b)``:

    Var(θ̂) = W σ_a² + (σ_b² + σ_g²/B) / N + W σ_e² / N.

- *Seed term*: within base ``b`` a seed mean deviates from its base's mean by
  ``(a_s − ā_b) + (ē_s· − ē_b··)`` (``b_i`` and ``g_{b,i}`` are shared by the base's seeds), so
  the pooled within-base variance of the seed means (``S − B`` degrees of freedom) estimates
  ``σ_a² + σ_e²/N``; times ``W`` it is the first and last terms.
- *Item term* (``_item_term``): ``c_i − c̄`` holds ``b_i + ḡ_i`` and
  ``(1/B) Σ_b ē_{b,i}`` (the seed effects cancel), so ``E[Var_i(c_i)] = σ_b² + σ_g²/B + W σ_e²``
  (ddof 1). Within base ``b`` the table is crossed with item effect ``b_i + g_{b,i}``, so the
  pooled within-base residual mean square (``_within_base_residual``)

      MS_wr = Σ_{s,i} (y_si − ȳ_s· − ȳ_{b(s),i} + ȳ_{b(s)··})² / ((S − B)(N − 1))

  is unbiased for ``σ_e²``, and ``max(0, Var_i(c_i) − W · MS_wr) / N`` estimates the middle
  term. Its ``W σ_e² / N`` is the part the seed term already carries: subtracting it counts
  ``σ_e²`` once. The plain two-way ANOVA's ``(MS_item − MS_resid) / (S N)`` would instead
  take part of ``g`` for residual and subtract it: with ``n`` seeds on each base it leaves out
  the share ``(B − 1) / (S − 1)`` of ``σ_g² / (B N)`` (a third with 2 + 2 seeds).

With one base, ``Var_i(c_i) = MS_item / S`` and ``MS_wr = MS_resid``: the item term is the
crossed model's and :func:`based_estimate` is :func:`crossed_estimate`. With one seed per base
(``S = B``) ``σ_e²`` is not identified: the item term is ``Var_i(c_i) / N``, which also holds
``W σ_e² / N`` (conservative), and the seed variance is unknown (``seed_df == 0``).

:func:`interaction_test` asks whether the effect differs between bases (a one-way ANOVA of the
per-seed effects on the base, ``F(B − 1, S − B)``), and :func:`per_base_estimates` gives each
base's own effect with the pooled within-base variance.

Holm's adjusted p-values and the error statement the verdicts' levels come from are
:mod:`~paperlib.study.decide.error_control`'s; the design notes that read these terms to plan
seeds are :mod:`~paperlib.study.decide.design_notes`'s.
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
    estimated with S − 1 degrees of freedom, or ``df``) and ``item_term`` (σ_b²/N; with bases,
    (σ_b² + σ_g²/B)/N; estimated from N − 1 item means: taken as known)."""

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


def seed_weight(per_base_counts) -> float:
    """``W = Σ_b 1 / (B² n_b)``: the variance of the mean of ``B`` base means, each over
    ``n_b`` seeds, per unit variance of one seed's mean."""
    counts = [int(n) for n in per_base_counts]
    if not counts or min(counts) < 1:
        raise ValueError(f"per_base_counts must be positive counts; got {per_base_counts}")
    return sum(1.0 / n for n in counts) / len(counts) ** 2


def _base_item_means(y: np.ndarray, labels: np.ndarray, levels: list) -> np.ndarray:
    """``c_i = (1/B) Σ_b (1/n_b) Σ_{s∈b} y_si``: each item's mean of its per-base means."""
    return np.mean([y[labels == b].mean(axis=0) for b in levels], axis=0)


def _within_base_residual(y: np.ndarray, labels: np.ndarray, levels: list) -> tuple[float, int]:
    """``MS_wr``, the pooled seed × item residual mean square within bases, and its degrees of
    freedom ``(S − B)(N − 1)``: ``Σ (y_si − ȳ_s· − ȳ_{b(s),i} + ȳ_{b(s)··})²`` over them
    (``nan, 0`` when no base has two seeds)."""
    df = (y.shape[0] - len(levels)) * (y.shape[1] - 1)
    if df < 1:
        return math.nan, 0
    total = 0.0
    for b in levels:
        rows = y[labels == b]
        resid = rows - rows.mean(axis=1, keepdims=True) - rows.mean(axis=0) + rows.mean()
        total += float((resid**2).sum())
    return total / df, df


def _item_term(y: np.ndarray, labels: np.ndarray, levels: list) -> float:
    """The item term of the mean of base means (module docstring):
    ``max(0, Var_i(c_i) − W · MS_wr) / N``; ``Var_i(c_i) / N`` when ``S = B`` (σ_e² not
    identified: conservative). One base: ``(MS_item − MS_resid) / (S N)``."""
    spread = float(_base_item_means(y, labels, levels).var(ddof=1))
    resid, df = _within_base_residual(y, labels, levels)
    if df == 0:
        return spread / y.shape[1]
    weight = seed_weight([int((labels == b).sum()) for b in levels])
    return max(0.0, spread - weight * resid) / y.shape[1]


def based_estimate(values: np.ndarray, bases) -> Estimate:
    """:class:`Estimate` of an (S, N) table whose seeds come from fixed pre-trained ``bases``
    (one label per seed; module docstring): the mean of the per-base means, the pooled
    within-base seed variance with ``S − B`` degrees of freedom (``seed_df == 0`` when no base
    has two seeds, or when the seeds tie within every base, as a discrete metric's can: the seed
    variance is then unknown, not zero) and the item term of the module docstring."""
    y = _table(values)
    labels, levels = _base_groups(y.shape[0], bases)
    seed_values = y.mean(axis=1)
    base_means = [float(seed_values[labels == b].mean()) for b in levels]
    within, df = _within_base(seed_values, labels, levels)
    if within == 0.0:  # seeds tied within every base (discrete values): no variance estimate
        df = 0
    weight = seed_weight([int((labels == b).sum()) for b in levels])
    seed_term = 0.0 if df == 0 else within * weight
    mean = float(np.mean(base_means))
    item_term = _item_term(y, labels, levels)
    return Estimate(mean, tuple(float(v) for v in seed_values), seed_term, item_term, df)


def per_base_estimates(values: np.ndarray, bases) -> dict:
    """Each base's own :class:`Estimate`: the mean of its seeds, the *pooled* within-base
    variance over its seed count (``S − B`` degrees of freedom) and its own item term,
    ``_item_term`` of its rows alone (one base: item effect ``b_i + g_{b,i}``)."""
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
            _item_term(rows, labels[labels == b], [b]), df,
        )  # fmt: skip
    return out


def base_difference(values: np.ndarray, bases) -> Estimate:
    """The difference of the two bases' effects, ``mean(base a) − mean(base b)`` (the first
    base in sorted order minus the second), as an :class:`Estimate` with the pooled within-base
    seed variance (``S − 2`` degrees of freedom) and the item term of the per-item difference of
    the two bases' means: :func:`based_estimate` of the table with base a's rows doubled and
    base b's doubled and negated, whose mean of base means is that difference."""
    y = _table(values)
    labels, levels = _base_groups(y.shape[0], bases)
    if len(levels) != 2:
        raise ValueError(f"a difference of bases needs exactly 2 bases; got {levels}")
    signs = np.where(labels == levels[0], 2.0, -2.0)
    return based_estimate(y * signs[:, None], labels)


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


def summary(values: np.ndarray, bases=None, alpha: float = ALPHA) -> dict[str, Any]:
    """A (seeds, items) table's mean, ``1 − alpha`` interval and per-seed means
    (``claims.json``'s form of a variant's own value); with ``bases``, :func:`based_estimate`."""
    estimate = crossed_estimate(values) if bases is None else based_estimate(values, bases)
    return {
        "mean": estimate.mean,
        "interval": list(estimate.interval(alpha)),
        "per_seed": list(estimate.seed_values),
    }
