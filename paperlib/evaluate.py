"""Evaluate a checkpoint: ``python -m paperlib.evaluate CHECKPOINT [options]``.

    python -m paperlib.evaluate runs/himo-smoke --output results/himo-smoke
    python -m paperlib.evaluate runs/argent/last.pt --benchmarks world-hierarchy hierarcaps \\
        --hierarcaps-root ../shared/data/hierarcaps

Writes one CLIP_benchmark-format JSON per dataset and a merged ``results.md`` into
``--output``; embeddings are cached per checkpoint and dataset. Notebooks call :func:`run`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from paperlib.engine.evaluate import BENCHMARKS, WORLD_BENCHMARKS, evaluate, markdown_table


def run(checkpoint: str | Path, output_dir: str | Path, **options: Any) -> list[dict[str, Any]]:
    """:func:`paperlib.engine.evaluate.evaluate` with its keyword options; returns the results."""
    return evaluate(checkpoint, output_dir=output_dir, **options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.evaluate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("checkpoint", type=Path, help="a training run folder or its last.pt")
    parser.add_argument("--output", type=Path, required=True, help="results folder")
    parser.add_argument(
        "--benchmarks", nargs="+", default=list(WORLD_BENCHMARKS), choices=BENCHMARKS
    )
    parser.add_argument("--world-size", type=int, default=256)
    parser.add_argument("--world-seed", type=int, default=12345)
    parser.add_argument("--hierarcaps-root", type=Path)
    parser.add_argument("--hierarcaps-limit", type=int)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    try:
        evaluate(
            args.checkpoint, args.benchmarks, output_dir=args.output, world_size=args.world_size,
            world_seed=args.world_seed, hierarcaps_root=args.hierarcaps_root,
            hierarcaps_limit=args.hierarcaps_limit, batch_size=args.batch_size, device=args.device,
        )  # fmt: skip
    except (FileNotFoundError, ValueError) as err:
        print(f"evaluate: {err}", file=sys.stderr)
        return 2
    print(markdown_table(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
