"""The steps of HiDe (``docs/methods/himo-clip.md#hide``) that the plain and the fast
implementation share.

:func:`centre` (step 1) and :func:`choose_m` (the τ rule of step 2), the result type, and the
error raised when a batch holds NaN or inf. ``losses.himo`` writes the paper's steps out with
these; ``losses._himo_fast`` computes the same from the Gram matrix.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

VARIANCE_FLOOR = 1e-8  # docs/methods/himo-clip.md#hide: total variance is floored at this value


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


class NonFiniteFeaturesError(torch.linalg.LinAlgError):
    """HiDe's decomposition (SVD or eigh) failed because the batch features hold NaN or inf."""


@contextlib.contextmanager
def non_finite_named(x: Tensor) -> Iterator[None]:
    """Re-raise a decomposition failure on a batch holding NaN/inf as NonFiniteFeaturesError."""
    try:
        yield
    except torch.linalg.LinAlgError as error:
        bad = int((~torch.isfinite(x)).sum())
        if bad:  # say why: NaN/inf features, not an ill-conditioned batch
            raise NonFiniteFeaturesError(
                f"HiDe: the batch features hold {bad} non-finite "
                f"value(s) (NaN or inf) out of {x.numel()}; no PCA "
                "exists"
            ) from error
        raise


def centre(u: Tensor) -> tuple[Tensor, Tensor]:
    """HiDe step 1 (``docs/methods/himo-clip.md#hide``): the batch mean ``ū`` (dim,) and the
    centred rows ``u − ū``."""
    mean = u.mean(dim=0)
    return mean, u - mean


def choose_m(variances: Tensor, tau: float, fixed_m: int | None) -> tuple[int, Tensor]:
    """HiDe's τ rule (``docs/methods/himo-clip.md#hide``): the smallest m with
    ``cumsum(S²)/sum(S²) ≥ tau``.

    ``variances`` (k,) sorted descending; the total is floored at ``VARIANCE_FLOOR``.
    ``fixed_m`` replaces the rule. m is clamped to [1, k] (k when the ratio never reaches
    tau). Returns m and the explained-variance ratio at m.
    """
    ratio = variances.cumsum(0) / variances.sum().clamp_min(VARIANCE_FLOOR)
    k = variances.shape[0]
    m = fixed_m if fixed_m is not None else int((ratio < tau).sum()) + 1
    m = max(1, min(m, k))
    return m, ratio[m - 1]


def work_dtype(t: Tensor) -> torch.dtype:
    """The decomposition runs in float64 for float64 input, else float32."""
    return torch.float64 if t.dtype == torch.float64 else torch.float32
