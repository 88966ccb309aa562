"""Analyses behind tutorials 03 and 04 (paperlib.analysis.hyperbolic), against closed forms,
finite differences, brute force and naive loops."""

from __future__ import annotations

import json
import math

import matplotlib
import numpy as np
import pytest
import torch
from scipy.optimize import minimize_scalar

from paperlib.analysis import hyperbolic as A
from paperlib.figures import draw_disc
from paperlib.geometry import horopca as H
from paperlib.geometry import lorentz as L
from paperlib.losses.entailment import adaent_loss, entailment_loss, norm_regularizer
from paperlib.study import paths
from paperlib.study.results import reader

matplotlib.use("Agg")
F64 = torch.float64


# ------------------------------------------------------------------ aperture and cone losses


@pytest.mark.parametrize("curv", [0.1, 1.0, 2.5])
def test_aperture_profile_matches_the_closed_form_outside_and_is_flat_inside(curv):
    r0 = 0.2 / math.sqrt(curv)
    outside = r0 * torch.linspace(1.01, 5.0, 50, dtype=F64)
    aperture, grad = A.aperture_profile(outside, curv, 0.1, asin_margin=0.0)
    torch.testing.assert_close(aperture, torch.asin(r0 / outside))
    torch.testing.assert_close(grad, -r0 / (outside * torch.sqrt(outside**2 - r0**2)))
    inside = r0 * torch.linspace(0.05, 0.99, 20, dtype=F64)
    aperture, grad = A.aperture_profile(inside, curv, 0.1, asin_margin=0.0)
    torch.testing.assert_close(aperture, torch.full_like(inside, math.pi / 2))
    assert bool((grad == 0).all())


def test_aperture_gradient_near_the_boundary_meru_clamp_vs_ours():
    r0 = 0.2  # c = 1, K = 0.1
    near = (r0 + torch.logspace(-9, -1, 2000, dtype=F64)).float()
    _, meru = A.aperture_profile(near, 1.0, 0.1, asin_margin=1e-8)
    _, ours = A.aperture_profile(near, 1.0, 0.1, asin_margin=1e-4)
    margin = 1e-4  # |dω/dr| ≤ (1/r0) / sqrt(1 − (1 − m)²) once the argument is clamped at 1 − m
    assert float(ours.abs().max()) <= 1.001 / (r0 * math.sqrt(2 * margin - margin**2))
    assert float(meru.abs().max()) > 1e4  # docs/methods/conventions.md#geometry-numerics: ≈ 1.4e4
    assert torch.isfinite(meru).all() and torch.isfinite(ours).all()


@pytest.mark.parametrize("curv", [0.5, 1.0, 3.0])
def test_child_at_angle_obeys_the_hyperbolic_law_of_cosines(curv):
    angle = torch.linspace(0.0, math.pi, 13, dtype=F64)
    parent, child = A.child_at_angle(0.4, angle, 0.7, curv, dim=3)
    assert parent.shape == child.shape == (13, 3)
    sc = math.sqrt(curv)
    a, s = L.dist_to_origin(parent, curv) * sc, 0.7 * sc
    # interior angle at the parent is π − φ: cosh C = cosh A cosh s + sinh A sinh s cos φ
    expected = torch.cosh(a) * math.cosh(s) + torch.sinh(a) * math.sinh(s) * torch.cos(angle)
    torch.testing.assert_close(torch.cosh(L.dist_to_origin(child, curv) * sc), expected)
    torch.testing.assert_close(L.paired_dist(parent, child, curv), torch.full_like(angle, 0.7))
    torch.testing.assert_close(L.exterior_angle(parent, child, curv), angle, atol=1e-6, rtol=0)


def test_child_at_angle_zero_and_pi_lie_on_the_ray():
    parent, child = A.child_at_angle(0.8, torch.tensor([0.0, math.pi], dtype=F64), 0.3, 1.0)
    assert torch.allclose(child[:, 1], torch.zeros(2, dtype=F64), atol=1e-12)
    d_parent = float(L.dist_to_origin(parent[:1], 1.0))
    torch.testing.assert_close(
        L.dist_to_origin(child, 1.0), torch.tensor([d_parent + 0.3, d_parent - 0.3], dtype=F64)
    )
    with pytest.raises(ValueError, match="dim"):
        A.child_at_angle(0.8, 0.1, 0.3, 1.0, dim=1)


def test_per_pair_agrees_with_the_batch_mean_and_the_hinge_formula():
    torch.manual_seed(0)
    parent, child = A.child_at_angle(
        torch.rand(9, dtype=F64) * 0.8 + 0.05, torch.rand(9, dtype=F64) * 3.0, 0.5, 1.0
    )
    values = A.per_pair(lambda p, c: entailment_loss(p, c, 1.0), parent, child)
    hinge = torch.relu(L.exterior_angle(parent, child, 1.0) - L.half_aperture(parent, 1.0))
    torch.testing.assert_close(values, hinge)
    torch.testing.assert_close(values.mean(), entailment_loss(parent, child, 1.0))
    with pytest.raises(ValueError, match="equal shapes"):
        A.per_pair(lambda p, c: p.sum(), parent, child[:3])


def test_loss_along_ray_matches_closed_form_and_finite_differences():
    r = torch.linspace(0.1, 1.5, 15, dtype=F64)
    value, grad = A.loss_along_ray(norm_regularizer, r)
    torch.testing.assert_close(value, r**2 - torch.log(r))
    torch.testing.assert_close(grad, 2 * r - 1 / r)

    child = torch.tensor([[0.3, 0.5]], dtype=F64)
    for fn in (lambda p: entailment_loss(p, child, 1.0), lambda p: adaent_loss(p, child, 1.0)):
        r = torch.linspace(0.25, 0.9, 12, dtype=F64)  # MERU's hinge is active and smooth here
        _, grad = A.loss_along_ray(fn, r)
        h = 1e-6
        plus, _ = A.loss_along_ray(fn, r + h)
        minus, _ = A.loss_along_ray(fn, r - h)
        torch.testing.assert_close(grad, (plus - minus) / (2 * h), rtol=1e-5, atol=1e-7)


def test_loss_along_ray_gives_zero_gradient_where_the_loss_ignores_the_parent():
    _, grad = A.loss_along_ray(
        lambda p: torch.tensor(1.0, dtype=F64), torch.tensor([0.5], dtype=F64)
    )
    assert float(grad[0]) == 0.0


# ------------------------------------------------------------------ training logs


def _log(steps, key="diag/x", scale=1.0):
    records = [{"step": s, "loss": 1.0} for s in range(1, max(steps) + 1)]
    for r in records:
        if r["step"] in steps:
            r[key] = scale * r["step"]
    return records


def test_log_series_keeps_only_records_with_the_key():
    steps, values = A.log_series(_log([2, 4, 6]), "diag/x")
    np.testing.assert_array_equal(steps, [2, 4, 6])
    np.testing.assert_array_equal(values, [2.0, 4.0, 6.0])
    with pytest.raises(KeyError, match="diag/missing"):
        A.log_series(_log([2]), "diag/missing")


def test_stack_seeds_aligns_on_common_steps_and_matches_numpy():
    logs = [_log([2, 4, 6], scale=1.0), _log([2, 4, 6, 8], scale=2.0), _log([4, 6], scale=4.0)]
    s = A.stack_seeds(logs, "diag/x")
    np.testing.assert_array_equal(s.steps, [4, 6])
    table = np.array([[4.0, 6.0], [8.0, 12.0], [16.0, 24.0]])
    np.testing.assert_allclose(s.mean, table.mean(0))
    np.testing.assert_allclose(s.std, table.std(0, ddof=1))
    assert s.n_seeds == 3
    single = A.stack_seeds(logs[:1], "diag/x")
    np.testing.assert_array_equal(single.std, np.zeros(3))
    with pytest.raises(ValueError, match="at least one"):
        A.stack_seeds([], "diag/x")
    with pytest.raises(ValueError, match="share no step"):
        A.stack_seeds([_log([2]), _log([4])], "diag/x")


def test_seed_logs_finds_every_finished_seed(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    for seed in (0, 2):
        folder = tmp_path / "results" / "full" / "argent" / "argent" / f"seed{seed}"
        folder.mkdir(parents=True)
        (folder / "run.done").write_text("{}")
        lines = [json.dumps(r) for r in _log([5], scale=seed + 1)] + [
            '{"step": 5, "status": "finished"}'
        ]
        (folder / "log.jsonl").write_text("\n".join(lines))
    (tmp_path / "results" / "full" / "argent" / "argent" / "seed1").mkdir()  # unfinished
    logs = reader.seed_logs("full", "argent", "ARGENT")
    assert sorted(logs) == [0, 2]
    assert A.log_series(logs[2], "diag/x")[1].tolist() == [15.0]
    assert all("status" not in r for r in logs[0])
    with pytest.raises(FileNotFoundError, match="paperlib.study"):
        reader.seed_logs("full", "argent", "MERU")


# ------------------------------------------------------------------ embeddings


def test_unique_rows_matches_a_naive_loop():
    torch.manual_seed(1)
    base = torch.randn(5, 3)
    points = base[torch.tensor([3, 1, 3, 0, 1, 4, 4, 2])]
    seen, naive = [], []
    for i, row in enumerate(points.tolist()):
        if row not in seen:
            seen.append(row)
            naive.append(i)
    assert A.unique_rows(points).tolist() == naive


def _embeddings(n=6, dim=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    general = L.exp_map0(0.3 * torch.randn(2, dim, generator=gen, dtype=F64), 1.0)
    chain = torch.stack(
        [
            general[torch.arange(n) % 2],
            L.exp_map0(0.5 * torch.randn(n, dim, generator=gen, dtype=F64), 1.0),
            L.exp_map0(0.6 * torch.randn(n, dim, generator=gen, dtype=F64), 1.0),
            L.exp_map0(0.7 * torch.randn(n, dim, generator=gen, dtype=F64), 1.0),
        ],
        1,
    )
    image = L.exp_map0(torch.randn(n, dim, generator=gen, dtype=F64), 1.0)
    owner = torch.arange(n).repeat_interleave(2)
    kind = torch.tensor([0, 1] * n)
    jitter = torch.where(kind[:, None] == 1, 0.01, 0.4) * torch.randn(
        2 * n, dim, generator=gen, dtype=F64
    )
    box = image[owner] + jitter
    return {
        "chain": chain,
        "image": image,
        "box_image": box,
        "box_kind": kind,
        "box_owner": owner,
        "curv": torch.tensor(1.0),
    }


def test_hierarchy_points_removes_repeated_captions_and_labels_levels():
    emb = _embeddings()
    points, level = A.hierarchy_points(emb)
    assert np.bincount(level.numpy()).tolist() == [2, 6, 6, 6, 6]  # level 1: two distinct captions
    for i in range(4):
        source = emb["chain"][:, i]
        assert all(any(torch.equal(p, q) for q in source) for p in points[level == i])
    torch.testing.assert_close(points[level == 4], emb["image"])


def test_best_scale_distortion_matches_a_bounded_search():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(12, 4, generator=gen, dtype=F64)
    original = torch.cdist(x, x)
    projected = torch.cdist(x[:, :2], x[:, :2]) * 7.0
    value, scale = A.best_scale_distortion(original, projected)
    search = minimize_scalar(
        lambda s: H.distortion(original, s * projected),
        bounds=(1e-3, 1.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert value <= search.fun + 1e-9
    assert value == pytest.approx(H.distortion(original, scale * projected))
    same, s = A.best_scale_distortion(original, 3.0 * original)
    assert same == pytest.approx(0.0, abs=1e-12) and s == pytest.approx(1 / 3)


def _planar_cloud(curv: float) -> torch.Tensor:
    """Points of the geodesic plane span(e1, e2) through the origin, off-centre, within
    unit-curvature distance 0.8 of their mean: the closed-form horospherical projection keeps
    the plane's points fixed only on the origin's side of the geodesic joining the two ideal
    points (≈ 0.88 from the centre for orthonormal ideal points)."""
    gen = torch.Generator().manual_seed(4)
    tangent = torch.zeros(30, 3, dtype=F64)
    tangent[:, :2] = 0.25 * torch.randn(30, 2, generator=gen, dtype=F64).clamp(-2, 2)
    return L.exp_map0((tangent + torch.tensor([0.5, 0.0, 0.0])) / math.sqrt(curv), curv)


@pytest.mark.parametrize("curv", [1.0, 0.4])
def test_horopca_view_is_isometric_for_data_in_a_plane_through_the_origin(curv):
    x = _planar_cloud(curv)
    view = A.disc_views(x, curv, methods=("HoroPCA",))["HoroPCA"]
    assert view.poincare.shape == (30, 2) and bool((view.poincare.norm(dim=-1) < 1).all())
    assert view.distortion < 1e-6 and view.scaled_distortion < 1e-6
    # the projected origin sits at the model's distance from every point
    lifted = L.from_poincare(torch.cat([view.poincare, view.origin[None]]), 1.0)
    to_origin = L.paired_dist(lifted[:-1], lifted[-1:], 1.0)
    torch.testing.assert_close(to_origin, math.sqrt(curv) * L.dist_to_origin(x, curv))


@pytest.mark.parametrize("curv", [1.0, 0.4])
def test_tangent_pca_view_radii_follow_the_centred_tangent_vectors(curv):
    x = _planar_cloud(curv)
    view = A.disc_views(x, curv, methods=("tangent PCA",))["tangent PCA"]
    # tangent vectors of the data and of O (projected with the data), centred; in 2-D the PCA
    # is a rotation, and a point at distance ρ from the disc's centre has |p| = tanh(ρ/2)
    v = torch.cat([L.log_map0(x, curv), torch.zeros(1, 3, dtype=F64)])
    rho = math.sqrt(curv) * (v - v.mean(0)).norm(dim=-1)
    radii = torch.cat([view.poincare, view.origin[None]]).norm(dim=-1)
    torch.testing.assert_close(radii, torch.tanh(rho / 2))
    assert view.distortion > 1e-3  # centring in the tangent space is not an isometry


def test_disc_views_distortion_is_the_horopca_papers_measure():
    emb = _embeddings(n=10, dim=6, seed=5)
    x, _ = A.hierarchy_points(emb)
    view = A.disc_views(x, 1.0, methods=("tangent PCA",))["tangent PCA"]
    original = L.pairwise_dist(x, x, 1.0, rel_floor=0.0)
    naive = H.poincare_pairwise_dist(view.poincare)
    n = len(x)
    rel = [
        abs(naive[i, j] - original[i, j]) / original[i, j]
        for i in range(n)
        for j in range(i + 1, n)
    ]
    assert view.distortion == pytest.approx(float(sum(rel) / len(rel)), rel=1e-6)
    assert view.scaled_distortion <= view.distortion + 1e-12
    with pytest.raises(ValueError, match="unknown method"):
        A.disc_views(x, 1.0, methods=("t-SNE",))


@pytest.mark.slow
def test_disc_views_umap_lands_in_the_unit_disc():
    x, _ = A.hierarchy_points(_embeddings(n=20, dim=6, seed=6))
    view = A.disc_views(x, 1.0, methods=("UMAP",), n_neighbors=5)["UMAP"]
    assert view.poincare.shape == (len(x), 2)
    assert bool((view.poincare.norm(dim=-1) < 1).all()) and bool(view.origin.norm() < 1)
    assert math.isfinite(view.distortion) and view.scaled_distortion <= view.distortion + 1e-12


def test_norm_groups_and_crop_weights_against_closed_forms():
    emb = _embeddings()
    groups = A.norm_groups(emb)
    assert list(groups) == [*A.LEVEL_NAMES, *A.BOX_KIND_NAMES]
    torch.testing.assert_close(groups["image"], emb["image"].norm(dim=-1))
    torch.testing.assert_close(groups["near-full crop"], emb["box_image"][1::2].norm(dim=-1))
    weights = A.crop_weights(emb)
    for kind, offset in (("object crop", 0), ("near-full crop", 1)):
        d, h = weights[kind]
        crop, image = emb["box_image"][offset::2], emb["image"]
        inner = (crop * image).sum(-1) - L.time_component(crop, 1.0) * L.time_component(image, 1.0)
        torch.testing.assert_close(
            d, torch.acosh(-inner)
        )  # docs/methods/conventions.md#lorentz-distance, c = 1
        torch.testing.assert_close(h, 1 - torch.exp(-d).to(h.dtype))
    assert float(weights["near-full crop"][1].max()) < float(weights["object crop"][1].min())


def test_inset_bounds_avoid_the_occupied_corner_and_draw_disc_draws_every_level():
    import matplotlib.pyplot as plt

    level = torch.tensor([0, 1, 2, 3, 4, 4])
    crowded = torch.tensor(
        [[0.9, -0.9], [0.8, -0.8], [0.85, -0.7], [0.7, -0.9], [0.9, -0.6], [0.6, -0.6]]
    )
    view = A.DiscView(crowded * 0.1, torch.zeros(2, dtype=F64), 0.0, 0.0)
    bounds = A.inset_bounds(view, limit=0.1, size=0.3)
    assert bounds != [0.7, 0.0, 0.3, 0.3] and bounds[2:] == [0.3, 0.3]
    fig, ax = plt.subplots()
    draw_disc(ax, view, level, limit=0.5)
    assert len(ax.collections) == len(A.LEVEL_NAMES) and ax.get_xlim() == (-0.5, 0.5)
    assert [t for t in ax.get_legend_handles_labels()[1]][-1] == "origin O of the model"
    plt.close(fig)


# ------------------------------------------------------------------ reading a layout


def test_kendall_interval_and_median_difference_bracket_their_statistics():
    rng = np.random.default_rng(0)
    x = np.repeat(np.arange(4), 50)
    y = x + rng.normal(size=x.size)
    tau, low, high = A.kendall_interval(x, y)
    assert low < tau < high and low > 0
    d, low, high = A.median_difference(rng.normal(size=200), rng.normal(2.0, size=200))
    assert low < d < high < 0


def test_layout_reads_distances_from_the_projected_origin_and_level_neighbours():
    level = torch.tensor([0] * 20 + [1] * 20)
    angle = torch.linspace(0, 2 * math.pi, 41)[:-1]
    radius = torch.where(level == 0, 0.1, 0.6)
    points = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=-1).double()
    view = A.DiscView(points, torch.zeros(2, dtype=F64), 0.0, 0.0)
    lay = A.layout(view, level, k=3)
    assert lay.medians[0] == pytest.approx(2 * math.atanh(0.1))  # d(O, p) = 2 atanh ‖p‖
    from_origin = 2 * torch.atanh(points.norm(dim=-1))
    assert lay.tau[0] == pytest.approx(stats_tau(level, from_origin), abs=1e-6) and lay.tau[1] > 0
    assert lay.neighbours == 1.0 and lay.chance[0] < 0.7


def stats_tau(x, y):
    from scipy.stats import kendalltau

    return kendalltau(np.asarray(x), np.asarray(y)).statistic


def test_level_norms_count_groups_inside_the_radius_and_images_beyond_their_captions():
    chain = torch.zeros(4, 4, 3)
    for level in range(4):
        chain[:, level, 0] = 0.2 + 0.1 * level + 0.01 * torch.arange(4)  # distinct, rising
    image = torch.zeros(4, 3)
    image[:, 0] = torch.tensor([1.0, 1.0, 1.0, 0.1])
    levels = A.level_norms({"chain": chain, "image": image}, radius=0.45)
    assert levels.quartiles[A.LEVEL_NAMES[0]][1] == pytest.approx(0.215)
    assert levels.inside[A.LEVEL_NAMES[3]] == 0 and levels.inside[A.LEVEL_NAMES[1]] == 1
    assert levels.inside["captions"] == pytest.approx(0.75) and levels.tau[0] > 0.8
    assert levels.beyond[0] == pytest.approx(0.75)
