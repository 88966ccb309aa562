"""HiMo-CLIP's HiDe (in-batch PCA of text features) and MoLo loss
(``docs/methods/himo-clip.md#hide``, ``docs/methods/himo-clip.md#molo``).

The paper's steps, one function each (HiDe's step numbers as on the method page):

- :func:`centre` (step 1): the batch mean ``ū`` and the centred rows ``u − ū``;
- :func:`principal_axes` (step 2): SVD of the centred batch, variances ``S²`` and
  directions ``Vᵀ``; :func:`choose_m` (step 2): the τ rule, the smallest m with
  ``cumsum(S²)/sum(S²) ≥ τ``, and ``P = Vᵀ[:m]``;
- :func:`project` (step 3): ``u' = Pᵀ(P(u − ū)) + ū``;
- :func:`molo_loss`: ``L = L_global + λ·L_comp``, both terms ``½[CE(logits) + CE(logitsᵀ)]``
  (``symmetric_cross_entropy``) of ``logits = exp(logit_scale)·v·uᵀ`` (``clip_logits``),
  L_comp with ``u'`` in place of ``u``.

:func:`hide` and :func:`molo_loss` choose how to compute this with ``implementation``:
``"plain"`` runs the functions above, with autograd through the SVD; ``"fast"`` (the
default) gives the same values and gradients from an eigendecomposition of the smaller Gram
matrix with a custom backward that stays finite on degenerate batches, and forms MoLo's comp
logits without forming ``u'`` (``paperlib.losses._himo_fast``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.collectives import all_gather_with_grad
from paperlib.losses import _himo_fast
from paperlib.losses.contrastive import clip_logits, symmetric_cross_entropy
from paperlib.losses.hide_steps import (  # noqa: F401  (public names of this module too)
    VARIANCE_FLOOR,
    HiDeResult,
    NonFiniteFeaturesError,
    centre,
    choose_m,
    non_finite_named,
    work_dtype,
)
from paperlib.losses.options import require, require_non_negative, require_unit_interval
from paperlib.tensor_checks import require_features, require_finite_result

SCOPES = ("global", "local")
IMPLEMENTATIONS = ("fast", "plain")


@dataclass
class MoLoConfig:
    """The ``loss`` section of method ``himo``: the keyword options of :func:`molo_loss`, at
    the values of HiMo-CLIP's training script (``docs/methods/himo-clip.md#reference-code``)."""

    label_smoothing: float = 0.1
    tau: float = 0.9
    lam: float = 1.0
    scope: Literal["global", "local"] = "global"
    detach: bool = False
    renormalize: bool = False
    fixed_m: int | None = None

    def __post_init__(self) -> None:
        check_hide_options(self.tau, self.fixed_m, self.scope)
        require_unit_interval("label_smoothing", self.label_smoothing)
        require_non_negative(self, "lam")


@dataclass
class MoLoOutput:
    """Output of :func:`molo_loss`: ``loss = global_loss + lam · comp_loss`` plus HiDe's m."""

    loss: Tensor
    global_loss: Tensor
    comp_loss: Tensor
    m: int
    explained_variance: float


def principal_axes(x: Tensor) -> tuple[Tensor, Tensor]:
    """HiDe step 2 (``docs/methods/himo-clip.md#hide``): SVD ``x = U S Vᵀ`` of the centred (batch, dim) batch.

    Returns the variances ``S²`` (k,), descending, and the directions ``Vᵀ`` (k, dim) as
    rows, k = min(batch, dim).
    """
    with non_finite_named(x):
        _, s, vt = torch.linalg.svd(x, full_matrices=False)
    return s.square(), vt


def project(u: Tensor, mean: Tensor, components: Tensor) -> Tensor:
    """HiDe step 3 (``docs/methods/himo-clip.md#hide``): ``u' = Pᵀ(P(u − ū)) + ū`` row-wise, ``P = components`` (m, dim)."""
    return (u - mean) @ components.T @ components + mean


def _hide_plain(u: Tensor, tau: float, fixed_m: int | None, detach: bool) -> HiDeResult:
    """HiDe on the rows of ``u`` as the paper writes it, autograd through the SVD.

    Components come back unsigned (the caller fixes their sign).
    """
    mean, x = centre(u)
    variances, axes = principal_axes(x)
    m, explained = choose_m(variances, tau, fixed_m)
    p = axes[:m].detach() if detach else axes[:m]
    return HiDeResult(project(u, mean, p), m, explained, p.detach(), mean)


def _sign_fixed(rows: Tensor) -> Tensor:
    """Flip each row so that its largest-magnitude entry is positive."""
    idx = rows.abs().argmax(dim=1, keepdim=True)
    sign = torch.sign(rows.gather(1, idx))
    return rows * torch.where(sign == 0, 1.0, sign)


def _validate(
    text_features: Tensor, tau: float, fixed_m: int | None, scope: str, implementation: str
) -> None:
    require_features(text_features=text_features)
    check_hide_options(tau, fixed_m, scope, implementation)


def check_hide_options(
    tau: float, fixed_m: int | None, scope: str, implementation: str = "fast"
) -> None:
    """ValueError naming the first of HiDe's options out of its range (``"tau: expected ..."``);
    :class:`MoLoConfig` and every entry point check with it."""
    require(0.0 < tau <= 1.0, "tau", "a value in (0, 1]", tau)
    positive_int = isinstance(fixed_m, int) and not isinstance(fixed_m, bool) and fixed_m >= 1
    require(fixed_m is None or positive_int, "fixed_m", "a positive int or None", repr(fixed_m))
    require(scope in SCOPES, "scope", f"one of {list(SCOPES)}", repr(scope))
    require(
        implementation in IMPLEMENTATIONS,
        "implementation",
        f"one of {list(IMPLEMENTATIONS)}",
        repr(implementation),
    )


def _hide_batch(
    text_features: Tensor,
    tau: float,
    fixed_m: int | None,
    detach: bool,
    renormalize: bool,
    gap_tol: float | None,
    implementation: str,
) -> HiDeResult:
    """HiDe on exactly the rows given (no gathering), in the work dtype with autocast off."""
    with torch.autocast(text_features.device.type, enabled=False):
        u = text_features.to(work_dtype(text_features))
        if implementation == "fast":
            out = _himo_fast.hide_batch(u, tau, fixed_m, detach, gap_tol)
        else:
            out = _hide_plain(u, tau, fixed_m, detach)
        features = F.normalize(out.features, dim=-1) if renormalize else out.features
        components = _sign_fixed(out.components)
    return HiDeResult(
        features.to(text_features.dtype),
        out.m,
        out.explained_variance.detach(),
        components,
        out.mean.detach(),
    )


def hide(
    text_features: Tensor,
    tau: float = 0.9,
    *,
    fixed_m: int | None = None,
    detach: bool = False,
    renormalize: bool = False,
    scope: str = "global",
    gap_tol: float | None = None,
    implementation: str = "fast",
) -> HiDeResult:
    """HiDe (``docs/methods/himo-clip.md#hide``): ``u' = Pᵀ(P(u − ū)) + ū`` for (batch, dim) L2-normalised features.

    - ``tau``: keep the smallest m with cumulative explained variance ≥ tau (total variance
      floored at 1e-8; m ≥ 1; m = min(batch, dim) if the ratio never reaches tau).
    - ``fixed_m``: keep exactly min(fixed_m, batch, dim) components instead.
    - ``detach``: if True, ``P`` is a constant (no gradient through the decomposition; the
      gradient still flows through the projection and ū). Reference: False.
    - ``renormalize``: L2-normalise ``u'``. Reference: False.
    - ``scope``: ``"global"`` gathers the batch from every rank with gradient and returns
      u' for the (world·batch, dim) global batch; ``"local"`` uses this rank's batch only
      (the reference code). Identical outside ``torch.distributed``.
    - ``gap_tol`` (``"fast"`` only): eigenvalue gaps (kept vs dropped) at or below it get
      zero gradient; default ``k·eps·λ_max`` (k the Gram size), below which fp eigenvalues
      are noise.
    - ``implementation``: ``"fast"`` (default) or ``"plain"`` (module docstring); the plain
      path's gradient is undefined where singular values repeat.

    The decomposition runs in float32 (float64 for float64 input), autocast disabled;
    ``features`` comes back in the input dtype.
    """
    _validate(text_features, tau, fixed_m, scope, implementation)
    if gap_tol is not None and implementation != "fast":
        raise ValueError("gap_tol applies to implementation='fast' only")
    if scope == "global":
        text_features = all_gather_with_grad(text_features)
    return _hide_batch(text_features, tau, fixed_m, detach, renormalize, gap_tol, implementation)


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
    implementation: str = "fast",
) -> MoLoOutput:
    """MoLo (``docs/methods/himo-clip.md#molo``): ``L_global + lam · L_comp`` on (batch, dim) L2-normalised features.

    ``logit_scale`` is the *log* of the temperature scale (logits = exp(logit_scale)·v·uᵀ,
    as in ``clip_logits``); both terms use ``label_smoothing`` (reference 0.1). ``tau``,
    ``fixed_m``, ``detach``, ``renormalize``, ``implementation``: as in :func:`hide`.
    Under ``torch.distributed`` both terms are computed on the global batch gathered with
    gradient (every rank computes the same loss). ``scope="global"`` runs HiDe on the
    gathered text batch; ``scope="local"`` runs HiDe on each rank's own batch and then
    gathers u' with gradient (the reference's per-rank PCA, with Long-CLIP's gradient-
    carrying gather). Gradient convention: the gather's backward sums every rank's
    contribution, so rank r's input gradient is world_size × ∂L/∂(its slice); DDP's
    gradient averaging then yields exactly ∂L/∂θ of the global loss.
    """
    _validate(text_features, tau, fixed_m, scope, implementation)
    require_features(image_features=image_features, text_features=text_features)
    text_all = all_gather_with_grad(text_features)
    image_all = all_gather_with_grad(image_features)
    global_logits = clip_logits(image_all, text_all, logit_scale)
    with torch.set_grad_enabled(torch.is_grad_enabled() and lam != 0.0):
        if implementation == "fast" and scope == "global" and not renormalize:
            comp_logits, m, explained = _himo_fast.comp_logits(
                image_all, text_all, global_logits, logit_scale, tau, fixed_m, detach
            )
        else:
            hide_input = text_all if scope == "global" else text_features
            parts = _hide_batch(hide_input, tau, fixed_m, detach, renormalize, None, implementation)
            comp = parts.features if scope == "global" else all_gather_with_grad(parts.features)
            comp_logits = clip_logits(image_all, comp, logit_scale)
            m, explained = parts.m, parts.explained_variance
        comp_loss = symmetric_cross_entropy(comp_logits, label_smoothing)
    global_loss = symmetric_cross_entropy(global_logits, label_smoothing)
    loss = require_finite_result(
        global_loss + lam * comp_loss,
        image_features=image_features,
        text_features=text_features,
        logit_scale=logit_scale,
    )
    return MoLoOutput(
        loss=loss,
        global_loss=global_loss,
        comp_loss=comp_loss,
        m=m,
        explained_variance=float(explained),
    )
