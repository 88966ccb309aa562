"""Contrastive losses on hyperbolic (−Lorentz distance) logits over the global batch.

MERU's ½(CE_img + CE_txt) (``docs/methods/argent.md#meru``) and HyCoCLIP's four terms: full
pairs plus box crops and box phrases against the full captions and images
(``docs/methods/argent.md#hycoclip``). Both read a :class:`~paperlib.losses.batch.HyperbolicBatch`
(Lorentz space components (batch, dim), curvature, log logit scale).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.losses.batch import HyperbolicBatch
from paperlib.losses.contrastive import symmetric_cross_entropy
from paperlib.models.hyperbolic import hyperbolic_logits

__all__ = ["hycoclip_contrastive_loss", "hyperbolic_contrastive_loss"]


def _cross_entropy(logits: Tensor) -> Tensor:
    """Row-wise CE with the diagonal as targets; logits may be (B_local, B_global)."""
    labels = torch.arange(logits.shape[0], device=logits.device)
    return F.cross_entropy(logits, labels)


def hyperbolic_contrastive_loss(batch: HyperbolicBatch) -> Tensor:
    """MERU contrastive, ½(CE_img + CE_txt) on −distance logits over the global batch."""
    b = batch.gathered()
    return symmetric_cross_entropy(hyperbolic_logits(b.image, b.text, b.curv, b.logit_scale))


def hycoclip_contrastive_loss(batch: HyperbolicBatch) -> Tensor:
    """¼[CE(img→txt) + CE(txt→img) + CE(box_img→txts) + CE(box_txt→imgs)] over the global
    batch (``docs/methods/argent.md#hycoclip``)."""
    b = batch.require_boxes().gathered()
    full = 2.0 * symmetric_cross_entropy(hyperbolic_logits(b.image, b.text, b.curv, b.logit_scale))
    boxes = _cross_entropy(hyperbolic_logits(b.box_image, b.text, b.curv, b.logit_scale))
    boxes = boxes + _cross_entropy(hyperbolic_logits(b.box_text, b.image, b.curv, b.logit_scale))
    return 0.25 * (full + boxes)
