"""Deciding the study's claims and checking its learning targets from the results files.

:func:`decide` reads every finished run's ``run.done``, ``log.jsonl`` and ``items.npz`` and
writes ``results/<scale>/claims.json``. Per claim (``tables.claims``;
``docs/methods/conventions.md#verdicts``):

1. runs that collapsed (``tables.verdicts.collapse_reason``) or whose validation curve had not
   flattened (``tables.plateau``, against the curve's own item count) are left out and named
   (``invalid_runs``; ``seeds_kept`` counts each arm's valid seeds);
2. the paired effect variant − baseline over the seeds where both runs are valid, the base as a
   level (``tables.inference.based_estimate``): its raw 95 % and simultaneous (``interval``, at
   the family's size) intervals, its p-values of "no effect" and of the equivalence within the
   smallest effect, each base's own effect and the base × method interaction test; each side's
   own value; both arms against the base (``against_base``); the metric on the untrained model
   and on each base (``measured``), and the regime (``regime``);
3. testability on mean values (``tables.verdicts.untestable_reason``): the learning guard,
   chance, headroom, and the retention guard (each arm keeps at least :data:`RETENTION` of its
   base's short I2T R@1 and zero-shot L1, else "the base is forgotten");
4. per declared family (every claim of a paper), Holm over all its claims (p = 1 for one that
   cannot be tested) for the sign and for the equivalence, then the verdict
   (``tables.verdicts.verdict``, per base where the interaction is significant).

A claim whose runs are missing (a seed or a variant the scale plans) is an error naming them,
unless ``partial=True``: then it is decided on what exists and marked ``partial``.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from paperlib.atomic import atomic_write_text
from paperlib.engine.evaluation import world_short_captions
from paperlib.engine.validation import validation_records
from paperlib.study.design import HEADLINE, trend_label
from paperlib.study.pretrain import bases_dir
from paperlib.study.reader import EVAL_SEED, PRETRAIN, read_items, results_dir, slug
from paperlib.study.scales import SCALES, Scale
from paperlib.study.trend import claim_trend, trend_settings
from paperlib.tables.claims import (
    CLAIMS,
    FAMILY_SIZES,
    HEADLINE_FINETUNES,
    LONGER,
    SAME_TEXT,
    SMALLER,
    UNTRAINED,
    Claim,
)
from paperlib.tables.inference import (
    ALPHA,
    based_estimate,
    bonferroni_alpha,
    holm,
    interaction_test,
    per_base_estimates,
    summary,
)
from paperlib.tables.plateau import curve_items, rate_standard_error, run_plateaus
from paperlib.tables.summary import (
    base_text,
    claim_name,
    effect_text,
    regime_text,
    sign_text,
    size_text,
)
from paperlib.tables.verdicts import (
    BASE_DEPENDENT,
    INTERACTION_ALPHA,
    MIN_SEED_DF,
    UNDERPOWERED,
    UNTESTABLE,
    Evidence,
    collapse_reason,
    untestable_reason,
)
from paperlib.tables.verdicts import verdict as decide_verdict
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


def run_plateau(records: list[dict[str, Any]]) -> str | None:
    """Why a trained run's validation curves had not flattened (``tables.plateau``, judged
    against the standard error over the curve's own held-out items), or None (also for a run
    without a curve: the references)."""
    found = [p.reason() for p in run_plateaus(records).values() if not p.reached]
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
    try:
        info["unconverged"] = run_plateau(records)
    except ValueError as error:
        raise ValueError(f"{log}: {error}") from None
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


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _guard(scale_name: str, claim: Claim, seeds: list[int]) -> dict | None:
    """The claim's learning guard: its threshold, each side's value (judged on its mean, a
    point value) with its 95 % interval, and the untrained model's value."""
    guard = claim.metric.guard
    if guard is None:
        return None
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    sides = {
        name: summary(_side(scale_name, claim.study, variant, guard.item, seeds), bases)
        for name, variant in (("variant", claim.variant), ("baseline", claim.baseline))
    }
    failed = [
        f"{name} mean {side['mean']:.4f} not above {guard.threshold:g}"
        for name, side in sides.items()
        if side["mean"] <= guard.threshold
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


def base_variant(variant: str) -> str:
    """The reference run of the pre-trained base a study variant starts from (the smaller
    model's bases for its arm); the hyperbolic fine-tunes start from the same Euclidean bases."""
    return PRETRAIN + (SMALLER if variant.endswith(SMALLER) else "")


def _base_items(scale_name: str, variant: str, item: str, bases: list[int]) -> np.ndarray | None:
    """(seeds, items) values of ``item`` of each seed's base, None where a base lacks it (the
    Euclidean bases have no hyperbolic metric)."""
    rows = []
    for b in bases:
        try:
            rows.append(read_items(scale_name, "himo", base_variant(variant), b)[item])
        except (FileNotFoundError, KeyError):
            return None
    return np.stack(rows)


def measured_levels(scale_name: str, claim: Claim) -> dict[str, Any]:
    """The claim's metric on an untrained model and on each pre-trained base, as measured."""
    scale = SCALES[scale_name]
    base = {}
    for b in scale.bases:
        values = _base_items(scale_name, claim.variant, claim.item, [b])
        base[str(b)] = None if values is None else _mean(values)
    return {"untrained": _reference(scale_name, claim.study, claim.item), "base": base}


def against_base(scale_name: str, claim: Claim, seeds: list[int], alpha: float) -> dict:
    """Each arm's change from the base it started from (arm − base, item by item, the base as a
    level), with its family-level interval; None for an arm whose base lacks the metric."""
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    out: dict[str, Any] = {}
    for name, variant, item in (
        ("variant", claim.variant, claim.item),
        ("baseline", claim.baseline, claim.baseline_metric),
    ):
        base = _base_items(scale_name, variant, item, bases)
        if base is None:
            out[name] = None
            continue
        estimate = based_estimate(
            _side(scale_name, claim.study, variant, item, seeds) - base, bases
        )
        out[name] = {"effect": estimate.mean, "interval": list(estimate.interval(alpha))}
    out["reading"] = base_reading(out, claim.metric.better)
    return out


def base_reading(arms: dict[str, Any], better: str) -> str | None:
    """In words, where the two arms stand against the base: both below it (a gain of the
    variant over the baseline is then less damage), both above, or on either side."""
    if arms.get("variant") is None or arms.get("baseline") is None:
        return None
    sign = 1.0 if better == "higher" else -1.0
    v, b = (sign * arms[k]["effect"] for k in ("variant", "baseline"))
    if v < 0 and b < 0:
        less = " (the variant's difference is less damage)" if v > b else ""
        return f"both arms fall below the base{less}"
    if v > 0 and b > 0:
        return "both arms improve on the base"
    return (
        "the variant improves on the base and the baseline does not"
        if v > b
        else ("the baseline improves on the base and the variant does not")
    )


def regime(scale_name: str, claim: Claim, seeds: list[int]) -> dict[str, Any] | None:
    """The training regime the claim holds at: the variant's batch, steps, learning rate and
    warm-up (from its first valid seed's ``run.done``)."""
    if not seeds:
        return None
    done = (
        results_dir(scale_name) / claim.study / slug(claim.variant) / f"seed{seeds[0]}" / "run.done"
    )
    config = json.loads(done.read_text())["config"]
    train, optim = config.get("train", {}), config.get("optim", {})
    return {
        "batch_size": train.get("batch_size"),
        "steps": train.get("steps"),
        "lr": optim.get("lr"),
        "warmup_steps": optim.get("warmup_steps"),
        "model": config.get("model", {}).get("name"),
    }


# the retention guard: what a fine-tune must keep of its base (both papers keep short retrieval)
RETENTION_ITEMS = ("world-short/i2t_hit1", "world-zeroshot/L1_correct")
RETENTION = 0.8  # the share of the base's value a fine-tune must keep


def retention(scale_name: str, study: str, variant: str, seeds: list[int]) -> dict[str, float]:
    """Per retention item, the arm's mean over ``seeds`` as a share of the mean of the bases
    those seeds started from (``{}`` for a base reference or where a base lacks the item)."""
    if variant.startswith(PRETRAIN) or variant == UNTRAINED or not seeds:
        return {}
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    out = {}
    for item in RETENTION_ITEMS:
        base = _base_items(scale_name, variant, item, bases)
        if base is not None and _mean(base) > 0:
            out[item] = _mean(_side(scale_name, study, variant, item, seeds)) / _mean(base)
    return out


def forgotten_reason(kept: dict[str, dict[str, float]]) -> str | None:
    """Why a claim reads "the base is forgotten" (an arm keeps less than :data:`RETENTION` of
    its base on a retention item), or None; ``kept``: arm name → :func:`retention`."""
    lost = [
        f"{arm} keeps {share:.2f} of the base's {item}"
        for arm, shares in kept.items()
        for item, share in shares.items()
        if share < RETENTION
    ]
    if not lost:
        return None
    return f"the base is forgotten ({'; '.join(lost)}; the guard asks ≥ {RETENTION:g})"


def forgotten_runs(scale_name: str, runs: list[dict]) -> list[str]:
    """Every trained run that keeps less than :data:`RETENTION` of its base on a retention
    item, named with its shares."""
    out = []
    for r in runs:
        shares = retention(scale_name, r["study"], r["variant"], [r["seed"]])
        low = {item: share for item, share in shares.items() if share < RETENTION}
        if low:
            listed = ", ".join(f"{item} {share:.2f}" for item, share in low.items())
            out.append(f"{r['study']}/{slug(r['variant'])}/seed{r['seed']}: keeps {listed}")
    return out


def closest_to_radius(scale_name: str, claim: Claim, seeds: list[int]) -> float | None:
    """The smallest gap, over both arms' valid seeds, between a training batch's shortest
    caption and MERU's radius ``2K/√c`` at the last logged diagnostics step (negative: inside);
    None where no log has the diagnostics."""
    gaps = []
    for variant in (claim.variant, claim.baseline):
        for seed in seeds:
            log = (
                results_dir(scale_name) / claim.study / slug(variant) / f"seed{seed}" / "log.jsonl"
            )
            diags = (
                [r for r in log_records(log) if "diag/text/norm_min" in r] if log.is_file() else []
            )
            if diags:
                gaps.append(diags[-1]["diag/text/norm_min"] - diags[-1]["diag/aperture_radius"])
    return min(gaps) if gaps else None


def premise_reason(scale_name: str, claim: Claim, seeds: list[int], record: dict) -> str | None:
    """For an aperture claim whose baseline leaves fewer held-out captions inside the radius
    than the smallest effect of interest: "premise not reproduced" (ARGENT's claim starts from
    a baseline whose captions fall inside), with the closest a training caption came to it."""
    if not claim.item.startswith("aperture/"):
        return None
    baseline = record["baseline_value"]["mean"]
    if baseline >= claim.metric.smallest:
        return None
    gap = closest_to_radius(scale_name, claim, seeds)
    closest = "" if gap is None else f"; the closest training caption ends {gap:+.3f} from it"
    return (
        f"premise not reproduced: the baseline leaves {baseline:.2%} of the held-out captions "
        f"inside 2K/√c (fewer than ±{claim.metric.smallest:g}){closest}"
    )


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


def seeds_kept(claim: Claim, runs: list[dict], scale: Scale) -> dict[str, int]:
    """Per arm, how many of the planned seeds have a valid run (and the pairs both keep)."""
    seeds, _, _ = _valid_seeds(claim, runs, scale)
    expected = expected_seeds(claim, scale)

    def valid(variant):
        return sum(
            1 for r in runs if r["study"] == claim.study and r["variant"] == variant
            and r["seed"] in expected and not invalid_reason(r, scale.require_plateau)
        )  # fmt: skip

    return {"variant": valid(claim.variant), "baseline": valid(claim.baseline), "pairs": len(seeds)}


def _mean_logged(scale_name: str, study: str, variant: str, seed: int, key: str) -> float | None:
    """The mean of ``key`` over a run's logged training steps (None where it logs none)."""
    log = results_dir(scale_name) / study / slug(variant) / f"seed{seed}" / "log.jsonl"
    values = [r[key] for r in log_records(log) if key in r] if log.is_file() else []
    return float(np.mean(values)) if values else None


def trend_effect(
    scale_name: str, claim: Claim, runs: list[dict], variant: str, baseline: str
) -> dict[str, Any]:
    """The claim's effect with ``variant`` and ``baseline`` in place of its arms, over the
    sweep seeds where both are valid (the base as a level, 95 % interval), with the variant's
    batch and steps and each arm's mean HiDe component count where it logs one."""
    scale = SCALES[scale_name]
    derived = replace(claim, variant=variant, baseline=baseline, headline=False)
    seeds, _, missing = _valid_seeds(derived, runs, scale)
    seeds = [s for s in seeds if s in scale.sweep_seeds]  # every setting on the same seeds
    if not seeds:
        return {"effect": None, "seeds": [], "missing_runs": len(missing)}
    diff = _side(scale_name, claim.study, variant, claim.item, seeds) - _side(
        scale_name, claim.study, baseline, claim.baseline_metric, seeds
    )
    estimate = based_estimate(diff, [scale.base_of(s) for s in seeds])
    setting = regime(scale_name, derived, seeds) or {}
    hide = {
        name: _mean_logged(scale_name, claim.study, arm, seeds[0], "hide_m")
        for name, arm in (("variant", variant), ("baseline", baseline))
    }
    return {
        "effect": estimate.mean,
        "interval": list(estimate.interval()),
        "seeds": seeds,
        "batch_size": setting.get("batch_size"),
        "steps": setting.get("steps"),
        "hide_m": hide,
    }


def headline_trend(scale_name: str, claim: Claim, runs: list[dict]) -> dict[str, Any] | None:
    """:func:`~paperlib.study.trend.claim_trend` of a claim between two headline arms (None for
    the sweeps' claims)."""
    if claim.variant not in HEADLINE or claim.baseline not in HEADLINE:
        return None
    return claim_trend(
        trend_settings(SCALES[scale_name]), trend_label, claim.variant, claim.baseline,
        lambda v, b: trend_effect(scale_name, claim, runs, v, b), claim.metric.better,
    )  # fmt: skip


def decide_claim(scale_name: str, claim: Claim, runs: list[dict], scale: Scale) -> dict:
    """One claim's effect (the base as a level), raw test statistics, testability, per-base
    effects and interaction test, both arms against the base and the measured chance levels
    (the family's adjustment and the verdict come from :func:`adjust_family`)."""
    seeds, invalid, missing = _valid_seeds(claim, runs, scale)
    alpha = bonferroni_alpha(FAMILY_SIZES[claim.family])
    record = {
        "claim": claim.id,
        **{k: v for k, v in claim.as_dict().items() if k != "id"},
        "seeds": seeds,
        "runs_total": len(expected_seeds(claim, scale)),
        "seeds_kept": seeds_kept(claim, runs, scale),
        "invalid_runs": invalid,
        "missing_runs": missing,
        "measured": measured_levels(scale_name, claim),
        "regime": regime(scale_name, claim, seeds),
        "trend": headline_trend(scale_name, claim, runs),
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
    bases = [scale.base_of(s) for s in seeds]
    record.update(_effect_fields(va - vb, bases, claim.metric.smallest, alpha))
    record.update(variant_value=summary(va, bases), baseline_value=summary(vb, bases))
    record["against_base"] = against_base(scale_name, claim, seeds, alpha)
    texts = (
        world_short_captions(EVAL_SEED, va.shape[1]) if claim.metric.chance == SAME_TEXT else None
    )
    chance = claim.chance_for(va.shape[1], texts, record["measured"]["untrained"])
    record["chance"] = chance
    guard = _guard(scale_name, claim, seeds)
    if guard is not None:
        record["guard"] = guard
    if claim.metric.item.endswith("/ssi"):  # a text-blind model's scores never move: 0
        record["reference"] = {"text-blind": 0.0, "untrained": record["measured"]["untrained"]}
    m = claim.metric
    reason = untestable_reason(
        record["variant_value"]["mean"], record["baseline_value"]["mean"],
        chance if m.guard is None else None, m.ceiling, m.better, m.smallest,
    )  # fmt: skip
    if guard is not None and guard["failed"]:
        reason = f"a model did not learn ({guard['item']}: {guard['failed']})"
    kept = {
        name: retention(scale_name, claim.study, variant, seeds)
        for name, variant in (("variant", claim.variant), ("baseline", claim.baseline))
    }
    record["retention"] = {**kept, "threshold": RETENTION}
    reason = forgotten_reason(kept) or premise_reason(scale_name, claim, seeds, record) or reason
    if reason:
        record["untestable"] = reason
    return record


def _effect_fields(diff: np.ndarray, bases: list[int], smallest: float, alpha: float) -> dict:
    """The effect's estimate (base as a level), its raw sign and equivalence p-values, its
    family-level interval, each base's own effect and the base × method interaction test."""
    effect = based_estimate(diff, bases)
    per_base = per_base_estimates(diff, bases)
    return {
        "effect": effect.mean,
        "se": effect.se,
        "seed_term": effect.seed_term,
        "item_term": effect.item_term,
        "seed_df": effect.seed_df,
        "interval_raw": list(effect.interval()),
        "interval": list(effect.interval(alpha)),
        "p_raw": effect.p_value(),
        "p_equivalence_raw": effect.equivalence_p(smallest),
        "per_seed": list(effect.seed_values),
        "bases_of_seeds": bases,
        "per_base": {
            str(b): {
                "effect": e.mean,
                "seeds": e.seeds,
                "interval": list(e.interval(alpha)),
                "p_raw": e.p_value(),
                "p_equivalence_raw": e.equivalence_p(smallest),
            }
            for b, e in per_base.items()
        },  # fmt: skip
        "interaction": interaction_test(effect.seed_values, bases),
    }


def testable(record: dict) -> bool:
    """Whether a decided claim enters its family's tests with its own p-values (else p = 1)."""
    return "untestable" not in record and record.get("seed_df", 0) >= MIN_SEED_DF


def adjust_family(records: list[dict], alpha: float = ALPHA) -> list[dict]:
    """Holm over one declared family, every claim of it counted (a claim that cannot be tested
    enters with p = 1), for the sign and for the equivalence; then every claim's verdict."""
    families = {r["family"] for r in records}
    if len(families) != 1 or None in families:
        raise ValueError(f"adjust_family takes the claims of one declared family; got {families}")
    (family,) = families
    size = FAMILY_SIZES[family]
    if len(records) > size:
        raise ValueError(f"family {family!r} declares {size} claims; {len(records)} given")
    padding = [1.0] * (size - len(records))  # declared claims not decided here count as p = 1
    p_sign = holm([r["p_raw"] if testable(r) else 1.0 for r in records] + padding)
    p_eq = holm([r["p_equivalence_raw"] if testable(r) else 1.0 for r in records] + padding)
    out = []
    for record, ps, pe in zip(records, p_sign, p_eq):
        adjusted = {**record, "p_adjusted": ps, "p_equivalence_adjusted": pe, "family_size": size}
        decided = {**adjusted, **_verdict(adjusted, alpha)}
        decided["reason"] += scale_wording(decided)
        out.append(decided)
    return out


def scale_wording(record: dict) -> str:
    """What a verdict's reason adds about scale: the regime it holds at and, where the trend
    runs exist, where the effect moves with batch size and training length."""
    words = f"; holds at {regime_text(record)}" if record.get("regime") else ""
    trend = record.get("trend") or {}
    for axis, reading in (trend.get("reading") or {}).items():
        if not reading.startswith("not measured"):
            words += f"; with {axis}: {reading}"
    return words


def _evidence(record: dict, alpha: float, **changes: Any) -> Evidence:
    fields = dict(
        effect=record["effect"], simultaneous=tuple(record["interval"]),
        p_sign=record["p_adjusted"], p_equivalence=record["p_equivalence_adjusted"],
        better=record["better"], smallest=record["smallest"],
        paper_effect=record.get("paper_effect"), paper_units=bool(record.get("paper_units")),
        alpha=alpha,
    )  # fmt: skip
    return Evidence(**{**fields, **changes})


def _verdict(record: dict, alpha: float) -> dict[str, Any]:
    """The verdict and reason of one adjusted claim (per base where the bases differ)."""
    if "untestable" in record:
        return {"verdict": UNTESTABLE, "reason": record["untestable"]}
    if record["seed_df"] < MIN_SEED_DF:
        counts = Counter(record.get("bases_of_seeds", []))
        why = (
            f"the valid seeds of each base tie ({len(record['seeds'])} valid)"
            if counts and max(counts.values()) > 1
            else f"no base has two valid seeds ({len(record['seeds'])} valid)"
        )
        return {
            "verdict": UNDERPOWERED,
            "reason": f"{why}: the seed variance is unknown; in its family with p = 1",
        }
    verdict, reason = decide_verdict(_evidence(record, alpha))
    interaction = record.get("interaction")
    if not interaction or interaction["p"] >= INTERACTION_ALPHA:
        return {"verdict": verdict, "reason": reason, "verdict_per_base": None}
    size = record["family_size"]
    per_base = {
        b: decide_verdict(_evidence(
            record, alpha, effect=e["effect"], simultaneous=tuple(e["interval"]),
            p_sign=min(1.0, size * e["p_raw"]), p_equivalence=min(1.0, size * e["p_equivalence_raw"]),
        ))[0]
        for b, e in record["per_base"].items()
    }  # fmt: skip
    test = (
        f"the base × method interaction is significant (F({interaction['df_between']}, "
        f"{interaction['df_within']}) = {interaction['F']:.3g}, p = {interaction['p']:.3g})"
    )
    if len(set(per_base.values())) == 1:
        return {"verdict": verdict, "reason": f"{reason}; {test}, the bases agree", "verdict_per_base": per_base}  # fmt: skip
    listed = ", ".join(f"base {b}: {v}" for b, v in per_base.items())
    return {"verdict": BASE_DEPENDENT, "reason": f"{test}: {listed}", "verdict_per_base": per_base}


def _final_validation(scale_name: str, study: str, variant: str, seed: int) -> dict | None:
    """The last validation record of a run's log (None when the run has none)."""
    log = results_dir(scale_name) / study / slug(variant) / f"seed{seed}" / "log.jsonl"
    records = validation_records(log_records(log)) if log.is_file() else []
    return records[-1] if records else None


def schedule_checks(scale_name: str, runs: list[dict]) -> list[dict]:
    """Per headline variant with a schedule check (``study.design.longer``): its final validation
    values at its own and at twice its steps (same seed, same base), the gain, and whether the
    gain is below one test-set standard error (the longer schedule did not help beyond noise;
    else the claims on that variant are flagged, ``schedule_flags``)."""
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


def run_code_versions(runs: list[dict]) -> list[dict[str, Any]]:
    """The code versions the decided runs were trained by: each training-code hash (None for a
    run recorded without provenance) with its commits and how many runs it made, most first."""
    versions: dict[str | None, dict[str, Any]] = {}
    for r in runs:
        provenance = r.get("provenance") or {}
        entry = versions.setdefault(
            provenance.get("code_hash"), {"code_hash": provenance.get("code_hash"), "commits": set(), "runs": 0}
        )  # fmt: skip
        entry["runs"] += 1
        if provenance.get("commit"):
            entry["commits"].add(provenance["commit"])
    listed = [{**v, "commits": sorted(v["commits"])} for v in versions.values()]
    return sorted(listed, key=lambda v: -v["runs"])


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
    for family in FAMILY_SIZES:
        members = [r for r in decided if r["family"] == family]
        claims += adjust_family(members) if members else []
    order = {c.id: i for i, c in enumerate(CLAIMS)}
    claims.sort(key=lambda r: order[r["claim"]])
    checks = schedule_checks(scale_name, runs)
    for record in claims:
        record["partial"] = bool(record["missing_runs"])
        record["schedule_flags"] = schedule_flags(checks, record)
    return {
        "scale": scale_name,
        "alpha": ALPHA,
        "families": dict(FAMILY_SIZES),
        "code_versions": run_code_versions(runs),
        "interval_levels": {f: 1 - bonferroni_alpha(m) for f, m in FAMILY_SIZES.items()},
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
        "forgotten_runs": forgotten_runs(scale_name, runs),
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
    ``claims.json``): verdict, effect with its simultaneous interval, the sign Holm established,
    the size against the paper's, both arms against the base, the regime and the family's
    size."""
    lines = [
        "| claim | paper | verdict | effect [simultaneous interval] | paper's effect | smallest "
        "effect | sign | size | variant / baseline − base | regime | family | valid / total seeds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in decided["claims"]:
        paper = "–" if c["paper_effect"] is None else f"{c['paper_effect']:+.3g}"
        verdict = c["verdict"] + (" (not run)" if c.get("reason", "").startswith("not run") else "")
        lines.append(
            f"| {c['statement']} ({claim_name(c)}) | {c['paper']} | {verdict} | "
            f"{effect_text(c)} | {paper} | ±{c['smallest']:g} | {sign_text(c)} | "
            f"{size_text(c)} | {base_text(c)} | {regime_text(c)} | {c['family_size']} | "
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
