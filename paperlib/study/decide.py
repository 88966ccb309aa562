"""Deciding the study's claims and checking its learning targets from the results files.

:func:`decide` reads every finished run's ``items.npz`` and ``run.done``, leaves collapsed
runs out (``tables.verdicts.collapse_reason``), pairs the remaining seeds of each claim's
two variants and writes ``results/<scale>/claims.json``::

    {"claims": [{"claim", "statement", "paper", "verdict", "effect", "interval",
                 "chance", "variant": {...}, "baseline": {...}, "seeds", "invalid_runs"}],
     "targets": [{"metric", "target", "median", "runs", "met"}]}
"""

from __future__ import annotations

import json
import statistics
from typing import Any

import numpy as np

from paperlib.atomic import atomic_write_text
from paperlib.study.reader import PRETRAIN, read_items, results_dir, slug
from paperlib.tables.claims import CLAIMS, Claim, chance_level
from paperlib.tables.verdicts import (
    LEARNED_MARGIN,
    Interval,
    bootstrap_indices,
    collapse_reason,
    headroom,
    interval,
    learned,
    paired_effect,
    verdict_with_reason,
)
from paperlib.train import read_log

# learning targets of the base models (medians over runs): (study, variants, item, target)
TARGETS = (
    ("himo", (PRETRAIN,), "world-short/i2t_hit1", 0.5),
    ("himo", ("InfoNCE (λ=0)", "MoLo", "Long-CLIP"), "world-long/i2t_hit1", 0.3),
    ("himo", (PRETRAIN,), "world-zeroshot/L1_correct", 0.9),
    ("argent", ("HyCoCLIP", "ARGENT"), "world-short/i2t_hit1", 0.5),
    ("argent", ("HyCoCLIP", "ARGENT"), "world-zeroshot/L1_correct", 0.9),
)


# the contrastive term of each method's log, the one a collapse leaves at ln B
LOSS_TERM = {
    "clip": "contrastive",
    "himo": "global",
    "longclip": "long",
    "meru": "contrastive",
    "hycoclip": "contrastive",
    "argent": "contrastive",
}


def run_collapse(info: dict[str, Any], log: list[dict[str, Any]]) -> str | None:
    """:func:`~paperlib.tables.verdicts.collapse_reason` of a finished run's record and log."""
    term = LOSS_TERM[info["config"]["method"]]
    losses = [r[term] for r in log if term in r]
    return collapse_reason(losses, info["config"]["train"]["batch_size"], info["feature_std"])


def finished_runs(scale_name: str) -> list[dict[str, Any]]:
    """``run.done`` records of every finished run, ``collapsed`` decided anew from its log."""
    out = []
    for done in sorted(results_dir(scale_name).glob("*/*/seed*/run.done")):
        info = json.loads(done.read_text())
        info["collapsed"] = run_collapse(info, read_log(done.parent))
        out.append(info)
    return out


def _side(scale_name: str, study: str, variant: str, item: str, seeds: list[int]) -> np.ndarray:
    """(seeds, items) values of one variant's per-item metric."""
    return np.stack([read_items(scale_name, study, variant, s)[item] for s in seeds])


def _summary(side: Interval) -> dict[str, Any]:
    return {
        "mean": side.mean,
        "interval": [side.low, side.high],
        "per_seed": list(side.seed_values),
    }


def _invalid_runs(runs: list[dict]) -> list[str]:
    """``variant/seedN: reason`` of each collapsed run (the collapse check), sorted."""
    return sorted(
        {f"{r['variant']}/seed{r['seed']}: {r['collapsed']}" for r in runs if r.get("collapsed")}
    )


def _guard_failure(scale_name: str, claim: Claim, seeds: list[int], n_boot: int) -> str | None:
    """Why the claim's learning guard fails (a model's guard metric is not above
    ``LEARNED_MARGIN`` × chance), or None: the comparison counts only if both models learned."""
    if claim.guard is None:
        return None
    item, guard_chance = claim.guard
    failure = None
    for variant in dict.fromkeys((claim.variant, claim.baseline)):
        values = _side(scale_name, claim.study, variant, item, seeds)
        side = interval(values, bootstrap_indices(values.shape[1], n_boot, seed=1))
        floor = chance_level(guard_chance, values.shape[1])
        if not learned(side, floor):
            failure = (
                f"{variant}: {item} {side.mean:.4f}, interval not above "
                f"{LEARNED_MARGIN:g} × chance ({floor:.4g})"
            )
    return failure


def decide_claim(scale_name: str, claim: Claim, runs: list[dict], n_boot: int = 1000) -> dict:
    """One claim's verdict, effect and interval over the seeds where both runs are valid."""

    def seeds_of(variant):
        return {r["seed"]: r for r in runs if r["study"] == claim.study and r["variant"] == variant}

    a, b = seeds_of(claim.variant), seeds_of(claim.baseline)
    common = sorted(set(a) & set(b))
    invalid = _invalid_runs([r for s in common for r in (a[s], b[s])])
    seeds = [s for s in common if not a[s].get("collapsed") and not b[s].get("collapsed")]
    record = {
        "claim": claim.id,
        **{k: v for k, v in claim.as_dict().items() if k != "id"},
        "seeds": seeds,
        "runs_total": len(common),
        "invalid_runs": invalid,
    }
    if not seeds:
        return {
            **record,
            "verdict": "untestable",
            "reason": "no seed where both runs are valid",
            "effect": None,
            "interval": None,
        }
    va = _side(scale_name, claim.study, claim.variant, claim.item, seeds)
    vb = _side(scale_name, claim.study, claim.baseline, claim.baseline_metric, seeds)
    if not (np.isfinite(va).all() and np.isfinite(vb).all()):
        return {
            **record,
            "verdict": "untestable",
            "effect": None,
            "interval": None,
            "reason": f"non-finite per-item values of {claim.item}",
        }
    boot = bootstrap_indices(va.shape[1], n_boot, seed=0)
    chance = record["chance"] = claim.chance_for(va.shape[1])
    effect, ia, ib = paired_effect(va, vb, boot), interval(va, boot), interval(vb, boot)
    guard_failed = _guard_failure(scale_name, claim, seeds, n_boot)
    if guard_failed:
        record["guard_failed"] = guard_failed
    record["baseline_headroom"] = headroom(ib.mean, chance, claim.ceiling)
    decided, reason = verdict_with_reason(effect, ia, ib, chance, claim.ceiling, claim.better)
    if "guard_failed" in record:
        decided, reason = "untestable", f"a model did not learn ({record['guard_failed']})"
    return {
        **record,
        "verdict": decided,
        "reason": reason,
        "effect": effect.mean,
        "interval": [effect.low, effect.high],
        "per_seed": list(effect.seed_values),
        "variant_value": _summary(ia),
        "baseline_value": _summary(ib),
    }


def check_targets(scale_name: str, runs: list[dict]) -> list[dict]:
    """Each learning target with the median over its (valid) runs."""
    out = []
    for study, variants, item, target in TARGETS:
        chosen = [
            read_items(scale_name, study, r["variant"], r["seed"])
            for r in runs
            if r["study"] == study and r["variant"] in variants and not r.get("collapsed")
        ]
        values = [float(np.mean(items[item])) for items in chosen if item in items]
        median = statistics.median(values) if values else None
        out.append(
            {
                "study": study,
                "variants": list(variants),
                "metric": item,
                "target": target,
                "median": median,
                "runs": len(values),
                "met": median is not None and median >= target,
            }
        )
    return out


def report(scale_name: str) -> dict[str, Any]:
    """Every claim whose variants ran at ``scale_name``, decided from the results files, with
    the learning targets and the collapsed runs (nothing is written)."""
    runs = finished_runs(scale_name)
    present = {(r["study"], r["variant"]) for r in runs}
    claims = [
        decide_claim(scale_name, c, runs)
        for c in CLAIMS
        if (c.study, c.variant) in present and (c.study, c.baseline) in present
    ]
    return {
        "scale": scale_name,
        "claims": claims,
        "targets": check_targets(scale_name, runs),
        "collapsed_runs": [
            f"{r['study']}/{slug(r['variant'])}/seed{r['seed']}: {r['collapsed']}"
            for r in runs
            if r.get("collapsed")
        ],
    }


def decide(scale_name: str) -> dict[str, Any]:
    """:func:`report`, written to ``results/<scale>/claims.json``."""
    decided = report(scale_name)
    atomic_write_text(results_dir(scale_name) / "claims.json", json.dumps(decided, indent=1) + "\n")
    return decided


def summary_table(decided: dict[str, Any]) -> str:
    """Markdown tables of the decided claims and the learning targets (the README's summary of
    ``claims.json``)."""
    lines = [
        "| claim | paper | verdict | effect [95 % interval] | valid / total seeds |",
        "|---|---|---|---|---|",
    ]
    for c in decided["claims"]:
        effect = (
            "–"
            if c["effect"] is None
            else (f"{c['effect']:+.3g} [{c['interval'][0]:+.3g}, {c['interval'][1]:+.3g}]")
        )
        runs = (
            f"{c['variant']}, without vs with ambiguous captions"
            if c.get("baseline_item")
            else f"{c['variant']} vs {c['baseline']}"
        )
        lines.append(
            f"| {c['statement']} ({runs}; {c['label']}) | "
            f"{c['paper']} | {c['verdict']} | {effect} | "
            f"{len(c['seeds'])} / {c['runs_total']} |"
        )
    lines += ["", "| learning target | runs | median | target | met |", "|---|---|---|---|---|"]
    for t in decided["targets"]:
        median = "–" if t["median"] is None else f"{t['median']:.3f}"
        lines.append(
            f"| {t['metric']} of {', '.join(t['variants'])} | {t['runs']} | {median} | "
            f"≥ {t['target']:g} | {'yes' if t['met'] else 'no'} |"
        )
    return "\n".join(lines)
