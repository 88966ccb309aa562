"""The scale trend of a headline claim: its effect at other batch sizes and training lengths.

The papers fine-tune at batch 1024 for epochs; the CPU study at batch 64 for a few hundred
steps. Whether a verdict is a property of the method or of that regime shows in how the
effect moves with scale: the study trains every headline arm again on the sweep seeds at each
batch factor (equal samples seen) and length factor of its scale (``study.design.trend_runs``),
and :func:`claim_trend` gives, per axis, the effect at each setting (the headline setting
included) with its 95 % interval where the seed variance is known, HiDe's mean component
count where the arm logs it, and :func:`trend_reading`. A point whose arms forgot their base,
did not learn, or sit at chance is shown but does not count. The reading rests on the change of the effect from the smallest to the largest
setting that counts, paired on the seeds both keep, with its interval at Bonferroni's level
over the family's claims and both axes: "moves toward the paper's side" only where that
interval lies on the paper's side of 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

AXES = ("batch", "length")


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
    change_between: Callable[[tuple[str, str], tuple[str, str]], dict[str, Any] | None],
) -> dict[str, Any] | None:
    """Per axis, ``[{"factor", **effect_at(variant', baseline')}]`` over the settings (``label``
    names an arm at a setting; factor 1 is the arm itself); per axis the ``change`` of the
    effect from the smallest to the largest setting that :func:`counts`
    (``change_between(first_arms, last_arms)``) and :func:`trend_reading`; None when the scale
    trains no trend."""
    if not any(len(factors) > 1 for factors in settings.values()):
        return None
    out: dict[str, Any] = {"change": {}, "reading": {}}
    for axis in AXES:
        points, arms = [], {}
        for factor in settings[axis]:
            arms[factor] = tuple(
                v if factor == 1.0 else label(v, axis, factor) for v in (variant, baseline)
            )
            points.append({"factor": factor, **(effect_at(*arms[factor]) or {"effect": None})})
        out[axis] = points
        found = [p for p in points if counts(p)]
        change = None
        if len(found) >= 2:
            change = change_between(arms[found[0]["factor"]], arms[found[-1]["factor"]])
        out["change"][axis] = change
        out["reading"][axis] = trend_reading(points, axis, better, change)
    return out


def counts(point: dict[str, Any]) -> bool:
    """Whether a trend point enters the reading: it has an effect and its arms kept their base
    and learned (no ``untestable``)."""
    return point.get("effect") is not None and not point.get("untestable")


def trend_reading(
    points: list[dict[str, Any]], axis: str, better: str, change: dict[str, Any] | None
) -> str:
    """In words, from the points that :func:`counts` and the ``change`` of the effect from the
    smallest to the largest of them: the effect at both ends, the change with its interval,
    and whether the change is established on the paper's side (``better``), on the other, or
    not at all (its interval holds 0, or the seed variance is unknown)."""
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
    where = (
        f"{first['effect']:+.3g} at {first['factor']:g}× the {axis} to "
        f"{last['effect']:+.3g} at {last['factor']:g}×"
    )
    if change is None:
        return f"not measured: no seed common to {first['factor']:g}× and {last['factor']:g}×{out}"
    if change.get("interval") is None:
        return f"seed variance unknown: no reading of the change ({where}){out}"
    low, high = change["interval"]
    seeds = ", ".join(str(s) for s in change["seeds"])
    where += (
        f"; change on seeds {seeds} {change['change']:+.3g}, "
        f"{1 - change['alpha']:.2%} interval [{low:+.3g}, {high:+.3g}]"
    )
    sign = 1.0 if better == "higher" else -1.0
    if low > 0 or high < 0:
        side = "toward" if sign * change["change"] > 0 else "away from"
        return f"moves {side} the paper's side as the {axis} grows ({where}){out}"
    return f"no change established as the {axis} grows ({where}; the interval holds 0){out}"
