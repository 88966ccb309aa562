"""Which seed pairs a claim keeps: the seeds the scale runs both its arms on, those where both
runs are valid (the runs left out and missing named), and whether a headline claim keeps enough
of them."""

from __future__ import annotations

import math
from typing import Any

from paperlib.study.paths import slug
from paperlib.study.plan.claims import Claim
from paperlib.study.plan.scales import Scale
from paperlib.study.results.validity import invalid_reason


def expected_seeds(claim: Claim, scale: Scale) -> tuple[int, ...]:
    """The seeds the scale runs a claim's variants on: the seeds both of its arms run on
    (``Scale.arm_seeds``)."""
    both = set(scale.arm_seeds(claim.variant)) & set(scale.arm_seeds(claim.baseline))
    return tuple(sorted(both))


def claim_seeds(claim: Claim, runs: list[dict], scale: Scale) -> tuple[list[int], list, list]:
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
    seeds, _, _ = claim_seeds(claim, runs, scale)
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
