"""Reading the CPU-scale study's results: run folders, logs, items, embeddings, claims, and
the labels and colours the tutorials share. Notebooks and ``paperlib.analysis`` import this
module only (never the study's execution)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperlib.study import results_files
from paperlib.study.scales import SCALES
from paperlib.tables.claims import EUCLIDEAN_CLIP, HYPERBOLIC_MERU, SMALLER
from paperlib.tables.inference import summary
from paperlib.train import read_log

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
# the shared pre-training's variant name, and the suffix of the model-size arm's variants (a
# narrower model with its own pre-training; ARGENT's Table 2 compares sizes): declared with the
# claims that name them
PRETRAIN = EUCLIDEAN_CLIP
PRETRAIN_HYPERBOLIC = HYPERBOLIC_MERU  # the ARGENT study's bases (``study.pretrain``'s MERU)


def is_base_reference(variant: str) -> bool:
    """Whether ``variant`` is a base evaluated as it is (either geometry, either model size)."""
    return variant.removesuffix(SMALLER) in (PRETRAIN, PRETRAIN_HYPERBOLIC)


EVAL_SEED = 10_000  # the held-out world every run is evaluated on (scenes no training draws)
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
# the seed-0 runs whose held-out embeddings the tutorials read
EMBEDDING_VARIANTS = (PRETRAIN, "InfoNCE (λ=0)", "MoLo", "Long-CLIP", "MERU", "HyCoCLIP", "ARGENT")


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


def available_scale(preferred: str = "auto", study: str | None = None) -> str:
    """``preferred`` if given, else ``full`` when its study has finished (``study``'s claims
    all decided on every planned run: a study stopped early leaves the tutorial that reads it
    at ``smoke``), else ``smoke``."""
    if preferred not in ("auto", "smoke", "full"):
        raise ValueError(f"unknown study scale {preferred!r}; expected 'auto', 'smoke' or 'full'")
    if preferred != "auto":
        return preferred
    path = results_dir("full") / "claims.json"
    if not path.is_file():
        return "smoke"
    claims = json.loads(path.read_text())["claims"]
    partial = any(c["partial"] for c in claims if study is None or c["study"] == study)
    return "smoke" if study is not None and partial else "full"


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
    return results_files.read_run_done(run_folder(scale_name, study, variant, seed) / "run.done")


def read_items(scale_name: str, study: str, variant: str, seed: int) -> dict[str, np.ndarray]:
    """Per-item metric values of one run (``metrics.items``), float64."""
    return results_files.read_items(run_folder(scale_name, study, variant, seed) / "items.npz")


def read_item(scale_name: str, study: str, variant: str, seed: int, item: str) -> np.ndarray:
    """One per-item vector of a run, refused by name when its ``items.npz`` lacks it."""
    path = run_folder(scale_name, study, variant, seed) / "items.npz"
    return results_files.item(results_files.read_items(path), item, path)


def item_table(
    scale_name: str, study: str, variant: str, item: str, seeds: list[int]
) -> np.ndarray:
    """(seeds, items) of one per-item metric, its vectors of one length."""
    rows = [
        (run_folder(scale_name, study, variant, s) / "items.npz",
         read_item(scale_name, study, variant, s, item))
        for s in seeds
    ]  # fmt: skip
    return results_files.stack(rows, item)


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
        info = results_files.read_run_done(done)
        for path in sorted(done.parent.glob("*.json")):
            result = results_files.read_benchmark(path)
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


def load_claims(scale_name: str) -> dict[str, Any]:
    """``results/<scale>/claims.json``: ``{"claims": [...], "targets": [...]}``."""
    path = results_dir(scale_name) / "claims.json"
    if not path.exists():
        raise FileNotFoundError(
            f"no claims file at {path}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return results_files.read_claims(path)


def valid_seeds(scale_name: str, study: str, variant: str) -> list[int]:
    """Finished seeds of a study run that ``claims.json`` does not list as collapsed."""
    try:
        seeds = finished_seeds(scale_name, study, variant)
    except FileNotFoundError:
        return []
    collapsed = {e.split(":")[0] for e in load_claims(scale_name)["excluded_runs"]}
    return [s for s in seeds if f"{study}/{slug(variant)}/seed{s}" not in collapsed]


def item_value(scale_name: str, study: str, variant: str, item: str) -> dict[str, Any] | None:
    """Mean of one per-item metric over a variant's valid seeds with its 95 % interval (the
    claims' estimator, ``tables.inference.based_estimate``: the pre-trained base as a level);
    None when no seed is valid."""
    seeds = valid_seeds(scale_name, study, variant)
    if not seeds:
        return None
    per_seed = item_table(scale_name, study, variant, item, seeds)
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    return {**summary(per_seed, bases), "seeds": seeds}


def claim_panels(
    scale_name: str, study: str, claims: list[dict[str, Any]], variants: dict[str, str]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """One (claim, {label: :func:`item_value`}) per claimed item of ``study`` (the last claim
    of each item), over the ``variants`` ({variant: label}) that have a valid seed and whose
    runs record the item (the share of parents inside the aperture radius only where a run
    counts them: ``design.Run.parents``): the numbers ``figures.metric_panels`` draws."""
    measured = {}  # variant -> the per-item metrics its first valid seed's items.npz holds
    for variant in variants:
        seeds = valid_seeds(scale_name, study, variant)
        if seeds:
            path = run_folder(scale_name, study, variant, seeds[0]) / "items.npz"
            measured[variant] = set(results_files.read_items(path))
    claimed = {c["item"]: c for c in claims if c["study"] == study}.values()
    return [
        (c, {
            variants[v]: item_value(scale_name, study, v, c["item"])
            for v, items in measured.items() if c["item"] in items
        })
        for c in claimed
    ]  # fmt: skip


def load_curves(scale_name: str) -> dict[str, list[dict[str, Any]]]:
    """The learning curves of ``results/<scale>/curves.json`` (``study.curves``): each run's
    validation curves (``validation``), the bases' (``bases``) and the hyperbolic runs'
    aperture diagnostics over training (``aperture``)."""
    path = results_dir(scale_name) / "curves.json"
    if not path.exists():
        raise FileNotFoundError(
            f"no curves file at {path}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return results_files.read_curves(path)


def seed_logs(scale: str, study: str, variant: str) -> dict[int, list[dict[str, Any]]]:
    """Training logs of every finished seed of a study run: ``{seed: records}``."""
    return {
        seed: load_log(scale, study, variant, seed)
        for seed in finished_seeds(scale, study, variant)
    }
