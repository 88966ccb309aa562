"""The monotonicity condition of tutorial 02 against directly computed cosine scores."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from paperlib.derivations import (
    cumulative_scores,
    cumulative_texts,
    fall_summary,
    full_vs_component_scores,
    k_segment_falls,
    mean_by_segment_index,
    monotonicity_margin,
    per_image_segment_scores,
    score_derivative,
)
from paperlib.losses.himo import hide


def test_margin_sign_predicts_score_change_on_random_texts():
    rng = np.random.default_rng(0)
    agree = 0
    for _ in range(500):
        v = rng.normal(size=16)
        core = v / np.linalg.norm(v) * 2 + rng.normal(size=16)  # a_1 > 0 almost surely
        texts = cumulative_texts(core, rng.normal(size=(5, 16)) * 0.5)
        proj = texts @ (v / np.linalg.norm(v))
        keep = proj[:-1] > 0
        rises = np.diff(cumulative_scores(v, texts)) > 0
        margin = monotonicity_margin(v, texts) > 0
        assert np.array_equal(rises[keep], margin[keep])
        agree += keep.sum()
    assert agree > 1000


def test_aligned_increment_with_large_orthogonal_part_lowers_the_score():
    v = np.array([1.0, 0.0, 0.0])
    core = np.array([1.0, 1.0, 0.0])
    increment = np.array([[0.2, 0.0, 3.0]])  # aligned with v, but mostly orthogonal noise
    texts = cumulative_texts(core, increment)
    assert (texts @ v > 0).all() and (texts[1] @ v) > (texts[0] @ v)
    s = cumulative_scores(v, texts)
    assert s[1] < s[0]
    assert monotonicity_margin(v, texts)[0] < 0


def test_cumulative_texts_rows():
    core = np.ones(3)
    inc = np.arange(6.0).reshape(2, 3)
    texts = cumulative_texts(core, inc)
    np.testing.assert_array_equal(texts[0], core)
    np.testing.assert_array_equal(texts[2], core + inc[0] + inc[1])


def test_score_derivative_matches_finite_differences():
    rng = np.random.default_rng(1)
    for _ in range(20):
        v, t, d = rng.normal(size=(3, 8))
        eps = 1e-6
        s = cumulative_scores(v, np.stack([t - eps * d, t + eps * d]))
        assert score_derivative(v, t, d) == pytest.approx((s[1] - s[0]) / (2 * eps), rel=1e-5)


def test_full_vs_component_scores_against_direct_hide():
    torch.manual_seed(0)
    text = torch.nn.functional.normalize(torch.randn(24, 6) + 0.5, dim=-1)
    image = torch.nn.functional.normalize(text + 0.3 * torch.randn(24, 6), dim=-1)
    out = full_vs_component_scores(image, text, tau=0.7)
    comp = hide(text.double(), 0.7).features
    ref_comp = torch.nn.functional.cosine_similarity(image.double(), comp, dim=-1).numpy()
    ref_full = torch.nn.functional.cosine_similarity(image.double(), text.double(), dim=-1).numpy()
    np.testing.assert_allclose(out["component"], ref_comp, atol=1e-12)
    np.testing.assert_allclose(out["full"], ref_full, atol=1e-12)
    positive = (image.double() * comp).sum(-1).numpy() > 0
    assert positive.sum() > 10
    rises = out["full"] > out["component"]
    np.testing.assert_array_equal((out["margin"] > 0)[positive], rises[positive])
    assert int(out["m"]) == hide(text, 0.7).m


def _embeddings():
    torch.manual_seed(2)
    lengths = torch.tensor([3, 1, 4])
    return {
        "image": torch.randn(3, 5),
        "segments_all": torch.randn(int(lengths.sum()), 5),
        "segments_all_lengths": lengths,
    }


def test_per_image_segment_scores_is_a_loop_of_cosines():
    emb = _embeddings()
    scores = per_image_segment_scores(emb)
    assert [len(s) for s in scores] == [3, 1, 4]
    start = 0
    for i, s in enumerate(scores):
        for k in range(len(s)):
            seg = emb["segments_all"][start + k]
            ref = torch.nn.functional.cosine_similarity(emb["image"][i], seg, dim=0)
            assert s[k] == pytest.approx(float(ref), abs=1e-6)
        start += len(s)
    emb["segments_all_lengths"] = torch.tensor([3, 1, 3])
    with pytest.raises(ValueError, match="segments_all has 8 rows"):
        per_image_segment_scores(emb)


def test_mean_by_segment_index_counts_only_images_that_reach_k():
    scores = [np.array([0.1, 0.2, 0.4]), np.array([0.3]), np.array([0.0, 0.5])]
    out = mean_by_segment_index(scores)
    np.testing.assert_array_equal(out["k"], [1, 2, 3])
    np.testing.assert_array_equal(out["count"], [3, 2, 1])
    np.testing.assert_allclose(out["mean"], [0.4 / 3, 0.35, 0.4])
    np.testing.assert_allclose(out["sem"][1], np.std([0.2, 0.5], ddof=1) / np.sqrt(2))
    assert out["sem"][2] == 0.0
    rel = mean_by_segment_index(scores, relative=True, min_count=2)
    np.testing.assert_array_equal(rel["k"], [1, 2])
    np.testing.assert_allclose(rel["mean"], [0.0, 0.3])


def test_k_segment_falls_counts_falls_on_the_cut_segments():
    rising = np.arange(1.0, 21.0)  # 20 prefixes, strictly rising: no fall, rho = 1
    wavy = np.array([0.1, 0.3, 0.2, 0.4, 0.35, 0.5, 0.6, 0.55, 0.7, 0.8])  # 10 prefixes
    short = np.array([0.1, 0.2])  # fewer than K prefixes: left out
    out = k_segment_falls([rising, short, wavy], 10)
    assert out["image"].tolist() == [0, 2]
    np.testing.assert_array_equal(out["curves"][0], rising[[1, 3, 5, 7, 9, 11, 13, 15, 17, 19]])
    np.testing.assert_array_equal(out["curves"][1], wavy)  # n = K: every prefix is a segment
    assert out["falls"].tolist() == [0, 3]
    np.testing.assert_allclose(out["largest_fall"], [0.0, 0.1])
    assert out["rho"][0] == pytest.approx(1.0)
    assert out["rho"][1] == pytest.approx(np.corrcoef(np.arange(10), wavy)[0, 1])
    assert k_segment_falls([short], 10)["curves"].shape == (0, 10)


def test_fall_summary_counts_each_models_falls():
    per_image = [np.array([0.1, 0.3, 0.2, 0.4]), np.array([0.1, 0.2, 0.3, 0.4])]
    falls = {"m": k_segment_falls(per_image, 4)}
    row = fall_summary(falls).loc["m"]
    assert row["images"] == 2 and row["share with ≥ 1 fall"] == 0.5
    assert row["mean falls per image"] == 0.5
    assert row["median largest fall"] == pytest.approx(np.median([0.1, 0.0]))
    assert row["share rising overall (ρ > 0)"] == 1.0
