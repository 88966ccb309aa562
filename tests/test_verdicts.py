"""The decision rule: testability on mean values (chance, ceiling, headroom), one constructed
case per verdict label from the family-level tests and the simultaneous interval, and collapse
(the plateau criterion: ``tests/test_plateau.py``)."""

from __future__ import annotations

import math

import pytest

from paperlib.tables.verdicts import (
    AT_CEILING,
    BELOW_PUBLISHED,
    CONTRADICTS,
    INCONCLUSIVE,
    NEGLIGIBLE,
    NEGLIGIBLE_OTHER_SIGN,
    NEGLIGIBLE_PAPER_SIGN,
    REPRODUCES,
    SMALLER,
    UNDERPOWERED,
    UNRESOLVABLE,
    VERDICTS,
    Evidence,
    collapse_reason,
    design_verdict,
    headroom,
    untestable_reason,
    verdict,
)

SIGNIFICANT, NOT = 0.001, 0.5  # Holm-adjusted p-values on either side of α = 0.05


def evidence(
    effect, interval, p_sign=SIGNIFICANT, p_eq=NOT, better="higher", paper=None, units=True,
    room=None,
):  # fmt: skip
    return Evidence(effect, interval, p_sign, p_eq, better, 0.01, paper, units, room=room)


@pytest.mark.parametrize(
    "case, expected",
    [
        (evidence(0.05, (0.02, 0.08)), REPRODUCES),  # the paper's sign, beyond +δ
        (evidence(0.05, (0.02, 0.08), paper=0.04), REPRODUCES),  # the paper's effect inside
        (evidence(0.012, (0.004, 0.02), paper=0.05), SMALLER),  # below the published 0.05
        (evidence(0.05, (0.02, 0.08), paper=0.10), SMALLER),  # beyond δ, still below it
        # the paper's sign, size not shown beyond δ, and the metric not the paper's quantity
        (evidence(0.012, (0.004, 0.02), paper=0.05, units=False), INCONCLUSIVE),
        (evidence(0.012, (0.004, 0.02)), INCONCLUSIVE),  # no published effect to compare
        (evidence(-0.05, (-0.08, -0.02)), CONTRADICTS),  # the other sign, beyond −δ
        (evidence(-0.012, (-0.02, -0.004)), INCONCLUSIVE),  # the other sign, size not beyond −δ
        (evidence(0.001, (-0.004, 0.006), p_sign=NOT, p_eq=0.01), NEGLIGIBLE),
        # equivalence wins over the size; a sign the family also establishes is named
        (evidence(0.004, (0.002, 0.006), p_eq=0.01, paper=0.05), NEGLIGIBLE_PAPER_SIGN),
        (evidence(-0.003, (-0.005, -0.001), p_eq=0.01), NEGLIGIBLE_OTHER_SIGN),
        (evidence(3.0, (2.0, 4.0), better="lower", p_eq=0.01), NEGLIGIBLE_OTHER_SIGN),
        # an interval below the paper's effect reads so whatever the sign test says
        (evidence(0.01, (-0.01, 0.03), p_sign=NOT, paper=0.26), BELOW_PUBLISHED),
        (evidence(-0.005, (-0.009, -0.001), paper=0.26), BELOW_PUBLISHED),  # other sign, < δ
        # a baseline with less room than the paper's effect: at ceiling, never a contradiction
        (evidence(-3.1, (-4.6, -1.6), paper=62.9, room=4.25), AT_CEILING),
        (evidence(-3.1, (-4.6, -1.6), paper=62.9, room=70.0), CONTRADICTS),
        (evidence(-3.1, (-4.6, -1.6), paper=62.9, room=4.25, units=False), CONTRADICTS),
        (evidence(0.03, (-0.01, 0.07), p_sign=NOT), INCONCLUSIVE),  # sign not established
        (evidence(-2.0, (-3.0, -1.5), better="lower", paper=-1.0), REPRODUCES),  # SSI: lower
        (evidence(2.0, (1.5, 3.0), better="lower"), CONTRADICTS),
        (evidence(-0.5, (-0.8, -0.2), better="lower", paper=-6.8), SMALLER),
    ],
)
def test_each_verdict_from_a_constructed_case(case, expected):
    label, reason = verdict(case)
    assert label == expected and label in VERDICTS and reason


def test_the_reason_records_the_sign_at_a_ceiling_and_beside_a_negligible_effect():
    _, at_ceiling = verdict(evidence(-3.1, (-4.6, -1.6), paper=62.9, room=4.25))
    assert "leaves 4.25 to the best value" in at_ceiling
    assert "the other sign, established" in at_ceiling
    _, small = verdict(evidence(0.004, (0.002, 0.006), p_eq=0.01))
    assert "the paper's sign, established" in small
    _, unsure = verdict(evidence(0.001, (-0.004, 0.006), p_sign=NOT, p_eq=0.01))
    assert "not established" in unsure


def test_an_undecided_claim_is_read_against_its_design_note():
    """Inconclusive needs a design that resolves δ: an item floor at or above δ makes the claim
    unresolvable at this test set, a design too small for δ underpowered; decided claims keep
    their label."""
    note = {"item_floor": 0.004, "delta": 0.01, "half_width": 0.008, "reason": "resolves"}
    assert design_verdict(INCONCLUSIVE, "why", note) == (INCONCLUSIVE, "why")
    small = {**note, "half_width": 0.02, "reason": "4 seeds per base resolve δ"}
    assert design_verdict(INCONCLUSIVE, "why", small) == (
        UNDERPOWERED,
        "why; 4 seeds per base resolve δ",
    )
    floor = {**note, "item_floor": 0.01, "reason": "the item floor ±0.01 is at least δ"}
    assert design_verdict(UNDERPOWERED, "why", floor)[0] == UNRESOLVABLE
    assert design_verdict(INCONCLUSIVE, "why", floor)[0] == UNRESOLVABLE
    assert design_verdict(REPRODUCES, "why", floor) == (REPRODUCES, "why")
    assert design_verdict(INCONCLUSIVE, "why", None) == (INCONCLUSIVE, "why")
    # runs left out: the valid seeds' own interval decides, not the planned design's
    assert design_verdict(INCONCLUSIVE, "why", note, [0.0, 0.016])[0] == INCONCLUSIVE
    wide, reason = design_verdict(INCONCLUSIVE, "why", note, [0.0, 0.024])
    assert wide == UNDERPOWERED and "the valid seeds give ±0.012 against δ = 0.01" in reason


def test_the_verdict_refuses_a_claim_without_a_positive_smallest_effect():
    with pytest.raises(ValueError, match="smallest must be positive"):
        verdict(Evidence(0.1, (0.0, 0.2), 0.01, 0.5, "higher", 0.0))
    with pytest.raises(ValueError, match="better must be"):
        verdict(Evidence(0.1, (0.05, 0.2), 0.01, 0.5, "up", 0.01))


def test_testability_is_judged_on_mean_values_not_on_interval_widths():
    assert untestable_reason(0.52, 0.33, 0.001, 1.0, "higher", 0.01) is None
    assert "chance" in untestable_reason(0.52, 0.005, 0.001, 1.0, "higher", 0.01)
    # PEP 0.927 with a wide 2-seed interval reaching 1.07 is testable: only means count
    assert untestable_reason(0.927, 0.90, 0.5, 1.0, "higher", 0.005) is None
    ceiling = untestable_reason(0.998, 0.995, 0.001, 1.0, "higher", 0.01)
    assert "best value" in ceiling
    assert "leaves less" in untestable_reason(0.97, 0.995, 0.25, 1.0, "higher", 0.02)
    assert "best value (0)" in untestable_reason(0.0, 0.0, None, 0.0, "lower", 0.01)
    with pytest.raises(ValueError, match="better must be"):
        untestable_reason(0.5, 0.3, 0.001, 1.0, "up", 0.01)


def test_a_mean_below_chance_is_a_finding_not_untestable():
    assert untestable_reason(0.4, -0.5, 0.0, 1.0, "higher", 0.05) is None
    assert "chance" in untestable_reason(0.4, 0.02, 0.0, 1.0, "higher", 0.05)


def test_headroom_is_the_smallest_effect_on_both_sides():
    assert headroom(0.95, 0.5, 1.0, "higher", 0.005)  # PEP AUC of 0.95: room for half a point
    assert not headroom(0.998, 0.5, 1.0, "higher", 0.005)
    assert not headroom(0.503, 0.5, 1.0, "higher", 0.005)  # at chance: no room downwards
    assert headroom(4.0, None, 0.0, "lower", 1.0) and not headroom(0.5, None, 0.0, "lower", 1.0)


def test_collapse_reason():
    ln64 = math.log(64)
    assert "within 1%" in collapse_reason([ln64 * 1.004] * 20, 64, 0.2)
    assert "within 1%" in collapse_reason([1.0] * 16 + [ln64] * 4, 64, 0.2)  # last fifth only
    assert collapse_reason([ln64 * 0.9] * 20, 64, 0.2) is None
    assert collapse_reason([ln64 * 1.2] * 20, 64, 0.2) is None  # confidently wrong, not flat
    assert "feature std" in collapse_reason([1.0] * 20, 64, 4e-4)
