"""The study's one error statement (``paperlib.study.decide.error_control``): each reading's level
against the split written out by hand, the union bound over everything the study reports, and
the statement ``claims.json`` records against the declared claims."""

from __future__ import annotations

import json

import pytest

from paperlib.study.decide import trend_effects
from paperlib.study.decide.error_control import (
    ALPHA,
    base_alpha,
    claim_alpha,
    statement,
    trend_alpha,
)
from paperlib.study.plan.claims import CLAIMS, HEADLINE_ARMS

# the claims whose seeds were added after a first look at their data (study.plan.claims: MoLo's
# ablations), as declared; ARGENT's arms, all from random weights, have their seeds fixed
# before their runs
LOOKED_TWICE = [
    "himo-batch-long-i2t",
    "himo-batch-hk",
    "himo-hide-scope-long-i2t",
    "himo-hide-scope-hk",
]


def test_each_reading_s_level_is_its_share_spread_evenly():
    assert ALPHA == 0.05
    assert claim_alpha(36) == pytest.approx(0.05 * 0.8 / 36)
    assert claim_alpha(36, looks=2) == pytest.approx(0.05 * 0.8 / 36 / 2)
    assert base_alpha(36) == pytest.approx(0.05 * 0.1 / (5 * 36))
    assert trend_alpha(38) == pytest.approx(0.05 * 0.1 / 38)
    for bad in (lambda: claim_alpha(0), lambda: claim_alpha(3, 0), lambda: base_alpha(0),
                lambda: trend_alpha(0)):  # fmt: skip
        with pytest.raises(ValueError, match="positive"):
            bad()


@pytest.mark.parametrize("scale_name", ["smoke", "full"])
def test_the_study_s_readings_spend_at_most_the_familywise_rate(scale_name):
    """The union bound, summed over every reading the study reports: each claim's verdict
    interval (a claim looked at twice spends its share over both looks), five base readings per
    claim and two trend slopes per claim between headline arms of a study whose trend the scale
    trains (the full scale trains none: its trend share goes unspent)."""
    claims = len(CLAIMS)
    looks = {c.id: c.looks for c in CLAIMS}
    headline = {arm for arms in HEADLINE_ARMS.values() for arm in arms}
    assert headline == {"MoLo", "InfoNCE (λ=0)", "Long-CLIP", "HyCoCLIP", "ARGENT"}
    # the smoke scale trains HiMo's trend: its 13 claims and ARGENT's Table 1 pair (on HiMo's
    # arms), two axes each; ARGENT's from-scratch trend is cut at every scale
    studies = {c.study for c in CLAIMS if c.variant in headline and c.baseline in headline}
    assert studies == {"himo", "argent"}
    trended = sum(
        c.variant in headline and c.baseline in headline and c.variant in HEADLINE_ARMS["himo"]
        for c in CLAIMS
    )
    slopes = {"smoke": 2 * trended, "full": 0}[scale_name]
    assert trended == 13 + 2
    assert slopes == trend_effects.trend_slope_count(scale_name)
    verdicts = sum(looks[c] * claim_alpha(claims, looks[c]) for c in looks)
    spent = verdicts + 5 * claims * base_alpha(claims) + (slopes and slopes * trend_alpha(slopes))
    assert verdicts == pytest.approx(0.8 * 0.05)
    assert spent == pytest.approx(0.05 if slopes else 0.045) and spent <= 0.05 + 1e-15


def test_the_declared_claims_looked_at_twice_are_molo_s_ablations():
    assert [c.id for c in CLAIMS if c.looks > 1] == LOOKED_TWICE
    assert all(c.looks == 2 for c in CLAIMS if c.looks > 1)


def test_the_statement_states_each_share_its_count_and_level():
    record = json.loads(json.dumps(statement(36, 38, LOOKED_TWICE, "fixed before the runs")))
    assert record["familywise_rate"] == 0.05
    split = {part["readings"]: part for part in record["split"]}
    assert split["verdicts"]["count"] == 36 and split["verdicts"]["share"] == 0.8
    assert split["verdicts"]["level_each"] == pytest.approx(1 - 0.04 / 36)
    assert split["base readings"]["count"] == 180
    assert split["base readings"]["level_each"] == pytest.approx(1 - 0.005 / 180)
    assert split["trend slopes"]["count"] == 38
    assert split["trend slopes"]["level_each"] == pytest.approx(1 - 0.005 / 38)
    assert sum(part["share"] for part in record["split"]) == pytest.approx(1.0)
    assert record["sequential"]["claims"] == LOOKED_TWICE
    assert record["seeds"] == "fixed before the runs"
