"""Library entry points refuse inputs that have no answer, by name: NaN and ±inf text features
in HiDe and MoLo (a decomposition of them does not exist), empty feature batches in retrieval,
and PEP without any pair to score."""

from __future__ import annotations

import math

import pytest
import torch

from paperlib.losses.himo import NonFiniteFeaturesError, hide, molo_loss
from paperlib.metrics import hierarchy, retrieval


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
    with pytest.raises(ValueError, match=r"non-empty \(batch, dim\); got shape \(0, 8\)"):
        hide(empty)
    with pytest.raises(ValueError, match="non-empty"):
        molo_loss(empty, empty, torch.tensor(1.0))
