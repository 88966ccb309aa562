"""The engine's registries: training methods and training datasets by name.

``engine.config`` reads them to build and validate a config; ``engine.methods`` and
``engine.data`` register their entries into them when imported, and the ``paperlib.engine``
package imports both, so every entry is present whichever engine module is imported first.
Adding a method or a training dataset is adding one entry (docs/layout.md, "Adding a loss, a
dataset or a benchmark"; benchmarks are entries of ``engine.benchmarks.BENCHMARK_REGISTRY``,
which no config reads).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import nn
from torch.utils.data import Dataset, IterableDataset


def _never(config: Any) -> bool:
    return False


@dataclass(frozen=True)
class Method:
    """One training method: ``loss(batch, config) -> LossResult`` on the module's
    ``loss_batch`` view of the features, the dataclass of its ``loss`` config section
    (``config``), its training ``module`` (``engine.methods.EuclideanModule`` or
    ``HyperbolicModule``, whose ``geometry`` names its space), whether its batches carry a box
    crop and phrase per sample (``boxes``), and whether, for a given loss config, they carry
    short captions too (``short_text``, Long-CLIP)."""

    name: str
    loss: Callable[[Any, Any], Any]
    config: type
    module: type[nn.Module]
    boxes: bool = False
    short_text: Callable[[Any], bool] = _never

    @property
    def hyperbolic(self) -> bool:
        return self.module.geometry == "hyperbolic"


@dataclass(frozen=True)
class TrainingDataset:
    """One training dataset: ``build(data, transform, image_size)`` -> a torch
    (iterable) dataset of training items (dicts, see ``engine.data.Collate``); ``root``: it
    reads the folder ``data.root``; ``boxes``: its items carry a box crop and phrase (HyCoCLIP's
    and ARGENT's batches); ``generated``: it is made in memory, ``data.size`` samples;
    ``validation``: a held-out validation set of its kind exists (``engine.validation``);
    ``locate(data.root)``: how the root is found and checked (FileNotFoundError naming what is
    missing; default: a path that exists)."""

    name: str
    build: Callable[..., Dataset | IterableDataset]
    root: bool = False
    boxes: bool = False
    generated: bool = False
    validation: bool = False
    locate: Callable[[str], Any] | None = None


#: the training methods by name (``engine.methods`` registers them)
METHOD_REGISTRY: dict[str, Method] = {}
#: the training datasets by name (``engine.data`` registers them)
DATASET_REGISTRY: dict[str, TrainingDataset] = {}


def register(registry: dict[str, Any], *entries: Method | TrainingDataset) -> None:
    """Add each entry under its name; a name registered twice is a ValueError."""
    for entry in entries:
        if entry.name in registry:
            raise ValueError(f"{entry.name!r} is registered twice")
        registry[entry.name] = entry
