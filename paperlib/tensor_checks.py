"""Checks on the tensors a loss, metric or geometry function is handed, shared by all of them.

:func:`require_features` checks what a tensor's metadata tells (a torch tensor, a floating
dtype, a (batch, dim) shape with at least one row, one dtype, device and shape across the
set), so it never waits for a device and costs microseconds in a training step.
:func:`require_same_device` is the lighter check of the element-wise geometry maps (any leading
shape). :func:`require_finite_result` waits for one value, the result's finiteness, and only when it is
not finite looks at the inputs, to name those that hold NaN or inf. Each error names the argument and what was
expected.
"""

from __future__ import annotations

from torch import Tensor

from paperlib.collectives import is_distributed

__all__ = [
    "NonFiniteInputError",
    "TensorTypeError",
    "require_features",
    "require_finite_result",
    "require_same_device",
    "require_tensor",
]


class TensorTypeError(TypeError, ValueError):
    """Not a tensor, or a tensor of the wrong dtype: a TypeError that callers catching the
    metrics' ValueError for a bad argument also catch."""


class NonFiniteInputError(ValueError):
    """An input holds NaN or inf, so no finite result exists; the message names the input."""


def require_tensor(name: str, value: object) -> Tensor:
    """``value``; TypeError naming ``name`` unless it is a floating-point torch tensor."""
    if not isinstance(value, Tensor):
        raise TensorTypeError(
            f"{name} must be a torch.Tensor; got {type(value).__name__} (convert it with "
            "torch.as_tensor)"
        )
    if not value.is_floating_point():
        raise TensorTypeError(f"{name} must be a floating-point tensor; got dtype {value.dtype}")
    return value


def require_features(
    same_shape: bool = True, allow_empty: bool = False, **tensors: Tensor | None
) -> None:
    """Each given (non-None) tensor a floating (batch, dim) tensor with batch ≥ 1 (≥ 0 with
    ``allow_empty``) and dim ≥ 1, all of one device (:func:`require_same_device`) and dtype,
    and of one shape (``same_shape``) or one ``dim``; TensorTypeError or ValueError naming the
    argument and what was expected."""
    given = {name: require_tensor(name, t) for name, t in tensors.items() if t is not None}
    for name, t in given.items():
        if t.ndim != 2 or t.shape[1] == 0 or (t.shape[0] == 0 and not allow_empty):
            raise ValueError(
                f"{name} must be a non-empty (batch, dim) tensor; got shape {tuple(t.shape)}"
            )
    if not given:
        return
    require_same_device(**given)
    first, ref = next(iter(given.items()))
    for name, t in given.items():
        if t.dtype != ref.dtype:
            raise TensorTypeError(
                f"{name} has dtype {t.dtype} but {first} has {ref.dtype}; expected one dtype "
                "(cast one of them with .to)"
            )
        if (t.shape if same_shape else t.shape[1:]) != (ref.shape if same_shape else ref.shape[1:]):
            what = "(batch, dim) shape" if same_shape else "dim"
            raise ValueError(
                f"{name} has shape {tuple(t.shape)} but {first} has {tuple(ref.shape)}; "
                f"expected the same {what}"
            )


def require_same_device(**tensors: object) -> None:
    """ValueError naming the first tensor among ``tensors`` on another device than the first,
    TypeError naming one that is an integer or boolean tensor (non-tensors are left alone)."""
    given = {n: t for n, t in tensors.items() if isinstance(t, Tensor)}
    for name, t in given.items():
        if not t.is_floating_point():
            raise TensorTypeError(f"{name} must be a floating-point tensor; got dtype {t.dtype}")
    if not given:
        return
    first, ref = next(iter(given.items()))
    for name, t in given.items():
        if t.device != ref.device:
            raise ValueError(
                f"{name} is on {t.device} but {first} is on {ref.device}; expected one device"
            )


def require_finite_result(result: Tensor, **inputs: Tensor | None) -> Tensor:
    """``result``; when it holds NaN or inf and one of ``inputs`` does too,
    :class:`NonFiniteInputError` naming those inputs (one device wait per call). Under
    ``torch.distributed`` the result is returned as it is: a rank's own inputs may be finite
    while the gathered batch is not, and the training loop names a non-finite loss on every
    rank at once."""
    if is_distributed() or bool(result.isfinite().all()):
        return result
    bad = {
        name: int((~t.isfinite()).sum())
        for name, t in inputs.items()
        if isinstance(t, Tensor) and not bool(t.isfinite().all())
    }
    if bad:
        shown = ", ".join(f"{name} ({count} value(s))" for name, count in bad.items())
        raise NonFiniteInputError(
            f"{shown} hold NaN or inf; expected finite features (non-finite weights?)"
        )
    return result
