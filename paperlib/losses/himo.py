"""HiMo-CLIP's HiDe (in-batch PCA of text features) and MoLo loss (SPEC §1.1).

HiDe: ``u'_i = Pᵀ(P(u_i − ū)) + ū`` where ``P`` (m, dim) holds the first m principal
directions of the batch and m is the smallest count whose cumulative explained variance
reaches ``tau``. MoLo: ``L = L_global + lam · L_comp``, two symmetric InfoNCE terms, with
``u`` and with ``u'``.

Implementation: ``Pᵀ P`` is the top-m eigenprojector of the smaller of the two Gram
matrices ``XᵀX`` (dim, dim) or ``XXᵀ`` (batch, batch) of the centred batch X (the same
subspace as the SVD's), computed by one float32 ``eigh``. Its gradient is a custom
backward that only involves the gap between kept and dropped eigenvalues, so it is
finite on degenerate batches (repeated eigenvalues inside either group are harmless).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.losses.contrastive import (
    all_gather_with_grad,
    clip_logits,
    symmetric_cross_entropy,
)

SCOPES = ("global", "local")
VARIANCE_FLOOR = 1e-8  # SPEC §1.1: total variance is floored at this value


@dataclass
class HiDeResult:
    """Output of :func:`hide`.

    ``features`` (batch, dim): ``u'``; ``m``: kept components; ``explained_variance``:
    cumulative explained-variance ratio at m (0-dim tensor); ``components`` (m, dim): the
    principal directions, rows sorted by variance, sign fixed so each row's largest-|.|
    entry is positive (no gradient); ``mean`` (dim,): the batch mean ``ū``.
    """

    features: Tensor
    m: int
    explained_variance: Tensor
    components: Tensor
    mean: Tensor


@dataclass
class MoLoOutput:
    """Output of :func:`molo_loss`: ``loss = global_loss + lam · comp_loss`` plus HiDe's m."""

    loss: Tensor
    global_loss: Tensor
    comp_loss: Tensor
    m: int
    explained_variance: float


class _TopEigenProjection(torch.autograd.Function):
    """``Y = X V_A V_Aᵀ`` for X (n, k), V the eigenvectors of ``XᵀX`` sorted descending.

    ``V`` and ``eigvals`` are computed from X by the caller (no graph); the backward adds
    the dependence of the projector on X through ``C = XᵀX``:
    ``dΠ = Σ_{a≤m<b} (v_bᵀ dC v_a)/(λ_a − λ_b) (v_a v_bᵀ + v_b v_aᵀ)``.
    Pairs whose gap is ``<= gap_tol`` contribute zero (the derivative is undefined there).
    """

    @staticmethod
    def forward(ctx, x: Tensor, vecs: Tensor, eigvals: Tensor, m: int, gap_tol: float):
        xv = x @ vecs  # (n, k) coordinates in the eigenbasis
        k = vecs.shape[1]
        if m >= k:
            y = x.clone()
        elif m <= k - m:
            y = xv[:, :m] @ vecs[:, :m].T
        else:
            y = x - xv[:, m:] @ vecs[:, m:].T
        ctx.m, ctx.gap_tol = m, gap_tol
        ctx.save_for_backward(xv, vecs, eigvals)
        return y

    @staticmethod
    def backward(ctx, grad_y: Tensor):
        xv, vecs, eigvals = ctx.saved_tensors
        m = ctx.m
        if m >= vecs.shape[1]:
            return grad_y, None, None, None, None
        gv = grad_y @ vecs
        xa, xb, ga, gb = xv[:, :m], xv[:, m:], gv[:, :m], gv[:, m:]
        gap = eigvals[:m, None] - eigvals[None, m:]
        inv_gap = torch.where(gap > ctx.gap_tol, 1.0 / gap.clamp_min(ctx.gap_tol), 0.0)
        # v_aᵀ(XᵀG + GᵀX)v_b for kept a, dropped b, as one (m, 2n) @ (2n, k - m) product
        k = (torch.cat([xa, ga]).T @ torch.cat([gb, xb])) * inv_gap
        grad_x = torch.cat([ga + xb @ k.T, xa @ k], dim=1) @ vecs.T
        return grad_x, None, None, None, None


def _choose_m(eigvals: Tensor, tau: float, fixed_m: int | None) -> tuple[int, Tensor]:
    """Smallest m with cumulative explained variance ≥ tau (or ``fixed_m``), and that ratio."""
    ratio = eigvals.cumsum(0) / eigvals.sum().clamp_min(VARIANCE_FLOOR)
    n = eigvals.shape[0]
    m = fixed_m if fixed_m is not None else int((ratio < tau).sum()) + 1
    m = max(1, min(m, n))
    return m, ratio[m - 1]


def _sign_fixed(rows: Tensor) -> Tensor:
    """Flip each row so that its largest-magnitude entry is positive."""
    idx = rows.abs().argmax(dim=1, keepdim=True)
    sign = torch.sign(rows.gather(1, idx))
    return rows * torch.where(sign == 0, 1.0, sign)


def _validate(text_features: Tensor, tau: float, fixed_m: int | None, scope: str) -> None:
    if text_features.ndim != 2:
        raise ValueError(
            f"text_features must be (batch, dim); got shape {tuple(text_features.shape)}"
        )
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"tau must be in (0, 1]; got {tau}")
    if fixed_m is not None and (not isinstance(fixed_m, int) or fixed_m < 1):
        raise ValueError(f"fixed_m must be a positive int or None; got {fixed_m!r}")
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {SCOPES}; got {scope!r}")


def _hide_batch(
    text_features: Tensor,
    tau: float,
    fixed_m: int | None,
    detach: bool,
    renormalize: bool,
    gap_tol: float | None,
) -> HiDeResult:
    """HiDe on exactly the rows given (no gathering)."""
    in_dtype = text_features.dtype
    work_dtype = torch.float64 if in_dtype == torch.float64 else torch.float32
    with torch.autocast(text_features.device.type, enabled=False):
        u = text_features.to(work_dtype)
        mean = u.mean(dim=0)
        x = u - mean
        n, dim = x.shape
        # Right side (dim, dim) when dim <= n, else left side: Π_N X = (Xᵀ Π_N)ᵀ.
        side = x if dim <= n else x.T
        gram = side.detach().T @ side.detach()
        eigvals, vecs = torch.linalg.eigh(gram)
        eigvals, vecs = eigvals.flip(0).clamp_min(0.0), vecs.flip(1)
        m, explained = _choose_m(eigvals[: min(n, dim)], tau, fixed_m)
        tol = gap_tol
        if tol is None:
            tol = side.shape[1] * torch.finfo(work_dtype).eps * float(eigvals[0])
        tol = max(tol, torch.finfo(work_dtype).tiny)
        if detach:
            proj = vecs[:, :m] @ vecs[:, :m].T
            y = side @ proj.detach()
        else:
            y = _TopEigenProjection.apply(side, vecs, eigvals, m, tol)
        y = y if dim <= n else y.T
        out = y + mean
        if renormalize:
            out = F.normalize(out, dim=-1)
        with torch.no_grad():
            if dim <= n:
                comps = vecs[:, :m].T
            else:  # right singular vectors from the left ones: v = Xᵀ w / s
                scale = eigvals[:m].sqrt().clamp_min(torch.finfo(work_dtype).tiny)
                comps = F.normalize((x.detach().T @ vecs[:, :m] / scale).T, dim=1)
            comps = _sign_fixed(comps)
    return HiDeResult(out.to(in_dtype), m, explained.detach(), comps, mean.detach())


def hide(
    text_features: Tensor,
    tau: float = 0.9,
    *,
    fixed_m: int | None = None,
    detach: bool = False,
    renormalize: bool = False,
    scope: str = "global",
    gap_tol: float | None = None,
) -> HiDeResult:
    """HiDe (SPEC §1.1): ``u' = Pᵀ(P(u − ū)) + ū`` for (batch, dim) L2-normalised features.

    - ``tau``: keep the smallest m with cumulative explained variance ≥ tau (total variance
      floored at 1e-8; m ≥ 1; m = min(batch, dim) if the ratio never reaches tau).
    - ``fixed_m``: keep exactly min(fixed_m, batch, dim) components instead.
    - ``detach``: if True, ``P`` is a constant (no gradient through the decomposition; the
      gradient still flows through the projection and ū). Reference: False.
    - ``renormalize``: L2-normalise ``u'``. Reference: False.
    - ``scope``: ``"global"`` gathers the batch from every rank with gradient and returns
      u' for the (world·batch, dim) global batch; ``"local"`` uses this rank's batch only
      (the reference code). Identical outside ``torch.distributed``.
    - ``gap_tol``: eigenvalue gaps (kept vs dropped) at or below it get zero gradient;
      default ``k·eps·λ_max`` (k the Gram size), below which fp eigenvalues are noise.

    The decomposition runs in float32 (float64 for float64 input), autocast disabled;
    ``features`` comes back in the input dtype.
    """
    _validate(text_features, tau, fixed_m, scope)
    if scope == "global":
        text_features = all_gather_with_grad(text_features)
    return _hide_batch(text_features, tau, fixed_m, detach, renormalize, gap_tol)


def molo_loss(
    image_features: Tensor,
    text_features: Tensor,
    logit_scale: Tensor,
    *,
    tau: float = 0.9,
    lam: float = 1.0,
    label_smoothing: float = 0.1,
    fixed_m: int | None = None,
    detach: bool = False,
    renormalize: bool = False,
    scope: str = "global",
) -> MoLoOutput:
    """MoLo (SPEC §1.1): ``L_global + lam · L_comp`` on (batch, dim) L2-normalised features.

    ``logit_scale`` is the *log* of the temperature scale (logits = exp(logit_scale)·v·uᵀ,
    as in ``clip_logits``); both terms use ``label_smoothing`` (reference 0.1).
    Under ``torch.distributed`` both terms are computed on the global batch gathered with
    gradient (every rank computes the same loss). ``scope="global"`` runs HiDe on the
    gathered text batch; ``scope="local"`` runs HiDe on each rank's own batch and then
    gathers u' with gradient (the reference's per-rank PCA, with Long-CLIP's gradient-
    carrying gather). Gradient convention: the gather's backward sums every rank's
    contribution, so rank r's input gradient is world_size × ∂L/∂(its slice); DDP's
    gradient averaging then yields exactly ∂L/∂θ of the global loss.
    """
    _validate(text_features, tau, fixed_m, scope)
    if image_features.shape != text_features.shape:
        raise ValueError(
            "image_features and text_features must have the same (batch, dim) shape; got "
            f"{tuple(image_features.shape)} and {tuple(text_features.shape)}"
        )
    if scope == "local":
        parts = _hide_batch(text_features, tau, fixed_m, detach, renormalize, None)
        text_all = all_gather_with_grad(text_features)
        comp_all = all_gather_with_grad(parts.features)
    else:
        text_all = all_gather_with_grad(text_features)
        parts = _hide_batch(text_all, tau, fixed_m, detach, renormalize, None)
        comp_all = parts.features
    image_all = all_gather_with_grad(image_features)
    global_loss = symmetric_cross_entropy(
        clip_logits(image_all, text_all, logit_scale), label_smoothing
    )
    with torch.set_grad_enabled(torch.is_grad_enabled() and lam != 0.0):
        comp_loss = symmetric_cross_entropy(
            clip_logits(image_all, comp_all, logit_scale), label_smoothing
        )
    return MoLoOutput(
        loss=global_loss + lam * comp_loss,
        global_loss=global_loss,
        comp_loss=comp_loss,
        m=parts.m,
        explained_variance=float(parts.explained_variance),
    )
