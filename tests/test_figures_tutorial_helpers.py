"""The helpers tutorials 02, 03 and 05 call: the training-log analyses against a computation by
hand, each plot helper on small synthetic inputs (its axes and the artists read back), and the
check that a figure shows the claims' own numbers."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from paperlib import figures  # noqa: E402
from paperlib.analysis import hyperbolic  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def log(steps, values, key="n"):
    return [{"step": s, key: v} for s, v in zip(steps, values)] + [{"step": 999, "loss": 1.0}]


# two variants on seeds 0 and 1, one more variant on seed 1 only; first diagnostic at step 10
LOGS = {
    "A": {0: log([10, 20, 30], [1.0, 0.9, 0.7]), 1: log([10, 20, 30], [2.0, 2.1, 2.0])},
    "B": {0: log([10, 20, 30], [1.2, 1.2, 1.3]), 1: log([10, 20, 30], [2.3, 2.4, 2.6])},
    "C": {1: log([10, 20, 30], [1.9, 1.5, 1.4])},
}


# ------------------------------------------------------------------ analyses


def test_common_start_is_the_per_seed_mean_and_the_largest_within_seed_range():
    start = hyperbolic.common_start(LOGS, "n")
    seed0, seed1 = np.array([1.0, 1.2]), np.array([2.0, 2.3, 1.9])
    assert start.step == 10
    assert start.reference == pytest.approx({0: seed0.mean(), 1: seed1.mean()})
    assert start.spread == pytest.approx(max(np.ptp(seed0), np.ptp(seed1)))


def test_common_start_refuses_runs_first_logged_at_different_steps():
    logs = {"A": {0: log([10, 20], [1.0, 1.0])}, "B": {0: log([20, 30], [1.0, 1.0])}}
    with pytest.raises(ValueError, match="different steps"):
        hyperbolic.common_start(logs, "n")
    with pytest.raises(ValueError, match="at least one run"):
        hyperbolic.common_start({}, "n")


def test_drift_from_start_is_the_seed_mean_of_value_minus_its_seed_reference():
    start = hyperbolic.common_start(LOGS, "n")
    drift = hyperbolic.drift_from_start(LOGS["A"], "n", start)
    values = np.array([[1.0, 0.9, 0.7], [2.0, 2.1, 2.0]])
    reference = np.array([np.mean([1.0, 1.2]), np.mean([2.0, 2.3, 1.9])])
    np.testing.assert_allclose(drift.steps, [10, 20, 30])
    np.testing.assert_allclose(drift.relative, (values - reference[:, None]).mean(0))
    assert drift.final == pytest.approx(values[:, -1].mean())
    assert drift.last_step == 30
    assert drift.moved == pytest.approx((values[:, -1] - reference).mean())


def test_drift_direction_reads_a_drift_against_the_spread():
    start = hyperbolic.CommonStart(step=10, reference={0: 1.0}, spread=0.1)

    def drift(steps, moved):
        return hyperbolic.Drift(np.array(steps), np.array([0.0, moved])[-len(steps) :], 1.0)

    assert hyperbolic.drift_direction(drift([10], -5.0), start) == "unmeasured"
    assert hyperbolic.drift_direction(drift([10, 20], 0.1), start) == "within spread"
    assert hyperbolic.drift_direction(drift([10, 20], -0.1), start) == "within spread"
    assert hyperbolic.drift_direction(drift([10, 20], -0.2), start) == "inward"
    assert hyperbolic.drift_direction(drift([10, 20], 0.2), start) == "outward"


# ------------------------------------------------------------------ claims check


def value(mean, interval=(0.0, 1.0), seeds=(0, 1)):
    return {"mean": mean, "interval": list(interval), "seeds": list(seeds)}


CLAIM = {
    "claim": "c1",
    "item": "m",
    "variant": "long name",
    "baseline": "B",
    "seeds": [0, 1],
    "variant_value": value(0.5, (0.4, 0.6)),
    "baseline_value": value(0.3, (0.2, 0.4)),
}


def test_values_that_match_the_claims_pass_and_are_counted():
    drawn = {"m": {"A": value(0.5, (0.4, 0.6)), "B": value(0.3, (0.2, 0.4))}}
    count = figures.assert_values_match_claims([CLAIM], drawn, {"long name": "A"}, intervals=True)
    assert count == 2
    other_seeds = {"m": {"A": value(0.9, seeds=(0, 1, 2)), "B": None}}  # nothing comparable
    assert figures.assert_values_match_claims([CLAIM], other_seeds, {"long name": "A"}) == 0
    assert figures.assert_values_match_claims([CLAIM], {"other item": {"A": value(0.9)}}) == 0


def test_a_drawn_value_that_differs_from_the_claim_raises():
    drawn = {"m": {"A": value(0.5, (0.4, 0.6)), "B": value(0.31, (0.2, 0.4))}}
    with pytest.raises(AssertionError, match="c1.*B"):
        figures.assert_values_match_claims([CLAIM], drawn, {"long name": "A"})
    drawn = {"m": {"A": value(0.5, (0.4, 0.7)), "B": value(0.3, (0.2, 0.4))}}
    assert figures.assert_values_match_claims([CLAIM], drawn, {"long name": "A"}) == 2
    with pytest.raises(AssertionError, match="interval"):
        figures.assert_values_match_claims([CLAIM], drawn, {"long name": "A"}, intervals=True)


def test_a_baseline_on_another_item_is_read_from_that_item():
    claim = {**CLAIM, "variant": "B", "baseline_item": "m_before"}
    drawn = {"m": {"B": value(0.5)}, "m_before": {"B": value(0.3)}}
    assert figures.assert_values_match_claims([claim], drawn) == 2
    drawn["m"]["B"] = value(0.3)  # the baseline's value is not the variant's item
    with pytest.raises(AssertionError):
        figures.assert_values_match_claims([claim], drawn)


# ------------------------------------------------------------------ tutorial 02 figures


def labels(ax):
    return ax.get_legend_handles_labels()[1]


def test_counterexample_panels():
    heights = np.linspace(0, 3, 7)
    after, margin = 1 - heights / 3, 0.5 - heights / 3
    fig = figures.counterexample_panels(heights, after, margin, 0.6, 1.5)
    ax_s, ax_m = fig.axes
    np.testing.assert_allclose(ax_s.lines[0].get_ydata(), after)
    np.testing.assert_allclose(ax_m.lines[0].get_ydata(), margin)
    assert labels(ax_s) == ["$s_2$ (core + increment)", "$s_1$ (core alone)"]
    assert [len(ax.lines) for ax in fig.axes] == [3, 3]  # curve, reference, crossing


def test_histogram_helpers_draw_one_outline_per_model():
    rng = np.random.default_rng(0)
    samples = {"a": rng.normal(size=50), "b": rng.normal(size=50)}
    colors = {"a": "C0", "b": "C1"}
    fig = figures.full_vs_component_histogram(samples, colors, "t")
    (ax,) = fig.axes
    assert len(ax.patches) == 2 and labels(ax) == ["a", "b"]
    assert ax.get_title() == "t"
    fig = figures.rho_histogram(samples, {"a": 0.25, "b": -0.5}, 0.0, colors, "rho")
    (ax,) = fig.axes
    assert labels(ax) == ["a (HiMo@K = +0.25)", "b (HiMo@K = -0.50)", "chance (ρ = 0)"]
    counts = np.histogram(samples["a"], bins=np.linspace(-1, 1, 21))[0]
    outline = ax.patches[0].get_xy()[:, 1]
    assert outline.max() == counts.max()


def test_segment_score_panels_and_k_segment_case():
    curve = {"k": np.array([1, 2, 3]), "mean": np.array([0.2, 0.3, 0.4]), "sem": np.full(3, 0.01)}
    rel = {**curve, "mean": curve["mean"] - 0.2}
    colors = {"a": "C0", "b": "C1"}
    fig = figures.segment_score_panels(
        {"a": curve, "b": curve}, {"a": rel, "b": rel}, {"a": curve, "b": curve}, colors, "seed 0"
    )
    ax_abs, ax_rel = fig.axes
    assert labels(ax_abs) == ["a", "b", "chance: another image's prefixes"]
    assert labels(ax_rel) == ["a", "b", "no change"]
    np.testing.assert_allclose(ax_rel.lines[0].get_ydata(), rel["mean"])
    assert ax_rel.get_title() == "rise over the first sentence (seed 0)"
    fig = figures.k_segment_case({"a": np.arange(4.0), "b": np.ones(4)}, colors, "case")
    (ax,) = fig.axes
    assert ax.get_xlabel() == "segment k of 4" and labels(ax) == ["a", "b"]
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [1, 2, 3, 4])


def test_model_chance_ticks_mark_a_models_own_chance_over_its_bar():
    fig, ax = plt.subplots()
    ax.bar([0, 1, 2], [50, 60, 70])
    figures.model_chance_ticks(ax, ["a", "b", "c"], {"b": 45.0, "z": 1.0})
    (ticks,) = ax.collections
    (segment,) = ticks.get_segments()
    np.testing.assert_allclose(segment, [[0.6, 45.0], [1.4, 45.0]])
    assert ticks.get_label() == "chance of this model's reads"


# ------------------------------------------------------------------ tutorial 03 figures


def test_half_aperture_curves_split_each_curve_at_its_radius():
    norms = np.linspace(0.01, 1.0, 100)
    apertures = {1.0: np.minimum(0.2 / norms, 1.5), 0.5: np.minimum(0.3 / norms, 1.5)}
    fig = figures.half_aperture_curves(norms, apertures, {1.0: 0.2, 0.5: 0.3}, 0.1)
    (ax,) = fig.axes
    assert len(ax.lines) == 6  # per curvature: outside, inside (dotted), the radius
    assert labels(ax) == ["c = 1", "c = 0.5"]
    assert ax.lines[0].get_xdata().min() >= 0.2 and ax.lines[1].get_xdata().max() < 0.2
    assert "K = 0.1" in ax.get_title()


def test_aperture_gradient_panels_leave_out_zero_gradients_and_mark_the_peak():
    zoom = np.linspace(0.1, 0.4, 10)
    gap = np.array([-1e-3, 1e-6, 1e-4, 1e-2])
    grad = np.array([0.0, -50.0, -80.0, -5.0])
    fig = figures.aperture_gradient_panels(zoom, {"exact": (zoom, gap, grad)}, 0.2, 1.0)
    ax_w, ax_g = fig.axes
    curve, dot = ax_g.lines
    np.testing.assert_allclose(curve.get_xdata(), gap[1:])
    assert (dot.get_xdata()[0], dot.get_ydata()[0]) == (1e-4, 80.0)
    assert labels(ax_w) == ["exact", "undefined aperture"]


def test_ray_and_adaent_panels():
    norms = np.linspace(0.01, 0.6, 20)
    fig = figures.ray_panels(
        norms, {"φ": norms, "ω": 1 - norms}, {"Ent": norms, "Ada": -norms}, 0.3, 0.2
    )
    ax_a, ax_d = fig.axes
    assert labels(ax_a) == ["φ", "ω"]
    assert labels(ax_d) == ["Ent", "Ada", "ARGENT's stationary norm"]
    assert ax_d.get_ylim() == (-3, 3)
    angles = np.linspace(0, 3, 5)
    fig = figures.adaent_panels(
        angles, {0.1: angles, 0.5: angles}, {0.1: angles, 0.6: angles}, 0.2,
        np.linspace(0, 5, 6), 1 - np.exp(-np.linspace(0, 5, 6)), 1.0,
    )  # fmt: skip
    ax_l, ax_h = fig.axes
    assert labels(ax_l) == [
        "AdaEnt Huber, β = 0.1 (any ‖x‖)",
        "AdaEnt Huber, β = 0.5 (any ‖x‖)",
        "MERU hinge, ‖x‖ = 0.10 (inside)",
        "MERU hinge, ‖x‖ = 0.60 (outside)",
    ]
    assert [line.get_linestyle() for line in ax_l.lines[:2]] == ["-", "--"]
    assert len(ax_h.lines) == 2


def test_variant_styles():
    styles = figures.variant_styles(["ARGENT", "ARGENT, Ent", "MERU"], {"ARGENT": "C0",
                                    "ARGENT, Ent": "C6", "MERU": "C3"})  # fmt: skip
    assert styles == {
        "ARGENT": {"color": "C0", "lw": 2.2, "ls": "-"},
        "ARGENT, Ent": {"color": "C6", "lw": 1.4, "ls": "--"},
        "MERU": {"color": "C3", "lw": 1.4, "ls": "-"},
    }


def test_aperture_training_and_box_norm_panels():
    start = hyperbolic.common_start(LOGS, "n")
    stacked = {v: [hyperbolic.stack_seeds(list(LOGS[v].values()), "n")] * 3 for v in LOGS}
    drifts = {v: hyperbolic.drift_from_start(LOGS[v], "n", start) for v in LOGS}
    radius = hyperbolic.stack_seeds([log([10, 20, 30], [0.2, 0.2, 0.2])], "n")
    styles = figures.variant_styles(LOGS, {"A": "C0", "B": "C1", "C": "C2"}, headline="A")
    fig = figures.aperture_training_panels(stacked, radius, drifts, start, styles, "title")
    assert len(fig.axes) == 4
    assert [ax.get_title() for ax in fig.axes[:3]] == [t for _, t, _ in figures.APERTURE_PANELS]
    np.testing.assert_allclose(fig.axes[-1].lines[0].get_ydata(), drifts["A"].relative)
    band = fig.axes[-1].patches[0]  # ± the spread at the first logged step
    assert (band.get_y(), band.get_y() + band.get_height()) == pytest.approx(
        (-start.spread, start.spread)
    )
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["A (2 seed(s))", "B (2 seed(s))", "C (1 seed(s))", figures.RADIUS_LABEL]
    boxes = {v: stacked[v][:2] for v in ("A", "B")}
    fig = figures.box_norm_panels(boxes, radius, styles, "full study")
    assert [ax.get_title() for ax in fig.axes] == [
        "box-phrase norm (full study)",
        "box-crop norm (full study)",
    ]
    assert [len(ax.lines) for ax in fig.axes] == [3, 3]  # two variants and the radius
