"""Saving figures: ``save(fig, name)`` -> ``figures/name.png`` and ``figures/name.pdf``.

One shared style for every notebook; writes are atomic (temporary file + rename) so an
interrupted run never leaves a half-written figure behind.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from torch import Tensor

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
import matplotlib.pyplot as plt  # noqa: E402

from paperlib.analysis.hyperbolic import LEVEL_NAMES, DiscView  # noqa: E402
from paperlib.atomic import atomic_write  # noqa: E402
from paperlib.tables.summary import mean_std  # noqa: E402

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
    "contradicts": "tab:red",
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


def claims_forest(claims: list[dict], title: str = "") -> plt.Figure:
    """Forest plot of ``claims.json`` claims: each claim's effect (variant − baseline, sign
    flipped where lower is better, so right of zero is the paper's direction) with its 95 %
    interval, a zero line and the verdict beside it (colour :data:`VERDICT_COLORS`). Effects in
    different units share no axis, so there is one panel per :func:`claim_unit`. A claim with no
    effect (no valid seed pair) is marked "no valid seeds"."""
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
            y = len(group) - 1 - row
            verdict = claim["verdict"]
            ax.text(
                1.01,
                y,
                verdict,
                transform=ax.get_yaxis_transform(),
                va="center",
                fontsize=8,
                color=VERDICT_COLORS.get(verdict, "black"),
            )
            if claim.get("effect") is None:
                ax.text(0, y, " no valid seeds", va="center", fontsize=8)
                continue
            sign = 1.0 if claim["better"] == "higher" else -1.0
            effect = sign * claim["effect"]
            low, high = sorted(sign * v for v in claim["interval"])
            lo, hi = claim_range(claim)
            below, above = clipped_errors(effect, low, high, (lo - hi, hi - lo))
            ax.errorbar(
                effect,
                y,
                xerr=[[below], [above]],
                fmt="o",
                capsize=3,
                color=VERDICT_COLORS.get(verdict, "black"),
            )
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(range(len(group)), [claim_row(c) for c in reversed(group)], fontsize=8)
        ax.set_ylim(-0.7, len(group) - 0.3)
        ax.set_xlabel(f"effect in the paper's direction ({UNIT_TEXT[unit]})")
    if title:
        axes[0, 0].set_title(title)
    fig.tight_layout()
    return fig


def claim_row(claim: dict) -> str:
    """A claim's row label: metric and the two compared runs (or, for a claim on one run's two
    metrics, the run and "cleaned vs all")."""
    if claim.get("baseline_item"):
        return f"{claim['label']}: {claim['variant']}, vs all captions"
    return f"{claim['label']}: {claim['variant']} vs {claim['baseline']}"


def learning_curves(
    curves: list[dict], targets: dict[str, float], chances: dict[str, float]
) -> plt.Figure:
    """One panel per metric of ``curves.json``: each recipe's held-out value against its
    training CPU seconds (a fine-tune's own, without its pre-training), the learning target
    (dotted; ``targets`` by the curve's ``item``) and the chance level (dashed; ``chances``)."""
    metrics = list(dict.fromkeys(c["metric"] for c in curves))
    if not metrics:
        raise ValueError("learning_curves needs at least one curve")
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        shown = [c for c in curves if c["metric"] == metric]
        for curve in shown:
            xs = [p["cpu_seconds"] for p in curve["points"]]
            ys = [p["value"] for p in curve["points"]]
            ax.plot(xs, ys, marker="o", ms=3, label=curve["recipe"])
        item = shown[0]["item"]
        if item in targets:
            ax.axhline(targets[item], color="tab:green", ls=":", lw=1.2, label="target")
        chance_line(ax, chances.get(item))
        ax.set_ylim(0, 1)
        ax.set_xlabel("training CPU seconds")
        ax.set_title(metric)
        ax.legend(fontsize=6, loc="best")
    fig.tight_layout()
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
