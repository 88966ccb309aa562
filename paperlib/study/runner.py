"""The CPU-scale study runner: plan, execute (train, evaluate, resume), and write the claims.

Per seed, one **shared pre-training** (a small CLIP on the world's COCO-like short captions,
77 tokens, each scene's counterfactual twin in the same batch: ``data.twins``) stands in for a
pretrained CLIP; every fine-tune of that seed starts from it:

- **HiMo** (SPEC §1.1-1.4): fine-tunes on long captions (248 tokens, Long-CLIP residual
  positions), all with MoLo's settings (logit scale reset to ln 100 and decayed, label
  smoothing 0.1, lr, steps): ``MoLo`` (τ = 0.9, λ = 1), ``InfoNCE (λ=0)`` (MoLo with λ = 0:
  the component term is the only difference) and ``Long-CLIP`` (Long-CLIP's loss: long
  InfoNCE + short captions ↔ PCA-reduced image features, ``loss.pcm_dim`` components); on the
  sweep seeds MoLo's batch-size and HiDe-scope ablations (:data:`HIMO_SWEEP`).
- **ARGENT** (SPEC §2.2-2.4): hyperbolic fine-tunes on short captions with one box crop and
  its phrase per sample (GRIT-like, SPEC §2.3), the same optimiser for all: ``HyCoCLIP``,
  ``ARGENT`` (headline, every seed) and, on the sweep seeds, ``MERU`` and ARGENT's
  ablations (no weights, weights on all pairs, no regularizer, Ent instead of AdaEnt).

Every run is evaluated on the same ``eval_size`` held-out world samples (world seed
:data:`EVAL_SEED`, scenes the training worlds never draw), so variants and seeds are compared
item by item. Per run, ``results/<scale>/<study>/<variant>/seed<k>/`` receives the
CLIP_benchmark JSON files, the training log, ``items.npz`` (per-item metric values,
``metrics.items``) and ``run.done`` (config, timing, collapse check); seed-0 runs of
:data:`EMBEDDING_VARIANTS` also keep their held-out embeddings. At the end the claims of
``tables.claims`` are decided (``tables.verdicts``) into ``results/<scale>/claims.json``, after
the learning curves (``study.curves``) are written to ``results/<scale>/curves.json``.
Runs live in ``runs/study-<scale>/`` and resume: a finished run (its ``run.done`` records the
planned config) is skipped, an unfinished training resumes from its last checkpoint. ``runs/``
is a cache: a finished run whose checkpoint was deleted is trained again only when a run still
to train starts from it or the learning curves read its snapshots.

    python -m paperlib.study --scale smoke      # one seed, short schedules (make reproduce)
    python -m paperlib.study --scale full       # 5 seeds, 3 for sweeps (make study)

Choices the papers do not make for us (CPU scale): learning rates are raised from the
papers' 1e-6 (fine-tuning a converged ViT-L) to values that move an 8.5M-parameter model in a
few hundred steps; the hyperbolic runs start from the shared Euclidean pre-training (its
encoders and projections; α, curvature and logit scale at MERU's initial values) instead of
from scratch; Long-CLIP keeps ``pcm_dim`` = 8 of 64 dimensions (the paper: 32 of 768).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperlib.atomic import atomic_write, atomic_write_text
from paperlib.data.world import World
from paperlib.engine.checkpoint import load_checkpoint
from paperlib.engine.config import HYPERBOLIC_METHODS
from paperlib.engine.evaluation import Embedder, checkpoint_key, load_trained, world_texts
from paperlib.engine.methods import input_size
from paperlib.evaluate import evaluate_run
from paperlib.metrics.items import world_items
from paperlib.models import LOGIT_SCALE_MAX
from paperlib.study.curves import CURVE_VARIANTS, keeps_curve, write_curves
from paperlib.study.decide import decide, run_collapse, summary_table
from paperlib.study.reader import (
    EMBEDDING_VARIANTS,
    EVAL_SEED,
    PRETRAIN,
    REPO_ROOT,
    SMALLER,
    load_claims,
    repo_relative,
    results_dir,
    slug,
)
from paperlib.train import read_log, train_distributed, train_run, trained_to_end

HIMO_BENCHMARKS = (
    "world-long",
    "world-short",
    "world-monotonicity",
    "world-cola",
    "world-zeroshot",
)

ARGENT_BENCHMARKS = ("world-zeroshot", "world-long", "world-short", "world-hierarchy")


# a 32 px ResNet image tower: shapes of a few pixels are learned several times faster than by
# paper-tiny's 8 px-patch ViT at equal CPU time (the losses are architecture-agnostic)
MODEL = "paper-tiny-rn"
# the model-size arm: the same ResNet at half the width (2.9M parameters against 8.5M)
MODEL_SMALLER = "paper-micro-rn"
# each model's shared pre-training: its variant and its folder under the study's runs
PRETRAINING = {
    MODEL: (PRETRAIN, "pretrain"),
    MODEL_SMALLER: (PRETRAIN + SMALLER, "pretrain-smaller"),
}


@dataclass(frozen=True)
class Scale:
    """Schedule sizes of one study scale."""

    seeds: tuple[int, ...]
    sweep_seeds: tuple[int, ...]  # seeds that also run the ablations and sweeps
    pretrain_steps: int
    pretrain_batch: int
    pretrain_lr: float
    finetune_steps: int
    finetune_batch: int
    finetune_lr: float
    hyperbolic_steps: int
    hyperbolic_batch: int
    hyperbolic_lr: float
    train_size: int
    eval_size: int
    pcm_dim: int = 8


SCALES = {
    "smoke": Scale(
        seeds=(0,),
        sweep_seeds=(0,),
        pretrain_steps=40,
        pretrain_batch=64,
        pretrain_lr=1e-3,
        finetune_steps=10,
        finetune_batch=32,
        finetune_lr=2e-4,
        hyperbolic_steps=10,
        hyperbolic_batch=32,
        hyperbolic_lr=5e-4,
        train_size=2048,
        eval_size=200,
    ),
    "full": Scale(
        seeds=(0, 1, 2, 3, 4),
        sweep_seeds=(0, 1, 2),
        pretrain_steps=450,
        pretrain_batch=128,
        pretrain_lr=1e-3,
        finetune_steps=120,
        finetune_batch=64,
        finetune_lr=5e-4,
        hyperbolic_steps=100,
        hyperbolic_batch=64,
        hyperbolic_lr=5e-4,
        train_size=30_000,
        eval_size=1000,
    ),
}


@dataclass(frozen=True)
class Run:
    """One training run of the study and how to evaluate it."""

    study: str  # "himo" | "argent"
    variant: str  # row label in the tables
    seed: int
    config: dict[str, Any]
    benchmarks: tuple[str, ...]
    after: str | None = None  # variant whose checkpoint initialises this run
    nproc: int = 1  # training processes (> 1: torchrun, gloo on CPU)

    @property
    def name(self) -> str:
        return f"{self.study}/{self.variant}/seed{self.seed}"


LOG_EVERY = 5


def runs_root() -> Path:
    """Where training runs and the evaluation cache live: ``$PAPERLIB_RUNS`` when set (a
    re-run's own folder), else the repository's ``runs/`` (git ignores both)."""
    return REPO_ROOT / os.environ.get("PAPERLIB_RUNS", "runs")  # relative: from the repo


def snapshot_every(steps: int) -> int:
    """Checkpoint period: about a fifth of the schedule, on a logged step (``LOG_EVERY``)."""
    return max(LOG_EVERY, round(steps / 5 / LOG_EVERY) * LOG_EVERY)


def _config(
    method: str, seed: int, scale: Scale, steps: int, batch: int, output: Path, **sections
) -> dict:
    """A run's training config (``MODEL`` unless ``sections["model"]`` names another)."""
    config = {
        "method": method,
        "model": {"name": MODEL, "init": "random"},
        "data": {"dataset": "world", "size": scale.train_size, "image_size": 32, "seed": seed},
        "optim": {},
        "loss": {},
        "train": {
            "steps": steps,
            "batch_size": batch,
            "seed": seed,
            "log_every": LOG_EVERY,
            "diag_every": 10,
            "ckpt_every": snapshot_every(steps),
            "output_dir": str(output),
            "progress": False,
        },
    }
    for section, values in sections.items():
        config[section].update(values)
    return config


def pretrain_run(scale: Scale, seed: int, root: Path, model: str = MODEL) -> Run:
    """The seed's shared pre-training: CLIP on short captions (77 tokens); of ``MODEL``, or of
    ``MODEL_SMALLER`` for the model-size arm (variant ``PRETRAIN + SMALLER``)."""
    variant, folder = PRETRAINING[model]
    config = _config(
        "clip",
        seed,
        scale,
        scale.pretrain_steps,
        scale.pretrain_batch,
        root / f"{folder}/seed{seed}",
        model={"name": model},
        data={"caption": "short_caption", "twins": True},
        optim={"lr": scale.pretrain_lr, "warmup_steps": 50, "weight_decay": 0.1},
        train={"keep_checkpoints": keeps_snapshots(variant, seed, scale)},
    )
    return Run("himo", variant, seed, config, HIMO_BENCHMARKS)


def keeps_snapshots(variant: str, seed: int, scale: Scale) -> bool:
    """Whether a run keeps its snapshots for ``study.curves`` (curve variants, first seed)."""
    return variant in CURVE_VARIANTS and seed == scale.seeds[0]


# MoLo's fine-tuning settings, shared by every HiMo variant (SPEC §1.1-1.2)
HIMO_FINETUNE = {
    "model": {"context_length": 248, "long_text": "residual", "logit_scale_init": LOGIT_SCALE_MAX},
    "loss": {"label_smoothing": 0.1, "scope": "global"},
    "optim": {
        "warmup_steps": 10,
        "weight_decay": 0.01,
        "betas": (0.9, 0.999),
        "decay_logit_scale": True,
    },
}


HIMO_HEADLINE = {
    "MoLo": ("himo", {"tau": 0.9, "lam": 1.0}),
    "InfoNCE (λ=0)": ("himo", {"tau": 0.9, "lam": 0.0}),
}
# MoLo ablations on the sweep seeds: label -> (loss changes, batch factor, processes). The
# batch-size ablation keeps the samples seen (steps / factor), as the paper keeps its epochs;
# the HiDe-scope pair runs both arms on 2 gloo ranks (torchrun), PCA on the global batch or
# on each rank's half (the reference code's), so the scope is the only difference
HIMO_SWEEP = {
    "MoLo, half batch": ({}, 0.5, 1),
    "MoLo, double batch": ({}, 2.0, 1),
    "MoLo, 2 ranks, global HiDe": ({"scope": "global"}, 1.0, 2),
    "MoLo, 2 ranks, HiDe per rank": ({"scope": "local"}, 1.0, 2),
}


def himo_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """MoLo, MoLo with λ = 0 and Long-CLIP, each from the seed's shared pre-training; on the
    sweep seeds also MoLo's batch-size and HiDe-scope ablations (:data:`HIMO_SWEEP`)."""
    molo = HIMO_HEADLINE["MoLo"][1]
    variants = {label: (method, loss, 1.0, 1) for label, (method, loss) in HIMO_HEADLINE.items()}
    variants["Long-CLIP"] = ("longclip", {"pcm_dim": scale.pcm_dim, "short_weight": 0.5}, 1.0, 1)
    if seed in scale.sweep_seeds:
        for label, (loss, factor, nproc) in HIMO_SWEEP.items():
            variants[label] = ("himo", {**molo, **loss}, factor, nproc)
    runs = []
    for label, (method, loss, factor, nproc) in variants.items():
        config = _config(
            method,
            seed,
            scale,
            round(scale.finetune_steps / factor),
            round(scale.finetune_batch * factor),
            root / f"himo/{slug(label)}/seed{seed}",
            model=dict(HIMO_FINETUNE["model"]),
            loss={**HIMO_FINETUNE["loss"], **loss},
            optim={**HIMO_FINETUNE["optim"], "lr": scale.finetune_lr},
            train={"keep_checkpoints": keeps_snapshots(label, seed, scale)},
        )
        runs.append(Run("himo", label, seed, config, HIMO_BENCHMARKS, after=PRETRAIN, nproc=nproc))
    return runs


ARGENT_HEADLINE = {"HyCoCLIP": ("hycoclip", {}), "ARGENT": ("argent", {})}
ARGENT_SWEEP = {
    "MERU": ("meru", {}),
    "ARGENT, no weights": ("argent", {"weights": "none"}),
    "ARGENT, weights on all pairs": ("argent", {"weights": "all"}),
    "ARGENT, no regularizer": ("argent", {"regularize": False}),
    "ARGENT, Ent": ("argent", {"entailment": "ent"}),
}


def argent_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """Hyperbolic fine-tunes from the shared pre-training (SPEC §2.4, tables 2-3); on the sweep
    seeds also the ablations and the model-size arm (:func:`size_runs`)."""
    variants = dict(ARGENT_HEADLINE)
    if seed in scale.sweep_seeds:
        variants.update(ARGENT_SWEEP)
    runs = [
        _argent_run(label, method, loss, scale, seed, root, MODEL)
        for label, (method, loss) in variants.items()
    ]
    return runs + (size_runs(scale, seed, root) if seed in scale.sweep_seeds else [])


def size_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """Table 2's model sizes at CPU scale: ``MODEL_SMALLER``'s own pre-training, then HyCoCLIP
    and ARGENT from it, with every other setting of the ``MODEL`` runs."""
    runs = [pretrain_run(scale, seed, root, MODEL_SMALLER)]
    for label, (method, loss) in ARGENT_HEADLINE.items():
        runs.append(_argent_run(label + SMALLER, method, loss, scale, seed, root, MODEL_SMALLER))
    return runs


def _argent_run(
    label: str, method: str, loss: dict[str, Any], scale: Scale, seed: int, root: Path, model: str
) -> Run:
    """One hyperbolic fine-tune of ``model`` from that model's pre-training of the seed."""
    config = _config(
        method,
        seed,
        scale,
        scale.hyperbolic_steps,
        scale.hyperbolic_batch,
        root / f"argent/{slug(label)}/seed{seed}",
        data={"caption": "short_caption"},
        model={"name": model, "alpha_rule": "fixed-512"},  # as the committed results were made
        optim={"lr": scale.hyperbolic_lr, "warmup_steps": 10, "weight_decay": 0.2},
        loss=loss,
        train={"keep_checkpoints": keeps_snapshots(label, seed, scale)},
    )
    after = PRETRAINING[model][0]
    return Run("argent", label, seed, config, ARGENT_BENCHMARKS, after=after)


def plan(scale_name: str, studies: tuple[str, ...] = ("himo", "argent")) -> list[Run]:
    """Every run of the study at ``scale_name``, in an order that respects ``Run.after``."""
    if scale_name not in SCALES:
        raise ValueError(f"unknown study scale {scale_name!r}; expected one of {list(SCALES)}")
    scale, root = SCALES[scale_name], study_root(scale_name)
    runs = []
    for seed in scale.seeds:
        runs.append(pretrain_run(scale, seed, root))
        if "himo" in studies:
            runs += himo_runs(scale, seed, root)
        if "argent" in studies:
            runs += argent_runs(scale, seed, root)
    return runs


def portable_config(config: dict[str, Any]) -> dict[str, Any]:
    """The run's config as recorded in ``run.done``: its folder and init checkpoint relative."""
    config = json.loads(json.dumps(config))
    config["train"]["output_dir"] = repo_relative(config["train"]["output_dir"])
    if Path(config["model"]["init"]).suffix == ".pt":
        config["model"]["init"] = repo_relative(config["model"]["init"])
    return config


def evaluate_into(run: Run, scale_name: str, checkpoint: Path, target: Path) -> dict[str, Any]:
    """Evaluate ``checkpoint`` on the run's benchmarks into ``target``; returns the held-out
    world embeddings (from the evaluation's cache)."""

    size = SCALES[scale_name].eval_size
    evaluate_run(
        checkpoint,
        target,
        benchmarks=list(run.benchmarks),
        world_size=size,
        world_seed=EVAL_SEED,
        cache_dir=_cache(scale_name),
        model_label=run.variant,
        pretrained_label=repo_relative(checkpoint),
    )
    return cached_world_embeddings(scale_name, checkpoint)


def study_root(scale_name: str) -> Path:
    """The study's training folders and caches: ``runs/study-<scale>/`` (:func:`runs_root`)."""
    return runs_root() / f"study-{scale_name}"


def _cache(scale_name: str) -> Path:
    return study_root(scale_name) / "cache"


def cached_world_embeddings(scale_name: str, checkpoint: Path) -> dict[str, Any]:
    """The held-out world embeddings an evaluation of ``checkpoint`` cached."""

    size = SCALES[scale_name].eval_size
    (emb_file,) = (_cache(scale_name) / checkpoint_key(checkpoint)).glob(
        f"world-{EVAL_SEED}-{size}-*.pt"
    )
    emb = torch.load(emb_file, weights_only=True)
    return {**emb, **world_texts(EVAL_SEED, size)}


def refresh_items(scale_name: str) -> int:
    """Rewrite every finished run's results files and ``items.npz`` from its cached embeddings
    (after a change of a metric); returns the number of runs refreshed."""
    count = 0
    for run in plan(scale_name):
        target = run_target(run, scale_name)
        checkpoint = Path(run.config["train"]["output_dir"]) / "last.pt"
        if (target / "run.done").is_file() and checkpoint.is_file():
            write_items(checkpoint, evaluate_into(run, scale_name, checkpoint, target), target)
            count += 1
    return count


def _geometry(checkpoint: Path) -> tuple[str, float | None]:
    """The run's geometry and (hyperbolic) curvature ``exp(log c)``, read from its checkpoint
    without building the model."""
    path = Path(checkpoint)
    state = load_checkpoint(path / "last.pt" if path.is_dir() else path)
    if state["config"]["method"] not in HYPERBOLIC_METHODS:
        return "euclidean", None
    return "hyperbolic", float(state["model"]["model.log_curv"].exp())


def write_items(checkpoint: Path, emb: dict[str, Any], target: Path) -> float:
    """``items.npz`` (per-item metric values) for the run; returns its feature std."""

    geometry, curv = _geometry(checkpoint)
    items = world_items(emb, geometry, curv)
    atomic_save_npz(target / "items.npz", items)
    return float(min(emb["image"].float().std(0).mean(), emb["caption"].float().std(0).mean()))


def atomic_save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed`` of float32 copies, written atomically (``paperlib.atomic``)."""
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    atomic_write(path, lambda handle: np.savez_compressed(handle, **arrays))


def run_target(run: Run, scale_name: str) -> Path:
    """The run's results folder, ``results/<scale>/<study>/<variant>/seed<k>/``."""
    return results_dir(scale_name) / run.study / slug(run.variant) / f"seed{run.seed}"


def finished(run: Run, scale_name: str) -> bool:
    """Whether the run's ``run.done`` exists and records the config the plan gives it now
    (its init checkpoint aside: a fine-tune's path is set when it starts)."""
    done = run_target(run, scale_name) / "run.done"
    if not done.is_file():
        return False
    recorded = json.loads(done.read_text())["config"]
    planned = portable_config(run.config)
    recorded["model"].pop("init", None)
    planned["model"].pop("init", None)
    return recorded == planned


def checkpoints_needed(runs: list[Run], scale_name: str) -> set[tuple[str, int]]:
    """(variant, seed) of the runs whose checkpoint must exist: those whose snapshots the
    learning curves read, and those a run that will train starts from (transitively)."""
    needed: set[tuple[str, int]] = set()
    for run in reversed(runs):  # a fine-tune comes after the run it starts from
        if keeps_curve(run):
            needed.add((run.variant, run.seed))
        trains = not finished(run, scale_name) or (run.variant, run.seed) in needed
        if trains and run.after is not None:
            needed.add((run.after, run.seed))
    return needed


def execute(
    run: Run,
    scale_name: str,
    checkpoints: dict[tuple[str, int], Path],
    need_checkpoint: bool = True,
    dependents: tuple[Run, ...] = (),
) -> Path:
    """Train (or resume) and evaluate one run; copy its results and log under ``results/``.
    A finished run (:func:`finished`) is skipped; when its checkpoint was deleted (``runs/`` is
    a cache) it is trained again only if ``need_checkpoint``. A run that trains first unmarks
    its ``dependents`` (the runs that start from it) and removes their training folders: CPU
    training is not bit-reproducible, and a seed's fine-tunes must share their start."""

    target = run_target(run, scale_name)
    config = json.loads(json.dumps(run.config))
    if run.after is not None:
        config["model"]["init"] = str(checkpoints[(run.after, run.seed)])
    output = Path(config["train"]["output_dir"])
    checkpoint = output / "last.pt"
    if finished(run, scale_name) and (trained_to_end(output) or not need_checkpoint):
        return checkpoint
    for dependent in dependents:
        (run_target(dependent, scale_name) / "run.done").unlink(missing_ok=True)
        shutil.rmtree(dependent.config["train"]["output_dir"], ignore_errors=True)
    start = time.perf_counter()
    if run.nproc > 1:
        train_distributed(config, run.nproc, run.name)
    else:
        result = train_run(config)
        if result.status != "finished":
            raise RuntimeError(f"{run.name}: training {result.status} at step {result.step}")
    train_seconds = time.perf_counter() - start
    target.mkdir(parents=True, exist_ok=True)
    emb = evaluate_into(run, scale_name, checkpoint, target)
    feature_std = write_items(checkpoint, emb, target)
    shutil.copyfile(output / "log.jsonl", target / "log.jsonl")
    collapsed = run_collapse({"config": config, "feature_std": feature_std}, read_log(output))
    if run.seed == 0 and run.variant in EMBEDDING_VARIANTS:
        export_embeddings(emb, checkpoint, target, run)
    atomic_write_text(
        target / "run.done",
        json.dumps(
            {
                "run": run.name,
                "variant": run.variant,
                "study": run.study,
                "seed": run.seed,
                "config": portable_config(config),
                "train_seconds": round(train_seconds, 1),
                "eval_seconds": round(time.perf_counter() - start - train_seconds, 1),
                "feature_std": feature_std,
                "collapsed": collapsed,
            },
            indent=1,
        ),
    )
    return checkpoint


def export_embeddings(emb: dict[str, Any], checkpoint: Path, target: Path, run: Run) -> None:
    """Keep the held-out world features a tutorial reads (seed 0 only; a few hundred kB)."""
    keep = [
        "image",
        "caption",
        "short_caption",
        "chain",
        "labels",
        "segments_all",
        "segments_all_lengths",
    ]
    n = min(300, len(emb["image"]))  # the tutorials' plots use the first 300 held-out samples
    out = {k: emb[k] for k in keep if k in emb}
    lengths = out["segments_all_lengths"]
    out["segments_all"] = out["segments_all"][: int(lengths[:n].sum())]
    out = {k: (v[:n] if k != "segments_all" else v).clone() for k, v in out.items()}  # own storage
    if run.study == "argent":
        out.update(box_embeddings(checkpoint, n, EVAL_SEED))
    atomic_write(target / "embeddings.pt", lambda h: torch.save(out, h))


@torch.no_grad()
def box_embeddings(checkpoint: Path, size: int, seed: int) -> dict[str, Any]:
    """Hyperbolic features of every box crop of the held-out world (object and near-full crops)."""

    module, preprocess, _, _ = load_trained(checkpoint)
    world = World(seed=seed, image_size=64)
    crops, kinds, owners = [], [], []
    for i in range(size):
        sample = world.sample(i)
        for box, kind in zip(sample.boxes, sample.meta["box_kinds"]):
            crops.append(box.image)
            kinds.append(0 if kind == "object" else 1)
            owners.append(i)
    return {
        "box_image": Embedder(module, preprocess, None, batch_size=256).images(crops),
        "box_kind": torch.tensor(kinds),  # 0 = object crop, 1 = near-full crop
        "box_owner": torch.tensor(owners),
        "curv": torch.tensor(float(module.model.curv)),
        "image_size": torch.tensor(input_size(module)),
    }


def run_study(scale_name: str, studies: tuple[str, ...] = ("himo", "argent")) -> Path:
    """Run (or finish) every run of the study, then decide its claims; returns the folder."""
    runs = plan(scale_name, studies)
    checkpoints: dict[tuple[str, int], Path] = {}
    total = time.perf_counter()
    stages: dict[str, float] = {}
    needed = checkpoints_needed(runs, scale_name)
    for i, run in enumerate(runs, 1):
        start = time.perf_counter()
        print(f"[study {scale_name}] {i}/{len(runs)} {run.name}", flush=True)
        dependents = tuple(r for r in runs if (r.after, r.seed) == (run.variant, run.seed))
        checkpoints[(run.variant, run.seed)] = execute(
            run, scale_name, checkpoints, (run.variant, run.seed) in needed, dependents
        )
        seconds = time.perf_counter() - start
        stage = "pretrain" if run.after is None else run.study
        stages[stage] = stages.get(stage, 0.0) + seconds
        print(f"[study {scale_name}] {run.name} done in {seconds:.0f} s", flush=True)
    start = time.perf_counter()
    print(f"[study {scale_name}] learning curves", flush=True)
    write_curves(scale_name, runs, SCALES[scale_name].eval_size, study_root(scale_name))
    stages["curves"] = time.perf_counter() - start
    report = decide(scale_name)
    elapsed = time.perf_counter() - total
    verdicts = [c["verdict"] for c in report["claims"]]
    print(
        f"[study {scale_name}] all {len(runs)} runs in {elapsed:.0f} s; claims: "
        + ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts))),
        flush=True,
    )
    summary = {
        "scale": scale_name,
        "runs": len(runs),
        "seeds": list(SCALES[scale_name].seeds),
        "sweep_seeds": list(SCALES[scale_name].sweep_seeds),
        "seconds_this_invocation": round(elapsed),
        "stage_seconds_this_invocation": {k: round(v) for k, v in stages.items()},
    }
    atomic_write_text(results_dir(scale_name) / "study.json", json.dumps(summary, indent=1) + "\n")
    return results_dir(scale_name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.study",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--scale", choices=sorted(SCALES), default="smoke")
    parser.add_argument(
        "--studies", nargs="+", choices=("himo", "argent"), default=["himo", "argent"]
    )
    parser.add_argument(
        "--decide-only",
        action="store_true",
        help="re-decide the claims from the finished runs' results files",
    )
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print the decided claims as the README's markdown table",
    )
    parser.add_argument(
        "--refresh-items",
        action="store_true",
        help="recompute finished runs' results files and per-item values from "
        "cached embeddings, then re-decide the claims",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(min(2, torch.get_num_threads()))
    if args.summary:
        print(summary_table(load_claims(args.scale)))
        return 0
    if args.refresh_items:
        print(f"[study {args.scale}] per-item values of {refresh_items(args.scale)} runs rewritten")
    if args.decide_only or args.refresh_items:
        decide(args.scale)
        return 0
    run_study(args.scale, tuple(args.studies))
    return 0
