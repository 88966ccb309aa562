"""The tutorials' plot helpers draw what they are given (values read back from the artists)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from paperlib import figures  # noqa: E402
from paperlib.analysis import hyperbolic  # noqa: E402
from paperlib.analysis.hyperbolic import LEVEL_NAMES, DiscView  # noqa: E402
from paperlib.data.world import World  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_sample_strip_and_similarity_heatmap():
    samples = [World(seed=0, image_size=32).sample(i) for i in range(3)]
    fig = figures.sample_strip(samples, title_width=1000)
    assert [ax.get_title() for ax in fig.axes] == [s.short_caption for s in samples]
    sim = torch.tensor([[0.1, 0.2], [0.3, 0.4]])
    fig = figures.similarity_heatmap(sim, "t")
    np.testing.assert_allclose(fig.axes[0].collections[0].get_array().reshape(2, 2), sim.numpy())


def test_similarity_heatmaps_give_each_matrix_its_panel_title_and_colour_scale():
    sims = {"untrained": torch.tensor([[0.9, 0.8], [0.85, 0.95]]), "base": np.eye(3) * 0.5}
    fig = figures.similarity_heatmaps(sims)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["untrained", "base"]
    for ax, sim in zip(panels, sims.values()):
        shown, (mesh,) = np.asarray(sim), ax.collections
        np.testing.assert_allclose(mesh.get_array().reshape(shown.shape), shown)
        assert mesh.get_clim() == pytest.approx((shown.min(), shown.max()))
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("caption index", "image index")
    bars = [ax for ax in fig.axes if not ax.get_title()]  # one colour bar per panel
    assert [ax.get_ylabel() for ax in bars] == ["cosine similarity"] * 2


def test_spectrum_panels_star_the_kept_m():
    r = np.array([0.5, 0.3, 0.15, 0.05])
    fig = figures.spectrum_panels({"a": r}, {"a": 2}, 0.8, {"a": "C0"})
    stars = [line for line in fig.axes[1].lines if line.get_marker() == "*"]
    assert [(float(s.get_xdata()[0]), float(s.get_ydata()[0])) for s in stars] == [(2.0, 0.8)]
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), r)


def test_paired_bars_and_eta_heatmaps():
    fig, ax = plt.subplots()
    figures.paired_bars(ax, ["x", "y"], {"kept": [0.5, 0.1], "mixed": [0.2, 0.3]}, [0.01, 0.02])
    heights = [round(p.get_height(), 6) for p in ax.patches]
    assert heights == [0.5, 0.1, 0.2, 0.3]
    assert ax.patches[2].get_facecolor()[:3] == (0.0, 0.0, 0.0)  # "mixed" in black
    eta = {"m": np.array([[0.1, 0.9], [0.4, 0.2]])}
    fig = figures.eta_heatmaps(eta, ["f1", "f2"])
    assert [t.get_text() for t in fig.axes[0].texts] == ["0.10", "0.90", "0.40", "0.20"]
    (mesh,) = fig.axes[0].collections
    np.testing.assert_allclose(mesh.get_array().reshape(2, 2), eta["m"])
    assert mesh.get_clim() == (0, 1)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["f1", "f2"]
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["PC1", "PC2"]


def test_batch_size_panels_plot_means_and_spreads():
    sweep = {"sizes": np.array([4, 8]), "m": np.array([[1, 3], [2, 2]]),
             "angle": np.array([[40.0, 20.0], [10.0, 10.0]]), "m_ref": np.array(2)}  # fmt: skip
    fig = figures.batch_size_panels({"a": sweep}, 0.9, {"a": "C0"})
    np.testing.assert_allclose(fig.axes[0].lines[0].get_ydata(), [2.0, 2.0])
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), [30.0, 10.0])


def test_kept_dropped_and_batch_content_panels():
    split = {"A": ([0.8, 0.1], [0.05, 0.3]), "B": ([0.7, 0.2], [0.1, 0.25])}
    fig = figures.kept_dropped_panels(split, ["f", "g"], [0.01, 0.02], {"A": 3, "B": 4})
    assert [ax.get_title() for ax in fig.axes] == ["A (m = 3)", "B (m = 4)"]
    heights = [round(p.get_height(), 6) for p in fig.axes[0].patches]
    assert heights == [0.8, 0.1, 0.05, 0.3]
    single = pd.DataFrame({"f": [0.2, 0.4], "g": [0.1, 0.0]}, index=["x", "y"])
    angles = {"x": np.array([10.0, 30.0]), "y": np.array([20.0, 40.0])}
    fig = figures.batch_content_panels(single, pd.Series({"f": 0.3, "g": 0.05}), angles, 15.0, 70.0)
    left, right = fig.axes
    assert [round(p.get_height(), 6) for p in left.patches] == [0.2, 0.1, 0.4, 0.0, 0.3, 0.05]
    assert left.patches[4].get_facecolor()[:3] == (0.0, 0.0, 0.0)  # the mixed batches in black
    flat = [line for line in right.lines if len(set(line.get_ydata())) == 1]
    assert sorted(float(line.get_ydata()[0]) for line in flat) == [15.0, 70.0]


def test_disc_grid_and_crop_weights():
    level = torch.tensor([0, 1, 2, 3, 4])
    points = torch.tensor([[0.0, 0.1], [0.1, 0.0], [0.2, 0.1], [0.0, 0.3], [0.5, 0.5]])
    view = DiscView(points, torch.zeros(2), 0.1, 0.05)
    fig = figures.disc_grid({"M": {"HoroPCA": view, "UMAP": view}}, {"M": level})
    assert [ax.get_title() for ax in fig.axes[:2]] == [
        "M — HoroPCA\ndistortion 0.100",
        "M — UMAP\ndistortion 0.100 (0.050 rescaled)",
    ]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == [*LEVEL_NAMES, "origin O of the model"]  # general → specific, then O
    weights = {"M": {"object crop": (torch.tensor([1.0, 2.0]), torch.tensor([0.6, 0.8]))}}
    fig = figures.crop_weight_ecdfs(weights)
    assert [len(ax.lines) for ax in fig.axes] == [1, 1]


def test_norm_boxplots_keep_every_group_readable_beside_a_far_group():
    """One model's group far out (MERU's object crops, norms in the tens and hundreds) must not
    flatten the other groups: each model has its own log-scale norm axis."""
    groups = {
        "A": {"a": torch.tensor([0.2, 0.4]), "b": torch.tensor([1.0, 1.2])},
        "M": {"a": torch.tensor([0.8, 0.9, 1.0]), "b": torch.tensor([20.0, 40.0, 300.0])},
    }
    fig = figures.norm_boxplots(groups, {"A": 0.63, "M": 0.2}, "title")
    fig.canvas.draw()
    assert [ax.get_title() for ax in fig.axes] == ["A", "M"]
    for ax, radius in zip(fig.axes, (0.63, 0.2)):
        assert ax.get_yscale() == "log"
        assert radius in [line.get_ydata()[0] for line in ax.lines]
        to_axes = ax.transData + ax.transAxes.inverted()
        height = to_axes.transform([(1, 1.0)])[0, 1] - to_axes.transform([(1, 0.5)])[0, 1]
        assert height > 0.05, (ax.get_title(), height)  # norms 0.5 → 1: ≥ 5 % of the axis
    assert fig.axes[0].get_ylim()[1] < 10  # A's axis is not stretched by M's far group


def test_mean_and_band_plots_the_seed_mean_and_a_clipped_band():
    logs = [
        [{"step": 1, "m": 0.1}, {"step": 2, "m": 0.9}],
        [{"step": 1, "m": 0.3}, {"step": 2, "m": 0.5}],
    ]
    summary = hyperbolic.stack_seeds(logs, "m")
    fig, ax = plt.subplots()
    figures.mean_and_band(ax, summary, "MERU", (0.0, 0.8), color="C1")
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), [0.2, 0.7])
    assert line.get_label() == "MERU (2 seed(s))"
    band = ax.collections[0].get_paths()[0].vertices[:, 1]
    std = np.std([[0.1, 0.9], [0.3, 0.5]], axis=0, ddof=1)
    assert band.max() == pytest.approx(0.8)  # 0.7 + 0.28 clipped to the upper bound
    assert band.min() == pytest.approx(0.2 - std[0])
    one = hyperbolic.stack_seeds(logs[:1], "m")
    fig, ax = plt.subplots()
    figures.mean_and_band(ax, one, "MERU", color="C1")
    assert not ax.collections  # one seed: no spread to draw


def test_loss_sentence_reads_the_first_and_last_logged_loss():
    from paperlib.figures import loss_sentence

    log = [{"step": 0, "val": {}}, {"step": 1, "loss": 2.0}, {"step": 5, "loss": 0.5}]
    assert loss_sentence(log, "run/log.jsonl") == (
        "The loss fell: 2 at step 1, 0.5 at step 5 (2 logged steps, `run/log.jsonl`)."
    )
    rising = [{"step": 1, "loss": 1.0}, {"step": 2, "loss": 1.5}]
    assert loss_sentence(rising, "x").startswith("The loss did not fall: 1 at step 1, 1.5")


def test_curve_panels_draw_each_series_and_its_references():
    lines = {"p": {"a": ([1, 2], [0.1, 0.2]), "b": ([1, 2], [0.3, 0.4])}, "q": {"a": ([1], [5.0])}}
    refs = {"p": {"radius": ([1, 2], [0.5, 0.5])}}
    fig = figures.curve_panels(lines, {"p": "share", "q": "norm"}, refs, {"b": "C5"})
    p, q = fig.axes
    assert [line.get_label() for line in p.lines] == ["a", "b", "radius"]
    np.testing.assert_allclose(p.lines[1].get_ydata(), [0.3, 0.4])
    assert p.lines[1].get_color() == "C5" and p.lines[0].get_color() == q.lines[0].get_color()
    assert p.lines[2].get_linestyle() == ":" and (p.get_title(), q.get_ylabel()) == ("p", "norm")
