"""The study's learning targets and schedule checks: the medians the runs must reach, each
headline variant against its twice-longer self, and the bases' plateau checks."""

from __future__ import annotations

import json
import statistics

import numpy as np

from paperlib.engine.validation import validation_records
from paperlib.study.paths import results_dir, slug
from paperlib.study.plan.bases import GEOMETRIES, bases_dir
from paperlib.study.plan.claims import CLAIMS, LONGER
from paperlib.study.plan.design import PRETRAIN, PRETRAIN_HYPERBOLIC
from paperlib.study.plan.plateau import curve_items, plateau_check, rate_standard_error
from paperlib.study.results.reader import read_items
from paperlib.train import log_records

# what an arm trained from random weights must reach on the test world before its claims are
# decided (the bases reach about 0.88 and 0.95): zero-shot L1 and short-caption R@1, the means
# over the claim's valid seeds; a claim with an arm below reads "did not learn the world"
SCRATCH_TARGETS = {"world-zeroshot/L1_correct": 0.6, "world-short/i2t_hit1": 0.8}


def _targets() -> tuple[tuple[str, str, str, float], ...]:
    """Learning targets (medians over runs): (study, variant, per-item metric, target). The
    bases of both geometries; long-caption retrieval of every HiMo fine-tune variant the claims
    compare; short retrieval and zero-shot accuracy of every ARGENT arm trained from random
    weights (:data:`SCRATCH_TARGETS`)."""
    himo = dict.fromkeys(
        v for c in CLAIMS if c.study == "himo" for v in (c.variant, c.baseline) if v != PRETRAIN
    )
    argent = dict.fromkeys(
        v for c in CLAIMS if c.study == "argent" for v in (c.variant, c.baseline)
    )
    bases = (
        (study, base, item, target)
        for study, base in (("himo", PRETRAIN), ("argent", PRETRAIN_HYPERBOLIC))
        for item, target in (
            ("world-zeroshot/L1_correct", 0.8),
            ("world-zeroshot/L3_correct", 0.3),
            ("world-short/i2t_hit1", 0.85),
        )
    )
    return (
        *bases,
        *(("himo", v, "world-long/i2t_hit1", 0.5) for v in himo),
        *(("argent", v, item, target) for v in argent for item, target in SCRATCH_TARGETS.items()),
    )


TARGETS = _targets()


def not_learned(scale_name: str, study: str, variant: str, seeds: list[int]) -> list[str]:
    """Each :data:`SCRATCH_TARGETS` metric whose mean over ``seeds`` of ``variant``'s runs lies
    below its target, with the mean and the runs below it."""
    out = []
    for item, target in SCRATCH_TARGETS.items():
        values = {s: float(np.mean(read_items(scale_name, study, variant, s)[item])) for s in seeds}
        mean = float(np.mean(list(values.values())))
        if mean < target:
            below = [f"seed{s}" for s, v in values.items() if v < target]
            out.append(f"{variant} {item} {mean:.3f} < {target:g} ({', '.join(below)} below)")
    return out


def _final_validation(scale_name: str, study: str, variant: str, seed: int) -> dict | None:
    """The last validation record of a run's log (None when the run has none)."""
    log = results_dir(scale_name) / study / slug(variant) / f"seed{seed}" / "log.jsonl"
    records = validation_records(log_records(log)) if log.is_file() else []
    return records[-1] if records else None


def schedule_checks(scale_name: str, runs: list[dict]) -> list[dict]:
    """Per headline variant with a schedule check (``study.plan.design.longer``): its final
    validation values at its own and at twice its steps (same seed, same base), the gain, and
    whether the gain is below one test-set standard error (the longer schedule did not help beyond
    noise; else the claims on that variant are flagged, ``schedule_flags``)."""
    out = []
    for run in runs:
        if not run["variant"].endswith(LONGER):
            continue
        variant = run["variant"].removesuffix(LONGER)
        own = _final_validation(scale_name, run["study"], variant, run["seed"])
        longer = _final_validation(scale_name, run["study"], run["variant"], run["seed"])
        if own is None or longer is None:
            continue
        n = curve_items([longer])
        for metric, value in longer["val"].items():
            se = rate_standard_error(value, n)
            gain = value - own["val"][metric]
            out.append(
                {
                    "study": run["study"], "variant": variant, "seed": run["seed"],
                    "metric": metric, "steps": [own["step"], longer["step"]],
                    "values": [own["val"][metric], value], "gain": gain,
                    "standard_error": se, "within_noise": gain < se,
                }
            )  # fmt: skip
    return out


def schedule_flags(checks: list[dict], claim: dict) -> list[str]:
    """The schedule checks of a claim's two variants that a longer schedule still improved
    beyond one standard error (the claim's verdict stands, flagged with them)."""
    return [
        f"{c['variant']} {c['metric']}: {c['values'][0]:.3f} → {c['values'][1]:.3f} at "
        f"{c['steps'][1]} steps (+{c['gain']:.3f} ≥ SE {c['standard_error']:.3f})"
        for c in checks
        if not c["within_noise"] and c["study"] == claim["study"]
        and c["variant"] in (claim["variant"], claim["baseline"])
    ]  # fmt: skip


def base_plateaus() -> list[dict]:
    """Each pre-trained base's plateau checks, both geometries, decided anew by the current rule
    (``study.plan.plateau``, no δ: a base answers to no claim) from the validation curves each
    folder's ``bases.json`` records, on the metrics it checks (a geometry without one adds
    nothing)."""
    out = []
    for geometry in GEOMETRIES:
        path = bases_dir(geometry) / "bases.json"
        if path.is_file():
            for b in json.loads(path.read_text())["bases"]:
                curves = {
                    m: [(p["step"], p["value"]) for p in b["validation"][m]] for m in b["plateau"]
                }
                reached = {m: plateau_check(c, b["val_size"], m).reached for m, c in curves.items()}
                out.append(
                    {"geometry": geometry, "model": b["model"], "base": b["base"], **reached}
                )
    return out


def _target_row(study: str, variant: str, item: str, target: float, values: list[float]) -> dict:
    """A learning target's record: the median of ``values`` (None without any) against it."""
    median = statistics.median(values) if values else None
    return {
        "study": study,
        "variant": variant,
        "metric": item,
        "target": target,
        "median": median,
        "values": values,
        "runs": len(values),
        "met": median is not None and median >= target,
    }


def check_targets(scale_name: str, runs: list[dict]) -> list[dict]:
    """Each learning target with the median over its valid runs."""
    out = []
    for study, variant, item, target in TARGETS:
        chosen = [r for r in runs if r["study"] == study and r["variant"] == variant]
        items = [
            read_items(scale_name, study, variant, r["seed"])
            for r in chosen
            if not r.get("collapsed")
        ]
        values = [float(np.mean(found[item])) for found in items if item in found]
        out.append(_target_row(study, variant, item, target, values))
    return out
