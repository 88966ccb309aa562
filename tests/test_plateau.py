"""The plateau criterion (``paperlib.study.plan.plateau``): its slope and noise against scipy's
least squares and the sandwich variance written with numpy, the fitted window at the study's
logging designs, and one constructed curve at each boundary of the rule (flat, noisy-flat,
rising past δ, rising within δ, rising but not established, at δ exactly)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import numpy as np
import pytest
from scipy import stats

from paperlib.study.plan.plateau import (
    curve_items,
    fit_window,
    plateau_check,
    rate_standard_error,
    run_plateaus,
    slope_fit,
)

DELTA = 0.014  # long I2T R@1's δ


def curve(*window_values, last=500, head=(0.1, 0.3, 0.45)):
    """A curve logged as the study's runs are (every fifth of ``last`` steps plus step 0):
    ``head`` then ``window_values`` at 0.6, 0.8 and 1.0 of the schedule."""
    values = (*head, *window_values)
    return [(round(k * last / (len(values) - 1)), v) for k, v in enumerate(values)]


def sandwich_slope_variance(x, variances):
    """``[(XᵀX)⁻¹ Xᵀ diag(σ²) X (XᵀX)⁻¹]₁₁`` of the line ``y = a + b x``: the slope's variance
    under independent points of known variances."""
    design = np.column_stack([np.ones_like(x), x])
    bread = np.linalg.inv(design.T @ design)
    return float((bread @ design.T @ np.diag(variances) @ design @ bread)[1, 1])


@pytest.mark.parametrize("seed", range(5))
def test_the_slope_and_its_two_noises_match_scipy_and_the_sandwich(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    x = np.sort(rng.choice(np.arange(0, 2000, 25), n, replace=False)).astype(float)
    y = 0.4 + 1e-4 * x + rng.normal(0, 0.02, n)
    variances = rng.uniform(1e-5, 1e-3, n)
    fit = slope_fit(x, y, variances)
    plain = stats.linregress(x, y)
    assert fit.slope == pytest.approx(plain.slope, rel=1e-10)
    assert math.sqrt(fit.residual_variance) == pytest.approx(plain.stderr, rel=1e-10)
    assert fit.df == n - 2
    assert fit.binomial_variance == pytest.approx(sandwich_slope_variance(x, variances))
    assert fit.slope == pytest.approx(np.polyfit(x, y, 1)[0], rel=1e-10)


def test_two_points_have_no_residual_scatter():
    fit = slope_fit([0, 100], [0.2, 0.3], [1e-4, 1e-4])
    assert fit.slope == pytest.approx(1e-3) and fit.df == 0 and math.isnan(fit.residual_variance)
    assert fit.binomial_variance == pytest.approx(2 * 1e-4 / 100**2)


def test_the_window_is_the_last_forty_percent_with_at_least_three_points():
    runs = curve(0.5, 0.5, 0.5)  # the study's runs: 0, .2, .4, .6, .8, 1.0 T
    assert [s for s, _ in fit_window(runs)] == [300, 400, 500]
    bases = [(k * 100, 0.5) for k in range(17)]  # the bases: 16 points after step 0
    assert [s for s, _ in fit_window(bases)] == [1000, 1100, 1200, 1300, 1400, 1500, 1600]
    sparse = [(0, 0.1), (100, 0.4), (400, 0.5), (500, 0.51)]  # one point inside: the last 3
    assert [s for s, _ in fit_window(sparse)] == [100, 400, 500]
    assert fit_window([(0, 0.1), (500, 0.2)]) == [(0, 0.1), (500, 0.2)]
    odd = [(0, 0.1), (600, 0.2), (800, 0.3), (1000, 0.4)]  # 0.6 T exactly, despite rounding
    assert fit_window(odd)[0] == (600, 0.2)


def test_a_flat_curve_and_a_noisy_flat_one_have_plateaued():
    flat = plateau_check(curve(0.5, 0.5, 0.5), 500, "r", DELTA)
    assert flat.gain == 0.0 and flat.reached and flat.reason() is None
    noisy = plateau_check(curve(0.50, 0.53, 0.49), 500, "r", DELTA)
    assert noisy.reached and noisy.interval[0] < 0 < noisy.interval[1]
    assert plateau_check(curve(0.5, 0.48, 0.45), 500, "r", DELTA).reached  # a fall


def test_a_rise_past_delta_established_against_the_noise_is_still_rising():
    rising = plateau_check(curve(0.44, 0.50, 0.56), 500, "long_i2t_r1", DELTA)
    assert rising.gain == pytest.approx(0.06) and rising.interval[0] > 0
    assert not rising.reached
    reason = rising.reason()
    assert reason.startswith("long_i2t_r1 still rising: +0.0600 over the last fifth")
    low, high = rising.interval
    assert f"95 % interval {low:+.4f} to {high:+.4f}" in reason
    assert "beyond δ = 0.014" in reason and "steps 300–500, 3 points" in reason


def test_a_rise_within_delta_counts_as_flat_even_when_established():
    """Over 100,000 items a rise of 0.01 per fifth is far beyond its noise, but below δ."""
    small = plateau_check(curve(0.50, 0.51, 0.52), 100_000, "r", DELTA)
    assert small.gain == pytest.approx(0.01) and small.interval[0] > 0
    assert small.reached
    unjudged = plateau_check(curve(0.50, 0.51, 0.52), 100_000, "r")  # a base: no δ
    assert not unjudged.reached and "above 0" in unjudged.reason()


def test_a_rise_past_delta_not_established_against_the_noise_counts_as_flat():
    """+0.02 per fifth over 500 items: past δ, inside the binomial noise of the points."""
    unsure = plateau_check(curve(0.50, 0.52, 0.54), 500, "r", DELTA)
    assert unsure.gain == pytest.approx(0.02) and unsure.gain > DELTA
    assert unsure.interval[0] < 0 and unsure.reached
    assert unsure.df is None  # the points lie on a line: the binomial noise is the larger
    half = stats.norm.isf(0.025) * unsure.standard_error
    assert unsure.interval == pytest.approx((unsure.gain - half, unsure.gain + half))


def test_the_residual_scatter_decides_when_it_is_the_larger_noise():
    """On a 16-point log (the bases'), 7 points fall in the window: with 5 residual degrees of
    freedom a scatter larger than the binomial noise is read against t."""
    values = (0.40, 0.58, 0.50, 0.60, 0.49, 0.61, 0.52)
    points = [(k * 100, 0.1) for k in range(10)] + [
        (1000 + k * 100, v) for k, v in enumerate(values)
    ]
    scattered = plateau_check(points, 100_000, "r", DELTA)
    assert scattered.df == 5 and scattered.points == 7
    half = stats.t.isf(0.025, 5) * scattered.standard_error
    assert scattered.interval == pytest.approx((scattered.gain - half, scattered.gain + half))
    binomial = rate_standard_error(0.5, 100_000)
    assert scattered.standard_error > binomial  # the scatter is the larger


def test_on_three_points_the_bend_is_not_read_as_noise():
    """A three-point window that bends (0.30, 0.46, 0.57 over 500 items, a from-scratch run
    still learning) leaves a residual larger than the binomial noise; read with t on 1 degree
    of freedom it would establish no rise at all. The binomial noise decides instead, and the
    rise is established."""
    bending = plateau_check(curve(0.30, 0.46, 0.57), 1000, "r", DELTA)
    x, y = [300.0, 400.0, 500.0], [0.30, 0.46, 0.57]
    fit = slope_fit(x, y, [rate_standard_error(v, 1000) ** 2 for v in y])
    assert fit.residual_variance == pytest.approx(stats.linregress(x, y).stderr ** 2)
    assert fit.residual_variance > fit.binomial_variance  # the bend's "scatter" is the larger
    assert bending.df is None and bending.interval[0] > 0 and not bending.reached


def test_a_gain_of_exactly_delta_is_flat():
    exact = plateau_check(curve(0.41, 0.42, 0.43), 10**7, "r", 0.01)
    assert exact.gain > 0.01  # by rounding: 0.010000000000000028
    assert exact.interval[0] > 0 and exact.gain == pytest.approx(0.01) and exact.reached


def test_bad_curves_are_refused():
    with pytest.raises(ValueError, match="at least 2"):
        plateau_check([(0, 0.1)], 500, "x")
    with pytest.raises(ValueError, match="x: a slope needs at least 2 distinct steps"):
        plateau_check([(500, 0.1), (500, 0.2)], 500, "x")
    with pytest.raises(ValueError, match="n_items"):
        plateau_check(curve(0.5, 0.5, 0.5), 0, "x")


def test_the_plateau_rule_uses_the_curves_own_item_count():
    """+0.025 per fifth on a straight line is established over 1,000 items and not over the
    500 a study curve is measured on; the log's val_size decides."""
    log = [
        {"step": s, "val": {"r1": v}, "val_size": 500}
        for s, v in curve(0.475, 0.50, 0.525)
    ]  # fmt: skip
    assert curve_items(log) == 500
    assert run_plateaus(log)["r1"].reached
    assert not run_plateaus(log, 1000)["r1"].reached
    with pytest.raises(ValueError, match="val_size"):
        curve_items([{k: v for k, v in r.items() if k != "val_size"} for r in log])
    with pytest.raises(ValueError, match="val_size"):
        curve_items([log[0], {**log[1], "val_size": 200}])


def _committed_delta(item: str) -> float:
    """The smallest δ among the full study's claims on ``item``, by the δ formula from each
    claim's recorded share and reference (``claims.json``'s ``smallest_rule``)."""
    from paperlib.study.plan.smallest_effect import delta_by_formula
    from paperlib.study.report.decided import load_claims

    on_item = [c for c in load_claims("full")["claims"] if c["item"] == item]
    assert on_item, item
    return min(
        delta_by_formula(c["smallest_rule"]["share"], c["smallest_rule"]["reference"], c["ceiling"])
        for c in on_item
    )


def test_a_study_runs_plateau_reads_its_primary_metric_against_delta():
    """A rise counts only past δ (the smallest δ among the claims on the metric), and only on
    the study's plateau metrics: HiMo's fine-tunes on the primary metric their recipe reads
    (a retention metric that still rises clearly does not leave the run out), ARGENT's
    from-scratch arms on the two metrics of their learning targets."""
    from paperlib.study.decide.targets import SCRATCH_TARGETS
    from paperlib.study.plan.recipe import SEARCHED_ARMS
    from paperlib.study.results.references import CLAIMED_AS, PLATEAU_METRICS, plateau_deltas
    from paperlib.study.results.validity import run_plateau

    assert {rule.study for rule in SEARCHED_ARMS.values()} == {"himo"}  # ARGENT searches none
    assert PLATEAU_METRICS["himo"] == tuple({r.primary for r in SEARCHED_ARMS.values()})
    assert {CLAIMED_AS[m] for m in PLATEAU_METRICS["argent"]} == set(SCRATCH_TARGETS)
    delta = _committed_delta("world-long/i2t_hit1")
    assert plateau_deltas("full", "himo") == {"long_i2t_r1": pytest.approx(delta, rel=1e-12)}
    # each the smallest δ of every claim on its metric, of either study (no ARGENT claim reads
    # short R@1: its δ is HiMo's short-caption claim's)
    zero_shot = _committed_delta("world-zeroshot/L1_correct")
    short = _committed_delta("world-short/i2t_hit1")
    assert plateau_deltas("full", "argent") == {
        "zeroshot_L1": pytest.approx(zero_shot, rel=1e-12),
        "short_i2t_r1": pytest.approx(short, rel=1e-12),
    }
    assert 0.02 < delta < 0.03  # the two constructed rises below fall on either side of it

    def log(*window):
        # 5,000 held-out items: each point's binomial noise is about 0.007, so a gain of 0.02
        # over the last fifth is established against it (its interval lies above 0)
        short = curve(0.70, 0.80, 0.90)
        return [
            {"step": s, "val": {"long_i2t_r1": v, "short_i2t_r1": w}, "val_size": 5000}
            for (s, v), (_, w) in zip(curve(*window), short)
        ]

    within = plateau_check(curve(0.60, 0.62, 0.64), 5000, "long_i2t_r1", delta)
    assert within.established and within.gain == pytest.approx(0.02)
    assert run_plateau(log(0.60, 0.62, 0.64), "full", "himo") is None  # +0.02 < δ; short not read
    past = run_plateau(log(0.60, 0.63, 0.66), "full", "himo")
    assert "long_i2t_r1 still rising: +0.0300" in past and f"beyond δ = {delta:g}" in past
    assert "short_i2t_r1" not in past
    # an ARGENT run is read on both: the same log left out for its short R@1 (+0.10 over the
    # last fifth, established and past its δ) where HiMo's reading ignores that curve
    argent = [
        {"step": r["step"], "val": {"zeroshot_L1": 0.5, "short_i2t_r1": r["val"]["short_i2t_r1"]},
         "val_size": 5000}
        for r in log(0.60, 0.62, 0.64)
    ]  # fmt: skip
    assert run_plateau(argent, "full", "himo") is None
    rising = run_plateau(argent, "full", "argent")
    assert rising.startswith("short_i2t_r1 still rising: +0.1000") and "zeroshot_L1" not in rising


def test_the_record_callers_write_is_json_and_keeps_the_fields_they_read():
    check = plateau_check(curve(0.44, 0.50, 0.56), 500, "r", DELTA)
    record = json.loads(json.dumps({**asdict(check), "reached": check.reached}))
    for field in ("metric", "gain", "standard_error", "threshold", "interval", "reached"):
        assert field in record
    assert record["start"] == [300, 0.44] and record["end"] == [500, 0.56]
