"""Aperture-failure diagnostics per batch (ARGENT's motivation,
``docs/methods/argent.md#aperture-failure``; the half aperture,
``docs/methods/conventions.md#half-aperture``).

MERU's half aperture ``asin(2K/(√c‖x‖))`` is undefined for parents with
``‖x‖ < 2K/√c``; there it saturates at π/2 with zero gradient. These statistics show how
much of a batch sits in that regime. All values are floats, keys are flat
(``"<name>/<stat>"``, ``"<parent>-><child>/<stat>"``) for JSON-lines logging.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor

from paperlib.geometry.lorentz import aperture_radius, exterior_angle, half_aperture
from paperlib.losses.batch import ENTAILMENT_PAIRS
from paperlib.metrics.scores import require_finite
from paperlib.tensor_checks import require_features

__all__ = ["DEFAULT_PAIRS", "aperture_diagnostics"]

#: HyCoCLIP/ARGENT's (parent, child) pairs (``docs/methods/argent.md#hycoclip``).
DEFAULT_PAIRS = tuple((parent, child) for parent, child, _ in ENTAILMENT_PAIRS)


@torch.no_grad()
def aperture_diagnostics(
    features: Mapping[str, Tensor],
    curv: float | Tensor,
    pairs: Sequence[tuple[str, str]] | None = None,
    min_radius: float = 0.1,
) -> dict[str, float]:
    """Norm statistics per feature set and cone statistics per (parent, child) pair.

    Args:
        features: name → (batch, dim) space components, one entry per modality and level
            (e.g. ``image, text, box_image, box_text``).
        curv: curvature c.
        pairs: (parent, child) names; default: those of :data:`DEFAULT_PAIRS` present.
        min_radius: K of the aperture formula.

    Per name: ``norm_mean, norm_std, norm_min, norm_max`` and ``frac_inside_radius``
    (fraction with ‖x‖ < 2K/√c). Per pair: ``frac_parent_inside_radius``, ``angle_mean``,
    ``aperture_mean`` (radians) and ``frac_outside_cone`` (φ > aperture). Plus
    ``aperture_radius`` itself. A batch of one has ``norm_std`` 0; an empty batch, NaN or inf
    features, a curvature or ``min_radius`` that is not finite and > 0 are refused by name.
    """
    require_features(same_shape=False, **features)
    require_finite(**features)
    if not (math.isfinite(min_radius) and min_radius > 0):
        raise ValueError(f"min_radius (K) must be finite and > 0; got {min_radius}")
    curv_value = float(curv)
    radius = float(aperture_radius(curv_value, min_radius))
    out: dict[str, float] = {"aperture_radius": radius}
    for name, x in features.items():
        norms = x.float().norm(dim=-1)
        out[f"{name}/norm_mean"] = float(norms.mean())
        out[f"{name}/norm_std"] = float(norms.std()) if norms.numel() > 1 else 0.0
        out[f"{name}/norm_min"] = float(norms.min())
        out[f"{name}/norm_max"] = float(norms.max())
        out[f"{name}/frac_inside_radius"] = float((norms < radius).float().mean())
    if pairs is None:
        pairs = [(p, c) for p, c in DEFAULT_PAIRS if p in features and c in features]
    for parent_name, child_name in pairs:
        for name in (parent_name, child_name):
            if name not in features:
                raise KeyError(f"pair ({parent_name}, {child_name}): no features named {name!r}")
        parent, child = features[parent_name], features[child_name]
        angle = exterior_angle(parent, child, curv_value)
        aperture = half_aperture(parent, curv_value, min_radius=min_radius)
        key = f"{parent_name}->{child_name}"
        out[f"{key}/frac_parent_inside_radius"] = out[f"{parent_name}/frac_inside_radius"]
        out[f"{key}/angle_mean"] = float(angle.mean())
        out[f"{key}/aperture_mean"] = float(aperture.mean())
        out[f"{key}/frac_outside_cone"] = float((angle > aperture).float().mean())
    return out
