"""A headline claim's effect at each trend setting, read from the trend runs, and the slope over
them (``decide.trend`` reads them as the claim's trend; ``decide.trend_slope`` fits the slope).
Each setting's two arms are read once (:class:`TrendArms`), over the sweep seeds where both are
valid; a point whose arms forgot their base, did not learn or sit at chance is kept but does not
count."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from paperlib.study.decide.base_reference import forgotten_reason, retention
from paperlib.study.decide.error_control import trend_alpha
from paperlib.study.decide.inference import based_estimate, summary
from paperlib.study.decide.regime import mean_logged, regime
from paperlib.study.decide.seed_pairs import claim_seeds
from paperlib.study.decide.testability import claim_chance, learning_guard, reading_untestable
from paperlib.study.decide.trend import claim_trend, trend_settings
from paperlib.study.decide.trend_slope import slope_df, slope_estimate
from paperlib.study.decide.verdicts import MIN_SEED_DF
from paperlib.study.plan.claims import CLAIMS, Claim
from paperlib.study.plan.design import HEADLINE, plan, trend_label
from paperlib.study.plan.scales import SCALES
from paperlib.study.results.reader import item_table
from paperlib.study.results.references import claim_translation


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


def trend_arms(
    scale_name: str, claim: Claim, runs: list[dict], variant: str, baseline: str
) -> TrendArms:
    """:class:`TrendArms` of the claim with ``variant`` and ``baseline`` as its arms."""
    scale = SCALES[scale_name]
    derived = replace(claim, variant=variant, baseline=baseline, headline=False)
    seeds, _, missing = claim_seeds(derived, runs, scale)
    seeds = [s for s in seeds if s in scale.sweep_seeds]
    if not seeds:
        return TrendArms(derived, [], None, None, len(missing))
    return TrendArms(
        derived, seeds,
        item_table(scale_name, claim.study, variant, claim.item, seeds),
        item_table(scale_name, claim.study, baseline, claim.baseline_metric, seeds),
        len(missing),
    )  # fmt: skip


def _trend_point_untestable(scale_name: str, arms: TrendArms, smallest: float) -> str | None:
    """Why a trend point's arms cannot carry the claim: an arm forgot its base (the retention
    guard), did not learn (the claim's learning guard), or a side sits at chance
    (:func:`reading_untestable`); None when none holds."""
    derived, seeds = arms.derived, arms.seeds
    kept = {
        name: retention(scale_name, derived.study, arm, seeds)
        for name, arm in (("variant", derived.variant), ("baseline", derived.baseline))
    }
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    reading = reading_untestable(
        derived, summary(arms.variant_values, bases)["mean"],
        summary(arms.baseline_values, bases)["mean"],
        claim_chance(scale_name, derived, arms.variant_values.shape[1]),
        learning_guard(scale_name, derived, seeds), smallest,
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
    arms = trend_arms(scale_name, claim, runs, variant, baseline)
    seeds = arms.seeds
    if not seeds:
        return {"effect": None, "seeds": [], "missing_runs": arms.missing}
    estimate = based_estimate(arms.effects, [SCALES[scale_name].base_of(s) for s in seeds])
    setting = regime(scale_name, arms.derived, seeds) or {}
    hide = {}
    for name, arm in (("variant", variant), ("baseline", baseline)):
        logged = [mean_logged(scale_name, claim.study, arm, s, "hide_m") for s in seeds]
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
    """The slope of the claim's effect over ``log2`` of the factor (``study.decide.trend_slope``),
    fitted to the ``settings`` (``(factor, (variant, baseline))``, those that count) on every
    sweep seed each keeps, with its interval at the trend slopes' level of the study's error
    statement (``study.decide.error_control``: every headline claim's slope on both trend axes); the
    interval is None where the fit leaves fewer than :data:`MIN_SEED_DF` residual degrees of
    freedom."""
    points: dict[int, list[tuple[float, np.ndarray]]] = {}
    for factor, arms in settings:
        table = trend_arms(scale_name, claim, runs, *arms)
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
    """:func:`~paperlib.study.decide.trend.claim_trend` of a claim between two headline arms (None
    for the sweeps' claims)."""
    if claim.variant not in HEADLINE or claim.baseline not in HEADLINE:
        return None
    return claim_trend(
        trend_settings(SCALES[scale_name]), trend_label, claim.variant, claim.baseline,
        lambda v, b: trend_effect(scale_name, claim, runs, v, b), claim.metric.better,
        lambda settings: trend_slope(scale_name, claim, runs, settings),
    )  # fmt: skip
