"""Score monotonicity in caption length (notebook 02): the counterexample, full-caption
against HiDe-component scores, score against prefix length, per-image ρ, the K-segment case and
a model's own chance level on the metric panels."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from paperlib.figures.common import chance_line


def counterexample_panels(
    heights: np.ndarray, after: np.ndarray, margin: np.ndarray, before: float, crossing: float
) -> plt.Figure:
    """Left: the score ``after`` adding an increment with orthogonal content ``heights``, against
    the score ``before`` (dashed); right: the monotonicity margin, zero marked. A grey line at
    ``crossing``, where the score falls below ``before``, in both."""
    fig, (ax_s, ax_m) = plt.subplots(1, 2, figsize=(10, 3.6))
    ax_s.plot(heights, after, color="tab:red", label="$s_2$ (core + increment)")
    ax_s.axhline(before, color="black", ls="--", lw=1, label="$s_1$ (core alone)")
    ax_s.set(
        ylabel="cosine score with the image", title="a relevant increment that lowers the score"
    )
    ax_s.legend()
    ax_m.plot(heights, margin, color="tab:purple")
    ax_m.axhline(0, color="black", lw=0.8)
    ax_m.set(ylabel="margin $a_2/a_1 - n_2/n_1$")
    ax_m.set_title("the margin changes sign where the score falls")
    for ax in (ax_s, ax_m):
        ax.axvline(crossing, color="gray", lw=0.8)
        ax.set_xlabel("orthogonal content $h$ of the increment (vector units)")
    return fig


def _step_histograms(
    ax: plt.Axes, samples: Mapping[str, np.ndarray], colors: Mapping[str, str], bins, labels=None
) -> None:
    """One outlined histogram per sample on shared ``bins``, labelled ``labels[name]`` or its
    name."""
    for name, sample in samples.items():
        label = (labels or {}).get(name, name)
        ax.hist(sample, bins=bins, histtype="step", lw=1.8, color=colors[name], label=label)


def full_vs_component_histogram(
    diffs: Mapping[str, np.ndarray], colors: Mapping[str, str], title: str
) -> plt.Figure:
    """Per model, the histogram (40 bins over the pooled range) of cos(v, u) − cos(v, u'), the
    full caption's score minus its HiDe component's; zero marked."""
    low = min(d.min() for d in diffs.values())
    high = max(d.max() for d in diffs.values())
    fig, ax = plt.subplots(figsize=(6, 3.6))
    _step_histograms(ax, diffs, colors, np.linspace(low, high, 40))
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("cos(v, u) − cos(v, u')   (full caption minus HiDe component)")
    ax.set(ylabel="number of image–caption pairs", title=title)
    ax.legend()
    return fig


def segment_score_panels(
    absolute: Mapping[str, dict],
    relative: Mapping[str, dict],
    chance: Mapping[str, dict],
    colors: Mapping[str, str],
    tag: str,
) -> plt.Figure:
    """Left: each model's mean score per prefix length (``derivations.mean_by_segment_index``
    curves, ± one standard error shaded) and, dotted, its chance curve (another image's
    prefixes); right: the mean rise over the first sentence, ``relative``, zero marked.
    ``tag`` ends both titles, e.g. ``"seed 0, full"``."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, curves in zip(axes, (absolute, relative)):
        for label, curve in curves.items():
            ax.plot(curve["k"], curve["mean"], "o-", ms=3, color=colors[label], label=label)
            low, high = curve["mean"] - curve["sem"], curve["mean"] + curve["sem"]
            ax.fill_between(curve["k"], low, high, color=colors[label], alpha=0.2)
        ax.set_xlabel("prefix length k (sentences)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for label, curve in chance.items():
        axes[0].plot(curve["k"], curve["mean"], ":", color=colors[label], lw=1)
    axes[0].plot([], [], ":", color="0.3", label="chance: another image's prefixes")
    axes[0].set(ylabel="mean cosine score $s_k$")
    axes[0].set_title(f"image–prefix score vs prefix length ({tag})")
    chance_line(axes[1], 0.0, label="no change")
    axes[1].set(ylabel="mean $s_k - s_1$ (cosine units)")
    axes[1].set_title(f"rise over the first sentence ({tag})")
    for ax in axes:
        ax.legend(fontsize=8)
    return fig


def rho_histogram(
    rhos: Mapping[str, np.ndarray],
    himo_k: Mapping[str, float],
    chance: float,
    colors: Mapping[str, str],
    title: str,
) -> plt.Figure:
    """Per model, the histogram of its per-image Pearson ρ(k, s_k) on 20 bins over [−1, 1],
    labelled with its HiMo@K (their mean), and HiMo@K's ``chance`` level dashed."""
    fig, ax = plt.subplots(figsize=(8.5, 3.6))
    labels = {name: f"{name} (HiMo@K = {himo_k[name]:+.2f})" for name in rhos}
    _step_histograms(ax, rhos, colors, np.linspace(-1, 1, 21), labels)
    chance_line(ax, chance, label=f"chance (ρ = {chance:g})", vertical=True)
    ax.set(xlabel="per-image Pearson ρ(k, $s_k$)", ylabel="number of images", title=title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def k_segment_case(
    curves: Mapping[str, np.ndarray], colors: Mapping[str, str], title: str
) -> plt.Figure:
    """Each model's score over the K cumulative segments of one caption (``curves[model]``,
    (K,), e.g. a row of ``derivations.k_segment_falls``'s ``curves``)."""
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    for label, curve in curves.items():
        ax.plot(range(1, len(curve) + 1), curve, "o-", ms=3, color=colors[label], label=label)
    k = len(next(iter(curves.values())))
    ax.set(xlabel=f"segment k of {k}", ylabel="cosine score $s_k$", title=title)
    ax.legend(fontsize=8)
    return fig


def model_chance_ticks(ax: plt.Axes, labels: list[str], chances: Mapping[str, float]) -> None:
    """On a panel of bars in the order of ``labels`` (``figures.metric_panels``), a dotted tick
    at the chance level of each model that has its own (``chances[label]``: where the model's
    context reads some of the test inputs alike, they tie and lower its chance)."""
    x = [labels.index(label) for label in chances if label in labels]
    y = [chances[label] for label in chances if label in labels]
    ax.hlines(y, [i - 0.4 for i in x], [i + 0.4 for i in x], colors="0.3", linestyles=":", lw=1.5,
              label="chance of this model's reads", zorder=4)  # fmt: skip
    ax.legend(fontsize=7, loc="lower right")
