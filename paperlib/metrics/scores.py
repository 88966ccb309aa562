"""One image-by-text score rule for every metric: cosine for Euclidean CLIP, ``−d_L`` for
hyperbolic models (MERU, ``docs/methods/argent.md#meru``; larger is more similar in both), and the checks every
metric applies to its inputs first: torch tensors (:func:`require_finite` names a NumPy array
or a list), finite values (:func:`require_finite_values` for NumPy arrays), a known geometry,
features of one width, enough rows to measure anything (:func:`require_rows`), counts that
are whole numbers (:func:`require_count`). Each refusal names the argument and what was
expected."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.geometry.lorentz import paired_dist, pairwise_dist
from paperlib.tensor_checks import require_features, require_same_device

__all__ = [
    "Geometry",
    "NonFiniteError",
    "check_geometry",
    "paired_scores",
    "pairwise_scores",
    "require_count",
    "require_finite",
    "require_finite_values",
    "require_rows",
]

Geometry = Literal["euclidean", "hyperbolic"]
GEOMETRIES = ("euclidean", "hyperbolic")


class NonFiniteError(ValueError):
    """A metric was handed NaN or infinite values (a model with non-finite weights): refused,
    since NaN scores would otherwise rank every positive first."""


def check_geometry(geometry: str) -> None:
    """ValueError unless ``geometry`` is one of :data:`GEOMETRIES` (a typo would otherwise
    fall through to the other rule)."""
    if geometry not in GEOMETRIES:
        raise ValueError(f"geometry must be one of {GEOMETRIES}; got {geometry!r}")


def require_finite(**tensors: Tensor) -> None:
    """ValueError naming a given value that is not a torch tensor (a NumPy array, a list);
    :class:`NonFiniteError` naming each given tensor that holds a NaN or inf."""
    for name, tensor in tensors.items():
        if not isinstance(tensor, Tensor):
            raise ValueError(
                f"{name} must be a torch.Tensor; got {type(tensor).__name__} (convert it with "
                "torch.as_tensor)"
            )
        bad = int((~torch.isfinite(tensor)).sum())
        if bad:
            raise NonFiniteError(
                f"{name} holds {bad} non-finite value(s) (NaN or inf) out of {tensor.numel()}: "
                "the model's features are not usable (non-finite weights?)"
            )


def require_finite_values(name: str, values: Any) -> np.ndarray:
    """``values`` (an array, a tensor or a list of numbers) as a float64 NumPy array;
    :class:`NonFiniteError` naming ``name`` when one is NaN or inf."""
    array = np.asarray(values.detach().cpu() if isinstance(values, Tensor) else values)
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers; got dtype {array.dtype}")
    array = array.astype(np.float64)
    bad = int((~np.isfinite(array)).sum())
    if bad:
        raise NonFiniteError(f"{name} holds {bad} non-finite value(s) (NaN or inf) of {array.size}")
    return array


def require_rows(name: str, shape: Sequence[int], at_least: int, what: str) -> None:
    """ValueError naming ``name`` unless its first dimension (of ``shape``) holds at least
    ``at_least`` ``what`` (e.g. ``"images"``)."""
    if len(shape) == 0 or shape[0] < at_least:
        raise ValueError(f"{name} must hold at least {at_least} {what}; got shape {tuple(shape)}")


def require_count(name: str, value: Any, at_least: int = 1) -> int:
    """``value`` when it is an int (not a bool) of at least ``at_least``; ValueError naming
    ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < at_least:
        raise ValueError(f"{name} must be an integer >= {at_least}; got {value!r}")
    return int(value)


def pairwise_scores(
    image_features: Tensor,
    text_features: Tensor,
    geometry: Geometry,
    curv: float | Tensor | None = None,
) -> Tensor:
    """(N, dim) × (M, dim) → (N, M): cosine of the L2-normalised rows, or ``−d_L``."""
    check_geometry(geometry)
    require_features(
        same_shape=False,
        allow_empty=True,
        image_features=image_features,
        text_features=text_features,
    )
    require_finite(image_features=image_features, text_features=text_features)
    if geometry == "euclidean":
        return F.normalize(image_features, dim=-1) @ F.normalize(text_features, dim=-1).T
    if curv is None:
        raise ValueError("geometry='hyperbolic' needs curv")
    return -pairwise_dist(image_features, text_features, curv)


def paired_scores(
    geometry: Geometry, curv: float | Tensor | None, image: Tensor, text: Tensor
) -> Tensor:
    """Score of row i of ``image`` with row i of ``text`` (..., dim) -> (...), same rule."""
    require_same_device(image_features=image, text_features=text)
    require_finite(image_features=image, text_features=text)
    check_geometry(geometry)
    if image.shape[-1:] != text.shape[-1:]:
        raise ValueError(
            f"image and text features must share their feature dim; got {tuple(image.shape)} "
            f"and {tuple(text.shape)}"
        )
    if geometry == "hyperbolic" and curv is None:
        raise ValueError("geometry='hyperbolic' needs curv")
    if geometry == "euclidean":
        return F.cosine_similarity(image.float(), text.float(), dim=-1)
    return -paired_dist(image, text, curv)
