"""The scale trend: the trend arms the design plans (equal samples seen, the headline's
recipe), their names, and the trend of a claim with its reading computed from the points."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from paperlib.study.decide import trend_effects
from paperlib.study.decide.error_control import trend_alpha
from paperlib.study.decide.trend import claim_trend, trend_reading, trend_settings
from paperlib.study.plan import design
from paperlib.study.plan.scales import SCALES
from tests.recipe_helpers import write_picks

# a trend over both axes: the full study's cost goes to ARGENT's runs from random weights, so
# it plans none (checked below), and the machinery is tested on a scale that asks for one
TRENDED = dataclasses.replace(
    SCALES["full"], trend_batch_factors=(0.5, 2.0, 4.0), trend_length_factors=(0.5, 2.0)
)


def test_the_full_scale_plans_no_trend_and_the_smoke_scale_one_setting_per_axis():
    assert trend_settings(SCALES["full"]) == {"batch": (1.0,), "length": (1.0,)}
    assert not [r for r in design.plan("full", searched=False) if r.stage == "trend"]
    assert trend_settings(SCALES["smoke"]) == {"batch": (1.0, 2.0), "length": (1.0, 2.0)}


def test_trend_runs_keep_the_samples_seen_and_change_nothing_else():
    scale = TRENDED
    runs = design.himo_runs(scale, 0, design.study_root("full"))
    molo = next(r for r in runs if r.variant == "MoLo")
    trend = {r.variant: r for r in design.trend_runs([molo], scale)}
    assert set(trend) == {
        "MoLo, half batch", "MoLo, double batch", "MoLo, 4× batch", "MoLo, 0.5× steps",
        "MoLo, 2× steps",
    }  # fmt: skip
    steps, batch = molo.config["train"]["steps"], molo.config["train"]["batch_size"]
    for variant, factor in (("MoLo, half batch", 0.5), ("MoLo, 4× batch", 4.0)):
        train = trend[variant].config["train"]
        assert train["batch_size"] == batch * factor and train["steps"] == steps / factor
    assert trend["MoLo, 0.5× steps"].config["train"]["steps"] == steps // 2
    four = trend["MoLo, 4× batch"].config
    assert four["optim"] == {**molo.config["optim"], "betas": list(molo.config["optim"]["betas"])}
    assert four["loss"] == molo.config["loss"] and four["data"] == molo.config["data"]
    assert all(r.stage == "trend" and r.seed == 0 for r in trend.values())
    # seed 3 is no sweep seed: no trend
    later = design.himo_runs(scale, 3, design.study_root("full"))
    assert design.trend_runs(later, scale) == []


def test_the_plan_names_each_run_once_and_refuses_two_configs_under_one_name(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    write_picks("smoke")
    plan = design.plan("smoke")
    names = [r.name for r in plan]
    assert len(names) == len(set(names))
    assert "himo/MoLo, double batch/seed0" in names  # the sweep and the trend point are one run
    assert "himo/InfoNCE (λ=0), double batch/seed0" in names
    run = plan[-1]
    other = dataclasses.replace(run, config={**run.config, "method": "clip"})
    with pytest.raises(ValueError, match="planned twice with different configs"):
        design._unique([run, other])
    with pytest.raises(ValueError, match="axis must be"):
        design.trend_label("MoLo", "depth", 2.0)


def _settled(slope, half):
    return {"slope": slope, "interval": [slope - half, slope + half], "seeds": [0, 1, 2],
            "alpha": 0.05, "df": 6}  # fmt: skip


def test_a_claims_trend_reads_each_setting_and_says_where_it_moves():
    effects = {
        ("MoLo, half batch", "B, half batch"): -0.05,
        ("MoLo", "B"): -0.03,
        ("MoLo, double batch", "B, double batch"): 0.0,
        ("MoLo, 4× batch", "B, 4× batch"): 0.02,
    }
    settings = {"batch": (0.5, 1.0, 2.0, 4.0), "length": (1.0,)}
    asked = []

    def effect_at(v, b):
        found = effects.get((v, b))
        return (
            None if found is None else {"effect": found, "interval": [found - 0.01, found + 0.01]}
        )

    def slope_of(found, half=0.01):
        asked.append(found)
        return _settled(0.023, half)

    trend = claim_trend(settings, design.trend_label, "MoLo", "B", effect_at, "higher", slope_of)
    assert [p["effect"] for p in trend["batch"]] == [-0.05, -0.03, 0.0, 0.02]
    # every setting that counts enters the slope, not only the two ends
    assert [f for f, _ in asked[0]] == [0.5, 1.0, 2.0, 4.0]
    assert asked[0][-1] == (4.0, ("MoLo, 4× batch", "B, 4× batch"))
    assert trend["reading"]["batch"].startswith("moves toward the paper's side as the batch grows")
    assert "4 settings from 0.5× to 4× the batch" in trend["reading"]["batch"]
    assert "-0.05" not in trend["reading"]["batch"]  # no point value without an interval
    assert "slope +0.023 per doubling" in trend["reading"]["batch"]
    assert trend["reading"]["length"].startswith("not measured")
    lower = claim_trend(settings, design.trend_label, "MoLo", "B", effect_at, "lower", slope_of)
    assert lower["reading"]["batch"].startswith("moves away from the paper's side")
    wide = claim_trend(settings, design.trend_label, "MoLo", "B", effect_at, "higher",
                       lambda f: slope_of(f, half=0.08))  # fmt: skip
    assert wide["reading"]["batch"].startswith("no change established as the batch grows")
    assert claim_trend({"batch": (1.0,), "length": (1.0,)}, design.trend_label, "MoLo", "B",
                       effect_at, "higher", slope_of) is None  # fmt: skip


def test_a_point_whose_arms_forgot_the_base_is_shown_but_not_read():
    points = [
        {"factor": 0.5, "effect": -0.05, "interval": [-0.06, -0.04]},
        {"factor": 1.0, "effect": -0.03, "interval": [-0.04, -0.02]},
        {"factor": 4.0, "effect": 0.4, "interval": [0.3, 0.5], "untestable": "forgotten"},
    ]
    reading = trend_reading(points, "batch", "higher", _settled(0.02, 0.01))
    assert "2 settings from 0.5× to 1× the batch" in reading  # the 4× point does not count
    assert reading.endswith("(4× left out: an arm forgot its base or did not learn)")
    unknown = trend_reading(points, "batch", "higher", {"slope": 0.02, "interval": None, "df": 1})
    assert unknown.startswith("not estimable: 1 residual degree(s) of freedom for the slope")
    assert trend_reading(points, "batch", "higher", None).startswith("not estimable: 0")
    settled = trend_reading(points, "batch", "higher", _settled(0.02, 0.01))
    assert "slope +0.02 per doubling on seeds 0, 1, 2, 95.000% interval [+0.01, +0.03]" in settled
    # the batch axis holds the samples seen, the length axis the batch
    assert settled.startswith("moves toward the paper's side as the batch grows at equal samples")
    lengths = trend_reading(points, "length", "higher", _settled(0.02, 0.01))
    assert lengths.startswith("moves toward the paper's side as the length grows (")
    # at a trend slope's level of the error statement: 10 % of 0.05 over 20 slopes
    shared = trend_reading(points, "batch", "higher", {**_settled(0.02, 0.01), "alpha": 0.00025})
    assert "on seeds 0, 1, 2, 99.975% interval [+0.01, +0.03]" in shared
    assert trend_alpha(20) == pytest.approx(0.05 * 0.1 / 20)


def test_trend_reading_of_a_flat_or_missing_trend():
    flat = [{"factor": 1.0, "effect": 0.01}, {"factor": 2.0, "effect": 0.01}]
    reading = trend_reading(flat, "length", "higher", _settled(0.0, 0.02))
    assert reading.startswith("no change established as the length grows")
    missing = [{"factor": 1.0, "effect": 0.01}, {"factor": 2.0, "effect": None}]
    assert trend_reading(missing, "length", "higher", None) == (
        "not measured: 1 of 2 length settings have an effect that counts"
    )
    assert trend_settings(TRENDED) == {
        "batch": (0.5, 1.0, 2.0, 4.0),
        "length": (0.5, 1.0, 2.0),
    }


def _trend_points(slope, seeds=(0, 1, 2), factors=(0.5, 1.0, 2.0, 4.0), items=60, seed=0):
    """Per seed, (factor, per-item effect row) with run means on a line of ``slope`` over
    log2 of the factor, a level of the seed's own and noise per run and item."""
    rng = np.random.default_rng(seed)
    hard = rng.normal(0.0, 0.3, size=items)  # how the item moves the effect, every run alike
    return {
        s: [(f, rng.normal(0.0, 0.05) + 0.2 * s + slope * np.log2(f) + hard
             + rng.normal(0.0, 0.2, size=items)) for f in factors]
        for s in seeds
    }  # fmt: skip


def test_the_slope_is_the_least_squares_fit_with_one_intercept_per_seed():
    from paperlib.study.decide.trend_slope import slope_by_least_squares, slope_estimate

    points = _trend_points(0.03)
    points[2] = points[2][:3]  # a seed that misses a setting still counts
    fast, plain = slope_estimate(points), slope_by_least_squares(points)
    assert fast.mean == pytest.approx(plain["slope"], abs=1e-12)
    assert fast.seed_term == pytest.approx(plain["variance"], rel=1e-9)
    assert fast.seed_df == plain["df"] == 4 + 4 + 3 - 3 - 1
    assert fast.item_term > 0


def test_the_slope_interval_covers_the_true_slope_and_needs_two_residual_df():
    from paperlib.study.decide.trend_slope import slope_estimate

    hits = 0
    for k in range(200):
        low, high = slope_estimate(_trend_points(0.03, seed=k)).interval()
        hits += low < 0.03 < high
    assert hits >= 0.93 * 200  # a 95 % interval that errs wide, never narrow
    two = {s: p[:2] for s, p in _trend_points(0.03, seeds=(0, 1)).items()}  # 4 − 2 − 1 = 1 df
    assert slope_estimate(two) is None
    one = {0: _trend_points(0.03)[0][:3]}  # one seed, three points: one residual df
    assert slope_estimate(one) is None
    assert slope_estimate({0: _trend_points(0.03)[0][:1]}) is None  # no seed with two points


def test_the_slope_of_a_claims_settings_reads_every_sweep_seed(monkeypatch):
    """The decided slope takes each setting's per-item effects on every seed it keeps and
    fits them together; too few residual degrees of freedom leave no interval."""
    from paperlib.study.decide.trend_slope import slope_estimate
    from paperlib.study.plan.claims import CLAIMS

    claim = next(c for c in CLAIMS if c.headline and c.study == "himo")
    points = _trend_points(0.05)
    tables = {f: ([s for s in points], np.stack([dict(points[s])[f] for s in points]))
              for f in (0.5, 1.0, 2.0, 4.0)}  # fmt: skip

    def table(scale_name, claim_, runs, variant, baseline):
        seeds, values = tables[float(variant)]
        return trend_effects.TrendArms(claim_, seeds, values, np.zeros_like(values), 0)

    monkeypatch.setattr(trend_effects, "trend_arms", table)
    settings = [(f, (str(f), str(f))) for f in (0.5, 1.0, 2.0, 4.0)]
    got = trend_effects.trend_slope("full", claim, [], settings)
    assert got["slope"] == pytest.approx(slope_estimate(points).mean)
    assert got["seeds"] == [0, 1, 2] and got["df"] == 12 - 3 - 1
    low, high = got["interval"]
    assert low < got["slope"] < high and got["alpha"] < 0.05
    short = trend_effects.trend_slope("full", claim, [], settings[:1])  # one setting: no line
    assert short["interval"] is None and short["df"] == 0


def _claim_with_trend(better="higher"):
    points = [
        {"factor": 0.5, "effect": -0.02, "interval": [-0.03, -0.01]},
        {"factor": 1.0, "effect": 0.01, "interval": [0.0, 0.02]},
        {"factor": 2.0, "effect": None},
    ]
    return {
        "label": "R@1", "variant": "A", "baseline": "B", "better": better, "smallest": 0.01,
        "trend": {"batch": points, "length": points[1:2],
                  "reading": {"batch": "moves toward", "length": "not measured"}},
    }  # fmt: skip


def test_the_trend_slope_in_smallest_effect_units_with_the_papers_direction_up():
    from paperlib.figures import trend_slopes_in_smallest_units

    claim = _claim_with_trend()
    claim["trend"]["slope"] = {
        "batch": {"slope": 0.02, "interval": [0.01, 0.03]},
        "length": {"slope": 0.05, "interval": None},
    }
    assert np.allclose(trend_slopes_in_smallest_units(claim, "batch"), (2.0, 1.0, 3.0))
    lower = {**claim, "better": "lower"}
    assert np.allclose(trend_slopes_in_smallest_units(lower, "batch"), (-2.0, -3.0, -1.0))
    assert trend_slopes_in_smallest_units(claim, "length") is None  # no value without interval
    assert trend_slopes_in_smallest_units(_claim_with_trend(), "batch") is None


def test_the_trend_table_shows_each_setting_of_one_axis_and_the_readings_apart():
    from paperlib.study.report.tables import trend_readings, trend_table

    claims = [_claim_with_trend(), {"label": "x", "variant": "C", "baseline": "D"}]
    table = trend_table(claims, "batch")
    row = table.loc["R@1: A vs B"]
    assert row["batch ×0.5"] == "-0.02 [-0.03, -0.01]" and row["batch ×2"] == "–"
    assert list(table.columns) == ["batch ×0.5", "batch ×1", "batch ×2"] and len(table) == 1
    assert list(trend_table(claims, "length").columns) == ["length ×1"]
    assert trend_readings(claims) == {
        "R@1: A vs B": {"batch": "moves toward", "length": "not measured"}
    }
    with pytest.raises(ValueError, match="'width'"):
        trend_table(claims, "width")


def test_the_trend_table_names_batch_sizes_marks_uncounted_points_and_hide_counts():
    from paperlib.study.report.tables import NOT_COUNTED, hide_components, trend_table

    points = [
        {"factor": 0.5, "effect": 0.01, "interval": None, "batch_size": 32,
         "hide_m": {"variant": 3.25, "baseline": None}},
        {"factor": 1.0, "effect": 0.02, "interval": [0.01, 0.03], "batch_size": 64,
         "hide_m": {"variant": 4.5, "baseline": None}, "untestable": "the base is forgotten"},
    ]  # fmt: skip
    claim = {"label": "R@1", "variant": "MoLo", "baseline": "B", "trend": {"batch": points}}
    row = trend_table([claim], "batch").loc["R@1: MoLo vs B"]
    assert list(row.index) == ["batch 32", "batch 64"]
    assert row["batch 32"] == "no interval (0 seed df)"  # no value without an interval
    assert row["batch 64"] == "+0.02 [+0.01, +0.03]" + NOT_COUNTED
    other = {**claim, "variant": "C", "trend": {"batch": [{**points[0], "batch_size": 16}]}}
    assert "batch ×0.5" in trend_table([claim, other], "batch").columns  # sizes differ: factor
    counts = hide_components([claim])
    assert counts.loc["MoLo"].to_dict() == {"batch 32": "3.2", "batch 64": "4.5"}
    assert "B" not in counts.index
