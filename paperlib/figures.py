"""Saving figures: ``save(fig, name)`` -> ``figures/name.png`` and ``figures/name.pdf``.

One shared style for every notebook; writes are atomic (temporary file + rename) so an
interrupted run never leaves a half-written figure behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
import matplotlib.pyplot as plt  # noqa: E402

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
        target = directory / f"{name}.{fmt}"
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=f".{fmt}")
        os.close(fd)
        try:
            # fixed metadata so re-running a notebook gives byte-stable PDFs
            metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
            fig.savefig(tmp, format=fmt, metadata=metadata)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        written.append(target)
    return written
