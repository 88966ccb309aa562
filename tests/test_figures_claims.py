"""Figures of claims.json: metric units and ranges, clipped intervals, chance lines, the forest."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from paperlib.figures import (
    chance_line,
    claim_range,
    claim_row,
    claim_unit,
    claims_forest,
    clipped_errors,
    interval_bars,
    learning_curves,
)
from paperlib.tables.claims import CLAIMS


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
def test_every_declared_claim_has_a_range_holding_its_chance_and_ceiling(claim):
    lo, hi = claim_range(claim.as_dict())
    assert lo < hi
    assert lo <= claim.ceiling <= hi
    if claim.chance is not None:
        assert lo <= claim.chance_for(1000) <= hi


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


def test_claims_forest_has_one_panel_per_unit_and_a_zero_line():
    claims = [
        _claim(),
        _claim(
            label="HiMo@2 (%)",
            chance=50.0,
            ceiling=100.0,
            effect=2.0,
            interval=[1.0, 3.0],
            verdict="reproduces",
        ),
        _claim(
            label="SSI (%)",
            better="lower",
            chance=None,
            ceiling=0.0,
            effect=-0.5,
            interval=[-1.0, 0.0],
            verdict="reproduces",
        ),
        _claim(effect=None, interval=None, verdict="untestable"),
    ]
    fig = claims_forest(claims, title="t")
    assert len(fig.axes) == 2  # fractions, percentages
    for ax in fig.axes:
        assert any(np.allclose(line.get_xdata(), 0.0) for line in ax.lines)
    # the SSI effect is drawn in the paper's direction (lower is better -> sign flipped)
    pct = next(ax for ax in fig.axes if "percentage" in ax.get_xlabel())
    xs = [line.get_xdata()[0] for line in pct.lines if len(line.get_xdata()) == 1]
    assert 0.5 in xs and 2.0 in xs
    plt.close(fig)
    with pytest.raises(ValueError):
        claims_forest([])


def test_claim_rows_name_both_runs_or_the_one_run_of_an_evaluation_claim():
    assert claim_row(_claim()) == "PEP AUC: A vs B"
    same_run = _claim(variant="A", baseline="A", baseline_item="x/all", label="P (cleaned)")
    assert claim_row(same_run) == "P (cleaned): A, vs all captions"


def test_learning_curves_draw_each_recipe_with_its_target_and_chance():
    def curve(recipe, metric, item, values):
        points = [
            {"step": 10 * (k + 1), "cpu_seconds": 5.0 * (k + 1), "value": v}
            for k, v in enumerate(values)
        ]
        return {"recipe": recipe, "metric": metric, "item": item, "points": points}

    curves = [
        curve("a", "zero-shot", "zs", [0.25, 0.4]),
        curve("b", "zero-shot", "zs", [0.3, 0.35]),
        curve("a", "long R@1", "long", [0.1, 0.2, 0.25]),
    ]
    fig = learning_curves(curves, targets={"zs": 0.9}, chances={"zs": 0.25, "long": 0.001})
    zs, long = fig.axes
    drawn = [line for line in zs.lines if len(line.get_xdata()) == 2 and line.get_marker() == "o"]
    assert [list(line.get_ydata()) for line in drawn] == [[0.25, 0.4], [0.3, 0.35]]
    assert list(drawn[0].get_xdata()) == [5.0, 10.0]
    levels = {line.get_label(): line.get_ydata()[0] for line in zs.lines}
    assert levels["target"] == 0.9 and levels["chance"] == 0.25
    assert "target" not in {line.get_label() for line in long.lines}
    assert zs.get_ylim() == (0.0, 1.0)
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one curve"):
        learning_curves([], {}, {})
