"""The decision rule: each label read off a constructed interval at its boundaries (inside ±δ,
crossing ±δ, beyond, the paper's effect on this scale), testability on mean values (chance),
the two bases' difference against δ, collapse (the plateau criterion:
``tests/test_plateau.py``), and the arms' item disagreement against a naive recount."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paperlib.study.decide.disagreement import NEAR_COPY_SHARE, item_disagreement, near_copies
from paperlib.study.decide.verdicts import (
    CONTRADICTS,
    INCONCLUSIVE,
    MEANINGS,
    NEGLIGIBLE,
    NEGLIGIBLE_OTHER_SIGN,
    NEGLIGIBLE_PAPER_SIGN,
    REPRODUCES,
    REPRODUCES_BELOW,
    SMALLER,
    UNDERPOWERED,
    UNRESOLVABLE,
    VERDICTS,
    Evidence,
    design_verdict,
    differs_between_bases,
    untestable_reason,
    verdict,
)
from paperlib.study.run.collapse import collapse_reason

DELTA = 0.01


def evidence(interval, better="higher", translated=None, units=True):
    low, high = interval
    return Evidence((low + high) / 2, interval, better, DELTA, translated, units)


@pytest.mark.parametrize(
    "interval, expected",
    [
        ((0.02, 0.08), REPRODUCES),  # beyond +δ
        ((0.0101, 0.08), REPRODUCES),  # just beyond +δ
        ((0.0100, 0.08), INCONCLUSIVE),  # touching +δ is not beyond it: the sign only
        ((-0.0099, 0.0099), NEGLIGIBLE),  # just inside ±δ
        ((-0.0099, 0.0100), INCONCLUSIVE),  # reaching +δ: not inside
        ((0.001, 0.009), NEGLIGIBLE_PAPER_SIGN),  # inside ±δ and above 0
        ((-0.009, -0.001), NEGLIGIBLE_OTHER_SIGN),  # inside ±δ and below 0
        ((0.0, 0.009), NEGLIGIBLE),  # inside, touching 0: no sign
        ((-0.08, -0.02), CONTRADICTS),  # beyond −δ
        ((-0.08, -0.0100), INCONCLUSIVE),  # touching −δ: the other sign only
        ((-0.02, 0.03), INCONCLUSIVE),  # holds 0, reaches beyond both ends
        ((0.004, 0.03), INCONCLUSIVE),  # the paper's sign, size not shown beyond +δ
    ],
)
def test_each_label_from_a_constructed_interval(interval, expected):
    label, reason = verdict(evidence(interval))
    assert label == expected and label in VERDICTS and label in MEANINGS
    assert f"[{interval[0]:+.3g}, {interval[1]:+.3g}]" in reason  # the interval it read


@pytest.mark.parametrize(
    "interval, translated, units, expected",
    [
        ((0.02, 0.04), 0.05, True, REPRODUCES_BELOW),  # beyond +δ, below the paper's effect
        ((0.02, 0.06), 0.05, True, REPRODUCES),  # reaching the paper's effect
        ((0.02, 0.04), 0.05, False, REPRODUCES),  # other units: sizes do not compare
        ((0.004, 0.03), 0.05, True, SMALLER),  # the sign, below the paper's, not beyond δ
        ((0.004, 0.03), 0.02, True, INCONCLUSIVE),  # reaching the paper's effect: nothing
        ((0.004, 0.03), 0.05, False, INCONCLUSIVE),
        ((0.001, 0.009), 0.05, True, NEGLIGIBLE_PAPER_SIGN),  # inside ±δ wins over below it
    ],
)
def test_the_papers_effect_on_this_scale_bounds_the_reproducing_labels(
    interval, translated, units, expected
):
    assert verdict(evidence(interval, translated=translated, units=units))[0] == expected


@pytest.mark.parametrize(
    "interval, expected",
    [
        ((-3.0, -2.0), REPRODUCES),  # lower is better: a fall is the paper's side
        ((2.0, 3.0), CONTRADICTS),
        ((0.002, 0.006), NEGLIGIBLE_OTHER_SIGN),
    ],
)
def test_a_lower_is_better_metric_reads_its_interval_flipped(interval, expected):
    assert verdict(evidence(interval, better="lower"))[0] == expected


def test_an_at_ceiling_baseline_never_hides_an_established_effect():
    """HiMo@2 against Long-CLIP: the interval beyond −δ reads as the effect it is (the premise,
    not the label, carries the ceiling)."""
    assert verdict(Evidence(-3.0, (-4.4, -1.6), "higher", 1.5, 36.0, True))[0] == CONTRADICTS
    assert verdict(Evidence(-3.0, (-4.4, -1.6), "higher", 12.4, 36.0, True))[0] == (
        NEGLIGIBLE_OTHER_SIGN
    )


def test_the_bases_differ_only_with_their_difference_beyond_delta():
    assert differs_between_bases((0.011, 0.05), DELTA)
    assert differs_between_bases((-0.05, -0.011), DELTA)
    assert not differs_between_bases((0.005, 0.05), DELTA)  # significant, not beyond δ
    assert not differs_between_bases((-0.02, 0.02), DELTA)


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


def test_the_verdict_refuses_a_claim_without_a_positive_smallest_effect_or_a_direction():
    with pytest.raises(ValueError, match="smallest must be positive"):
        verdict(Evidence(0.1, (0.0, 0.2), "higher", 0.0))
    with pytest.raises(ValueError, match="better must be"):
        verdict(Evidence(0.1, (0.05, 0.2), "up", 0.01))
    with pytest.raises(ValueError, match="out of order"):
        verdict(Evidence(0.1, (0.2, 0.05), "higher", 0.01))


def test_testability_is_judged_on_mean_values_not_on_interval_widths():
    assert untestable_reason(0.52, 0.33, 0.001, 0.01) is None
    assert "chance" in untestable_reason(0.52, 0.005, 0.001, 0.01)
    # PEP 0.927 with a wide 2-seed interval reaching 1.07 is testable: only means count
    assert untestable_reason(0.927, 0.90, 0.5, 0.005) is None
    assert untestable_reason(0.998, 0.995, 0.001, 0.01) is None  # near the best: the premise's
    assert untestable_reason(0.0, 0.0, None, 0.01) is None  # no chance level: nothing to be near


def test_a_mean_below_chance_is_a_finding_not_untestable():
    assert untestable_reason(0.4, -0.5, 0.0, 0.05) is None
    assert "chance" in untestable_reason(0.4, 0.02, 0.0, 0.05)


def test_collapse_reason():
    ln64 = math.log(64)
    assert "within 1%" in collapse_reason([ln64 * 1.004] * 20, 64, 0.2)
    assert "within 1%" in collapse_reason([1.0] * 16 + [ln64] * 4, 64, 0.2)  # last fifth only
    assert collapse_reason([ln64 * 0.9] * 20, 64, 0.2) is None
    assert collapse_reason([ln64 * 1.2] * 20, 64, 0.2) is None  # confidently wrong, not flat
    assert "feature std" in collapse_reason([1.0] * 20, 64, 4e-4)


def _naive_disagreement(variant, baseline, tolerance):
    """Per seed, the items whose two values differ by more than ``tolerance``, counted one by
    one; and their mean share."""
    per_seed = []
    for row_a, row_b in zip(variant, baseline):
        differing = 0
        for a, b in zip(row_a, row_b):
            if abs(a - b) > tolerance:
                differing += 1
        per_seed.append(differing / len(row_a))
    return sum(per_seed) / len(per_seed), per_seed


@pytest.mark.parametrize("tolerance", [0.0, 0.05, 0.3])
def test_item_disagreement_is_the_naive_count_of_items_that_differ(tolerance):
    rng = np.random.default_rng(7)
    hits_a, hits_b = (rng.random((5, 200)) < 0.6).astype(float), (rng.random((5, 200)) < 0.6)
    scores_a = rng.random((5, 200))
    scores_b = scores_a + rng.choice([0.0, 0.04, 0.05, 0.2, -0.35], size=(5, 200))
    for a, b in ((hits_a, hits_b.astype(float)), (scores_a, scores_b)):
        found = item_disagreement(a, b, tolerance)
        share, per_seed = _naive_disagreement(a.tolist(), b.tolist(), tolerance)
        assert found["share"] == pytest.approx(share) and found["tolerance"] == tolerance
        assert found["per_seed"] == pytest.approx(per_seed)


def test_item_disagreement_by_hand_and_its_refusals():
    """Two seeds of four items: 1 and then 3 of 4 differ (a hit against a miss), mean 0.5; at a
    tolerance of 0.125 a difference of exactly 0.125 is not one; below 2 % of items apart the
    arms are near-copies."""
    a = [[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0]]
    b = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    assert item_disagreement(a, b) == {"share": 0.5, "per_seed": [0.25, 0.75], "tolerance": 0.0}
    close = item_disagreement([[0.5, 0.5]], [[0.625, 0.75]], 0.125)
    assert close["per_seed"] == [0.5]
    assert NEAR_COPY_SHARE == 0.02
    assert near_copies({"share": 0.019}) and not near_copies({"share": 0.02})
    for bad in (([[1.0, 0.0]], [[1.0]]), ([1.0, 0.0], [1.0, 0.0]), ([[]], [[]])):
        with pytest.raises(ValueError, match=r"\(seeds, items\) tables of one shape"):
            item_disagreement(*bad)
    for tolerance in (-0.1, float("nan")):
        with pytest.raises(ValueError, match="tolerance must be at least 0"):
            item_disagreement(a, b, tolerance)
