"""The study's learning curves: every run's held-out validation curve and, for the hyperbolic
runs, where their embeddings' norms sit against MERU's aperture radius over training.

Both come from the training logs the study copies into ``results/<scale>/`` (validation
records of ``engine.validation``; aperture diagnostics of ``metrics.diagnostics``, logged every
``train.diag_every`` steps) and the bases' logs in ``results/bases/``; nothing is re-run.
``curves.json``::

    {"validation": [{"study", "variant", "seed", "metric", "val_size", "points": [{"step",
                     "value"}], "plateau": {...}}],
     "bases": [... the same, for each base of results/bases/bases.json ...],
     "aperture": [{"study", "variant", "seed", "features", "radius", "points": [{"step",
                   "frac_inside_radius", "norm_mean"}]}]}

``plateau`` is ``study.plan.plateau.plateau_check`` of the curve the claims judge: a study run's
primary metric against its δ (``study.results.references.plateau_deltas``; its other curves carry
none), a base's curves against the standard error over their own ``val_size`` items.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.engine.validation import validation_records
from paperlib.study.paths import results_dir, slug
from paperlib.study.plan.bases import bases_dir
from paperlib.study.plan.plateau import curves_of, run_plateaus
from paperlib.study.results.files import read_log, read_run_done
from paperlib.study.results.references import plateau_deltas
from paperlib.train import log_records

APERTURE_FEATURES = ("text", "box_text")  # the parents whose aperture MERU needs


def _curve_entries(
    records: list[dict[str, Any]], deltas: dict[str, float] | None, **labels: Any
) -> list[dict]:
    """One entry per validation curve of a log, with its plateau check over the curve's own
    held-out items."""
    val = validation_records(records)
    if not val:
        return []
    plateaus = run_plateaus(records, smallest=deltas)
    return [
        {
            **labels,
            "metric": metric,
            "val_size": val[-1]["val_size"],
            "points": [{"step": s, "value": v} for s, v in points],
            "plateau": (
                {**asdict(plateaus[metric]), "reached": plateaus[metric].reached}
                if metric in plateaus
                else None
            ),
        }
        for metric, points in curves_of(records).items()
    ]


def aperture_curves(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per parent feature set: the fraction of the batch inside ``2K/√c`` and the mean norm
    at every diagnostics step (hyperbolic runs log them; others give [])."""
    out = []
    for name in APERTURE_FEATURES:
        key = f"diag/{name}/frac_inside_radius"
        rows = [r for r in records if key in r]
        if rows:
            out.append(
                {
                    "features": name,
                    "radius": rows[-1]["diag/aperture_radius"],
                    "points": [
                        {
                            "step": r["step"],
                            "frac_inside_radius": r[key],
                            "norm_mean": r[f"diag/{name}/norm_mean"],
                        }
                        for r in rows
                    ],
                }
            )
    return out


def write_curves(scale_name: str, runs: list) -> dict[str, Any]:
    """Collect every run's curves from its results folder and the bases' from
    ``results/bases/``; write ``results/<scale>/curves.json`` and return it."""
    root = results_dir(scale_name)
    validation, aperture = [], []
    for run in runs:
        folder = root / run.study / slug(run.variant) / f"seed{run.seed}"
        if not (folder / "run.done").is_file():
            continue  # not finished: no curve yet
        records = read_log(folder, read_run_done(folder / "run.done"), log_records)
        labels = {"study": run.study, "variant": run.variant, "seed": run.seed}
        validation += _curve_entries(records, plateau_deltas(scale_name, run.study), **labels)
        aperture += [{**labels, **curve} for curve in aperture_curves(records)]
    bases = []
    summary = bases_dir() / "bases.json"
    if summary.is_file():
        for entry in json.loads(summary.read_text())["bases"]:
            name = f"{entry['model']}-base{entry['base']}"
            records = log_records(bases_dir() / f"{name}.log.jsonl")
            bases += _curve_entries(records, None, model=entry["model"], base=entry["base"])
    curves = {"validation": validation, "bases": bases, "aperture": aperture}
    atomic_write_text(root / "curves.json", json.dumps(curves, indent=1) + "\n")
    return curves
