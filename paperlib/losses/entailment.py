"""Hyperbolic losses: MERU entailment, HyCoCLIP, ARGENT (contrastive terms:
``losses.hyperbolic_contrastive``).

SPEC §2.2 (MERU), §2.3 (HyCoCLIP), §2.4 (ARGENT). Features are Lorentz space components
(batch, dim); ``curv`` is c (curvature −c); ``logit_scale`` is in log space (as open_clip's
parameter). HyCoCLIP/ARGENT batches hold four aligned feature sets: full image, full
caption, box image, box text. Entailment pairs are (parent, child):

=========================  ===============  =================
pair                       kind             HyCoCLIP's η
=========================  ===============  =================
text → image               inter-modality   η_inter = 0.7
box_text → box_image       inter-modality   η_inter = 0.7
box_image → image          intra-modality   η_intra = 1.2
box_text → text            intra-modality   η_intra = 1.2
=========================  ===============  =================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.geometry.lorentz import exterior_angle, half_aperture, paired_dist
from paperlib.losses.hyperbolic_contrastive import (
    hycoclip_contrastive_loss,
    hyperbolic_contrastive_loss,
)

__all__ = [
    "LossTerms",
    "adaent_loss",
    "adaent_weight",
    "argent_loss",
    "entailment_loss",
    "hycoclip_entailment_loss",
    "hycoclip_loss",
    "meru_loss",
    "norm_regularizer",
]

Weights = Literal["intra", "all", "none"]


@dataclass
class LossTerms:
    """A total loss and its parts (unweighted), for backward and for logging."""

    total: Tensor
    contrastive: Tensor
    entailment: Tensor
    regularizer: Tensor

    def as_dict(self) -> dict[str, float]:
        """Floats for JSON-lines logging."""
        return {k: float(v.detach()) for k, v in vars(self).items()}


def entailment_loss(
    parent: Tensor, child: Tensor, curv: float | Tensor, eta: float = 1.0, min_radius: float = 0.1
) -> Tensor:
    """MERU/HyCoCLIP cone loss ``mean(max(0, φ(parent, child) − η·aperture(parent)))``."""
    angle = exterior_angle(parent, child, curv)
    aperture = half_aperture(parent, curv, min_radius=min_radius)
    return F.relu(angle - eta * aperture).mean()


def meru_loss(
    image: Tensor,
    text: Tensor,
    curv: float | Tensor,
    logit_scale: Tensor,
    entailment_weight: float = 0.2,
) -> LossTerms:
    """MERU: contrastive + 0.2 · entailment(text → image), SPEC §2.2."""
    contrastive = hyperbolic_contrastive_loss(image, text, curv, logit_scale)
    entailment = entailment_loss(text, image, curv)
    return LossTerms(
        total=contrastive + entailment_weight * entailment,
        contrastive=contrastive,
        entailment=entailment,
        regularizer=torch.zeros_like(contrastive),
    )


#: HyCoCLIP/ARGENT's (parent, child, is_intra) entailment pairs, SPEC §2.3.
ENTAILMENT_PAIRS = (
    ("text", "image", False),
    ("box_text", "box_image", False),
    ("box_image", "image", True),
    ("box_text", "text", True),
)


def _pairs(image: Tensor, text: Tensor, box_image: Tensor, box_text: Tensor):
    """The four (parent, child, is_intra) feature pairs of :data:`ENTAILMENT_PAIRS`."""
    named = {"image": image, "text": text, "box_image": box_image, "box_text": box_text}
    return [(named[parent], named[child], intra) for parent, child, intra in ENTAILMENT_PAIRS]


def hycoclip_entailment_loss(
    image: Tensor,
    text: Tensor,
    box_image: Tensor,
    box_text: Tensor,
    curv: float | Tensor,
    eta_inter: float = 0.7,
    eta_intra: float = 1.2,
) -> Tensor:
    """½ · (sum of the four cone losses), η_inter for inter- and η_intra for intra-pairs."""
    terms = [
        entailment_loss(parent, child, curv, eta=eta_intra if intra else eta_inter)
        for parent, child, intra in _pairs(image, text, box_image, box_text)
    ]
    return 0.5 * sum(terms)


def hycoclip_loss(
    image: Tensor,
    text: Tensor,
    box_image: Tensor,
    box_text: Tensor,
    curv: float | Tensor,
    logit_scale: Tensor,
    entailment_weight: float = 0.2,
    eta_inter: float = 0.7,
    eta_intra: float = 1.2,
) -> LossTerms:
    """HyCoCLIP total: 4-term contrastive + 0.2 · 4-pair entailment, SPEC §2.3."""
    contrastive = hycoclip_contrastive_loss(image, text, box_image, box_text, curv, logit_scale)
    entailment = hycoclip_entailment_loss(
        image, text, box_image, box_text, curv, eta_inter, eta_intra
    )
    return LossTerms(
        total=contrastive + entailment_weight * entailment,
        contrastive=contrastive,
        entailment=entailment,
        regularizer=torch.zeros_like(contrastive),
    )


# ------------------------------------------------------------------ ARGENT


def adaent_weight(
    parent: Tensor, child: Tensor, curv: float | Tensor, intra: bool, detach: bool = True
) -> Tensor:
    """ARGENT's per-pair weight: ``h = 1 − exp(−d_L(parent, child))`` for intra-modality
    pairs, 1 for inter-modality pairs (batch,). ``detach`` (default, our choice): h carries
    no gradient; ``-expm1`` keeps it accurate as d → 0."""
    if not intra:
        return torch.ones(parent.shape[0], device=parent.device, dtype=torch.float32)
    h = -torch.expm1(-paired_dist(parent, child, curv))
    return h.detach() if detach else h


def adaent_loss(
    parent: Tensor,
    child: Tensor,
    curv: float | Tensor,
    weight: Tensor | None = None,
    beta: float = 0.1,
    placement: Literal["outside", "inside"] = "outside",
    normalize: Literal["mean", "weighted"] = "mean",
) -> Tensor:
    """AdaEnt on one pair set: Huber-smoothed exterior angle φ(parent, child), SPEC §2.4.

    The paper's eq. (7) is unreadable; the unknowns are options (defaults are our choice):

    * ``beta``: Huber threshold in radians; the penalty is ``smooth_l1(φ, 0, beta)``
      (``φ²/(2β)`` below β, ``φ − β/2`` above: slope 1 like MERU's hinge on the angle);
    * ``placement``: ``"outside"`` → ``h · Huber(φ)``; ``"inside"`` → ``Huber(h · φ)``;
    * ``normalize``: ``"mean"`` → mean over pairs; ``"weighted"`` → ``Σ h·ℓ / Σ h``
      (only with ``placement="outside"``).

    ``weight`` (batch,) is h; None means 1 (inter-modality pairs).
    """
    angle = exterior_angle(parent, child, curv)
    h = torch.ones_like(angle) if weight is None else weight.to(angle.dtype)
    if placement == "inside":
        if normalize != "mean":
            raise ValueError("normalize='weighted' needs placement='outside'")
        penalty = F.smooth_l1_loss(h * angle, torch.zeros_like(angle), beta=beta, reduction="none")
        return penalty.mean()
    if placement != "outside":
        raise ValueError(f"placement must be 'outside' or 'inside'; got {placement!r}")
    penalty = h * F.smooth_l1_loss(angle, torch.zeros_like(angle), beta=beta, reduction="none")
    if normalize == "mean":
        return penalty.mean()
    if normalize == "weighted":
        return penalty.sum() / h.sum().clamp_min(torch.finfo(h.dtype).tiny)
    raise ValueError(f"normalize must be 'mean' or 'weighted'; got {normalize!r}")


def norm_regularizer(*features: Tensor) -> Tensor:
    """ARGENT's ``L_Reg = mean(‖x‖² − log‖x‖)`` over all given (batch, dim) space parts;
    minimum at ‖x‖ = 1/√2. ‖x‖ is floored at sqrt(tiny): finite value and gradient at 0."""
    x = torch.cat([f.float() for f in features])
    sq = (x * x).sum(-1).clamp_min(torch.finfo(x.dtype).tiny)
    return (sq - 0.5 * torch.log(sq)).mean()


def argent_loss(
    image: Tensor,
    text: Tensor,
    box_image: Tensor,
    box_text: Tensor,
    curv: float | Tensor,
    logit_scale: Tensor,
    gamma1: float = 0.1,
    gamma2: float = 0.1,
    entailment: Literal["adaent", "ent"] = "adaent",
    weights: Weights = "intra",
    regularize: bool = True,
    beta: float = 0.1,
    placement: Literal["outside", "inside"] = "outside",
    normalize: Literal["mean", "weighted"] = "mean",
    detach_weight: bool = True,
    eta_inter: float = 0.7,
    eta_intra: float = 1.2,
) -> LossTerms:
    """ARGENT total ``L_Cont + γ1·L_AdaEnt + γ2·L_Reg``, SPEC §2.4.

    ``L_Cont`` is HyCoCLIP's 4-term contrastive. ``L_AdaEnt`` = ½ · (sum over the four
    pairs), combined like HyCoCLIP's entailment. Ablations: ``entailment="ent"`` uses
    HyCoCLIP's cone loss (η_inter/η_intra) instead; ``weights`` = "intra" (paper), "all"
    (h on every pair) or "none" (h = 1); ``regularize=False`` drops ``L_Reg``. The
    regularizer covers all four feature sets.
    """
    if weights not in ("intra", "all", "none"):
        raise ValueError(f"weights must be 'intra', 'all' or 'none'; got {weights!r}")
    contrastive = hycoclip_contrastive_loss(image, text, box_image, box_text, curv, logit_scale)
    if entailment == "ent":
        ent = hycoclip_entailment_loss(image, text, box_image, box_text, curv, eta_inter, eta_intra)
    elif entailment == "adaent":
        terms = []
        for parent, child, intra in _pairs(image, text, box_image, box_text):
            use_h = weights == "all" or (weights == "intra" and intra)
            h = adaent_weight(parent, child, curv, True, detach_weight) if use_h else None
            terms.append(adaent_loss(parent, child, curv, h, beta, placement, normalize))
        ent = 0.5 * sum(terms)
    else:
        raise ValueError(f"entailment must be 'adaent' or 'ent'; got {entailment!r}")
    if regularize:
        reg = norm_regularizer(image, text, box_image, box_text)
        total = contrastive + gamma1 * ent + gamma2 * reg
    else:  # logged as 0; the total does not carry a zero term
        reg, total = torch.zeros_like(contrastive), contrastive + gamma1 * ent
    return LossTerms(
        total=total,
        contrastive=contrastive,
        entailment=ent,
        regularizer=reg,
    )
