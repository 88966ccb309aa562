"""COLA-style paired-query accuracy (docs/methods/himo-clip.md#cola) against a naive loop and
hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from paperlib.metrics.composition import cola_accuracy, cola_correct, pair_scores


def _naive(scores: np.ndarray, protocol: str) -> list[bool]:
    out = []
    for s in scores:
        t2i = s[0][0] > s[1][0] and s[1][1] > s[0][1]
        i2t = s[0][0] > s[0][1] and s[1][1] > s[1][0]
        out.append({"text_to_image": t2i, "image_to_text": i2t, "group": t2i and i2t}[protocol])
    return out


@pytest.mark.parametrize("protocol", ["text_to_image", "image_to_text", "group"])
def test_matches_naive_loop(protocol):
    g = torch.Generator().manual_seed(0)
    img = torch.randn(300, 2, 8, generator=g)
    txt = img + 1.5 * torch.randn(300, 2, 8, generator=g)
    scores = pair_scores(img, txt)
    ref = np.einsum(
        "qid,qcd->qic",
        F.normalize(img, dim=-1).numpy(),
        F.normalize(txt, dim=-1).numpy(),
    )
    np.testing.assert_allclose(scores.numpy(), ref, atol=1e-6)
    naive = _naive(scores.numpy(), protocol)
    assert cola_correct(scores, protocol).tolist() == naive
    acc = cola_accuracy(img, txt, protocol)
    assert acc == pytest.approx(np.mean(naive)) and 0 < acc < 1


def test_hand_made_queries():
    scores = torch.tensor(
        [
            [[0.9, 0.1], [0.1, 0.9]],  # perfect
            [[0.1, 0.9], [0.9, 0.1]],  # swapped: COLA's dummy prediction, wrong everywhere
            [[0.5, 0.4], [0.6, 0.7]],  # images pick the right caption, caption 0 picks image 1
            [[0.5, 0.5], [0.5, 0.5]],  # all ties: a miss
        ]
    )
    assert cola_correct(scores, "text_to_image").tolist() == [True, False, False, False]
    assert cola_correct(scores, "image_to_text").tolist() == [True, False, True, False]
    assert cola_correct(scores, "group").tolist() == [True, False, False, False]


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="num_queries, 2, dim"):
        pair_scores(torch.randn(3, 3, 4), torch.randn(3, 3, 4))
    with pytest.raises(ValueError, match="must match"):
        pair_scores(torch.randn(3, 2, 4), torch.randn(3, 2, 5))
    with pytest.raises(ValueError, match="protocol"):
        cola_correct(torch.randn(3, 2, 2), "both")
