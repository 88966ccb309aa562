"""Lorentz (hyperboloid) model of curvature ``-curv`` (``docs/methods/conventions.md#lorentz-model``).

Points are stored by their space components ``x`` of shape (batch, dim); the time component
``x_t = sqrt(1/curv + ‖x‖²)`` is implied. Every function computes in float32 or float64:
half-precision inputs are cast up and autocast is disabled locally, so the functions behave
the same under ``torch.autocast(dtype=torch.bfloat16)``.

Each formula is written twice, side by side: ``plain_*`` as the textbook and MERU write it
(``plain_paired_dist``, ``plain_exterior_angle``: MERU's ``oxy_angle``, ``plain_exp_map0``,
``plain_log_map0``), then the robust form the losses use, tested against it where the plain
form is accurate (``tests/test_lorentz.py``). The plain forms are references for reading,
not for training: they lose digits or gradients at the points listed below.

Numerical choices of the robust forms (the reference's ``eps=1e-8`` clamps are no-ops in
float32):

* norms use ``sqrt(max(‖x‖², tiny))``, so ``x = 0`` has finite values and gradients;
* distances use the Lorentzian chord ``D = ‖x−y‖² − (x_t−y_t)² = -2/c − 2⟨x,y⟩_L ≥ 0`` and
  ``d = (2/√c)·asinh(√(c·D)/2)`` (equal to ``acosh(1 + c·D/2)/√c``), instead of
  ``acosh(−c⟨x,y⟩_L)``, which loses all digits for close points and has an infinite
  gradient at ``x = y``;
* ``exp_map0``/``log_map0`` are written as ``r(‖v‖)·v/‖v‖`` with ``sinh``/``asinh`` of the
  norm: no ``sinh(t)/t`` cancellation in the gradient and the exact Jacobian at 0.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import TypeVar

import torch
from torch import Tensor

from paperlib.tensor_checks import require_same_device

__all__ = [
    "aperture_radius",
    "dist_to_origin",
    "exp_map0",
    "exterior_angle",
    "from_poincare",
    "half_aperture",
    "log_map0",
    "lorentz_inner",
    "paired_dist",
    "pairwise_dist",
    "pairwise_inner",
    "plain_exp_map0",
    "plain_exterior_angle",
    "plain_log_map0",
    "plain_paired_dist",
    "tangent_pca",
    "time_component",
    "to_poincare",
]

F = TypeVar("F", bound=Callable[..., Tensor])

#: MERU's cap on ``√c·‖v‖`` in ``exp_map0``: the output space norm is at most ``2**15/√c``.
MAX_SINH_ARG = math.asinh(2.0**15)


def _float_dtype(*values: object) -> torch.dtype:
    dtypes = [v.dtype for v in values if isinstance(v, Tensor) and v.is_floating_point()]
    return torch.float64 if torch.float64 in dtypes else torch.float32


def in_float32(fn: F) -> F:
    """Run ``fn`` with tensor arguments cast to float32 (float64 kept) and autocast disabled;
    TypeError or ValueError naming an argument that is an integer tensor or on another device
    (:func:`~paperlib.tensor_checks.require_same_device`)."""
    names = list(inspect.signature(fn).parameters)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        require_same_device(**dict(zip(names, args)), **kwargs)
        dtype = _float_dtype(*args, *kwargs.values())

        def cast(v):
            return v.to(dtype) if isinstance(v, Tensor) and v.is_floating_point() else v

        args = tuple(cast(a) for a in args)
        kwargs = {k: cast(v) for k, v in kwargs.items()}
        devices = {a.device.type for a in (*args, *kwargs.values()) if isinstance(a, Tensor)}
        with _no_autocast(devices):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _no_autocast:
    def __init__(self, devices: set[str]):
        self.contexts = [torch.autocast(device_type=d, enabled=False) for d in devices | {"cpu"}]

    def __enter__(self):
        for c in self.contexts:
            c.__enter__()

    def __exit__(self, *exc):
        for c in reversed(self.contexts):
            c.__exit__(*exc)


def _check_curv(curv: float | Tensor) -> None:
    """ValueError unless every value of ``curv`` is finite and > 0 (NaN and inf refused: an
    infinite curvature collapses every distance to 0). A tensor on an accelerator is not
    checked: that would wait for the device at every call (the models' curvature is
    ``exp(log c)``, positive by construction, and checked where a checkpoint is read)."""
    on_cpu = not isinstance(curv, Tensor) or curv.device.type == "cpu"
    value = torch.as_tensor(curv) if on_cpu else None
    if on_cpu and not bool(torch.all((value > 0) & torch.isfinite(value))):
        shown = curv.tolist() if isinstance(curv, Tensor) and curv.numel() < 5 else curv
        raise ValueError(
            f"curv must be > 0 (the space has curvature -curv) and finite; got {shown}"
        )


def _curv(curv: float | Tensor, like: Tensor) -> Tensor:
    """``curv`` as a tensor like ``like``, checked (:func:`_check_curv`)."""
    _check_curv(curv)
    return torch.as_tensor(curv, dtype=like.dtype, device=like.device)


def _safe_norm(x: Tensor, keepdim: bool = False) -> Tensor:
    """‖x‖ over the last dim, floored at sqrt(tiny): finite value and zero gradient at 0."""
    sq = (x * x).sum(-1, keepdim=keepdim)
    return sq.clamp_min(torch.finfo(x.dtype).tiny).sqrt()


def _safe_sqrt(x: Tensor) -> Tensor:
    """sqrt with value 0 and gradient 0 at x ≤ 0 (the floor keeps the backward finite)."""
    root = x.clamp_min(torch.finfo(x.dtype).tiny).sqrt()
    return torch.where(x > 0, root, torch.zeros_like(root))


@in_float32
def time_component(x: Tensor, curv: float | Tensor) -> Tensor:
    """``x_t = sqrt(1/c + ‖x‖²)`` for space components (..., dim) → (...)."""
    curv = _curv(curv, x)
    return torch.sqrt(1.0 / curv + (x * x).sum(-1))


@in_float32
def lorentz_inner(x: Tensor, y: Tensor, curv: float | Tensor) -> Tensor:
    """Paired ``⟨x,y⟩_L = x·y − x_t·y_t`` for (batch, dim) inputs → (batch,)."""
    return (x * y).sum(-1) - time_component(x, curv) * time_component(y, curv)


@in_float32
def pairwise_inner(x: Tensor, y: Tensor, curv: float | Tensor) -> Tensor:
    """All-pairs ``⟨x_i,y_j⟩_L`` for (B1, dim), (B2, dim) → (B1, B2)."""
    xt, yt = time_component(x, curv), time_component(y, curv)
    return x @ y.T - xt[:, None] * yt[None, :]


def _dist_from_chord(chord_sq: Tensor, curv: Tensor) -> Tensor:
    """``d = (2/√c)·asinh(√(c·D)/2)`` = ``acosh(1 + c·D/2)/√c`` from the chord ``D ≥ 0``."""
    sqrt_c = curv.sqrt()
    return 2.0 / sqrt_c * torch.asinh(0.5 * sqrt_c * _safe_sqrt(chord_sq))


def _radial_factor(a: Tensor, b: Tensor, at: Tensor, bt: Tensor, curv: Tensor) -> Tensor:
    """``1 − ((a+b)/(a_t+b_t))²`` without cancellation, using ``a_t − a = (1/c)/(a_t + a)``."""
    gap = (1.0 / curv) * (1.0 / (at + a) + 1.0 / (bt + b))
    return gap * (at + a + bt + b) / (at + bt) ** 2


def _perp_norm_sq(v: Tensor, direction: Tensor) -> Tensor:
    """``‖v − (v·d̂)d̂‖²`` (d̂ = 0 where ``direction`` = 0)."""
    unit = direction / _safe_norm(direction, keepdim=True)
    return (v - (v * unit).sum(-1, keepdim=True) * unit).pow(2).sum(-1)


def _paired_chord(x: Tensor, y: Tensor, curv: Tensor) -> Tensor:
    """Chord ``D = ‖δ‖² − (x_t − y_t)²`` (δ = x − y) as a sum of non-negative terms.

    With σ = x + y, S = x_t + y_t and u = σ/S: ``x_t − y_t = δ·u``, so
    ``D = ‖δ‖²(1 − ‖u‖²) + ‖u‖²·‖δ_⊥σ‖²``, where
    ``(1 − ‖u‖²)·S² = (S + ‖σ‖)·[1/(c(x_t+a)) + 1/(c(y_t+b)) + (a+b−‖σ‖)]`` and
    ``a + b − ‖σ‖ = (2ab − 2x·y)/(a + b + ‖σ‖) ≥ 0``. The second term has two forms:
    ``‖u‖²·‖δ_⊥σ‖²`` (rounding error ``≈ eps·‖δ‖`` in ‖δ_⊥σ‖, best for close points) and,
    since ``‖δ ∧ σ‖ = 2‖x ∧ y‖``, ``(ab/S)²·‖x̂ − ŷ‖²·‖x̂ + ŷ‖²`` (relative error ``≈ eps/θ``,
    best when one point is much nearer O than the other, where the first form's error
    ``eps·max(a, b)`` swamps ``‖δ_⊥σ‖ ≈ 2·min(a, b)·sin θ``); each pair takes the form with
    the smaller error, ``‖δ‖·‖σ‖ ≤ 2ab`` choosing the first. Every term is computed from δ
    or from positive quantities, so D keeps its relative precision for close points, for
    far points on one ray, for antipodal points and for a far point against a near one.
    """
    delta, sigma = x - y, x + y
    a, b = _safe_norm(x), _safe_norm(y)
    at, bt = torch.sqrt(1.0 / curv + a * a), torch.sqrt(1.0 / curv + b * b)
    sigma_norm, delta_norm = _safe_norm(sigma), _safe_norm(delta)
    x_unit, y_unit = x / a[..., None], y / b[..., None]
    minus_sq = (x_unit - y_unit).pow(2).sum(-1)
    wedge = a * b * minus_sq  # 2ab − 2x·y
    gap = (1.0 / curv) * (1.0 / (at + a) + 1.0 / (bt + b)) + wedge / (a + b + sigma_norm)
    one_minus_u2 = gap * (at + bt + sigma_norm) / (at + bt) ** 2
    near = (sigma_norm / (at + bt)) ** 2 * _perp_norm_sq(delta, sigma)
    far = (a * b / (at + bt)) ** 2 * minus_sq * (x_unit + y_unit).pow(2).sum(-1)
    transverse = torch.where(delta_norm * sigma_norm <= 2.0 * a * b, near, far)
    chord_sq = delta.pow(2).sum(-1) * one_minus_u2 + transverse
    return chord_sq


@in_float32
def plain_paired_dist(x: Tensor, y: Tensor, curv: float | Tensor) -> Tensor:
    """The textbook geodesic distance ``d(x, y) = acosh(−c⟨x,y⟩_L)/√c``, (batch, dim) →
    (batch,), as MERU's ``pairwise_dist`` writes it (``docs/methods/conventions.md#lorentz-distance``).

    Accurate while ``d`` is well above ``√eps``; see :func:`paired_dist` for why it is not
    what the losses use.
    """
    curv = _curv(curv, x)
    return torch.acosh((-curv * lorentz_inner(x, y, curv)).clamp_min(1.0)) / curv.sqrt()


@in_float32
def paired_dist(x: Tensor, y: Tensor, curv: float | Tensor) -> Tensor:
    """Geodesic distance ``d(x_i, y_i)`` for (batch, dim) inputs → (batch,)
    (``docs/methods/conventions.md#lorentz-distance``).

    Why not :func:`plain_paired_dist`: ``−c⟨x,y⟩_L = 1 + c·d²/2 + …`` comes out of the
    difference of two near-equal products, so ``acosh`` of it keeps only about half the
    digits for close points (none below ``d ≈ √eps``), and its derivative ``1/√(z² − 1)`` is
    infinite at ``x = y``. Here the distance comes from the chord (:func:`_paired_chord`),
    which keeps full relative precision for close points and for points far out on one ray:
    ``d(x, x) = 0`` exactly, with zero gradient.
    """
    curv = _curv(curv, x)
    x, y = torch.broadcast_tensors(x, y)
    return _dist_from_chord(_paired_chord(x, y, curv), curv)


@in_float32
def pairwise_dist(
    x: Tensor, y: Tensor, curv: float | Tensor, rel_floor: float | None = None
) -> Tensor:
    """All-pairs geodesic distance for (B1, dim), (B2, dim) → (B1, B2)
    (``docs/methods/conventions.md#lorentz-distance``).

    The angular part of the chord, ``2(a·b − x·y)``, comes from one matmul (as the
    contrastive logits need); its rounding error is about ``eps·a·b``, so the chord is floored
    at ``rel_floor·a·b`` (default ``8·eps`` of the dtype) with zero gradient below the floor:
    coincident points get ``d ≈ √(rel_floor·a·b)`` instead of noise with a huge gradient.
    Use :func:`paired_dist` where exact small distances matter.
    """
    curv = _curv(curv, x)
    rel_floor = 8 * torch.finfo(x.dtype).eps if rel_floor is None else rel_floor
    a, b = _safe_norm(x)[:, None], _safe_norm(y)[None, :]
    at, bt = torch.sqrt(1.0 / curv + a * a), torch.sqrt(1.0 / curv + b * b)
    angular = 2.0 * (a * b - x @ y.T)
    chord_sq = (a - b) ** 2 * _radial_factor(a, b, at, bt, curv) + angular
    floor = (rel_floor * a * b).detach()
    return _dist_from_chord(torch.maximum(chord_sq, floor), curv)


@in_float32
def dist_to_origin(x: Tensor, curv: float | Tensor) -> Tensor:
    """``d(O, x) = asinh(√c‖x‖)/√c`` for (batch, dim) → (batch,); zero gradient at x = 0."""
    curv = _curv(curv, x)
    return torch.asinh(curv.sqrt() * _safe_norm(x)) / curv.sqrt()


@in_float32
def plain_exp_map0(v: Tensor, curv: float | Tensor) -> Tensor:
    """The textbook exponential map at the origin, ``sinh(√c‖v‖)·v/(√c‖v‖)``, (batch, dim) →
    (batch, dim), as MERU writes it without its clamps (``docs/methods/conventions.md#exp-log-maps``).

    Undefined at ``v = 0`` (0/0) and infinite in float32 once ``√c‖v‖ > 89``.
    """
    curv = _curv(curv, v)
    r = curv.sqrt() * v.norm(dim=-1, keepdim=True)
    return torch.sinh(r) * v / r


@in_float32
def exp_map0(v: Tensor, curv: float | Tensor, max_sinh_arg: float = MAX_SINH_ARG) -> Tensor:
    """Exponential map at the origin, ``sinh(√c‖v‖)·v/(√c‖v‖)``, (batch, dim) → (batch, dim)
    (``docs/methods/conventions.md#exp-log-maps``).

    Why not :func:`plain_exp_map0`: ``sinh(r)/r`` is 0/0 at ``v = 0`` (no value, no
    gradient) and ``sinh`` overflows float32 far out. Here it is written as
    ``(sinh(r)/√c)·v/‖v‖`` with a floored norm and ``r = √c‖v‖`` clamped at ``max_sinh_arg``
    (MERU's ``asinh(2**15)``, so outputs stay finite in float32 for ‖v‖ up to 1e3 and
    beyond); the Jacobian at ``v = 0`` is the identity.
    """
    curv = _curv(curv, v)
    norm = _safe_norm(v, keepdim=True)
    r = (curv.sqrt() * norm).clamp_max(max_sinh_arg)
    return torch.sinh(r) / curv.sqrt() * (v / norm)


@in_float32
def plain_log_map0(x: Tensor, curv: float | Tensor) -> Tensor:
    """The textbook logarithmic map at the origin, ``acosh(√(1+c‖x‖²))·x/(√c‖x‖)``,
    (batch, dim) → (batch, dim) (``docs/methods/conventions.md#exp-log-maps``).

    Undefined at ``x = 0``; near it ``√(1+c‖x‖²)`` rounds to 1 and the result to 0.
    """
    curv = _curv(curv, x)
    s = curv.sqrt() * x.norm(dim=-1, keepdim=True)
    return torch.acosh(torch.sqrt(1.0 + s * s)) * x / s


@in_float32
def log_map0(x: Tensor, curv: float | Tensor) -> Tensor:
    """Logarithmic map at the origin, ``acosh(√(1+c‖x‖²))·x/(√c‖x‖)``
    (``docs/methods/conventions.md#exp-log-maps``).

    Why not :func:`plain_log_map0`: for small ``s = √c‖x‖``, ``√(1+s²)`` rounds to 1 and
    ``acosh`` of it keeps no digit of ``s`` (float32: none below ``s ≈ 3e-4``). The identity
    ``acosh(√(1+s²)) = asinh(s)`` gives ``(asinh(√c‖x‖)/√c)·x/‖x‖``, accurate for every norm,
    with a floored norm at ``x = 0``.
    """
    curv = _curv(curv, x)
    norm = _safe_norm(x, keepdim=True)
    return torch.asinh(curv.sqrt() * norm) / curv.sqrt() * (x / norm)


def aperture_radius(curv: float | Tensor, min_radius: float = 0.1) -> float | Tensor:
    """Norm ``2K/√c`` below which the half aperture ``asin(2K/(√c‖x‖))`` is undefined;
    ValueError for a curvature that is not finite and > 0."""
    _check_curv(curv)
    if isinstance(curv, Tensor):
        return 2.0 * min_radius / curv.sqrt()
    return 2.0 * min_radius / math.sqrt(curv)


@in_float32
def half_aperture(
    x: Tensor, curv: float | Tensor, min_radius: float = 0.1, asin_margin: float = 1e-4
) -> Tensor:
    """Half aperture of the entailment cone at parent x, ``asin(2K/(√c‖x‖))``
    (``docs/methods/conventions.md#half-aperture``).

    ``K = min_radius``. Inside the radius ``2K/√c`` the asin argument exceeds 1; it is
    clamped to ``1 − asin_margin`` (MERU's margin of 1e-8 is a no-op in float32), so the
    aperture saturates at ``asin(1 − 1e-4) ≈ π/2 − 0.014`` with zero gradient there, and the
    gradient just outside the radius is at most ``1/√(2·asin_margin) ≈ 71`` (MERU: ≈ 1.4e4).
    """
    curv = _curv(curv, x)
    arg = 2.0 * min_radius / (curv.sqrt() * _safe_norm(x))
    return torch.asin(arg.clamp(max=1.0 - asin_margin))


@in_float32
def plain_exterior_angle(parent: Tensor, child: Tensor, curv: float | Tensor) -> Tensor:
    """MERU's ``oxy_angle(parent, child)`` as it writes it (without its eps clamps), the
    exterior angle at ``parent`` in the triangle O-parent-child, (batch, dim) → (batch,)
    (``docs/methods/conventions.md#exterior-angle``)::

        φ = acos( (y_t + c⟨x,y⟩_L·x_t) / (‖x‖·√((c⟨x,y⟩_L)² − 1)) ),  x = parent, y = child

    Accurate for angles away from 0 and π and for a parent away from O and from the child.
    """
    curv = _curv(curv, parent)
    c_inner = curv * lorentz_inner(parent, child, curv)
    numerator = time_component(child, curv) + c_inner * time_component(parent, curv)
    denominator = parent.norm(dim=-1) * torch.sqrt(c_inner * c_inner - 1.0)
    return torch.acos((numerator / denominator).clamp(-1.0, 1.0))


@in_float32
def exterior_angle(parent: Tensor, child: Tensor, curv: float | Tensor) -> Tensor:
    """Exterior angle at ``parent`` in the triangle O-parent-child, (batch, dim) → (batch,)
    (``docs/methods/conventions.md#exterior-angle``).

    Same angle as MERU's ``oxy_angle(parent, child)`` (:func:`plain_exterior_angle`) and the
    ARGENT paper's φ: 0 when the child lies on the parent's outward geodesic ray, π when the
    child lies between O and the parent. Why not the plain form: ``acos`` has an infinite
    derivative where the angle reaches 0 or π (a child on the parent's ray, what training
    drives towards), and the formula divides by ``‖x‖`` and by ``√((c⟨x,y⟩)² − 1)``, both 0 at
    the origin and at ``x = y`` (where MERU's eps makes it π/2). From the hyperbolic laws of
    cosines and sines (A = d(O,parent),
    B = d(parent,child), C = d(O,child)), with the common positive factor
    ``c·‖p‖·sinh(√c·B)`` removed::

        φ = atan2(‖q‖·sin θ_O,  √c·(p_t·‖q‖·cos θ_O − ‖p‖·q_t))

    θ_O is the angle between the space parts. Both arguments are computed without
    cancellation: ``‖q‖ sin θ_O = ‖(p−q)_⊥p‖`` (accurate near the ray, where ``acos`` has an
    infinite gradient) and ``p_t‖q‖cos θ_O − ‖p‖q_t = (‖q‖−‖p‖)(‖q‖+‖p‖)/(c(p_t‖q‖ + ‖p‖q_t))
    − p_t‖q‖·‖p̂ − q̂‖²/2``. Neither vanishes with ‖p‖, so a parent near the origin gets the
    limit angle θ_O (the angle between p̂ and q̂) rather than rounding noise. Where both
    arguments vanish (child = parent) and where the parent is at the origin (its squared
    norm below the dtype's smallest normal number: no direction) the angle is defined as 0
    (the child is at the cone's apex) with zero gradient.
    """
    curv = _curv(curv, parent)
    parent, child = torch.broadcast_tensors(parent, child)
    a, b = _safe_norm(parent), _safe_norm(child)
    at, bt = torch.sqrt(1.0 / curv + a * a), torch.sqrt(1.0 / curv + b * b)
    sin_term = _safe_sqrt(_perp_norm_sq(parent - child, parent))
    one_minus_cos = 0.5 * (parent / a[..., None] - child / b[..., None]).pow(2).sum(-1)
    radial = (b - a) * (b + a) / (curv * (at * b + a * bt))
    cos_term = curv.sqrt() * (radial - at * b * one_minus_cos)
    tiny = torch.finfo(a.dtype).tiny
    degenerate = ((sin_term == 0) & (cos_term == 0)) | ((parent * parent).sum(-1) < tiny)
    angle = torch.atan2(
        torch.where(degenerate, torch.zeros_like(sin_term), sin_term),
        torch.where(degenerate, torch.ones_like(cos_term), cos_term),
    )
    return torch.where(degenerate, torch.zeros_like(angle), angle)


@in_float32
def to_poincare(x: Tensor, curv: float | Tensor) -> Tensor:
    """Lorentz space part → unit Poincaré ball (curvature −1): ``√c·x / (1 + √c·x_t)``.

    Distances scale as ``d_P = √c·d_L`` (``docs/methods/conventions.md#poincare-ball``).
    """
    curv = _curv(curv, x)
    sqrt_c = curv.sqrt()
    return sqrt_c * x / (1.0 + sqrt_c * time_component(x, curv)[..., None])


@in_float32
def from_poincare(p: Tensor, curv: float | Tensor) -> Tensor:
    """Inverse of :func:`to_poincare`: unit-ball point → space part ``2p/((1−‖p‖²)·√c)``."""
    curv = _curv(curv, p)
    sq = (p * p).sum(-1, keepdim=True)
    return 2.0 * p / ((1.0 - sq).clamp_min(torch.finfo(p.dtype).eps) * curv.sqrt())


@in_float32
def tangent_pca(x: Tensor, curv: float | Tensor, n_components: int = 2) -> Tensor:
    """Tangent PCA (``docs/methods/conventions.md#horopca``, a baseline): ``log_map0`` → PCA
    (centred, via SVD) → ``exp_map0``.

    Returns space components (batch, n_components) on the same hyperboloid; the data are
    expected to be centred at the origin (e.g. by a Fréchet-mean isometry) beforehand.
    """
    if not 1 <= n_components <= x.shape[-1]:
        raise ValueError(f"n_components must be in [1, {x.shape[-1]}]; got {n_components}")
    v = log_map0(x, curv)
    centred = v - v.mean(0, keepdim=True)
    _, _, vh = torch.linalg.svd(centred, full_matrices=False)
    return exp_map0(centred @ vh[:n_components].T, curv)
