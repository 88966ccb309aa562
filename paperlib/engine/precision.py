"""Mixed precision: which autocast a training step or an evaluation pass runs under.

``train.precision`` and ``python -m paperlib.evaluate --precision``: ``bf16`` autocast (H100,
A100), ``fp16`` autocast (any CUDA GPU; training adds a loss scaler), ``fp32`` none, ``auto``
bf16 on CUDA and float32 on the CPU, so a CPU run computes exactly in float32.
"""

from __future__ import annotations

import contextlib

import torch

PRECISIONS = ("auto", "fp32", "bf16", "fp16")


def autocast_context(precision: str, device: torch.device):
    """bf16 autocast for ``bf16`` (or ``auto`` on CUDA), fp16 autocast for ``fp16``; nothing
    for float32. fp16 training also needs a loss scaler (``engine.loop.attach_grad_scaler``)."""
    if precision == "fp16":
        return torch.autocast(device.type, dtype=torch.float16)
    use_bf16 = precision == "bf16" or (precision == "auto" and device.type == "cuda")
    if not use_bf16:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16)
