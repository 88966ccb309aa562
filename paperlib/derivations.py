"""Closed-form quantities of the HiMo-CLIP monotonicity argument (tutorial 02).

A long text is a core plus increments, ``t_k = c + Σ_{j≤k} δ_j`` (unnormalised text
vectors); the image ``v`` is unit-norm. Its cosine score is ``s_k = a_k / n_k`` with
projection ``a_k = v·t_k`` and norm ``n_k = ‖t_k‖``. For ``a_k > 0``:

    s_{k+1} > s_k  ⇔  a_{k+1} / a_k > n_{k+1} / n_k

the projection must grow (relatively) faster than the norm. ``monotonicity_margin`` returns
``a_{k+1}/a_k − n_{k+1}/n_k`` so its sign predicts whether the score rises.
"""

from __future__ import annotations

import numpy as np


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
