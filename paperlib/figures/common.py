"""What every figure shares: the companion's matplotlib style, where figures go, and saving
``save(fig, name)`` -> ``<figures>/name.png`` and ``<figures>/name.pdf``, atomically (temporary
file + rename) so an interrupted run never leaves a half-written figure behind; and the small
drawing pieces several figures use (a chance line, bars with their seeds)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from paperlib.atomic import atomic_write
from paperlib.study.report.tables import mean_std

REPO_ROOT = Path(__file__).resolve().parent.parent.parent

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


def chance_line(ax: plt.Axes, chance: float | None, label: str = "chance", vertical: bool = False):
    """A dashed line at a metric's chance level (nothing when it has none, ``chance=None``)."""
    if chance is None:
        return None
    draw = ax.axvline if vertical else ax.axhline
    return draw(chance, color="0.3", ls="--", lw=1.0, label=label, zorder=1)


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
