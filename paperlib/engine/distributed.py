"""torch.distributed set-up from torchrun's environment, rank helpers and DDP wrapping
(``docs/methods/conventions.md#distributed``).

Single process (no ``WORLD_SIZE`` or ``WORLD_SIZE=1``): nothing is initialised and every helper
is the identity. Under ``torchrun`` (one node or several, through its own rendezvous) the
process group is initialised from the environment (``env://``): gloo on CPU, NCCL on GPU.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn

from paperlib.collectives import is_distributed


@dataclass(frozen=True)
class DistInfo:
    """This process's place: global ``rank``, ``world_size``, ``local_rank``, its ``device``."""

    rank: int
    world_size: int
    local_rank: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as err:
        raise ValueError(f"environment variable {name}={value!r} is not an integer") from err


class DeviceError(ValueError):
    """``train.device`` names a device this machine does not have."""


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now (for a local rendezvous of ``torchrun`` or ``mp.spawn``)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def pick_device(
    device: str | torch.device = "auto", local_rank: int = 0, option: str = "train.device"
) -> torch.device:
    """``auto``: this rank's GPU (``cuda:local_rank``) when CUDA is available, else CPU; a
    :class:`DeviceError` naming ``option`` for a device torch does not know or a CUDA device
    the machine lacks."""
    if device == "auto":
        device = f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu"
    elif device == "cuda":
        device = f"cuda:{local_rank}"
    try:
        picked = torch.device(device)
    except (RuntimeError, TypeError):
        raise DeviceError(
            f"{option}={str(device)[:60]!r} is not a device; expected auto, cpu, cuda or cuda:N"
        ) from None
    if picked.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (picked.index or 0) >= count:
            raise DeviceError(
                f"{option}={str(device)!r}: this machine has {count} CUDA device(s); "
                "use 'auto' or 'cpu', or a GPU index below the count"
            )
    return picked


def init_distributed(device: str = "auto", backend: str | None = None) -> DistInfo:
    """Initialise from torchrun's ``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` (``env://``).

    ``backend`` defaults to NCCL on CUDA and gloo on CPU. Safe to call twice.
    """
    world_size = _env_int("WORLD_SIZE", 1)
    rank, local_rank = _env_int("RANK", 0), _env_int("LOCAL_RANK", 0)
    dev = pick_device(device, local_rank)
    if dev.type == "cuda":
        torch.cuda.set_device(dev)
    if world_size > 1 and not dist.is_initialized():
        backend = backend or ("nccl" if dev.type == "cuda" else "gloo")
        dist.init_process_group(backend=backend, init_method="env://")
    if dist.is_initialized():
        rank, world_size = dist.get_rank(), dist.get_world_size()
    return DistInfo(rank, world_size, local_rank, dev)


def cleanup() -> None:
    """Destroy the process group if one exists."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def rank() -> int:
    return dist.get_rank() if is_distributed() else 0


def world_size() -> int:
    return dist.get_world_size() if is_distributed() else 1


def is_main() -> bool:
    return rank() == 0


def barrier() -> None:
    if is_distributed():
        dist.barrier()


def any_true(flag: bool, device: torch.device | str = "cpu") -> bool:
    """True if ``flag`` is true on any rank (one all-reduce; the flag itself off-distributed)."""
    if not is_distributed():
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item())


def mean_across_ranks(values: torch.Tensor) -> torch.Tensor:
    """All-reduce mean of a (detached) tensor; the tensor itself off-distributed."""
    if not is_distributed():
        return values
    values = values.clone()
    dist.all_reduce(values)
    return values / dist.get_world_size()


def average_gradients(params: list[nn.Parameter]) -> None:
    """All-reduce-mean the ``.grad`` of ``params`` (what DDP does, for steps run under no_sync)."""
    if not is_distributed():
        return
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= dist.get_world_size()
    offset = 0
    for g in grads:
        g.copy_(flat[offset : offset + g.numel()].view_as(g))
        offset += g.numel()


def all_gather_objects(obj):
    """Every rank's ``obj`` as a list indexed by rank (``[obj]`` off-distributed)."""
    if not is_distributed():
        return [obj]
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def wrap_ddp(model: nn.Module, info: DistInfo, find_unused_parameters: bool = False) -> nn.Module:
    """DistributedDataParallel around ``model`` when world_size > 1, else ``model`` itself."""
    if info.world_size <= 1:
        return model
    device_ids = [info.device.index] if info.device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(
        model, device_ids=device_ids, find_unused_parameters=find_unused_parameters
    )


def unwrap(model: nn.Module) -> nn.Module:
    """The module inside a DDP wrapper (or ``model`` itself)."""
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model
