"""Image-text retrieval Recall@K on precomputed features
(``docs/methods/himo-clip.md#himo-evaluation``).

Protocols: 1:1 pairs (Urban1k, DOCCI, Long-DCI) and several captions per image
(Flickr30k / COCO: 5 captions, text t belongs to image t // 5). An image→text query is a
hit at K when *any* of its captions is in the top K; a text→image query when its image is.

Ties (the papers do not say): the rank of a query's positive is the number of *negatives*
scoring ``>=`` its best positive (``ties="pessimistic"``: a tie counts as a miss, so a
constant scorer gets 0 recall) or ``>`` it (``"optimistic"``). Hit at K ⟺ rank < K.
Values are fractions in [0, 1], as in CLIP_benchmark (the papers print percentages).
With one candidate every query ranks it first (R@K = 1); no query has no ranks, and a recall
of no query, NaN or inf features or scores, and ranks that are not whole numbers ≥ 0 are
refused, each by name.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

from paperlib.metrics.results import image_retrieval_recall, text_retrieval_recall
from paperlib.metrics.scores import require_finite

TIES = ("pessimistic", "optimistic")


def text_to_image_index(num_images: int, captions_per_image: int = 1) -> Tensor:
    """Image index of each text for image-major caption order: ``t // captions_per_image``."""
    if num_images < 1 or captions_per_image < 1:
        raise ValueError(
            f"num_images and captions_per_image must be >= 1; got {num_images}, "
            f"{captions_per_image}"
        )
    return torch.arange(num_images * captions_per_image) // captions_per_image


def positive_ranks(scores: Tensor, positive: Tensor, ties: str = "pessimistic") -> Tensor:
    """Per row (query): how many negatives score above (or tie, if pessimistic) its best
    positive, ``positive`` marking each row's correct columns. ``scores`` must be finite (the
    public entry points check their inputs once)."""
    best = scores.masked_fill(~positive, float("-inf")).amax(dim=1)[:, None]
    beats = scores >= best if ties == "pessimistic" else scores > best
    return (beats & ~positive).sum(dim=1)


def _recalls(i2t: Tensor, t2i: Tensor, ks: Sequence[int]) -> dict[str, float]:
    """R@K of both directions under CLIP_benchmark's names
    (``docs/methods/conventions.md#results-format``)."""
    out = {image_retrieval_recall(k): v for k, v in recall_at_k(t2i, ks).items()}
    out.update({text_retrieval_recall(k): v for k, v in recall_at_k(i2t, ks).items()})
    return out


def retrieval_ranks(
    image_features: Tensor,
    text_features: Tensor,
    text_to_image: Tensor | None = None,
    *,
    ties: str = "pessimistic",
    chunk_size: int = 1024,
) -> tuple[Tensor, Tensor]:
    """0-based ranks of the positives: ``(i2t (num_images,), t2i (num_texts,))``.

    ``image_features`` (num_images, dim) and ``text_features`` (num_texts, dim) are
    L2-normalised here (cosine scores). ``text_to_image`` (num_texts,) gives each text's
    image; default 1:1 (requires num_texts == num_images). Scores are computed in chunks of
    ``chunk_size`` queries, so 5k×25k COCO never holds the full matrix.
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}; got {ties!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int; got {chunk_size!r}")
    require_finite(image_features=image_features, text_features=text_features)
    if image_features.ndim != 2 or text_features.ndim != 2:
        raise ValueError("image_features and text_features must be (batch, dim) tensors")
    if image_features.shape[1] != text_features.shape[1]:
        raise ValueError(
            "image_features and text_features must share their feature dim; got "
            f"{tuple(image_features.shape)} and {tuple(text_features.shape)}"
        )
    n_img, n_txt = image_features.shape[0], text_features.shape[0]
    if text_to_image is None:
        if n_img != n_txt:
            raise ValueError(
                f"1:1 retrieval needs as many texts as images; got {n_txt} texts, {n_img} "
                "images (pass text_to_image for several captions per image)"
            )
        text_to_image = torch.arange(n_txt)
    text_to_image = torch.as_tensor(text_to_image, device=text_features.device).long()
    if text_to_image.shape != (n_txt,):
        raise ValueError(
            f"text_to_image must have shape ({n_txt},); got {tuple(text_to_image.shape)}"
        )
    if n_txt and (text_to_image.min() < 0 or text_to_image.max() >= n_img):
        raise ValueError(f"text_to_image values must index the {n_img} images")
    img = F.normalize(image_features.float(), dim=-1)
    txt = F.normalize(text_features.float(), dim=-1)
    img_ids = torch.arange(n_img, device=img.device)

    i2t = []
    for start in range(0, n_img, chunk_size):
        scores = img[start : start + chunk_size] @ txt.T  # (chunk, num_texts)
        positive = text_to_image[None, :] == img_ids[start : start + chunk_size, None]
        if not positive.any(dim=1).all():
            raise ValueError("every image needs at least one caption in text_to_image")
        i2t.append(positive_ranks(scores, positive, ties))
    t2i = []
    for start in range(0, n_txt, chunk_size):
        scores = txt[start : start + chunk_size] @ img.T  # (chunk, num_images)
        target = text_to_image[start : start + chunk_size]
        t2i.append(positive_ranks(scores, img_ids[None, :] == target[:, None], ties))
    empty = torch.zeros(0, dtype=torch.long)
    return (torch.cat(i2t) if i2t else empty), (torch.cat(t2i) if t2i else empty)


def recall_at_k(ranks: Tensor, ks: Sequence[int] = (1, 5, 10)) -> dict[int, float]:
    """Fraction of queries whose positive has rank < k, for each k; ``ranks`` (queries,)
    whole numbers ≥ 0."""
    ranks = torch.as_tensor(ranks)
    if ranks.ndim != 1 or len(ranks) == 0:
        raise ValueError(
            f"recall_at_k needs a 1-D tensor of query ranks; got shape {tuple(ranks.shape)}"
        )
    if ranks.is_floating_point():
        require_finite(ranks=ranks)
    if bool((ranks < 0).any()) or bool((ranks != ranks.round()).any()):
        raise ValueError("ranks must be whole numbers >= 0 (negatives scoring above a positive)")
    bad = [k for k in ks if isinstance(k, bool) or not isinstance(k, int) or k < 1]
    if bad:
        raise ValueError(f"ks must be positive ints (R@k needs k >= 1); got {bad}")
    return {k: float((ranks < k).float().mean()) for k in ks}


def retrieval_metrics(
    image_features: Tensor,
    text_features: Tensor,
    captions_per_image: int = 1,
    ks: Sequence[int] = (1, 5, 10),
    *,
    ties: str = "pessimistic",
) -> dict[str, float]:
    """R@K in CLIP_benchmark's names (``docs/methods/conventions.md#results-format``).

    ``text_retrieval_recall@k`` = image→text (I2T), ``image_retrieval_recall@k`` =
    text→image (T2I). Texts are image-major: ``captions_per_image`` consecutive captions
    per image (1 for the long-text sets, 5 for Flickr30k / COCO).
    """
    require_finite(image_features=image_features, text_features=text_features)
    mapping = text_to_image_index(image_features.shape[0], captions_per_image)
    if text_features.shape[0] != mapping.shape[0]:
        raise ValueError(
            f"expected {mapping.shape[0]} texts ({image_features.shape[0]} images × "
            f"{captions_per_image} captions); got {text_features.shape[0]}"
        )
    return _recalls(*retrieval_ranks(image_features, text_features, mapping, ties=ties), ks)


def same_text_positives(texts: Sequence[str]) -> Tensor:
    """(n, n) positive mask for 1:1 pairs whose texts repeat: image i ↔ text j when the two
    captions are the same string (short captions of a synthetic world often coincide, and a
    duplicate caption is as correct as the image's own)."""
    ids = {t: i for i, t in enumerate(dict.fromkeys(texts))}
    codes = torch.tensor([ids[t] for t in texts])
    return codes[:, None] == codes[None, :]


def checked_positive(scores: Tensor, positive: Tensor | None) -> Tensor:
    """The positive mask of an (images, texts) ``scores`` matrix (default: the diagonal),
    checked with the scores: finite, at least one image and one text, a mask of the same
    shape giving every image and every text a positive; ValueError naming what is wrong."""
    if scores.ndim != 2 or 0 in scores.shape:
        raise ValueError(
            "retrieval needs an (images, texts) score matrix with at least one of "
            f"each; got shape {tuple(scores.shape)}"
        )
    require_finite(scores=scores)
    if positive is None:
        if scores.shape[0] != scores.shape[1]:
            raise ValueError(
                f"1:1 retrieval needs a square score matrix; got {tuple(scores.shape)}"
            )
        positive = torch.eye(scores.shape[0], dtype=torch.bool)
    if positive.shape != scores.shape:
        raise ValueError(
            f"positive mask {tuple(positive.shape)} must match scores {tuple(scores.shape)}"
        )
    if not positive.any(1).all() or not positive.any(0).all():
        raise ValueError("every image and every text needs at least one positive")
    return positive


def retrieval_metrics_from_scores(
    scores: Tensor,
    positive: Tensor | None = None,
    ks: Sequence[int] = (1, 5, 10),
    *,
    ties: str = "pessimistic",
) -> dict[str, float]:
    """R@K (CLIP_benchmark names) from an (images, texts) score matrix of any geometry.

    ``positive`` (images, texts) marks the correct pairs (default: the diagonal). An image
    query is ranked by its best positive text, a text query by its best positive image, and
    the rank counts the negatives that beat it (ties as in :func:`retrieval_ranks`).
    """
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}; got {ties!r}")
    positive = checked_positive(scores, positive)
    scores = scores.float()
    i2t = positive_ranks(scores, positive, ties)
    t2i = positive_ranks(scores.T, positive.T, ties)
    return _recalls(i2t, t2i, ks)
