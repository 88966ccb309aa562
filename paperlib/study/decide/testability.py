"""Whether a claim's two arms can be read at all: the claim's learning guard (both arms clear a
threshold a learned model reaches and an untrained one does not), the chance level on its test
items (``decide.chance``), and, for an arm trained from random weights, its learning targets
(``decide.targets.SCRATCH_TARGETS``). A side at chance, or a model that did not learn, makes the
claim untestable (``docs/methods/conventions.md#verdicts``)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from paperlib.study.decide.chance import world_chance
from paperlib.study.decide.inference import summary
from paperlib.study.decide.targets import SCRATCH_TARGETS, not_learned
from paperlib.study.decide.verdicts import untestable_reason
from paperlib.study.plan.claims import Claim
from paperlib.study.plan.design import EVAL_SEED
from paperlib.study.plan.scales import SCALES, from_scratch
from paperlib.study.results.reader import item_table
from paperlib.study.results.references import untrained_value


def learning_guard(scale_name: str, claim: Claim, seeds: list[int]) -> dict | None:
    """The claim's learning guard: its threshold, each side's value (judged on its mean, a
    point value) with its 95 % interval, and the untrained model's value."""
    guard = claim.metric.guard
    if guard is None:
        return None
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    sides = {
        name: summary(item_table(scale_name, claim.study, variant, guard.item, seeds), bases)
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


def claim_chance(scale_name: str, claim: Claim, n_items: int) -> float | None:
    """The claim's chance level on its ``n_items`` test items: its metric's permutation null on
    the study's test world (``study.decide.chance``; None where the metric has none)."""
    return chance_records(n_items)[claim.item]["value"]


@lru_cache(maxsize=4)
def chance_records(n_items: int) -> dict[str, dict[str, Any]]:
    """Every metric's permutation-null record on the study's test world of ``n_items``."""
    return world_chance(EVAL_SEED, n_items)


def reading_untestable(
    claim: Claim, variant: float, baseline: float, chance: float | None, guard: dict | None,
    smallest: float,
) -> str | None:  # fmt: skip
    """Why two arms' means cannot be read (``study.decide.verdicts.untestable_reason``: a side at
    chance) and why a model did not learn (its learning ``guard``), joined; None when neither
    holds."""
    reasons = []
    if guard is not None and guard["failed"]:
        reasons.append(f"a model did not learn ({guard['item']}: {guard['failed']})")
    reasons.append(untestable_reason(variant, baseline, chance, smallest))
    return "; ".join(r for r in reasons if r) or None


def learned(scale_name: str, claim: Claim, runs: list[dict], seeds: list[int]) -> dict | None:
    """For a claim with an arm trained from random weights: whether each such arm reaches the
    learning targets (``study.decide.targets.SCRATCH_TARGETS``) on its valid seeds, and what misses;
    None where both arms start from a base."""
    arms = [v for v in (claim.variant, claim.baseline) if from_scratch(v)]
    if not arms:
        return None
    missed = [
        m for v in dict.fromkeys(arms) for m in not_learned(scale_name, claim.study, v, seeds)
    ]
    return {"arms": arms, "targets": SCRATCH_TARGETS, "missed": missed, "met": not missed}
