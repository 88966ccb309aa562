"""Long-CLIP's training loss: long-caption InfoNCE plus primary component matching (PCM).

Long-CLIP (Zhang et al., 2024) fine-tunes CLIP on long captions with two symmetric InfoNCE
terms that share the logit scale:

- long: image features against the long captions' text features;
- short: the image features reduced to their first k principal components of the batch
  (:func:`pca_reconstruct`, k = 32) against the short captions' text features.

Where each input is normalised (as in the reference code): image, long- and short-text
features are L2-normalised first; the PCA runs on the *normalised* image batch, and its
reconstruction is used as it comes out, without normalising it again. Both terms use
label smoothing 0.1. The reference sums the two terms; here ``total = (1 − w)·long + w·short``
with the short weight ``w`` (0.5 is half the reference's sum: the same AdamW steps, up to
AdamW's eps; 0 is plain InfoNCE on long captions).

Under ``torch.distributed`` the features are gathered with gradient (``all_gather_with_grad``)
and the loss is computed on the global batch. ``scope="global"`` runs the PCA on the gathered
image batch; ``scope="local"`` runs it on each rank's own batch before gathering, as the
reference does. Both are the same outside ``torch.distributed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.collectives import all_gather_with_grad
from paperlib.losses.contrastive import clip_logits, gathered_infonce, symmetric_cross_entropy
from paperlib.losses.options import require, require_unit_interval
from paperlib.tensor_checks import NonFiniteInputError, require_features, require_finite_result

SCOPES = ("global", "local")


@dataclass
class LongCLIPConfig:
    """The ``loss`` section of method ``longclip``: the keyword options of :func:`longclip_loss`
    (``scope`` places the PCA, as HiDe's); ``short_weight=0`` trains on long captions alone."""

    label_smoothing: float = 0.1
    pcm_dim: int = 32
    short_weight: float = 0.5
    scope: Literal["global", "local"] = "global"

    def __post_init__(self) -> None:
        require_unit_interval("label_smoothing", self.label_smoothing)
        check_pcm_options(self.pcm_dim, self.short_weight, self.scope)


@dataclass
class LongCLIPOutput:
    """Output of :func:`longclip_loss`: ``total = (1 − short_weight)·long + short_weight·short``."""

    total: Tensor
    long: Tensor
    short: Tensor


def pca_reconstruct(features: Tensor, k: int) -> Tensor:
    """Long-CLIP's PCM: ``(X − μ) V_k V_kᵀ + μ`` for a (batch, dim) batch X.

    μ is the batch mean and V_k (dim, k) the top-k right singular vectors of the centred
    batch (``torch.linalg.svd``). When k ≥ min(batch, dim) the projection is the identity
    (k is at least the rank) and the input comes back unchanged. Differentiable (through
    the SVD: well defined when the singular values are distinct). Runs in float32 (float64
    for float64 input) with autocast off; returns the input dtype.
    """
    if features.ndim != 2:
        raise ValueError(f"features must be (batch, dim); got shape {tuple(features.shape)}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int; got {k!r}")
    if k >= min(features.shape):
        return features
    work = torch.float64 if features.dtype == torch.float64 else torch.float32
    with torch.autocast(features.device.type, enabled=False):
        x = features.to(work)
        mean = x.mean(dim=0, keepdim=True)
        centred = x - mean
        try:
            _, _, vh = torch.linalg.svd(centred, full_matrices=False)
        except torch.linalg.LinAlgError:
            require_finite_result(centred, features=features)
            raise
        v_k = vh[:k].T  # (dim, k)
        out = (centred @ v_k) @ v_k.T + mean
    return out.to(features.dtype)


def _validate(
    image: Tensor,
    long_text: Tensor,
    short_text: Tensor,
    pcm_dim: int,
    short_weight: float,
    scope: str,
) -> None:
    require_features(image=image, long_text=long_text, short_text=short_text)
    check_pcm_options(pcm_dim, short_weight, scope)


def check_pcm_options(pcm_dim: int, short_weight: float, scope: str) -> None:
    """ValueError naming the first of Long-CLIP's options out of its range
    (``"pcm_dim: expected ..."``); :class:`LongCLIPConfig` and :func:`longclip_loss` use it."""
    positive_int = isinstance(pcm_dim, int) and not isinstance(pcm_dim, bool) and pcm_dim >= 1
    require(positive_int, "pcm_dim", "a positive int", repr(pcm_dim))
    require_unit_interval("short_weight", short_weight, closed_high=True)
    require(scope in SCOPES, "scope", f"one of {list(SCOPES)}", repr(scope))


def longclip_loss(
    image: Tensor, long_text: Tensor, short_text: Tensor, logit_scale: Tensor,
    pcm_dim: int = 32, label_smoothing: float = 0.1, short_weight: float = 0.5,
    scope: str = "global",
) -> LongCLIPOutput:  # fmt: skip
    """Long-CLIP's loss (module docstring) on (batch, dim) features.

    ``image`` may be unnormalised: it is L2-normalised here, then the PCM runs on the
    normalised batch (as in the reference). ``long_text`` and ``short_text`` are normalised
    here as well (a no-op for normalised input). ``logit_scale`` is the *log* of the scale
    (``clip_logits``), shared by both terms. With ``short_weight=0`` the short term is still
    computed (for logging) but carries no gradient, and ``total`` is the long term alone.
    """
    _validate(image, long_text, short_text, pcm_dim, short_weight, scope)
    given = {"image": image, "long_text": long_text, "short_text": short_text}
    try:
        return _longclip_terms(
            **given,
            logit_scale=logit_scale,
            pcm_dim=pcm_dim,
            label_smoothing=label_smoothing,
            short_weight=short_weight,
            scope=scope,
        )
    except NonFiniteInputError:  # the PCM's SVD saw NaN: name the argument that holds it
        require_finite_result(torch.tensor(math.nan), **given, logit_scale=logit_scale)
        raise


def _longclip_terms(
    image: Tensor,
    long_text: Tensor,
    short_text: Tensor,
    logit_scale: Tensor,
    pcm_dim: int,
    label_smoothing: float,
    short_weight: float,
    scope: str,
) -> LongCLIPOutput:
    """:func:`longclip_loss` on checked inputs."""
    given = {"image": image, "long_text": long_text, "short_text": short_text}
    image = F.normalize(image, dim=-1)
    long_text = F.normalize(long_text, dim=-1)
    short_text = F.normalize(short_text, dim=-1)
    long = gathered_infonce(image, long_text, logit_scale, label_smoothing)
    with torch.set_grad_enabled(torch.is_grad_enabled() and short_weight != 0.0):
        if scope == "local":
            short = gathered_infonce(
                pca_reconstruct(image, pcm_dim), short_text, logit_scale, label_smoothing
            )
        else:
            coarse = pca_reconstruct(all_gather_with_grad(image), pcm_dim)
            logits = clip_logits(coarse, all_gather_with_grad(short_text), logit_scale)
            short = symmetric_cross_entropy(logits, label_smoothing)
    total = long if short_weight == 0.0 else (1.0 - short_weight) * long + short_weight * short
    require_finite_result(total, **given, logit_scale=logit_scale)
    return LongCLIPOutput(total=total, long=long, short=short)
