"""Hyperbolic losses: MERU entailment, HyCoCLIP, ARGENT (contrastive terms:
``losses.hyperbolic_contrastive``).

MERU (``docs/methods/argent.md#meru``), HyCoCLIP (``docs/methods/argent.md#hycoclip``) and
ARGENT (``docs/methods/argent.md#argent-objective``). Each total loss reads one
:class:`~paperlib.losses.batch.HyperbolicBatch` (Lorentz space components (batch, dim), the
curvature c of curvature −c, the log logit scale) and its method's config dataclass
(:class:`MERUConfig`, :class:`HyCoCLIPConfig`, :class:`ARGENTConfig`: the ``loss`` section of
a training config). Entailment pairs are (parent, child), ``losses.batch.ENTAILMENT_PAIRS``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.geometry.lorentz import exterior_angle, half_aperture, paired_dist
from paperlib.losses.batch import HyperbolicBatch
from paperlib.losses.hyperbolic_contrastive import (
    hycoclip_contrastive_loss,
    hyperbolic_contrastive_loss,
)
from paperlib.losses.options import require, require_non_negative
from paperlib.tensor_checks import require_features, require_finite_result

__all__ = [
    "ARGENTConfig",
    "HyCoCLIPConfig",
    "LossTerms",
    "MERUConfig",
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


@dataclass
class MERUConfig:
    """The ``loss`` section of method ``meru``: the entailment term's weight (MERU: 0.2)."""

    entail_weight: float = 0.2

    def __post_init__(self) -> None:
        require_non_negative(self, "entail_weight")


@dataclass
class HyCoCLIPConfig:
    """The ``loss`` section of method ``hycoclip``: entailment weight and HyCoCLIP's aperture
    multipliers η for inter- and intra-modality pairs."""

    entail_weight: float = 0.2
    eta_inter: float = 0.7
    eta_intra: float = 1.2

    def __post_init__(self) -> None:
        require_non_negative(self, "entail_weight", "eta_inter", "eta_intra")


@dataclass
class ARGENTConfig:
    """The ``loss`` section of method ``argent`` (``docs/methods/argent.md#argent-objective``).

    ``gamma1``, ``gamma2``: the weights of AdaEnt and of the norm regularizer (paper: 0.1).
    Ablations (the paper's Table 3): ``entailment="ent"`` (HyCoCLIP's cones, with
    ``eta_inter``/``eta_intra``), ``weights`` = "intra" (paper), "all" or "none",
    ``regularize=False``. AdaEnt's unknowns (eq. 7 is unreadable; our defaults,
    :func:`adaent_loss`): ``adaent_beta``, ``adaent_placement``, ``adaent_normalize``, and
    ``detach_weight`` (h carries no gradient)."""

    gamma1: float = 0.1
    gamma2: float = 0.1
    weights: Weights = "intra"
    regularize: bool = True
    entailment: Literal["adaent", "ent"] = "adaent"
    adaent_beta: float = 0.1
    adaent_placement: Literal["outside", "inside"] = "outside"
    adaent_normalize: Literal["mean", "weighted"] = "mean"
    detach_weight: bool = True
    eta_inter: float = 0.7
    eta_intra: float = 1.2

    def __post_init__(self) -> None:
        require_non_negative(self, "gamma1", "gamma2", "eta_inter", "eta_intra")
        require(self.adaent_beta > 0, "adaent_beta", "> 0", self.adaent_beta)
        require(
            self.adaent_normalize == "mean" or self.adaent_placement == "outside",
            "adaent_normalize",
            "'mean' unless adaent_placement is 'outside'",
            repr(self.adaent_normalize),
        )
        for name, choices in (
            ("weights", ("intra", "all", "none")),
            ("entailment", ("adaent", "ent")),
        ):
            value = getattr(self, name)
            require(value in choices, name, f"one of {list(choices)}", repr(value))


def entailment_loss(
    parent: Tensor, child: Tensor, curv: float | Tensor, eta: float = 1.0, min_radius: float = 0.1
) -> Tensor:
    """MERU/HyCoCLIP cone loss ``mean(max(0, φ(parent, child) − η·aperture(parent)))`` on
    (batch, dim) space components."""
    require_features(parent=parent, child=child)
    loss = _cone_loss(parent, child, curv, eta, min_radius)
    return require_finite_result(loss, parent=parent, child=child)


def _cone_loss(
    parent: Tensor, child: Tensor, curv: float | Tensor, eta: float = 1.0, min_radius: float = 0.1
) -> Tensor:
    """:func:`entailment_loss` without its checks (the batch losses check their batch)."""
    angle = exterior_angle(parent, child, curv)
    aperture = half_aperture(parent, curv, min_radius=min_radius)
    return F.relu(angle - eta * aperture).mean()


def meru_loss(batch: HyperbolicBatch, config: MERUConfig | None = None) -> LossTerms:
    """MERU: contrastive + 0.2 · entailment(text → image) (``docs/methods/argent.md#meru``)."""
    config = config or MERUConfig()
    contrastive = hyperbolic_contrastive_loss(batch)
    entailment = _cone_loss(batch.text, batch.image, batch.curv)
    return _weighted_cones(batch, contrastive, entailment, config.entail_weight)


def _weighted_cones(
    batch: HyperbolicBatch, contrastive: Tensor, entailment: Tensor, weight: float
) -> LossTerms:
    """``contrastive + weight · entailment`` with no regularizer (MERU, HyCoCLIP)."""
    return LossTerms(
        total=batch.total(contrastive + weight * entailment),
        contrastive=contrastive,
        entailment=entailment,
        regularizer=torch.zeros_like(contrastive),
    )


def hycoclip_entailment_loss(
    batch: HyperbolicBatch, eta_inter: float = 0.7, eta_intra: float = 1.2
) -> Tensor:
    """½ · (sum of the four cone losses), η_inter for inter- and η_intra for intra-pairs."""
    terms = [
        _cone_loss(parent, child, batch.curv, eta=eta_intra if intra else eta_inter)
        for parent, child, intra in batch.pairs()
    ]
    return 0.5 * sum(terms)


def hycoclip_loss(batch: HyperbolicBatch, config: HyCoCLIPConfig | None = None) -> LossTerms:
    """HyCoCLIP total: 4-term contrastive + 0.2 · 4-pair entailment
    (``docs/methods/argent.md#hycoclip``)."""
    config = config or HyCoCLIPConfig()
    contrastive = hycoclip_contrastive_loss(batch)
    entailment = hycoclip_entailment_loss(batch, config.eta_inter, config.eta_intra)
    return _weighted_cones(batch, contrastive, entailment, config.entail_weight)


# ------------------------------------------------------------------ ARGENT


def adaent_weight(
    parent: Tensor, child: Tensor, curv: float | Tensor, intra: bool, detach: bool = True
) -> Tensor:
    """ARGENT's per-pair weight (``docs/methods/argent.md#adaptive-weights``):
    ``h = 1 − exp(−d_L(parent, child))`` for intra-modality
    pairs, 1 for inter-modality pairs (batch,). ``detach`` (default, our choice): h carries
    no gradient; ``-expm1`` keeps it accurate as d → 0."""
    require_features(parent=parent, child=child)
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
    """AdaEnt on one pair set: Huber-smoothed exterior angle φ(parent, child)
    (``docs/methods/argent.md#adaent``).

    The paper's eq. (7) is unreadable; the unknowns are options (defaults are our choice):

    * ``beta``: Huber threshold in radians; the penalty is ``smooth_l1(φ, 0, beta)``
      (``φ²/(2β)`` below β, ``φ − β/2`` above: slope 1 like MERU's hinge on the angle);
    * ``placement``: ``"outside"`` → ``h · Huber(φ)``; ``"inside"`` → ``Huber(h · φ)``;
    * ``normalize``: ``"mean"`` → mean over pairs; ``"weighted"`` → ``Σ h·ℓ / Σ h``
      (only with ``placement="outside"``).

    ``weight`` (batch,) is h; None means 1 (inter-modality pairs).
    """
    require_features(parent=parent, child=child)
    if weight is not None and tuple(weight.shape) != (parent.shape[0],):
        raise ValueError(
            f"weight must have shape ({parent.shape[0]},), one per pair; got {tuple(weight.shape)}"
        )
    loss = _adaent(parent, child, curv, weight, beta, placement, normalize)
    return require_finite_result(loss, parent=parent, child=child, weight=weight)


def _adaent(
    parent: Tensor,
    child: Tensor,
    curv: float | Tensor,
    weight: Tensor | None,
    beta: float,
    placement: str,
    normalize: str,
) -> Tensor:
    """:func:`adaent_loss` without its checks (the batch losses check their batch)."""
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
    """ARGENT's ``L_Reg = mean(‖x‖² − log‖x‖)`` (``docs/methods/argent.md#norm-regularizer``)
    over all given (batch, dim) space parts;
    minimum at ‖x‖ = 1/√2. ‖x‖ is floored at sqrt(tiny): finite value and gradient at 0."""
    require_features(same_shape=False, **{f"features[{i}]": f for i, f in enumerate(features)})
    if not features:
        raise ValueError("norm_regularizer needs at least one (batch, dim) feature tensor")
    x = torch.cat([f.float() for f in features])
    sq = (x * x).sum(-1).clamp_min(torch.finfo(x.dtype).tiny)
    return (sq - 0.5 * torch.log(sq)).mean()


def argent_entailment_loss(batch: HyperbolicBatch, config: ARGENTConfig) -> Tensor:
    """``L_AdaEnt`` = ½ · (sum over the four pairs of :func:`adaent_loss`), combined like
    HyCoCLIP's entailment; h (:func:`adaent_weight`) on the pairs ``config.weights`` names."""
    terms = []
    for parent, child, intra in batch.pairs():
        use_h = config.weights == "all" or (config.weights == "intra" and intra)
        h = adaent_weight(parent, child, batch.curv, True, config.detach_weight) if use_h else None
        terms.append(
            _adaent(
                parent,
                child,
                batch.curv,
                h,
                config.adaent_beta,
                config.adaent_placement,
                config.adaent_normalize,
            )
        )
    return 0.5 * sum(terms)


def argent_loss(batch: HyperbolicBatch, config: ARGENTConfig | None = None) -> LossTerms:
    """ARGENT total ``L_Cont + γ1·L_AdaEnt + γ2·L_Reg``
    (``docs/methods/argent.md#argent-objective``).

    ``L_Cont`` is HyCoCLIP's 4-term contrastive, ``L_AdaEnt`` :func:`argent_entailment_loss`
    (or HyCoCLIP's cones with ``entailment="ent"``), ``L_Reg`` :func:`norm_regularizer` over
    all four feature sets; ``regularize=False`` drops it (logged as 0).
    """
    config = config or ARGENTConfig()
    contrastive = hycoclip_contrastive_loss(batch)
    if config.entailment == "ent":
        ent = hycoclip_entailment_loss(batch, config.eta_inter, config.eta_intra)
    else:
        ent = argent_entailment_loss(batch, config)
    if config.regularize:
        reg = norm_regularizer(*batch.features())
        total = contrastive + config.gamma1 * ent + config.gamma2 * reg
    else:  # logged as 0; the total does not carry a zero term
        reg, total = torch.zeros_like(contrastive), contrastive + config.gamma1 * ent
    return LossTerms(
        total=batch.total(total), contrastive=contrastive, entailment=ent, regularizer=reg
    )
