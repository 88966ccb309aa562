"""Small configs shared by the engine tests (tiny CPU model, the generated world)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]


def tiny_config(method: str, output_dir: Path, **sections: dict[str, Any]) -> dict[str, Any]:
    """A raw config for ``method`` on paper-tiny and a 64-sample world, logging every step."""
    raw: dict[str, Any] = {
        "method": method,
        "model": {"name": "paper-tiny", "context_length": 77},
        "data": {"dataset": "world", "size": 64, "image_size": 32},
        "optim": {"lr": 1e-3, "warmup_steps": 2},
        "train": {
            "steps": 4,
            "batch_size": 16,
            "log_every": 1,
            "diag_every": 2,
            "ckpt_every": 1000,
            "output_dir": str(output_dir),
            "progress": False,
        },
    }
    for name, values in sections.items():
        raw.setdefault(name, {}).update(values)
    return raw


def final_weights(output_dir: Path) -> dict[str, torch.Tensor]:
    """The model state of ``output_dir/last.pt``."""
    return torch.load(Path(output_dir) / "last.pt", weights_only=True)["model"]
