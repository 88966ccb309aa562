"""The decided claims (``results/<scale>/claims.json``) and the study's curves
(``curves.json``): forest plots of the effects against δ and the paper's, the scale trend's
slopes, each claimed metric per variant with its interval and seeds, validation and aperture
curves over training (notebook 05)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from paperlib.figures.common import chance_line
from paperlib.study.plan.plateau import WINDOW
from paperlib.study.report.tables import claim_name

VERDICT_COLORS = {
    "reproduces": "tab:green",
    "reproduces, below the published effect": "tab:green",
    "reproduces in sign, below the published effect": "tab:olive",
    "contradicts": "tab:red",
    "negligible": "tab:blue",
    "negligible, with the paper's sign": "tab:blue",
    "negligible, with the other sign": "tab:blue",
    "premise fails here": "tab:purple",
    "differs between the two bases": "tab:orange",
    "inconclusive": "tab:gray",
    "underpowered": "tab:brown",
    "unresolvable at this test set": "tab:brown",
    "untestable": "0.75",
    "did not learn the world at this budget": "0.75",
    "the arms are near-copies": "0.75",
    "not run yet": "0.9",
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
    """One claim of :func:`claims_forest`: its ±δ band, raw and displayed intervals, effect,
    the paper's effect carried onto this study's scale (a diamond) and the verdict."""
    verdict = claim["verdict"]
    color = VERDICT_COLORS.get(verdict, "black")
    ax.text(
        1.01, y, verdict, transform=ax.get_yaxis_transform(), va="center", fontsize=8, color=color
    )
    sign = 1.0 if claim["better"] == "higher" else -1.0
    smallest = claim.get("smallest")
    if smallest:
        ax.fill_betweenx([y - 0.35, y + 0.35], -smallest, smallest, color="0.88", lw=0, zorder=0)
    if claim.get("paper_effect") is not None and claim.get("paper_effect_here") is not None:
        ax.scatter(sign * claim["paper_effect_here"], y, marker="D", s=22, facecolor="none",
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
    the slope of its effect per doubling of the factor (``study.decide.trend``), in units of its
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


def validation_curves(
    curves: list[dict],
    colors: dict[str, str] | None = None,
    targets: dict[str, float] | None = None,
) -> plt.Figure:
    """One panel per (study, metric) of ``curves.json``'s validation curves: each variant's
    seeds (thin) and their mean (thick) against the training step, the end of the schedule
    whose points the plateau criterion fits shaded (``study.plan.plateau.WINDOW``) and a target
    (dotted) where given."""

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
        ax.axvspan((1 - WINDOW) * last, last, color="0.92", zorder=0)
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
