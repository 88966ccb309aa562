"""Property-based checks of the metrics on non-finite, empty and degenerate inputs: a named
error, never a number, and on finite inputs values inside the metric's range."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from paperlib.metrics import retrieval, zeroshot
from paperlib.metrics.scores import NonFiniteError

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32)
bad_value = st.sampled_from([math.nan, math.inf, -math.inf])


def _matrix(rows: int, cols: int, elements) -> st.SearchStrategy:
    return arrays(np.float32, (rows, cols), elements=elements)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(1, 8), where=st.integers(0, 63), value=bad_value)
def test_any_non_finite_score_is_refused_by_name(data, n, where, value):
    scores = data.draw(_matrix(n, n, finite))
    scores.flat[where % scores.size] = value
    with pytest.raises(NonFiniteError, match="scores holds 1 non-finite"):
        retrieval.retrieval_metrics_from_scores(torch.from_numpy(scores))
    with pytest.raises(NonFiniteError, match="scores holds 1 non-finite"):
        zeroshot.zero_shot_metrics(torch.from_numpy(scores), torch.zeros(n, dtype=torch.long))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(1, 12))
def test_finite_scores_give_recalls_in_range_and_rising_with_k(data, n):
    scores = torch.from_numpy(data.draw(_matrix(n, n, finite)))
    metrics = retrieval.retrieval_metrics_from_scores(scores)
    for side in ("text_retrieval_recall", "image_retrieval_recall"):
        values = [metrics[f"{side}@{k}"] for k in (1, 5, 10)]
        assert all(0.0 <= v <= 1.0 for v in values) and values == sorted(values)
        if n <= 10:  # at most 9 negatives: R@10 finds every positive, even through ties
            assert values[-1] == 1.0


@settings(max_examples=40, deadline=None)
@given(value=finite, n=st.integers(2, 10))
def test_constant_scores_are_all_ties_and_count_as_misses(value, n):
    metrics = retrieval.retrieval_metrics_from_scores(torch.full((n, n), value))
    assert metrics["text_retrieval_recall@1"] == metrics["image_retrieval_recall@1"] == 0.0


@given(shape=st.sampled_from([(0, 0), (0, 4), (4, 0)]))
def test_empty_score_matrices_are_named(shape):
    with pytest.raises(ValueError, match="at least one of each"):
        retrieval.retrieval_metrics_from_scores(torch.zeros(shape))
