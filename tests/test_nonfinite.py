"""Non-finite features are refused with a named error, never scored (NaN would rank every
positive first); a failed evaluation writes no results file; cache keys follow the data."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import torch

from paperlib.engine import evaluation as ev
from paperlib.engine.loop import train
from paperlib.metrics import hierarchy, retrieval, zeroshot
from paperlib.metrics.scores import NonFiniteError, paired_scores, pairwise_scores
from tests.engine_helpers import tiny_config


def _nan_rows(n: int = 6, dim: int = 4) -> torch.Tensor:
    features = torch.randn(n, dim)
    features[2, 1] = math.nan
    return features


def test_metrics_refuse_nan_and_inf_naming_the_tensor():
    good, bad = torch.randn(6, 4), _nan_rows()
    with pytest.raises(NonFiniteError, match="image_features holds 1 non-finite"):
        retrieval.retrieval_metrics(bad, good)
    with pytest.raises(NonFiniteError, match="scores holds"):
        retrieval.retrieval_metrics_from_scores(torch.full((3, 3), math.nan))
    inf = good.clone()
    inf[0, 0] = math.inf
    with pytest.raises(NonFiniteError, match="text_features"):
        pairwise_scores(good, inf, "euclidean")
    with pytest.raises(NonFiniteError, match="image_features"):
        paired_scores("hyperbolic", 1.0, bad, good)
    with pytest.raises(NonFiniteError, match="scores"):
        zeroshot.zero_shot_metrics(torch.full((4, 3), math.nan), torch.zeros(4, dtype=torch.long))


def test_pep_refuses_nan_features_and_single_class_pairs():
    images, chains = torch.randn(5, 4) * 0.3, torch.randn(5, 4, 4) * 0.3
    pairs = hierarchy.build_pep_pairs([f"root {i}" for i in range(5)], 4, pool_size=2)
    assert 0.0 <= hierarchy.pep_metrics(images, chains, pairs, 1.0)["pep_auc"] <= 1.0
    with pytest.raises(NonFiniteError, match="image_features"):
        hierarchy.pep_metrics(_nan_rows(5), chains, pairs, 1.0)
    positives = hierarchy.PEPPairs(
        *(v[pairs.label == 1] for v in (pairs.image, pairs.row, pairs.level, pairs.label))
    )
    with pytest.raises(ValueError, match="positive and negative pairs"):
        hierarchy.pep_metrics(images, chains, positives, 1.0)


def test_evaluating_a_model_with_nan_weights_fails_by_name_and_writes_nothing(tmp_path):
    run = train(tiny_config("clip", tmp_path / "run", train={"steps": 1})).output_dir
    state = torch.load(run / "last.pt", weights_only=True)
    name = next(k for k, v in state["model"].items() if v.is_floating_point() and v.ndim == 2)
    state["model"][name] = torch.full_like(state["model"][name], math.nan)
    torch.save(state, run / "last.pt")
    out = tmp_path / "results"
    with pytest.raises(NonFiniteError, match="benchmark 'world-long' of .*non-finite"):
        ev.evaluate(run, ["world-long", "world-short"], output_dir=out, world_size=8)
    assert not list(out.glob("*.json"))  # no result that looks finished


def test_content_key_follows_the_texts_the_image_files_and_the_options(tmp_path):
    from PIL import Image

    from paperlib.data.sample import Sample

    for name in ("a.png", "b.png"):
        Image.new("RGB", (4, 4), (10, 20, 30)).save(tmp_path / name)

    def samples(caption="A cat. On a mat.", image="a.png"):
        return [Sample(id="1", image=tmp_path / image, caption=caption, segments=["A cat."])]

    key = ev.content_key(samples(), 40)
    assert key == ev.content_key(samples(), 40)
    others = [
        ev.content_key(samples(caption="A dog. On a mat."), 40),  # a text
        ev.content_key(samples(image="b.png"), 40),  # another file, same bytes
        ev.content_key(samples(), None),  # an option
    ]
    assert key not in others and np.unique(others).size == 3
    Image.new("RGB", (4, 4), (90, 20, 30)).save(tmp_path / "a.png")  # the image replaced
    os.utime(tmp_path / "a.png", ns=(1, 1))
    assert ev.content_key(samples(), 40) != key


@pytest.mark.parametrize(
    "options, message",
    [
        ({"world_size": 1}, "world_size: expected at least 2"),
        ({"world_size": 0}, "world_size: expected at least 2"),
        ({"batch_size": 0}, "batch_size: expected at least 1"),
        ({"hierarcaps_limit": 0, "hierarcaps_root": "x"}, "limit of 'hierarcaps'.*got 0"),
        ({"hierarcaps_limit": -3, "hierarcaps_root": "x"}, "limit of 'hierarcaps'.*got -3"),
        ({"limits": {"urban1k": 0}}, "limit of 'urban1k'"),
    ],
)
def test_sizes_that_would_evaluate_nothing_or_the_wrong_rows_are_refused(
    tmp_path, options, message
):
    with pytest.raises(ValueError, match=message):  # before any model is loaded
        ev.evaluate(tmp_path / "no-run", ["world-long"], output_dir=tmp_path / "out", **options)
