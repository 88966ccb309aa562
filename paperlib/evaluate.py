"""Evaluate a checkpoint: ``python -m paperlib.evaluate CHECKPOINT [options]``, for example::

    python -m paperlib.evaluate runs/himo-smoke --output results/himo-smoke
    python -m paperlib.evaluate runs/argent/last.pt --benchmarks world-hierarchy hierarcaps \\
        --hierarcaps-root ../shared/data/hierarcaps
    python -m paperlib.evaluate runs/himo/last.pt --benchmarks urban1k coco \\
        --root urban1k=data/Urban1k --root coco=data/coco --limit coco=1000

Released weights (``paperlib.engine.released.RELEASED_MODELS``) with ``--model``::

    python -m paperlib.evaluate --model longclip-l14 --checkpoint longclip-L.pt \\
        --benchmarks urban1k docci --root urban1k=data/Urban1k --root docci=data/docci --output out
    python -m paperlib.evaluate --model hycoclip-vit-b --checkpoint hycoclip_vit_b.pth \\
        --benchmarks hierarcaps --hierarcaps-root ../shared/data/hierarcaps --output out
    python -m paperlib.evaluate --model clip-vit-b16 --benchmarks coco --root coco=... --output out

Real benchmarks read ``--root NAME=PATH`` folders in the layouts of
``paperlib.engine.benchmarks.BENCHMARK_REGISTRY`` (CLIP_benchmark's names, e.g.
``mscoco_captions``, are accepted); every missing one is named before anything is embedded.
PEP on HierarCaps follows ``--pep-kept`` / ``--pep-negatives`` / ``--pep-pool``. Images are
decoded by ``--num-workers`` DataLoader processes; under ``torchrun`` the embedding passes are
shared by the ranks (``torchrun --nproc_per_node 8 -m paperlib.evaluate RUN --device cuda
...``) and rank 0 writes the results.

Writes one CLIP_benchmark-format JSON per dataset and a merged ``results.md`` into
``--output``, and for a registry model ``published.md``: its numbers beside the papers'.
Embeddings are cached per checkpoint and dataset. Notebooks call :func:`run_or_train`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperlib import exit_status
from paperlib.atomic import WriteError, atomic_write_text
from paperlib.engine import distributed
from paperlib.engine.benchmarks import (
    BENCHMARK_ALIASES,
    BENCHMARKS,
    CAPTION_SETS,
    PEP_NEGATIVES,
    REAL_BENCHMARKS,
    RETRIEVAL_TRANSFORMS,
    WORLD_BENCHMARKS,
    PEPProtocol,
    canonical_benchmark,
    check_roots,
)
from paperlib.engine.evaluation import evaluate, markdown_table
from paperlib.engine.precision import PRECISIONS
from paperlib.engine.released import RELEASED_MODELS, released_model
from paperlib.tables.beside_published import beside_published, markdown
from paperlib.train import config_from, train_run
from paperlib.untrusted import error_text


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
    return write_beside_published(output_dir, released_model(model).published, rows)


def write_beside_published(
    output_dir: str | Path, refs: Sequence[Sequence[str]], rows: list[dict[str, Any]]
) -> str | None:
    """``published.md``: ``rows`` beside the published rows ``refs`` ((table, model, arch)
    of ``tables/published.json``), Δ and protocol marks included; its text (None: no refs)."""
    if not refs:
        return None
    text = markdown(beside_published(rows, [tuple(r) for r in refs]))
    atomic_write_text(Path(output_dir) / "published.md", text + "\n")
    return text


def pep_protocol(
    kept: str | Path | None = None,
    negatives: str = "per-image",
    pool: str | Path | None = None,
    pool_size: int = 100,
) -> PEPProtocol:
    """HierarCaps' PEP protocol from id files (:func:`read_ids`): the ``kept`` rows and the
    shared ``pool`` rows, the ``negatives`` rule and ``pool_size``."""
    return PEPProtocol(
        kept=read_ids(kept, "--pep-kept") if kept else None,
        negatives=negatives,
        pool_size=pool_size,
        pool=read_ids(pool, "--pep-pool") if pool else None,
    )


def check_real_roots(benchmarks: Sequence[str], roots: dict[str, Any]) -> None:
    """Every real benchmark's folder and layout (``engine.benchmarks.check_roots``), checked
    before anything is trained or built; one FileNotFoundError naming every one missing."""
    names = [canonical_benchmark(n) for n in benchmarks]
    given = {canonical_benchmark(k): v for k, v in roots.items()}
    check_roots([n for n in names if n in REAL_BENCHMARKS or n == "hierarcaps"], given)


def evaluate_run(
    checkpoint: str | Path, output_dir: str | Path, **options: Any
) -> list[dict[str, Any]]:
    """:func:`paperlib.engine.evaluation.evaluate` with its keyword options; returns the results."""
    return evaluate(checkpoint, output_dir=output_dir, **options)


def _benchmark_roots(
    root: Path,
    benchmarks: Sequence[str] | None,
    roots: dict[str, str | Path] | None,
    hierarcaps_root: str | Path | None,
) -> tuple[list[str], dict[str, Path]]:
    """:func:`run_or_train`'s benchmarks (None: every world benchmark) and their folders
    relative to ``root``; the older ``hierarcaps_root`` adds HierarCaps when it exists and
    skips it with a message when it does not."""
    benchmarks = list(WORLD_BENCHMARKS if benchmarks is None else benchmarks)
    folders = {name: (root / folder).expanduser() for name, folder in (roots or {}).items()}
    if hierarcaps_root is not None and "hierarcaps" not in folders:
        hierarcaps_root = (root / hierarcaps_root).expanduser()
        if hierarcaps_root.is_dir():
            benchmarks.append("hierarcaps")
            folders["hierarcaps"] = hierarcaps_root
        else:
            print(f"HierarCaps not found at {hierarcaps_root}: benchmark 'hierarcaps' skipped")
    return benchmarks, folders


def run_or_train(
    checkpoint: str | Path | None,
    output_dir: str | Path,
    *,
    train_config: str | Path | dict | None = None,
    benchmarks: Sequence[str] | None = None,
    hierarcaps_root: str | Path | None = None,
    roots: dict[str, str | Path] | None = None,
    pep: dict[str, Any] | None = None,
    published: Sequence[Sequence[str]] = (),
    model: str | None = None,
    root: str | Path = ".",
    **options: Any,
) -> list[dict[str, Any]]:
    """What the eval notebooks do: evaluate ``checkpoint`` (paths relative to ``root``).

    ``roots`` maps each real benchmark (and ``hierarcaps``) to its folder; every one that
    ``benchmarks`` names is checked, with the layout expected, before anything is trained
    or built. When the checkpoint is missing and ``train_config`` is given, that config is
    trained first, into the checkpoint's folder. ``benchmarks=None`` means every world
    benchmark. The older ``hierarcaps_root`` adds HierarCaps when it exists and skips it
    with a message when it does not. ``pep``: :func:`pep_protocol`'s keywords (id files
    relative to ``root``). ``model``: read ``checkpoint`` as that released model.
    ``published``: the (table, model, arch) rows of ``tables/published.json`` that
    ``published.md`` sets beside the results (a released model's own rows by default).
    """
    root = Path(root)
    benchmarks, roots = _benchmark_roots(root, benchmarks, roots, hierarcaps_root)
    check_real_roots(benchmarks, roots)
    files = ("kept", "pool")
    pep_options = {k: (root / v if k in files and v else v) for k, v in (pep or {}).items()}
    protocol = pep_protocol(**pep_options)
    if model is not None:
        path = None if checkpoint is None else root / checkpoint
        rows = evaluate_run(
            path, root / output_dir, benchmarks=benchmarks, roots=roots, pep=protocol,
            model=model, **options,
        )  # fmt: skip
        write_beside_published(
            root / output_dir, published or released_model(model).published, rows
        )
        return rows
    path = root / checkpoint
    if not (path / "last.pt").is_file() and not path.is_file():
        if train_config is None:
            raise FileNotFoundError(f"checkpoint {path} not found and no train_config given")
        source = root / train_config if isinstance(train_config, (str, Path)) else train_config
        config = config_from(source)
        config.train.output_dir = str(path)
        train_run(config)
    rows = evaluate_run(
        path, root / output_dir, benchmarks=benchmarks, roots=roots, pep=protocol, **options
    )
    write_beside_published(root / output_dir, published, rows)
    return rows


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
    parser.add_argument(
        "--retrieval-transform",
        choices=RETRIEVAL_TRANSFORMS,
        help="COCO/Flickr30k images: crop (CLIP, Long-CLIP, HiMo) or squeeze (MERU, "
        "HyCoCLIP); default: the model family's reference",
    )
    parser.add_argument(
        "--captions",
        choices=CAPTION_SETS,
        help="COCO captions per image: first-5 or all; default: the model family's reference",
    )


def _add_compute_options(parser: argparse.ArgumentParser) -> None:
    """How the embedding passes run: batch, DataLoader workers, precision, progress, device."""
    parser.add_argument("--batch-size", "--batch_size", type=int, default=128)
    parser.add_argument(
        "--num-workers",
        "--num_workers",
        type=int,
        default=min(4, len(os.sched_getaffinity(0))),
        help="DataLoader processes decoding images (0: in the main process; default: 4, or "
        "the CPUs this process may use if fewer)",
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="autocast of the towers: auto = bf16 on CUDA, float32 on the CPU",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bars (default: on a terminal)"
    )
    parser.add_argument(
        "--device",
        default="cpu",
        help="cpu, cuda or cuda:N; under torchrun, cuda gives each rank its local GPU",
    )


def _add_benchmark_options(parser: argparse.ArgumentParser) -> None:
    """What is evaluated: the benchmarks, the generated world, HierarCaps and the real
    benchmarks' folders and limits, SSI's noise sentences."""
    parser.add_argument(
        "--benchmarks",
        "--dataset",
        nargs="+",
        default=list(WORLD_BENCHMARKS),
        choices=[*BENCHMARKS, *BENCHMARK_ALIASES],
        metavar="NAME",
        help=f"benchmarks (or CLIP_benchmark's names: {', '.join(BENCHMARK_ALIASES)}): "
        f"{', '.join(BENCHMARKS)}",
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


# the options that reach :func:`evaluate` as given, under their own names
PASSED_THROUGH = (
    "model", "world_size", "world_seed", "hierarcaps_root", "hierarcaps_limit", "noise_seed",
    "batch_size", "skip_bad_images", "retrieval_transform", "captions", "precision",
    "allow_partial",
)  # fmt: skip


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
    _add_benchmark_options(parser)
    _add_compute_options(parser)
    parser.add_argument(
        "--skip-bad-images",
        action="store_true",
        help="leave out samples whose image does not decode (counted in the "
        "results files) instead of stopping at the first",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="evaluate a run that did not finish (stopped by a signal, or a periodic "
        "checkpoint); every results file records it as partial",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """The command line; exit status 0, 2 for a refused input or a failed evaluation, 4 when a
    write failed (:mod:`paperlib.exit_status`)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        device = _rank_device(args.device)
        checkpoint = _checkpoint_argument(parser, args)
        pep = pep_protocol(args.pep_kept, args.pep_negatives, args.pep_pool, args.pep_pool_size)
        rows = evaluate(
            checkpoint,
            args.benchmarks,
            output_dir=args.output,
            pep=pep,
            roots=parse_assignments(args.root, "--root", Path),
            limits=parse_assignments(args.limit, "--limit", int),
            device=device,
            workers=args.num_workers,
            progress=False if args.no_progress else None,
            **{name: getattr(args, name) for name in PASSED_THROUGH},
        )
        if distributed.is_main():  # one rank prints and writes the comparison
            print(markdown_table(args.output))
            if args.model and (text := write_published(args.output, args.model, rows)):
                print("\nBeside the published numbers:\n" + text)
    except WriteError as err:  # a full disk or quota, an unwritable file: named
        print(f"evaluate: {error_text(err)}", file=sys.stderr)
        return exit_status.STORAGE
    except (OSError, ValueError) as err:  # named by the engine
        print(f"evaluate: {error_text(err)}", file=sys.stderr)
        return exit_status.REFUSED
    finally:
        distributed.cleanup()
    return exit_status.OK


def _rank_device(device: str) -> str:
    """The device of this process: ``device`` itself, or under ``torchrun`` (``WORLD_SIZE`` >
    1) this rank's, with the process group started (gloo on CPU, NCCL on CUDA)."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return device
    return str(distributed.init_distributed(device).device)


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
