#!/usr/bin/env python3
"""The design notes of ARGENT's from-scratch claims, before their runs: how many seeds each needs.

Every ARGENT claim now compares arms trained from random weights. Before those runs, each
claim's design is planned from the only from-scratch seeds the project has: the pilot, eight
seeds per objective (four on each base's world) of MERU, HyCoCLIP and ARGENT trained from random
weights for 400 steps at batch 64 (``results/probes/pilot-from-scratch/``, each run's per-item
values). For each claim: its δ on the study's scale (``study.results.references``), the pilot's
within-world spread of the per-seed effects and its item term (``study.decide.inference``) for the
pilot pair that stands in for its arms (ARGENT against HyCoCLIP, or against MERU for the MERU
claim: the pilot has no smaller model and no ablation), the half-width each balanced design
reaches at the claim's level of the study's error statement, the item floor, and the fewest
seeds per world that resolve δ; where the floor is at or above δ, how many test items would
bring it below. The pilot's arms had not learned the world (zero-shot L1 0.27), so their seeds
scatter more than converged runs will: the notes plan conservatively. The record goes to
``--out`` (results/probes/scratch_design.json), which the scale's seed choices cite.

    python scripts/scratch_design_notes.py
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from paperlib.atomic import atomic_write_text  # noqa: E402
from paperlib.study.decide.design_notes import design_half_width, item_floor  # noqa: E402
from paperlib.study.decide.error_control import claim_alpha  # noqa: E402
from paperlib.study.decide.inference import based_estimate, seed_weight  # noqa: E402
from paperlib.study.plan.claims import CLAIMS  # noqa: E402
from paperlib.study.results.references import claim_translation  # noqa: E402

PILOT = REPO / "results" / "probes" / "pilot-from-scratch"
OUT = REPO / "results" / "probes" / "scratch_design.json"
SEEDS = tuple(range(8))  # the pilot's seeds: seed s on the world of base s mod 2
PER_WORLD = range(2, 9)  # the balanced designs planned: n seeds on each of the two worlds


def pilot_values(arm: str, item: str) -> np.ndarray:
    """(seeds, items) per-item values of one pilot arm."""
    rows = [np.load(PILOT / arm / f"seed{s}" / "items.npz")[item] for s in SEEDS]
    return np.stack(rows).astype(np.float64)


def pilot_pair(claim) -> tuple[str, str]:
    """The pilot arms that stand in for a claim's two arms."""
    return ("argent", "meru") if claim.baseline == "MERU" else ("argent", "hycoclip")


def note(claim) -> dict:
    """One claim's design note from the pilot (module docstring)."""
    delta = claim_translation("full", claim).delta
    variant, baseline = pilot_pair(claim)
    diff = pilot_values(variant, claim.item) - pilot_values(baseline, claim.baseline_metric)
    worlds = [s % 2 for s in SEEDS]
    estimate = based_estimate(diff, worlds)
    within = estimate.seed_term / seed_weight([4, 4]) if estimate.seed_df else math.nan
    alpha = claim_alpha(len(CLAIMS), claim.looks)
    floor = item_floor(estimate.item_term, alpha)
    widths = {n: design_half_width(within, estimate.item_term, [n, n], alpha) for n in PER_WORLD}
    needed = next((n for n, w in widths.items() if w < delta), None)
    items = diff.shape[1]
    return {
        "claim": claim.id,
        "pilot_pair": [variant, baseline],
        "delta": delta,
        "alpha": alpha,
        "pilot_effect": estimate.mean,
        "within_variance": within,
        "item_term": estimate.item_term,
        "item_floor": floor,
        "half_width_per_world": {str(n): w for n, w in widths.items()},
        "per_world_needed": needed,
        # the floor falls as one over the root of the items: the test set that brings it below δ
        "items_for_floor": math.ceil(items * (floor / delta) ** 2) if floor >= delta else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    notes = [note(c) for c in CLAIMS if c.study == "argent"]
    record = {"about": __doc__.split("\n\n")[1].replace("\n", " "), "notes": notes}
    atomic_write_text(args.out, json.dumps(record, indent=1) + "\n")
    for n in notes:
        print(f"{n['claim']:34} δ {n['delta']:.4g} floor {n['item_floor']:.3g} "
              f"needs {n['per_world_needed']} per world; items for floor {n['items_for_floor']}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
