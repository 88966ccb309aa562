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


def comparable(state: dict[str, torch.Tensor], key: str) -> torch.Tensor:
    """The tensor ``key`` without attention key biases: their gradient is exactly zero (softmax
    is shift-invariant), so Adam turns float noise (which MKL may order differently in another
    process) into lr-sized steps; they carry no information about the run."""
    value = state[key]
    if key.endswith("in_proj_bias"):
        width = value.shape[0] // 3
        return torch.cat([value[:width], value[2 * width :]])
    return value


def initial_weights(raw: dict[str, Any], output_dir: Path) -> dict[str, torch.Tensor]:
    """The model state a run of ``raw`` starts from: the same config trained for 0 steps."""
    from paperlib.engine.loop import train  # deferred: the shard helpers do not need the engine

    train_section = {**raw["train"], "steps": 0, "output_dir": str(output_dir)}
    train({**raw, "train": train_section})
    return final_weights(output_dir)


def assert_same_updates(
    start: dict[str, torch.Tensor],
    expected: dict[str, torch.Tensor],
    got: dict[str, torch.Tensor],
    rel: float = 1e-2,
) -> None:
    """Each tensor of ``got`` moved from ``start`` as ``expected`` did, to ``rel`` of the size of
    the expected update: ‖Δgot − Δexpected‖ ≤ rel · ‖Δexpected‖ + 1e-6.

    Element-wise tolerances do not hold across CPU kernel sets: Adam divides each gradient element
    by its own running scale, so an element whose gradient is float noise steps by up to lr either
    way. Relative to a whole tensor's update, those elements are small."""
    assert expected.keys() == got.keys()
    for key in expected:
        first = comparable(start, key).double()
        want = comparable(expected, key).double() - first
        moved = comparable(got, key).double() - first
        error, size = float((moved - want).norm()), float(want.norm())
        assert error <= rel * size + 1e-6, f"{key}: update differs by {error:.3g} of {size:.3g}"


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
