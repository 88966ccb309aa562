"""Per-item values of the world benchmarks: one number per test item whose mean is the metric.

The study's intervals resample test items (a bootstrap over the held-out set), so every metric
that a claim tests is written here as a vector over items:

- retrieval: ``hit@k`` per image query (I2T) or text query (T2I), pessimistic ties;
- HiMo@2 / HiMo@3: 1 when an image's scores strictly rise over its 2 / 3 segments;
- HiMo@K: the image's Pearson ρ(k, s_k) over all its sentence prefixes (``himoK``), or over
  exactly K cumulative segments (``himoK4``, ``himoK7``, ``himoK10``: images with ≥ K sentences,
  segments cut by ``paperlib.segments``);
- SSI: ``100 · |s_noisy − s| / |s|`` per image;
- COLA: 1 when both captions of a pair pick their own image;
- zero-shot: 1 when the image's label scores above every other class (a tie is a miss), per
  taxonomy level;
- PEP: per image, the fraction of (positive, negative) caption pairs ordered correctly by
  ``1 − 2φ/π`` (the Mann-Whitney AUC of that image; ties count ½; ``p_Ent`` without its clamp
  at 0, which orders pairs the same wherever ``p_Ent > 0`` and would otherwise tie every pair
  beyond the right angle — our choice), with the image's positives at
  one chain level (``pep_auc_L1`` .. ``pep_auc_L4``; ``pep_auc_finest`` = level 4, the only
  level that negatives share, so generality alone cannot separate them) or at all levels
  (``pep_auc_all``, the paper's positives);
- hierarchical retrieval: precision and recall per image over the whole caption pool and with
  the image's ambiguous captions removed (``hier_*_cleaned``, ARGENT's Table 1);
- aperture: 1 when a text's space norm lies below ``2K/√c`` (the half-aperture is undefined).

:func:`item_means` turns them back into the metrics; its values equal the aggregate metrics
of ``engine.evaluation`` (tested), except PEP, whose pooled AUC is not a mean over images.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import Tensor

from paperlib.geometry.lorentz import aperture_radius, exterior_angle
from paperlib.metrics import monotonicity, zeroshot
from paperlib.metrics.composition import cola_correct
from paperlib.metrics.hierarchy import (
    ambiguous_captions,
    build_pep_pairs,
    chain_radii_and_scores,
    hierarchical_retrieval_items,
)
from paperlib.metrics.retrieval import checked_positive, positive_ranks, same_text_positives
from paperlib.metrics.scores import (
    paired_scores,
    pairwise_scores,
    require_finite,
    require_finite_values,
)
from paperlib.segments import prefix_ends

HIMO_K_CUTS = (4, 7, 10)  # HiMo@K with the caption cut into exactly K cumulative segments

__all__ = ["retrieval_items", "world_items", "item_means", "pep_items"]


def retrieval_items(scores: Tensor, positive: Tensor | None = None, ks=(1, 5)) -> dict[str, Any]:
    """``i2t_hit{k}`` (per image) and ``t2i_hit{k}`` (per text) from an (images, texts) matrix
    (checked as ``retrieval.checked_positive`` checks it)."""
    positive = checked_positive(scores, positive)
    i2t = positive_ranks(scores.float(), positive)
    t2i = positive_ranks(scores.float().T, positive.T)
    out = {}
    for k in ks:
        out[f"i2t_hit{k}"] = (i2t < k).numpy().astype(np.float32)
        out[f"t2i_hit{k}"] = (t2i < k).numpy().astype(np.float32)
    return out


def segment_score_rows(emb: dict[str, Any], geometry: str, curv: float | None) -> list[np.ndarray]:
    """Per image, its scores with every sentence prefix of its caption (``segments_all``)."""
    lengths = emb["segments_all_lengths"]
    flat = paired_scores(
        geometry, curv, emb["image"].repeat_interleave(lengths, dim=0), emb["segments_all"]
    )
    return [p.double().numpy() for p in flat.split(lengths.tolist())]


def k_cut_scores(prefix_scores: np.ndarray, k: int) -> np.ndarray:
    """Scores of the K cumulative segments, picked from the scores of all sentence prefixes."""
    return prefix_scores[np.asarray(prefix_ends(len(prefix_scores), k)) - 1]


def rise_items(emb: dict[str, Any], geometry: str, curv: float | None, k: int) -> np.ndarray:
    """HiMo@k per eligible image: 100 when its scores strictly rise over its k segments, else 0."""
    rows = emb[f"segments{k}_rows"]
    s = paired_scores(geometry, curv, emb["image"][rows][:, None, :], emb[f"segments{k}"])
    return (100.0 * (s.diff(dim=1) > 0).all(dim=1).double()).numpy()


def ssi_items(emb: dict[str, Any], geometry: str, curv: float | None) -> np.ndarray:
    """SSI per image (``metrics.monotonicity.semantic_stability_items``)."""
    clean = paired_scores(geometry, curv, emb["image"], emb["caption"])
    noisy = paired_scores(geometry, curv, emb["image"], emb["noisy_caption"])
    return monotonicity.semantic_stability_items(clean, noisy)


def cola_items(emb: dict[str, Any], geometry: str, curv: float | None) -> np.ndarray:
    """COLA per pair: 1 when both captions pick their own image (``composition.cola_correct``)."""
    img, txt = emb["cola_image"], emb["cola_text"]
    scores = paired_scores(geometry, curv, img[:, :, None, :], txt[:, None, :, :])
    return cola_correct(scores).double().numpy()


def monotonicity_items(emb: dict[str, Any], geometry: str, curv: float | None) -> dict[str, Any]:
    """HiMo@2, HiMo@3 (strict rise, 0/100), HiMo@K (ρ per image) and SSI per image."""
    out: dict[str, Any] = {f"himo{k}": rise_items(emb, geometry, curv, k) for k in (2, 3)}
    all_rows = segment_score_rows(emb, geometry, curv)
    out["himoK"] = monotonicity.monotonicity_correlations([r for r in all_rows if len(r) > 1])
    for k in HIMO_K_CUTS:  # the K-cut prefixes are a subset of all sentence prefixes
        cut = [k_cut_scores(r, k) for r in all_rows if len(r) >= k]
        out[f"himoK{k}"] = monotonicity.monotonicity_correlations(cut) if cut else np.zeros(0)
    out["ssi"] = ssi_items(emb, geometry, curv)
    return out


def pep_items(image: Tensor, chain: Tensor, roots: list[str], curv: float) -> dict[str, Any]:
    """Per-image PEP AUCs of the unclamped score (see module docstring) over the study's pair rule
    (``metrics.hierarchy.build_pep_pairs``: 100 finest-level negatives per image); an image
    without a negative (every other image shares its root) has no AUC and is refused by name."""
    require_finite(image=image, chain=chain)
    if chain.ndim != 3 or image.shape[0] != chain.shape[0] or len(roots) != image.shape[0]:
        raise ValueError(
            f"image (N, dim), chain (N, L, dim) and roots (N) must share N; got "
            f"{tuple(image.shape)}, {tuple(chain.shape)}, {len(roots)} roots"
        )
    pairs = build_pep_pairs(roots, chain.shape[1], pool_size=min(100, len(roots) - 1))
    lonely = sorted(set(range(len(roots))) - set(pairs.image[pairs.label == 0].tolist()))
    if lonely:
        raise ValueError(
            f"PEP per image needs a negative for every image: image {lonely[0]} (of "
            f"{len(roots)}) has none, no other image having another root caption"
        )
    parent = chain[torch.as_tensor(pairs.row), torch.as_tensor(pairs.level)]
    child = image[torch.as_tensor(pairs.image)]
    scores = (1.0 - 2.0 * exterior_angle(parent, child, curv) / math.pi).double().numpy()
    n, levels = image.shape[0], chain.shape[1]
    out = {}
    for name, keep_level in [("all", None)] + [(f"L{k + 1}", k) for k in range(levels)]:
        aucs = np.empty(n)
        for i in range(n):
            mine = pairs.image == i
            pos = mine & (pairs.label == 1)
            if keep_level is not None:
                pos &= pairs.level == keep_level
            neg = scores[mine & (pairs.label == 0)]
            diff = scores[pos][:, None] - neg[None, :]
            aucs[i] = float(((diff > 0) + 0.5 * (diff == 0)).mean())
        out[f"pep_auc_{name}"] = aucs
    out["pep_auc_finest"] = out[f"pep_auc_L{levels}"]
    return out


def hierarchy_items(
    emb: dict[str, Any], geometry: str, curv: float | None, neighbours: int = 10
) -> dict[str, np.ndarray]:
    """Hierarchical retrieval precision and recall per image
    (``docs/methods/argent.md#hierarcaps``; captions compared as texts, ``emb["chain_texts"]``), over the whole caption pool and with each image's ambiguous
    captions removed (``_cleaned``: ARGENT's Table 1, :func:`hierarchy.ambiguous_captions`)."""
    chain, texts = emb["chain"], list(emb["chain_texts"])
    levels = chain.shape[1]
    radii, scores = chain_radii_and_scores(emb["image"], chain, geometry, emb.get("empty"), curv)
    radii = radii.reshape(-1)
    image_similarity = pairwise_scores(emb["image"], emb["image"], geometry, curv)
    removed = ambiguous_captions(image_similarity, texts, levels, neighbours)
    p, r = hierarchical_retrieval_items(scores, radii, levels, caption_texts=texts)
    pc, rc = hierarchical_retrieval_items(
        scores, radii, levels, caption_texts=texts, removed=removed
    )
    return {
        "hier_precision": p,
        "hier_recall": r,
        "hier_precision_cleaned": pc,
        "hier_recall_cleaned": rc,
    }


def world_items(emb: dict[str, Any], geometry: str, curv: float | None) -> dict[str, np.ndarray]:
    """Every per-item vector of the world benchmarks, named ``<benchmark>/<item>``."""
    image, out = emb["image"], {}
    long_scores = pairwise_scores(image, emb["caption"], geometry, curv)
    out.update({f"world-long/{k}": v for k, v in retrieval_items(long_scores).items()})
    short_scores = pairwise_scores(image, emb["short_caption"], geometry, curv)
    positive = same_text_positives(emb["short_texts"]) if "short_texts" in emb else None
    out.update({f"world-short/{k}": v for k, v in retrieval_items(short_scores, positive).items()})
    out.update(
        {f"world-monotonicity/{k}": v for k, v in monotonicity_items(emb, geometry, curv).items()}
    )
    out["world-cola/correct"] = cola_items(emb, geometry, curv)
    for level in (1, 2, 3):
        classes = zeroshot.class_embeddings(emb[f"prompts_L{level}"], geometry, curv)
        scores = pairwise_scores(image, classes, geometry, curv)
        rank, _ = zeroshot.label_ranks(scores, emb["labels"][:, level - 1].long())
        out[f"world-zeroshot/L{level}_correct"] = (rank == 0).double().numpy()
    if "chain_texts" in emb:
        out.update(
            {f"world-hierarchy/{k}": v for k, v in hierarchy_items(emb, geometry, curv).items()}
        )
    if geometry == "hyperbolic":
        pep = pep_items(image, emb["chain"], list(emb["roots"]), float(curv))
        out.update({f"world-hierarchy/{k}": v for k, v in pep.items()})
        radius = float(aperture_radius(float(curv)))
        for name in ("caption", "short_caption"):
            norms = emb[name].float().norm(dim=-1)
            out[f"aperture/{name}_inside_radius"] = (norms < radius).double().numpy()
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


PARENTS = ("short_caption", "box_text", "box_image")  # the parents of HyCoCLIP's pairs


def parent_items(norms: dict[str, Tensor], curv: float) -> dict[str, np.ndarray]:
    """Per held-out sample, 1 where each kind of parent of :data:`PARENTS` (its space norms in
    ``norms``) lies inside ``2K/√c``, and ``aperture/parents_inside_radius``, the share of the
    sample's three parents inside (docs/methods/argent.md#aperture-failure)."""
    radius = float(aperture_radius(float(curv)))
    require_finite(**{k: norms[k] for k in PARENTS})
    out = {f"aperture/{k}_inside_radius": (norms[k] < radius).double().numpy() for k in PARENTS}
    out["aperture/parents_inside_radius"] = np.mean([out[f"aperture/{k}_inside_radius"]
                                                     for k in PARENTS], axis=0)  # fmt: skip
    return out


def item_means(items: dict[str, np.ndarray]) -> dict[str, float]:
    """The metric of each item vector: its mean (vectors without items are left out); a
    vector holding NaN or inf is refused naming its key."""
    for key, values in items.items():
        require_finite_values(f"items[{key!r}]", values)
    return {k: float(np.mean(v)) for k, v in items.items() if v.size}
