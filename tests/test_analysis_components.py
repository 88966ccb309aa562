"""Component analysis of tutorial 01 against sklearn, scipy and direct loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy.linalg import subspace_angles
from scipy.stats import f_oneway
from sklearn.decomposition import PCA

from paperlib.analysis.components import (
    FACTORS,
    adjust_for_chance,
    angles_to_batch,
    batch_size_sweep,
    chance_correlation_ratio,
    component_scores,
    content_batches,
    correlation_ratio,
    disjoint_pair_angles,
    explained_variance_ratio,
    factor_correlations,
    factor_value_names,
    followed_factor,
    kept_and_dropped,
    kept_and_dropped_correlations,
    kept_counts,
    kept_factors_by_batch,
    pooled_correlation_ratio,
    principal_angles,
    random_subspace_angle,
    within_correlation_ratio,
    world_factors,
)
from paperlib.data.world import COLOURS, World
from paperlib.losses.himo import hide


def _features(n=40, dim=12, seed=0):
    torch.manual_seed(seed)
    scales = torch.logspace(0, -2, dim)
    return torch.nn.functional.normalize(torch.randn(n, dim) * scales + 0.3, dim=-1)


def test_explained_variance_ratio_matches_sklearn_pca():
    u = _features()
    ours = explained_variance_ratio(u)
    ref = PCA().fit(u.double().numpy()).explained_variance_ratio_
    np.testing.assert_allclose(ours, ref, rtol=1e-8, atol=1e-12)
    assert ours.sum() == pytest.approx(1.0)


def test_kept_counts_are_the_first_cumulative_crossings():
    u = _features()
    cumulative = np.cumsum(explained_variance_ratio(u))
    taus = [0.3, 0.6, 0.9, 0.99]
    expected = [int(np.argmax(cumulative >= tau - 1e-6)) + 1 for tau in taus]
    assert kept_counts(u, taus) == expected
    assert expected == sorted(expected)


def test_component_scores_and_split_match_sklearn_projection():
    u = _features().double()
    result = hide(u, 0.8)
    pca = PCA(n_components=result.m).fit(u.numpy())
    scores = component_scores(u, result)
    ref = pca.transform(u.numpy())
    np.testing.assert_allclose(np.abs(scores), np.abs(ref), atol=1e-8)  # up to sign per column
    kept, dropped = kept_and_dropped(u, result)
    np.testing.assert_allclose(kept, scores @ result.components.numpy(), atol=1e-10)
    np.testing.assert_allclose(kept + dropped, u.numpy() - u.numpy().mean(0), atol=1e-10)
    np.testing.assert_allclose(kept.T @ dropped, 0.0, atol=1e-8)  # orthogonal parts


def test_correlation_ratio_agrees_with_one_way_anova():
    rng = np.random.default_rng(1)
    groups = rng.integers(0, 5, size=60)
    values = rng.normal(size=(60, 3)) + groups[:, None] * np.array([0.0, 0.5, 2.0])
    eta2 = correlation_ratio(values, groups)
    k, n = 5, 60
    for j in range(3):
        f = f_oneway(*[values[groups == g, j] for g in range(k)]).statistic
        assert eta2[j] == pytest.approx(f * (k - 1) / (f * (k - 1) + n - k))
    assert eta2[0] < eta2[1] < eta2[2]
    assert correlation_ratio(values[:, 2], groups) == pytest.approx(eta2[2])


def test_correlation_ratio_extremes():
    groups = np.array([0, 0, 1, 1, 2, 2])
    assert correlation_ratio(groups * 3.0 + 1, groups) == pytest.approx(1.0)
    assert correlation_ratio(np.array([1.0, -1, 1, -1, 1, -1]), groups) == pytest.approx(0.0)
    assert np.isnan(correlation_ratio(np.ones(6), groups))
    with pytest.raises(ValueError, match="one label per row"):
        correlation_ratio(np.ones(6), groups[:4])


def test_pooled_correlation_ratio_is_the_variance_weighted_mean():
    rng = np.random.default_rng(2)
    groups = rng.integers(0, 3, size=30)
    values = rng.normal(size=(30, 4)) * np.array([1, 2, 3, 4]) + groups[:, None]
    eta2 = correlation_ratio(values, groups)
    total = values.var(axis=0)
    assert pooled_correlation_ratio(values, groups) == pytest.approx(
        (eta2 * total).sum() / total.sum()
    )


def test_chance_correlation_ratio_is_the_mean_over_all_relabellings():
    values = np.array([0.3, -1.2, 2.0, 0.7, 1.1, -0.4])
    groups = np.array([0, 0, 1, 1, 1, 2])
    perms = [correlation_ratio(values, groups[list(p)]) for p in itertools.permutations(range(6))]
    assert np.mean(perms) == pytest.approx(chance_correlation_ratio(groups))
    assert chance_correlation_ratio(groups) == pytest.approx(2 / 5)


def test_factor_correlations_rows_follow_factors():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 4, 50), rng.integers(0, 2, 50)
    scores = np.stack([a + 0.01 * rng.normal(size=50), b + 0.01 * rng.normal(size=50)], axis=1)
    table = factor_correlations(scores, {"a": a, "b": b})
    assert table.shape == (2, 2)
    assert table[0, 0] > 0.99 and table[1, 1] > 0.99
    assert table[0, 1] < 0.5 and table[1, 0] < 0.5


def test_principal_angles_against_closed_form():
    theta = 0.4
    a = np.array([[1.0, 0, 0], [0, 1, 0]])
    b = np.array([[1.0, 0, 0], [0, np.cos(theta), np.sin(theta)]])
    np.testing.assert_allclose(principal_angles(a, b), [0.0, np.degrees(theta)], atol=1e-7)
    np.testing.assert_allclose(principal_angles(a, 3 * a[::-1]), [0.0, 0.0], atol=1e-6)
    with pytest.raises(ValueError, match="same dim"):
        principal_angles(a, np.eye(4)[:2])


def test_random_subspace_angle_one_dimensional_closed_form():
    # two random lines in R^2: the angle is uniform on [0°, 90°], mean 45°
    assert random_subspace_angle(2, 1, repeats=4000) == pytest.approx(45.0, abs=1.5)
    assert random_subspace_angle(50, 3, repeats=50) > 70.0


def test_batch_size_sweep_compares_two_disjoint_sub_batches():
    u = _features(n=64, dim=10)
    sweep = batch_size_sweep(u, [8, 32], tau=0.9, repeats=3, seed=5)
    assert sweep["m"].shape == (2, 3) and sweep["angle"].shape == (2, 3)
    m_ref = hide(u, 0.9).m
    assert int(sweep["m_ref"]) == m_ref
    rng = np.random.default_rng(5)  # the draws the sweep makes, replayed by hand
    for i, size in enumerate([8, 32]):
        for r in range(3):
            rows = rng.choice(64, size=2 * size, replace=False)
            a, b = rows[:size], rows[size:]
            assert not set(a) & set(b)
            assert sweep["m"][i, r] == hide(u[a], 0.9).m
            spans = [PCA(m_ref).fit(u[x].double().numpy()).components_ for x in (a, b)]
            expected = np.degrees(subspace_angles(spans[0].T, spans[1].T)).mean()
            assert sweep["angle"][i, r] == pytest.approx(expected, abs=1e-4)
    assert sweep["angle"][0].mean() > sweep["angle"][1].mean()  # larger batches agree more
    with pytest.raises(ValueError, match="sizes must lie"):
        batch_size_sweep(u, [33])


def test_disjoint_pair_angles_replayed_by_hand():
    u = _features(n=40, dim=8)
    angles = disjoint_pair_angles(u, 12, 3, repeats=4, seed=1)
    rng = np.random.default_rng(1)
    for angle in angles:
        rows = rng.choice(40, size=24, replace=False)
        spans = [PCA(3).fit(u[x].double().numpy()).components_ for x in (rows[:12], rows[12:])]
        assert angle == pytest.approx(np.degrees(subspace_angles(spans[0].T, spans[1].T)).mean())
    with pytest.raises(ValueError, match="sizes must lie"):
        disjoint_pair_angles(u, 21, 3)


def test_followed_factor_names_the_coarsest_level_that_explains_half():
    column = dict.fromkeys(FACTORS, 0.1)
    assert followed_factor([column[f] for f in FACTORS]) == "–"
    column |= {"category": 0.6, "sub-category": 0.8, "background": 0.9}
    assert followed_factor([column[f] for f in FACTORS]) == "category"  # the taxonomy first
    column |= {"category": 0.4, "sub-category": 0.45}
    assert followed_factor([column[f] for f in FACTORS]) == "background"


def test_within_correlation_ratio_is_the_partial_r2_of_the_cell_indicators():
    rng = np.random.default_rng(3)
    coarse = np.repeat([0, 1, 2], 20)
    fine = coarse * 2 + rng.integers(0, 2, 60)  # nested: two fine groups inside each coarse one
    crossed = rng.integers(0, 3, 60)  # crossed with the coarse groups
    values = rng.normal(size=(60, 4)) + coarse[:, None] + 0.5 * (fine % 2)[:, None]

    def residual(labels):
        onehot = np.eye(labels.max() + 1)[labels]
        fit = np.linalg.lstsq(onehot, values, rcond=None)[0]
        return ((values - onehot @ fit) ** 2).sum()

    for groups in (fine, crossed):
        cells = np.unique(np.stack([coarse, groups], 1), axis=0, return_inverse=True)[1].ravel()
        partial = 1 - residual(cells) / residual(coarse)
        assert within_correlation_ratio(values, groups, coarse) == pytest.approx(partial)
        k, k0 = np.unique(cells).size, 3
        adjusted = 1 - (1 - partial) * (60 - k0) / (60 - k)
        assert adjust_for_chance(partial, groups, coarse) == pytest.approx(adjusted)
    one = np.zeros(60, dtype=int)  # a single coarse group: the plain pooled η²
    assert within_correlation_ratio(values, fine, one) == pytest.approx(
        pooled_correlation_ratio(values, fine)
    )
    assert adjust_for_chance(0.3, fine, one) == pytest.approx(adjust_for_chance(0.3, fine))


def test_world_factors_match_rendered_samples():
    factors = world_factors(seed=7, size=6)
    assert list(factors) == list(FACTORS)
    world = World(seed=7, image_size=32)
    for i in range(6):
        meta = world.sample(i).meta
        assert [factors[n][i] for n in FACTORS[:3]] == meta["labels"]
        assert factors["object count"][i] == len(meta["objects"])
        assert COLOURS[factors["main colour"][i]][0] == meta["objects"][0]["colour"]
        assert (
            factor_value_names("main colour")[factors["main colour"][i]]
            == meta["objects"][0]["colour"]
        )
        assert (
            factor_value_names("sub-category")[factors["sub-category"][i]]
            == meta["objects"][0]["sub"]
        )
        count = factor_value_names("object count")[factors["object count"][i]]
        assert count.startswith(str(len(meta["objects"])))
    with pytest.raises(ValueError, match="unknown factor"):
        factor_value_names("shape")


def test_adjusted_correlation_ratio_is_adjusted_r2_of_group_indicators():
    rng = np.random.default_rng(4)
    groups = rng.integers(0, 4, size=40)
    y = rng.normal(size=40) + 0.5 * groups
    onehot = np.eye(4)[groups]
    fit = np.linalg.lstsq(onehot, y, rcond=None)[0]
    r2 = 1 - ((y - onehot @ fit) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    adj_r2 = 1 - (1 - r2) * 39 / 36
    eta2 = correlation_ratio(y, groups)
    assert eta2 == pytest.approx(r2)
    assert adjust_for_chance(eta2, groups) == pytest.approx(adj_r2)
    assert adjust_for_chance(chance_correlation_ratio(groups), groups) == pytest.approx(0.0)
    assert adjust_for_chance(1.0, groups) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="more rows than groups"):
        adjust_for_chance(0.5, np.arange(3))


def test_content_batches_kept_factors_and_angles_to_a_batch():
    rng = np.random.default_rng(0)
    groups = np.repeat([0, 1, 2], [10, 12, 15])
    features = torch.nn.functional.normalize(torch.randn(37, 6, dtype=torch.float64), dim=-1)
    batches = content_batches(groups, ["a", "b", "c"], seed=1)
    assert list(batches) == ["a", "b", "c", "mixed"]
    assert all(len(rows) == 10 and len(set(rows)) == 10 for rows in batches.values())
    assert all((groups[batches[n]] == g).all() for g, n in enumerate("abc"))
    other = rng.integers(0, 2, 37)
    factors = {"group": groups, "other": other}
    kept = kept_factors_by_batch(features, batches, factors, tau=0.9)
    rows = batches["mixed"]
    part, _ = kept_and_dropped(features[rows], hide(features[rows], 0.9))
    expected = adjust_for_chance(pooled_correlation_ratio(part, other[rows]), other[rows])
    assert kept["mixed"][1] == pytest.approx(float(expected))
    inside = kept_factors_by_batch(features, batches, factors, 0.9, within=groups)
    eta = within_correlation_ratio(part, other[rows], groups[rows])
    expected = adjust_for_chance(eta, other[rows], groups[rows])
    assert inside["mixed"][1] == pytest.approx(float(expected))
    same = angles_to_batch(features, {"x": rows, "y": rows}, "x", m=2)
    assert list(same) == ["y"] and float(np.abs(same["y"]).max()) < 1e-6
    kept_eta, dropped_eta = kept_and_dropped_correlations(features, factors, 0.9)
    part, rest = kept_and_dropped(features, hide(features, 0.9))
    assert kept_eta[0] == pytest.approx(pooled_correlation_ratio(part, groups))
    assert dropped_eta[1] == pytest.approx(pooled_correlation_ratio(rest, other))
