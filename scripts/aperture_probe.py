#!/usr/bin/env python3
"""Where does the aperture premise hold? Caption norms against MERU's radius, start and end.

ARGENT starts from a failure of MERU's and HyCoCLIP's entailment cones: a parent whose space
norm lies inside ``2K/√c`` has no defined half-aperture. The full study's hyperbolic fine-tunes
never put a held-out caption there (their norms start near 1, the radius at κ = 0.1 is 0.63).
This probe builds the study's own aperture-arm runs (``study.design``, seed 0, κ = 0.1) with
another initial embedding scale (``model.alpha_norm``: the mean norm the feature-norm rule
gives each tower at the start; small norms are where a from-scratch hyperbolic model begins),
evaluates each before training (0 steps) and, with ``--train``, after the study's schedule, and
writes the share of held-out captions inside the radius (the aperture claims' metric), the
training batches' share over training and the code it ran (commit and training-code hash) to
``--out``, a folder the study never rewrites. The study's results are not touched: the runs live
in a scratch folder.

    python scripts/aperture_probe.py --alpha-norm 1.0 --alpha-norm 0.5 --train
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from paperlib.provenance import run_provenance  # noqa: E402
from paperlib.study.premise import APERTURE_PROBE  # noqa: E402

ITEM = "aperture/short_caption_inside_radius"
ARMS = ("MERU, κ = 0.1", "HyCoCLIP, κ = 0.1", "ARGENT, κ = 0.1")


def probe_runs(alpha_norm: float, train: bool, scale_name: str = "full", seed: int = 0) -> list:
    """The aperture arm's runs of ``seed`` with ``model.alpha_norm`` set (0 steps unless
    ``train``), each in a folder of its own named by the setting."""
    from paperlib.study import design

    planned = design.plan(scale_name, searched=False)  # the scale's fixed recipe
    runs = [r for r in planned if r.variant in ARMS and r.seed == seed]
    out = []
    for run in runs:
        config = json.loads(json.dumps(run.config))
        config["model"]["alpha_norm"] = alpha_norm
        if not train:
            config = design._evaluation_only(config)
            config["train"]["steps"] = 0
        tag = f"alpha-norm-{alpha_norm:g}" + ("" if train else "-start")
        output = Path(config["train"]["output_dir"])
        config["train"]["output_dir"] = str(output.parent / f"{output.name}-{tag}")
        out.append(dataclasses.replace(run, variant=f"{run.variant}, {tag}", config=config))
    return out


def probe_record(items: dict, log: list[dict], run_name: str) -> dict:
    """The held-out share inside the radius (mean, per-item count) and the training batches'
    caption share, smallest norm and radius over training (``diag/text/*``) of one probe run."""
    values = np.asarray(items[ITEM], dtype=float)
    batches = [
        {
            "step": r["step"],
            "inside": r["diag/text/frac_inside_radius"],
            "norm_min": r["diag/text/norm_min"],
            "radius": r["diag/aperture_radius"],
        }
        for r in log
        if "diag/text/frac_inside_radius" in r
    ]
    return {
        "run": run_name,
        "held_out_inside": float(values.mean()),
        "held_out_captions_inside": int(values.sum()),
        "held_out_captions": int(values.size),
        "training_batches": batches,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpha-norm", type=float, action="append", required=True)
    parser.add_argument("--train", action="store_true", help="also after the study's schedule")
    parser.add_argument("--out", type=Path, default=APERTURE_PROBE)
    args = parser.parse_args(argv)
    os.chdir(REPO)
    records = []
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["PAPERLIB_RESULTS"] = str(Path(scratch) / "results")
        os.environ.setdefault("PAPERLIB_RUNS", os.path.relpath(REPO / "runs", REPO))
        from paperlib.study.execution import execute
        from paperlib.study.reader import read_items
        from paperlib.train import log_records

        for alpha_norm in args.alpha_norm:
            for train in (False, True) if args.train else (False,):
                for run in probe_runs(alpha_norm, train):
                    execute(run, "full")
                    items = read_items("full", run.study, run.variant, run.seed)
                    log = log_records(Path(run.config["train"]["output_dir"]) / "log.jsonl")
                    record = probe_record(items, log, run.name)
                    records.append({"alpha_norm": alpha_norm, "trained": train, **record})
                    print(f"{run.name}: {record['held_out_captions_inside']} of "
                          f"{record['held_out_captions']} held-out captions inside")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    written = {"metric": ITEM, "made_at": run_provenance(), "runs": records}
    args.out.write_text(json.dumps(written, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
