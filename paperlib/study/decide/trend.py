"""The scale trend of a headline claim: its effect at other batch sizes and training lengths.

The papers fine-tune at batch 1024 for epochs; the CPU study at batch 64 for a few hundred
steps. Whether a verdict is a property of the method or of that regime shows in how the
effect moves with scale: the study trains every headline arm again on the sweep seeds at each
batch factor and length factor of its scale (``study.plan.design.trend_runs``). Each axis holds one
thing fixed (:data:`HELD_FIXED`): the batch axis the samples seen (so its updates fall as the
batch grows), the length axis the batch size;
and :func:`claim_trend` gives, per axis, the effect at each setting (the headline setting
included) with its 95 % interval where the seed variance is known, HiDe's mean component
count where the arm logs it, and :func:`trend_reading`. A point whose arms forgot their base,
did not learn, or sit at chance is shown but does not count. The reading rests on one slope per
axis: the effect's change per doubling of the factor, fitted to every point that counts on
every seed (``study.decide.trend_slope``), with its interval at the trend slopes' level of the
study's one error statement (``study.decide.error_control``): "moves toward the paper's side" only
where that interval lies on the
paper's side of 0, and "not estimable" where the points leave too few degrees of freedom for
an interval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paperlib.study.plan.claims import better_sign

AXES = ("batch", "length")
# what each axis holds fixed while its factor changes (``study.plan.design.trend_runs``)
HELD_FIXED = {
    "batch": "samples seen: the steps fall as the batch grows, so the number of updates "
    "changes with it",
    "length": "the batch size: samples seen and updates grow together",
}


def trend_settings(scale: Any) -> dict[str, tuple[float, ...]]:
    """Per axis, the factors of the headline setting the scale trains (1 = the headline)."""
    return {
        "batch": tuple(sorted({1.0, *scale.trend_batch_factors})),
        "length": tuple(sorted({1.0, *scale.trend_length_factors})),
    }


def claim_trend(
    settings: dict[str, tuple[float, ...]],
    label: Callable[[str, str, float], str],
    variant: str,
    baseline: str,
    effect_at: Callable[[str, str], dict[str, Any] | None],
    better: str,
    slope_of: Callable[[list[tuple[float, tuple[str, str]]]], dict[str, Any] | None],
) -> dict[str, Any] | None:
    """Per axis, ``[{"factor", **effect_at(variant', baseline')}]`` over the settings (``label``
    names an arm at a setting; factor 1 is the arm itself); per axis the ``slope`` of the
    effect over ``log2`` of the factor, fitted to the settings that :func:`counts`
    (``slope_of([(factor, arms), ...])``), and :func:`trend_reading`; None when the scale
    trains no trend."""
    if not any(len(factors) > 1 for factors in settings.values()):
        return None
    out: dict[str, Any] = {"slope": {}, "reading": {}, "held_fixed": dict(HELD_FIXED)}
    for axis in AXES:
        points, arms = [], {}
        for factor in settings[axis]:
            arms[factor] = tuple(
                v if factor == 1.0 else label(v, axis, factor) for v in (variant, baseline)
            )
            points.append({"factor": factor, **(effect_at(*arms[factor]) or {"effect": None})})
        out[axis] = points
        found = [p for p in points if counts(p)]
        slope = slope_of([(p["factor"], arms[p["factor"]]) for p in found]) if found else None
        out["slope"][axis] = slope
        out["reading"][axis] = trend_reading(points, axis, better, slope)
    return out


def counts(point: dict[str, Any]) -> bool:
    """Whether a trend point enters the reading: it has an effect and its arms kept their base
    and learned (no ``untestable``)."""
    return point.get("effect") is not None and not point.get("untestable")


def trend_reading(
    points: list[dict[str, Any]], axis: str, better: str, slope: dict[str, Any] | None
) -> str:
    """In words, from the points that :func:`counts` and the ``slope`` of the effect over
    ``log2`` of the factor: the settings it rests on, the slope per doubling with its interval,
    and whether it is established on the paper's side (``better``), on the other, or not at
    all; "not estimable" where the slope has no interval (no value is given without one)."""
    found = [p for p in points if counts(p)]
    left_out = [f"{p['factor']:g}×" for p in points if p.get("untestable")]
    out = f" ({', '.join(left_out)} left out: an arm forgot its base or did not learn)"
    out = out if left_out else ""
    if len(found) < 2:
        return (
            f"not measured: {len(found)} of {len(points)} {axis} settings have an effect that "
            f"counts{out}"
        )
    first, last = found[0], found[-1]
    where = f"{len(found)} settings from {first['factor']:g}× to {last['factor']:g}× the {axis}"
    if slope is None or slope.get("interval") is None:
        df = 0 if slope is None else slope.get("df", 0)
        return f"not estimable: {df} residual degree(s) of freedom for the slope ({where}){out}"
    low, high = slope["interval"]
    where += (
        f"; slope {slope['slope']:+.3g} per doubling on seeds "
        f"{', '.join(str(s) for s in slope['seeds'])}, {1 - slope['alpha']:.3%} interval "
        f"[{low:+.3g}, {high:+.3g}]"
    )
    if low > 0 or high < 0:
        side = "toward" if better_sign(better) * slope["slope"] > 0 else "away from"
        return f"moves {side} the paper's side as the {axis} grows{_fixed(axis)} ({where}){out}"
    return (
        f"no change established as the {axis} grows{_fixed(axis)} ({where}; the interval holds "
        f"0){out}"
    )


def _fixed(axis: str) -> str:
    return " at equal samples seen" if axis == "batch" else ""
