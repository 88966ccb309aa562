"""The fast implementation of HiDe and MoLo (``docs/methods/himo-clip.md#hide``,
``docs/methods/himo-clip.md#molo``), ``implementation="fast"``.

Same values and gradients as the plain functions of :mod:`paperlib.losses.himo`; the τ
rule is theirs (:func:`~paperlib.losses.hide_steps.choose_m`).

``Pᵀ P`` is the top-m eigenprojector Π of the smaller of the two Gram matrices ``XᵀX``
(dim, dim) or ``XXᵀ`` (batch, batch) of the centred batch X (the same subspace as the
SVD's), computed by one float32 ``eigh``. Its gradient is a custom backward that only
involves the gap between kept and dropped eigenvalues, so it is finite on degenerate
batches (repeated eigenvalues inside either group are harmless).
MoLo (global scope) never forms u': ``v u'ᵀ = v Π Xᵀ + (v·ū)1ᵀ = v uᵀ − v (I − Π) Xᵀ`` (or
the same with the (batch, batch) projector acting on the logits), so the comp logits and
their gradient cost rank-min(m, k − m) products on top of the global ones; the backward
works in the ambient space and touches the other eigenvector block only through two
(dim, q) products (``_ProjectedProduct``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.losses.hide_steps import HiDeResult, centre, choose_m, non_finite_named, work_dtype


@dataclass
class _Spectrum:
    """Eigendecomposition of ``C = sideᵀ side``: ``vecs`` (k, k) columns and ``eigvals`` (k,)
    sorted descending, the kept count ``m``, its explained-variance ratio, and ``gap_tol``."""

    vecs: Tensor
    eigvals: Tensor
    m: int
    explained: Tensor
    gap_tol: float


def _inverse_gaps(eigvals: Tensor, m: int, gap_tol: float) -> Tensor:
    """(m, k − m) matrix ``1/(λ_a − λ_b)`` for kept a, dropped b; 0 where the gap ≤ gap_tol."""
    gap = eigvals[:m, None] - eigvals[None, m:]
    return torch.where(gap > gap_tol, 1.0 / gap.clamp_min(gap_tol), 0.0)


class _ProjectedProduct(torch.autograd.Function):
    """``base ± L Π_s Rᵀ`` (``R = I`` when ``right`` is None; ``base`` None counts as 0).

    Π_s = V_s V_sᵀ projects on the kept block V[:, :m] (``kept=True``, sign +) or on the
    dropped block V[:, m:] (``kept=False``, sign −, so ``base − L Π_r Rᵀ = base − L Rᵀ +
    L Π Rᵀ``) of the eigenvectors V (sorted descending) of ``C = sideᵀ side``; ``vecs``
    and ``eigvals`` come from the caller (no graph). ``base`` may broadcast against the
    product (its gradient is then summed back).

    Backward, for upstream W and sign σ: ``∂L = σ W R V_s V_sᵀ``, ``∂R = σ Wᵀ L V_s V_sᵀ``
    and, with ``through``, Π_s's dependence on ``side`` through C: first-order
    perturbation gives ``dΠ_s = Σ_{a∉s, b∈s} (v_aᵀ dC v_b)/(λ_b − λ_a) (v_a v_bᵀ + v_b v_aᵀ)``,
    so for ``E = ∂L/∂Π_s = σ LᵀWR`` the gradient on C is ``V_o J V_sᵀ`` with
    ``J = V_oᵀ (E + Eᵀ) V_s ⊘ (λ_b − λ_a)`` (o the other block), and through C = sideᵀside
    ``∂side = side (V_o J V_sᵀ + V_s Jᵀ V_oᵀ)``. Everything is formed in the ambient space
    from ``(E + Eᵀ) V_s = σ(Lᵀ W R V_s + Rᵀ Wᵀ L V_s)`` — never the other block's
    coordinates of L, R or side — so each product costs a multiple of the smaller block's
    width. Pairs whose gap is ``<= gap_tol`` contribute zero (the derivative is undefined
    there). ``side`` may be the same tensor as ``left`` or ``right``.
    """

    @staticmethod
    def forward(ctx, base, left, right, side, vecs, eigvals, m: int, gap_tol: float, kept, through):
        k = vecs.shape[1]
        block, other = (slice(0, m), slice(m, k)) if kept else (slice(m, k), slice(0, m))
        v_s = vecs[:, block]
        lv = left @ v_s
        rv = v_s if right is None else right @ v_s
        if base is None:
            out = lv @ rv.T if kept else (lv @ rv.T).neg_()
        else:
            out = torch.addmm(base, lv, rv.T, alpha=1.0 if kept else -1.0)
        ctx.other, ctx.block, ctx.kept = other, block, kept
        ctx.m, ctx.gap_tol = m, gap_tol
        ctx.through = through and 0 < m < k
        ctx.side_is = "left" if side is left else "right" if side is right else None
        ctx.base_shape = None if base is None else base.shape
        ctx.save_for_backward(left, right, side, vecs, eigvals, lv, rv)
        return out

    @staticmethod
    def backward(ctx, grad_out: Tensor):
        left, right, side, vecs, eigvals, lv, rv = ctx.saved_tensors
        v_s = vecs[:, ctx.block]
        sign = 1.0 if ctx.kept else -1.0
        grad_base = None if ctx.base_shape is None else grad_out.sum_to_size(ctx.base_shape)
        # each input's gradient in coordinates on V_s (then multiplied by V_sᵀ)
        coords = {"left": (grad_out @ rv).mul_(sign)}  # σ W R V_s
        if right is not None or ctx.through:
            coords["right"] = (grad_out.T @ lv).mul_(sign)  # σ Wᵀ L V_s
        grads = dict.fromkeys(("left", "right", "side"))
        wanted = dict(zip(grads, ctx.needs_input_grad[1:4]))
        if ctx.through:
            w_r, wt_l = coords["left"], coords.pop("right") if right is None else coords["right"]
            sym = left.T @ w_r + (wt_l if right is None else right.T @ wt_l)  # (E + Eᵀ) V_s
            v_o = vecs[:, ctx.other]
            inv = _inverse_gaps(eigvals, ctx.m, ctx.gap_tol)  # 1/(λ_kept − λ_dropped)
            w_p = v_o @ ((v_o.T @ sym) * (inv.T if ctx.kept else -inv))  # V_o J
            # ∂side = (side W_p) V_sᵀ + (side V_s) W_pᵀ, plus side's own direct term
            name = ctx.side_is or "side"
            direct = coords.pop(name, None)
            if wanted[name]:
                side_v = {"left": lv, "right": rv}.get(ctx.side_is)
                side_v = side @ v_s if side_v is None else side_v
                c = side @ w_p if direct is None else direct.addmm_(side, w_p)
                grads[name] = torch.cat([c, side_v], 1) @ torch.cat([v_s.T, w_p.T], 0)
        for name, c in coords.items():
            if wanted[name]:
                grads[name] = c @ v_s.T
        none = (None,) * 6
        return grad_base, grads["left"], grads["right"], grads["side"], *none


def _spectrum(side: Tensor, tau: float, fixed_m: int | None, gap_tol: float | None) -> _Spectrum:
    """Eigendecomposition of ``sideᵀ side`` (no graph) and HiDe's choice of m.

    The Gram is the smaller one, so its size k = min(batch, dim) bounds m. Default
    ``gap_tol``: ``k·eps·λ_max``.
    """
    gram = side.detach().T @ side.detach()
    with non_finite_named(side):
        eigvals, vecs = torch.linalg.eigh(gram)
    eigvals, vecs = eigvals.flip(0).clamp_min(0.0), vecs.flip(1)
    m, explained = choose_m(eigvals, tau, fixed_m)
    eps = torch.finfo(side.dtype).eps
    tol = gap_tol if gap_tol is not None else side.shape[1] * eps * float(eigvals[0])
    return _Spectrum(vecs, eigvals, m, explained, max(tol, torch.finfo(side.dtype).tiny))


def _components(x: Tensor, spec: _Spectrum) -> Tensor:
    """P (m, dim), no gradient: V_m of XᵀX, or on the left side v = Xᵀw/s from XXᵀ's w."""
    with torch.no_grad():
        if x.shape[1] <= x.shape[0]:
            return spec.vecs[:, : spec.m].T
        scale = spec.eigvals[: spec.m].sqrt().clamp_min(torch.finfo(x.dtype).tiny)
        return F.normalize((x.T @ spec.vecs[:, : spec.m] / scale).T, dim=1)


@dataclass
class _Decomposition:
    """A batch centred and decomposed for projection (shared by HiDe and MoLo).

    ``mean`` ū, ``x`` = u − ū, ``spec`` of the smaller Gram; the projection runs through
    ``side`` (x, or xᵀ for the (batch, batch) Gram when batch < dim; ``right_side`` tells
    which) with eigenvector columns ``vecs``, using the kept block if ``kept`` (m ≤ k − m,
    the smaller block) else the dropped one.
    """

    mean: Tensor
    x: Tensor
    side: Tensor
    right_side: bool
    spec: _Spectrum
    vecs: Tensor
    kept: bool

    @functools.cached_property
    def components(self) -> Tensor:
        return _components(self.x, self.spec)


def _decompose(
    u: Tensor, tau: float, fixed_m: int | None, gap_tol: float | None, detach: bool
) -> _Decomposition:
    """Centre ``u`` and eigendecompose its smaller Gram. With ``detach`` on the (batch, batch)
    side, the constant is P (dim-side), not Π_N: the dim-side basis Pᵀ is used instead."""
    mean, x = centre(u)
    right_side = x.shape[0] >= x.shape[1]
    side = x if right_side else x.T
    spec = _spectrum(side, tau, fixed_m, gap_tol)
    kept = spec.m <= side.shape[1] - spec.m
    out = _Decomposition(mean, x, side, right_side, spec, spec.vecs, kept)
    if detach and not right_side:
        out.right_side, out.side, out.vecs, out.kept = True, x, out.components.T, True
    return out


def _projected(
    d: _Decomposition, base: Tensor | None, left: Tensor, right: Tensor | None, detach: bool
) -> Tensor:
    """:class:`_ProjectedProduct` ``base ± left Π_s rightᵀ`` through the block of ``d``'s
    eigenvectors it uses (``d.kept``), the gradient through Π_s unless ``detach``."""
    spec = d.spec
    return _ProjectedProduct.apply(
        base, left, right, d.side, d.vecs, spec.eigvals, spec.m, spec.gap_tol, d.kept, not detach
    )


def hide_batch(
    u: Tensor, tau: float, fixed_m: int | None, detach: bool, gap_tol: float | None
) -> HiDeResult:
    """HiDe (``docs/methods/himo-clip.md#hide``) on the rows of ``u``, already in the work dtype
    with autocast off.

    ``u' = side Π (+ ū)`` through the smaller eigenvector block; components unsigned.
    """
    d = _decompose(u, tau, fixed_m, gap_tol, detach)
    spec, side = d.spec, d.side
    y = _projected(d, None if d.kept else side, side, None, detach)  # side Π (smaller block)
    features = (y if d.right_side else y.T) + d.mean
    return HiDeResult(features, spec.m, spec.explained, d.components, d.mean)


def comp_logits(
    image_features: Tensor,
    text_features: Tensor,
    global_logits: Tensor,
    logit_scale: Tensor,
    tau: float,
    fixed_m: int | None,
    detach: bool,
) -> tuple[Tensor, int, Tensor]:
    """``clip_logits(v, u')`` of MoLo's L_comp (``docs/methods/himo-clip.md#molo``) without
    forming u'.

    With X = u − ū, e = exp(logit_scale) and c = e(v·ū)1ᵀ: ``e v u'ᵀ = e v Π Xᵀ + c`` for the
    (dim, dim) projector Π (batch ≥ dim), ``= (global − c) Π_N + c`` for the (batch, batch)
    one (batch < dim). The kept block is used when m ≤ k − m (k the Gram size), else the
    dropped one: ``global − (the same product with I − Π)``. Returns (logits, m, explained).
    """
    dtype = work_dtype(text_features)
    with torch.autocast(text_features.device.type, enabled=False):
        v = image_features.to(dtype)
        glob = global_logits.to(dtype)
        d = _decompose(text_features.to(dtype), tau, fixed_m, None, detach)
        spec = d.spec
        scaled_v = logit_scale.to(dtype).exp() * v  # cheaper than scaling logits
        offset = (scaled_v @ d.mean)[:, None]  # c = e(v·ū)1ᵀ
        left, right = (scaled_v, d.x) if d.right_side else (glob - offset, None)
        logits = _projected(d, offset if d.kept else glob, left, right, detach)
    return logits.to(global_logits.dtype), spec.m, spec.explained.detach()
