"""Hierarchy metrics on precomputed features: ARGENT's PEP (``docs/methods/argent.md#pep``) and
HierarCaps' d_corr and hierarchical retrieval precision/recall
(``docs/methods/argent.md#hierarcaps``).

Feature layout: images (N, dim); caption chains (N, L, dim), level 0 the most general
(HierarCaps: L = 4). ``geometry="euclidean"`` expects L2-normalised CLIP features and a
``root`` (the empty-string embedding); ``geometry="hyperbolic"`` expects Lorentz space
components, the root being the origin.

Inputs are checked first (``metrics.scores``): NaN or inf features, scores or radii are
refused by name, and so are inputs too small to measure (no image, fewer than 2 levels, no
negative pair). Degenerate inputs that are measurable have a value: an image whose radii are
all tied has no Kendall τ and is left out of d_corr (refused when every image is tied); a
threshold whose caption pool is empty predicts nothing, and an image that predicts nothing has
precision 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import kendalltau
from sklearn.metrics import average_precision_score, roc_auc_score
from torch import Tensor

from paperlib.data.loaders import split_chain  # re-exported: the chain rule of HierarCaps
from paperlib.geometry.lorentz import dist_to_origin, exterior_angle
from paperlib.metrics.scores import (
    Geometry,
    pairwise_scores,
    require_count,
    require_finite,
    require_rows,
)

__all__ = [
    "PEPPairs",
    "build_pep_pairs",
    "caption_radii",
    "d_corr",
    "entailment_score",
    "chain_radii_and_scores",
    "hierarchical_retrieval",
    "hierarcaps_metrics",
    "pep_metrics",
    "pep_pairs_at_level",
    "split_chain",
]


# --------------------------------------------------------------------------- PEP


def entailment_score(parent: Tensor, child: Tensor, curv: float | Tensor) -> Tensor:
    """``p_Ent = max(0, 1 − 2φ/π)`` with φ the exterior angle at the parent, (batch,); no
    pairs give no scores."""
    require_finite(parent=parent, child=child)
    return (1.0 - 2.0 * exterior_angle(parent, child, curv) / math.pi).clamp_min(0.0)


@dataclass
class PEPPairs:
    """Scored (caption → image) pairs: ``image`` row, caption ``row`` and ``level``, label."""

    image: np.ndarray
    row: np.ndarray
    level: np.ndarray
    label: np.ndarray


def build_pep_pairs(
    roots: Sequence[str],
    n_levels: int = 4,
    kept: Sequence[int] | None = None,
    pool_size: int = 100,
    seed: int = 0,
    negatives: str = "per-image",
    pool: Sequence[int] | None = None,
) -> PEPPairs:
    """Positives and negatives for PEP (``docs/methods/argent.md#pep``; our reproducible
    stand-in for the paper's Qwen3-VL cleaning).

    Images = the rows in ``kept`` (default: all rows; pass e.g. a cleaned id list). For image
    i, positives are its ``n_levels`` captions; negatives are finest (last-level) captions of
    other images whose most general caption ``roots[j]`` differs from ``roots[i]`` (case- and
    space-insensitive): a different root concept makes the caption unlikely to describe image
    i ("low ambiguity"). ``negatives="per-image"`` draws ``pool_size`` such images per image;
    ``"shared"`` uses one pool for every image (the paper's fixed pool of 100 captions): the
    rows ``pool`` when given, else one draw of ``pool_size`` kept rows; each image skips the
    pool rows that are ineligible for it. Draws are uniform without replacement from
    ``numpy.random.default_rng(seed)``, images in the order given; all rows when fewer are
    eligible.
    """
    require_count("n_levels", n_levels)
    require_count("pool_size", pool_size, 0)
    rows = _checked_rows(kept, len(roots), "kept")
    keys = np.array([" ".join(r.lower().split()) for r in roots])
    rng = np.random.default_rng(seed)
    shared = _shared_pool(negatives, pool, rows, pool_size, rng, len(roots))
    image, row, level, label = [], [], [], []
    for i in rows:
        image += [i] * n_levels
        row += [i] * n_levels
        level += list(range(n_levels))
        label += [1] * n_levels
        candidates = rows if shared is None else shared
        eligible = candidates[(candidates != i) & (keys[candidates] != keys[i])]
        chosen = (
            eligible
            if shared is not None
            else rng.choice(eligible, size=min(pool_size, eligible.size), replace=False)
        )
        image += [i] * chosen.size
        row += chosen.tolist()
        level += [n_levels - 1] * chosen.size
        label += [0] * chosen.size
    return PEPPairs(*(np.asarray(v, dtype=int) for v in (image, row, level, label)))


def _checked_rows(ids: Sequence[int] | None, n: int, name: str) -> np.ndarray:
    """``ids`` (default: every row) as an int array; ValueError naming ``name`` when out of range."""
    rows = np.arange(n) if ids is None else np.asarray(ids, dtype=int).reshape(-1)
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"{name} rows must be in [0, {n}); got {rows.min()}..{rows.max()}")
    return rows


def _shared_pool(
    negatives: str,
    pool: Sequence[int] | None,
    rows: np.ndarray,
    pool_size: int,
    rng: np.random.Generator,
    n: int,
) -> np.ndarray | None:
    """The one negative pool of ``negatives="shared"`` (None for per-image draws)."""
    if negatives not in ("per-image", "shared"):
        raise ValueError(f"negatives must be 'per-image' or 'shared'; got {negatives!r}")
    if negatives == "per-image":
        if pool is not None:
            raise ValueError("a given negative pool needs negatives='shared'")
        return None
    if pool is not None:
        return _checked_rows(pool, n, "pool")
    return rng.choice(rows, size=min(pool_size, rows.size), replace=False)


def pep_pairs_at_level(pairs: PEPPairs, level: int) -> PEPPairs:
    """The pairs with positives at chain ``level`` (0-based) only; negatives unchanged.

    Negatives are finest-level captions, so with positives at every level a scorer that
    orders captions by generality alone separates them; positives at the finest level
    (``level = n_levels − 1``) make PEP depend on the image."""
    keep = (pairs.label == 0) | (pairs.level == level)
    return PEPPairs(pairs.image[keep], pairs.row[keep], pairs.level[keep], pairs.label[keep])


def pep_metrics(
    image_features: Tensor, caption_features: Tensor, pairs: PEPPairs, curv: float | Tensor
) -> dict[str, float]:
    """PEP AUC-ROC and AP (sklearn) of ``p_Ent(caption → image)`` over ``pairs``."""
    require_finite(image_features=image_features, caption_features=caption_features)
    if set(np.unique(pairs.label).tolist()) != {0, 1}:
        raise ValueError(
            "PEP needs positive and negative pairs; got "
            f"{len(pairs.label)} pairs with labels {sorted(set(pairs.label.tolist()))}"
        )
    parent = caption_features[torch.as_tensor(pairs.row), torch.as_tensor(pairs.level)]
    child = image_features[torch.as_tensor(pairs.image)]
    scores = entailment_score(parent, child, curv).detach().cpu().double().numpy()
    return {
        "pep_auc": float(roc_auc_score(pairs.label, scores)),
        "pep_ap": float(average_precision_score(pairs.label, scores)),
    }


# ---------------------------------------------------------------------- HierarCaps


def caption_radii(
    caption_features: Tensor,
    geometry: Geometry,
    root: Tensor | None = None,
    curv: float | Tensor | None = None,
) -> Tensor:
    """Radius of every caption (..., dim) → (...): ``‖e − root‖`` or ``d_L(O, e)``."""
    require_finite(caption_features=caption_features)
    if geometry == "euclidean":
        if root is None:
            raise ValueError("geometry='euclidean' needs root (the empty-string embedding)")
        require_finite(root=root)
        return (caption_features - root).norm(dim=-1)
    if geometry == "hyperbolic":
        if curv is None:
            raise ValueError("geometry='hyperbolic' needs curv")
        return dist_to_origin(caption_features, curv)
    raise ValueError(f"geometry must be 'euclidean' or 'hyperbolic'; got {geometry!r}")


def d_corr(radii: Tensor) -> float:
    """Mean over images of Kendall τ (scipy) between the L radii (N, L) and 1..L; an image
    whose L radii are all equal has no τ and is left out (ValueError when every image is)."""
    require_finite(radii=radii)
    if radii.ndim != 2 or radii.shape[1] < 2 or radii.shape[0] < 1:
        raise ValueError(
            f"d_corr needs radii of (N >= 1 images, L >= 2 levels); got {tuple(radii.shape)}"
        )
    levels = np.arange(1, radii.shape[1] + 1)
    rows = radii.detach().cpu().double().numpy()
    taus = [kendalltau(r, levels).statistic for r in rows]  # NaN where a row is tied
    if all(np.all(r == r[0]) for r in rows):
        raise ValueError(
            f"d_corr: the radii of every one of the {len(rows)} images are tied across their "
            "levels, so no Kendall τ exists; expected captions at different radii"
        )
    return float(np.nanmean(taus))


def hierarchical_retrieval(
    similarity: Tensor, radii: Tensor, n_levels: int, n_thresholds: int = 50,
    caption_texts: list[str] | None = None,
) -> dict[str, float]:  # fmt: skip
    """Hierarchical retrieval precision/recall (``docs/methods/argent.md#hierarcaps``), means
    over images of :func:`hierarchical_retrieval_items` (hits by text with ``caption_texts``, else by index)."""
    precision, recall = hierarchical_retrieval_items(
        similarity, radii, n_levels, n_thresholds, caption_texts=caption_texts
    )
    return {"precision": float(np.mean(precision)), "recall": float(np.mean(recall))}


def hierarchical_retrieval_items(
    similarity: Tensor,
    radii: Tensor,
    n_levels: int,
    n_thresholds: int = 50,
    caption_texts: list[str] | None = None,
    removed: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-image hierarchical retrieval precision and recall
    (``docs/methods/argent.md#hierarcaps``).

    ``similarity`` (N, N·L): image i against every caption, caption ``m`` belonging to
    image ``m // L`` at level ``m % L``; ``radii`` (N·L,). Thresholds: ``n_thresholds``
    evenly spaced values from the smallest to the largest caption radius. At each threshold
    the prediction is the most similar caption with radius ≤ threshold; ``preds`` = set of
    distinct predictions (among equally similar captions, the one of smaller radius, then
    of lower index). precision = |preds ∩ GT| / |preds| (0 for an image that predicts
    nothing), recall = (GT levels found)/L.

    ``caption_texts`` (N·L strings): predictions and the image's chain are compared as texts
    (HierarCaps' rule: a caption string in several chains is a hit for each); None compares
    caption indices. ``removed`` (N, N·L) bool: captions left out of image i's pool (see
    :func:`ambiguous_captions`); a threshold whose pool is empty predicts nothing.
    """
    _check_retrieval_inputs(similarity, radii, n_levels, n_thresholds, caption_texts, removed)
    n_images, n_captions = similarity.shape
    sim = similarity.detach().cpu().double().numpy()
    if removed is not None:
        sim = np.where(removed, -np.inf, sim)
    rad = radii.detach().cpu().double().numpy()
    order = np.argsort(rad, kind="stable")
    sorted_sim, sorted_rad = sim[:, order], rad[order]
    thresholds = np.linspace(sorted_rad[0], sorted_rad[-1], n_thresholds)
    counts = np.searchsorted(sorted_rad, thresholds, side="right")
    best = [np.argmax(sorted_sim[:, :k], axis=1) for k in counts]
    picks = np.stack([order[b] for b in best], axis=1)
    found = np.stack([np.isfinite(sorted_sim[np.arange(n_images), b]) for b in best], axis=1)
    key = caption_texts if caption_texts is not None else list(range(n_captions))
    precision, recall = np.zeros(n_images), np.zeros(n_images)
    for i, (row, ok) in enumerate(zip(picks, found)):
        preds = {key[m] for m in row[ok].tolist()}
        own = [key[i * n_levels + level] for level in range(n_levels)]
        precision[i] = len(preds & set(own)) / len(preds) if preds else 0.0
        recall[i] = sum(c in preds for c in own) / n_levels
    return precision, recall


def _check_retrieval_inputs(
    similarity: Tensor,
    radii: Tensor,
    n_levels: int,
    n_thresholds: int,
    caption_texts: list[str] | None,
    removed: np.ndarray | None,
) -> None:
    """:func:`hierarchical_retrieval_items`' inputs: finite, at least one image, counts ≥ 1,
    shapes that agree; ValueError naming the argument otherwise."""
    require_finite(similarity=similarity, radii=radii)
    require_count("n_levels", n_levels)
    require_count("n_thresholds", n_thresholds)
    if similarity.ndim != 2:
        raise ValueError(f"similarity must be (N, N*L); got shape {tuple(similarity.shape)}")
    require_rows("similarity", similarity.shape, 1, "image")
    n_images, n_captions = similarity.shape
    if n_captions != n_images * n_levels or radii.shape != (n_captions,):
        raise ValueError(
            f"similarity must be (N, N*L) and radii (N*L,); got {tuple(similarity.shape)}, "
            f"{tuple(radii.shape)} with L={n_levels}"
        )
    if caption_texts is not None and len(caption_texts) != n_captions:
        raise ValueError(
            f"caption_texts must hold one text per caption ({n_captions}); got {len(caption_texts)}"
        )
    if removed is not None and np.shape(removed) != (n_images, n_captions):
        raise ValueError(
            f"removed must be a (N, N*L) = ({n_images}, {n_captions}) mask; got {np.shape(removed)}"
        )


def ambiguous_captions(
    image_similarity: Tensor, caption_texts: list[str], n_levels: int, neighbours: int = 10
) -> np.ndarray:
    """Table 1 of ARGENT's cleaning rule: for image i, the captions of its ``neighbours`` most
    similar other images (by ``image_similarity`` (N, N)) whose text is not in i's own chain,
    as a bool mask (N, N·L) for :func:`hierarchical_retrieval_items`'s ``removed``. The paper
    removes "potentially ambiguous captions of the top-10 similar images" without naming the
    image similarity; here it is the evaluated model's own (a named choice)."""
    require_finite(image_similarity=image_similarity)
    require_count("n_levels", n_levels)
    require_count("neighbours", neighbours, 0)
    require_rows("image_similarity", image_similarity.shape, 1, "image")
    n = image_similarity.shape[0]
    if image_similarity.shape != (n, n) or len(caption_texts) != n * n_levels:
        raise ValueError(
            f"image_similarity must be square (N, N) and caption_texts hold N*L texts; got "
            f"{tuple(image_similarity.shape)} and {len(caption_texts)} texts with L={n_levels}"
        )
    sim = image_similarity.detach().cpu().double().numpy().copy()
    np.fill_diagonal(sim, -np.inf)
    top = np.argsort(-sim, axis=1, kind="stable")[:, :neighbours]
    removed = np.zeros((n, n * n_levels), dtype=bool)
    for i, others in enumerate(top):
        own = set(caption_texts[i * n_levels : (i + 1) * n_levels])
        for j in others.tolist():
            for m in range(j * n_levels, (j + 1) * n_levels):
                removed[i, m] = caption_texts[m] not in own
    return removed


def hierarcaps_metrics(
    image_features: Tensor,
    caption_features: Tensor,
    geometry: Geometry,
    root: Tensor | None = None,
    curv: float | Tensor | None = None,
    n_thresholds: int = 50,
    caption_texts: list[str] | None = None,
) -> dict[str, float]:
    """d_corr and hierarchical retrieval P/R for images (N, dim) and chains (N, L, dim);
    with ``caption_texts`` (N·L, row-major) predictions are compared with the chain as texts,
    HierarCaps' rule (``docs/methods/argent.md#hierarcaps``), else by caption index."""
    require_finite(image_features=image_features, caption_features=caption_features)
    if caption_features.ndim != 3:
        raise ValueError(
            f"caption_features must be (N, L, dim) chains; got {tuple(caption_features.shape)}"
        )
    n_images, n_levels, dim = caption_features.shape
    require_rows("caption_features", caption_features.shape, 1, "image's chain")
    if image_features.shape != (n_images, dim):
        raise ValueError(
            f"image_features must be (N, dim) = ({n_images}, {dim}); got "
            f"{tuple(image_features.shape)}"
        )
    radii, similarity = chain_radii_and_scores(
        image_features, caption_features, geometry, root, curv
    )
    return {
        "d_corr": d_corr(radii),
        **hierarchical_retrieval(
            similarity, radii.reshape(-1), n_levels, n_thresholds, caption_texts
        ),
    }


def chain_radii_and_scores(
    image_features: Tensor,
    caption_features: Tensor,
    geometry: Geometry,
    root: Tensor | None,
    curv: float | Tensor | None,
) -> tuple[Tensor, Tensor]:
    """The radius of every chain caption (N, L) and the image × caption scores (N, N·L,
    captions row-major): the inputs of hierarchical retrieval."""
    n_images, n_levels, dim = caption_features.shape
    radii = caption_radii(caption_features, geometry, root, curv)
    flat = caption_features.reshape(n_images * n_levels, dim)
    return radii, pairwise_scores(image_features, flat, geometry, curv)
