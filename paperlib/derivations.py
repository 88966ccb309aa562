"""The HiMo-CLIP monotonicity argument in closed form, and its measurements (tutorial 02).

A long text is a core plus increments, ``t_k = c + Σ_{j<k} δ_j`` (unnormalised text
vectors); the image ``v`` is unit-norm. Its cosine score is ``s_k = a_k / n_k`` with
projection ``a_k = v·t_k`` and norm ``n_k = ‖t_k‖``. For ``a_k > 0``:

    s_{k+1} > s_k  ⇔  a_{k+1} / a_k > n_{k+1} / n_k

the projection must grow (relatively) faster than the norm. ``monotonicity_margin`` returns
``a_{k+1}/a_k − n_{k+1}/n_k`` so its sign predicts whether the score rises. For a small
increment, ``ds = (v·δ − s t̂·δ) / ‖t‖`` (:func:`score_derivative`).

MoLo (``docs/methods/himo-clip.md#molo``) reads the same way with HiDe's reconstruction as
the core: ``u = u' + r``, ``r = (I − PᵀP)(u − ū)`` the dropped part (:func:`full_vs_component_scores`). The segment helpers
turn the study's exported embeddings into the per-image scores s_k that HiMo@K summarises.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from paperlib.losses.himo import hide
from paperlib.metrics.items import k_cut_scores
from paperlib.metrics.monotonicity import monotonicity_correlations, segment_scores


def cumulative_texts(core: np.ndarray, increments: np.ndarray) -> np.ndarray:
    """(K, d) cumulative text vectors ``t_k = core + Σ_{j<k} increments_j``, k = 1..K.

    ``core`` is (d,), ``increments`` (K-1, d); row 0 is the core alone.
    """
    return core[None, :] + np.concatenate([np.zeros_like(core)[None], np.cumsum(increments, 0)])


def cumulative_scores(image: np.ndarray, texts: np.ndarray) -> np.ndarray:
    """Cosine scores ``s_k = v·t_k / (‖v‖‖t_k‖)`` for (K, d) texts and a (d,) image."""
    return texts @ image / (np.linalg.norm(texts, axis=1) * np.linalg.norm(image))


def monotonicity_margin(image: np.ndarray, texts: np.ndarray) -> np.ndarray:
    """(K-1,) margins ``a_{k+1}/a_k − n_{k+1}/n_k``; positive ⇔ the score rises (a_k > 0)."""
    unit = image / np.linalg.norm(image)
    proj = texts @ unit
    norm = np.linalg.norm(texts, axis=1)
    return proj[1:] / proj[:-1] - norm[1:] / norm[:-1]


def score_derivative(image: np.ndarray, text: np.ndarray, increment: np.ndarray) -> float:
    """``d/dε cos(v, t + εδ)`` at ε = 0: ``(v̂·δ − s t̂·δ) / ‖t‖`` with ``s = cos(v, t)``.

    The first-order form of the condition: a small increment raises the score iff its
    alignment with the image exceeds s times its alignment with the text it extends.
    """
    v = image / np.linalg.norm(image)
    norm = np.linalg.norm(text)
    t = text / norm
    return float((v @ increment - (v @ t) * (t @ increment)) / norm)


def full_vs_component_scores(
    image: Tensor, text: Tensor, tau: float = 0.9
) -> dict[str, np.ndarray]:
    """Full-text vs HiDe-component scores of matched (batch, dim) pairs
    (``docs/methods/himo-clip.md#hide``).

    HiDe runs on the batch of ``text``; for each pair i: ``full`` = cos(v_i, u_i),
    ``component`` = cos(v_i, u'_i), and ``margin`` = monotonicity_margin with core u'_i
    and increment the dropped part u_i − u'_i (positive ⇔ full > component, when
    v_i·u'_i > 0). Also returns ``m``, the components HiDe kept.
    """
    result = hide(text.double(), tau)
    v = torch.nn.functional.normalize(image.double(), dim=-1).numpy()
    u, comp = text.double().numpy(), result.features.numpy()
    full = np.einsum("nd,nd->n", v, u) / np.linalg.norm(u, axis=1)
    component = np.einsum("nd,nd->n", v, comp) / np.linalg.norm(comp, axis=1)
    margin = np.array(
        [monotonicity_margin(v[i], np.stack([comp[i], u[i]]))[0] for i in range(len(v))]
    )
    return {"full": full, "component": component, "margin": margin, "m": np.asarray(result.m)}


def per_image_segment_scores(embeddings: dict) -> list[np.ndarray]:
    """(K_i,) cosine scores s_k of image i with its cumulative caption prefixes k = 1..K_i.

    ``embeddings`` holds ``image`` (N, dim), ``segments_all`` (ΣK_i, dim) and
    ``segments_all_lengths`` (N,), as the study exports them.
    """
    lengths = embeddings["segments_all_lengths"]
    if int(lengths.sum()) != embeddings["segments_all"].shape[0]:
        raise ValueError(
            f"segments_all has {embeddings['segments_all'].shape[0]} rows but "
            f"segments_all_lengths sums to {int(lengths.sum())}"
        )
    segments = embeddings["segments_all"].split(lengths.tolist())
    return [s.double().numpy() for s in segment_scores(embeddings["image"], segments)]


def k_segment_falls(per_image: Sequence[np.ndarray], k: int) -> dict[str, np.ndarray]:
    """Where scores fall along K cumulative segments (the paper's K = 10 failure case).

    For each image with at least ``k`` sentence prefixes (``per_image``: its prefix scores),
    its scores at the K cut segments (:func:`paperlib.metrics.items.k_cut_scores`), the number
    of steps where the score falls, the largest fall (0 when it never falls) and the Pearson
    ρ(k, s_k). Returns arrays ``image`` (indices), ``curves`` (n, k), ``falls``,
    ``largest_fall`` and ``rho``.
    """
    kept = [i for i, s in enumerate(per_image) if len(s) >= k]
    curves = np.stack([k_cut_scores(per_image[i], k) for i in kept]) if kept else np.zeros((0, k))
    steps = np.diff(curves, axis=1)
    rho = monotonicity_correlations(curves) if kept else np.zeros(0)
    return {
        "image": np.asarray(kept),
        "curves": curves,
        "falls": (steps < 0).sum(axis=1),
        "largest_fall": np.maximum(-steps.min(axis=1, initial=0.0), 0.0),
        "rho": rho,
    }


def mean_by_segment_index(
    scores: Sequence[np.ndarray], relative: bool = False, min_count: int = 1
) -> dict[str, np.ndarray]:
    """Mean, standard error and count of s_k over the images that have a k-th segment.

    ``relative``: use ``s_k − s_1`` per image (the rise since the first sentence). Indices
    k with fewer than ``min_count`` images are left out. Returns arrays ``k`` (1-based),
    ``mean``, ``sem`` (0 for a single image) and ``count``.
    """
    longest = max(len(s) for s in scores)
    rows = [(s - s[0]) if relative else s for s in scores]
    out = {"k": [], "mean": [], "sem": [], "count": []}
    for k in range(longest):
        column = np.array([r[k] for r in rows if len(r) > k])
        if column.size < min_count:
            continue
        out["k"].append(k + 1)
        out["mean"].append(column.mean())
        out["sem"].append(column.std(ddof=1) / np.sqrt(column.size) if column.size > 1 else 0.0)
        out["count"].append(column.size)
    return {key: np.asarray(value) for key, value in out.items()}


def fall_summary(falls: dict[str, dict[str, np.ndarray]]) -> pd.DataFrame:
    """One row per model of its :func:`k_segment_falls` result: the images it covers, the share
    with at least one fall, the mean number of falls, the median largest fall and the share
    rising overall (ρ > 0)."""
    return pd.DataFrame(
        {
            label: {
                "images": len(f["image"]),
                "share with ≥ 1 fall": float(np.mean(f["falls"] > 0)),
                "mean falls per image": float(np.mean(f["falls"])),
                "median largest fall": float(np.median(f["largest_fall"])),
                "share rising overall (ρ > 0)": float(np.mean(f["rho"] > 0)),
            }
            for label, f in falls.items()
        }
    ).T.astype({"images": int})
