"""Figures of claims.json: metric units and ranges, clipped intervals, chance lines, the forest."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PathCollection, PolyCollection

from paperlib.figures import (
    aperture_over_training,
    chance_line,
    claim_range,
    claim_unit,
    claims_forest,
    clipped_errors,
    interval_bars,
    validation_curves,
)
from paperlib.study.decide.chance import world_chance
from paperlib.study.plan.claims import CLAIMS
from paperlib.study.plan.design import EVAL_SEED
from paperlib.study.plan.scales import SCALES
from paperlib.study.report.tables import claim_name

# each metric's permutation-null chance on the full study's test world
CHANCE = {item: r["value"] for item, r in world_chance(EVAL_SEED, SCALES["full"].eval_size).items()}


def _claim(**kw) -> dict:
    base = {
        "claim": "c",
        "label": "PEP AUC",
        "variant": "A",
        "baseline": "B",
        "better": "higher",
        "chance": 0.5,
        "ceiling": 1.0,
        "verdict": "inconclusive",
        "effect": 0.1,
        "interval": [-0.05, 0.25],
    }
    return {**base, **kw}


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_every_declared_claim_has_a_range_holding_its_chance_ceiling_and_far_end(claim):
    lo, hi = claim_range(claim.as_dict())
    assert lo < hi
    assert lo <= claim.metric.ceiling <= hi
    if claim.metric.worst is not None:
        assert lo <= claim.metric.worst <= hi
    if CHANCE[claim.item] is not None:
        assert lo <= CHANCE[claim.item] <= hi


def test_units_and_ranges_follow_the_label():
    assert claim_unit({"label": "HiMo@2 (%)"}) == "%"
    assert claim_unit({"label": "HiMo@K (ρ)"}) == "ρ"
    assert claim_unit({"label": "PEP AUC (finest)"}) == "fraction"
    assert claim_range({"label": "HiMo@2 (%)", "ceiling": 100.0}) == (0.0, 100.0)
    assert claim_range({"label": "SSI (%)", "ceiling": 0.0}) == (0.0, math.inf)
    assert claim_range({"label": "HiMo@K (ρ)", "ceiling": 1.0}) == (-1.0, 1.0)
    assert claim_range({"label": "captions inside 2K/√c", "ceiling": 0.0}) == (0.0, 1.0)


def test_clipped_errors_stay_in_range():
    assert clipped_errors(0.02, -0.01, 0.05, (0.0, 1.0)) == pytest.approx((0.02, 0.03))
    assert clipped_errors(0.98, 0.9, 1.2, (0.0, 1.0)) == pytest.approx((0.08, 0.02))
    assert clipped_errors(0.5, 0.4, 0.6, (0.0, 1.0)) == pytest.approx((0.1, 0.1))


def test_chance_line_is_drawn_only_where_a_chance_level_exists():
    fig, ax = plt.subplots()
    assert chance_line(ax, None) is None
    line = chance_line(ax, 0.25)
    assert np.allclose(line.get_ydata(), 0.25)
    assert np.allclose(chance_line(ax, 0.5, vertical=True).get_xdata(), 0.5)
    plt.close(fig)


def test_interval_bars_clip_to_the_metric_range_and_draw_chance():
    fig, ax = plt.subplots()
    values = [
        {"mean": 0.01, "interval": [-0.02, 0.04], "per_seed": [0.0, 0.02]},
        None,
        {"mean": 0.9, "interval": [0.8, 1.1], "per_seed": [0.9]},
    ]
    interval_bars(ax, ["a", "b", "c"], values, (0.0, 1.0), chance=0.05)
    segments = [s for c in ax.collections for s in getattr(c, "get_segments", lambda: [])()]
    ys = np.concatenate([np.asarray(s)[:, 1] for s in segments])
    assert ys.min() >= 0.0 and ys.max() <= 1.0
    assert len(ax.patches) == 2  # the None slot stays empty
    assert any(np.allclose(line.get_ydata(), 0.05) for line in ax.lines)
    assert ax.get_ylim()[0] >= 0.0 and ax.get_ylim()[1] <= 1.0
    plt.close(fig)


def test_interval_bars_axis_stays_in_range_when_every_value_is_zero():
    fig, ax = plt.subplots()
    zero = {"mean": 0.0, "interval": [0.0, 0.0], "per_seed": [0.0]}
    interval_bars(ax, ["a", "b"], [zero, zero], (0.0, 1.0))
    assert ax.get_ylim()[0] == 0.0
    plt.close(fig)


def test_claims_forest_has_one_panel_per_unit_a_zero_line_and_the_paper_marker():
    claims = [
        _claim(),
        _claim(
            label="HiMo@2 (%)",
            chance=50.0,
            ceiling=100.0,
            effect=2.0,
            interval=[1.0, 3.0],
            interval_raw=[1.5, 2.5],
            smallest=1.5,
            paper_effect=62.9,
            paper_effect_here=36.1,
            verdict="reproduces",
        ),
        _claim(
            label="SSI (%)",
            better="lower",
            chance=None,
            ceiling=0.0,
            effect=-0.5,
            interval=[-1.0, 0.0],
            smallest=1.0,
            paper_effect=-6.8,
            paper_effect_here=-2.5,
            verdict="negligible",
        ),
        _claim(effect=None, interval=None, verdict="untestable"),
    ]
    fig = claims_forest(claims, title="t")
    assert len(fig.axes) == 2  # fractions, percentages
    for ax in fig.axes:
        assert any(np.allclose(line.get_xdata(), 0.0) for line in ax.lines)
    # effects are drawn in the paper's direction (lower is better -> sign flipped)
    pct = next(ax for ax in fig.axes if "percentage" in ax.get_xlabel())
    points = [line.get_xdata()[0] for line in pct.lines if line.get_marker() == "o"]
    assert sorted(points) == [0.5, 2.0]
    scattered = [c for c in pct.collections if type(c) is PathCollection]
    markers = np.concatenate([c.get_offsets()[:, 0] for c in scattered])
    # the paper's effects carried onto this study's scale (not the published ones), also
    # sign-flipped for SSI
    assert sorted(markers) == [2.5, 36.1]
    bands = [c for c in pct.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2  # the ±δ band of each claim that has one
    plt.close(fig)
    untranslated = [{**c, "paper_effect_here": None} for c in claims]
    fig = claims_forest(untranslated, title="t")
    assert not any(type(c) is PathCollection for ax in fig.axes for c in ax.collections)
    plt.close(fig)
    with pytest.raises(ValueError):
        claims_forest([])


def test_claim_rows_name_both_runs_or_the_one_run_of_an_evaluation_claim():
    assert claim_name(_claim()) == "PEP AUC: A vs B"
    same_run = _claim(variant="A", baseline="A", baseline_item="x/all", label="P (cleaned)")
    assert claim_name(same_run) == "P (cleaned): A, vs all captions"


def test_validation_curves_draw_seeds_their_mean_and_the_plateau_window():
    def curve(variant, metric, values, seed=0):
        points = [{"step": 10 * k, "value": v} for k, v in enumerate(values)]
        return {
            "study": "himo",
            "variant": variant,
            "seed": seed,
            "metric": metric,
            "points": points,
        }

    curves = [
        curve("MoLo", "long_i2t_r1", [0.2, 0.6, 0.7]),
        curve("MoLo", "long_i2t_r1", [0.2, 0.4, 0.5], seed=1),
        curve("MoLo", "short_i2t_r1", [0.5, 0.6, 0.6]),
    ]
    fig = validation_curves(curves, {"MoLo": "tab:red"}, targets={"long_i2t_r1": 0.5})
    long, short = fig.axes
    thick = [line for line in long.lines if line.get_linewidth() == 2]
    assert len(thick) == 1 and np.allclose(thick[0].get_ydata(), [0.2, 0.5, 0.6])  # the mean
    assert len([line for line in long.lines if line.get_linewidth() < 1]) == 2  # the seeds
    assert any(line.get_label() == "target" for line in long.lines)
    assert not any(line.get_label() == "target" for line in short.lines)
    (window,) = [p for p in long.patches]
    assert np.isclose(window.get_x(), 12.0)  # the last 40 % of 20 steps: the plateau's fit
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one curve"):
        validation_curves([])


def test_aperture_over_training_plots_each_variant_per_feature_set():
    def curve(variant, name, fractions):
        points = [
            {"step": 10 * k, "frac_inside_radius": f, "norm_mean": 0.5}
            for k, f in enumerate(fractions)
        ]
        return {"variant": variant, "seed": 0, "features": name, "radius": 0.63, "points": points}

    fig = aperture_over_training(
        [curve("MERU", "text", [0.2, 0.9]), curve("ARGENT", "text", [0.2, 0.0])]
    )
    (ax,) = fig.axes
    means = {
        line.get_label(): list(line.get_ydata()) for line in ax.lines if line.get_linewidth() == 2
    }
    assert means == {"MERU": [0.2, 0.9], "ARGENT": [0.2, 0.0]}
    plt.close(fig)
