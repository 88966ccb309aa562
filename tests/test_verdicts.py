"""Claim statistics: the interval's two error sources, verdict rules, collapse detection."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from paperlib.tables.verdicts import (
    Interval,
    bootstrap_indices,
    collapse_reason,
    interval,
    paired_effect,
    verdict,
)


def test_seed_term_matches_a_t_interval_when_items_do_not_vary():
    seed_values = np.array([0.30, 0.34, 0.31, 0.36, 0.33])
    per_seed = np.repeat(seed_values[:, None], 50, axis=1)  # no test-set variance
    got = interval(per_seed, bootstrap_indices(50, 200))
    low, high = stats.t.interval(0.95, 4, loc=seed_values.mean(), scale=stats.sem(seed_values))
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-9)
    assert got.seed_values == pytest.approx(tuple(seed_values))


def test_test_term_matches_the_standard_error_of_the_mean_for_one_seed():
    rng = np.random.default_rng(0)
    items = rng.random((1, 2000)) < 0.3  # one seed: the bootstrap term alone, z = 1.96
    got = interval(items, bootstrap_indices(2000, 2000, seed=1))
    expected = 1.959964 * items.std() / math.sqrt(2000)
    assert (got.high - got.low) / 2 == pytest.approx(expected, rel=0.08)


def test_both_terms_add_in_quadrature():
    rng = np.random.default_rng(2)
    per_seed = rng.random((4, 300)) + np.arange(4)[:, None] * 0.05
    boot = bootstrap_indices(300, 500, seed=3)
    got = interval(per_seed, boot)
    seed_var = np.var(per_seed.mean(1), ddof=1) / 4
    test_var = np.var([per_seed[:, b].mean() for b in boot])  # naive loop over resamples
    half = stats.t.ppf(0.975, 3) * math.sqrt(seed_var + test_var)
    assert (got.low, got.high) == pytest.approx((got.mean - half, got.mean + half), rel=1e-9)


def test_paired_effect_pairs_seeds_and_items():
    rng = np.random.default_rng(4)
    base = rng.random((5, 400))
    shifted = base + 0.02  # the same runs, better by exactly 0.02 on every item
    effect = paired_effect(shifted, base, bootstrap_indices(400, 300))
    assert effect.mean == pytest.approx(0.02) and effect.high - effect.low < 1e-9
    with pytest.raises(ValueError, match="shape"):
        paired_effect(base, base[:3], bootstrap_indices(400, 10))


def test_interval_refuses_empty_and_non_finite_input():
    with pytest.raises(ValueError, match="non-empty"):
        interval(np.zeros((0, 5)), bootstrap_indices(5, 10))
    with pytest.raises(ValueError, match="non-finite"):
        interval(np.array([[0.1, np.nan]]), bootstrap_indices(2, 10))


def _iv(mean, half=0.01, seeds=3):
    return Interval(mean, mean - half, mean + half, (mean,) * seeds)


@pytest.mark.parametrize(
    "effect, a, b, chance, better, expected",
    [
        (_iv(0.05), _iv(0.4), _iv(0.35), 0.001, "higher", "reproduces"),
        (_iv(-0.05), _iv(0.35), _iv(0.4), 0.001, "higher", "contradicts"),
        (_iv(0.005), _iv(0.4), _iv(0.395), 0.001, "higher", "inconclusive"),
        (_iv(0.05), _iv(0.06), _iv(0.005), 0.001, "higher", "untestable"),  # baseline at chance
        (_iv(-0.05), _iv(3.0), _iv(8.0), None, "lower", "reproduces"),  # lower is better
        (_iv(0.05), _iv(8.0), _iv(3.0), None, "lower", "contradicts"),
    ],
)
def test_verdict_rules(effect, a, b, chance, better, expected):
    ceiling = 1.0 if better == "higher" else 0.0
    assert verdict(effect, a, b, chance, ceiling, better) == expected


def test_verdict_untestable_when_both_sides_at_ceiling():
    assert verdict(_iv(0.0), _iv(0.995), _iv(0.995), 0.001, 1.0, "higher") == "untestable"
    with pytest.raises(ValueError, match="better"):
        verdict(_iv(0.0), _iv(0.5), _iv(0.5), 0.1, 1.0, "up")


def test_collapse_reason():
    ln64 = math.log(64)
    assert "within 1%" in collapse_reason([ln64 * 1.004] * 20, 64, 0.2)
    assert "within 1%" in collapse_reason([1.0] * 16 + [ln64] * 4, 64, 0.2)  # last fifth only
    assert collapse_reason([ln64 * 0.9] * 20, 64, 0.2) is None
    assert collapse_reason([ln64 * 1.2] * 20, 64, 0.2) is None  # confidently wrong, not flat
    assert "feature std" in collapse_reason([1.0] * 20, 64, 4e-4)


def test_one_seed_gives_no_directional_verdict():
    one = _iv(0.05, seeds=1)
    assert verdict(one, _iv(0.4), _iv(0.35), 0.001, 1.0, "higher") == "inconclusive"


def test_an_interval_wholly_below_chance_is_a_finding_not_untestable():
    """HiMo@K of Long-CLIP is negative in the paper (−0.55): below chance (0) is testable."""
    assert verdict(_iv(0.9), _iv(0.4), _iv(-0.5), 0.0, 1.0, "higher") == "reproduces"
    assert verdict(_iv(0.4), _iv(0.4), _iv(0.0, half=0.05), 0.0, 1.0, "higher") == "untestable"


def test_learned_needs_the_whole_interval_above_three_times_chance():
    from paperlib.tables.verdicts import learned

    assert learned(_iv(0.05), 0.001) and not learned(_iv(0.0035, half=0.001), 0.001)


def test_headroom_needs_the_baseline_between_three_times_chance_and_0_9():
    from paperlib.tables.verdicts import headroom

    assert headroom(0.5, 0.001, 1.0) is True  # R@1 over 1,000 items
    assert headroom(0.002, 0.001, 1.0) is False and headroom(0.95, 0.001, 1.0) is False
    assert headroom(0.2, 1 / 24, 1.0) is True and headroom(0.1, 1 / 24, 1.0) is False
    assert headroom(60.0, 50.0, 100.0) is None  # HiMo@2: 3 × 50 % is beyond 90 %
    assert headroom(0.7, 0.5, 1.0) is None  # PEP AUC
    assert headroom(3.0, None, 0.0) is None  # SSI has no chance level
