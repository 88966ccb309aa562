"""Small configs shared by the engine tests (tiny CPU model, the generated world), and raw
shard records written as a tar file."""

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


def shards_config(
    method: str, root: Path, samples: int, maxcount: int, **train_values: Any
) -> dict[str, Any]:
    """A tiny config training ``method`` on ``samples`` world samples written as GRIT-layout
    shards of ``maxcount`` under ``root/shards`` (run folder ``root/run``)."""
    from paperlib.data.webdataset import write_shards
    from paperlib.data.world import World

    world = World(seed=3, image_size=32)
    write_shards((world.sample(i) for i in range(samples)), root / "shards", maxcount=maxcount)
    return tiny_config(
        method,
        root / "run",
        train=train_values,
        data={"dataset": "webdataset", "root": str(root / "shards")},
    )


def write_records(path: Path, records: list[dict[str, Any]]) -> Path:
    """Raw webdataset records (``__key__`` and bytes values) as the tar file ``path``."""
    import webdataset as wds  # deferred: only the shard tests need it

    path.parent.mkdir(parents=True, exist_ok=True)
    with wds.TarWriter(str(path)) as sink:
        for record in records:
            sink.write(record)
    return path
