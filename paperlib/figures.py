"""Saving figures: ``save(fig, name)`` -> ``figures/name.png`` and ``figures/name.pdf``.

One shared style for every notebook; writes are atomic (temporary file + rename) so an
interrupted run never leaves a half-written figure behind.
"""

from __future__ import annotations

import itertools
import os
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from torch import Tensor

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter  # noqa: E402

from paperlib.analysis.hyperbolic import (  # noqa: E402
    LEVEL_NAMES,
    CommonStart,
    DiscView,
    Drift,
    SeedSummary,
    inset_bounds,
)
from paperlib.atomic import atomic_write  # noqa: E402
from paperlib.tables.summary import claim_name, mean_std  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "font.size": 10,
    "axes.titlesize": 11,
    "legend.frameon": False,
}


def figures_dir() -> Path:
    """``$PAPERLIB_FIGURES`` if set (a relative path is taken from the repository root, wherever
    the notebook runs), else the repository's ``figures/``."""
    return REPO_ROOT / os.environ.get("PAPERLIB_FIGURES", "figures")


def use_style() -> None:
    """Apply the companion's matplotlib style."""
    plt.rcParams.update(STYLE)


def save(
    fig: plt.Figure,
    name: str,
    directory: str | Path | None = None,
    formats: tuple[str, ...] = ("png", "pdf"),
) -> list[Path]:
    """Write ``fig`` as ``<directory>/<name>.<fmt>`` for each format, atomically."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(
            f"figure name must be a plain file stem like 'hide_spectrum'; got {name!r}"
        )
    directory = Path(directory) if directory is not None else figures_dir()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        # fixed metadata so re-running a notebook gives byte-stable PDFs
        metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
        target = directory / f"{name}.{fmt}"
        atomic_write(target, lambda h, f=fmt, m=metadata: fig.savefig(h, format=f, metadata=m))
        written.append(target)
    return written


def bars_with_errors(
    ax: plt.Axes,
    labels: list[str],
    samples: list[list[float]],
    ylabel: str,
    title: str = "",
    colors: list | None = None,
) -> None:
    """Bar chart of per-group means with ± one standard deviation and the individual seeds."""
    means, stds = zip(*(mean_std(list(s)) for s in samples)) if samples else ((), ())
    x = np.arange(len(labels))
    ax.bar(x, means, yerr=stds, capsize=3, color=colors, alpha=0.8)
    for i, s in enumerate(samples):
        ax.scatter([i] * len(s), s, color="black", s=8, zorder=3)
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)


def plot_log(log: list[dict], keys: list[str], title: str = "") -> plt.Figure:
    """One panel per logged quantity (``loss`` first) against the training step, each from
    the records that hold it."""
    keys = ["loss", *[k for k in keys if k != "loss" and any(k in r for r in log)]]
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3), squeeze=False)
    for ax, key in zip(axes[0], keys):
        ax.plot([r["step"] for r in log if key in r], [r[key] for r in log if key in r])
        ax.set(title=key, xlabel="training step", ylabel=key)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ claims (results/<scale>/claims.json)

VERDICT_COLORS = {
    "reproduces": "tab:green",
    "reproduces in sign, below the published effect": "tab:olive",
    "below the published effect": "tab:orange",
    "contradicts": "tab:red",
    "negligible": "tab:blue",
    "negligible, with the paper's sign": "tab:blue",
    "negligible, with the other sign": "tab:blue",
    "at ceiling": "tab:purple",
    "inconclusive": "tab:gray",
    "underpowered": "tab:brown",
    "unresolvable at this test set": "tab:brown",
    "untestable": "0.75",
}
UNIT_TEXT = {"%": "percentage points", "ρ": "ρ", "fraction": "fraction of items"}


def claim_unit(claim) -> str:
    """Unit of a claim's metric, read from its ``label``: ``"%"`` (label ends in ``(%)``),
    ``"ρ"`` (a correlation, ``(ρ)``) or ``"fraction"`` (per-item rates and AUCs in [0, 1])."""
    label = claim["label"]
    if label.endswith("(%)"):
        return "%"
    if label.endswith("(ρ)"):
        return "ρ"
    return "fraction"


def claim_range(claim) -> tuple[float, float]:
    """The values a claim's metric can take: [−1, 1] for a correlation, [0, 100] for a
    percentage whose best value is 100, [0, ∞) for a percentage whose best value is 0 (a
    relative change, e.g. SSI), [0, 1] for a fraction."""
    unit = claim_unit(claim)
    if unit == "ρ":
        return -1.0, 1.0
    if unit == "%":
        return (0.0, 100.0) if claim["ceiling"] == 100 else (0.0, float("inf"))
    return 0.0, 1.0


def chance_line(ax: plt.Axes, chance: float | None, label: str = "chance", vertical: bool = False):
    """A dashed line at a metric's chance level (nothing when it has none, ``chance=None``)."""
    if chance is None:
        return None
    draw = ax.axvline if vertical else ax.axhline
    return draw(chance, color="0.3", ls="--", lw=1.0, label=label, zorder=1)


def clipped_errors(
    mean: float, low: float, high: float, bounds: tuple[float, float]
) -> tuple[float, float]:
    """Error-bar lengths (below, above) of ``mean`` for the interval [low, high] clipped to
    ``bounds``, the metric's range: an interval never reaches past a value the metric can take."""
    low, high = max(low, bounds[0]), min(high, bounds[1])
    return max(mean - low, 0.0), max(high - mean, 0.0)


def interval_bars(
    ax: plt.Axes,
    labels: list[str],
    values: list[dict | None],
    bounds: tuple[float, float],
    chance: float | None = None,
    colors: list | None = None,
    ylabel: str = "",
    title: str = "",
) -> None:
    """Bars of each group's ``mean`` with its 95 % ``interval`` (as in ``claims.json``'s
    ``variant_value``) clipped to ``bounds``, a dot per seed (``per_seed``) and a dashed line at
    the chance level; the y axis stays within ``bounds`` too. A ``None`` value (no valid run)
    leaves its slot empty."""
    x = np.arange(len(labels))
    colors = colors or [None] * len(labels)
    for i, (value, color) in enumerate(zip(values, colors)):
        if value is None:
            continue
        mean, (low, high) = value["mean"], value["interval"]
        below, above = clipped_errors(mean, low, high, bounds)
        ax.bar(i, mean, color=color, alpha=0.8)
        ax.errorbar(i, mean, yerr=[[below], [above]], color="black", capsize=3, lw=1)
        seeds = value.get("per_seed", [])
        ax.scatter([i] * len(seeds), seeds, color="black", s=8, zorder=3)
    chance_line(ax, chance)
    bottom, top = ax.get_ylim()  # the axis, too, stays within the metric's range
    ax.set_ylim(max(bottom, bounds[0]), min(top, bounds[1]))
    ax.set_xticks(x, labels, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)


def _forest_row(ax: plt.Axes, y: float, claim: dict, bounds: tuple[float, float]) -> None:
    """One claim of :func:`claims_forest`: its ±smallest band, raw and adjusted intervals,
    effect, the paper's effect (a diamond) and the verdict."""
    verdict = claim["verdict"]
    color = VERDICT_COLORS.get(verdict, "black")
    ax.text(
        1.01, y, verdict, transform=ax.get_yaxis_transform(), va="center", fontsize=8, color=color
    )
    sign = 1.0 if claim["better"] == "higher" else -1.0
    smallest = claim.get("smallest")
    if smallest:
        ax.fill_betweenx([y - 0.35, y + 0.35], -smallest, smallest, color="0.88", lw=0, zorder=0)
    if claim.get("paper_effect") is not None:
        ax.scatter(sign * claim["paper_effect"], y, marker="D", s=22, facecolor="none",
                   edgecolor="tab:purple", zorder=4)  # fmt: skip
    if claim.get("effect") is None:
        ax.text(0, y, " no valid seeds", va="center", fontsize=8)
        return
    effect = sign * claim["effect"]
    for key, width in (("interval_raw", 0.8), ("interval", 2.2)):
        if claim.get(key):
            low, high = sorted(sign * v for v in claim[key])
            below, above = clipped_errors(effect, low, high, bounds)
            ax.errorbar(
                effect, y, xerr=[[below], [above]], fmt="none", ecolor=color, lw=width, capsize=2
            )
    ax.plot(effect, y, "o", color=color, ms=4, zorder=5)


def metric_panels(
    panels: list[tuple[dict, dict[str, dict | None]]],
    colors: dict[str, str],
    ncols: int = 4,
    title: str = "",
) -> plt.Figure:
    """One :func:`interval_bars` panel per claimed metric: ``(claim, {label: value})`` pairs,
    a value being ``reader.item_value``'s mean, 95 % interval and seeds (None: no valid run),
    within the metric's range (:func:`claim_range`) and with its chance level."""
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols, 3.6 * nrows), squeeze=False)
    for ax, (claim, values) in zip(axes.flat, panels):
        labels = list(values)
        interval_bars(
            ax,
            labels,
            [values[k] for k in labels],
            claim_range(claim),
            claim["chance"],
            colors=[colors.get(k) for k in labels],
            ylabel=claim["label"],
            title=claim["label"] + ("" if claim["chance"] is not None else " (no chance level)"),
        )
        ax.tick_params(axis="x", labelsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def assert_values_match_claims(
    claims: Iterable[Mapping[str, Any]],
    values: Mapping[str, Mapping[str, Mapping[str, Any] | None]],
    label_of: Mapping[str, str] | None = None,
    intervals: bool = False,
) -> int:
    """Check that a figure shows the claims' own numbers. ``values`` is what the figure drew,
    ``{item: {label: value}}`` with a value as ``reader.item_value`` returns it (``mean``,
    ``interval``, ``seeds``) or None; ``label_of`` maps a claim's variant names to those labels
    (a name it lacks is its own label). For each side of each claim — its ``variant_value`` (the
    variant on ``item``) and ``baseline_value`` (the baseline on ``baseline_item``, else on
    ``item``) — that the figure drew from the claim's seeds, the drawn mean must equal the
    claim's (``np.isclose``), and with ``intervals`` its 95 % interval too. AssertionError naming
    the claim and the variant otherwise; returns the number of values compared."""
    label_of = label_of or {}
    compared = 0
    for claim in claims:
        sides = (
            ("variant_value", claim["variant"], claim["item"]),
            ("baseline_value", claim["baseline"], claim.get("baseline_item") or claim["item"]),
        )
        for side, variant, item in sides:
            mine = values.get(item, {}).get(label_of.get(variant, variant))
            if side not in claim or mine is None or list(mine["seeds"]) != list(claim["seeds"]):
                continue
            theirs = claim[side]
            if not np.isclose(mine["mean"], theirs["mean"]):
                raise AssertionError(
                    f"{claim['claim']}: the figure's mean for {variant} is {mine['mean']!r}, "
                    f"the claim's {side} {theirs['mean']!r}"
                )
            if intervals and not np.allclose(mine["interval"], theirs["interval"]):
                raise AssertionError(
                    f"{claim['claim']}: the figure's interval for {variant} is "
                    f"{list(mine['interval'])}, the claim's {side} {list(theirs['interval'])}"
                )
            compared += 1
    return compared


def claims_forest(claims: list[dict], title: str = "") -> plt.Figure:
    """Forest plot of ``claims.json`` claims, one panel per :func:`claim_unit` (effects in
    different units share no axis). Each row: the effect (variant − baseline, sign flipped where
    lower is better, so right of zero is the paper's direction) with its multiplicity-adjusted
    interval (thick) and raw 95 % interval (thin), the band ±smallest effect of interest (grey:
    an adjusted interval inside it is ``negligible``), the paper's own effect (purple diamond; the
    axis is widened to show it) and the verdict (colour :data:`VERDICT_COLORS`)."""
    groups: dict[str, list[dict]] = {}
    for claim in claims:
        groups.setdefault(claim_unit(claim), []).append(claim)
    if not groups:
        raise ValueError("claims_forest needs at least one claim")
    sizes = [len(g) for g in groups.values()]
    fig, axes = plt.subplots(
        len(groups),
        1,
        figsize=(9, 0.32 * sum(sizes) + 1.1 * len(groups)),
        gridspec_kw={"height_ratios": sizes},
        squeeze=False,
    )
    for ax, (unit, group) in zip(axes[:, 0], groups.items()):
        for row, claim in enumerate(group):
            lo, hi = claim_range(claim)
            _forest_row(ax, len(group) - 1 - row, claim, (lo - hi, hi - lo))
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(range(len(group)), [claim_name(c) for c in reversed(group)], fontsize=8)
        ax.set_ylim(-0.7, len(group) - 0.3)
        ax.set_xlabel(f"effect in the paper's direction ({UNIT_TEXT[unit]})")
    if title:
        axes[0, 0].set_title(title)
    fig.tight_layout()
    fig.text(
        0.01,
        -0.01,
        "dot: this study's effect; thick bar: adjusted interval; thin: raw 95 % interval; "
        "grey band: ± smallest effect of interest; ◇: the paper's effect",
        fontsize=7,
        va="top",
    )
    return fig


def trend_slopes_in_smallest_units(claim: dict, axis: str) -> tuple[float, float, float] | None:
    """``(slope, low, high)`` of a claim's trend on ``axis`` per doubling, in units of its
    smallest effect of interest with the paper's direction positive; None where the slope has
    no interval (not estimable)."""
    slope = ((claim.get("trend") or {}).get("slope") or {}).get(axis)
    if not slope or slope.get("interval") is None:
        return None
    scale = (1.0 if claim["better"] == "higher" else -1.0) / claim["smallest"]
    low, high = sorted(scale * v for v in slope["interval"])
    return scale * slope["slope"], low, high


def _trend_panel(ax: plt.Axes, claims: list[dict], axis: str) -> None:
    """One panel of :func:`claims_trend`: each claim's slope per doubling with its interval,
    or the words "not estimable"; the ±δ band and the zero line."""
    ax.axvspan(-1, 1, color="0.88", zorder=0)
    ax.axvline(0, color="0.3", lw=0.8)
    for y, claim in enumerate(claims):
        found = trend_slopes_in_smallest_units(claim, axis)
        if found is None:
            ax.text(0, y, "not estimable", ha="center", va="center", fontsize=7, color="0.4")
            continue
        slope, low, high = found
        color = "tab:green" if low > 0 else "tab:red" if high < 0 else "tab:gray"
        ax.errorbar(slope, y, xerr=[[slope - low], [high - slope]], fmt="o", ms=4, capsize=2,
                    color=color)  # fmt: skip
    ax.set_yticks(range(len(claims)), [c["label"] for c in claims], fontsize=7)
    ax.set_ylim(len(claims) - 0.5, -0.5)


def claims_trend(claims: list[dict], title: str = "") -> plt.Figure:
    """Small multiples of the headline claims' scale trend: one row per compared pair of arms
    (its claims' metrics), one column per axis (batch size, training length). Each claim shows
    the slope of its effect per doubling of the factor (``study.trend``), in units of its
    smallest effect of interest δ (the paper's direction right; the ±δ band shaded), with its
    family-level interval (green: toward the paper's side, red: away from it, grey: not
    established); a slope without an interval reads "not estimable" and shows no value."""
    groups: dict[str, list[dict]] = {}
    for claim in claims:
        groups.setdefault(f"{claim['variant']} vs {claim['baseline']}", []).append(claim)
    rows = max(1, len(groups))
    heights = [max(1.6, 0.35 * len(m) + 0.9) for m in groups.values()] or [2.0]
    fig, axes = plt.subplots(rows, 2, figsize=(11, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights}, sharex="col")  # fmt: skip
    for row, (pair, members) in zip(axes, groups.items()):
        for ax, axis in zip(row, ("batch", "length")):
            _trend_panel(ax, members, axis)
            ax.set_title(f"{pair}: per doubling of the {axis}", fontsize=9)
        row[1].set_yticklabels([])
    for ax in axes[-1]:
        ax.set_xlabel("slope of the effect per doubling / δ")
    if not groups:
        axes[0][0].text(0.5, 0.5, "no trend runs in these results", ha="center",
                        transform=axes[0][0].transAxes)  # fmt: skip
    fig.suptitle(title + " (paper's direction right)")
    fig.tight_layout()
    return fig


def seeds_and_mean(ax: plt.Axes, curves: list[dict], key: str, color, label: str) -> None:
    """Each curve's ``points[key]`` against its steps (thin) and, over the curves logged at the
    same steps as the first, their mean (thick, labelled)."""
    steps = [p["step"] for p in curves[0]["points"]]
    for curve in curves:
        xs, ys = [p["step"] for p in curve["points"]], [p[key] for p in curve["points"]]
        ax.plot(xs, ys, color=color, lw=0.6, alpha=0.5)
    same = [c for c in curves if [p["step"] for p in c["points"]] == steps]
    mean = np.mean([[p[key] for p in c["points"]] for c in same], axis=0)
    ax.plot(steps, mean, color=color, lw=2, label=label)


def mean_and_band(
    ax: plt.Axes,
    summary,
    label: str,
    bounds: tuple[float | None, float | None] = (None, None),
    **style: Any,
) -> None:
    """A :class:`~paperlib.analysis.hyperbolic.SeedSummary`'s mean over seeds (labelled with
    the seed count) and, for more than one seed, a ± one-standard-deviation band clipped to
    ``bounds`` (the quantity's range)."""
    ax.plot(
        summary.steps,
        summary.mean,
        marker="o",
        ms=3,
        label=f"{label} ({summary.n_seeds} seed(s))",
        **style,
    )
    if summary.n_seeds > 1:
        low, high = bounds
        ax.fill_between(
            summary.steps,
            np.clip(summary.mean - summary.std, low, high),
            np.clip(summary.mean + summary.std, low, high),
            color=style.get("color"),
            alpha=0.15,
        )


def validation_curves(
    curves: list[dict],
    colors: dict[str, str] | None = None,
    targets: dict[str, float] | None = None,
) -> plt.Figure:
    """One panel per (study, metric) of ``curves.json``'s validation curves: each variant's
    seeds (thin) and their mean (thick) against the training step, the last fifth of the
    schedule shaded (where the plateau criterion looks) and a target (dotted) where given."""

    panels = list(dict.fromkeys((c.get("study", "bases"), c["metric"]) for c in curves))
    if not panels:
        raise ValueError("validation_curves needs at least one curve")
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    for ax, (study, metric) in zip(axes[0], panels):
        shown = [c for c in curves if (c.get("study", "bases"), c["metric"]) == (study, metric)]
        by_variant: dict[str, list[dict]] = {}
        for curve in shown:
            by_variant.setdefault(curve.get("variant") or curve.get("model"), []).append(curve)
        for variant, group in by_variant.items():
            seeds_and_mean(
                ax, group, "value", (colors or {}).get(variant), f"{variant} ({len(group)})"
            )
        last = max(p["step"] for c in shown for p in c["points"])
        ax.axvspan(0.8 * last, last, color="0.92", zorder=0)
        if targets and metric in targets:
            ax.axhline(targets[metric], color="tab:green", ls=":", lw=1.2, label="target")
        ax.set_ylim(0, 1)
        ax.set_xlabel("training step")
        ax.set_title(f"{study}: {metric}")
        ax.legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    return fig


def aperture_over_training(curves: list[dict], colors: dict[str, str] | None = None) -> plt.Figure:
    """``curves.json``'s aperture curves: per feature set (captions, box phrases), each
    variant's fraction of the batch inside the undefined-aperture radius ``2K/√c`` against the
    training step (seeds thin, mean thick)."""

    names = list(dict.fromkeys(c["features"] for c in curves))
    if not names:
        raise ValueError("aperture_over_training needs at least one curve")
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        by_variant: dict[str, list[dict]] = {}
        for curve in (c for c in curves if c["features"] == name):
            by_variant.setdefault(curve["variant"], []).append(curve)
        for variant, group in by_variant.items():
            seeds_and_mean(ax, group, "frac_inside_radius", (colors or {}).get(variant), variant)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("training step")
        ax.set_ylabel("fraction inside 2K/√c")
        ax.set_title(f"parents: {name}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ tutorial 02: monotonicity


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


# ------------------------------------------------------------------ tutorial 03: aperture failure

RADIUS_LABEL = r"radius $2K/\sqrt{c}$ (ARGENT's c)"
#: the panels of :func:`aperture_training_panels`: (y label, title, the quantity's range)
APERTURE_PANELS = (
    ("mean caption norm ‖x‖", "caption (parent) norms", (0.0, np.inf)),
    ("fraction of captions inside 2K/√c", "captions with an undefined aperture", (0.0, 1.0)),
    ("mean half aperture ω (rad)", "half aperture of captions", (0.0, np.pi / 2)),
)
#: the panels of :func:`box_norm_panels`
BOX_PANELS = ("mean box-phrase norm", "mean box-crop norm")


def half_aperture_curves(
    norms, apertures: Mapping[float, Any], radii: Mapping[float, float], min_radius: float
) -> plt.Figure:
    """The half aperture against the parent norm, one curve per curvature (``apertures[c]``
    over ``norms``): solid outside the radius ``radii[c]`` (dashed line), dotted inside it, where
    the implementation clamps it at π/2."""
    norms = np.asarray(norms)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for c, aperture in apertures.items():
        aperture, inside = np.asarray(aperture), norms < radii[c]
        line = ax.plot(norms[~inside], aperture[~inside], label=f"c = {c:g}")[0]
        ax.plot(norms[inside], aperture[inside], ls=":", color=line.get_color())
        ax.axvline(radii[c], color=line.get_color(), lw=0.8, ls="--")
    ax.set_xlabel(r"parent norm $\|x\|$ (space part, Lorentz coordinates)")
    ax.set_ylabel(r"half aperture $\omega$ (rad)")
    ax.set_title(
        rf"$\omega(x)=\arcsin(2K/(\sqrt{{c}}\|x\|))$, K = {min_radius:g}; dotted: clamped at "
        r"$\pi/2$"
    )
    ticks = [0, np.pi / 8, np.pi / 4, 3 * np.pi / 8, np.pi / 2]
    ax.set_yticks(ticks, ["0", "π/8", "π/4", "3π/8", "π/2"])
    ax.legend(title=r"dashed: $2K/\sqrt{c}$")
    return fig


def aperture_gradient_panels(
    zoom, profiles: Mapping[str, tuple[Any, Any, Any]], r0: float, curv: float
) -> plt.Figure:
    """Per implementation ``profiles[label] = (aperture over zoom, gap, grad)``: left, its half
    aperture near the boundary ``r0`` (the undefined region shaded); right, |dω/d‖x‖| against
    the distance ``gap`` outside the boundary on log–log axes (zero gradients, which a log axis
    cannot show, left out), a dot at its largest value."""
    zoom = np.asarray(zoom, dtype=float)
    fig, (ax_w, ax_g) = plt.subplots(1, 2, figsize=(11, 3.8))
    for (label, (aperture, gap, grad)), style in zip(
        profiles.items(), itertools.cycle("- -- :".split())
    ):
        ax_w.plot(zoom, np.asarray(aperture, dtype=float), ls=style, label=label)
        gap, grad = np.asarray(gap, dtype=float), np.abs(np.asarray(grad, dtype=float))
        shown = (gap > 0) & (grad != 0)
        line = ax_g.loglog(gap[shown], grad[shown], ls=style, label=label)[0]
        peak = int(grad.argmax())
        ax_g.plot(gap[peak], grad[peak], "o", color=line.get_color())
    ax_w.axvspan(zoom[0], r0, color="0.9", zorder=0, label="undefined aperture")
    ax_w.set(xlabel=r"parent norm $\|x\|$", ylabel=r"half aperture $\omega$ (rad)")
    ax_w.set_title(f"near the boundary (c = {curv:g}, $2K/\\sqrt{{c}}$ = {r0:.2f})")
    ax_g.set_xlabel(r"distance outside the boundary $\|x\| - 2K/\sqrt{c}$")
    ax_g.set_ylabel(r"$|\partial\omega/\partial\|x\||$ (rad per unit norm)")
    ax_g.set_title("gradient magnitude (autograd); dot: its largest value")
    for ax in (ax_w, ax_g):
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def ray_panels(
    norms, angles: Mapping[str, Any], slopes: Mapping[str, Any], stationary: float, r0: float
) -> plt.Figure:
    """A parent moved along a ray, the child fixed: left, the ``angles`` (exterior angle, half
    aperture) against its norm; right, the derivative along the ray of each entailment-side loss
    (``slopes``; clipped to ±3, MERU's spike at the boundary goes far higher), zero and the
    ``stationary`` norm of ARGENT's sum marked. The undefined region (norm < ``r0``) shaded."""
    fig, (ax_a, ax_d) = plt.subplots(1, 2, figsize=(11, 3.8))
    for label, values in angles.items():
        ax_a.plot(norms, values, label=label)
    for label, values in slopes.items():
        ax_d.plot(norms, values, label=label)
    ax_a.set_xlabel(r"parent norm $\|x\|$ (parent on a ray, child fixed)")
    ax_a.set(
        ylabel="angle (rad)", title="the angle shrinks and the cone widens as the parent moves in"
    )
    ax_d.axhline(0, color="k", lw=0.8)
    ax_d.axvline(stationary, color="C2", ls=":", label="ARGENT's stationary norm")
    ax_d.set_ylim(-3, 3)
    ax_d.set_xlabel(r"parent norm $\|x\|$")
    ax_d.set_ylabel(r"$\partial\ell/\partial\|x\|$  (> 0: descent moves the parent in)")
    ax_d.set_title("derivative of the entailment-side loss along the ray")
    for ax in (ax_a, ax_d):
        ax.axvspan(0, r0, color="0.9", zorder=0)
    ax_a.legend(fontsize=8)
    ax_d.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def adaent_panels(
    angles,
    adaent: Mapping[float, Any],
    hinge: Mapping[float, Any],
    r0: float,
    distance,
    weight,
    curv: float,
) -> plt.Figure:
    """Left: per-pair penalty against the exterior angle — AdaEnt's Huber penalty for each β
    (``adaent[β]``; green, the first solid, the others dashed) and MERU's hinge for each parent
    norm (``hinge[norm]``, inside or outside the radius ``r0``); right: ARGENT's intra-modality
    pair ``weight`` h against the Lorentz ``distance`` and the inter-modality weight 1."""
    fig, (ax_l, ax_h) = plt.subplots(1, 2, figsize=(11, 3.8))
    for (beta, loss), style in zip(adaent.items(), itertools.chain(["-"], itertools.repeat("--"))):
        ax_l.plot(angles, loss, color="C2", ls=style, label=f"AdaEnt Huber, β = {beta:g} (any ‖x‖)")
    for (norm, loss), color in zip(hinge.items(), itertools.cycle(["C3", "C1", "C4"])):
        where = "inside" if norm < r0 else "outside"
        ax_l.plot(angles, loss, color=color, label=f"MERU hinge, ‖x‖ = {norm:.2f} ({where})")
    ax_l.set(xlabel=r"exterior angle $\varphi$ (rad)", ylabel="per-pair loss (unweighted)")
    ax_l.set_title("penalty vs angle")
    ax_h.plot(distance, weight, label=r"intra-modality: $h = 1 - e^{-d_L}$")
    ax_h.axhline(1.0, color="C1", ls="--", label="inter-modality: h = 1")
    ax_h.set_xlabel(rf"Lorentz distance $d_L$(parent, child), c = {curv:g}")
    ax_h.set(ylabel="AdaEnt pair weight h", title="ARGENT's pair weight")
    for ax in (ax_l, ax_h):
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def variant_styles(
    variants: Iterable[str], colors: Mapping[str, str], headline: str = "ARGENT"
) -> dict[str, dict[str, Any]]:
    """Line styles of a study's variants: each its colour, the ``headline`` variant thick, its
    ablations (named ``"<headline>, …"``) dashed."""
    return {
        v: {
            "color": colors[v],
            "lw": 2.2 if v == headline else 1.4,
            "ls": "--" if v.startswith(f"{headline},") else "-",
        }
        for v in variants
    }


def _legend_below(fig: plt.Figure, ax: plt.Axes, ncol: int) -> None:
    """The legend of ``ax`` under the whole figure (call after ``tight_layout``)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="upper center", ncol=ncol, bbox_to_anchor=(0.5, 0.0), fontsize=9
    )


def aperture_training_panels(
    stacked: Mapping[str, Sequence[SeedSummary]],
    radius: SeedSummary,
    drifts: Mapping[str, Drift],
    start: CommonStart,
    styles: Mapping[str, dict[str, Any]],
    title: str = "",
) -> plt.Figure:
    """The aperture diagnostics over training. One panel per entry of :data:`APERTURE_PANELS`:
    each variant's mean over seeds with its band (:func:`mean_and_band`) from
    ``stacked[variant]`` (caption norm, fraction inside the radius, half aperture), the mean
    ``radius`` 2K/√c on the first and π/2 on the last; a fourth panel: each variant's caption norm
    relative to the common start (``drifts``, ``analysis.hyperbolic.drift_from_start``), the
    spread at the first logged step shaded."""
    fig, axes = plt.subplots(1, len(APERTURE_PANELS) + 1, figsize=(19, 4))
    for variant, summaries in stacked.items():
        for ax, summary, (_, _, bounds) in zip(axes, summaries, APERTURE_PANELS):
            mean_and_band(ax, summary, variant, bounds, **styles[variant])
    for variant, drift in drifts.items():
        axes[-1].plot(drift.steps, drift.relative, marker="o", ms=3, **styles[variant])
    axes[0].plot(radius.steps, radius.mean, color="k", ls=":", label=RADIUS_LABEL)
    for ax, (ylabel, panel_title, _) in zip(axes, APERTURE_PANELS):
        ax.set(xlabel="training step", ylabel=ylabel, title=panel_title)
    axes[1].set_ylim(-0.05, 1.05)
    axes[2].axhline(np.pi / 2, color="k", ls=":", lw=0.8)
    axes[-1].axhline(0, color="k", lw=0.8)
    spread = start.spread
    axes[-1].axhspan(
        -spread, spread, color="0.9", zorder=0, label="spread at the first logged step"
    )
    axes[-1].set(xlabel="training step", ylabel=f"‖x‖ − common value at step {start.step}")
    axes[-1].set_title("caption norm relative to the common start")
    axes[-1].legend(fontsize=8, loc="lower left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    _legend_below(fig, axes[0], ncol=4)
    return fig


def box_norm_panels(
    stacked: Mapping[str, Sequence[SeedSummary]],
    radius: SeedSummary,
    styles: Mapping[str, dict[str, Any]],
    tag: str,
) -> plt.Figure:
    """Mean box-phrase and box-crop norms over training (:data:`BOX_PANELS`): each variant's
    mean over seeds with its band, from ``stacked[variant]``, and the mean ``radius`` 2K/√c;
    ``tag`` ends each title, e.g. ``"full study"``."""
    fig, axes = plt.subplots(1, len(BOX_PANELS), figsize=(11, 3.8))
    for variant, summaries in stacked.items():
        for ax, summary in zip(axes, summaries):
            mean_and_band(ax, summary, variant, (0, None), **styles[variant])
    for ax, label in zip(axes, BOX_PANELS):
        ax.plot(radius.steps, radius.mean, color="k", ls=":", label=RADIUS_LABEL)
        ax.set(xlabel="training step", ylabel=f"{label} ‖x‖")
        ax.set_title(f"{label.removeprefix('mean ')} ({tag})")
    fig.tight_layout()
    _legend_below(fig, axes[0], ncol=3)
    return fig


# ------------------------------------------------------------------ Poincaré discs (tutorial 04)


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


# ------------------------------------------------------------------ tutorial 00: samples, similarity


def sample_strip(samples: Sequence[Any], title_width: int = 20) -> plt.Figure:
    """One panel per world sample: its image, titled with its short caption (wrapped)."""
    fig, axes = plt.subplots(1, len(samples), figsize=(2 * len(samples), 2.4), squeeze=False)
    for ax, sample in zip(axes[0], samples):
        ax.imshow(sample.image)
        ax.set_title("\n".join(textwrap.wrap(sample.short_caption, title_width)), fontsize=7)
        ax.axis("off")
    return fig


def similarity_heatmap(sim: Tensor, title: str) -> plt.Figure:
    """An (images, captions) similarity matrix as a heat map with its colour bar."""
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    image = ax.imshow(np.asarray(sim), cmap="viridis")
    ax.set(xlabel="caption index", ylabel="image index", title=title)
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="cosine similarity")
    return fig


# ------------------------------------------------------------------ tutorial 01: HiDe


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
    """One (factors × components) η² map per model, values written in the cells."""
    fig, axes = plt.subplots(1, len(eta), figsize=(4.4 * len(eta), 3.9), sharey=True, squeeze=False)
    for ax, (label, table) in zip(axes[0], eta.items()):
        image = ax.imshow(table, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        for (row, col), value in np.ndenumerate(table):
            colour = "white" if value < 0.6 else "black"
            ax.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=7, color=colour)
        ax.set_xticks(range(table.shape[1]), [f"PC{j + 1}" for j in range(table.shape[1])])
        ax.set_title(label)
        ax.grid(False)
    axes[0, 0].set_yticks(range(len(row_labels)), row_labels)
    axes[0, len(eta) // 2].set_xlabel(
        "principal component of the caption batch (decreasing variance)"
    )
    fig.colorbar(image, ax=axes[0], label="correlation ratio $\\eta^2$", shrink=0.9)
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
    """Left: HiDe's m against the batch size; right: the mean principal angle of the sub-batch
    subspace to the full set's, mean ± std over sub-batches (``batch_size_sweep`` results)."""
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
    ax_a.set(ylabel="mean principal angle to the full set (degrees)")
    ax_a.set_title("subspace stability vs batch size")
    return fig


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
