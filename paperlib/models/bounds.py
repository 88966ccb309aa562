"""The bounds of every learned scalar of the models, and the one check of a stored value
against them.

A model keeps its scalars in range by clamping them: ``HyperbolicCLIP.clamp_parameters_`` keeps
α ≤ 0, ``log c`` within ``[log(c₀/10), log(10·c₀)]`` and the logit scale ≤ ln 100; a
Euclidean run that clamps its logit scale keeps it in ``[0, ln 100]``. A value read from a
checkpoint or a base goes through :func:`check_scalars` wherever it is read (training from a
base, resuming, evaluating, a released checkpoint): one that is not finite is refused, one
outside its bounds is named in a :class:`ScalarBoundsWarning` (the model trains and evaluates
at the bound it is clamped to). Each message names the file, the key, the value and the
bounds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

from torch import Tensor

# a value stored at its bound may lie past it by float32 rounding (MERU stores 4.6052 for ln 100)
TOLERANCE = 1e-4

Bounds = Mapping[str, tuple[float, float]]


class ScalarBoundsWarning(UserWarning):
    """A stored scalar lies outside the bounds its model clamps it to."""


LOG_CURVATURE_KEYS = ("log_curv", "curv")  # the names a stored log c goes by (MERU: curv)


def _shown(key: str, value: float) -> str:
    """``key = value``, a stored ``log c`` with the curvature itself."""
    if key.rsplit(".", 1)[-1] not in LOG_CURVATURE_KEYS:
        return f"{key} = {value:.6g}"
    curvature = f" (curvature {math.exp(value):.6g})" if value < 700 else ""
    return f"{key} (log c) = {value:.6g}{curvature}"


def check_scalars(values: Mapping[str, float | Tensor], bounds: Bounds, source: str) -> None:
    """Check each of ``values`` (key → a number or a one-element tensor) that ``bounds``
    names: ValueError naming ``source``, the key, the value and the bounds when it is not
    finite, a :class:`ScalarBoundsWarning` when it lies outside its bounds."""
    for key, (low, high) in bounds.items():
        if key not in values:
            continue
        raw = values[key]
        if isinstance(raw, Tensor) and raw.numel() != 1:
            raise ValueError(
                f"{source}: {key} holds shape {tuple(raw.shape)}; expected one value within "
                f"[{low:.6g}, {high:.6g}]"
            )
        value = float(raw.detach().double().reshape(-1)[0]) if isinstance(raw, Tensor) else raw
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(
                f"{source}: {_shown(key, value)}; expected a finite value within "
                f"[{low:.6g}, {high:.6g}]"
            )
        if value < low - TOLERANCE or value > high + TOLERANCE:
            clamped = min(max(value, low), high)
            warnings.warn(
                f"{source}: {_shown(key, value)} lies outside [{low:.6g}, {high:.6g}]; the "
                f"model clamps it to {clamped:.6g}, and trains and evaluates from there",
                ScalarBoundsWarning,
                stacklevel=2,
            )
