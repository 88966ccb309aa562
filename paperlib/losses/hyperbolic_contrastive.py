"""Contrastive losses on hyperbolic (−Lorentz distance) logits over the global batch.

SPEC §2.2 (MERU: ½(CE_img + CE_txt)) and §2.3 (HyCoCLIP: full pairs plus box crops and box
phrases against the full captions and images). Features are Lorentz space components
(batch, dim); ``logit_scale`` is in log space.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.collectives import all_gather_with_grad
from paperlib.losses.contrastive import symmetric_cross_entropy
from paperlib.models.hyperbolic import hyperbolic_logits

__all__ = ["hycoclip_contrastive_loss", "hyperbolic_contrastive_loss"]


def _cross_entropy(logits: Tensor) -> Tensor:
    """Row-wise CE with the diagonal as targets; logits may be (B_local, B_global)."""
    labels = torch.arange(logits.shape[0], device=logits.device)
    return F.cross_entropy(logits, labels)


def hyperbolic_contrastive_loss(
    image: Tensor, text: Tensor, curv: float | Tensor, logit_scale: Tensor
) -> Tensor:
    """MERU contrastive, ½(CE_img + CE_txt) on −distance logits over the global batch."""
    image, text = all_gather_with_grad(image), all_gather_with_grad(text)
    return symmetric_cross_entropy(hyperbolic_logits(image, text, curv, logit_scale))


def hycoclip_contrastive_loss(
    image: Tensor,
    text: Tensor,
    box_image: Tensor,
    box_text: Tensor,
    curv: float | Tensor,
    logit_scale: Tensor,
) -> Tensor:
    """¼[CE(img→txt) + CE(txt→img) + CE(box_img→txts) + CE(box_txt→imgs)], SPEC §2.3."""
    image, text = all_gather_with_grad(image), all_gather_with_grad(text)
    box_image, box_text = all_gather_with_grad(box_image), all_gather_with_grad(box_text)
    full = 2.0 * symmetric_cross_entropy(hyperbolic_logits(image, text, curv, logit_scale))
    boxes = _cross_entropy(hyperbolic_logits(box_image, text, curv, logit_scale))
    boxes = boxes + _cross_entropy(hyperbolic_logits(box_text, image, curv, logit_scale))
    return 0.25 * (full + boxes)


# ------------------------------------------------------------------ entailment
