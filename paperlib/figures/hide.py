"""HiDe's principal components of a caption batch (notebook 01): spectra and the τ cut,
η² of each component with the ground-truth factors, score scatters, the kept and dropped parts,
the batch's content (principal angles) and the batch-size sweep."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns


def spectrum_panels(
    spectra: dict[str, np.ndarray], kept: dict[str, int], tau: float, colors: dict, shown: int = 20
) -> plt.Figure:
    """Left: each batch's explained-variance shares ``r_j`` (log scale); right: their cumulative
    sums, the τ line and a star at each batch's ``kept`` m (HiDe's choice)."""
    fig, (ax_r, ax_c) = plt.subplots(1, 2, figsize=(10, 3.8))
    for label, r in spectra.items():
        j = np.arange(1, min(shown, len(r)) + 1)
        cumulative = np.cumsum(r)
        ax_r.plot(j, r[: len(j)], "o-", ms=3, color=colors[label], label=label)
        ax_c.plot(j, cumulative[: len(j)], "o-", ms=3, color=colors[label], label=label)
        m = kept[label]
        ax_c.plot([m], [cumulative[m - 1]], "*", ms=14, color=colors[label], mec="black")
    ax_r.set(yscale="log", xlabel="principal direction j", ylabel="explained variance share $r_j$")
    ax_r.set_title("spectrum of the caption batch")
    ax_c.axhline(tau, ls="--", color="black", lw=1, label=f"τ = {tau}")
    ax_c.set(xlabel="number of directions kept m", ylabel="cumulative explained variance")
    ax_c.set_title("the τ cut (★ = HiDe's m)")
    ax_c.legend(loc="lower right")
    return fig


def eta_heatmaps(eta: dict[str, np.ndarray], row_labels: Sequence[str]) -> plt.Figure:
    """One (factors × components) η² map per model, values written in the cells, on one colour
    scale from 0 to 1."""
    fig, axes = plt.subplots(1, len(eta), figsize=(4.4 * len(eta), 3.9), sharey=True, squeeze=False)
    for ax, (label, table) in zip(axes[0], eta.items()):
        sns.heatmap(
            table, vmin=0, vmax=1, cmap="viridis", annot=True, fmt=".2f",
            annot_kws={"fontsize": 7}, cbar=False, ax=ax, yticklabels=row_labels,
            xticklabels=[f"PC{j + 1}" for j in range(table.shape[1])],
        )  # fmt: skip
        ax.tick_params(axis="both", rotation=0)
        ax.set_title(label)
        ax.grid(False)
    axes[0, len(eta) // 2].set_xlabel(
        "principal component of the caption batch (decreasing variance)"
    )
    fig.colorbar(
        axes[0, 0].collections[0], ax=axes[0], label="correlation ratio $\\eta^2$", shrink=0.9
    )
    fig.suptitle("$\\eta^2$ of each component's scores with each ground-truth factor")
    return fig


def group_scatters(
    scores: np.ndarray, groups: dict[str, tuple[np.ndarray, Sequence[str]]], title: str
):
    """Scatter of the first two score columns, one panel per grouping ``{name: (labels, names)}``,
    each group in its own colour."""
    fig, axes = plt.subplots(
        1, len(groups), figsize=(5 * len(groups), 4.2), sharex=True, sharey=True
    )
    for ax, (name, (labels, names)) in zip(np.atleast_1d(axes), groups.items()):
        for g in np.unique(labels):
            pick = labels == g
            ax.scatter(scores[pick, 0], scores[pick, 1], s=14, label=names[g], alpha=0.8)
        ax.set(xlabel="score on PC1 (cosine units)", ylabel="score on PC2 (cosine units)")
        ax.set_title(f"{title} coloured by {name}")
        ax.legend(fontsize=7, ncol=2, loc="best", markerscale=1.2)
    return fig


def paired_bars(
    ax: plt.Axes, names: Sequence[str], values: dict[str, Sequence[float]], chance=None
) -> None:
    """Grouped bars: one bar per entry of ``values`` at each of ``names`` (black for an entry
    named "mixed"), and the ``chance`` level of each name as a black tick."""
    x, width = np.arange(len(names)), 0.8 / len(values)
    for i, (label, heights) in enumerate(values.items()):
        offset = (i - len(values) / 2 + 0.5) * width
        ax.bar(x + offset, heights, width, label=label, color="black" if label == "mixed" else None)
    if chance is not None:
        ax.scatter(x, chance, marker="_", s=200, color="black", zorder=3, label="chance level")
    ax.set_xticks(x, names, rotation=40, ha="right")


def angle_curves(ax: plt.Axes, angles: dict[str, np.ndarray], random_level: float, reference: str):
    """Principal angles (degrees, smallest first) of each subspace to the ``reference`` one, and
    the mean angle between random subspaces as a dashed line."""
    for name, a in angles.items():
        ax.plot(np.arange(1, len(a) + 1), a, "o-", label=name)
    ax.axhline(random_level, ls="--", color="black", lw=1, label="random subspaces (mean)")
    ax.set(xlabel="principal angle index (smallest first)", ylim=(0, 95))
    ax.set_ylabel(f"principal angle to the {reference} batch (degrees)")
    ax.legend(fontsize=8)


def batch_size_panels(sweeps: dict[str, dict], tau: float, colors: dict) -> plt.Figure:
    """Left: HiDe's m against the batch size; right: the mean principal angle between the
    subspaces of two disjoint sub-batches of that size, mean ± std over draws
    (``analysis.components.batch_size_sweep`` results)."""
    fig, (ax_m, ax_a) = plt.subplots(1, 2, figsize=(10, 3.6))
    for label, sweep in sweeps.items():
        style = {"marker": "o", "ms": 3, "capsize": 2, "color": colors[label]}
        ax_m.errorbar(sweep["sizes"], sweep["m"].mean(1), sweep["m"].std(1), label=label, **style)
        ax_a.errorbar(
            sweep["sizes"], sweep["angle"].mean(1), sweep["angle"].std(1),
            label=f"{label} ($m_{{ref}}$ = {int(sweep['m_ref'])})", **style,
        )  # fmt: skip
    for ax in (ax_m, ax_a):
        ax.set(xscale="log", xlabel="batch size N (captions)")
        ax.set_xscale("log", base=2)
        ax.legend(fontsize=8)
    ax_m.set(ylabel=f"m at τ = {tau}", title="kept components vs batch size")
    ax_a.set(ylabel="mean principal angle between\ntwo disjoint sub-batches (degrees)")
    ax_a.set_title("subspace stability vs batch size")
    return fig


def kept_dropped_panels(
    split: dict[str, tuple[Sequence[float], Sequence[float]]],
    factors: Sequence[str],
    chance: Sequence[float],
    kept_m: dict[str, int],
) -> plt.Figure:
    """One panel per tower: the pooled η² of each factor in HiDe's kept part ``u' − ū`` and in
    its dropped part ``u − u'`` (``split[tower]``: the two lists, in the order of ``factors``),
    with each factor's chance level; titled with the tower's m."""
    fig, axes = plt.subplots(1, len(split), figsize=(3.3 * len(split), 3.8), sharey=True)
    for ax, (label, (kept, dropped)) in zip(np.atleast_1d(axes), split.items()):
        paired_bars(ax, factors, {"kept u'−ū": kept, "dropped u−u'": dropped}, chance)
        ax.set_title(f"{label} (m = {kept_m[label]})")
    first = np.atleast_1d(axes)[0]
    first.set_ylabel("pooled $\\eta^2$ (share of the part's variance)")
    first.legend(fontsize=8)
    return fig


def batch_content_panels(
    single: pd.DataFrame,
    mixed: pd.Series,
    angles: dict[str, np.ndarray],
    sampling: float,
    random_level: float,
) -> plt.Figure:
    """Left: the chance-adjusted ε² of each factor (columns) within the super-category in the
    kept part of each single-group batch (rows of ``single``) and of the mixed batches
    (``mixed``, their mean, in black); right: each single-group batch's principal angles to the
    mixed batch's subspace, with the mean angle between two disjoint mixed batches
    (``sampling``, dotted) and between random subspaces (dashed)."""
    fig, (ax_l, ax_r) = plt.subplots(
        1, 2, figsize=(12, 3.9), gridspec_kw={"width_ratios": [1.6, 1]}
    )
    bars = {name: row.tolist() for name, row in single.iterrows()} | {"mixed": mixed.tolist()}
    paired_bars(ax_l, list(single.columns), bars)
    ax_l.axhline(0, color="black", lw=0.8)
    ax_l.set(ylabel="ε² within the super-category\n(kept part, chance-adjusted)")
    ax_l.set_title("what HiDe keeps within a super-category")
    ax_l.legend(fontsize=8, ncol=2)
    angle_curves(ax_r, angles, random_level, "mixed")
    ax_r.axhline(sampling, ls=":", color="black", lw=1, label="two mixed batches (mean)")
    ax_r.legend(fontsize=8)
    ax_r.set_title("each batch's subspace vs a mixed batch's")
    return fig
