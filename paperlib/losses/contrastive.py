"""Symmetric InfoNCE (CLIP's contrastive loss) over the batch gathered from every rank.

The one place where image/text logits become a contrastive loss; HiMo-CLIP's MoLo
(``docs/methods/himo-clip.md#molo``) and the hyperbolic losses
(``docs/methods/argent.md#meru``, ``docs/methods/argent.md#hycoclip``) call these. The gather
with gradient is ``paperlib.collectives.all_gather_with_grad``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.collectives import all_gather_with_grad
from paperlib.losses.options import require_unit_interval
from paperlib.tensor_checks import require_features, require_finite_result


@dataclass
class InfoNCEConfig:
    """The ``loss`` section of method ``clip``: global InfoNCE (:func:`infonce_loss`)."""

    label_smoothing: float = 0.0

    def __post_init__(self) -> None:
        require_unit_interval("label_smoothing", self.label_smoothing)


def clip_logits(image_features: Tensor, text_features: Tensor, logit_scale: Tensor) -> Tensor:
    """``exp(logit_scale) * v @ u.T`` for (batch, dim) features; rows index images."""
    require_features(same_shape=False, image_features=image_features, text_features=text_features)
    return logit_scale.exp() * image_features @ text_features.T


def symmetric_cross_entropy(logits_per_image: Tensor, label_smoothing: float = 0.0) -> Tensor:
    """½[CE(L, diag) + CE(Lᵀ, diag)] for a square (batch, batch) logit matrix
    (``docs/methods/himo-clip.md#molo``)."""
    shape = tuple(logits_per_image.shape)
    if len(shape) != 2 or shape[0] != shape[1] or shape[0] == 0:
        raise ValueError(f"logits must be square (batch, batch) with batch >= 1; got {shape}")
    labels = torch.arange(logits_per_image.shape[0], device=logits_per_image.device)
    loss_i = F.cross_entropy(logits_per_image, labels, label_smoothing=label_smoothing)
    loss_t = F.cross_entropy(logits_per_image.T, labels, label_smoothing=label_smoothing)
    return 0.5 * (loss_i + loss_t)


def infonce_loss(
    image_features: Tensor,
    text_features: Tensor,
    logit_scale: Tensor,
    label_smoothing: float = 0.0,
) -> Tensor:
    """CLIP's symmetric InfoNCE on (batch, dim) L2-normalised features.

    Under ``torch.distributed`` the features of all ranks are gathered with gradient and
    every rank computes the loss on the global batch (open_clip's ``ClipLoss`` with
    ``gather_with_grad=True, local_loss=False``).
    """
    require_features(image_features=image_features, text_features=text_features)
    loss = gathered_infonce(image_features, text_features, logit_scale, label_smoothing)
    return require_finite_result(
        loss, image_features=image_features, text_features=text_features, logit_scale=logit_scale
    )


def gathered_infonce(
    image_features: Tensor, text_features: Tensor, logit_scale: Tensor, label_smoothing: float
) -> Tensor:
    """:func:`infonce_loss`'s value without its checks on the result, for a loss that checks
    its own inputs and total (Long-CLIP's two terms)."""
    image_all = all_gather_with_grad(image_features)
    text_all = all_gather_with_grad(text_features)
    return symmetric_cross_entropy(clip_logits(image_all, text_all, logit_scale), label_smoothing)
