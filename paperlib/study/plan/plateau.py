"""Whether a run stopped improving: the plateau criterion on its held-out validation curve
(``docs/methods/conventions.md#verdicts``).

A comparison counts only once both models have learned what their schedule can teach them.
For a study fine-tune the criterion (:func:`plateau_check` with ``smallest``) reads the run's
*primary* metric alone (the one its recipe reads) and asks whether the curve still rises,
against its own noise, by more than that metric's smallest effect of interest δ over the last
fifth of the schedule:

- fit a least-squares line to the validation values against the step over the last
  :data:`WINDOW` of the schedule (steps ≥ 0.6 T, ``T`` the last step; at least the last
  :data:`MIN_POINTS` points, all of them when the curve has fewer) and read its slope as the
  *gain* it implies over the last fifth, ``slope · T / 5``;
- its standard error is the larger of the residual scatter about the line (with ``n − 2``
  degrees of freedom, read as noise only where there are at least :data:`MIN_RESIDUAL_DF` of
  them: on 3 or 4 points the scatter is mostly the curve's bend) and the binomial noise of each
  point's rate over the curve's ``n`` held-out items (:func:`rate_standard_error`), the points
  taken as independent; the 95 % interval uses t with the residual degrees of freedom where the
  scatter is the larger, else the normal;
- the run is **still rising** when the interval lies wholly above 0 (a rise established
  against the noise) *and* the gain exceeds δ. Without ``smallest`` (the pre-trained bases,
  which answer to no claim) the first condition alone decides.

Two points (``v(T) − v(0.8 T)``) read the rise off one difference: the items a run gets right
change from one checkpoint to the next even on the same held-out set, so at δ that difference
is only about 1.5 of its own standard deviations, and a run passed or failed on one draw. The
slope uses every point of the window and sets the rise against the noise the curve shows.

What errs wide, toward "flat" (a run kept): the values at successive checkpoints share their
items and are positively correlated, so treating them as independent overstates the binomial
part; and taking the larger of the two variances. A run
that fails is flagged and left out of the claims, as a collapsed one is, and its seed's other
arm with it (the pairing of the claim's seeds is kept). A cosine schedule flattens its own end,
so the study also runs a schedule check (twice the steps, ``study.plan.design.longer``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from paperlib.engine.validation import validation_records

TAIL = 0.2  # the last fifth of the schedule: the span the gain is stated over
WINDOW = 0.4  # the share of the schedule, at its end, whose points the slope is fitted to
MIN_POINTS = 3  # the fewest points fitted where the curve has them
# the residual scatter is read as noise only with this many degrees of freedom: on 3 or 4 points
# it is mostly the curve's bend, and t with 1 or 2 of them would leave no rise established
MIN_RESIDUAL_DF = 3
LEVEL = 0.95  # the interval's level
# rates are counts over items: a gain equal to δ (e.g. 0.61 − 0.60) must not read as past it
FLOAT_SLACK = 1e-9


@dataclass(frozen=True)
class Plateau:
    """The criterion's inputs and outcome for one metric of one run."""

    metric: str
    start: tuple[int, float]  # (step, value): the first point of the fitted window
    end: tuple[int, float]  # (step, value) at the last step
    gain: float  # the fitted slope times the last fifth of the schedule
    standard_error: float  # of the gain
    threshold: float = math.nan  # δ: the largest gain that still counts as flat (NaN: none)
    interval: tuple[float, float] = (math.nan, math.nan)  # the gain's 95 % interval
    df: int | None = None  # t's degrees of freedom (None: the normal, binomial noise)
    points: int = 0  # the validation points fitted

    @property
    def established(self) -> bool:
        """The gain's interval lies wholly above 0."""
        return self.interval[0] > 0

    @property
    def reached(self) -> bool:
        if math.isnan(self.threshold):
            return not self.established
        return not (self.established and self.gain > self.threshold + FLOAT_SLACK)

    def reason(self) -> str | None:
        """None when reached, else why not, in words."""
        if self.reached:
            return None
        low, high = self.interval
        past = "above 0" if math.isnan(self.threshold) else f"beyond δ = {self.threshold:g}"
        return (
            f"{self.metric} still rising: +{self.gain:.4f} over the last fifth (95 % interval "
            f"{low:+.4f} to {high:+.4f}; the slope over steps {self.start[0]}–{self.end[0]}, "
            f"{self.points} points), {past}"
        )


def fit_window(points: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """The points the slope is fitted to: those at steps ≥ (1 − :data:`WINDOW`) of the last,
    at least the last :data:`MIN_POINTS` (all points when there are fewer)."""
    points = sorted(points)
    last = points[-1][0]
    inside = [p for p in points if p[0] >= (1 - WINDOW) * last * (1 - FLOAT_SLACK)]
    return inside if len(inside) >= MIN_POINTS else points[-MIN_POINTS:]


@dataclass(frozen=True)
class SlopeFit:
    """A least-squares line of values on steps: its slope, the slope's variance from the
    residual scatter (NaN without residual degrees of freedom) and from known per-point
    variances, and the residual degrees of freedom."""

    slope: float
    residual_variance: float
    binomial_variance: float
    df: int


def slope_fit(steps, values, point_variances) -> SlopeFit:
    """:class:`SlopeFit` of ``values`` on ``steps``: ``b = Σ w_j y_j`` with
    ``w_j = (x_j − x̄) / Sxx``; ``Var(b) = s² / Sxx`` (``s²`` the residual mean square, ``n − 2``
    degrees of freedom) and ``Σ w_j² σ_j²`` (independent points of variance ``σ_j²``)."""
    x, y = np.asarray(steps, dtype=np.float64), np.asarray(values, dtype=np.float64)
    centred = x - x.mean()
    sxx = float(centred @ centred)
    if x.size < 2 or sxx == 0.0:
        raise ValueError(f"a slope needs at least 2 distinct steps; got {x.tolist()}")
    weights = centred / sxx
    slope = float(weights @ y)
    df = x.size - 2
    residuals = y - y.mean() - slope * centred
    residual = float(residuals @ residuals) / df / sxx if df > 0 else math.nan
    binomial = float(weights**2 @ np.asarray(point_variances, dtype=np.float64))
    return SlopeFit(slope, residual, binomial, df)


def gain_interval(
    fit: SlopeFit, span: float
) -> tuple[float, float, tuple[float, float], int | None]:
    """The gain ``slope · span``, its standard error (the larger noise of ``fit``), its
    :data:`LEVEL` interval and the t degrees of freedom (None: normal)."""
    gain = fit.slope * span
    use_residual = fit.df >= MIN_RESIDUAL_DF and fit.residual_variance > fit.binomial_variance
    variance = fit.residual_variance if use_residual else fit.binomial_variance
    se = math.sqrt(variance) * span
    tail = (1 - LEVEL) / 2
    quantile = stats.t.isf(tail, fit.df) if use_residual else stats.norm.isf(tail)
    half = float(quantile) * se
    return gain, se, (gain - half, gain + half), fit.df if use_residual else None


def plateau_check(
    points: Sequence[tuple[int, float]], n_items: int, metric: str, smallest: float | None = None
) -> Plateau:
    """:class:`Plateau` of one validation curve ``[(step, value), ...]`` (a rate in [0, 1])
    over ``n_items`` held-out items: the last-fifth gain of its fitted slope (module
    docstring), judged against ``smallest`` (δ) where given, else against 0 alone."""
    if len(points) < 2:
        raise ValueError(f"{metric}: a plateau needs at least 2 validation points; got {points}")
    window = fit_window(points)
    steps, values = zip(*window)
    noise = [rate_standard_error(v, n_items) ** 2 for v in values]
    try:
        fit = slope_fit(steps, values, noise)
    except ValueError as error:
        raise ValueError(f"{metric}: {error}") from None
    gain, se, interval, df = gain_interval(fit, TAIL * window[-1][0])
    threshold = math.nan if smallest is None else float(smallest)
    return Plateau(
        metric, tuple(window[0]), tuple(window[-1]), gain, se, threshold, interval, df,
        len(window),
    )  # fmt: skip


def rate_standard_error(value: float, n_items: int) -> float:
    """The standard error of a rate ``value`` over ``n_items`` items, at least one item."""
    if n_items < 1:
        raise ValueError(f"n_items must be positive; got {n_items}")
    return max(math.sqrt(max(value * (1 - value), 0.0) / n_items), 1.0 / n_items)


def curves_of(records: Sequence[dict]) -> dict[str, list[tuple[int, float]]]:
    """``{metric: [(step, value), ...]}`` of a training log's validation records."""
    curves: dict[str, list[tuple[int, float]]] = {}
    for record in validation_records(records):
        for metric, value in record["val"].items():
            curves.setdefault(metric, []).append((record["step"], float(value)))
    return curves


def curve_items(records: Sequence[dict]) -> int:
    """The number of held-out items a log's validation curve was measured on: its records'
    ``val_size`` (a named error when a record lacks it or the records disagree)."""
    sizes = {r.get("val_size") for r in validation_records(records)}
    if None in sizes or len(sizes) != 1 or not all(isinstance(n, int) and n > 0 for n in sizes):
        raise ValueError(
            f"validation records must each give one positive integer val_size; got {sorted(map(str, sizes))}"
        )
    return sizes.pop()


def run_plateaus(
    records: Sequence[dict], n_items: int | None = None, smallest: dict[str, float] | None = None
) -> dict[str, Plateau]:
    """:func:`plateau_check` of every validation curve of a log with at least two points,
    over ``n_items`` (default: the curve's own :func:`curve_items`); with ``smallest``
    (``{metric: δ}``) only those metrics, each against its δ."""
    curves = {m: p for m, p in curves_of(records).items() if len(p) > 1}
    if smallest is not None:
        curves = {m: p for m, p in curves.items() if m in smallest}
    if curves and n_items is None:
        n_items = curve_items(records)
    return {
        metric: plateau_check(points, n_items, metric, (smallest or {}).get(metric))
        for metric, points in curves.items()
    }
