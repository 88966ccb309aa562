"""The decision rule: testability (chance, ceiling, headroom), the five verdicts from an
adjusted interval and the smallest effect of interest, base agreement, collapse and plateau."""

from __future__ import annotations

import math

import pytest

from paperlib.tables.plateau import plateau_check
from paperlib.tables.verdicts import (
    VERDICTS,
    bases_agree,
    collapse_reason,
    directional_verdict,
    headroom,
    untestable_reason,
)


@pytest.mark.parametrize(
    "adjusted, equivalence, better, expected",
    [
        ((0.02, 0.08), (0.01, 0.09), "higher", "reproduces"),
        ((-0.08, -0.02), (-0.09, -0.01), "higher", "contradicts"),
        ((-0.004, 0.006), (-0.006, 0.008), "higher", "negligible"),  # inside ±0.01
        ((0.002, 0.008), (0.001, 0.009), "higher", "negligible"),  # detectable, yet too small
        # Holm's interval is inside ±0.01 but the simultaneous one is not: no equivalence claim
        ((0.002, 0.008), (-0.001, 0.012), "higher", "reproduces"),
        ((-0.004, 0.006), (-0.008, 0.011), "higher", "inconclusive"),
        ((0.005, 0.02), (0.003, 0.022), "higher", "reproduces"),  # not inside ±0.01
        ((-0.02, 0.03), (-0.03, 0.04), "higher", "inconclusive"),
        ((-3.0, -1.5), (-3.2, -1.3), "lower", "reproduces"),  # lower is better (SSI)
        ((1.5, 3.0), (1.3, 3.2), "lower", "contradicts"),
    ],
)
def test_verdicts_from_the_adjusted_interval(adjusted, equivalence, better, expected):
    smallest = 1.0 if better == "lower" else 0.01
    assert directional_verdict(adjusted, equivalence, better, smallest, seeds=8)[0] == expected
    assert expected in VERDICTS


def test_one_seed_gives_no_directional_verdict():
    verdict, reason = directional_verdict((0.02, 0.08), (0.01, 0.09), "higher", 0.01, seeds=1)
    assert verdict == "inconclusive" and "seed variance" in reason


def test_chance_ceiling_and_headroom_make_a_claim_untestable():
    learned, other = (0.40, 0.46), (0.30, 0.36)
    assert untestable_reason(learned, other, 0.33, 0.001, 1.0, "higher", 0.01) is None
    at_chance = untestable_reason(learned, (0.0, 0.004), 0.002, 0.001, 1.0, "higher", 0.01)
    assert "chance" in at_chance
    ceiling = untestable_reason((0.99, 1.0), (0.995, 1.0), 0.998, 0.001, 1.0, "higher", 0.01)
    assert "best value" in ceiling
    # COLA of 0.995: an improvement of the smallest effect (2 points) is impossible
    no_room = untestable_reason((0.97, 0.99), (0.985, 0.99), 0.995, 0.25, 1.0, "higher", 0.02)
    assert "leaves less than the smallest effect" in no_room
    # aperture fraction: a baseline with no caption inside the radius leaves nothing to improve
    zero = untestable_reason((0.0, 0.0), (0.0, 0.0), 0.0, None, 0.0, "lower", 0.01)
    assert zero is not None
    with pytest.raises(ValueError, match="better"):
        untestable_reason(learned, other, 0.33, 0.001, 1.0, "up", 0.01)


def test_an_interval_wholly_below_chance_is_a_finding_not_untestable():
    """HiMo@K of Long-CLIP is negative in the paper (−0.55): below chance (0) is testable."""
    assert untestable_reason((0.3, 0.5), (-0.6, -0.4), -0.5, 0.0, 1.0, "higher", 0.05) is None
    assert "chance" in untestable_reason((0.3, 0.5), (-0.05, 0.05), 0.0, 0.0, 1.0, "higher", 0.05)


def test_headroom_is_the_smallest_effect_on_both_sides():
    assert headroom(0.95, 0.5, 1.0, "higher", 0.005)  # PEP AUC of 0.95: room for half a point
    assert not headroom(0.998, 0.5, 1.0, "higher", 0.005)
    assert not headroom(0.503, 0.5, 1.0, "higher", 0.005)  # at chance: no room downwards
    assert headroom(4.0, None, 0.0, "lower", 1.0) and not headroom(0.5, None, 0.0, "lower", 1.0)


def test_bases_must_agree_with_a_directional_verdict():
    assert bases_agree({0: 0.02, 1: 0.01}, "reproduces", "higher")
    assert not bases_agree({0: 0.02, 1: -0.01}, "reproduces", "higher")
    assert bases_agree({0: -0.5, 1: -1.0}, "reproduces", "lower")
    assert bases_agree({0: 0.02, 1: -0.01}, "inconclusive", "higher")  # nothing to agree with


def test_collapse_reason():
    ln64 = math.log(64)
    assert "within 1%" in collapse_reason([ln64 * 1.004] * 20, 64, 0.2)
    assert "within 1%" in collapse_reason([1.0] * 16 + [ln64] * 4, 64, 0.2)  # last fifth only
    assert collapse_reason([ln64 * 0.9] * 20, 64, 0.2) is None
    assert collapse_reason([ln64 * 1.2] * 20, 64, 0.2) is None  # confidently wrong, not flat
    assert "feature std" in collapse_reason([1.0] * 20, 64, 4e-4)


def test_plateau_compares_the_last_fifth_gain_with_a_standard_error():
    flat = [(0, 0.1), (100, 0.4), (400, 0.50), (500, 0.51)]
    check = plateau_check(flat, 500, "long_i2t_r1")
    assert check.start == (400, 0.50) and check.end == (500, 0.51)
    assert check.standard_error == pytest.approx(math.sqrt(0.51 * 0.49 / 500))
    assert check.reached and check.reason() is None
    rising = plateau_check([(0, 0.1), (400, 0.40), (500, 0.48)], 500, "long_i2t_r1")
    assert not rising.reached and "still rising" in rising.reason()
    falling = plateau_check([(0, 0.1), (400, 0.5), (500, 0.45)], 500, "x")
    assert falling.reached  # a fall is not a gain
    with pytest.raises(ValueError, match="at least 2"):
        plateau_check([(0, 0.1)], 500, "x")
