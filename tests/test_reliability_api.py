"""Library entry points refuse inputs that have no answer, by name: NaN and ±inf text features
in HiDe and MoLo (a decomposition of them does not exist), empty feature batches in retrieval,
PEP without any pair to score; zero-shot labels outside the classes, HiMo@K and SSI of
non-finite scores, a curvature that is not positive (a float or a tensor), a geometry name
that is not one, features of different widths, NumPy arrays where tensors are expected, and
chunk sizes or k that select nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from paperlib.geometry import lorentz
from paperlib.losses.himo import NonFiniteFeaturesError, hide, molo_loss
from paperlib.metrics import composition, hierarchy, monotonicity, retrieval, scores, zeroshot
from paperlib.metrics.scores import NonFiniteError


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_hide_and_molo_name_non_finite_text_features(value):
    text = torch.nn.functional.normalize(torch.randn(8, 16), dim=-1)
    text[5, 2] = value
    image = torch.nn.functional.normalize(torch.randn(8, 16), dim=-1)
    with pytest.raises(NonFiniteFeaturesError, match=r"HiDe: the batch features hold \d+ non-"):
        hide(text)
    with pytest.raises(NonFiniteFeaturesError, match=r"HiDe: the batch features hold \d+ non-"):
        molo_loss(image, text, torch.tensor(4.6))


@pytest.mark.parametrize("shape", [(0, 4), (0, 0)])
def test_retrieval_of_empty_feature_batches_is_named(shape):
    with pytest.raises(ValueError, match=r"num_images and captions_per_image must be >= 1; got 0"):
        retrieval.retrieval_metrics(torch.zeros(shape), torch.zeros(shape))


def test_pep_without_pairs_is_named():
    pairs = hierarchy.build_pep_pairs([], 4)  # no HierarCaps row survived the cleaning
    assert len(pairs.label) == 0
    with pytest.raises(ValueError, match=r"PEP needs positive and negative pairs; got 0 pairs"):
        hierarchy.pep_metrics(torch.zeros(0, 4), torch.zeros(0, 4, 4), pairs, 1.0)
    one = hierarchy.build_pep_pairs(["a lone root"], 4, pool_size=5)  # no other image: no negative
    with pytest.raises(ValueError, match=r"PEP needs positive and negative pairs; got 4 pairs"):
        hierarchy.pep_metrics(torch.randn(1, 4) * 0.3, torch.randn(1, 4, 4) * 0.3, one, 1.0)


def test_hide_and_molo_name_an_empty_batch():
    from paperlib.losses.himo import hide, molo_loss

    empty = torch.zeros(0, 8)
    with pytest.raises(ValueError, match=r"non-empty \(batch, dim\) tensor; got shape \(0, 8\)"):
        hide(empty)
    with pytest.raises(ValueError, match="non-empty"):
        molo_loss(empty, empty, torch.tensor(1.0))


def _unit(n: int, d: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.nn.functional.normalize(torch.randn(n, d, generator=g), dim=-1)


@pytest.mark.parametrize(
    "labels, message",
    [
        ([0, 1, 2, 3], r"labels must lie in \[0, 3\) \(the classes scored\); 1 do not, e\.g\. 3"),
        ([0, 1, -1, 2], r"labels must lie in \[0, 3\).*e\.g\. -1"),
        ([0.5, 1.0, 2.0, 0.0], r"labels must be integer class indices"),
        ([True, False, True, False], r"labels must be integer class indices"),
    ],
)
def test_zero_shot_labels_outside_the_classes_are_refused(labels, message):
    with pytest.raises(ValueError, match=message):
        zeroshot.zero_shot_metrics(torch.randn(4, 3), torch.tensor(labels))


def test_zero_shot_of_integral_float_labels_is_scored_as_integers():
    s = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3]])
    as_float = zeroshot.zero_shot_metrics(s, torch.tensor([0.0, 1.0, 1.0]))
    assert as_float == zeroshot.zero_shot_metrics(s, torch.tensor([0, 1, 1]))
    assert as_float["acc1"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_himo_and_ssi_of_non_finite_scores_are_refused(value):
    bad = torch.tensor([[0.1, value, 0.3], [0.1, 0.2, 0.3]])
    with pytest.raises(NonFiniteError, match=r"scores\[0\] holds non-finite values"):
        monotonicity.strict_monotone_accuracy(bad[:, :2])
    with pytest.raises(NonFiniteError, match=r"scores\[0\] holds non-finite values"):
        monotonicity.himo_at_k(bad)
    with pytest.raises(NonFiniteError, match=r"must be finite for SSI"):
        monotonicity.semantic_stability_index(torch.tensor([0.5, 0.4]), bad[0, :2])
    assert monotonicity.strict_monotone_accuracy(torch.tensor([[0.2, 0.2], [0.1, 0.3]])) == 0.5


CURVATURES = [0.0, -1.0, math.nan, torch.tensor(0.0), torch.tensor(-1.0), torch.tensor(math.nan)]


@pytest.mark.parametrize("curv", CURVATURES, ids=lambda c: f"{type(c).__name__}({float(c)})")
def test_a_curvature_that_is_not_positive_is_refused_everywhere(curv):
    x = _unit(3, 4) * 0.3
    calls = [
        lambda: lorentz.pairwise_dist(x, x, curv),
        lambda: lorentz.exp_map0(x, curv),
        lambda: scores.pairwise_scores(x, x, "hyperbolic", curv),
        lambda: zeroshot.class_embeddings(x[:, None, :].repeat(1, 2, 1), "hyperbolic", curv),
        lambda: hierarchy.caption_radii(x[:, None, :], "hyperbolic", curv=curv),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"curv must be > 0 \(the space has curvature -curv\)"):
            call()


def test_a_positive_tensor_curvature_scores_as_its_float():
    x = _unit(3, 4) * 0.3
    torch.testing.assert_close(
        scores.pairwise_scores(x, x, "hyperbolic", torch.tensor(0.7)),
        scores.pairwise_scores(x, x, "hyperbolic", 0.7),
    )


@pytest.mark.parametrize("geometry", ["euclidian", "Euclidean", "lorentz", ""])
def test_a_geometry_that_is_not_one_is_refused(geometry):
    x = _unit(3, 4)
    with pytest.raises(ValueError, match=r"geometry must be one of \('euclidean', 'hyperbolic'\)"):
        scores.pairwise_scores(x, x, geometry, 1.0)
    with pytest.raises(ValueError, match=r"geometry must be one of"):
        scores.paired_scores(geometry, 1.0, x, x)


def test_features_of_different_widths_are_named():
    with pytest.raises(
        ValueError, match=r"text_features has shape \(3, 5\) but image_features has \(3, 4\)"
    ):
        scores.pairwise_scores(_unit(3, 4), _unit(3, 5), "euclidean")
    with pytest.raises(ValueError, match=r"share their feature dim; got \(3, 4\) and \(3, 6\)"):
        retrieval.retrieval_metrics(_unit(3, 4), _unit(3, 6))
    with pytest.raises(ValueError, match=r"segment_features\[1\] must be \(K, dim\)"):
        monotonicity.segment_scores(_unit(2, 4), [_unit(3, 4), _unit(3, 5)])
    with pytest.raises(ValueError, match=r"caption_features must be \(N, L, dim\) chains"):
        hierarchy.hierarcaps_metrics(_unit(3, 4), _unit(3, 4), "euclidean", root=torch.zeros(4))


@pytest.mark.parametrize(
    "call",
    [
        lambda: retrieval.retrieval_metrics(np.eye(3), np.eye(3)),
        lambda: scores.pairwise_scores(np.eye(3), np.eye(3), "euclidean"),
        lambda: zeroshot.zero_shot_metrics(np.eye(3), torch.arange(3)),
        lambda: composition.cola_accuracy(np.ones((2, 2, 4)), np.ones((2, 2, 4))),
        lambda: monotonicity.segment_scores(np.eye(2), [np.eye(2)]),
    ],
)
def test_numpy_arrays_where_tensors_are_expected_are_named(call):
    with pytest.raises(ValueError, match=r" must be a torch\.Tensor; got ndarray"):
        call()


def test_chunk_sizes_and_ks_that_select_nothing_are_refused():
    x = _unit(5, 4)
    with pytest.raises(ValueError, match=r"chunk_size must be a positive int; got 0"):
        retrieval.retrieval_ranks(x, x, chunk_size=0)
    with pytest.raises(ValueError, match=r"ks must be positive ints .* got \[0\]"):
        retrieval.retrieval_metrics(x, x, ks=(0,))
    one_chunk = retrieval.retrieval_ranks(x, x, chunk_size=1)
    every = retrieval.retrieval_ranks(x, x, chunk_size=1024)
    assert all(torch.equal(a, b) for a, b in zip(one_chunk, every))


def test_d_corr_needs_two_levels():
    with pytest.raises(ValueError, match=r"d_corr needs radii of \(N >= 1 images, L >= 2 levels\)"):
        hierarchy.d_corr(torch.rand(3, 1))
