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
    """``$PAPERLIB_FIGURES`` if set, else the repository's ``figures/``."""
    return Path(os.environ.get("PAPERLIB_FIGURES", REPO_ROOT / "figures"))


def use_style() -> None:
    """Apply the companion's matplotlib style."""
    plt.rcParams.update(STYLE)


def save(fig: plt.Figure, name: str, directory: str | Path | None = None,
         formats: tuple[str, ...] = ("png", "pdf")) -> list[Path]:
    """Write ``fig`` as ``<directory>/<name>.<fmt>`` for each format, atomically."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"figure name must be a plain file stem like 'hide_spectrum'; got {name!r}")
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


def bars_with_errors(ax: plt.Axes, labels: list[str], samples: list[list[float]],
                     ylabel: str, title: str = "", colors: list | None = None) -> None:
    """Bar chart of per-group means with ± one standard deviation and the individual seeds."""
    import numpy as np

    from paperlib.tables.summary import mean_std

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
