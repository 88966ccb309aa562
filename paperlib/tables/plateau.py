"""Whether a run stopped improving: the plateau criterion on its held-out validation curve.

A comparison counts only once both models have learned what their schedule can teach them.
For a study fine-tune the criterion (:func:`plateau_check` with ``smallest``) reads the run's
*primary* metric alone (the one its recipe reads) and asks whether it still rose by more
than that metric's smallest effect of interest δ over the last fifth of the schedule:

    v(T) − v(0.8 T) ≤ δ

(``v``: the rate at the logged validation steps, ``T`` the last step, the point at 0.8 T the
logged step nearest it). Both points are measured on the same held-out items, so the
difference is paired: it carries no between-set sampling noise, only the run's own change on
those items, and a change smaller than any effect a claim is judged by leaves no verdict
exposed. A run that fails is flagged and left out of the claims, as a collapsed one is, and
its seed's other arm with it (the pairing of the claim's seeds is kept).

Without ``smallest`` (the pre-trained bases, which answer to no claim) the gain is judged
against one standard error of the final rate over the curve's own ``n`` held-out items
(:func:`rate_standard_error`). A cosine schedule flattens its own end, so the study also runs
a schedule check (twice the steps, ``study.design.longer``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from paperlib.engine.validation import validation_records

TAIL = 0.2  # the last fifth of the schedule
# rates are counts over items: a gain equal to δ (e.g. 0.61 − 0.60) must not read as past it
FLOAT_SLACK = 1e-9


@dataclass(frozen=True)
class Plateau:
    """The criterion's inputs and outcome for one metric of one run."""

    metric: str
    start: tuple[int, float]  # (step, value) at the start of the last fifth
    end: tuple[int, float]  # (step, value) at the last step
    gain: float
    standard_error: float
    threshold: float = math.nan  # δ: the largest gain that still counts as flat (NaN: the SE)

    @property
    def reached(self) -> bool:
        if math.isnan(self.threshold):
            return self.gain < self.standard_error
        return self.gain <= self.threshold + FLOAT_SLACK

    def reason(self) -> str | None:
        """None when reached, else why not, in words."""
        if self.reached:
            return None
        if not math.isnan(self.threshold):
            return (
                f"{self.metric} still rising: +{self.gain:.4f} from step {self.start[0]} to "
                f"{self.end[0]} (the last fifth), beyond δ = {self.threshold:g}"
            )
        return (
            f"{self.metric} still rising: +{self.gain:.4f} from step {self.start[0]} to "
            f"{self.end[0]} (the last fifth), ≥ its standard error {self.standard_error:.4f}"
        )


def plateau_check(
    points: Sequence[tuple[int, float]], n_items: int, metric: str, smallest: float | None = None
) -> Plateau:
    """:class:`Plateau` of one validation curve ``[(step, value), ...]`` (a rate in [0, 1]),
    its gain judged against ``smallest`` (δ: a rise counts only past it) or, without one,
    against the standard error over ``n_items`` test items."""
    points = sorted(points)
    if len(points) < 2:
        raise ValueError(f"{metric}: a plateau needs at least 2 validation points; got {points}")
    last_step, last = points[-1]
    mark = (1 - TAIL) * last_step
    start = min(points[:-1], key=lambda p: (abs(p[0] - mark), -p[0]))
    se = rate_standard_error(last, n_items)
    threshold = math.nan if smallest is None else float(smallest)
    return Plateau(metric, start, (last_step, last), last - start[1], se, threshold)


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
    against the standard error over ``n_items`` (default: the curve's own :func:`curve_items`);
    with ``smallest`` (``{metric: δ}``) only those metrics, each against its δ."""
    curves = {m: p for m, p in curves_of(records).items() if len(p) > 1}
    if smallest is not None:
        curves = {m: p for m, p in curves.items() if m in smallest}
    if curves and n_items is None:
        n_items = curve_items(records)
    return {
        metric: plateau_check(points, n_items, metric, (smallest or {}).get(metric))
        for metric, points in curves.items()
    }
