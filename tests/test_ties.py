"""Ties counted one way (``docs/methods/conventions.md#ties``): each metric that ranks or takes
an argmax against a naive counter on scores with deliberate ties."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from paperlib.metrics import hierarchy, monotonicity, zeroshot
from paperlib.metrics.composition import cola_correct
from paperlib.metrics.retrieval import retrieval_metrics_from_scores


def tied_scores(rows: int, cols: int, seed: int = 0) -> torch.Tensor:
    """Scores drawn from {0, 1, 2}: many exact ties."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 3, (rows, cols), generator=generator).float()


def naive_hits(scores: torch.Tensor, positive: torch.Tensor, k: int) -> float:
    """A query hits at k when fewer than k negatives score >= its best positive."""
    hits = []
    for row, pos in zip(scores.tolist(), positive.tolist()):
        best = max(s for s, p in zip(row, pos) if p)
        above = sum(1 for s, p in zip(row, pos) if not p and s >= best)
        hits.append(above < k)
    return sum(hits) / len(hits)


def test_retrieval_counts_a_tie_as_a_miss():
    scores = tied_scores(12, 12)
    positive = torch.eye(12, dtype=torch.bool)
    got = retrieval_metrics_from_scores(scores, ks=(1, 5))
    for k in (1, 5):
        assert got[f"text_retrieval_recall@{k}"] == pytest.approx(naive_hits(scores, positive, k))
        assert got[f"image_retrieval_recall@{k}"] == pytest.approx(
            naive_hits(scores.T, positive.T, k)
        )
    constant = retrieval_metrics_from_scores(torch.ones(6, 6), ks=(1,))
    assert constant["text_retrieval_recall@1"] == 0.0


def test_zero_shot_counts_a_tie_as_a_miss():
    scores = tied_scores(40, 7, seed=1)
    labels = torch.randint(0, 7, (40,), generator=torch.Generator().manual_seed(2))
    onehot = torch.nn.functional.one_hot(labels, 7).bool()
    got = zeroshot.zero_shot_metrics(scores, labels)
    assert got["acc1"] == pytest.approx(naive_hits(scores, onehot, 1))
    assert got["acc5"] == pytest.approx(naive_hits(scores, onehot, 5))
    assert zeroshot.zero_shot_metrics(torch.zeros(5, 6), torch.tensor([0, 1, 2, 5, 1])) == {
        "acc1": 0.0,
        "acc5": 0.0,
        "mean_per_class_recall": 0.0,
    }


def test_zero_shot_per_class_recall_uses_the_same_hits():
    scores = tied_scores(30, 4, seed=3)
    labels = torch.arange(30) % 4
    rank, pred = zeroshot.label_ranks(scores, labels)
    hits = (rank == 0).numpy()
    expected = np.mean([hits[labels.numpy() == c].mean() for c in range(4)])
    got = zeroshot.zero_shot_metrics(scores, labels)["mean_per_class_recall"]
    assert got == pytest.approx(expected)
    assert bool(((pred == labels) == (rank == 0)).all())


def test_zero_shot_without_ties_is_the_top_k():
    scores = torch.randn(50, 9, generator=torch.Generator().manual_seed(4))
    labels = torch.randint(0, 9, (50,), generator=torch.Generator().manual_seed(5))
    top = scores.topk(5, dim=1).indices == labels[:, None]
    got = zeroshot.zero_shot_metrics(scores, labels)
    assert got["acc1"] == float(top[:, :1].any(1).float().mean())
    assert got["acc5"] == float(top.any(1).float().mean())


def test_cola_counts_a_tie_as_a_miss():
    scores = torch.tensor([[[1.0, 0.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]])
    assert cola_correct(scores, "text_to_image").tolist() == [False, True]
    assert cola_correct(scores, "image_to_text").tolist() == [False, True]
    assert cola_correct(torch.ones(3, 2, 2), "group").tolist() == [False] * 3


def test_himo_at_2_and_3_count_equal_scores_as_a_failure():
    rows = tied_scores(30, 3, seed=6).numpy()
    naive = np.mean([all(b > a for a, b in zip(r, r[1:])) for r in rows])
    assert monotonicity.strict_monotone_accuracy(rows) == pytest.approx(naive)
    assert monotonicity.strict_monotone_accuracy(np.array([[1.0, 1.0, 2.0]])) == 0.0


def test_himo_at_k_is_pearson_with_ties_and_zero_when_constant():
    rows = tied_scores(20, 6, seed=7).numpy()
    rhos = [0.0 if np.all(r == r[0]) else np.corrcoef(np.arange(1, 7), r)[0, 1] for r in rows]
    assert monotonicity.himo_at_k(rows) == pytest.approx(np.mean(rhos))
    assert monotonicity.himo_at_k(np.ones((2, 5))) == 0.0


def test_pep_counts_a_tied_pair_as_half(monkeypatch):
    scores = torch.tensor([0.0, 0.5, 0.0, 0.0, 0.5, 0.2], dtype=torch.float64)
    label = np.array([1, 1, 1, 0, 0, 0])
    monkeypatch.setattr(hierarchy, "entailment_score", lambda parent, child, curv: scores)
    pairs = hierarchy.PEPPairs(np.zeros(6, int), np.zeros(6, int), np.zeros(6, int), label)
    got = hierarchy.pep_metrics(torch.zeros(1, 3), torch.zeros(1, 1, 3), pairs, 1.0)
    pos, neg = scores[:3].tolist(), scores[3:].tolist()
    naive = np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])
    assert got["pep_auc"] == pytest.approx(naive)


def test_hierarchical_retrieval_takes_the_smaller_radius_among_equals():
    # one image, two levels; its own level-1 caption ties with the other image's caption
    similarity = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    radii = torch.tensor([0.5, 1.0, 0.2, 0.9])
    precision, _ = hierarchy.hierarchical_retrieval_items(similarity, radii, 2, n_thresholds=2)
    # threshold 0.2 sees caption 2 only; threshold 1.0 sees all: 0 and 2 tie, 2 has the
    # smaller radius and stays the prediction
    assert precision[0] == 0.0
    radii = torch.tensor([0.2, 1.0, 0.5, 0.9])
    precision, _ = hierarchy.hierarchical_retrieval_items(similarity, radii, 2, n_thresholds=2)
    assert precision[0] == 1.0
