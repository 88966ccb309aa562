"""The references each claim is measured against, and its δ on the study's own scale.

The references are the models the study evaluates as they are: the untrained model and each
pre-trained base, of the arm's geometry and size (:func:`base_items`, :func:`untrained_value`).
The δ rule is :mod:`~paperlib.study.plan.smallest_effect`'s
(``docs/methods/conventions.md#the-smallest-effect-of-interest``): the paper's effect, as a share
of its baseline's headroom, carried onto the headroom the claim's *reference* leaves here, then
halved and capped at a third of that headroom. The reference is measured before any arm is
compared (:func:`reference_level`): the pre-trained bases the claim's baseline starts from
(their mean over the scale's bases), else the untrained model, else the far end of the metric's
range (``Metric.worst``). The same δ judges a run's plateau on the study's primary validation
metric (:func:`plateau_deltas`: the smallest δ among the claims on it), so the results stage
reads it before it decides which runs count.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from paperlib.study.plan import recipe
from paperlib.study.plan.claims import CLAIMS, SMALLER, UNTRAINED, Claim, ClaimDeclarationError
from paperlib.study.plan.design import PRETRAIN, PRETRAIN_HYPERBOLIC
from paperlib.study.plan.scales import SCALES
from paperlib.study.plan.smallest_effect import HALF, THIRD, Translation, translate
from paperlib.study.results.reader import read_items


def untrained_value(scale_name: str, study: str, item: str) -> float | None:
    """The untrained model's mean of ``item`` (None when that reference did not run)."""
    try:
        return float(np.mean(read_items(scale_name, study, UNTRAINED, 0)[item]))
    except (FileNotFoundError, KeyError):
        return None


def base_variant(study: str, variant: str) -> tuple[str, str]:
    """The reference run (study, variant) of the pre-trained base of a study variant's geometry
    and size: the Euclidean bases for HiMo (which its fine-tunes start from), the hyperbolic ones
    for ARGENT (trained models of the world its from-scratch arms learn; the smaller model's
    bases for the smaller model's arms)."""
    suffix = SMALLER if SMALLER in variant else ""
    if study == "argent":
        return "argent", PRETRAIN_HYPERBOLIC + suffix
    return "himo", PRETRAIN + suffix


def base_items(
    scale_name: str, study: str, variant: str, item: str, bases: list[int]
) -> np.ndarray | None:
    """(seeds, items) values of ``item`` of each seed's base (its geometry and size), None where
    a base lacks it."""
    rows = []
    base_study, base = base_variant(study, variant)
    for b in bases:
        try:
            rows.append(read_items(scale_name, base_study, base, b)[item])
        except (FileNotFoundError, KeyError):
            return None
    return np.stack(rows)


def measured_levels(scale_name: str, claim: Claim) -> dict[str, Any]:
    """The claim's metric on an untrained model and on each pre-trained base, as measured."""
    scale = SCALES[scale_name]
    base = {}
    for b in scale.bases:
        values = base_items(scale_name, claim.study, claim.variant, claim.item, [b])
        base[str(b)] = None if values is None else float(np.mean(values))
    return {"untrained": untrained_value(scale_name, claim.study, claim.item), "base": base}


# the claims' metric of each plateau metric, whose δ the plateau reads
CLAIMED_AS = {
    "long_i2t_r1": "world-long/i2t_hit1",
    "zeroshot_L1": "world-zeroshot/L1_correct",
    "short_i2t_r1": "world-short/i2t_hit1",
}
# the metrics each study's plateau is judged on: HiMo's fine-tunes on the primary metric their
# recipe reads (``study.plan.recipe.SEARCHED_ARMS``), ARGENT's from-scratch arms on both the metrics
# their learning targets read
PLATEAU_METRICS = {
    **{rule.study: (rule.primary,) for rule in recipe.SEARCHED_ARMS.values()},
    "argent": ("zeroshot_L1", "short_i2t_r1"),
}


def reference_level(scale_name: str, claim: Claim) -> tuple[float, str]:
    """The claim's reference level of its baseline's metric and where it is read: the mean of
    the bases its baseline starts from, else the untrained model, else the metric's far end."""
    scale = SCALES[scale_name]
    item = claim.baseline_metric
    values = base_items(scale_name, claim.study, claim.baseline, item, list(scale.bases))
    if values is not None:
        count = len(scale.bases)
        return float(np.mean(values)), f"the {count} pre-trained base{'s' * (count > 1)}"
    untrained = untrained_value(scale_name, claim.study, item)
    if untrained is not None:
        return untrained, "the untrained model"
    if claim.metric.worst is not None:
        return claim.metric.worst, "the far end of the metric's range"
    raise ClaimDeclarationError(
        f"claim {claim.id!r}: no reference level for {item} (no base, no untrained model, and "
        "the metric declares no worst value)"
    )


def claim_translation(scale_name: str, claim: Claim) -> Translation:
    """The δ rule's reading of one claim at ``scale_name``, checked: a δ above half the
    translated effect or a third of the headroom is refused, naming the claim."""
    published, source = claim.published()
    reference, where = reference_level(scale_name, claim)
    translation = translate(published, reference, where, claim.metric.ceiling, source)
    check_delta(claim, translation)
    return translation


def check_delta(claim: Claim, translation: Translation) -> None:
    """Refuse a δ the rule does not allow: above ``HALF`` of the translated effect or above
    ``THIRD`` of the reference's headroom (``ClaimDeclarationError`` naming claim and field)."""
    slack = 1e-12
    if translation.delta > HALF * translation.translated + slack:
        raise ClaimDeclarationError(
            f"claim {claim.id!r}: smallest {translation.delta:g} is above half the paper's "
            f"effect on this scale ({translation.translated:g})"
        )
    if translation.delta > THIRD * translation.headroom + slack:
        raise ClaimDeclarationError(
            f"claim {claim.id!r}: smallest {translation.delta:g} is above a third of the "
            f"reference's headroom ({translation.headroom:g})"
        )


@lru_cache(maxsize=8)
def plateau_deltas(scale_name: str, study: str) -> dict[str, float]:
    """``{validation metric: δ}`` of a study's plateau: each of its plateau metrics
    (:data:`PLATEAU_METRICS`) with the smallest δ among the claims on that metric's claims'
    metric (:data:`CLAIMED_AS`): a run is flat only if it rises less than the strictest δ it
    answers to; a metric no claim reads is left out."""
    out = {}
    for metric in PLATEAU_METRICS[study]:
        item = CLAIMED_AS[metric]
        deltas = [claim_translation(scale_name, c).delta for c in CLAIMS if c.item == item]
        if deltas:
            out[metric] = min(deltas)
    return out
