"""Hyperbolic embeddings seen in 2-D (notebook 04): Poincaré discs of HoroPCA and the other
views, norm box plots per group, and the distributions of the crops' distances and weights."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
from torch import Tensor

from paperlib.analysis.hyperbolic import (
    LEVEL_NAMES,
    DiscView,
    inset_bounds,
)


def draw_disc(
    ax: plt.Axes,
    view: DiscView,
    level: Tensor,
    limit: float = 1.05,
    colours: Sequence[Any] | None = None,
    sizes: Sequence[float] = (30, 22, 12, 8, 8),
    origin_size: float = 8,
) -> None:
    """Scatter a :class:`DiscView` on a matplotlib axis: points coloured by ``level``
    (:data:`LEVEL_NAMES`; most specific drawn first so the few generic points stay visible),
    the unit circle, the model's origin as a black cross; square window ``±limit``."""
    if colours is None:
        colours = [*plt.cm.viridis(np.linspace(0.0, 0.85, len(LEVEL_NAMES) - 1)), "C3"]
    ax.add_patch(plt.Circle((0, 0), 1.0, fill=False, color="0.3", lw=1))
    for i in reversed(range(len(LEVEL_NAMES))):
        p = view.poincare[level == i]
        ax.scatter(
            p[:, 0], p[:, 1], s=sizes[i], color=colours[i], alpha=0.75, lw=0, label=LEVEL_NAMES[i]
        )
    ax.plot(*view.origin, "kx", ms=origin_size, mew=origin_size / 4, label="origin O of the model")
    ax.set(xlim=(-limit, limit), ylim=(-limit, limit), aspect="equal")
    ax.grid(False)


def disc_grid(views: dict[str, dict[str, DiscView]], levels: dict[str, Tensor]) -> plt.Figure:
    """Rows: models; columns: their 2-D views (``analysis.hyperbolic.disc_views``), drawn with
    :func:`draw_disc`. A view whose data fill only the middle of the disc is zoomed, with an
    inset of the whole unit disc and the zoomed window; one legend, general → specific, then O."""
    models, methods = list(views), list(next(iter(views.values())))
    fig, axes = plt.subplots(
        len(models), len(methods), figsize=(4.3 * len(methods), 4.4 * len(models)), squeeze=False
    )
    for row, model in enumerate(models):
        for col, method in enumerate(methods):
            ax, view = axes[row, col], views[model][method]
            extent = max(float(view.poincare.abs().max()), float(view.origin.abs().max()))
            limit = min(1.05, 1.15 * extent)
            draw_disc(ax, view, levels[model], limit=limit)
            if limit < 0.7:
                _zoom_inset(ax, view, levels[model], limit)
            scaled = f" ({view.scaled_distortion:.3f} rescaled)" if method == "UMAP" else ""
            ax.set_title(
                f"{model} — {method}\ndistortion {view.distortion:.3f}{scaled}", fontsize=10
            )
            ax.set(xlabel="Poincaré coordinate 1", ylabel="Poincaré coordinate 2")
    fig.tight_layout()
    handles, labels = axes[0, 0].get_legend_handles_labels()
    order = [*reversed(range(len(LEVEL_NAMES))), len(LEVEL_NAMES)]
    fig.legend(
        [handles[i] for i in order], [labels[i] for i in order],
        loc="upper center", ncol=3, bbox_to_anchor=(0.5, 0.0), markerscale=1.5,
    )  # fmt: skip
    return fig


def _zoom_inset(ax: plt.Axes, view: DiscView, level: Tensor, limit: float) -> None:
    """The whole unit disc in a corner inset of ``ax``, with the ``±limit`` window outlined."""
    inset = ax.inset_axes(inset_bounds(view, limit, size=0.3))
    draw_disc(inset, view, level, sizes=(4, 3, 2, 1, 1), origin_size=4)
    inset.add_patch(plt.Rectangle((-limit, -limit), 2 * limit, 2 * limit, fill=False, lw=0.8))
    inset.set_axis_off()


def norm_boxplots(
    groups: dict[str, dict[str, Tensor]], radii: dict[str, float], title: str = "", seed: int = 0
) -> plt.Figure:
    """Per model, a box plot (with jittered points) of the space norms of each group
    (``analysis.hyperbolic.norm_groups``), the undefined-aperture radius ``radii[model]``
    (dotted) and ARGENT's regularizer optimum ``1/√2`` (dashed).

    Norms are positive and one group can lie orders of magnitude above the others (MERU's object
    crops), so each model has its own logarithmic norm axis: a group far out neither stretches
    another model's axis nor flattens the boxes of its own model to a line."""
    models = list(groups)
    names = list(groups[models[0]])
    palette = [*plt.cm.viridis(np.linspace(0.0, 0.85, 4)), "C3", "C1", "C2"]  # as the discs
    fig, axes = plt.subplots(1, len(models), figsize=(5.2 * len(models), 4.6), squeeze=False)
    for ax, model in zip(axes[0], models):
        data = [groups[model][name].numpy() for name in names]
        ax.set_yscale("log")
        ax.boxplot(data, showfliers=False, widths=0.6, medianprops={"color": "k"})
        for i, values in enumerate(data, start=1):
            jitter = np.random.default_rng(seed).uniform(-0.18, 0.18, len(values))
            ax.scatter(i + jitter, values, s=4, alpha=0.4, color=palette[i - 1])
        ax.axhline(radii[model], color="k", ls=":", label=r"radius $2K/\sqrt{c}$")
        ax.axhline(
            2**-0.5,
            color="k",
            ls="--",
            lw=0.8,
            label=r"$1/\sqrt{2}$ (ARGENT's $\mathcal{L}_{Reg}$)",
        )
        # ticks at 1, 2, 5 × 10^k, written as plain numbers (0.2, 0.5, 1, 2, ...)
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        labels = [n.replace(" (", "\n(") for n in names]
        ax.set_xticks(range(1, len(names) + 1), labels, rotation=35, ha="right", fontsize=8)
        ax.set_title(model)
        ax.set_ylabel(r"norm of the space part $\|x\|$ (log scale)")
    axes[0, 0].legend(fontsize=8, loc="upper left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def crop_weight_ecdfs(weights: dict[str, dict[str, tuple[Tensor, Tensor]]]) -> plt.Figure:
    """Cumulative distributions of each box kind's distance to its own image and of ARGENT's
    intra weight ``h`` (``analysis.hyperbolic.crop_weights``), one colour per model, one line
    style per box kind."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.9))
    for model, colour in zip(weights, ["C0", "C1", "C3", "C2"]):
        for (kind, (d, h)), style in zip(weights[model].items(), ["-", "--"]):
            axes[0].ecdf(d.numpy(), color=colour, ls=style, label=f"{model}: {kind}")
            axes[1].ecdf(h.numpy(), color=colour, ls=style)
    axes[0].set(xscale="log", xlabel=r"$d_L$(box crop, its image) (log scale)")
    axes[1].set(xlabel=r"intra weight $h = 1 - e^{-d_L}$")
    for ax in axes:
        ax.set_ylabel("fraction of crops ≤ x")
    axes[0].set_title("distance from each crop to its own image")
    axes[1].set_title("the weight ARGENT gives (or would give) the pair")
    fig.tight_layout()
    fig.legend(
        *axes[0].get_legend_handles_labels(), loc="upper center", ncol=3,
        bbox_to_anchor=(0.5, 0.0), fontsize=8,
    )  # fmt: skip
    return fig
