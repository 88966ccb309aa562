"""BatchNorm's running statistics, where a tower has them (the study's ResNets; ViTs have none).

A fine-tune that encodes images and box crops in one pass (HyCoCLIP, ARGENT) would move the
running statistics to those of the mix; ``model.batchnorm: frozen`` keeps the checkpoint's
instead: every BatchNorm layer stays in eval mode (normalising with, and never updating, the
statistics it was loaded with) while its affine weights train
(docs/methods/argent.md#box-crop-norms).
"""

from __future__ import annotations

from typing import Literal

from torch import nn

BatchNormMode = Literal["train", "frozen"]


def batchnorm_layers(module: nn.Module) -> list[nn.modules.batchnorm._BatchNorm]:
    """Every BatchNorm layer of ``module`` (1-d, 2-d, 3-d and synchronised ones alike)."""
    return [m for m in module.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]


def untrained_batchnorm(module: nn.Module) -> bool:
    """Whether ``module`` has a BatchNorm layer whose running statistics were never updated
    (``num_batches_tracked`` 0: a randomly initialised tower)."""
    return any(
        m.num_batches_tracked is not None and int(m.num_batches_tracked) == 0
        for m in batchnorm_layers(module)
    )


class BatchNormStatistics(nn.Module):
    """A training module whose ``train()`` honours ``batchnorm``: ``train`` (PyTorch's own
    behaviour: batch statistics in training, running ones updated) or ``frozen`` (every
    BatchNorm layer in eval mode whatever the module's mode, so the loaded running statistics
    normalise every pass and none is updated; γ and β still receive gradients)."""

    batchnorm: BatchNormMode = "train"

    def train(self, mode: bool = True) -> BatchNormStatistics:
        super().train(mode)
        if self.batchnorm == "frozen":
            for layer in batchnorm_layers(self):
                layer.eval()
        return self
