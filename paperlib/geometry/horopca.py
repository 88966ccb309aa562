"""HoroPCA (Chami et al., 2021; ``docs/methods/conventions.md#horopca``): hyperbolic PCA by
horospherical projection.

Steps: move the Fréchet mean to the origin by a Lorentz boost; choose ``k`` orthonormal
ideal points ``p_1..p_k`` (unit vectors of R^D); project every point onto the totally
geodesic k-plane through the origin and the ideal points, keeping its Busemann coordinates
``B_i(x) = log(x_t − x·p_i)``; choose the ideal points that maximise the projected
variance. Everything runs on the unit-curvature hyperboloid (space parts ``√c·x``); outputs
are coordinates in the unit Poincaré ball (curvature −1), i.e. distances are ``√c·d_L``.

What makes it fast compared with the published code (Adam, 500 steps, float64, pairwise
distances through Möbius additions on (N, N, D) tensors): the projection has a closed form
(below), so projected points live in R^(k+1) and all N² distances cost one (N, k) matmul;
the default objective is the projected variance about the origin, O(N·k), instead of the
O(N²) pairwise proxy; the ideal points start at the tangent-PCA directions instead of at
random, and the optimiser is L-BFGS (``steps`` iterations, strong-Wolfe line search).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

from paperlib.geometry.lorentz import (
    dist_to_origin,
    from_poincare,
    log_map0,
    paired_dist,
    pairwise_dist,
    time_component,
)

__all__ = [
    "HoroPCAResult",
    "boost_to_origin",
    "distortion",
    "frechet_centre",
    "horopca",
    "horospherical_projection",
    "poincare_pairwise_dist",
]


@dataclass
class HoroPCAResult:
    """``poincare`` (N, k) unit-ball coordinates; ``ideals`` (k, D) orthonormal ideal points
    in the centred frame; ``mean`` (D,) Fréchet mean (unit-curvature space part)."""

    poincare: Tensor
    ideals: Tensor
    mean: Tensor


def boost_to_origin(x: Tensor, mean: Tensor) -> Tensor:
    """Lorentz boost (an isometry of the unit-curvature hyperboloid) taking ``mean`` to O.

    For space parts (N, D) and ``mean`` (D,): ``x' = x + (m·x)/(m_t+1)·m − x_t·m``.
    """
    xt = time_component(x, 1.0)[:, None]
    mt = time_component(mean, 1.0)
    return x + ((x @ mean)[:, None] / (mt + 1.0)) * mean - xt * mean


def frechet_centre(x: Tensor, max_iter: int = 100) -> tuple[Tensor, Tensor]:
    """Fréchet mean ``μ = argmin mean_i d(μ, x_i)²`` on the unit-curvature hyperboloid.

    Minimised over the space part of μ with L-BFGS (strong-Wolfe line search, at most
    ``max_iter`` iterations) starting at the origin; the fixed-step Karcher iteration
    converges slowly on widely spread data. Returns the centred points ``B_μ(x)`` (N, D)
    (:func:`boost_to_origin`) and μ (D,).
    """
    mean = torch.zeros_like(x[0]).requires_grad_(True)
    optimiser = torch.optim.LBFGS(
        [mean], max_iter=max_iter, line_search_fn="strong_wolfe", tolerance_change=1e-15
    )

    def closure() -> Tensor:
        optimiser.zero_grad()
        loss = paired_dist(x, mean[None], 1.0).pow(2).mean()
        loss.backward()
        return loss

    optimiser.step(closure)
    mean = mean.detach()
    return boost_to_origin(x, mean), mean


def horospherical_projection(x: Tensor, ideals: Tensor) -> tuple[Tensor, Tensor]:
    """Closed-form horospherical projection onto the k-plane through O and the ideal points.

    ``x`` (N, D) unit-curvature space parts; ``ideals`` (k, D) with orthonormal rows. The
    projection ``y = (y_t, Σ z_i p_i)`` keeps every Busemann coordinate:
    ``y_t − z_i = b_i := x_t − x·p_i``. With ``‖z‖² = y_t² − 1`` this is the quadratic
    ``(k−1)·y_t² − 2β·y_t + γ = 0`` (β = Σb_i, γ = ‖b‖² + 1); of its two roots (mirror
    images across the geodesic spanned by the ideal points) the one on the origin's side,
    the smaller, is ``y_t = γ/(β + √(β² − (k−1)γ))``, which also covers k = 1.
    Returns ``(y_t (N,), z (N, k))``.
    """
    k = ideals.shape[0]
    xt = time_component(x, 1.0)
    b = xt[:, None] - x @ ideals.T
    beta = b.sum(-1)
    gamma = (b * b).sum(-1) + 1.0
    disc = (beta * beta - (k - 1) * gamma).clamp_min(0.0)
    yt = gamma / (beta + torch.sqrt(disc))
    return yt, yt[:, None] - b


def _orthonormal(w: Tensor) -> Tensor:
    q, r = torch.linalg.qr(w.T)
    return (q * torch.sign(torch.diagonal(r))).T


def _complete(rows: Tensor, k: int) -> Tensor:
    """The first ``k`` of ``rows`` (r, D) (orthonormal), completed by orthonormal directions
    when r < k (fewer points than components: the SVD has only min(N, D) rows)."""
    if rows.shape[0] >= k:
        return rows[:k].contiguous()
    eye = torch.eye(rows.shape[1], dtype=rows.dtype, device=rows.device)
    q, _ = torch.linalg.qr(torch.cat([rows, eye]).T)  # first r columns span ``rows``
    return torch.cat([rows, q[:, rows.shape[0] : k].T]).contiguous()


def _objective(x: Tensor, w: Tensor, objective: str) -> Tensor:
    _, z = horospherical_projection(x, _orthonormal(w))
    if objective == "origin":
        return -dist_to_origin(z, 1.0).pow(2).mean()
    return -pairwise_dist(z, z, 1.0).pow(2).mean()


def horopca(
    x: Tensor,
    curv: float,
    n_components: int = 2,
    objective: Literal["origin", "pairwise"] = "origin",
    steps: int = 20,
    max_points: int = 1000,
    dtype: torch.dtype = torch.float64,
    seed: int = 0,
) -> HoroPCAResult:
    """HoroPCA of Lorentz space parts (N, D) of curvature ``-curv`` → (N, k) Poincaré coords.

    ``objective``: "origin" (default) maximises the projected variance about the origin
    (the Fréchet mean of the centred data), ``mean d(O, π(x))²``, O(N·k); "pairwise" is the
    published code's proxy, the mean squared pairwise distance, O(N²·k), computed on a random
    subsample of ``max_points`` points (``seed``) when N is larger. On the benchmark data
    (benchmarks/bench_horopca.py) "origin" gives the lower distortion. Where the paper is
    silent: the ideal points start at the top-k tangent-PCA directions and L-BFGS
    (strong-Wolfe) runs at most ``steps`` iterations.
    """
    if x.ndim != 2 or not 1 <= n_components < x.shape[1]:
        raise ValueError(
            f"x must be (batch, dim) with 1 <= n_components < dim; got {tuple(x.shape)}, "
            f"n_components={n_components}"
        )
    if objective not in ("origin", "pairwise"):
        raise ValueError(f"objective must be 'origin' or 'pairwise'; got {objective!r}")
    if x.shape[0] == 0:
        raise ValueError("x must hold at least one point; got an empty (0, dim) tensor")
    bad = int((~torch.isfinite(x)).sum())
    if bad:
        raise ValueError(f"x holds {bad} non-finite value(s) (NaN or inf); no projection exists")
    x = x.detach().to(dtype) * float(curv) ** 0.5
    centred, mean = frechet_centre(x)
    fit_points = centred
    if objective == "pairwise" and centred.shape[0] > max_points:
        gen = torch.Generator().manual_seed(seed)
        fit_points = centred[torch.randperm(centred.shape[0], generator=gen)[:max_points]]
    tangent = log_map0(fit_points, 1.0)
    _, _, vh = torch.linalg.svd(tangent - tangent.mean(0), full_matrices=False)
    w = _complete(vh, n_components).requires_grad_(True)
    optimiser = torch.optim.LBFGS(
        [w], max_iter=steps, line_search_fn="strong_wolfe", tolerance_change=1e-12
    )

    def closure() -> Tensor:
        optimiser.zero_grad()
        loss = _objective(fit_points, w, objective)
        loss.backward()
        return loss

    optimiser.step(closure)
    ideals = _orthonormal(w.detach())
    yt, z = horospherical_projection(centred, ideals)
    return HoroPCAResult(poincare=z / (1.0 + yt[:, None]), ideals=ideals, mean=mean)


def poincare_pairwise_dist(p: Tensor) -> Tensor:
    """All-pairs distances (N, N) of points (N, k) in the unit Poincaré ball (curvature −1)."""
    lifted = from_poincare(p, 1.0)
    return pairwise_dist(lifted, lifted, 1.0, rel_floor=0.0)


def distortion(original: Tensor, projected: Tensor) -> float:
    """Average relative distortion ``mean_{i<j} |d'_ij − d_ij| / d_ij`` of two (N, N)
    distance matrices (the HoroPCA paper's "distortion"; 0 is perfect)."""
    if original.shape != projected.shape or original.ndim != 2:
        raise ValueError(
            f"original and projected must be equal-shape (N, N) distance matrices; got "
            f"{tuple(original.shape)} and {tuple(projected.shape)}"
        )
    i, j = torch.triu_indices(original.shape[0], original.shape[0], offset=1)
    d, d_proj = original[i, j].double(), projected[i, j].double()
    if bool((d <= 0).any()):
        raise ValueError("original distances must be > 0 off the diagonal (duplicate points?)")
    return float(((d_proj - d).abs() / d).mean())
