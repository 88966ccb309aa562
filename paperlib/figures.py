"""Saving figures: ``save(fig, name)`` -> ``figures/name.png`` and ``figures/name.pdf``.

One shared style for every notebook; writes are atomic (temporary file + rename) so an
interrupted run never leaves a half-written figure behind.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
import matplotlib.pyplot as plt  # noqa: E402

from paperlib.atomic import atomic_write  # noqa: E402
from paperlib.tables.summary import claim_name, mean_std

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
    import numpy as np

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
    """One panel per logged quantity (``loss`` first) against the training step."""
    keys = ["loss", *[k for k in keys if k != "loss" and k in log[0]]]
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3), squeeze=False)
    steps = [r["step"] for r in log]
    for ax, key in zip(axes[0], keys):
        ax.plot(steps, [r[key] for r in log])
        ax.set(title=key, xlabel="training step", ylabel=key)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ claims (results/<scale>/claims.json)

VERDICT_COLORS = {
    "reproduces": "tab:green",
    "contradicts": "tab:red",
    "negligible": "tab:blue",
    "inconclusive": "tab:gray",
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
    import numpy as np

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


def validation_curves(
    curves: list[dict],
    colors: dict[str, str] | None = None,
    targets: dict[str, float] | None = None,
) -> plt.Figure:
    """One panel per (study, metric) of ``curves.json``'s validation curves: each variant's
    seeds (thin) and their mean (thick) against the training step, the last fifth of the
    schedule shaded (where the plateau criterion looks) and a target (dotted) where given."""
    import numpy as np

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
            color = (colors or {}).get(variant)
            steps = [p["step"] for p in group[0]["points"]]
            for curve in group:
                ax.plot(
                    [p["step"] for p in curve["points"]],
                    [p["value"] for p in curve["points"]],
                    color=color,
                    lw=0.6,
                    alpha=0.5,
                )
            same = [c for c in group if [p["step"] for p in c["points"]] == steps]
            mean = np.mean([[p["value"] for p in c["points"]] for c in same], axis=0)
            ax.plot(steps, mean, color=color, lw=2, label=f"{variant} ({len(group)})")
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
    import numpy as np

    names = list(dict.fromkeys(c["features"] for c in curves))
    if not names:
        raise ValueError("aperture_over_training needs at least one curve")
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        by_variant: dict[str, list[dict]] = {}
        for curve in (c for c in curves if c["features"] == name):
            by_variant.setdefault(curve["variant"], []).append(curve)
        for variant, group in by_variant.items():
            color = (colors or {}).get(variant)
            steps = [p["step"] for p in group[0]["points"]]
            for curve in group:
                ax.plot(
                    [p["step"] for p in curve["points"]],
                    [p["frac_inside_radius"] for p in curve["points"]],
                    color=color,
                    lw=0.6,
                    alpha=0.5,
                )
            same = [c for c in group if [p["step"] for p in c["points"]] == steps]
            mean = np.mean([[p["frac_inside_radius"] for p in c["points"]] for c in same], axis=0)
            ax.plot(steps, mean, color=color, lw=2, label=variant)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("training step")
        ax.set_ylabel("fraction inside 2K/√c")
        ax.set_title(f"parents: {name}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
