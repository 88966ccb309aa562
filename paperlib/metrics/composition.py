"""COLA-style accuracy for paired compositional queries (COLA multi-object,
``docs/methods/himo-clip.md#cola``).

A query is two images and two captions whose attributes/objects are swapped; caption 0
describes image 0 and caption 1 image 1. With ``s[i, c]`` the cosine of image i and
caption c, the protocols are:

- ``"text_to_image"`` (default; COLA's official multi-object accuracy): each caption
  picks its own image, ``s[0,0] > s[1,0]`` and ``s[1,1] > s[0,1]``;
- ``"image_to_text"``: each image picks its own caption, ``s[0,0] > s[0,1]`` and
  ``s[1,1] > s[1,0]``;
- ``"group"``: both of the above.

Inequalities are strict: a tie is a miss. The paper reports "top-1 accuracy" without
more detail; we use COLA's own rule. No query, or NaN or inf features or scores, are refused
by name.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from paperlib.metrics.scores import require_finite, require_rows

PROTOCOLS = ("text_to_image", "image_to_text", "group")


def pair_scores(image_features: Tensor, text_features: Tensor) -> Tensor:
    """(num_queries, 2, 2) cosines ``s[q, i, c]`` from (num_queries, 2, dim) features."""
    require_finite(image_features=image_features, text_features=text_features)
    if image_features.ndim != 3 or image_features.shape[1] != 2:
        raise ValueError(
            f"image_features must be (num_queries, 2, dim); got {tuple(image_features.shape)}"
        )
    if text_features.shape != image_features.shape:
        raise ValueError(
            f"text_features must match image_features {tuple(image_features.shape)}; got "
            f"{tuple(text_features.shape)}"
        )
    require_rows("image_features", image_features.shape, 1, "query")
    img = F.normalize(image_features.float(), dim=-1)
    txt = F.normalize(text_features.float(), dim=-1)
    return img @ txt.transpose(1, 2)


def cola_correct(scores: Tensor, protocol: str = "text_to_image") -> Tensor:
    """Per-query correctness (num_queries,) bool from (num_queries, 2, 2) scores ``s[q, i, c]``."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}; got {protocol!r}")
    require_finite(scores=scores)
    if scores.ndim != 3 or scores.shape[1:] != (2, 2):
        raise ValueError(f"scores must be (num_queries, 2, 2); got {tuple(scores.shape)}")
    require_rows("scores", scores.shape, 1, "query")
    s00, s01, s10, s11 = scores[:, 0, 0], scores[:, 0, 1], scores[:, 1, 0], scores[:, 1, 1]
    text_ok = (s00 > s10) & (s11 > s01)
    image_ok = (s00 > s01) & (s11 > s10)
    return {"text_to_image": text_ok, "image_to_text": image_ok, "group": text_ok & image_ok}[
        protocol
    ]


def cola_accuracy(
    image_features: Tensor, text_features: Tensor, protocol: str = "text_to_image"
) -> float:
    """Fraction of correct queries; features (num_queries, 2, dim), caption c matches image c."""
    return float(cola_correct(pair_scores(image_features, text_features), protocol).float().mean())
