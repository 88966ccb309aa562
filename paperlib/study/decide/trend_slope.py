"""A claim's trend with scale as one slope: the effect's change per doubling of a factor.

The study trains a claim's two arms again at several batch sizes or training lengths, on the
same seeds (``study.plan.design.trend_runs``). Each (seed, setting) pair is its own training run,
evaluated on the shared test items, so its per-item effect row ``e[s, k, i]`` (variant −
baseline) has a run mean ``ē[s, k]``. The trend is the slope ``β`` of the line

    ē[s, k] = α_s + β · log2(f_k) + ε[s, k],   ε ~ (0, σ²) independent over runs,

with one intercept per seed (it absorbs the seed's and its base's level) and one slope shared by
every seed, fitted by least squares to every point that counts (:func:`slope_estimate`).
Its variance has two parts, kept apart as :class:`~paperlib.study.decide.inference.Estimate` keeps
them:

- the runs' part ``σ² / Σ_s S_xx(s)``, with ``σ²`` the residual variance about the fitted
  lines and ``Σ_s K_s − S − 1`` degrees of freedom (``K_s``: seed s's points, S seeds;
  ``S_xx(s) = Σ_k (x_k − x̄_s)²``, ``x = log2 f``), read against t;
- the test items' part ``Var_i(β_i) / N``, from the per-item slopes ``β_i`` of the same fit
  (their mean is ``β``), read against the normal. The run × item noise sits in both parts, so
  the interval errs wide, never narrow.

A seed with fewer than two points has no slope of its own and is left out. Fewer than
:data:`~paperlib.study.decide.verdicts.MIN_SEED_DF` residual degrees of freedom: no estimate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from paperlib.study.decide.inference import Estimate
from paperlib.study.decide.verdicts import MIN_SEED_DF


def _seed_design(points: Sequence[tuple[float, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One seed's centred ``log2`` factors and its (points, items) effect rows."""
    x = np.log2(np.asarray([f for f, _ in points], dtype=np.float64))
    rows = np.stack([np.asarray(r, dtype=np.float64) for _, r in points])
    return x - x.mean(), rows


def slope_df(points: Mapping[int, Sequence[tuple[float, np.ndarray]]]) -> tuple[list[int], int]:
    """The seeds that enter the slope (two points or more) and its residual degrees of freedom,
    ``Σ_s K_s − S − 1`` (0 where that is not positive)."""
    seeds = sorted(s for s, p in points.items() if len(p) >= 2)
    return seeds, max(0, sum(len(points[s]) for s in seeds) - len(seeds) - 1)


def slope_estimate(
    points: Mapping[int, Sequence[tuple[float, np.ndarray]]],
) -> Estimate | None:
    """The shared slope over ``log2`` of the factor (module docstring) from ``{seed: [(factor,
    per-item effect row), ...]}``; ``seed_values`` are the seeds' own slopes. None with fewer
    than :data:`MIN_SEED_DF` residual degrees of freedom or no spread of the factor."""
    fits = [_seed_design(p) for p in points.values() if len(p) >= 2]
    if not fits:
        return None
    items = {rows.shape[1] for _, rows in fits}
    if len(items) != 1:
        raise ValueError(f"every point must hold the same test items; got sizes {sorted(items)}")
    sxx = sum(float(x @ x) for x, _ in fits)
    _, df = slope_df(points)
    if sxx == 0.0 or df < MIN_SEED_DF:
        return None
    per_item = sum(x @ rows for x, rows in fits) / sxx  # β_i, one per test item
    slope = float(per_item.mean())
    residual = 0.0
    own = []
    for x, rows in fits:
        means = rows.mean(axis=1)
        centred = means - means.mean()
        residual += float(((centred - slope * x) ** 2).sum())
        own.append(float(x @ means / (x @ x)) if x @ x > 0 else math.nan)
    n = per_item.shape[0]
    item_term = float(per_item.var(ddof=1)) / n if n > 1 else 0.0
    return Estimate(slope, tuple(own), residual / df / sxx, item_term, df)


def slope_by_least_squares(points: Mapping[int, Sequence[tuple[float, np.ndarray]]]) -> dict:
    """The plain formula beside :func:`slope_estimate`: ordinary least squares of the run means
    on ``log2`` of the factor with one dummy column per seed (``numpy.linalg.lstsq``); returns
    the slope, its classical variance and the residual degrees of freedom."""
    seeds = [s for s, p in points.items() if len(p) >= 2]
    rows, y = [], []
    for j, seed in enumerate(seeds):
        for factor, effect in points[seed]:
            dummies = [1.0 if i == j else 0.0 for i in range(len(seeds))]
            rows.append([math.log2(factor), *dummies])
            y.append(float(np.mean(effect)))
    design, target = np.asarray(rows), np.asarray(y)
    coef, _, _, _ = np.linalg.lstsq(design, target, rcond=None)
    df = len(y) - design.shape[1]
    sigma2 = float(((target - design @ coef) ** 2).sum()) / df
    covariance = sigma2 * np.linalg.inv(design.T @ design)
    return {"slope": float(coef[0]), "variance": float(covariance[0, 0]), "df": df}
