"""torch.distributed collectives the losses and the training loop share (lowest layer).

``all_gather_with_grad`` is what makes a contrastive loss see the global batch under DDP with
a gradient to every rank's features (HiDe runs on the gathered batch,
``docs/methods/himo-clip.md#hide-scope``).
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor


def is_distributed() -> bool:
    """True when a torch.distributed process group is initialised with more than one rank."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def all_gather_with_grad(x: Tensor) -> Tensor:
    """Concatenate ``x`` (batch, ...) from every rank along dim 0, keeping the autograd graph.

    Uses ``torch.distributed.nn.functional.all_gather`` (as Long-CLIP does), whose backward
    sums the incoming gradients of every rank's copy and returns each rank its slice.
    Outside a multi-process group this is the identity.
    """
    if not is_distributed():
        return x
    from torch.distributed.nn.functional import all_gather

    return _ContiguousGrad.apply(torch.cat(all_gather(x.contiguous()), dim=0))


class _ContiguousGrad(torch.autograd.Function):
    """Identity whose backward makes the incoming gradient contiguous.

    The gather's backward exchanges gradient slices with ``all_to_all`` (gloo) or
    ``reduce_scatter`` (NCCL), which read raw storage: a gradient that reaches the gathered
    tensor as a transposed view (e.g. through ``x.T @ ...``) would be exchanged scrambled.
    """

    @staticmethod
    def forward(ctx, x: Tensor) -> Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: Tensor) -> Tensor:
        return grad.contiguous()
