"""Zero-shot classification from precomputed features (CLIP_benchmark metric names).

Class embeddings from per-class prompt features (n_classes, n_prompts, dim):

* Euclidean CLIP: mean of the L2-normalised prompt features, renormalised;
* hyperbolic (MERU, ``docs/methods/argent.md#meru``): average in the tangent space at the
  origin, then ``exp_map0``. ``space="lifted"`` takes features already on the hyperboloid (the output of
  ``HyperbolicCLIP.encode_text``) and averages their ``log_map0``; ``space="tangent"`` takes
  the pre-exp features (open_clip features × exp(α_text)), as MERU's own code does. The two
  agree exactly (``log_map0 ∘ exp_map0 = id``) unless ``exp_map0`` clamped a norm.

Scores: cosine (Euclidean) or ``−d_L`` (hyperbolic). Ties
(``docs/methods/conventions.md#ties``): a class scoring as high as the label counts above it,
so a tie is a miss. With one class every image is right (acc 1); NaN or inf inputs, no
class, prompt or image are refused by name.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from sklearn.metrics import balanced_accuracy_score
from torch import Tensor

from paperlib.geometry.lorentz import exp_map0, log_map0
from paperlib.metrics.scores import Geometry, require_finite, require_rows
from paperlib.metrics.scores import pairwise_scores as zero_shot_scores  # images × classes

__all__ = ["class_embeddings", "label_ranks", "zero_shot_metrics", "zero_shot_scores"]


def class_embeddings(
    prompt_features: Tensor,
    geometry: Geometry,
    curv: float | Tensor | None = None,
    space: Literal["lifted", "tangent"] = "lifted",
) -> Tensor:
    """(n_classes, n_prompts, dim) prompt features → (n_classes, dim) class embeddings."""
    require_finite(prompt_features=prompt_features)
    if prompt_features.ndim != 3:
        raise ValueError(
            f"prompt_features must be (n_classes, n_prompts, dim); got {tuple(prompt_features.shape)}"
        )
    if 0 in prompt_features.shape:
        raise ValueError(
            "prompt_features must hold at least one class, prompt and dim; got shape "
            f"{tuple(prompt_features.shape)}"
        )
    if geometry == "euclidean":
        return F.normalize(F.normalize(prompt_features, dim=-1).mean(1), dim=-1)
    if geometry != "hyperbolic":
        raise ValueError(f"geometry must be 'euclidean' or 'hyperbolic'; got {geometry!r}")
    if curv is None:
        raise ValueError("geometry='hyperbolic' needs curv")
    if space == "lifted":
        tangent = log_map0(prompt_features, curv)
    elif space == "tangent":
        tangent = prompt_features.float()
    else:
        raise ValueError(f"space must be 'lifted' or 'tangent'; got {space!r}")
    return exp_map0(tangent.mean(1), curv)


def zero_shot_metrics(scores: Tensor, labels: Tensor) -> dict[str, float]:
    """``acc1``, ``acc5`` (top-k hit rate; k capped at n_classes) and
    ``mean_per_class_recall`` (sklearn's balanced accuracy, as CLIP_benchmark)."""
    require_finite(scores=scores, labels=labels)
    if scores.ndim != 2 or labels.shape != (scores.shape[0],):
        raise ValueError(
            f"scores must be (n_images, n_classes) and labels (n_images,); got "
            f"{tuple(scores.shape)} and {tuple(labels.shape)}"
        )
    if scores.shape[0] == 0 or scores.shape[1] == 0:
        raise ValueError(
            f"zero-shot metrics need at least one image and one class; got scores "
            f"{tuple(scores.shape)}"
        )
    n_classes = scores.shape[1]
    fractional = labels.is_floating_point() and bool((labels != labels.round()).any())
    if fractional or labels.is_complex() or labels.dtype == torch.bool:
        raise ValueError(f"labels must be integer class indices; got {labels.dtype} values")
    outside = (labels < 0) | (labels >= n_classes)
    if bool(outside.any()):
        raise ValueError(
            f"labels must lie in [0, {n_classes}) (the classes scored); {int(outside.sum())} "
            f"do not, e.g. {int(labels[outside][0])}"
        )
    labels = labels.to(scores.device).long()
    rank, pred = label_ranks(scores, labels)
    return {
        "acc1": float((rank < 1).float().mean()),
        "acc5": float((rank < min(5, n_classes)).float().mean()),
        "mean_per_class_recall": float(
            balanced_accuracy_score(labels.cpu().numpy(), pred.cpu().numpy())
        ),
    }


def label_ranks(scores: Tensor, labels: Tensor) -> tuple[Tensor, Tensor]:
    """Per image: the rank of its label (how many other classes score ``>=`` it: a tie is a
    miss, as in retrieval) and the prediction (its label when ranked first, else the
    best-scoring other class, the lowest index among equals)."""
    require_finite(scores=scores)
    if scores.ndim != 2 or labels.shape != (scores.shape[0],):
        raise ValueError(
            f"scores must be (n_images, n_classes) and labels (n_images,); got "
            f"{tuple(scores.shape)} and {tuple(labels.shape)}"
        )
    require_rows("scores", scores.shape, 1, "image")
    true = F.one_hot(labels, scores.shape[1]).bool()
    own = scores.gather(1, labels[:, None])
    rank = ((scores >= own) & ~true).sum(dim=1)
    other = scores.masked_fill(true, float("-inf")).argmax(dim=1)
    return rank, torch.where(rank == 0, labels, other)
