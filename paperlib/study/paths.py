"""Where the study's files live: the repository, the results and runs folders, and the folder
name of a variant. Every stage reads its paths here; this module imports no stage."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent.parent


def repo_relative(path: str | Path) -> str:
    """``path`` relative to the repository when it lies inside it, else unchanged: what the
    results files record, so they read the same wherever the repository is cloned."""
    try:
        return Path(path).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def runs_root() -> Path:
    """Where training runs and the evaluation cache live: ``$PAPERLIB_RUNS`` when set (a
    re-run's own folder), else the repository's ``runs/`` (git ignores both)."""
    return REPO_ROOT / os.environ.get("PAPERLIB_RUNS", "runs")  # relative: from the repo


def portable_config(config: dict[str, Any]) -> dict[str, Any]:
    """The run's config as recorded in ``run.done``: its folder and init checkpoint relative."""
    config = json.loads(json.dumps(config))
    config["train"]["output_dir"] = repo_relative(config["train"]["output_dir"])
    if config["data"].get("cache_dir"):
        config["data"]["cache_dir"] = repo_relative(config["data"]["cache_dir"])
    if Path(config["model"]["init"]).suffix == ".pt":
        config["model"]["init"] = repo_relative(config["model"]["init"])
    return config


def slug(text: str) -> str:
    """ASCII folder name of a variant label: ``InfoNCE (λ=0)`` -> ``infonce-lam-0``."""
    text = text.lower().replace("τ", "tau").replace("λ", "lam").replace("κ", "kappa")
    keep = "".join(c if c.isascii() and c.isalnum() else "-" for c in text)
    return "-".join(part for part in keep.split("-") if part)


def results_root() -> Path:
    """``$PAPERLIB_RESULTS`` when set (a re-run's own folder: ``make reproduce`` writes there and
    compares with the committed copy), else the repository's committed ``results/``."""
    return REPO_ROOT / os.environ.get("PAPERLIB_RESULTS", "results")  # relative: from the repo


@contextlib.contextmanager
def results_root_at(root: str | Path):
    """Within the block, :func:`results_root` is ``root`` (e.g. the committed copy while a
    re-run's folder is ``$PAPERLIB_RESULTS``)."""
    before = os.environ.get("PAPERLIB_RESULTS")
    os.environ["PAPERLIB_RESULTS"] = str(Path(root).resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PAPERLIB_RESULTS")
        else:
            os.environ["PAPERLIB_RESULTS"] = before


def results_dir(scale_name: str) -> Path:
    return results_root() / scale_name
