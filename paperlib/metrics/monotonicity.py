"""Semantic monotonicity (HiMo@K) and noise robustness (SSI) of image-text scores
(``docs/methods/himo-clip.md#himo-at-k``, ``docs/methods/himo-clip.md#ssi``).

- Segments: a caption is cut into K *cumulative* sentence prefixes ("short, medium,
  long"); the rule for captions with more than K sentences is ours (see
  :func:`cumulative_segments`).
- HiMo@2 / HiMo@3: fraction of images whose K scores strictly increase (ties fail).
- HiMo@K (K > 3, HiMo-Docci): mean over images of Pearson ρ(k, s_k), k = 1..K.
- SSI: unpublished in the paper; defined here in :func:`semantic_stability_index`, with
  the noise-injection procedure in :func:`inject_noise`.

Scores are cosine similarities of precomputed (batch, dim) features. NaN or inf scores or
features, no image, an image with fewer than 2 scores (or no segment), and a zero clean score
(SSI's ratio) are refused by name; tied scores are no rise (HiMo@2/3: 0) and no trend (HiMo@K:
ρ = ``constant``, 0 by default).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.metrics.scores import NonFiniteError, require_finite, require_rows
from paperlib.segments import cumulative_prefixes

# A sentence ends at . ! or ? (plus closing quotes/brackets), followed by whitespace and an
# upper-case letter, a digit or an opening quote/bracket. Not after these abbreviations:
ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "st", "vs", "e.g", "i.e", "approx", "no"})
_BOUNDARY = re.compile(r"[.!?][\"')\]]*(?=\s+[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` in order (whitespace-stripped; see the module's boundary rule)."""
    text = text.strip()
    ends = []
    for match in _BOUNDARY.finditer(text):
        word = re.search(r"([\w.]+)[.!?][\"')\]]*$", text[: match.end()])
        if word and word.group(1).lower() in ABBREVIATIONS:
            continue
        ends.append(match.end())
    bounds = [0, *ends, len(text)]
    return [text[a:b].strip() for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]


def cumulative_segments(caption: str, k: int) -> list[str] | None:
    """K cumulative prefixes of ``caption``; None when it has fewer than K sentences.

    With n ≥ K sentences, segment j (1..K) is the first ``ceil(j·n/K)`` sentences
    (:mod:`paperlib.segments`); prefixes are joined with single spaces.
    """
    if k < 1:
        raise ValueError(f"k (number of segments) must be >= 1; got {k}")
    sentences = split_sentences(caption)
    if len(sentences) < k:
        return None
    return cumulative_prefixes(sentences, k)


def segment_scores(image_features: Tensor, segment_features: Sequence[Tensor]) -> list[Tensor]:
    """Cosine of image i (row of (num_images, dim)) with each of its (K_i, dim) segments."""
    require_finite(image_features=image_features)
    if image_features.ndim != 2:
        raise ValueError(
            f"image_features must be (num_images, dim); got {tuple(image_features.shape)}"
        )
    require_rows("image_features", image_features.shape, 1, "image")
    for i, seg in enumerate(segment_features):
        require_finite(**{f"segment_features[{i}]": seg})
        if seg.ndim != 2 or seg.shape[1] != image_features.shape[1] or seg.shape[0] < 1:
            raise ValueError(
                f"segment_features[{i}] must be (K, dim) with K >= 1 and the images' dim "
                f"{image_features.shape[1]}; got {tuple(seg.shape)}"
            )
    if len(segment_features) != image_features.shape[0]:
        raise ValueError(
            f"need one segment tensor per image: {image_features.shape[0]} images, "
            f"{len(segment_features)} segment tensors"
        )
    img = F.normalize(image_features.float(), dim=-1)
    return [F.normalize(seg.float(), dim=-1) @ img[i] for i, seg in enumerate(segment_features)]


def _as_rows(scores) -> list[np.ndarray]:
    if isinstance(scores, (Tensor, np.ndarray)) and np.ndim(scores) == 2:
        scores = list(scores)
    rows = [np.asarray(torch.as_tensor(s).double().cpu(), dtype=np.float64) for s in scores]
    if not rows:
        raise ValueError("scores is empty: need at least one image")
    for i, row in enumerate(rows):
        if row.ndim != 1 or row.shape[0] < 2:
            raise ValueError(f"scores[{i}] must hold K >= 2 segment scores; got shape {row.shape}")
        if not np.isfinite(row).all():
            raise NonFiniteError(
                f"scores[{i}] holds non-finite values {row.tolist()[:6]}: HiMo@K of NaN or "
                "inf scores is undefined (non-finite features?)"
            )
    return rows


def strict_monotone_accuracy(scores) -> float:
    """HiMo@2 / HiMo@3: fraction of images with ``s_1 < s_2 < … < s_K`` (equal scores fail).

    ``scores``: (num_images, K) array/tensor or a sequence of per-image score vectors.
    """
    rows = _as_rows(scores)
    return float(np.mean([bool(np.all(np.diff(r) > 0)) for r in rows]))


def monotonicity_correlations(scores, constant: float | None = 0.0) -> np.ndarray:
    """Per-image Pearson ρ(k, s_k), k = 1..K_i (K may vary per image).

    Pearson is undefined when an image's K scores are all equal; such an image gets
    ``constant`` (default 0: no monotone trend) or is dropped (``constant=None``).
    """
    out = []
    for row in _as_rows(scores):
        if np.all(row == row[0]):
            if constant is not None:
                out.append(float(constant))
            continue
        k = np.arange(1, row.shape[0] + 1, dtype=np.float64)
        k_c, s_c = k - k.mean(), row - row.mean()
        out.append(float(k_c @ s_c / math.sqrt((k_c @ k_c) * (s_c @ s_c))))
    return np.asarray(out)


def himo_at_k(scores, constant: float | None = 0.0) -> float:
    """HiMo@K (K > 3): mean over images of :func:`monotonicity_correlations`."""
    rhos = monotonicity_correlations(scores, constant)
    if rhos.size == 0:
        raise ValueError("every image has constant scores and constant=None: HiMo@K undefined")
    return float(rhos.mean())


def semantic_stability_items(clean_scores, noisy_scores) -> np.ndarray:
    """Per pair ``100 · |s_noisy − s| / |s|`` (see :func:`semantic_stability_index`), float64."""
    clean = np.asarray(torch.as_tensor(clean_scores).double().cpu())
    noisy = np.asarray(torch.as_tensor(noisy_scores).double().cpu())
    if clean.shape != noisy.shape or clean.ndim != 1 or clean.size == 0:
        raise ValueError(
            f"clean_scores and noisy_scores must be equal-length 1-D; got {clean.shape}, "
            f"{noisy.shape}"
        )
    if not (np.isfinite(clean).all() and np.isfinite(noisy).all()):
        raise NonFiniteError("clean_scores and noisy_scores must be finite for SSI")
    if np.any(np.abs(clean) < 1e-12):
        raise ValueError("clean_scores contains a zero score: the relative change is undefined")
    return 100.0 * np.abs(noisy - clean) / np.abs(clean)


def semantic_stability_index(clean_scores, noisy_scores) -> float:
    """SSI (our definition; the paper's formula is unpublished), lower is better.

    ``SSI = 100 · mean_i |s_i^noisy − s_i| / |s_i|``: the mean relative change, in percent,
    of the image-text score of each pair when irrelevant sentences are injected into its
    caption (:func:`inject_noise`). Both inputs are (num_pairs,) cosine scores.
    """
    return float(np.mean(semantic_stability_items(clean_scores, noisy_scores)))


def inject_noise(
    captions: Sequence[str],
    n_noise: int = 1,
    *,
    pool: Sequence[str] | None = None,
    seed: int = 0,
) -> list[str]:
    """Insert ``n_noise`` irrelevant sentences into every caption (SSI's perturbation).

    Noise sentences are drawn uniformly (with replacement) from ``pool``, or by default
    from the sentences of the *other* captions in ``captions`` (never the caption's own).
    Each is inserted at a uniformly random sentence boundary after the first sentence
    (the opening summary stays first; the end is allowed). Deterministic given ``seed``.
    """
    if n_noise < 0:
        raise ValueError(f"n_noise must be >= 0; got {n_noise}")
    rng = random.Random(seed)
    split = [split_sentences(c) for c in captions]
    if pool is not None:
        sources = [(s, -1) for s in pool]
    else:
        sources = [(s, i) for i, sents in enumerate(split) for s in sents]
    noisy = []
    for i, sentences in enumerate(split):
        own = len(sentences) if pool is None else 0
        if n_noise and len(sources) == own:
            raise ValueError(f"no noise sentences available for caption {i}")
        out = list(sentences)
        for _ in range(n_noise):
            sentence, src = rng.choice(sources)
            while src == i:  # rejection keeps the draw uniform over the other captions
                sentence, src = rng.choice(sources)
            out.insert(rng.randint(min(1, len(out)), len(out)), sentence)
        noisy.append(" ".join(out))
    return noisy
