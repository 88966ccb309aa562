#!/usr/bin/env python3
"""Below the first recipe grid: what do the hyperbolic fine-tunes keep of their base, and learn,
at smaller learning rates?

The recipe stage's first grid (1e-5 to 3e-4, the HiMo arms' grid) picked HyCoCLIP's and ARGENT's
learning rate at its lowest point, and every point of it ended below the hyperbolic base on the
validation zero-shot accuracy. This probe, which led their grid down to 1e-6
(``Scale.hyperbolic_recipe_lrs``) and their rule to the most training that keeps 0.9 of the
base (``recipe.Rule``), runs the study's headline HyCoCLIP and ARGENT fine-tunes of seeds 0 and 1 (one per
hyperbolic base, as ``study.design`` builds them, at the recipe's warm-up share) at learning
rates down to the HiMo paper's 1e-6, changing nothing else, and records for each: the
validation curves of short I2T R@1 and zero-shot L1 and L3 (their step-0 record is the base),
the share of the base each keeps at the end (``recipe.retention``), the same shares on the
test world's zero-shot L1 and L3 (the study's evaluation, against the base's committed results,
what the learning targets read), and the training objective's contrastive and entailment terms
over the first and last fifth of training (what the fine-tune learned). The runs train under ``runs/probe-finetune-lr`` (resumed where
interrupted); the record goes to ``--out``, a file the study never rewrites.

    python scripts/finetune_lr_probe.py --workers 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from paperlib.atomic import atomic_write_text  # noqa: E402
from paperlib.engine.validation import validation_records  # noqa: E402
from paperlib.evaluate import evaluate_run  # noqa: E402
from paperlib.provenance import run_provenance  # noqa: E402
from paperlib.study import design, recipe  # noqa: E402
from paperlib.study.reader import EVAL_SEED, PRETRAIN_HYPERBOLIC, repo_relative, run_folder  # noqa: E402
from paperlib.train import log_records, train_run, trained_to_end  # noqa: E402

PROBE = REPO / "results" / "probes" / "finetune_lr.json"
RUNS = REPO / "runs" / "probe-finetune-lr"
ARMS = ("HyCoCLIP", "ARGENT")
METRICS = design.FINETUNE_METRICS  # the study's hyperbolic fine-tunes' validation metrics
TERMS = ("contrastive", "entailment")  # the objective's parts, in every hyperbolic run's log
LEVELS = ("L1", "L3")  # the test world's zero-shot levels the learning targets read


def probe_config(arm: str, seed: int, lr: float, scale: str, root: Path = RUNS) -> dict:
    """The study's headline ``arm`` fine-tune of ``seed`` at ``scale`` (its recipe's warm-up
    share) at learning rate ``lr``, validated on :data:`METRICS`, training under ``root``."""
    run = next(r for r in design.plan(scale, ("argent",)) if r.variant == arm and r.seed == seed)
    config = json.loads(json.dumps(run.config))
    config["optim"]["lr"] = lr
    config["train"]["val_metrics"] = list(METRICS)
    config["train"]["output_dir"] = str(root / f"{design.slug(arm)}-seed{seed}-lr{lr:g}")
    return config


def fifths(records: list[dict], term: str) -> tuple[float, float]:
    """The mean of ``term`` over the first and the last fifth of the logged training steps."""
    values = [r[term] for r in records if term in r and "val" not in r]
    if len(values) < 5:
        raise ValueError(f"{term}: {len(values)} training records; expected at least 5")
    fifth = len(values) // 5
    return statistics.fmean(values[:fifth]), statistics.fmean(values[-fifth:])


def summarise(records: list[dict]) -> dict:
    """A run's validation curve, start and last values, retention of the start, and its
    objective's terms over the first and last fifth of training."""
    curve = validation_records(records)
    start, last = curve[0]["val"], curve[-1]["val"]
    return {
        "curve": [{"step": r["step"], **r["val"]} for r in curve],
        "start": start,
        "last": last,
        "retention": {m: recipe.retention(start[m], last[m]) for m in METRICS},
        "terms": {t: dict(zip(("first_fifth", "last_fifth"), fifths(records, t))) for t in TERMS},
    }


def base_test_accuracy(seed: int, scale: str) -> dict[str, float]:
    """The committed test-world zero-shot accuracy of ``seed``'s hyperbolic base."""
    base = design.SCALES[scale].base_of(seed)
    folder = run_folder(scale, "argent", PRETRAIN_HYPERBOLIC, base)
    return {
        level: json.loads((folder / f"world-zeroshot-{level}.json").read_text())["metrics"]["acc1"]
        for level in LEVELS
    }


def held_out_accuracy(output_dir: Path, scale: str) -> dict[str, float]:
    """A trained probe run's test-world zero-shot accuracy, evaluated as the study evaluates
    (the held-out world of ``reader.EVAL_SEED`` at the scale's size) into its own folder."""
    results = evaluate_run(
        output_dir / "last.pt",
        output_dir / "test",
        benchmarks=["world-zeroshot"],
        world_size=design.SCALES[scale].eval_size,
        world_seed=EVAL_SEED,
    )
    found = {r["dataset"].removeprefix("world-zeroshot-"): r["metrics"]["acc1"] for r in results}
    return {level: found[level] for level in LEVELS}


def probe_run(job: tuple[str, int, float, str]) -> dict:
    """Train one (arm, seed, learning rate) of the probe (resuming) and summarise it."""
    import torch

    torch.set_num_threads(1)
    arm, seed, lr, scale = job
    config = probe_config(arm, seed, lr, scale)
    output = Path(config["train"]["output_dir"])
    if not trained_to_end(output) and (result := train_run(config)).status != "finished":
        raise RuntimeError(f"{arm} seed {seed} lr {lr:g}: training {result.status}")
    start, last = base_test_accuracy(seed, scale), held_out_accuracy(output, scale)
    test = {"start": start, "last": last,
            "retention": {k: recipe.retention(start[k], last[k]) for k in LEVELS}}  # fmt: skip
    return {"arm": arm, "seed": seed, "lr": lr, "init": repo_relative(config["model"]["init"]),
            **summarise(log_records(output / "log.jsonl")), "test": test}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lrs", type=float, nargs="+", default=[1e-6, 3e-6, 1e-5])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--scale", default="full")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=PROBE)
    args = parser.parse_args(argv)
    jobs = [(a, s, lr, args.scale) for a in ARMS for s in args.seeds for lr in args.lrs]
    with ProcessPoolExecutor(args.workers) as pool:
        runs = list(pool.map(probe_run, jobs))
    record = {
        "scale": args.scale,
        # the first grid, the HiMo arms', which the probe's rates reach below
        "grid": list(design.SCALES[args.scale].recipe_lrs),
        "metrics": list(METRICS),
        "runs": runs,
        "provenance": run_provenance(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(record, indent=1) + "\n")
    for r in runs:
        print(r["arm"], r["seed"], r["lr"], {m: round(v, 3) for m, v in r["retention"].items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
