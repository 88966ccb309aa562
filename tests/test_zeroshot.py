"""Zero-shot classification metrics against sklearn and naive class averaging."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics import accuracy_score, balanced_accuracy_score, top_k_accuracy_score

from paperlib.geometry.lorentz import exp_map0, log_map0, paired_dist
from paperlib.metrics import zeroshot as Z


def _data(n_classes=7, n_prompts=3, dim=8, n_images=40, seed=0):
    gen = torch.Generator().manual_seed(seed)
    prompts = torch.randn(n_classes, n_prompts, dim, generator=gen)
    labels = torch.randint(0, n_classes, (n_images,), generator=gen)
    images = prompts.mean(1)[labels] + 0.8 * torch.randn(n_images, dim, generator=gen)
    return prompts, images, labels


def test_euclidean_class_embeddings_are_renormalised_means():
    prompts, _, _ = _data()
    got = Z.class_embeddings(prompts, "euclidean")
    for c in range(prompts.shape[0]):
        mean = sum(F.normalize(p, dim=0) for p in prompts[c]) / prompts.shape[1]
        torch.testing.assert_close(got[c], mean / mean.norm())


def test_hyperbolic_class_embeddings_average_in_tangent_space():
    prompts, _, _ = _data()
    tangent = 0.3 * prompts
    lifted = exp_map0(tangent, 0.5)
    from_lifted = Z.class_embeddings(lifted, "hyperbolic", curv=0.5, space="lifted")
    from_tangent = Z.class_embeddings(tangent, "hyperbolic", curv=0.5, space="tangent")
    torch.testing.assert_close(from_lifted, from_tangent, rtol=1e-5, atol=1e-5)
    for c in range(prompts.shape[0]):
        ref = exp_map0((sum(log_map0(p[None], 0.5) for p in lifted[c]) / 3), 0.5)[0]
        torch.testing.assert_close(from_lifted[c], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("geometry", ["euclidean", "hyperbolic"])
def test_metrics_equal_sklearn(geometry):
    prompts, images, labels = _data()
    curv = 1.0 if geometry == "hyperbolic" else None
    if geometry == "hyperbolic":
        prompts, images = exp_map0(0.3 * prompts, 1.0), exp_map0(0.3 * images, 1.0)
    classes = Z.class_embeddings(prompts, geometry, curv=curv)
    scores = Z.zero_shot_scores(images, classes, geometry, curv=curv)
    if geometry == "hyperbolic":  # scores are −d_L
        i, c = 3, 5
        assert float(scores[i, c]) == pytest.approx(
            -float(paired_dist(images[i : i + 1], classes[c : c + 1], 1.0)), abs=1e-3
        )
    out = Z.zero_shot_metrics(scores, labels)
    pred = scores.argmax(1).numpy()
    y, s = labels.numpy(), scores.double().numpy()
    assert out["acc1"] == pytest.approx(accuracy_score(y, pred))
    assert out["acc5"] == pytest.approx(top_k_accuracy_score(y, s, k=5, labels=range(7)))
    assert out["mean_per_class_recall"] == pytest.approx(balanced_accuracy_score(y, pred))
    assert 0 < out["acc1"] <= out["acc5"] <= 1


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="n_prompts"):
        Z.class_embeddings(torch.zeros(3, 4), "euclidean")
    with pytest.raises(ValueError, match="curv"):
        Z.class_embeddings(torch.zeros(3, 2, 4), "hyperbolic")
    with pytest.raises(ValueError, match="labels"):
        Z.zero_shot_metrics(torch.zeros(4, 3), torch.zeros(5))
