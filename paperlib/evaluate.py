"""Evaluate a checkpoint: ``python -m paperlib.evaluate CHECKPOINT [options]``.

    python -m paperlib.evaluate runs/himo-smoke --output results/himo-smoke
    python -m paperlib.evaluate runs/argent/last.pt --benchmarks world-hierarchy hierarcaps \\
        --hierarcaps-root ../shared/data/hierarcaps
    python -m paperlib.evaluate runs/himo/last.pt --benchmarks urban1k coco \\
        --root urban1k=data/Urban1k --root coco=data/coco --limit coco=1000

Released weights (``paperlib.engine.released.RELEASED_MODELS``) with ``--model``:

    python -m paperlib.evaluate --model longclip-l14 --checkpoint longclip-L.pt \\
        --benchmarks urban1k docci --root urban1k=data/Urban1k --root docci=data/docci --output out
    python -m paperlib.evaluate --model hycoclip-vit-b --checkpoint hycoclip_vit_b.pth \\
        --benchmarks hierarcaps --hierarcaps-root ../shared/data/hierarcaps --output out
    python -m paperlib.evaluate --model clip-vit-b16 --benchmarks coco --root coco=... --output out

Real benchmarks read ``--root NAME=PATH`` folders in the layouts of
``paperlib.engine.benchmarks.BENCHMARK_REGISTRY``; a missing one fails before anything is
embedded. PEP on HierarCaps follows ``--pep-kept`` / ``--pep-negatives`` / ``--pep-pool``.

Writes one CLIP_benchmark-format JSON per dataset and a merged ``results.md`` into
``--output``, and for a registry model ``published.md``: its numbers beside the papers'.
Embeddings are cached per checkpoint and dataset. Notebooks call :func:`run_or_train`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperlib.atomic import DiskFullError, atomic_write_text
from paperlib.engine.benchmarks import BENCHMARKS, PEP_NEGATIVES, WORLD_BENCHMARKS, PEPProtocol
from paperlib.engine.evaluation import evaluate, markdown_table
from paperlib.engine.released import RELEASED_MODELS, released_model
from paperlib.tables.beside_published import beside_published, markdown
from paperlib.train import config_from, train_run


def parse_assignments(pairs: Sequence[str], option: str, cast=str) -> dict[str, Any]:
    """``["NAME=VALUE", ...]`` -> {NAME: cast(VALUE)}; ValueError naming ``option`` otherwise."""
    out = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq or not name or not value:
            raise ValueError(
                f"{option} expects NAME=VALUE (e.g. urban1k=data/Urban1k); got {pair!r}"
            )
        try:
            out[name] = cast(value)
        except ValueError:
            raise ValueError(
                f"{option} {pair!r}: {value!r} is not a valid {cast.__name__}"
            ) from None
    return out


def read_ids(path: str | Path, option: str) -> tuple[int, ...]:
    """Row ids from a file: a JSON list of integers, or one integer per line (``#`` comments);
    ValueError naming ``option``, the file and the first bad entry otherwise."""
    import json

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{option}: id file {path} not found")
    text = path.read_text(encoding="utf-8")
    try:
        entries = (
            json.loads(text)
            if text.lstrip().startswith("[")
            else [line.split("#")[0].strip() for line in text.splitlines()]
        )
    except json.JSONDecodeError as err:
        raise ValueError(f"{option}: {path} is not a JSON list of ids ({err})") from None
    entries = [e for e in entries if e != ""]
    bad = [e for e in entries if isinstance(e, bool) or not str(e).isdigit()]
    if bad or not entries:
        raise ValueError(
            f"{option}: {path} must list non-negative integer row ids; got {bad[:1] or 'no ids'}"
        )
    return tuple(int(e) for e in entries)


def write_published(output_dir: str | Path, model: str, rows: list[dict[str, Any]]) -> str | None:
    """``published.md`` beside the results when ``model`` has published numbers; its text."""

    refs = released_model(model).published
    if not refs:
        return None
    text = markdown(beside_published(rows, refs))
    atomic_write_text(Path(output_dir) / "published.md", text + "\n")
    return text


def evaluate_run(
    checkpoint: str | Path, output_dir: str | Path, **options: Any
) -> list[dict[str, Any]]:
    """:func:`paperlib.engine.evaluation.evaluate` with its keyword options; returns the results."""
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

    root = Path(root)
    path = root / checkpoint
    if not (path / "last.pt").is_file() and not path.is_file():
        if train_config is None:
            raise FileNotFoundError(f"checkpoint {path} not found and no train_config given")
        source = root / train_config if isinstance(train_config, (str, Path)) else train_config
        config = config_from(source)
        config.train.output_dir = str(path)
        train_run(config)
    benchmarks = list(WORLD_BENCHMARKS if benchmarks is None else benchmarks)
    if hierarcaps_root is not None:
        hierarcaps_root = (root / hierarcaps_root).expanduser()
        if hierarcaps_root.is_dir():
            benchmarks.append("hierarcaps")
        else:
            print(f"HierarCaps not found at {hierarcaps_root}: benchmark 'hierarcaps' skipped")
            hierarcaps_root = None
    return evaluate_run(
        path, root / output_dir, benchmarks=benchmarks, hierarcaps_root=hierarcaps_root, **options
    )


def _add_released_options(parser: argparse.ArgumentParser) -> None:
    """``--model`` / ``--pretrained`` (released weights) and HierarCaps' PEP protocol."""
    parser.add_argument(
        "--model",
        help="read the checkpoint as this released model: one of "
        f"{sorted(RELEASED_MODELS)}, openclip:NAME or hf-hub:ORG/REPO",
    )
    parser.add_argument("--pretrained", help="open_clip pretrained tag (openclip models)")
    parser.add_argument("--pep-kept", type=Path, help="HierarCaps rows PEP keeps (ids file)")
    parser.add_argument("--pep-negatives", choices=PEP_NEGATIVES, default="per-image")
    parser.add_argument("--pep-pool", type=Path, help="rows of the shared negative pool (ids file)")
    parser.add_argument("--pep-pool-size", type=int, default=100)


def _parser() -> argparse.ArgumentParser:
    """The command line of ``python -m paperlib.evaluate``."""
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.evaluate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "checkpoint",
        type=Path,
        nargs="?",
        help="a training run folder or its last.pt (or use --checkpoint)",
    )
    parser.add_argument(
        "--checkpoint",
        dest="checkpoint_file",
        type=Path,
        help="weights file (a released checkpoint with --model)",
    )
    _add_released_options(parser)
    parser.add_argument("--output", type=Path, required=True, help="results folder")
    parser.add_argument(
        "--benchmarks", nargs="+", default=list(WORLD_BENCHMARKS), choices=BENCHMARKS
    )
    parser.add_argument("--world-size", type=int, default=256)
    parser.add_argument("--world-seed", type=int, default=12345)
    parser.add_argument("--hierarcaps-root", type=Path)
    parser.add_argument("--hierarcaps-limit", type=int)
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="folder of a real benchmark (repeat per benchmark)",
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=N",
        help="keep the first N samples of a real benchmark",
    )
    parser.add_argument("--noise-seed", type=int, default=0, help="seed of SSI's noise sentences")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--skip-bad-images",
        action="store_true",
        help="leave out samples whose image does not decode (counted in the "
        "results files) instead of stopping at the first",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        checkpoint = _checkpoint_argument(parser, args)
        pep = PEPProtocol(
            kept=read_ids(args.pep_kept, "--pep-kept") if args.pep_kept else None,
            negatives=args.pep_negatives,
            pool_size=args.pep_pool_size,
            pool=read_ids(args.pep_pool, "--pep-pool") if args.pep_pool else None,
        )
        rows = evaluate(
            checkpoint,
            args.benchmarks,
            output_dir=args.output,
            world_size=args.world_size,
            model=args.model,
            pep=pep,
            world_seed=args.world_seed,
            hierarcaps_root=args.hierarcaps_root,
            hierarcaps_limit=args.hierarcaps_limit,
            roots=parse_assignments(args.root, "--root", Path),
            limits=parse_assignments(args.limit, "--limit", int),
            noise_seed=args.noise_seed,
            batch_size=args.batch_size,
            device=args.device,
            skip_bad_images=args.skip_bad_images,
        )
    except (FileNotFoundError, ValueError, DiskFullError) as err:
        print(f"evaluate: {err}", file=sys.stderr)
        return 2
    print(markdown_table(args.output))
    if args.model and (text := write_published(args.output, args.model, rows)):
        print("\nBeside the published numbers:\n" + text)
    return 0


def _checkpoint_argument(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """The one checkpoint given (positional, ``--checkpoint`` or ``--pretrained``)."""
    given = [x for x in (args.checkpoint, args.checkpoint_file, args.pretrained) if x is not None]
    if len(given) > 1:
        parser.error("give the checkpoint once (positional, --checkpoint or --pretrained)")
    if not given and args.model is None:
        parser.error("a checkpoint is required (a run folder or last.pt), or --model")
    return given[0] if given else None


if __name__ == "__main__":
    sys.exit(main())
