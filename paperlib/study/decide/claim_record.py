"""One claim decided from its runs: the record ``claims.json`` holds for it before its family's
Holm p-values and its verdict (``decide.decide``).

Its valid seed pairs (``decide.seed_pairs``) and δ on the study's scale
(``results.references.claim_translation``); the paired effect variant − baseline, the base as
a level (``decide.inference.based_estimate``), with its raw 95 % interval and its interval at
the claim's level of the study's error statement (``decide.error_control``), its p-values of "no
effect" and of equivalence within δ, each base's own effect and the difference of the two bases'
effects; its design note; each side's own value; the share of items the arms answer differently
(``decide.disagreement``); both arms against the base (``decide.base_reference``); the metric on
the untrained model and each base; the chance level, the learning guard, retention, the premise
(``decide.premise``), the regime and the scale trend; and what makes the claim untestable."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperlib.study.decide.base_reference import (
    RETENTION,
    against_base,
    forgotten_reason,
    retention,
)
from paperlib.study.decide.design_notes import claim_design_note
from paperlib.study.decide.disagreement import item_disagreement
from paperlib.study.decide.error_control import base_alpha, claim_alpha
from paperlib.study.decide.inference import (
    ALPHA,
    base_difference,
    based_estimate,
    interaction_test,
    per_base_estimates,
    summary,
)
from paperlib.study.decide.premise import premise_record
from paperlib.study.decide.regime import end_curvatures, regime
from paperlib.study.decide.seed_pairs import claim_seeds, expected_seeds, seeds_kept
from paperlib.study.decide.testability import (
    chance_records,
    claim_chance,
    learned,
    learning_guard,
    reading_untestable,
)
from paperlib.study.decide.trend_effects import headline_trend
from paperlib.study.decide.verdicts import MIN_SEED_DF
from paperlib.study.plan.claims import CLAIMS, Claim, ClaimDeclarationError, better_sign
from paperlib.study.plan.scales import SCALES, Scale
from paperlib.study.plan.smallest_effect import Translation
from paperlib.study.results.reader import item_table
from paperlib.study.results.references import claim_translation, measured_levels


def decide_claim(scale_name: str, claim: Claim, runs: list[dict], scale: Scale) -> dict:
    """One claim's effect (the base as a level) with its interval at the claim's level of the
    study's error statement, its δ on the study's scale, premise, testability, per-base effects
    and their difference, both arms against the base and the chance level (the family's Holm
    p-values and the verdict come from :func:`~paperlib.study.decide.decide.adjust_family`)."""
    seeds, invalid, missing = claim_seeds(claim, runs, scale)
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
    va = item_table(scale_name, claim.study, claim.variant, claim.item, seeds)
    vb = item_table(scale_name, claim.study, claim.baseline, claim.baseline_metric, seeds)
    if not (np.isfinite(va).all() and np.isfinite(vb).all()):
        return {**record, "effect": None, "untestable": f"non-finite values of {claim.item}"}
    record["learned"] = learned(scale_name, claim, runs, seeds)
    return _measured(scale_name, claim, record, (va, vb), translation)


def _translation(scale_name: str, claim: Claim, not_run: bool) -> Translation | None:
    """The claim's δ rule (``study.results.references.claim_translation``); None for a claim of a
    partial study that has not run and whose reference has not run either."""
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
    record.update(effect_fields(va - vb, bases, translation.delta, alpha, base_alpha(len(CLAIMS))))
    record["interval_level"] = 1 - alpha
    record["design_note"] = claim_design_note(record, claim, scale, alpha)
    record.update(variant_value=summary(va, bases), baseline_value=summary(vb, bases))
    record["disagreement"] = item_disagreement(va, vb, claim.metric.item_tolerance)
    record["against_base"] = against_base(scale_name, claim, seeds, base_alpha(len(CLAIMS)))
    record["chance"] = chance = claim_chance(scale_name, claim, va.shape[1])
    record["chance_null"] = chance_records(va.shape[1])[claim.item]["null"]
    guard = learning_guard(scale_name, claim, seeds)
    if guard is not None:
        record["guard"] = guard
    if claim.metric.item.endswith("/ssi"):  # a text-blind model's scores never move: 0
        record["reference"] = {"text-blind": 0.0, "untrained": record["measured"]["untrained"]}
    means = record["variant_value"]["mean"], record["baseline_value"]["mean"]
    reading = reading_untestable(claim, *means, chance, guard, translation.delta)
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


def effect_fields(
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
