#!/usr/bin/env python3
"""How long must a hyperbolic CLIP of the world train from random weights before it stops learning?

ARGENT's paper trains every model from scratch, each arm of a comparison at one budget. The
study's from-scratch arms train as its hyperbolic bases did (``study.plan.bases``: the bases'
200,000-scene world with counterfactual twins, batch 128, learning rate 1e-3 after 200 warm-up
steps, weight decay 0.1, MERU's initialisation), with each arm's own objective. This probe
trains HyCoCLIP and ARGENT that way for the bases' whole schedule (6,400 steps, 819,200 samples),
one seed on the world of base 0, validated every 400 steps on the held-out validation world
(zero-shot L1 and L3, short-caption R@1, the parents' share inside ``2K/√c``), and records each
curve with the samples seen, the learned curvature and the objective's terms, and the budget
the curves give (``study.plan.scratch_budget``): the first point, never below 150,000 samples, where
both arms have flattened on zero-shot L1 and short R@1 by the study's plateau rule and stay
flat, or none.

The runs train under ``runs/probe-scratch-budget`` (resumed where interrupted); the record goes
to ``--out``, a file the study never rewrites.

    python scripts/scratch_budget_probe.py --workers 2
    python scripts/scratch_budget_probe.py --summarise-only   # the record from the logs so far
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from paperlib.atomic import atomic_write_text  # noqa: E402
from paperlib.data.world_cache import cached_world  # noqa: E402
from paperlib.engine.validation import validation_records  # noqa: E402
from paperlib.environment import environment  # noqa: E402
from paperlib.provenance import run_provenance  # noqa: E402
from paperlib.study.paths import portable_config  # noqa: E402
from paperlib.study.plan.bases import MODEL, RECIPES, base_config  # noqa: E402
from paperlib.study.plan.scratch_budget import budget  # noqa: E402
from paperlib.study.results.references import plateau_deltas  # noqa: E402
from paperlib.train import log_records, train_run, trained_to_end  # noqa: E402

PROBE = REPO / "results" / "probes" / "scratch_budget.json"
RUNS = REPO / "runs" / "probe-scratch-budget"
ARMS = {"HyCoCLIP": "hycoclip", "ARGENT": "argent"}
WORLD = 0  # the world of base 0
SEED = 0
METRICS = ("zeroshot_L1", "short_i2t_r1", "zeroshot_L3", "inside_short", "norm_short")
LOGGED = ("curv", "contrastive", "entailment", "regularizer", "loss")


def probe_config(arm: str, root: Path = RUNS) -> dict:
    """``arm`` from random weights at the hyperbolic bases' recipe and schedule
    (``study.plan.bases.base_config``), with its own objective, validated on :data:`METRICS`."""
    config = base_config(MODEL, WORLD, RECIPES["full"], root, "hyperbolic")
    config["method"] = ARMS[arm]
    config["train"]["seed"] = SEED
    config["train"]["val_metrics"] = list(METRICS)
    config["train"]["output_dir"] = str(root / f"{arm.lower()}-world{WORLD}-seed{SEED}")
    return config


def _train(arm: str, root: Path = RUNS) -> str:
    torch.set_num_threads(1)
    config = probe_config(arm, root)
    if not trained_to_end(config["train"]["output_dir"]):
        result = train_run(config)
        if result.status != "finished":
            raise RuntimeError(f"{arm}: training {result.status} at step {result.step}")
    return arm


def summarise(arm: str, root: Path = RUNS) -> dict:
    """One arm's validation curve (with samples seen) and its logged training terms, read from
    its run under ``root``; its config as it trains under the repository's ``runs/``."""
    config = portable_config(probe_config(arm))
    output = Path(probe_config(arm, root)["train"]["output_dir"])
    records = log_records(output / "log.jsonl")
    batch = config["train"]["batch_size"]
    curve = [
        {"step": r["step"], "samples": r["step"] * batch, **r["val"]}
        for r in validation_records(records)
    ]
    logged = [
        {"step": r["step"], **{k: r[k] for k in LOGGED if k in r}} for r in records if "loss" in r
    ]
    steps = [r for r in records if "cpu_seconds" in r]
    return {
        "method": config["method"],
        "config": config,
        "finished": trained_to_end(output),
        "curve": curve,
        "training": logged,
        "cpu_seconds": steps[-1]["cpu_seconds"] if steps else None,
    }


def budget_curves(curve: list[dict]) -> dict[str, list[tuple[int, float]]]:
    """``{metric: [(step, value), ...]}`` of a summarised curve, the budget's plateau metrics."""
    return {m: [(r["step"], r[m]) for r in curve] for m in ("zeroshot_L1", "short_i2t_r1")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=PROBE)
    parser.add_argument("--summarise-only", action="store_true")
    parser.add_argument("--runs", type=Path, default=RUNS, help="where the probe's runs train")
    args = parser.parse_args(argv)
    if not args.summarise_only:
        data = probe_config("HyCoCLIP", args.runs)["data"]  # the shared world, rendered once
        cached_world(data["cache_dir"], data["seed"], data["size"], data["image_size"], True)
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_train, ARMS, [args.runs] * len(ARMS)))
    arms = {arm: summarise(arm, args.runs) for arm in ARMS}
    curves = {arm: budget_curves(found["curve"]) for arm, found in arms.items()}
    batch = RECIPES["full"].batch
    record = {
        "about": __doc__.split("\n\n")[1].replace("\n", " "),
        "arms": arms,
        "budget": budget(curves, batch, RECIPES["full"].val_size, plateau_deltas("full", "argent")),
        "environment": environment(),
        "provenance": run_provenance(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(record, indent=1) + "\n")
    print(f"[probe] wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
