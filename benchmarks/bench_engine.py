"""Training-loop overhead and evaluation throughput on the small CPU model.

Overhead: ``engine.loop.train`` (DDP-ready step, NaN check, schedule, clamps, JSON-lines log,
tqdm, SIGTERM flag) against a bare loop (forward, loss, backward, AdamW) over the same
module, optimiser settings and DataLoader (same batches). Step times are medians over
5-step intervals, ours and bare alternating in one process; goal: overhead <= 5 %. On a
shared machine the minimum interval (the least disturbed) is printed beside the median.
Evaluation: one embedding pass over the generated world (images/s, texts/s), then the
metrics from the cache.

    .venv/bin/python benchmarks/bench_engine.py [--steps 60] [--batch 64] [--repeats 3]
        [--methods clip himo argent] [--eval-size 256]

Every training (each method, each repeat) and each evaluation gets a folder of its own.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from paperlib.engine.config import load_config
from paperlib.engine.data import build_dataset, build_loader
from paperlib.engine.evaluation import evaluate
from paperlib.engine.loop import build_optimizer, train
from paperlib.engine.methods import build_module

INTERVAL = 5


def config_for(method: str, out: Path, steps: int, batch: int):
    return load_config(
        {
            "method": method,
            "model": {"name": "paper-tiny", "context_length": 77},
            "data": {"dataset": "world", "size": steps * batch, "image_size": 32},
            "optim": {"lr": 1e-4, "warmup_steps": 5},
            "train": {
                "steps": steps,
                "batch_size": batch,
                "log_every": INTERVAL,
                "diag_every": 50,
                "ckpt_every": 10**9,
                "output_dir": str(out),
                "resume": False,
                "device": "cpu",
                "progress": False,
            },
        }
    )


def ours(config) -> list[float]:
    """Seconds per step of train(), from its own log intervals (samples/s)."""
    history = train(config).history
    return [config.train.batch_size / r["samples_per_s"] for r in history[1:]]  # skip warm-up


def bare(config) -> tuple[list[float], list[float]]:
    """Seconds per step of a bare loop, and of the data loading alone, same loader."""
    torch.manual_seed(config.train.seed)
    module, preprocess, tokenizer = build_module(config)
    optimizer, _ = build_optimizer(module, config)
    dataset = build_dataset(config.data, preprocess, image_size=32)
    times, tick = [], time.perf_counter()
    loader = build_loader(config, dataset, tokenizer, rank=0, world_size=1, start_step=0)
    for i, batch in enumerate(loader, 1):
        optimizer.zero_grad(set_to_none=True)
        out = module.compute_loss(module(batch))
        out.total.backward()
        optimizer.step()
        if i % INTERVAL == 0:
            now = time.perf_counter()
            times.append((now - tick) / INTERVAL)
            tick = now
    data, tick = [], time.perf_counter()
    for i, _ in enumerate(
        build_loader(config, dataset, tokenizer, rank=0, world_size=1, start_step=0), 1
    ):
        if i % INTERVAL == 0:
            now = time.perf_counter()
            data.append((now - tick) / INTERVAL)
            tick = now
    return times[1:], data[1:]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=["clip", "himo", "argent"])
    parser.add_argument("--eval-size", type=int, default=256, help="held-out world samples")
    args = parser.parse_args(argv)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, paper-tiny, batch "
        f"{args.batch}, {args.steps} steps x {args.repeats} repeats, medians of {INTERVAL}-step intervals"
    )
    print(
        f"{'method':8} {'ours s/step':>12} {'bare s/step':>12} {'data s/step':>12} "
        f"{'overhead':>9} | {'ours min':>9} {'bare min':>9} {'overhead':>9}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for method in args.methods:
            o, b, d = [], [], []
            for repeat in range(args.repeats):
                config = config_for(
                    method, Path(tmp) / f"{method}-{repeat}", args.steps, args.batch
                )
                o += ours(config)
                bb, dd = bare(config)
                b += bb
                d += dd
            mo, mb, md = statistics.median(o), statistics.median(b), statistics.median(d)
            lo, lb = min(o), min(b)
            print(
                f"{method:8} {mo:12.4f} {mb:12.4f} {md:12.4f} {100 * (mo / mb - 1):8.1f}% | "
                f"{lo:9.4f} {lb:9.4f} {100 * (lo / lb - 1):8.1f}%"
            )
        run = train(config_for("argent", Path(tmp) / "eval-run", 2, 16))
        for size in (args.eval_size,):
            start = time.perf_counter()
            evaluate(run.output_dir, output_dir=Path(tmp) / "eval", world_size=size)
            first = time.perf_counter() - start
            start = time.perf_counter()  # the same folder: the second pass reads its cache
            rows = evaluate(run.output_dir, output_dir=Path(tmp) / "eval", world_size=size)
            cached = time.perf_counter() - start
            print(
                f"evaluate (argent, paper-tiny, world {size} images + ~{size * 14} texts, "
                f"{len(rows)} result files): first pass {first:.1f} s "
                f"({size / first:.0f} images/s incl. texts and metrics), from cache {cached:.2f} s"
            )


if __name__ == "__main__":
    main()
