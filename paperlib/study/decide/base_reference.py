"""The pre-trained base as a level: each arm against the base it started from (arm − base, item
by item), where the two arms stand against it in words, and the retention guard (what a
fine-tune must keep of its base, else "the base is forgotten"). The bases' own values are read
by :mod:`~paperlib.study.results.references`."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperlib.study.decide.inference import based_estimate
from paperlib.study.decide.verdicts import signed
from paperlib.study.paths import slug
from paperlib.study.plan.claims import UNTRAINED, Claim, better_sign
from paperlib.study.plan.design import is_base_reference
from paperlib.study.plan.scales import SCALES, from_scratch
from paperlib.study.results.reader import item_table
from paperlib.study.results.references import base_items


def against_base(scale_name: str, claim: Claim, seeds: list[int], alpha: float) -> dict:
    """Each arm's change from the base it started from (arm − base, item by item, the base as a
    level), with its interval at ``alpha``; None for an arm whose base lacks the metric or
    that trained from random weights (it started from no base)."""
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    out: dict[str, Any] = {}
    for name, variant, item in (
        ("variant", claim.variant, claim.item),
        ("baseline", claim.baseline, claim.baseline_metric),
    ):
        base = (
            None
            if from_scratch(variant)
            else base_items(scale_name, claim.study, variant, item, bases)
        )
        if base is None:
            out[name] = None
            continue
        estimate = based_estimate(
            item_table(scale_name, claim.study, variant, item, seeds) - base, bases
        )
        out[name] = {"effect": estimate.mean, "interval": list(estimate.interval(alpha))}
    out["reading"] = base_reading(out, claim.metric.better)
    return out


def base_side(arm: dict[str, Any], better: str) -> int:
    """Where one arm stands against its base, read off its family-level interval: +1 where the
    whole interval lies on the better side of no change, -1 on the worse side, 0 where it
    covers no change."""
    low, high = signed(tuple(arm["interval"]), better)
    return 1 if low > 0 else -1 if high < 0 else 0


_SIDE_WORDS = {
    1: "improves on the base",
    -1: "falls below the base",
    0: "shows no established change from the base",
}


def base_reading(arms: dict[str, Any], better: str) -> str | None:
    """In words, where the two arms stand against the base, each by its interval: both below it
    (a gain of the variant over the baseline is then less damage), both above, neither moved,
    or each on its own side."""
    if arms.get("variant") is None or arms.get("baseline") is None:
        return None
    v, b = (base_side(arms[k], better) for k in ("variant", "baseline"))
    if v == b == -1:
        sign = better_sign(better)
        gains = sign * arms["variant"]["effect"] > sign * arms["baseline"]["effect"]
        return "both arms fall below the base" + (
            " (the variant's difference is less damage)" if gains else ""
        )
    if v == b == 1:
        return "both arms improve on the base"
    if v == b == 0:
        return "neither arm shows an established change from the base"
    return f"the variant {_SIDE_WORDS[v]} and the baseline {_SIDE_WORDS[b]}"


# the retention guard: what a fine-tune must keep of its base (both papers keep short retrieval)
RETENTION_ITEMS = ("world-short/i2t_hit1", "world-zeroshot/L1_correct")
RETENTION = 0.8  # the share of the base's value a fine-tune must keep


def retention(scale_name: str, study: str, variant: str, seeds: list[int]) -> dict[str, float]:
    """Per retention item, the arm's mean over ``seeds`` as a share of the mean of the bases
    those seeds started from (``{}`` for a base reference or where a base lacks the item)."""
    if is_base_reference(variant) or variant == UNTRAINED or from_scratch(variant) or not seeds:
        return {}  # no base of its own to keep
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    out = {}
    for item in RETENTION_ITEMS:
        base = base_items(scale_name, study, variant, item, bases)
        if base is not None and np.mean(base) > 0:
            arm = item_table(scale_name, study, variant, item, seeds)
            out[item] = float(np.mean(arm)) / float(np.mean(base))
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
