"""Where two arms stand against their base: each side is read off its interval, not its mean."""

import pytest

from paperlib.study.decide.base_reference import base_reading, base_side


def _arm(effect: float, half: float) -> dict:
    return {"effect": effect, "interval": [effect - half, effect + half]}


@pytest.mark.parametrize(
    ("effect", "half", "better", "side"),
    [
        (-0.02, 0.01, "higher", -1),
        (-0.02, 0.03, "higher", 0),  # the mean is below, the interval covers no change
        (+0.02, 0.01, "higher", 1),
        (-0.02, 0.01, "lower", 1),  # a fall of a lower-is-better metric improves on the base
        (+0.02, 0.01, "lower", -1),
    ],
)
def test_an_arm_s_side_is_where_its_whole_interval_lies(effect, half, better, side):
    assert base_side(_arm(effect, half), better) == side


def test_the_reading_names_less_damage_only_where_both_arms_fall_below_established():
    below, lower = _arm(-0.02, 0.01), _arm(-0.05, 0.01)
    assert base_reading({"variant": below, "baseline": lower}, "higher") == (
        "both arms fall below the base (the variant's difference is less damage)"
    )
    assert base_reading({"variant": lower, "baseline": below}, "higher") == (
        "both arms fall below the base"
    )
    wide = _arm(-0.02, 0.03)  # the same mean, an interval across zero: no damage established
    assert base_reading({"variant": wide, "baseline": _arm(-0.03, 0.04)}, "higher") == (
        "neither arm shows an established change from the base"
    )
    assert base_reading({"variant": wide, "baseline": lower}, "higher") == (
        "the variant shows no established change from the base and the baseline falls below "
        "the base"
    )
    assert base_reading({"variant": _arm(0.03, 0.01), "baseline": _arm(0.01, 0.005)}, "higher") == (
        "both arms improve on the base"
    )
    assert base_reading({"variant": below, "baseline": None}, "higher") is None
