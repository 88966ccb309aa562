"""Samples/s of the procedural world at 64 px with every text, on one core.

Goal: >= 2,000 samples/s. Measures ``World.sample`` (image, crops, description, segments,
chain, phrases, noise, COLA query, ground truth) and ``WorldDataset`` items (plus tensors and
the resized box crop), single process, ``torch.set_num_threads(1)``; best of 3 repeats. Then, at
the study's 32 px, the same training items drawn (``WorldDataset``) beside served from the
rendered-once cache (``CachedWorldDataset``), and the ratio of the two measured in this run.
Run: ``.venv/bin/python benchmarks/bench_world.py [--samples 3000] [--items 2000]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

from paperlib.data.world import World, WorldDataset
from paperlib.data.world_cache import CachedWorldDataset

GOAL = 2000.0


def rate(make, count: int, repeats: int = 3) -> float:
    """Best samples/s over ``repeats`` runs of ``count`` fresh indices."""
    best = 0.0
    for r in range(repeats):
        start = time.perf_counter()
        for index in range(r * count, (r + 1) * count):
            make(index)
        best = max(best, count / (time.perf_counter() - start))
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000, help="World.sample calls a repeat")
    parser.add_argument("--items", type=int, default=2000, help="WorldDataset items a repeat")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    world = World(seed=0, image_size=64)
    dataset = WorldDataset(seed=0, size=10**6, image_size=64)
    world.sample(0), dataset[0]  # warm the per-size caches
    sample_rate = rate(world.sample, args.samples)
    item_rate = rate(dataset.__getitem__, args.items)
    print(
        f"World.sample, 64 px, all texts, 1 core: {sample_rate:,.0f} samples/s "
        f"({sample_rate / GOAL:.2f}x the {GOAL:,.0f}/s goal)"
    )
    print(
        f"WorldDataset item (+ tensors, box resize), 64 px, 1 core: {item_rate:,.0f} samples/s "
        f"({item_rate / GOAL:.2f}x the goal)"
    )
    size = 3 * args.items
    drawn = WorldDataset(seed=1, size=size, image_size=32)
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        cached = CachedWorldDataset(cache, seed=1, size=size, image_size=32)
        render = size / (time.perf_counter() - start)
        drawn_rate, cached_rate = (
            rate(drawn.__getitem__, args.items),
            rate(cached.__getitem__, args.items),
        )
    print(
        f"training items at 32 px, 1 core: drawn {drawn_rate:,.0f}/s, from the cache "
        f"{cached_rate:,.0f}/s ({cached_rate / drawn_rate:.1f}x); rendering the cache once "
        f"{render:,.0f} items/s"
    )


if __name__ == "__main__":
    main()
