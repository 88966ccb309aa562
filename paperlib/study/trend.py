"""The scale trend of a headline claim: its effect at other batch sizes and training lengths.

The papers fine-tune at batch 1024 for epochs; the CPU study at batch 64 for a few hundred
steps. Whether a verdict is a property of the method or of that regime shows in how the
effect moves with scale: the study trains every headline arm again on the sweep seeds at each
batch factor (equal samples seen) and length factor of its scale (``study.design.trend_runs``),
and :func:`claim_trend` gives, per axis, the effect at each setting (the headline setting
included, on the same seeds) with its 95 % interval, HiDe's mean component count where the arm
logs it, and :func:`trend_reading`: whether the effect moves toward the paper's side as the
axis grows, computed from the points.
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
) -> dict[str, Any] | None:
    """Per axis, ``[{"factor", **effect_at(variant', baseline')}]`` over the settings (``label``
    names an arm at a setting; factor 1 is the arm itself), with :func:`trend_reading`; None
    when the scale trains no trend."""
    if not any(len(factors) > 1 for factors in settings.values()):
        return None
    out: dict[str, Any] = {}
    for axis in AXES:
        points = []
        for factor in settings[axis]:
            arms = [v if factor == 1.0 else label(v, axis, factor) for v in (variant, baseline)]
            found = effect_at(*arms)
            points.append({"factor": factor, **(found or {"effect": None})})
        out[axis] = points
    out["reading"] = {axis: trend_reading(out[axis], axis, better) for axis in AXES}
    return out


def trend_reading(points: list[dict[str, Any]], axis: str, better: str) -> str:
    """In words, from the points: the effect at the smallest and the largest setting that have
    one, and whether it moves toward the paper's side (``better``) as the ``axis`` grows."""
    found = [p for p in points if p.get("effect") is not None]
    if len(found) < 2:
        return f"not measured: {len(found)} of {len(points)} {axis} settings have an effect"
    first, last = found[0], found[-1]
    sign = 1.0 if better == "higher" else -1.0
    change = sign * (last["effect"] - first["effect"])
    where = (
        f"{first['effect']:+.3g} at {first['factor']:g}× the {axis} to "
        f"{last['effect']:+.3g} at {last['factor']:g}×"
    )
    if change > 0:
        return f"moves toward the paper's side as the {axis} grows ({where})"
    if change < 0:
        return f"moves away from the paper's side as the {axis} grows ({where})"
    return f"does not move with the {axis} ({where})"
