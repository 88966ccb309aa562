"""Every metric function checks its inputs: NaN, inf, empty and single-item inputs and ties,
per function, give either a refusal that names the argument (``ValueError``, never a
``ZeroDivisionError``, ``IndexError`` or NaN) or the documented value of that degenerate case."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from paperlib.geometry.lorentz import exp_map0
from paperlib.metrics import composition as C
from paperlib.metrics import diagnostics as D
from paperlib.metrics import hierarchy as H
from paperlib.metrics import items as I
from paperlib.metrics import monotonicity as M
from paperlib.metrics import retrieval as R
from paperlib.metrics import scores as S
from paperlib.metrics import zeroshot as Z

NAN, INF = math.nan, math.inf


def _points(*shape: int, seed: int = 0) -> torch.Tensor:
    """Lorentz space components of the given leading shape (dim 4), curvature 1."""
    generator = torch.Generator().manual_seed(seed)
    return exp_map0(0.5 * torch.randn(*shape, 4, generator=generator), 1.0)


def _with(tensor: torch.Tensor, value: float) -> torch.Tensor:
    out = tensor.clone()
    out.view(-1)[0] = value
    return out


def _pairs(n: int):
    return H.build_pep_pairs([f"root {i}" for i in range(n)], 4)


def _hier(n: int, value: float | None = None, curv=1.0):
    image, chain = _points(n), _points(n, 4, seed=1)
    return H.hierarcaps_metrics(
        image if value is None else _with(image, value), chain, "hyperbolic", curv=curv
    )


def _parents(value: float | None = None, n: int = 3) -> dict[str, torch.Tensor]:
    return {k: torch.full((n,), 0.5 if value is None else value) for k in I.PARENTS}


REFUSED = "refused"
CASES = [
    # (function, kind, call, expected: (REFUSED, regex) or a value)
    ("entailment_score", "nan", lambda: H.entailment_score(_with(_points(3), NAN), _points(3), 1.0), (REFUSED, "parent holds 1 non-finite")),
    ("entailment_score", "inf curvature", lambda: H.entailment_score(_points(3), _points(3), INF), (REFUSED, "curv must be > 0 .* and finite")),
    ("pep_metrics", "empty", lambda: H.pep_metrics(_points(0), _points(0, 4), _pairs(0), 1.0), (REFUSED, "PEP needs positive and negative pairs")),
    ("pep_metrics", "single", lambda: H.pep_metrics(_points(1), _points(1, 4), _pairs(1), 1.0), (REFUSED, "PEP needs positive and negative pairs")),
    ("pep_metrics", "inf curvature", lambda: H.pep_metrics(_points(3), _points(3, 4), _pairs(3), INF), (REFUSED, "curv must be > 0")),
    ("caption_radii", "nan", lambda: H.caption_radii(_with(_points(3, 4), NAN), "hyperbolic", curv=1.0), (REFUSED, "caption_features holds 1 non-finite")),
    ("d_corr", "nan", lambda: H.d_corr(_with(torch.rand(3, 4), NAN)), (REFUSED, "radii holds 1 non-finite")),
    ("d_corr", "inf", lambda: H.d_corr(_with(torch.rand(3, 4), INF)), (REFUSED, "radii holds 1 non-finite")),
    ("d_corr", "empty", lambda: H.d_corr(torch.zeros(0, 4)), (REFUSED, r"N >= 1 images")),
    ("d_corr", "ties", lambda: H.d_corr(torch.ones(3, 4)), (REFUSED, "every one of the 3 images are tied")),
    ("d_corr", "some ties", lambda: H.d_corr(torch.tensor([[1.0, 1, 1, 1], [1, 2, 3, 4]])), 1.0),
    ("d_corr", "single", lambda: H.d_corr(torch.tensor([[4.0, 3, 2, 1]])), -1.0),
    ("hierarchical_retrieval", "nan", lambda: H.hierarchical_retrieval(_with(torch.rand(2, 8), NAN), torch.rand(8), 4), (REFUSED, "similarity holds 1 non-finite")),
    ("hierarchical_retrieval", "inf radii", lambda: H.hierarchical_retrieval(torch.rand(2, 8), _with(torch.rand(8), INF), 4), (REFUSED, "radii holds 1 non-finite")),
    ("hierarchical_retrieval", "empty", lambda: H.hierarchical_retrieval(torch.zeros(0, 0), torch.zeros(0), 4), (REFUSED, "similarity must hold at least 1 image")),
    ("hierarchical_retrieval", "no levels", lambda: H.hierarchical_retrieval(torch.zeros(2, 0), torch.zeros(0), 0), (REFUSED, "n_levels must be an integer >= 1")),
    ("hierarchical_retrieval", "no thresholds", lambda: H.hierarchical_retrieval(torch.rand(2, 8), torch.rand(8), 4, 0), (REFUSED, "n_thresholds must be an integer >= 1")),
    ("hierarchical_retrieval", "ties", lambda: H.hierarchical_retrieval(torch.ones(2, 8), torch.ones(8), 4), {"precision": 0.5, "recall": 0.125}),
    ("hierarchical_retrieval", "single", lambda: H.hierarchical_retrieval(torch.tensor([[0.0, 1, 2, 3]]), torch.tensor([1.0, 2, 3, 4]), 4), {"precision": 1.0, "recall": 1.0}),
    ("hierarchical_retrieval", "nothing predicted", lambda: np.concatenate(H.hierarchical_retrieval_items(torch.rand(2, 8), torch.rand(8), 4, removed=np.ones((2, 8), bool))).tolist(), [0.0] * 4),
    ("ambiguous_captions", "nan", lambda: H.ambiguous_captions(_with(torch.rand(2, 2), NAN), list("abcdefgh"), 4), (REFUSED, "image_similarity holds 1 non-finite")),
    ("ambiguous_captions", "empty", lambda: H.ambiguous_captions(torch.zeros(0, 0), [], 4), (REFUSED, "image_similarity must hold at least 1 image")),
    ("ambiguous_captions", "texts short", lambda: H.ambiguous_captions(torch.rand(2, 2), ["a"], 4), (REFUSED, "caption_texts hold N\\*L texts")),
    ("hierarcaps_metrics", "nan", lambda: _hier(3, NAN), (REFUSED, "image_features holds 1 non-finite")),
    ("hierarcaps_metrics", "inf curvature", lambda: _hier(3, curv=INF), (REFUSED, "curv must be > 0")),
    ("hierarcaps_metrics", "empty", lambda: H.hierarcaps_metrics(_points(0), _points(0, 4), "hyperbolic", curv=1.0), (REFUSED, "caption_features must hold at least 1")),
    ("pair_scores", "empty", lambda: C.pair_scores(torch.zeros(0, 2, 4), torch.zeros(0, 2, 4)), (REFUSED, "image_features must hold at least 1 query")),
    ("cola_accuracy", "empty", lambda: C.cola_accuracy(torch.zeros(0, 2, 4), torch.zeros(0, 2, 4)), (REFUSED, "at least 1 query")),
    ("cola_accuracy", "nan", lambda: C.cola_accuracy(_with(torch.rand(2, 2, 4), NAN), torch.rand(2, 2, 4)), (REFUSED, "image_features holds 1")),
    ("cola_accuracy", "ties", lambda: C.cola_accuracy(torch.ones(2, 2, 4), torch.ones(2, 2, 4)), 0.0),
    ("cola_correct", "nan", lambda: C.cola_correct(_with(torch.rand(3, 2, 2), NAN)), (REFUSED, "scores holds 1 non-finite")),
    ("segment_scores", "empty", lambda: M.segment_scores(torch.zeros(0, 4), []), (REFUSED, "image_features must hold at least 1 image")),
    ("segment_scores", "no segment", lambda: M.segment_scores(torch.rand(1, 4), [torch.zeros(0, 4)]), (REFUSED, r"segment_features\[0\] must be \(K, dim\) with K >= 1")),
    ("strict_monotone_accuracy", "nan", lambda: M.strict_monotone_accuracy(_with(torch.rand(2, 3), NAN)), (REFUSED, r"scores\[0\] holds non-finite")),
    ("strict_monotone_accuracy", "empty", lambda: M.strict_monotone_accuracy(torch.zeros(0, 3)), (REFUSED, "scores is empty")),
    ("strict_monotone_accuracy", "ties", lambda: M.strict_monotone_accuracy(torch.ones(2, 3)), 0.0),
    ("himo_at_k", "ties", lambda: M.himo_at_k(torch.ones(2, 4)), 0.0),
    ("himo_at_k", "single score", lambda: M.himo_at_k(torch.rand(2, 1)), (REFUSED, r"scores\[0\] must hold K >= 2")),
    ("semantic_stability_index", "inf", lambda: M.semantic_stability_index(_with(torch.rand(3), INF), torch.rand(3)), (REFUSED, "must be finite for SSI")),
    ("semantic_stability_index", "empty", lambda: M.semantic_stability_index(torch.zeros(0), torch.zeros(0)), (REFUSED, "equal-length 1-D")),
    ("semantic_stability_items", "nan", lambda: M.semantic_stability_items(_with(torch.rand(3), NAN), torch.rand(3)), (REFUSED, "must be finite for SSI")),
    ("semantic_stability_index", "zero score", lambda: M.semantic_stability_index(torch.zeros(3), torch.rand(3)), (REFUSED, "contains a zero score")),
    ("recall_at_k", "nan", lambda: R.recall_at_k(torch.tensor([0.0, NAN])), (REFUSED, "ranks holds 1 non-finite")),
    ("recall_at_k", "fractional", lambda: R.recall_at_k(torch.tensor([0.5, 1.0])), (REFUSED, "ranks must be whole numbers >= 0")),
    ("recall_at_k", "empty", lambda: R.recall_at_k(torch.zeros(0, dtype=torch.long)), (REFUSED, "1-D tensor of query ranks")),
    ("retrieval_metrics", "empty", lambda: R.retrieval_metrics(torch.zeros(0, 4), torch.zeros(0, 4)), (REFUSED, "num_images")),
    ("retrieval_metrics", "nan", lambda: R.retrieval_metrics(_with(torch.rand(3, 4), NAN), torch.rand(3, 4)), (REFUSED, "image_features holds 1")),
    ("retrieval_metrics", "ties", lambda: R.retrieval_metrics(torch.ones(3, 4), torch.ones(3, 4), ks=(1,)), {"image_retrieval_recall@1": 0.0, "text_retrieval_recall@1": 0.0}),
    ("retrieval_metrics", "single", lambda: R.retrieval_metrics(torch.rand(1, 4), torch.rand(1, 4), ks=(1,)), {"image_retrieval_recall@1": 1.0, "text_retrieval_recall@1": 1.0}),
    ("retrieval_metrics_from_scores", "inf", lambda: R.retrieval_metrics_from_scores(_with(torch.rand(3, 3), INF)), (REFUSED, "scores holds 1 non-finite")),
    ("retrieval_metrics_from_scores", "empty", lambda: R.retrieval_metrics_from_scores(torch.zeros(0, 3)), (REFUSED, "at least one of each")),
    ("class_embeddings", "no prompts", lambda: Z.class_embeddings(torch.rand(2, 0, 4), "euclidean"), (REFUSED, "at least one class, prompt and dim")),
    ("class_embeddings", "empty", lambda: Z.class_embeddings(torch.rand(0, 3, 4), "euclidean"), (REFUSED, "at least one class, prompt and dim")),
    ("class_embeddings", "inf curvature", lambda: Z.class_embeddings(_points(2, 3), "hyperbolic", curv=INF), (REFUSED, "curv must be > 0")),
    ("zero_shot_metrics", "nan labels", lambda: Z.zero_shot_metrics(torch.rand(3, 2), torch.tensor([0.0, NAN, 1.0])), (REFUSED, "labels holds 1 non-finite")),
    ("zero_shot_metrics", "single class", lambda: Z.zero_shot_metrics(torch.rand(3, 1), torch.zeros(3, dtype=torch.long))["acc1"], 1.0),
    ("label_ranks", "nan", lambda: Z.label_ranks(_with(torch.rand(2, 2), NAN), torch.zeros(2, dtype=torch.long)), (REFUSED, "scores holds 1 non-finite")),
    ("label_ranks", "empty", lambda: Z.label_ranks(torch.zeros(0, 2), torch.zeros(0, dtype=torch.long)), (REFUSED, "scores must hold at least 1 image")),
    ("retrieval_items", "empty", lambda: I.retrieval_items(torch.zeros(0, 0)), (REFUSED, "at least one of each")),
    ("retrieval_items", "not square", lambda: I.retrieval_items(torch.rand(2, 3)), (REFUSED, "1:1 retrieval needs a square score matrix")),
    ("retrieval_items", "nan", lambda: I.retrieval_items(_with(torch.rand(2, 2), NAN)), (REFUSED, "scores holds 1 non-finite")),
    ("pep_items", "single", lambda: I.pep_items(_points(1), _points(1, 4), ["a"], 1.0), (REFUSED, "image 0 \\(of 1\\) has none")),
    ("pep_items", "one root", lambda: I.pep_items(_points(3), _points(3, 4), ["a"] * 3, 1.0), (REFUSED, "needs a negative for every image")),
    ("pep_items", "inf curvature", lambda: I.pep_items(_points(3), _points(3, 4), list("abc"), INF), (REFUSED, "curv must be > 0")),
    ("pep_items", "nan", lambda: I.pep_items(_with(_points(3), NAN), _points(3, 4), list("abc"), 1.0), (REFUSED, "image holds 1 non-finite")),
    ("parent_items", "nan", lambda: I.parent_items(_parents(NAN), 1.0), (REFUSED, "short_caption holds 3 non-finite")),
    ("parent_items", "zero curvature", lambda: I.parent_items(_parents(), 0.0), (REFUSED, "curv must be > 0")),
    ("item_means", "nan", lambda: I.item_means({"world-long/i2t_hit1": np.array([1.0, NAN])}), (REFUSED, r"items\['world-long/i2t_hit1'\] holds 1 non-finite")),
    ("item_means", "empty", lambda: I.item_means({"a": np.zeros(0), "b": np.ones(2)}), {"b": 1.0}),
    ("aperture_diagnostics", "nan", lambda: D.aperture_diagnostics({"image": _with(_points(3), NAN), "text": _points(3)}, 1.0), (REFUSED, "image holds 1 non-finite")),
    ("aperture_diagnostics", "empty", lambda: D.aperture_diagnostics({"image": _points(0), "text": _points(0)}, 1.0), (REFUSED, "image must be a non-empty")),
    ("aperture_diagnostics", "zero curvature", lambda: D.aperture_diagnostics({"image": _points(3)}, 0.0), (REFUSED, "curv must be > 0")),
    ("aperture_diagnostics", "inf curvature", lambda: D.aperture_diagnostics({"image": _points(3)}, INF), (REFUSED, "curv must be > 0")),
    ("aperture_diagnostics", "zero K", lambda: D.aperture_diagnostics({"image": _points(3)}, 1.0, min_radius=0.0), (REFUSED, "min_radius")),
    ("aperture_diagnostics", "single", lambda: D.aperture_diagnostics({"image": _points(1)}, 1.0)["image/norm_std"], 0.0),
    ("pairwise_scores", "inf curvature", lambda: S.pairwise_scores(_points(3), _points(3), "hyperbolic", INF), (REFUSED, "curv must be > 0")),
    ("paired_scores", "inf curvature", lambda: S.paired_scores("hyperbolic", INF, _points(3), _points(3)), (REFUSED, "curv must be > 0")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("function", "kind", "call", "expected"), CASES, ids=[f"{f}-{k}" for f, k, _, _ in CASES]
)
def test_each_metric_refuses_by_name_or_gives_its_documented_value(function, kind, call, expected):
    """The cases: several functions of hierarchy, composition, monotonicity and diagnostics
    returned numbers or NaN for such inputs, or raised ``ZeroDivisionError``/``IndexError``."""
    if isinstance(expected, tuple) and expected[0] == REFUSED:
        with pytest.raises(ValueError, match=expected[1]):
            call()
        return
    value = call()
    if isinstance(value, dict):
        assert {k: value[k] for k in expected} == pytest.approx(expected)
    else:
        assert value == pytest.approx(expected)


def test_every_public_metric_function_has_its_cases():
    modules = (C, D, H, I, M, R, S, Z)
    public = {
        name
        for module in modules
        for name in getattr(module, "__all__", dir(module))
        if callable(getattr(module, name, None))
        and getattr(getattr(module, name), "__module__", "") == module.__name__
        and not name.startswith("_")
        and not isinstance(getattr(module, name), type)
    }
    helpers = {"check_geometry", "require_finite", "require_finite_values", "require_rows",
               "require_count", "build_pep_pairs", "pep_pairs_at_level", "split_sentences",
               "cumulative_segments", "inject_noise", "text_to_image_index", "positive_ranks",
               "same_text_positives", "checked_positive", "retrieval_ranks",
               "hierarchical_retrieval_items", "chain_radii_and_scores", "segment_score_rows",
               "k_cut_scores", "rise_items", "ssi_items", "cola_items", "monotonicity_items",
               "hierarchy_items", "world_items", "monotonicity_correlations"}  # fmt: skip
    covered = {f for f, _, _, _ in CASES}
    assert public - helpers <= covered, sorted(public - helpers - covered)
