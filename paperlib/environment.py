"""What a result was computed with: Python, package versions, torch's CPU kernels and threads.

Every study run record (``run.done``), ``study.json`` and the pre-trained bases carry
:func:`environment`, and ``paperlib.study.compare`` prints how a reproducing environment
differs from the committed one (:func:`environment_differences`). CPU training is not
bit-reproducible across machines: the kernels torch dispatches to (``ATEN_CPU_CAPABILITY``,
oneDNN's and MKL's own instruction-set choice) and the number of threads change the order of
floating-point sums.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from typing import Any

import torch

# the distributions whose versions a result depends on
PACKAGES = (
    "torch",
    "torchvision",
    "open_clip_torch",
    "timm",
    "numpy",
    "scipy",
    "scikit-learn",
    "pillow",
    "webdataset",
)
# environment variables that choose CPU kernels or threads
KERNEL_VARIABLES = (
    "ATEN_CPU_CAPABILITY",
    "ONEDNN_MAX_CPU_ISA",
    "MKL_ENABLE_INSTRUCTIONS",
    "MKL_CBWR",
    "OMP_NUM_THREADS",
)


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (None where it is not installed)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def environment() -> dict[str, Any]:
    """This process's computing environment, as JSON-ready data."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "packages": package_versions(),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch_threads": torch.get_num_threads(),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "variables": {k: os.environ[k] for k in KERNEL_VARIABLES if k in os.environ},
        "executable": os.path.basename(sys.executable),
    }


def _flat(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def environment_differences(
    committed: dict[str, Any], current: dict[str, Any]
) -> list[tuple[str, Any, Any]]:
    """``(key, committed value, current value)`` for every entry that differs (dotted keys;
    a key one side lacks shows as None)."""
    a, b = _flat(committed), _flat(current)
    return [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
