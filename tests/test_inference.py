"""The study's interval: its variance parts against the crossed model's closed form and a
brute-force Monte Carlo, its coverage on data simulated with a known effect, and Holm's
adjustment against a direct implementation and statsmodels-free reference values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from paperlib.tables.inference import crossed_estimate, holm, holm_levels, mean_squares

REPEATS = 2000  # simulations per coverage check: the coverage's standard error is 0.49 %


def simulate(rng, seeds, items, sd_seed, sd_item, sd_noise, effect=0.0, binary=False):
    """One (seeds, items) table of the crossed model y = μ + a_s + b_i + e_si (a binary table
    thresholds it, as per-item hits are)."""
    y = (
        effect
        + rng.normal(0, sd_seed, (seeds, 1))
        + rng.normal(0, sd_item, (1, items))
        + rng.normal(0, sd_noise, (seeds, items))
    )
    return (y > 0).astype(float) if binary else y


def true_mean(effect, sd_seed, sd_item, sd_noise, binary):
    if not binary:
        return effect
    return float(stats.norm.cdf(effect / math.sqrt(sd_seed**2 + sd_item**2 + sd_noise**2)))


def coverage(seeds, items, sd_seed, sd_item, sd_noise, effect, binary, seed=0):
    rng = np.random.default_rng(seed)
    truth = true_mean(effect, sd_seed, sd_item, sd_noise, binary)
    hits = 0
    for _ in range(REPEATS):
        low, high = crossed_estimate(
            simulate(rng, seeds, items, sd_seed, sd_item, sd_noise, effect, binary)
        ).interval()
        hits += low <= truth <= high
    return hits / REPEATS


BAND = 3 * math.sqrt(0.95 * 0.05 / REPEATS)  # three standard errors of a simulated coverage


@pytest.mark.slow
@pytest.mark.parametrize(
    "sd_seed, sd_item, sd_noise, effect, binary",
    [
        (0.02, 0.3, 0.4, 0.05, False),  # the test items dominate
        (0.1, 0.3, 0.4, 0.05, False),  # the seeds dominate
        (0.0, 0.0, 1.0, 0.0, False),  # pure noise
        (0.2, 1.0, 1.0, 0.2, True),  # per-item hits (a retrieval metric)
    ],
)
def test_coverage_is_95_percent_with_eight_seeds(sd_seed, sd_item, sd_noise, effect, binary):
    """The headline design (8 seeds, shared items): coverage within simulation error of 95 %."""
    got = coverage(8, 400, sd_seed, sd_item, sd_noise, effect, binary)
    assert abs(got - 0.95) <= BAND, got


@pytest.mark.slow
@pytest.mark.parametrize("seeds", [2, 3])
def test_coverage_is_at_least_95_percent_with_few_seeds(seeds):
    """Sweeps (3 seeds): never below 95 % beyond simulation error (it errs wide)."""
    got = coverage(seeds, 400, 0.05, 0.2, 0.5, 0.0, False, seed=seeds)
    assert got >= 0.95 - BAND, got


def test_the_variance_parts_are_unbiased():
    """The mean of seed_term + item_term over many tables equals the sampling variance of the
    grand mean (brute force) and the closed form σ_a²/S + σ_b²/N + σ_e²/(SN)."""
    rng = np.random.default_rng(1)
    S, N, a, b, e = 6, 200, 0.1, 0.3, 0.5
    tables = [simulate(rng, S, N, a, b, e) for _ in range(3000)]
    means = np.array([t.mean() for t in tables])
    estimated = np.mean(
        [(lambda x: x.seed_term + x.item_term)(crossed_estimate(t)) for t in tables]
    )
    closed = a**2 / S + b**2 / N + e**2 / (S * N)
    assert estimated == pytest.approx(closed, rel=0.06)
    assert means.var(ddof=1) == pytest.approx(closed, rel=0.08)


def test_adding_the_seed_spread_to_an_item_bootstrap_counts_the_interaction_twice():
    """The naive sum MS_seed/(SN) + MS_item/(SN) exceeds the crossed variance by MS_resid/(SN):
    with no item effect the naive interval is about √2 too wide."""
    rng = np.random.default_rng(2)
    naive, crossed = [], []
    for _ in range(300):
        y = simulate(rng, 8, 1000, 0.0, 0.0, 1.0)
        ms, estimate = mean_squares(y), crossed_estimate(y)
        naive.append((ms.seed + ms.item) / y.size)
        crossed.append(estimate.se**2)
        assert naive[-1] >= crossed[-1]
    assert np.mean(naive) / np.mean(crossed) == pytest.approx(2.0, rel=0.1)


def test_mean_squares_match_a_direct_two_way_anova():
    rng = np.random.default_rng(3)
    y = rng.normal(size=(4, 7))
    ms = mean_squares(y)
    grand, rows, cols = y.mean(), y.mean(1), y.mean(0)
    assert ms.seed == pytest.approx(7 * ((rows - grand) ** 2).sum() / 3)
    assert ms.item == pytest.approx(4 * ((cols - grand) ** 2).sum() / 6)
    resid = sum((y[i, j] - rows[i] - cols[j] + grand) ** 2 for i in range(4) for j in range(7)) / (
        3 * 6
    )
    assert ms.resid == pytest.approx(resid)


def test_one_seed_keeps_only_the_item_term_and_two_seeds_use_t_with_one_df():
    rng = np.random.default_rng(4)
    y = rng.normal(0.3, 1.0, (1, 500))
    one = crossed_estimate(y)
    assert one.seed_term == 0 and one.item_term == pytest.approx(y.var(ddof=1) / 500)
    low, high = one.interval()
    assert high - low == pytest.approx(2 * 1.959964 * math.sqrt(y.var(ddof=1) / 500), rel=1e-6)
    two = crossed_estimate(np.vstack([y, y + 0.1]))
    assert two.half_width() >= stats.t.isf(0.025, 1) * math.sqrt(two.seed_term)


def test_the_p_value_is_the_level_whose_interval_touches_zero():
    rng = np.random.default_rng(5)
    estimate = crossed_estimate(rng.normal(0.04, 0.4, (8, 500)))
    p = estimate.p_value()
    assert 0 < p < 0.05
    assert estimate.interval(p)[0] == pytest.approx(0.0, abs=1e-9)
    assert estimate.interval(p * 1.01)[0] > 0 > estimate.interval(p * 0.99)[0]


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="seeds, items"):
        crossed_estimate(np.zeros(5))
    with pytest.raises(ValueError, match="NaN"):
        crossed_estimate(np.array([[0.1, np.nan, 0.2]]))


def _holm_direct(p, alpha=0.05):
    """Holm's step-down test as a textbook writes it: reject while p_(k) < α / (m − k + 1)."""
    order = np.argsort(p)
    rejected = np.zeros(len(p), bool)
    for k, j in enumerate(order):
        if p[j] < alpha / (len(p) - k):
            rejected[j] = True
        else:
            break
    return rejected


@pytest.mark.parametrize("seed", range(20))
def test_holm_adjusted_p_values_reject_what_the_step_down_test_rejects(seed):
    p = np.random.default_rng(seed).uniform(0, 0.06, 8) ** 1.5
    adjusted = np.array(holm(list(p)))
    assert ((adjusted < 0.05) == _holm_direct(p)).all()
    assert (adjusted >= p).all() and (adjusted <= np.minimum(1, 8 * p) + 1e-12).all()


def test_holm_known_values_and_the_adjusted_levels():
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    levels = holm_levels([0.01, 0.04, 0.03, 0.5])
    assert levels == pytest.approx([0.0125, 0.05 * 0.04 / 0.09, 0.05 * 0.03 / 0.09, 0.05])
    assert all(0.05 / 4 <= a <= 0.05 for a in levels)


def test_an_adjusted_interval_excludes_zero_exactly_when_holm_rejects():
    rng = np.random.default_rng(6)
    estimates = [crossed_estimate(rng.normal(mu, 0.4, (8, 300))) for mu in (0.0, 0.02, 0.05, 0.1)]
    p = [e.p_value() for e in estimates]
    rejected = np.array(holm(p)) < 0.05
    for estimate, level, reject in zip(estimates, holm_levels(p), rejected):
        low, high = estimate.interval(level)
        assert (low > 0 or high < 0) == reject
