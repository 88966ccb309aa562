"""Reading the study's run folders for the later stages and the tutorials: each run's record,
per-item values, training log, held-out embeddings and results files, the learning curves, and
the labels and colours the tutorials share. Every file is read through the checks of
:mod:`~paperlib.study.results.files`; an error names the command that produces what is
missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperlib.study.paths import results_dir, slug
from paperlib.study.plan.claims import SMALLER
from paperlib.study.plan.design import PRETRAIN
from paperlib.study.results import files
from paperlib.train import read_log

# the HiMo runs the tutorials compare: study variant -> short label, and their colours
HIMO_MODELS = {
    PRETRAIN: "pre-trained",
    "InfoNCE (λ=0)": "InfoNCE (λ=0)",
    "Long-CLIP": "Long-CLIP",
    "MoLo": "MoLo",
}
HIMO_COLORS = {
    "pre-trained": "tab:gray",
    "InfoNCE (λ=0)": "tab:blue",
    "Long-CLIP": "tab:green",
    "MoLo": "tab:red",
}
ARGENT_COLORS = {
    "MERU": "C3",
    "HyCoCLIP": "C1",
    "ARGENT": "C0",
    f"HyCoCLIP{SMALLER}": "C8",
    f"ARGENT{SMALLER}": "C9",
    f"ARGENT{SMALLER}, no weights": "C2",
    f"ARGENT{SMALLER}, weights on all pairs": "C4",
    f"ARGENT{SMALLER}, no regularizer": "C5",
    f"ARGENT{SMALLER}, Ent": "C6",
}


def run_folder(scale_name: str, study: str, variant: str, seed: int = 0) -> Path:
    """``results/<scale>/<study>/<variant slug>/seed<k>``; errors say how to produce it."""
    folder = results_dir(scale_name) / study / slug(variant) / f"seed{seed}"
    if not (folder / "run.done").is_file():
        raise FileNotFoundError(
            f"no finished study run at {folder}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return folder


def finished_seeds(scale_name: str, study: str, variant: str) -> list[int]:
    """The seeds of a study run that have finished (their ``run.done`` exists), sorted; an
    error naming the command that produces them when none has."""
    folder = results_dir(scale_name) / study / slug(variant)
    seeds = sorted(int(p.parent.name.removeprefix("seed")) for p in folder.glob("seed*/run.done"))
    if not seeds:
        raise FileNotFoundError(
            f"no finished study run in {folder}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return seeds


def has_finished_runs(scale_name: str, study: str, variant: str) -> bool:
    """Whether any seed of a study run has finished (a variant a partial study has not run
    yet is left out of the figures, not an error)."""
    return any((results_dir(scale_name) / study / slug(variant)).glob("seed*/run.done"))


def run_info(scale_name: str, study: str, variant: str, seed: int = 0) -> dict[str, Any]:
    """The run's checked ``run.done`` record (config, timings, ``collapsed`` reason or None)."""
    return files.read_run_done(run_folder(scale_name, study, variant, seed) / "run.done")


def read_items(scale_name: str, study: str, variant: str, seed: int) -> dict[str, np.ndarray]:
    """Per-item metric values of one run (``metrics.items``), float64."""
    return files.read_items(run_folder(scale_name, study, variant, seed) / "items.npz")


def read_item(scale_name: str, study: str, variant: str, seed: int, item: str) -> np.ndarray:
    """One per-item vector of a run, refused by name when its ``items.npz`` lacks it."""
    path = run_folder(scale_name, study, variant, seed) / "items.npz"
    return files.item(files.read_items(path), item, path)


def item_table(
    scale_name: str, study: str, variant: str, item: str, seeds: list[int]
) -> np.ndarray:
    """(seeds, items) of one per-item metric, its vectors of one length."""
    rows = [
        (run_folder(scale_name, study, variant, s) / "items.npz",
         read_item(scale_name, study, variant, s, item))
        for s in seeds
    ]  # fmt: skip
    return files.stack(rows, item)


def load_embeddings(scale_name: str, study: str, variant: str) -> dict[str, Any]:
    """Held-out world features of a seed-0 run (see :data:`EMBEDDING_VARIANTS`)."""
    return torch.load(run_folder(scale_name, study, variant) / "embeddings.pt", weights_only=True)


def load_log(scale_name: str, study: str, variant: str, seed: int = 0) -> list[dict[str, Any]]:
    """The training log records (one dict per logged step) of a study run."""
    return read_log(run_folder(scale_name, study, variant, seed))


def load_results(scale_name: str) -> list[dict[str, Any]]:
    """One flat row per (study, variant, seed, dataset) with that result file's metrics."""
    rows = []
    for done in sorted(results_dir(scale_name).glob("*/*/seed*/run.done")):
        info = files.read_run_done(done)
        for path in sorted(done.parent.glob("*.json")):
            result = files.read_benchmark(path)
            rows.append(
                {
                    "study": info["study"],
                    "variant": info["variant"],
                    "seed": info["seed"],
                    "collapsed": info.get("collapsed"),
                    "dataset": result["dataset"],
                    **result["metrics"],
                }
            )
    return rows


def load_curves(scale_name: str) -> dict[str, list[dict[str, Any]]]:
    """The learning curves of ``results/<scale>/curves.json`` (``study.results.curves``): each run's
    validation curves (``validation``), the bases' (``bases``) and the hyperbolic runs'
    aperture diagnostics over training (``aperture``)."""
    path = results_dir(scale_name) / "curves.json"
    if not path.exists():
        raise FileNotFoundError(
            f"no curves file at {path}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return files.read_curves(path)


def seed_logs(scale: str, study: str, variant: str) -> dict[int, list[dict[str, Any]]]:
    """Training logs of every finished seed of a study run: ``{seed: records}``."""
    return {
        seed: load_log(scale, study, variant, seed)
        for seed in finished_seeds(scale, study, variant)
    }
