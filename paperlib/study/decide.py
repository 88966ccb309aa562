"""Deciding the study's claims from the results files.

:func:`decide` reads every finished run's ``run.done``, ``log.jsonl`` and ``items.npz`` and
writes ``results/<scale>/claims.json``, with the learning targets and schedule checks
(``study.targets``) and the study's one error statement (``tables.error_control``). Per claim
(``tables.claims``; ``docs/methods/conventions.md#verdicts``):

1. runs that collapsed (``tables.verdicts.collapse_reason``) or whose validation curve was still
   rising (``tables.plateau``, against the curve's own noise) are left out and named
   (``study.run_validity``; ``invalid_runs``; ``seeds_kept`` counts each arm's valid seeds);
2. δ on the study's scale (``study.smallest``: the paper's effect as a share of headroom,
   carried onto the claim's measured reference, halved);
3. the paired effect variant − baseline over the seeds where both runs are valid, the base as a
   level (``tables.inference.based_estimate``): its raw 95 % interval and its interval at the
   claim's level of the error statement (``interval``), its p-values of "no effect" and of the
   equivalence within δ, each base's own effect and the difference of the two bases' effects
   (at the base readings' level); each side's own value; the share of items the arms answer
   differently (``tables.disagreement``); both arms against the base (``against_base``); the
   metric on the untrained model and on each base (``measured``), the chance level
   (``tables.chance``) and the regime (``regime``);
4. testability on mean values (``tables.verdicts.untestable_reason``): the learning guard,
   chance and the retention guard (each arm keeps at least
   :data:`~paperlib.study.base_reference.RETENTION` of its base's short I2T R@1 and zero-shot
   L1, else "the base is forgotten"); for an arm trained from random weights, its learning
   targets (``study.targets.SCRATCH_TARGETS``); and the claim's premise (``study.premise``);
5. per declared family (every claim of a paper), Holm's adjusted p-values for the sign and the
   equivalence, reported; then the verdict, read off the displayed interval (:func:`_verdict`,
   ``tables.verdicts.verdict``).

A claim whose runs are missing (a seed or a variant the scale plans) is an error naming them,
unless ``partial=True``: then it is decided on what exists and marked ``partial``.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from paperlib.atomic import atomic_write_text
from paperlib.models.hyperbolic import CURV_RANGE
from paperlib.provenance import code_hash
from paperlib.study.base_reference import (
    RETENTION,
    against_base,
    arm_values,
    forgotten_reason,
    forgotten_runs,
    measured_levels,
    retention,
    untrained_value,
)
from paperlib.study.code_versions import equivalent_hashes
from paperlib.study.design import HEADLINE, plan, trend_label
from paperlib.study.premise import premise_record
from paperlib.study.reader import EVAL_SEED, results_dir, slug
from paperlib.study.results_files import check_value, read_run_done
from paperlib.study.run_validity import MissingRunsError, finished_runs, invalid_reason
from paperlib.study.scales import SCALES, Scale, from_scratch
from paperlib.study.smallest import claim_translation
from paperlib.study.targets import (
    SCRATCH_TARGETS,
    base_plateaus,
    check_targets,
    not_learned,
    schedule_checks,
    schedule_flags,
)
from paperlib.study.trend import claim_trend, trend_settings
from paperlib.tables.chance import world_chance
from paperlib.tables.claims import CLAIMS, FAMILY_SIZES, Claim, ClaimDeclarationError
from paperlib.tables.disagreement import NEAR_COPY_SHARE, item_disagreement, near_copies
from paperlib.tables.error_control import base_alpha, claim_alpha, statement, trend_alpha
from paperlib.tables.inference import (
    ALPHA,
    base_difference,
    based_estimate,
    design_note,
    holm,
    interaction_test,
    per_base_estimates,
    seed_weight,
    summary,
)
from paperlib.tables.smallest_effect import Translation
from paperlib.tables.summary import (
    base_text,
    claim_name,
    delta_text,
    design_text,
    effect_text,
    exclusions_text,
    paper_text,
    premise_text,
    regime_text,
    sign_text,
    size_text,
)
from paperlib.tables.synthesis import not_run_clause
from paperlib.tables.trend_slope import slope_df, slope_estimate
from paperlib.tables.verdicts import (
    CONTRADICTS,
    DID_NOT_LEARN,
    DIFFERS_BY_BASE,
    MEANINGS,
    MIN_SEED_DF,
    NEAR_COPIES,
    NOT_RUN,
    PREMISE_FAILS,
    REPRODUCES,
    REPRODUCES_BELOW,
    SMALLER,
    UNDECIDED,
    UNDERPOWERED,
    UNTESTABLE,
    Evidence,
    better_sign,
    design_verdict,
    differs_between_bases,
    untestable_reason,
)
from paperlib.tables.verdicts import verdict as decide_verdict
from paperlib.train import log_records


def expected_seeds(claim: Claim, scale: Scale) -> tuple[int, ...]:
    """The seeds the scale runs a claim's variants on: the seeds both of its arms run on
    (``Scale.arm_seeds``)."""
    both = set(scale.arm_seeds(claim.variant)) & set(scale.arm_seeds(claim.baseline))
    return tuple(sorted(both))


def _guard(scale_name: str, claim: Claim, seeds: list[int]) -> dict | None:
    """The claim's learning guard: its threshold, each side's value (judged on its mean, a
    point value) with its 95 % interval, and the untrained model's value."""
    guard = claim.metric.guard
    if guard is None:
        return None
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    sides = {
        name: summary(arm_values(scale_name, claim.study, variant, guard.item, seeds), bases)
        for name, variant in (("variant", claim.variant), ("baseline", claim.baseline))
    }
    failed = [
        f"{name} mean {side['mean']:.4f} not above {guard.threshold:g}"
        for name, side in sides.items()
        if side["mean"] <= guard.threshold
    ]
    untrained = untrained_value(scale_name, claim.study, guard.item)
    return {
        "item": guard.item,
        "threshold": guard.threshold,
        "why": guard.why,
        "untrained": untrained,
        "untrained_below": None if untrained is None else untrained < guard.threshold,
        **sides,
        "failed": "; ".join(failed) or None,
    }


def regime(scale_name: str, claim: Claim, seeds: list[int]) -> dict[str, Any] | None:
    """The training regime the claim holds at: the variant's batch, steps, learning rate,
    warm-up, model and start (``init``: "random" weights or a pre-trained "base"), from its
    first valid seed's ``run.done``."""
    if not seeds:
        return None
    done = (
        results_dir(scale_name) / claim.study / slug(claim.variant) / f"seed{seeds[0]}" / "run.done"
    )
    config = read_run_done(done)["config"]
    train, optim = config.get("train", {}), config.get("optim", {})
    return {
        "batch_size": train.get("batch_size"),
        "steps": train.get("steps"),
        "lr": optim.get("lr"),
        "warmup_steps": optim.get("warmup_steps"),
        "model": config.get("model", {}).get("name"),
        "init": "random" if config.get("model", {}).get("init") == "random" else "base",
    }


def end_curvatures(scale_name: str, claim: Claim, seeds: list[int]) -> dict[str, Any] | None:
    """Where each arm's learned curvature ends (the last value its log records, per valid
    seed), and whether every one ends at its lower clamp, its start over
    ``models.hyperbolic.CURV_RANGE`` (0.1 from MERU's 1): there "learned curvature" and the
    paper's fixed κ = 0.1 are one regime. None for a Euclidean claim."""
    ends: dict[str, list[float]] = {}
    for name, variant in (("variant", claim.variant), ("baseline", claim.baseline)):
        for seed in seeds:
            log = results_dir(scale_name) / claim.study / slug(variant) / f"seed{seed}"
            found = [r["curv"] for r in log_records(log / "log.jsonl") if "curv" in r]
            if found:
                ends.setdefault(name, []).append(float(found[-1]))
    if not ends:
        return None
    done = read_run_done(
        results_dir(scale_name) / claim.study / slug(claim.variant) / f"seed{seeds[0]}" / "run.done"
    )
    low = done["config"].get("model", {}).get("curv_init", 1.0) / CURV_RANGE
    at_clamp = all(abs(c - low) <= 1e-3 * low for values in ends.values() for c in values)
    return {**ends, "lower_clamp": low, "at_clamp": at_clamp}


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


HEADLINE_SEEDS_KEPT = 0.75  # a headline claim keeps at least 6 of its 8 seed pairs


def seeds_kept(claim: Claim, runs: list[dict], scale: Scale) -> dict[str, Any]:
    """Per arm, how many of the planned seeds have a valid run, the pairs both keep and, for a
    headline claim, the pairs it must keep (:data:`HEADLINE_SEEDS_KEPT` of its seeds) and
    whether it does (``met``)."""
    seeds, _, _ = _valid_seeds(claim, runs, scale)
    expected = expected_seeds(claim, scale)

    def valid(variant):
        return sum(
            1 for r in runs if r["study"] == claim.study and r["variant"] == variant
            and r["seed"] in expected and not invalid_reason(r, scale.require_plateau)
        )  # fmt: skip

    kept = {"variant": valid(claim.variant), "baseline": valid(claim.baseline), "pairs": len(seeds)}
    if claim.headline:
        needed = math.ceil(HEADLINE_SEEDS_KEPT * len(expected))
        kept.update(of=len(expected), needed=needed, met=len(seeds) >= needed)
    return kept


def _mean_logged(scale_name: str, study: str, variant: str, seed: int, key: str) -> float | None:
    """The mean of ``key`` over a run's logged training steps (None where it logs none)."""
    log = results_dir(scale_name) / study / slug(variant) / f"seed{seed}" / "log.jsonl"
    values = [r[key] for r in log_records(log) if key in r] if log.is_file() else []
    for value in values:
        check_value(value, "number", log, key)
    return float(np.mean(values)) if values else None


class TrendArms(NamedTuple):
    """A trend setting's two arms as read once: the claim with them as its arms, the sweep seeds
    where both are valid, each arm's per-item table (seeds × items; None without a seed) and
    the number of planned runs missing."""

    derived: Claim
    seeds: list[int]
    variant_values: np.ndarray | None
    baseline_values: np.ndarray | None
    missing: int

    @property
    def effects(self) -> np.ndarray | None:
        """The per-item effect table, variant − baseline (None without a seed)."""
        if self.variant_values is None:
            return None
        return self.variant_values - self.baseline_values


def _trend_table(
    scale_name: str, claim: Claim, runs: list[dict], variant: str, baseline: str
) -> TrendArms:
    """:class:`TrendArms` of the claim with ``variant`` and ``baseline`` as its arms."""
    scale = SCALES[scale_name]
    derived = replace(claim, variant=variant, baseline=baseline, headline=False)
    seeds, _, missing = _valid_seeds(derived, runs, scale)
    seeds = [s for s in seeds if s in scale.sweep_seeds]
    if not seeds:
        return TrendArms(derived, [], None, None, len(missing))
    return TrendArms(
        derived, seeds,
        arm_values(scale_name, claim.study, variant, claim.item, seeds),
        arm_values(scale_name, claim.study, baseline, claim.baseline_metric, seeds),
        len(missing),
    )  # fmt: skip


def _chance(scale_name: str, claim: Claim, n_items: int) -> float | None:
    """The claim's chance level on its ``n_items`` test items: its metric's permutation null on
    the study's test world (``tables.chance``; None where the metric has none)."""
    return chance_records(n_items)[claim.item]["value"]


@lru_cache(maxsize=4)
def chance_records(n_items: int) -> dict[str, dict[str, Any]]:
    """Every metric's permutation-null record on the study's test world of ``n_items``."""
    return world_chance(EVAL_SEED, n_items)


def _reading_untestable(
    claim: Claim, variant: float, baseline: float, chance: float | None, guard: dict | None,
    smallest: float,
) -> str | None:  # fmt: skip
    """Why two arms' means cannot be read (``tables.verdicts.untestable_reason``: a side at
    chance) and why a model did not learn (its learning ``guard``), joined; None when neither
    holds."""
    reasons = []
    if guard is not None and guard["failed"]:
        reasons.append(f"a model did not learn ({guard['item']}: {guard['failed']})")
    reasons.append(untestable_reason(variant, baseline, chance, smallest))
    return "; ".join(r for r in reasons if r) or None


def _trend_point_untestable(scale_name: str, arms: TrendArms, smallest: float) -> str | None:
    """Why a trend point's arms cannot carry the claim: an arm forgot its base (the retention
    guard), did not learn (the claim's learning guard), or a side sits at chance
    (:func:`_reading_untestable`); None when none holds."""
    derived, seeds = arms.derived, arms.seeds
    kept = {
        name: retention(scale_name, derived.study, arm, seeds)
        for name, arm in (("variant", derived.variant), ("baseline", derived.baseline))
    }
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    reading = _reading_untestable(
        derived, summary(arms.variant_values, bases)["mean"],
        summary(arms.baseline_values, bases)["mean"],
        _chance(scale_name, derived, arms.variant_values.shape[1]),
        _guard(scale_name, derived, seeds), smallest,
    )  # fmt: skip
    return "; ".join(r for r in (forgotten_reason(kept), reading) if r) or None


def trend_effect(
    scale_name: str, claim: Claim, runs: list[dict], variant: str, baseline: str
) -> dict[str, Any]:
    """The claim's effect with ``variant`` and ``baseline`` in place of its arms, over the
    sweep seeds where both are valid (the base as a level): its 95 % interval (None when the
    seed variance is unknown, ``seed_df`` 0), the variant's batch and steps, each arm's HiDe
    component count (mean over the seeds' logged steps) where it logs one, and ``untestable``
    where an arm forgot its base or did not learn (:func:`_trend_point_untestable`)."""
    arms = _trend_table(scale_name, claim, runs, variant, baseline)
    seeds = arms.seeds
    if not seeds:
        return {"effect": None, "seeds": [], "missing_runs": arms.missing}
    estimate = based_estimate(arms.effects, [SCALES[scale_name].base_of(s) for s in seeds])
    setting = regime(scale_name, arms.derived, seeds) or {}
    hide = {}
    for name, arm in (("variant", variant), ("baseline", baseline)):
        logged = [_mean_logged(scale_name, claim.study, arm, s, "hide_m") for s in seeds]
        logged = [m for m in logged if m is not None]
        hide[name] = float(np.mean(logged)) if logged else None
    known = estimate.seed_df >= MIN_SEED_DF
    return {
        "effect": estimate.mean,
        "interval": list(estimate.interval()) if known else None,
        "seed_df": estimate.seed_df,
        "seeds": seeds,
        "batch_size": setting.get("batch_size"),
        "steps": setting.get("steps"),
        "hide_m": hide,
        "untestable": _trend_point_untestable(
            scale_name, arms, claim_translation(scale_name, claim).delta
        ),
    }


def trend_slope(
    scale_name: str, claim: Claim, runs: list[dict], settings: list[tuple[float, tuple[str, str]]]
) -> dict[str, Any] | None:
    """The slope of the claim's effect over ``log2`` of the factor (``tables.trend_slope``),
    fitted to the ``settings`` (``(factor, (variant, baseline))``, those that count) on every
    sweep seed each keeps, with its interval at the trend slopes' level of the study's error
    statement (``tables.error_control``: every headline claim's slope on both trend axes); the
    interval is None where the fit leaves fewer than :data:`MIN_SEED_DF` residual degrees of
    freedom."""
    points: dict[int, list[tuple[float, np.ndarray]]] = {}
    for factor, arms in settings:
        table = _trend_table(scale_name, claim, runs, *arms)
        for row, seed in enumerate(table.seeds):
            points.setdefault(seed, []).append((factor, table.effects[row]))
    alpha = trend_alpha(max(1, trend_slope_count(scale_name)))
    estimate = slope_estimate(points)
    seeds, df = slope_df(points)
    if estimate is None:
        return {"slope": None, "interval": None, "alpha": alpha, "seeds": seeds, "df": df}
    return {
        "slope": estimate.mean,
        "interval": list(estimate.interval(alpha)),
        "alpha": alpha,
        "seeds": seeds,
        "df": estimate.seed_df,
        "per_seed": list(estimate.seed_values),
    }


def trend_slope_count(scale_name: str) -> int:
    """How many trend slopes the study reports at ``scale_name``: every claim between two
    headline arms of a study the scale trains a trend for, on each axis that has a setting
    besides the headline's (none where the scale trains no trend)."""
    axes = sum(len(factors) > 1 for factors in trend_settings(SCALES[scale_name]).values())
    trended = {r.study for r in plan(scale_name, searched=False) if r.stage == "trend"}
    claims = [c for c in CLAIMS if c.study in trended]
    return axes * sum(c.variant in HEADLINE and c.baseline in HEADLINE for c in claims)


def headline_trend(scale_name: str, claim: Claim, runs: list[dict]) -> dict[str, Any] | None:
    """:func:`~paperlib.study.trend.claim_trend` of a claim between two headline arms (None for
    the sweeps' claims)."""
    if claim.variant not in HEADLINE or claim.baseline not in HEADLINE:
        return None
    return claim_trend(
        trend_settings(SCALES[scale_name]), trend_label, claim.variant, claim.baseline,
        lambda v, b: trend_effect(scale_name, claim, runs, v, b), claim.metric.better,
        lambda settings: trend_slope(scale_name, claim, runs, settings),
    )  # fmt: skip


def decide_claim(scale_name: str, claim: Claim, runs: list[dict], scale: Scale) -> dict:
    """One claim's effect (the base as a level) with its interval at the claim's level of the
    study's error statement, its δ on the study's scale, premise, testability, per-base effects
    and their difference, both arms against the base and the chance level (the family's Holm
    p-values and the verdict come from :func:`adjust_family`)."""
    seeds, invalid, missing = _valid_seeds(claim, runs, scale)
    translation = _translation(scale_name, claim, not seeds and bool(missing))
    record = {
        "claim": claim.id,
        **{k: v for k, v in claim.as_dict().items() if k != "id"},
        **_delta_fields(claim, translation),
        "premise_statement": claim.premise.statement,
        "seeds": seeds,
        "runs_total": len(expected_seeds(claim, scale)),
        "seeds_kept": seeds_kept(claim, runs, scale),
        "invalid_runs": invalid,
        "missing_runs": missing,
        "measured": measured_levels(scale_name, claim),
        "regime": regime(scale_name, claim, seeds),
        "curvature": end_curvatures(scale_name, claim, seeds),
        "trend": headline_trend(scale_name, claim, runs),
    }
    if not seeds:
        why = "no seed where both runs are valid"
        if missing:  # a partial study: say that the runs were never made, not that they failed
            why = f"not run: {len(missing)} planned run(s) missing (a partial study)"
        empty = dict.fromkeys(("effect", "interval", "interval_raw", "retention", "chance"))
        if missing and not invalid:  # nothing of the claim has run yet
            return {**record, **empty, "not_run": why}
        return {**record, **empty, "untestable": why}
    va = arm_values(scale_name, claim.study, claim.variant, claim.item, seeds)
    vb = arm_values(scale_name, claim.study, claim.baseline, claim.baseline_metric, seeds)
    if not (np.isfinite(va).all() and np.isfinite(vb).all()):
        return {**record, "effect": None, "untestable": f"non-finite values of {claim.item}"}
    record["learned"] = learned(scale_name, claim, runs, seeds)
    return _measured(scale_name, claim, record, (va, vb), translation)


def learned(scale_name: str, claim: Claim, runs: list[dict], seeds: list[int]) -> dict | None:
    """For a claim with an arm trained from random weights: whether each such arm reaches the
    learning targets (``study.targets.SCRATCH_TARGETS``) on its valid seeds, and what misses;
    None where both arms start from a base."""
    arms = [v for v in (claim.variant, claim.baseline) if from_scratch(v)]
    if not arms:
        return None
    missed = [
        m for v in dict.fromkeys(arms) for m in not_learned(scale_name, claim.study, v, seeds)
    ]
    return {"arms": arms, "targets": SCRATCH_TARGETS, "missed": missed, "met": not missed}


def _translation(scale_name: str, claim: Claim, not_run: bool) -> Translation | None:
    """The claim's δ rule (``study.smallest.claim_translation``); None for a claim of a partial
    study that has not run and whose reference has not run either."""
    try:
        return claim_translation(scale_name, claim)
    except ClaimDeclarationError:
        if not_run:
            return None
        raise


def _delta_fields(claim: Claim, translation: Translation | None) -> dict[str, Any]:
    """The record's δ, its reason and rule, and the paper's effect on this scale (None each
    where the rule could not be read: a claim not run)."""
    if translation is None:
        return dict.fromkeys(("smallest", "smallest_reason", "smallest_rule", "paper_effect_here"))
    return {
        "smallest": translation.delta,
        "smallest_reason": translation.reason(),
        "smallest_rule": translation.as_dict(),
        "paper_effect_here": better_sign(claim.metric.better) * translation.translated,
    }


def _measured(
    scale_name: str, claim: Claim, record: dict, values: tuple, translation: Translation
) -> dict:
    """:func:`decide_claim`'s record once both arms' per-item ``values`` are read: the effect,
    the design note, both arms' values and changes from the base, chance, the learning guard,
    retention, the premise and what makes the claim untestable."""
    scale, (va, vb), seeds = SCALES[scale_name], values, record["seeds"]
    bases = [scale.base_of(s) for s in seeds]
    alpha = claim_alpha(len(CLAIMS), claim.looks)
    record.update(_effect_fields(va - vb, bases, translation.delta, alpha, base_alpha(len(CLAIMS))))
    record["interval_level"] = 1 - alpha
    record["design_note"] = claim_design_note(record, claim, scale, alpha)
    record.update(variant_value=summary(va, bases), baseline_value=summary(vb, bases))
    record["disagreement"] = item_disagreement(va, vb, claim.metric.item_tolerance)
    record["against_base"] = against_base(scale_name, claim, seeds, base_alpha(len(CLAIMS)))
    record["chance"] = chance = _chance(scale_name, claim, va.shape[1])
    record["chance_null"] = chance_records(va.shape[1])[claim.item]["null"]
    guard = _guard(scale_name, claim, seeds)
    if guard is not None:
        record["guard"] = guard
    if claim.metric.item.endswith("/ssi"):  # a text-blind model's scores never move: 0
        record["reference"] = {"text-blind": 0.0, "untrained": record["measured"]["untrained"]}
    means = record["variant_value"]["mean"], record["baseline_value"]["mean"]
    reading = _reading_untestable(claim, *means, chance, guard, translation.delta)
    kept = {
        name: retention(scale_name, claim.study, variant, seeds)
        for name, variant in (("variant", claim.variant), ("baseline", claim.baseline))
    }
    record["retention"] = {**kept, "threshold": RETENTION}
    record["premise"] = premise_record(scale_name, claim, seeds, means[1], translation)
    flat = None if translation.headroom > 0 else (
        f"its reference ({translation.reference_source}) sits at the metric's best value "
        f"{claim.metric.ceiling:g}: no headroom, so no smallest effect"
    )  # fmt: skip
    reason = "; ".join(r for r in (flat, forgotten_reason(kept), reading) if r)
    if reason:
        record["untestable"] = reason
    return record


def _effect_fields(
    diff: np.ndarray, bases: list[int], smallest: float, alpha: float, alpha_base: float
) -> dict:
    """The effect's estimate (base as a level), its raw sign and equivalence p-values, its
    interval at the claim's level ``alpha``, each base's own effect and the difference of the
    two bases' effects (at the base readings' level ``alpha_base``), and the base × method
    interaction test. With fewer than :data:`MIN_SEED_DF` within-base degrees of freedom no
    interval is given."""
    effect = based_estimate(diff, bases)
    per_base = per_base_estimates(diff, bases)
    known = effect.seed_df >= MIN_SEED_DF

    def interval(e, level=ALPHA):
        return list(e.interval(level)) if known else None

    two_bases = len(per_base) == 2
    difference = base_difference(diff, bases) if two_bases else None
    return {
        "effect": effect.mean,
        "se": effect.se,
        "seed_term": effect.seed_term,
        "item_term": effect.item_term,
        "seed_df": effect.seed_df,
        "interval_raw": interval(effect),
        "interval": interval(effect, alpha),
        "p_raw": effect.p_value(),
        "p_equivalence_raw": effect.equivalence_p(smallest) if smallest > 0 else 1.0,
        "per_seed": list(effect.seed_values),
        "bases_of_seeds": bases,
        "per_base": {
            str(b): {"effect": e.mean, "seeds": e.seeds, "interval": interval(e, alpha_base)}
            for b, e in per_base.items()
        },
        "base_difference": None
        if difference is None
        else {
            "bases": [str(b) for b in sorted(per_base)],
            "effect": difference.mean,
            "interval": interval(difference, alpha_base),
        },  # fmt: skip
        "interaction": interaction_test(effect.seed_values, bases),
    }


def claim_design_note(
    record: dict, claim: Claim, scale: Scale, alpha: float
) -> dict[str, Any] | None:
    """The claim's design note (``tables.inference.design_note``): the half-width its planned
    seeds (per base) give at the claim's level ``alpha`` and the committed within-base spread
    of its seed effects, its test-set item floor, and the seeds per base that resolve δ; None
    where the spread is unknown (no base with two valid seeds)."""
    if record["seed_df"] < 1:
        return None
    counts = Counter(record["bases_of_seeds"])
    within = record["seed_term"] / seed_weight([counts[b] for b in sorted(counts)])
    planned = Counter(scale.base_of(s) for s in expected_seeds(claim, scale))
    delta = record["smallest"]
    note = design_note(
        within, record["item_term"], [planned[b] for b in sorted(planned)], alpha, delta
    )
    return {
        **note.as_dict(),
        "delta": delta,
        "planned_per_base": {str(b): planned[b] for b in sorted(planned)},
        "valid_per_base": {str(b): counts[b] for b in sorted(counts)},
        "within_variance": within,
        "within_df": record["seed_df"],
    }


def testable(record: dict) -> bool:
    """Whether a decided claim enters its family's tests with its own p-values (else p = 1)."""
    return "untestable" not in record and record.get("seed_df", 0) >= MIN_SEED_DF


def adjust_family(records: list[dict]) -> list[dict]:
    """Holm over one declared family, every claim of it counted (a claim that cannot be tested
    enters with p = 1), for the sign and for the equivalence, reported beside the verdicts;
    then every claim's verdict, read off its displayed interval (:func:`_verdict`)."""
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
        decided = {**adjusted, **_verdict(adjusted)}
        decided["reason"] += seeds_wording(decided) + scale_wording(decided)
        out.append(decided)
    return out


def seeds_wording(record: dict) -> str:
    """What a verdict's reason adds where a headline claim keeps fewer seed pairs than the
    study asks (``seeds_kept.met`` false)."""
    kept = record.get("seeds_kept") or {}
    if kept.get("met") is not False:
        return ""
    return (
        f"; keeps {kept['pairs']} of {kept['of']} seed pairs (the study asks at least "
        f"{kept['needed']})"
    )


def scale_wording(record: dict) -> str:
    """What a verdict's reason adds about scale: the regime it holds at (a verdict that is not
    untestable) and, where the trend runs exist, where the effect moves with batch size and
    training length."""
    holds = record.get("regime") and record.get("verdict") != UNTESTABLE
    words = f"; holds at {regime_text(record)}" if holds else ""
    trend = record.get("trend") or {}
    for axis, reading in (trend.get("reading") or {}).items():
        if not reading.startswith("not measured"):
            words += f"; with {axis}: {reading}"
    return words


def _evidence(record: dict, **changes: Any) -> Evidence:
    fields = dict(
        effect=record["effect"], interval=tuple(record["interval"]), better=record["better"],
        smallest=record["smallest"], translated=record["smallest_rule"]["translated"],
        paper_units=bool(record.get("paper_units")),
    )  # fmt: skip
    return Evidence(**{**fields, **changes})


def _too_few_seeds(record: dict) -> dict[str, Any]:
    """The reading of a claim whose valid seeds leave fewer than :data:`MIN_SEED_DF`
    within-base degrees of freedom: underpowered (or unresolvable, by its design note)."""
    counts = Counter(record.get("bases_of_seeds", []))
    df = record["seed_df"]
    why = (
        f"the valid seeds of each base tie ({len(record['seeds'])} valid)"
        if df == 0 and counts and max(counts.values()) > 1
        else f"{len(record['seeds'])} valid seeds over {len(counts)} base(s) give the seed "
        f"variance {df} within-base degree(s) of freedom, fewer than {MIN_SEED_DF}"
    )
    label, reason = design_verdict(
        UNDERPOWERED, f"{why}: no interval is estimated; in its family with p = 1",
        record.get("design_note"),
    )  # fmt: skip
    return {"verdict": label, "reason": reason}


def _by_base(record: dict, reading: str) -> dict[str, Any] | None:
    """:data:`DIFFERS_BY_BASE` where the two bases' effects differ by more than δ with
    confidence (their difference's interval beyond ±δ), with each base's own label; else None."""
    difference = record.get("base_difference") or {}
    if not difference.get("interval") or not differs_between_bases(
        difference["interval"], record["smallest"]
    ):
        return None
    per_base = {
        b: decide_verdict(_evidence(record, effect=e["effect"], interval=tuple(e["interval"])))[0]
        for b, e in record["per_base"].items()
    }
    low, high = difference["interval"]
    a, b = difference["bases"]
    listed = ", ".join(f"base {k}: {v}" for k, v in per_base.items())
    return {
        "verdict": DIFFERS_BY_BASE,
        "reason": (
            f"base {a}'s effect less base {b}'s is {difference['effect']:+.3g} [{low:+.3g}, "
            f"{high:+.3g}], beyond ±δ = ±{record['smallest']:.3g}: {listed}; the readings hold "
            f"for these bases ({reading})"
        ),
        "verdict_per_base": per_base,
    }


def _verdict(record: dict) -> dict[str, Any]:
    """The verdict and reason of one claim, in order: not run, an arm from scratch that did not
    learn the world (``study.targets.SCRATCH_TARGETS``: the reason its metric may sit at chance,
    so it comes first), untestable, the arms near-copies
    (``tables.disagreement``), premise fails here, too few seeds, differs between the two bases, else the label its displayed interval
    supports (``tables.verdicts.verdict``) read against its design note."""
    if "not_run" in record:
        return {"verdict": NOT_RUN, "reason": record["not_run"]}
    if (record.get("learned") or {}).get("met") is False:
        return {
            "verdict": DID_NOT_LEARN,
            "reason": "an arm trained from random weights missed its learning target: "
            + "; ".join(record["learned"]["missed"]),
        }
    if "untestable" in record:
        return {"verdict": UNTESTABLE, "reason": record["untestable"]}
    if near_copies(record["disagreement"]):
        share = record["disagreement"]["share"]
        return {
            "verdict": NEAR_COPIES,
            "reason": f"the arms answer differently on {share:.2%} of the test items, fewer than "
            f"{NEAR_COPY_SHARE:.0%}: one model twice, not a comparison",
        }
    known = record["seed_df"] >= MIN_SEED_DF
    label, reading = decide_verdict(_evidence(record)) if known else (None, "no interval")
    premise = record.get("premise") or {}
    if premise.get("held") is False:
        measured = f"{premise['measured']:.4g} here vs {_paper_value(premise)}"
        return {
            "verdict": PREMISE_FAILS,
            "reason": f"premise fails here ({measured}): {premise['reason']}; {reading}",
        }
    if not known:
        return _too_few_seeds(record)
    split = _by_base(record, reading)
    if split is not None:
        return split
    label, reason = design_verdict(label, reading, record.get("design_note"), record["interval"])
    return {"verdict": label, "reason": reason, "verdict_per_base": None}


def _paper_value(premise: dict) -> str:
    paper = premise.get("paper")
    if paper is None:
        return "no level in the paper"
    return paper if isinstance(paper, str) else f"{paper:.4g} in the paper"


def run_code_versions(runs: list[dict]) -> list[dict[str, Any]]:
    """The code versions the decided runs were trained by: each training-code hash (None for a
    run recorded without provenance) with its commits, how many runs it made, most first, and
    whether ``results/code-versions.json`` joins it to this checkout's code (``joins_checkout``:
    the study keeps its runs)."""
    joined = equivalent_hashes(code_hash())
    versions: dict[str | None, dict[str, Any]] = {}
    for r in runs:
        provenance = r.get("provenance") or {}
        entry = versions.setdefault(
            provenance.get("code_hash"), {"code_hash": provenance.get("code_hash"), "commits": set(), "runs": 0}
        )  # fmt: skip
        entry["runs"] += 1
        if provenance.get("commit"):
            entry["commits"].add(provenance["commit"])
    listed = [
        {**v, "commits": sorted(v["commits"]), "joins_checkout": v["code_hash"] in joined}
        for v in versions.values()
    ]
    return sorted(listed, key=lambda v: -v["runs"])


def report(scale_name: str, partial: bool = False) -> dict[str, Any]:
    """Every claim of ``tables.claims`` decided from the results files, with the learning
    targets and the runs left out (nothing is written). Missing runs raise
    :class:`MissingRunsError` unless ``partial``."""
    scale, runs = SCALES[scale_name], finished_runs(scale_name)
    claims = decided_claims(scale_name, scale, runs)
    missing = sorted({m for r in claims for m in r["missing_runs"]})
    if missing and not partial:
        raise MissingRunsError(
            f"results/{scale_name}: {len(missing)} planned run(s) have no results: "
            + ", ".join(missing[:12]) + (" ..." if len(missing) > 12 else "")
            + "; run the study to finish them, or decide a partial study (--partial)"
        )  # fmt: skip
    unexcluded = decided_claims(scale_name, scale, [{**r, "unconverged": None} for r in runs])
    checks = schedule_checks(scale_name, runs)
    for record, other in zip(claims, unexcluded, strict=True):
        record["partial"] = bool(record["missing_runs"])
        record["schedule_flags"] = schedule_flags(checks, record)
        record["without_exclusions"] = without_exclusions(record, other)
    return {
        "scale": scale_name,
        "alpha": ALPHA,
        "families": dict(FAMILY_SIZES),
        "error_control": error_statement(scale_name),
        "code_versions": run_code_versions(runs),
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


SEEDS_FIXED = (
    "each claim's seeds are the scale's (Scale.seeds for the headline arms, Scale.arm_seeds for "
    "the others), fixed before its runs; a claim whose seeds were added after a first look at "
    "its data is listed under 'sequential' with its correction"
)


def error_statement(scale_name: str) -> dict[str, Any]:
    """``claims.json``'s one error statement (``tables.error_control.statement``) over the
    study's claims and the trend slopes ``scale_name`` reports."""
    looked = [c.id for c in CLAIMS if c.looks > 1]
    return statement(len(CLAIMS), trend_slope_count(scale_name), looked, SEEDS_FIXED)


def decided_claims(scale_name: str, scale: Scale, runs: list[dict]) -> list[dict]:
    """Every claim decided from ``runs`` and adjusted over its family, in declaration order."""
    decided = [decide_claim(scale_name, c, runs, scale) for c in CLAIMS]
    claims = []
    for family in FAMILY_SIZES:
        members = [r for r in decided if r["family"] == family]
        claims += adjust_family(members) if members else []
    order = {c.id: i for i, c in enumerate(CLAIMS)}
    return sorted(claims, key=lambda r: order[r["claim"]])


def without_exclusions(record: dict, other: dict) -> dict[str, Any]:
    """The claim as decided with the runs the plateau rule leaves out counted in (``other``,
    from the same runs with no run judged unconverged): its verdict, effect, interval and seeds,
    and whether the verdict differs from ``record``'s."""
    return {
        "verdict": other["verdict"],
        "effect": other.get("effect"),
        "interval": other.get("interval"),
        "seeds": other["seeds"],
        "runs_added": len(other["seeds"]) - len(record["seeds"]),
        "changes_verdict": other["verdict"] != record["verdict"],
    }


def decide(scale_name: str, partial: bool = False) -> dict[str, Any]:
    """:func:`report`, written to ``results/<scale>/claims.json``."""
    decided = report(scale_name, partial)
    atomic_write_text(results_dir(scale_name) / "claims.json", json.dumps(decided, indent=1) + "\n")
    return decided


def verdict_cell(claim: dict[str, Any]) -> str:
    """A claim's verdict as the tables show it, marked "(not run)" where its runs are missing
    but the verdict does not already say so."""
    not_run = claim["verdict"] != NOT_RUN and claim.get("reason", "").startswith("not run")
    return claim["verdict"] + (" (not run)" if not_run else "")


def summary_table(decided: dict[str, Any]) -> str:
    """Markdown tables of the decided claims and the learning targets (``docs/study.md``'s
    summary of ``claims.json``): verdict, effect with its interval in the metric's shown units,
    δ, the paper's effect and its translation, the premise, the sign and size the interval
    establishes, the design note, the verdict with the excluded runs counted in, both arms
    against the base, the regime and the valid / planned seeds."""
    lines = [
        "| claim | paper | verdict | effect [interval] | δ | paper → here | premise | sign | size | "
        "design | with the excluded runs | variant / baseline − base | regime | valid / planned "
        "seeds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in decided["claims"]:
        lines.append(
            f"| {c['statement']} ({claim_name(c)}; {c['shown']}) | {c['paper']} | "
            f"{verdict_cell(c)} | {effect_text(c)} | {delta_text(c)} | {paper_text(c)} | "
            f"{premise_text(c)} | {sign_text(c)} | {size_text(c)} | {design_text(c)} | "
            f"{exclusions_text(c)} | {base_text(c)} | {regime_text(c)} | "
            f"{len(c['seeds'])} / {c['runs_total']} |"
        )
    lines += ["", "| learning target | runs | median | target | met |", "|---|---|---|---|---|"]
    for t in decided["targets"]:
        median = "–" if t["median"] is None else f"{t['median']:.3f}"
        share = f", as a share of its base's ({t['of_base']})" if t.get("of_base") else ""
        lines.append(
            f"| {t['metric']} of {t['variant']}{share} | {t['runs']} | {median} | "
            f"≥ {t['target']:g} | {'yes' if t['met'] else 'no'} |"
        )
    return "\n".join(lines)


def compact_table(decided: dict[str, Any], paper: str | None = None) -> str:
    """The README's table of the decided claims (of ``paper``, or all): each claim's statement,
    the units its numbers are shown in, its verdict, the effect with its interval, δ, the
    paper's effect and its translation onto this scale, the premise and the valid / planned
    seeds. :func:`summary_table` has every column."""
    lines = [
        "| claim | shown as | verdict | effect [interval] | δ | paper → here | premise | seeds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in decided["claims"]:
        if paper is not None and c["paper"] != paper:
            continue
        lines.append(
            f"| {c['statement']} | {c['shown']} | {verdict_cell(c)} | {effect_text(c)} | "
            f"{delta_text(c)} | {paper_text(c)} | {premise_text(c)} | "
            f"{len(c['seeds'])} / {c['runs_total']} |"
        )
    return "\n".join(lines)


def verdict_legend(decided: dict[str, Any], paper: str | None = None) -> str:
    """One line that says what each verdict word in the table means (those that appear)."""
    found = dict.fromkeys(
        c["verdict"] for c in decided["claims"] if paper is None or c["paper"] == paper
    )
    return "Verdicts: " + "; ".join(f"*{v}*: {MEANINGS[v]}" for v in found if v in MEANINGS) + "."


def _counted(counts: Counter) -> str:
    """``5 *negligible*, 3 *depends on the base*``: counts, largest first (ties by name), each
    verdict in italics (some have commas of their own)."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n} *{verdict}*" for verdict, n in ranked)


def findings_sentences(decided: dict[str, Any]) -> str:
    """The README's two sentences on what the study found, counted from the decided claims:
    the claims that reproduce in the paper's direction (per paper) and the ones that contradict
    it, then the claims left undecided at this scale and how the rest read."""
    claims = decided["claims"]
    counts = Counter(c["verdict"] for c in claims)
    papers = Counter(c["paper"] for c in claims)
    signed = [c for c in claims if c["verdict"] in (REPRODUCES, REPRODUCES_BELOW, SMALLER)]
    per_paper = ", ".join(f"{paper} {sum(c['paper'] == paper for c in signed)}" for paper in papers)
    against = counts[CONTRADICTS]
    contradicts = (
        "none contradicts its paper"
        if not against
        else f"{against} {'contradicts its' if against == 1 else 'contradict their'} paper"
    )
    undecided = Counter({v: counts[v] for v in UNDECIDED if counts[v]})
    apart = (REPRODUCES, REPRODUCES_BELOW, SMALLER, NOT_RUN, *UNDECIDED)
    rest = Counter({v: n for v, n in counts.items() if v not in apart})
    not_run = counts[NOT_RUN]
    of_papers = ", ".join(f"{n} {paper}" for paper, n in papers.items())
    n_undecided = sum(undecided.values())
    second = (
        f"{n_undecided} {'is' if n_undecided == 1 else 'are'} not decided at this scale "
        f"({_counted(undecided)})"
        if n_undecided
        else f"Every claim {'that ran ' if not_run else ''}is decided at this scale"
    )
    if rest:
        joint = ", and the other" if n_undecided else "; the other"
        second += f"{joint} {sum(rest.values())} read {_counted(rest)}"
    second += not_run_clause(claims)
    return (
        f"Of the {len(claims)} claims ({of_papers}), {len(signed)} reproduce in the paper's "
        f"direction ({per_paper}), {counts[REPRODUCES] + counts[REPRODUCES_BELOW]} with their "
        f"interval beyond the smallest effect of interest and "
        f"{counts[SMALLER] + counts[REPRODUCES_BELOW]} below the paper's effect on this scale; "
        f"{contradicts}. "
        f"{second}."
    )


def findings(decided: dict[str, Any]) -> str:
    """The README's findings: :func:`findings_sentences` wrapped at 100 columns, then each
    paper's :func:`compact_table` under its name and claim count."""
    papers = Counter(c["paper"] for c in decided["claims"])
    parts = [textwrap.fill(findings_sentences(decided), 100, break_on_hyphens=False)]
    for paper, n in papers.items():
        parts += [
            f"**{paper}** ({n} claims)",
            compact_table(decided, paper),
            textwrap.fill(verdict_legend(decided, paper), 100, break_on_hyphens=False),
        ]
    return "\n\n".join(parts)
