"""Evaluate a checkpoint: ``python -m paperlib.evaluate CHECKPOINT [options]``.

    python -m paperlib.evaluate runs/himo-smoke --output results/himo-smoke
    python -m paperlib.evaluate runs/argent/last.pt --benchmarks world-hierarchy hierarcaps \\
        --hierarcaps-root ../shared/data/hierarcaps
    python -m paperlib.evaluate runs/himo/last.pt --benchmarks urban1k coco \\
        --root urban1k=data/Urban1k --root coco=data/coco --limit coco=1000

Real benchmarks read ``--root NAME=PATH`` folders in the layouts of
``paperlib.engine.evaluate.ROOT_LAYOUTS``; a missing one fails before anything is embedded.

Writes one CLIP_benchmark-format JSON per dataset and a merged ``results.md`` into
``--output``; embeddings are cached per checkpoint and dataset. Notebooks call :func:`run`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperlib.atomic import DiskFullError
from paperlib.engine.evaluate import BENCHMARKS, WORLD_BENCHMARKS, evaluate, markdown_table


def parse_assignments(pairs: Sequence[str], option: str, cast=str) -> dict[str, Any]:
    """``["NAME=VALUE", ...]`` -> {NAME: cast(VALUE)}; ValueError naming ``option`` otherwise."""
    out = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq or not name or not value:
            raise ValueError(f"{option} expects NAME=VALUE (e.g. urban1k=data/Urban1k); got {pair!r}")
        try:
            out[name] = cast(value)
        except ValueError:
            raise ValueError(f"{option} {pair!r}: {value!r} is not a valid {cast.__name__}") from None
    return out


def run(checkpoint: str | Path, output_dir: str | Path, **options: Any) -> list[dict[str, Any]]:
    """:func:`paperlib.engine.evaluate.evaluate` with its keyword options; returns the results."""
    return evaluate(checkpoint, output_dir=output_dir, **options)


def run_or_train(
    checkpoint: str | Path,
    output_dir: str | Path,
    *,
    train_config: str | Path | dict | None = None,
    benchmarks: Sequence[str] | None = None,
    hierarcaps_root: str | Path | None = None,
    root: str | Path = ".",
    **options: Any,
) -> list[dict[str, Any]]:
    """What the eval notebooks do: evaluate ``checkpoint`` (paths relative to ``root``).

    When the checkpoint is missing and ``train_config`` is given, that config is trained
    first, into the checkpoint's folder. ``benchmarks=None`` means every world benchmark.
    HierarCaps is added when ``hierarcaps_root`` exists
    and skipped with a message when it does not.
    """
    from paperlib.train import config_from
    from paperlib.train import run as train

    root = Path(root)
    path = root / checkpoint
    if not (path / "last.pt").is_file() and not path.is_file():
        if train_config is None:
            raise FileNotFoundError(f"checkpoint {path} not found and no train_config given")
        source = root / train_config if isinstance(train_config, (str, Path)) else train_config
        config = config_from(source)
        config.train.output_dir = str(path)
        train(config)
    benchmarks = list(WORLD_BENCHMARKS if benchmarks is None else benchmarks)
    if hierarcaps_root is not None:
        hierarcaps_root = (root / hierarcaps_root).expanduser()
        if hierarcaps_root.is_dir():
            benchmarks.append("hierarcaps")
        else:
            print(f"HierarCaps not found at {hierarcaps_root}: benchmark 'hierarcaps' skipped")
            hierarcaps_root = None
    return run(path, root / output_dir, benchmarks=benchmarks, hierarcaps_root=hierarcaps_root,
               **options)  # fmt: skip


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
    parser.add_argument("--root", action="append", default=[], metavar="NAME=PATH",
                        help="folder of a real benchmark (repeat per benchmark)")  # fmt: skip
    parser.add_argument("--limit", action="append", default=[], metavar="NAME=N",
                        help="keep the first N samples of a real benchmark")  # fmt: skip
    parser.add_argument("--noise-seed", type=int, default=0, help="seed of SSI's noise sentences")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--skip-bad-images", action="store_true",
                        help="leave out samples whose image does not decode (counted in the "
                             "results files) instead of stopping at the first")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        evaluate(
            args.checkpoint, args.benchmarks, output_dir=args.output, world_size=args.world_size,
            world_seed=args.world_seed, hierarcaps_root=args.hierarcaps_root,
            hierarcaps_limit=args.hierarcaps_limit,
            roots=parse_assignments(args.root, "--root", Path),
            limits=parse_assignments(args.limit, "--limit", int), noise_seed=args.noise_seed,
            batch_size=args.batch_size, device=args.device,
            skip_bad_images=args.skip_bad_images,
        )  # fmt: skip
    except (FileNotFoundError, ValueError, DiskFullError) as err:
        print(f"evaluate: {err}", file=sys.stderr)
        return 2
    print(markdown_table(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
