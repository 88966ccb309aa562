"""The quickstart's figures (notebook 00): world samples and image–caption similarity
matrices."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import seaborn as sns
from torch import Tensor


def sample_strip(samples: Sequence[Any], title_width: int = 20) -> plt.Figure:
    """One panel per world sample: its image, titled with its short caption (wrapped)."""
    fig, axes = plt.subplots(1, len(samples), figsize=(2 * len(samples), 2.4), squeeze=False)
    for ax, sample in zip(axes[0], samples):
        ax.imshow(sample.image)
        ax.set_title("\n".join(textwrap.wrap(sample.short_caption, title_width)), fontsize=7)
        ax.axis("off")
    return fig


def similarity_heatmaps(sims: Mapping[str, Tensor | np.ndarray]) -> plt.Figure:
    """One panel per (images, captions) similarity matrix, titled with its key: a heat map with
    its own colour bar (each panel on its own colour scale)."""
    fig, axes = plt.subplots(1, len(sims), figsize=(4.4 * len(sims), 3.6), squeeze=False)
    for ax, (title, sim) in zip(axes[0], sims.items()):
        sns.heatmap(
            np.asarray(sim), cmap="viridis", square=True, ax=ax,
            cbar_kws={"label": "cosine similarity"},
        )  # fmt: skip
        ax.tick_params(axis="both", rotation=0)
        ax.set(xlabel="caption index", ylabel="image index", title=title)
        ax.grid(False)
    fig.tight_layout()
    return fig


def similarity_heatmap(sim: Tensor, title: str) -> plt.Figure:
    """An (images, captions) similarity matrix as a heat map with its colour bar."""
    return similarity_heatmaps({title: sim})
