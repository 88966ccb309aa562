"""One error rate over everything the study reports, split among what it reports.

The study reports three kinds of interval-based readings (``docs/methods/conventions.md#verdicts``):

- each claim's **verdict**, read off its simultaneous interval;
- each claim's **base readings**: the difference of its two bases' effects (whether the claim
  differs between the bases), each base's own effect (its verdict where they differ), and each
  arm's change from the base it started from;
- each headline claim's **trend slopes**, one per scale axis.

One familywise error rate :data:`ALPHA` covers them all: it is split into :data:`SHARES`, each
share spread evenly (Bonferroni) over the readings of its kind, and a claim whose seeds were
chosen after a first look at its data (``Claim.looks``) splits its own share between its looks,
as a two-stage design with a Bonferroni correction over its stages would. By the union bound,
the chance that any interval the study reports misses its true value is at most :data:`ALPHA`.
Holm's adjusted p-values (over each paper's claims, :func:`holm`; statsmodels' Holm, with
:func:`holm_by_formula` the step-down written out) are reported beside the verdicts for a reader
who tests the sign alone; the labels read the intervals, so a label never says more than the
interval shown. :func:`bonferroni_alpha` is the plain per-claim level of simultaneous intervals
over a family.
"""

from __future__ import annotations

from typing import Any

from statsmodels.stats.multitest import multipletests

ALPHA = 0.05
SHARES = {"verdicts": 0.8, "base readings": 0.1, "trend slopes": 0.1}
# per claim: the difference of the two bases' effects, each base's effect, each arm against its
# base
BASE_READINGS_PER_CLAIM = 5


def claim_alpha(claims: int, looks: int = 1) -> float:
    """The two-sided level of one claim's verdict interval among ``claims``."""
    if claims < 1 or looks < 1:
        raise ValueError(f"claims and looks must be positive; got {claims}, {looks}")
    return ALPHA * SHARES["verdicts"] / claims / looks


def base_alpha(claims: int) -> float:
    """The two-sided level of each of a claim's base readings."""
    if claims < 1:
        raise ValueError(f"claims must be positive; got {claims}")
    return ALPHA * SHARES["base readings"] / (BASE_READINGS_PER_CLAIM * claims)


def trend_alpha(slopes: int) -> float:
    """The two-sided level of each of ``slopes`` trend slopes."""
    if slopes < 1:
        raise ValueError(f"slopes must be positive; got {slopes}")
    return ALPHA * SHARES["trend slopes"] / slopes


def statement(claims: int, slopes: int, looked_twice: list[str], seeds: str) -> dict[str, Any]:
    """``claims.json``'s error statement: the rate, how it is split and over what, the claims
    whose seeds were chosen after a look (with their correction), and how seeds were fixed."""
    return {
        "familywise_rate": ALPHA,
        "over": "every verdict interval, base reading and trend slope the study reports",
        "split": [
            {
                "readings": "verdicts",
                "count": claims,
                "share": SHARES["verdicts"],
                "level_each": 1 - claim_alpha(claims),
            },
            {
                "readings": "base readings",
                "count": BASE_READINGS_PER_CLAIM * claims,
                "share": SHARES["base readings"],
                "level_each": 1 - base_alpha(claims),
            },
            {
                "readings": "trend slopes",
                "count": slopes,
                "share": SHARES["trend slopes"],
                "level_each": 1 - trend_alpha(max(slopes, 1)),
            },
        ],  # fmt: skip
        "method": "Bonferroni within each share, the union bound over the shares",
        "sequential": {
            "claims": looked_twice,
            "correction": "seeds chosen after a first look: the claim's share split between "
            "its two looks (its interval at half its level's error)",
        },
        "seeds": seeds,
        "not_covered": "the arms' own values and the learning targets are descriptive "
        "(95 % intervals each, and medians), not tested",
        "holm": "Holm-adjusted p-values over each paper's claims are reported beside the "
        "verdicts; the labels read the intervals",
    }


def bonferroni_alpha(family_size: int, alpha: float = ALPHA) -> float:
    """The per-claim level of simultaneous intervals over a family of ``family_size``."""
    if family_size < 1:
        raise ValueError(f"family_size must be at least 1; got {family_size}")
    return alpha / family_size


def holm(p_values: list[float]) -> list[float]:
    """Holm's adjusted p-values (``statsmodels.stats.multitest.multipletests``, method
    ``"holm"``): a claim is rejected at level α when its adjusted p is below α.
    :func:`holm_by_formula` is the step-down written out."""
    if not p_values:
        return []
    return [float(p) for p in multipletests(p_values, method="holm")[1]]


def holm_by_formula(p_values: list[float]) -> list[float]:
    """``p̃_(r) = max_{k ≤ r} min(1, (m − k + 1) p_(k))`` over the p-values sorted ascending."""
    m = len(p_values)
    order = sorted(range(m), key=lambda j: p_values[j])
    adjusted, running = [0.0] * m, 0.0
    for rank, j in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[j]))
        adjusted[j] = running
    return adjusted
