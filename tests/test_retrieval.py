"""Recall@K (docs/methods/himo-clip.md#himo-evaluation) against sklearn and naive argsort loops,
with ties and 5 captions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics import top_k_accuracy_score

from paperlib.metrics.retrieval import (
    recall_at_k,
    retrieval_metrics,
    retrieval_metrics_from_scores,
    retrieval_ranks,
    text_to_image_index,
)


def _features(n: int, d: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(n, d, generator=g, dtype=torch.float64), dim=1)


def test_one_to_one_matches_sklearn_top_k():
    img = _features(40, 8, 0)
    txt = F.normalize(img + 0.9 * _features(40, 8, 1), dim=1)  # noisy pairs: recall in (0,1)
    scores = (img @ txt.T).numpy()
    labels = np.arange(40)
    got = retrieval_metrics(img, txt, ks=(1, 5, 10))
    for k in (1, 5, 10):
        i2t = top_k_accuracy_score(labels, scores, k=k, labels=labels)
        t2i = top_k_accuracy_score(labels, scores.T, k=k, labels=labels)
        assert got[f"text_retrieval_recall@{k}"] == pytest.approx(i2t)
        assert got[f"image_retrieval_recall@{k}"] == pytest.approx(t2i)
    assert 0 < got["text_retrieval_recall@1"] < 1


def test_five_captions_match_naive_loop():
    n_img, per = 12, 5
    img = _features(n_img, 6, 2)
    txt = F.normalize(img.repeat_interleave(per, 0) + 1.2 * _features(n_img * per, 6, 3), dim=1)
    scores = (img @ txt.T).numpy()
    got = retrieval_metrics(img, txt, captions_per_image=per, ks=(1, 3, 5))
    for k in (1, 3, 5):
        i2t_hits = []
        for i in range(n_img):
            top = np.argsort(-scores[i])[:k]
            i2t_hits.append(any(t // per == i for t in top))
        t2i_hits = [t // per in np.argsort(-scores[:, t])[:k] for t in range(n_img * per)]
        assert got[f"text_retrieval_recall@{k}"] == pytest.approx(np.mean(i2t_hits))
        assert got[f"image_retrieval_recall@{k}"] == pytest.approx(np.mean(t2i_hits))
    assert 0 < got["image_retrieval_recall@1"] < 1


def test_any_of_the_captions_counts_for_image_to_text():
    img = torch.eye(2, dtype=torch.float64)
    # image 0's first caption points away, its second caption is the best match
    txt = torch.tensor([[0.6, 0.8], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=torch.float64)
    i2t, t2i = retrieval_ranks(img, txt, text_to_image_index(2, 2))
    assert i2t.tolist() == [0, 0]
    # text 0 (image 0) prefers image 1: rank 1; the others are at rank 0
    assert t2i.tolist() == [1, 0, 0, 0]


def test_ties_pessimistic_and_optimistic():
    img = torch.eye(2, dtype=torch.float64)
    txt = torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)  # identical captions
    pes_i2t, pes_t2i = retrieval_ranks(img, txt)
    opt_i2t, opt_t2i = retrieval_ranks(img, txt, ties="optimistic")
    assert pes_i2t.tolist() == [1, 1] and pes_t2i.tolist() == [1, 1]
    assert opt_i2t.tolist() == [0, 0] and opt_t2i.tolist() == [0, 0]
    # a constant scorer: every negative ties, R@1 = 0 (pessimistic), R@n = 1
    const_img, const_txt = torch.ones(5, 3), torch.ones(5, 3)
    i2t, t2i = retrieval_ranks(const_img, const_txt)
    assert recall_at_k(i2t, (1, 4, 5)) == {1: 0.0, 4: 0.0, 5: 1.0}
    assert recall_at_k(t2i, (1, 5)) == {1: 0.0, 5: 1.0}


def test_chunking_does_not_change_ranks():
    img, txt = _features(17, 5, 4), _features(17 * 5, 5, 5)
    mapping = text_to_image_index(17, 5)
    full = retrieval_ranks(img, txt, mapping)
    chunked = retrieval_ranks(img, txt, mapping, chunk_size=3)
    assert all(torch.equal(a, b) for a, b in zip(full, chunked))


def test_features_are_normalised_inside():
    img, txt = _features(10, 4, 6), _features(10, 4, 7)
    scale = torch.arange(1, 11, dtype=torch.float64)[:, None]
    assert retrieval_metrics(img * scale, txt) == retrieval_metrics(img, txt)


def test_bad_inputs_are_named():
    img = _features(3, 4, 8)
    with pytest.raises(ValueError, match="1:1 retrieval"):
        retrieval_ranks(img, _features(4, 4, 9))
    with pytest.raises(ValueError, match="expected 15 texts"):
        retrieval_metrics(img, _features(14, 4, 9), captions_per_image=5)
    with pytest.raises(ValueError, match="ties"):
        retrieval_ranks(img, img, ties="random")
    with pytest.raises(ValueError, match="at least one caption"):
        retrieval_ranks(img, img, torch.tensor([0, 0, 1]))


def test_scores_version_equals_feature_version_on_cosine_scores():
    g = torch.Generator().manual_seed(7)
    img = torch.nn.functional.normalize(torch.randn(20, 8, generator=g), dim=-1)
    txt = torch.nn.functional.normalize(torch.randn(20, 8, generator=g), dim=-1)
    from paperlib.metrics.retrieval import retrieval_metrics_from_scores

    assert retrieval_metrics_from_scores(img @ txt.T) == retrieval_metrics(img, txt)


def test_duplicate_captions_count_as_hits():
    from paperlib.metrics.retrieval import retrieval_metrics_from_scores, same_text_positives

    texts = ["a", "b", "a", "c"]
    positive = same_text_positives(texts)
    assert positive.tolist() == [
        [True, False, True, False],
        [False, True, False, False],
        [True, False, True, False],
        [False, False, False, True],
    ]
    # identical captions have identical scores: a tie between the two "a" texts
    scores = torch.tensor(
        [
            [0.9, 0.1, 0.9, 0.0],
            [0.2, 0.8, 0.2, 0.1],
            [0.7, 0.0, 0.7, 0.3],
            [0.1, 0.2, 0.1, 0.6],
        ]
    )
    naive = retrieval_metrics_from_scores(scores, ks=(1,))
    assert naive["text_retrieval_recall@1"] == 0.5  # images 0 and 2 lose on the tie
    fixed = retrieval_metrics_from_scores(scores, positive, ks=(1,))
    assert fixed["text_retrieval_recall@1"] == 1.0
    # text 2 ("a") retrieves image 0, which also has caption "a": a hit
    assert fixed["image_retrieval_recall@1"] == 1.0
    assert naive["image_retrieval_recall@1"] == 0.75


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (4,)])
def test_an_empty_or_flat_score_matrix_is_named(shape):
    with pytest.raises(ValueError, match=r"at least one of each; got shape"):
        retrieval_metrics_from_scores(torch.zeros(shape))
