"""The monotonicity condition of tutorial 02 against directly computed cosine scores."""

from __future__ import annotations

import numpy as np

from paperlib.derivations import cumulative_scores, cumulative_texts, monotonicity_margin


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
