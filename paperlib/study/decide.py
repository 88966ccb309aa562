"""Deciding the study's claims and checking its learning targets from the results files.

:func:`decide` reads every finished run's ``run.done``, ``log.jsonl`` and ``items.npz`` and
writes ``results/<scale>/claims.json``. Per claim (``tables.claims``):

1. runs that collapsed (``tables.verdicts.collapse_reason``) or whose validation curve had not
   flattened (``tables.plateau``) are left out and named (``invalid_runs``);
2. the paired effect variant − baseline over the seeds where both runs are valid, with its
   standard error from the crossed seeds × items model (``tables.inference``), its raw 95 %
   interval and p-value, the mean effect per pre-trained base, and each side's own value;
3. testability (``tables.verdicts.untestable_reason``): the learning guard (both sides above
   its threshold; the untrained reference's value is recorded beside it), chance, headroom;
4. per paper (the family), Holm's adjustment over the testable claims: ``p_adjusted``, the
   adjusted interval (``interval``; ``interval_raw`` keeps the unadjusted one) and the verdict
   (``tables.verdicts.directional_verdict`` and ``bases_agree``).

A claim whose runs are missing (a seed or a variant the scale plans) is an error naming them,
unless ``partial=True``: then it is decided on what exists and marked ``partial``.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np

from paperlib.atomic import atomic_write_text
from paperlib.engine.evaluation import world_short_captions
from paperlib.engine.validation import validation_records
from paperlib.study.pretrain import bases_dir
from paperlib.study.reader import EVAL_SEED, PRETRAIN, read_items, results_dir, slug
from paperlib.study.scales import SCALES, Scale
from paperlib.tables.claims import (
    CLAIMS,
    HEADLINE_FINETUNES,
    LONGER,
    SAME_TEXT,
    UNTRAINED,
    Claim,
)
from paperlib.tables.inference import (
    ALPHA,
    Estimate,
    crossed_estimate,
    holm,
    holm_levels,
    summary,
)
from paperlib.tables.plateau import rate_standard_error, run_plateaus
from paperlib.tables.summary import claim_name, effect_text
from paperlib.tables.verdicts import (
    MIN_SEEDS,
    bases_agree,
    collapse_reason,
    directional_verdict,
    untestable_reason,
)
from paperlib.train import log_records


def _targets() -> tuple[tuple[str, str, str, float], ...]:
    """Learning targets (medians over runs): (study, variant, per-item metric, target). The
    bases; long-caption retrieval of every HiMo fine-tune variant the claims compare; short
    retrieval and zero-shot accuracy of the headline hyperbolic fine-tunes."""
    himo = dict.fromkeys(
        v for c in CLAIMS if c.study == "himo" for v in (c.variant, c.baseline) if v != PRETRAIN
    )
    return (
        ("himo", PRETRAIN, "world-zeroshot/L1_correct", 0.8),
        ("himo", PRETRAIN, "world-zeroshot/L3_correct", 0.3),
        ("himo", PRETRAIN, "world-short/i2t_hit1", 0.85),
        *(("himo", v, "world-long/i2t_hit1", 0.5) for v in himo),
        *(
            ("argent", v, item, target)
            for v in HEADLINE_FINETUNES["argent"]
            for item, target in (
                ("world-short/i2t_hit1", 0.85),
                ("world-zeroshot/L1_correct", 0.8),
                ("world-zeroshot/L3_correct", 0.3),
            )
        ),
    )


TARGETS = _targets()
# the contrastive term of each method's log, the one a collapse leaves at ln B
LOSS_TERM = {
    "clip": "contrastive",
    "himo": "global",
    "longclip": "long",
    "meru": "contrastive",
    "hycoclip": "contrastive",
    "argent": "contrastive",
}


class MissingRunsError(FileNotFoundError):
    """A claim's planned runs have no results; the message names them."""


def run_collapse(info: dict[str, Any], log: list[dict[str, Any]]) -> str | None:
    """:func:`~paperlib.tables.verdicts.collapse_reason` of a finished run's record and log."""
    term = LOSS_TERM[info["config"]["method"]]
    losses = [r[term] for r in log if term in r]
    return collapse_reason(losses, info["config"]["train"]["batch_size"], info["feature_std"])


def run_plateau(records: list[dict[str, Any]], n_items: int) -> str | None:
    """Why a trained run's validation curves had not flattened (``tables.plateau``, judged
    against the standard error over ``n_items`` test items), or None (also for a run without a
    curve: the references)."""
    found = [p.reason() for p in run_plateaus(records, n_items).values() if not p.reached]
    return "; ".join(found) if found else None


def _read_run(done: Path, scale: Scale) -> dict[str, Any]:
    """One ``run.done`` with its validity decided anew from its log (named errors)."""
    try:
        info = json.loads(done.read_text())
        info["config"]["method"], info["seed"], info["variant"]  # noqa: B018 - required keys
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{done}: not a study run record ({type(error).__name__}: {error}); delete its "
            "folder and run the study again"
        ) from None
    log = done.parent / "log.jsonl"
    records = log_records(log) if log.is_file() else []
    steps = [r for r in records if "loss" in r]
    info["collapsed"] = run_collapse(info, steps)
    info["unconverged"] = run_plateau(records, scale.eval_size)
    info["base"] = scale.base_of(info["seed"]) if info["variant"] != PRETRAIN else info["seed"]
    return info


def finished_runs(scale_name: str) -> list[dict[str, Any]]:
    """``run.done`` records of every finished run, validity (``collapsed``, ``unconverged``)
    decided anew from its log."""
    scale = SCALES[scale_name]
    return [_read_run(d, scale) for d in sorted(results_dir(scale_name).glob("*/*/seed*/run.done"))]


def invalid_reason(run: dict[str, Any], require_plateau: bool = True) -> str | None:
    """Why a run is left out of the claims (collapsed; not converged where the scale requires
    a plateau), or None."""
    if run.get("collapsed"):
        return f"collapsed: {run['collapsed']}"
    if run.get("unconverged") and require_plateau:
        return f"not converged: {run['unconverged']}"
    return None


def expected_seeds(claim: Claim, scale: Scale) -> tuple[int, ...]:
    """The seeds the scale runs a claim's variants on."""
    return scale.seeds if claim.headline else scale.sweep_seeds


def _side(scale_name: str, study: str, variant: str, item: str, seeds: list[int]) -> np.ndarray:
    """(seeds, items) values of one variant's per-item metric."""
    return np.stack([read_items(scale_name, study, variant, s)[item] for s in seeds])


def _reference(scale_name: str, study: str, item: str) -> float | None:
    """The untrained model's mean of ``item`` (None when that reference did not run)."""
    try:
        return float(np.mean(read_items(scale_name, study, UNTRAINED, 0)[item]))
    except (FileNotFoundError, KeyError):
        return None


def _guard(scale_name: str, claim: Claim, seeds: list[int]) -> dict[str, Any] | None:
    """The claim's learning guard: its threshold, each side's interval and the untrained value."""
    guard = claim.metric.guard
    if guard is None:
        return None
    sides = {
        name: summary(_side(scale_name, claim.study, variant, guard.item, seeds))
        for name, variant in (("variant", claim.variant), ("baseline", claim.baseline))
    }
    failed = [
        f"{name} {side['mean']:.4f} (interval from {side['interval'][0]:.4f}) not above "
        f"{guard.threshold:g}"
        for name, side in sides.items()
        if side["interval"][0] <= guard.threshold
    ]
    untrained = _reference(scale_name, claim.study, guard.item)
    return {
        "item": guard.item,
        "threshold": guard.threshold,
        "why": guard.why,
        "untrained": untrained,
        "untrained_below": None if untrained is None else untrained < guard.threshold,
        **sides,
        "failed": "; ".join(failed) or None,
    }


def _valid_seeds(claim: Claim, runs: list[dict], scale: Scale) -> tuple[list[int], list, list]:
    """(valid seeds, invalid runs named, missing runs named) of a claim's two variants."""

    def seeds_of(variant):
        return {r["seed"]: r for r in runs if r["study"] == claim.study and r["variant"] == variant}

    a, b = seeds_of(claim.variant), seeds_of(claim.baseline)
    expected = expected_seeds(claim, scale)
    missing = [
        f"{claim.study}/{slug(v)}/seed{s}" for v, found in ((claim.variant, a), (claim.baseline, b))
        for s in expected if s not in found
    ]  # fmt: skip
    common = sorted(set(a) & set(b))
    why = {id(r): invalid_reason(r, scale.require_plateau) for r in (*a.values(), *b.values())}
    invalid = sorted(
        {f"{r['variant']}/seed{r['seed']}: {why[id(r)]}" for s in common
         for r in (a[s], b[s]) if why[id(r)]}
    )  # fmt: skip
    valid = [s for s in common if not why[id(a[s])] and not why[id(b[s])]]
    return valid, invalid, sorted(set(missing))


def decide_claim(scale_name: str, claim: Claim, runs: list[dict], scale: Scale) -> dict:
    """One claim's effect, raw interval, testability and per-base effects (the family's
    adjustment and the verdict come from :func:`adjust_family`)."""
    seeds, invalid, missing = _valid_seeds(claim, runs, scale)
    record = {
        "claim": claim.id,
        **{k: v for k, v in claim.as_dict().items() if k != "id"},
        "seeds": seeds,
        "runs_total": len(expected_seeds(claim, scale)),
        "invalid_runs": invalid,
        "missing_runs": missing,
    }
    if not seeds:
        why = "no seed where both runs are valid"
        if missing:  # a partial study: say that the runs were never made, not that they failed
            why = f"not run: {len(missing)} planned run(s) missing (a partial study)"
        return {**record, "effect": None, "untestable": why}
    va = _side(scale_name, claim.study, claim.variant, claim.item, seeds)
    vb = _side(scale_name, claim.study, claim.baseline, claim.baseline_metric, seeds)
    if not (np.isfinite(va).all() and np.isfinite(vb).all()):
        return {**record, "effect": None, "untestable": f"non-finite values of {claim.item}"}
    effect = crossed_estimate(va - vb)
    sides = {"variant_value": summary(va), "baseline_value": summary(vb)}
    bases = sorted(
        {r["base"] for r in runs if r["variant"] == claim.variant and r["seed"] in seeds}
    )
    per_base = {
        b: float(np.mean([effect.seed_values[i] for i, s in enumerate(seeds) if scale.base_of(s) == b]))
        for b in bases
    }  # fmt: skip
    chance = claim.chance_for(va.shape[1], world_short_captions(EVAL_SEED, va.shape[1]) if claim.metric.chance == SAME_TEXT else None)  # fmt: skip
    record.update(
        chance=chance,
        effect=effect.mean,
        se=effect.se,
        seed_term=effect.seed_term,
        item_term=effect.item_term,
        interval_raw=list(effect.interval()),
        p_raw=effect.p_value(),
        per_seed=list(effect.seed_values),
        per_base={str(k): v for k, v in per_base.items()},
        **sides,
    )
    guard = _guard(scale_name, claim, seeds)
    if guard is not None:
        record["guard"] = guard
    if claim.metric.item.endswith(
        "/ssi"
    ):  # a text-blind model's scores never move: 0 by definition
        record["reference"] = {"text-blind": 0.0, "untrained": _reference(scale_name, claim.study, claim.item)}  # fmt: skip
    m = claim.metric
    reason = untestable_reason(
        tuple(sides["variant_value"]["interval"]), tuple(sides["baseline_value"]["interval"]),
        sides["baseline_value"]["mean"], chance if m.guard is None else None, m.ceiling,
        m.better, m.smallest,
    )  # fmt: skip
    if guard is not None and guard["failed"]:
        reason = f"a model did not learn ({guard['item']}: {guard['failed']})"
    if reason:
        record["untestable"] = reason
    return record


def adjust_family(records: list[dict], alpha: float = ALPHA) -> list[dict]:
    """Holm over one paper's testable claims (at least 2 seeds), then every claim's verdict."""
    tested = [r for r in records if "untestable" not in r and len(r["seeds"]) >= MIN_SEEDS]
    p_adjusted = holm([r["p_raw"] for r in tested])
    levels = holm_levels([r["p_raw"] for r in tested], alpha)
    for record, p_adj, level in zip(tested, p_adjusted, levels):
        record.update(p_adjusted=p_adj, alpha_adjusted=level, family_size=len(tested))
    out = []
    for record in records:
        out.append({**record, **_verdict(record, alpha)})
    return out


def _verdict(record: dict, alpha: float) -> dict[str, Any]:
    """The verdict, reason and adjusted interval of one decided claim."""
    if "untestable" in record:
        return {"verdict": "untestable", "reason": record["untestable"], "interval": None}
    seeds, raw = len(record["seeds"]), record["interval_raw"]
    if "alpha_adjusted" not in record:  # one seed: not tested, the raw interval shown
        verdict, reason = directional_verdict(raw, raw, record["better"], record["smallest"], seeds)
        return {"verdict": verdict, "reason": reason, "interval": None}
    estimate = _estimate(record)
    adjusted = estimate.interval(record["alpha_adjusted"])
    simultaneous = estimate.interval(alpha / record["family_size"])
    verdict, reason = directional_verdict(adjusted, simultaneous, record["better"], record["smallest"], seeds)  # fmt: skip
    per_base = {int(k): v for k, v in record["per_base"].items()}
    if not bases_agree(per_base, verdict, record["better"]):
        verdict, reason = "inconclusive", f"the bases disagree on the sign ({record['per_base']})"
    return {
        "verdict": verdict,
        "reason": reason,
        "interval": list(adjusted),
        "interval_simultaneous": list(simultaneous),
    }


def _estimate(record: dict) -> Estimate:
    """The effect's :class:`~paperlib.tables.inference.Estimate` back from its record."""
    return Estimate(
        record["effect"], tuple(record["per_seed"]), record["seed_term"], record["item_term"]
    )


def _final_validation(scale_name: str, study: str, variant: str, seed: int) -> dict | None:
    """The last validation record of a run's log (None when the run has none)."""
    log = results_dir(scale_name) / study / slug(variant) / f"seed{seed}" / "log.jsonl"
    records = validation_records(log_records(log)) if log.is_file() else []
    return records[-1] if records else None


def schedule_checks(scale_name: str, runs: list[dict]) -> list[dict]:
    """Per headline variant with a schedule check (``runner.longer``): its final validation
    values at its own and at twice its steps (same seed, same base), the gain, and whether the
    gain is below one test-set standard error (the longer schedule did not help beyond noise;
    else the claims on that variant are flagged, ``schedule_flags``)."""
    out, n = [], SCALES[scale_name].eval_size
    for run in runs:
        if not run["variant"].endswith(LONGER):
            continue
        variant = run["variant"].removesuffix(LONGER)
        own = _final_validation(scale_name, run["study"], variant, run["seed"])
        longer = _final_validation(scale_name, run["study"], run["variant"], run["seed"])
        if own is None or longer is None:
            continue
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
    """Each pre-trained base's plateau checks (``results/bases/bases.json``), [] without it."""
    path = bases_dir() / "bases.json"
    if not path.is_file():
        return []
    return [
        {"model": b["model"], "base": b["base"], **{m: p["reached"] for m, p in b["plateau"].items()}}
        for b in json.loads(path.read_text())["bases"]
    ]  # fmt: skip


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
        median = statistics.median(values) if values else None
        out.append(
            {
                "study": study,
                "variant": variant,
                "metric": item,
                "target": target,
                "median": median,
                "values": values,
                "runs": len(values),
                "met": median is not None and median >= target,
            }
        )
    return out


def report(scale_name: str, partial: bool = False) -> dict[str, Any]:
    """Every claim of ``tables.claims`` decided from the results files, with the learning
    targets and the runs left out (nothing is written). Missing runs raise
    :class:`MissingRunsError` unless ``partial``."""
    scale, runs = SCALES[scale_name], finished_runs(scale_name)
    decided = [decide_claim(scale_name, c, runs, scale) for c in CLAIMS]
    missing = sorted({m for r in decided for m in r["missing_runs"]})
    if missing and not partial:
        raise MissingRunsError(
            f"results/{scale_name}: {len(missing)} planned run(s) have no results: "
            + ", ".join(missing[:12]) + (" ..." if len(missing) > 12 else "")
            + "; run the study to finish them, or decide a partial study (--partial)"
        )  # fmt: skip
    claims = []
    for paper in dict.fromkeys(r["paper"] for r in decided):
        claims += adjust_family([r for r in decided if r["paper"] == paper])
    order = {c.id: i for i, c in enumerate(CLAIMS)}
    claims.sort(key=lambda r: order[r["claim"]])
    checks = schedule_checks(scale_name, runs)
    for record in claims:
        record["partial"] = bool(record["missing_runs"])
        record["schedule_flags"] = schedule_flags(checks, record)
    return {
        "scale": scale_name,
        "alpha": ALPHA,
        "partial": bool(missing),
        "claims": claims,
        "targets": check_targets(scale_name, runs),
        "schedule_checks": checks,
        "base_plateaus": base_plateaus(),
        "excluded_runs": [
            f"{r['study']}/{slug(r['variant'])}/seed{r['seed']}: {why}"
            for r in runs
            if (why := invalid_reason(r, scale.require_plateau))
        ],
        "unconverged_runs": [
            f"{r['study']}/{slug(r['variant'])}/seed{r['seed']}: {r['unconverged']}"
            for r in runs
            if r.get("unconverged")
        ],
    }


def decide(scale_name: str, partial: bool = False) -> dict[str, Any]:
    """:func:`report`, written to ``results/<scale>/claims.json``."""
    decided = report(scale_name, partial)
    atomic_write_text(results_dir(scale_name) / "claims.json", json.dumps(decided, indent=1) + "\n")
    return decided


def summary_table(decided: dict[str, Any]) -> str:
    """Markdown tables of the decided claims and the learning targets (the README's summary of
    ``claims.json``; an untested claim shows its raw interval, marked "raw")."""
    lines = [
        "| claim | paper | verdict | effect [adjusted interval] | paper's effect | smallest "
        "effect | valid / total seeds |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in decided["claims"]:
        paper = "–" if c["paper_effect"] is None else f"{c['paper_effect']:+.3g}"
        verdict = c["verdict"] + (" (not run)" if c.get("reason", "").startswith("not run") else "")
        lines.append(
            f"| {c['statement']} ({claim_name(c)}) | {c['paper']} | {verdict} | "
            f"{effect_text(c)} | {paper} | ±{c['smallest']:g} | "
            f"{len(c['seeds'])} / {c['runs_total']} |"
        )
    lines += ["", "| learning target | runs | median | target | met |", "|---|---|---|---|---|"]
    for t in decided["targets"]:
        median = "–" if t["median"] is None else f"{t['median']:.3f}"
        lines.append(
            f"| {t['metric']} of {t['variant']} | {t['runs']} | {median} | "
            f"≥ {t['target']:g} | {'yes' if t['met'] else 'no'} |"
        )
    return "\n".join(lines)
