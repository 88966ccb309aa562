"""The CPU-scale study runner: plan, execute (train, evaluate, resume), and write the claims.

Every fine-tune starts from one of the pre-trained bases of :mod:`paperlib.study.pretrain`
(``results/bases/``; fine-tune seed ``s`` uses base ``bases[s % len(bases)]``), as both papers
start from released CLIP weights, and trains on a world of its own base (world seed
:data:`FINETUNE_WORLD` + base, scenes the base never saw); the fine-tune seed sets the batch
order. So seed variance comes from the fine-tunes, and each verdict shows whether it hinges on
one base.

- **HiMo** (``docs/methods/himo-clip.md#molo``): fine-tunes on long captions (248 tokens, Long-CLIP
  residual positions), all with MoLo's settings (logit scale reset to ln 100 and decayed, label
  smoothing 0.1, lr, steps): ``MoLo`` (τ = 0.9, λ = 1), ``InfoNCE (λ=0)`` (MoLo with λ = 0:
  the component term is the only difference) and ``Long-CLIP`` (Long-CLIP's loss: long
  InfoNCE + short captions ↔ PCA-reduced image features, ``loss.pcm_dim`` components); on the
  sweep seeds MoLo's batch-size and HiDe-scope ablations (:data:`HIMO_SWEEP`).
- **ARGENT** (``docs/methods/argent.md#argent-objective``): hyperbolic fine-tunes on short captions with one box
  crop and its phrase per sample (GRIT-like), the same optimiser for all: ``HyCoCLIP`` and
  ``ARGENT`` (headline, every seed); on the sweep seeds ``MERU``, ARGENT's ablations (no
  weights, weights on all pairs, no regularizer, Ent instead of AdaEnt), the model-size arm
  (the pair again from the smaller model's bases) and the aperture arm (MERU, HyCoCLIP and
  ARGENT at the paper's fixed curvature κ = 0.1, where ``2K/√κ`` = 0.63 lies among the
  embeddings' norms).
- **References**: each base evaluated as it is (variant ``pretrain (short captions)``, seed =
  base), and an untrained model of each geometry (the level a guard must clear).

Every trained run logs a held-out validation curve (``engine.validation``, world
``VALIDATION_SEED``) every fifth of its schedule; ``tables.plateau`` checks it stopped
improving. Every run is then evaluated on the same ``eval_size`` test samples (world seed
:data:`~paperlib.study.reader.EVAL_SEED`), so variants and seeds are compared item by item.
Per run, ``results/<scale>/<study>/<variant>/seed<k>/`` receives the CLIP_benchmark JSON files,
the training log, ``items.npz`` (per-item metric values, ``metrics.items``) and ``run.done``
(config, timing, environment, collapse check); seed-0 runs of :data:`EMBEDDING_VARIANTS` also
keep their held-out embeddings. Runs execute two at a time (one thread each, ``--workers``),
live in ``runs/study-<scale>/`` and resume: a finished run (its ``run.done`` records the
planned config and its base's checksum) is skipped, an unfinished training resumes from its
last checkpoint. At the end the curves go to ``curves.json`` (``study.curves``) and the claims
of ``tables.claims`` are decided (``study.decide``) into ``claims.json``.

    python -m paperlib.study --scale smoke      # one seed, short schedules (make reproduce)
    python -m paperlib.study --scale full       # 8 seeds, 3 for sweeps (make study)

Choices the papers do not make for us (CPU scale): learning rates are raised from the
papers' 1e-6 (fine-tuning a converged ViT-L) to values that move an 8.5M-parameter model in a
few hundred steps; the hyperbolic runs start from the Euclidean base (its encoders and
projections; α, curvature and logit scale at MERU's initial values) instead of from scratch;
Long-CLIP keeps ``pcm_dim`` = 8 of 64 dimensions (the paper: 32 of 768).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import shutil
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
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
from paperlib.environment import environment
from paperlib.evaluate import evaluate_run
from paperlib.metrics.items import world_items
from paperlib.models import LOGIT_SCALE_MAX
from paperlib.study.curves import write_curves
from paperlib.study.decide import MissingRunsError, decide, run_collapse, summary_table
from paperlib.study.pretrain import MODEL, MODEL_SMALLER, base_path
from paperlib.study.reader import (
    EMBEDDING_VARIANTS,
    EVAL_SEED,
    PRETRAIN,
    SMALLER,
    load_claims,
    portable_config,
    repo_relative,
    results_dir,
    runs_root,
    slug,
)
from paperlib.study.scales import SCALES, Scale
from paperlib.study.workers import worker_pool
from paperlib.tables.claims import APERTURE, HEADLINE_FINETUNES, LONGER, UNTRAINED
from paperlib.train import (
    read_log,
    train_distributed,
    train_run,
    trained_to_end,
    trained_with_other_config,
)

HIMO_BENCHMARKS = (
    "world-long",
    "world-short",
    "world-monotonicity",
    "world-cola",
    "world-zeroshot",
    "world-hierarchy",
)
ARGENT_BENCHMARKS = ("world-zeroshot", "world-long", "world-short", "world-hierarchy")
FINETUNE_WORLD = 100  # fine-tunes of base b train on world seed 100 + b (the bases: seed b)
VAL_POINTS = 5  # validation records over a schedule (plus step 0): every fifth


class RunsFailedError(RuntimeError):
    """Some of the study's runs failed; the message names each with its error."""


@dataclass(frozen=True)
class Run:
    """One run of the study (trained, or a reference evaluated as it starts) and how to
    evaluate it."""

    study: str  # "himo" | "argent"
    variant: str  # row label in the tables
    seed: int
    config: dict[str, Any]
    benchmarks: tuple[str, ...]
    nproc: int = 1  # training processes (> 1: torchrun, gloo on CPU)
    stage: str = field(default="")  # what study.json times it under (default: the study)

    @property
    def name(self) -> str:
        return f"{self.study}/{self.variant}/seed{self.seed}"


LOG_EVERY = 5


def _config(
    method: str,
    seed: int,
    scale: Scale,
    steps: int,
    batch: int,
    output: Path,
    architecture: str = MODEL,
    **sections,
) -> dict:
    """A fine-tune's training config from base ``scale.base_of(seed)`` of ``architecture``."""
    base = scale.base_of(seed)
    every = max(LOG_EVERY, steps // VAL_POINTS)
    config = {
        "method": method,
        "model": {"name": architecture, "init": str(base_path(architecture, base))},
        "data": {
            "dataset": "world",
            "size": scale.train_size,
            "image_size": 32,
            "seed": FINETUNE_WORLD + base,
            "cache_dir": str(runs_root() / "world-cache"),
        },
        "optim": {},
        "loss": {},
        "train": {
            "steps": steps,
            "batch_size": batch,
            "seed": seed,
            "log_every": LOG_EVERY,
            "diag_every": every,
            "ckpt_every": every,
            "val_every": every,
            "val_size": scale.val_size,
            "output_dir": str(output),
            "progress": False,
            "device": "cpu",
        },
    }
    for section, values in sections.items():
        config[section].update(values)
    return config


def reference_runs(scale: Scale, root: Path) -> list[Run]:
    """The bases as they are (seed = base) and an untrained model of each geometry (seed 0):
    evaluated, not trained (0 steps: the checkpoint is the start)."""
    runs = []
    for model, suffix in ((MODEL, ""), (MODEL_SMALLER, SMALLER)):
        for base in scale.bases:
            output = root / f"bases/{model}-base{base}"
            config = _config("clip", base, scale, 0, scale.finetune_batch, output, model)
            runs.append(
                Run("himo", PRETRAIN + suffix, base, _evaluation_only(config), HIMO_BENCHMARKS,
                    stage="references")
            )  # fmt: skip
    himo = _config("himo", 0, scale, 0, scale.finetune_batch, root / "untrained/himo",
                   **_himo_sections(scale, {}))  # fmt: skip
    argent = _config("argent", 0, scale, 0, scale.hyperbolic_batch, root / "untrained/argent",
                     **_argent_sections(scale, {}, MODEL))  # fmt: skip
    for study, config, benchmarks in (
        ("himo", himo, HIMO_BENCHMARKS),
        ("argent", argent, ARGENT_BENCHMARKS),
    ):
        config["model"]["init"] = "random"
        runs.append(
            Run(study, UNTRAINED, 0, _evaluation_only(config), benchmarks, stage="references")
        )
    return runs


def _evaluation_only(config: dict[str, Any]) -> dict[str, Any]:
    """A 0-step run: no world to render, no validation (its checkpoint is its start)."""
    config["data"]["size"] = config["train"]["batch_size"]
    config["data"].pop("cache_dir")
    config["train"].update(val_every=0)
    return config


# MoLo's fine-tuning settings, shared by every HiMo variant (docs/methods/himo-clip.md#reference-code)
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
HIMO_METRICS = ("long_i2t_r1",)  # the validation curve of a HiMo fine-tune

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


def _himo_sections(scale: Scale, loss: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The config sections every HiMo fine-tune shares, with ``loss``'s changes."""
    return {
        "model": dict(HIMO_FINETUNE["model"]),
        "loss": {**HIMO_FINETUNE["loss"], **loss},
        "optim": {**HIMO_FINETUNE["optim"], "lr": scale.finetune_lr},
        "train": {"val_metrics": list(HIMO_METRICS)},
    }


def himo_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """MoLo, MoLo with λ = 0 and Long-CLIP from the seed's base; on the sweep seeds also
    MoLo's batch-size and HiDe-scope ablations (:data:`HIMO_SWEEP`)."""
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
            **_himo_sections(scale, loss),
        )
        runs.append(Run("himo", label, seed, config, HIMO_BENCHMARKS, nproc=nproc))
    return runs


ARGENT_METRICS = ("short_i2t_r1", "zeroshot_L1")  # the validation curves of a hyperbolic run
ARGENT_HEADLINE = {"HyCoCLIP": ("hycoclip", {}), "ARGENT": ("argent", {})}
ARGENT_SWEEP = {
    "MERU": ("meru", {}),
    "ARGENT, no weights": ("argent", {"weights": "none"}),
    "ARGENT, weights on all pairs": ("argent", {"weights": "all"}),
    "ARGENT, no regularizer": ("argent", {"regularize": False}),
    "ARGENT, Ent": ("argent", {"entailment": "ent"}),
}
# the aperture arm: the paper's fixed curvature, where MERU's half-aperture radius 2K/√κ
# (0.63 at K = 0.1, κ = 0.1) lies among the embeddings' norms
APERTURE_CURVATURE = 0.1
APERTURE_ARM = {
    f"MERU{APERTURE}": ("meru", {}),
    f"HyCoCLIP{APERTURE}": ("hycoclip", {}),
    f"ARGENT{APERTURE}": ("argent", {}),
}


def _argent_sections(scale: Scale, loss: dict[str, Any], model: str) -> dict[str, dict[str, Any]]:
    """The config sections every hyperbolic fine-tune shares, with ``loss``'s changes."""
    return {
        "data": {"caption": "short_caption"},
        "model": {"name": model, "alpha_rule": scale.hyperbolic_alpha_rule},
        "optim": {"lr": scale.hyperbolic_lr, "warmup_steps": 10, "weight_decay": 0.2},
        "loss": dict(loss),
        "train": {"val_metrics": list(ARGENT_METRICS)},
    }


def _argent_run(
    label: str, method: str, loss: dict[str, Any], scale: Scale, seed: int, root: Path,
    model: str = MODEL, curvature: float | None = None,
) -> Run:  # fmt: skip
    """One hyperbolic fine-tune of ``model`` from that model's base of the seed (at a fixed
    ``curvature`` when given, else MERU's learned one from 1)."""
    sections = _argent_sections(scale, loss, model)
    if curvature is not None:
        sections["model"].update(curv_init=curvature, learn_curv=False)
    config = _config(
        method,
        seed,
        scale,
        scale.hyperbolic_steps,
        scale.hyperbolic_batch,
        root / f"argent/{slug(label)}/seed{seed}",
        model,
        **sections,
    )
    return Run("argent", label, seed, config, ARGENT_BENCHMARKS)


def argent_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """Hyperbolic fine-tunes from the seed's base (ARGENT's tables 2-3); on the sweep seeds also
    the ablations, the model-size arm and the aperture arm."""
    variants = dict(ARGENT_HEADLINE)
    if seed in scale.sweep_seeds:
        variants.update(ARGENT_SWEEP)
    runs = [_argent_run(label, m, loss, scale, seed, root) for label, (m, loss) in variants.items()]
    if seed in scale.sweep_seeds:
        runs += [
            _argent_run(label + SMALLER, m, loss, scale, seed, root, MODEL_SMALLER)
            for label, (m, loss) in ARGENT_HEADLINE.items()
        ]
        runs += [
            _argent_run(label, m, loss, scale, seed, root, curvature=APERTURE_CURVATURE)
            for label, (m, loss) in APERTURE_ARM.items()
        ]
    return runs


HEADLINE = tuple(v for variants in HEADLINE_FINETUNES.values() for v in variants)


def sweep_priority(run: Run) -> tuple[int, int]:
    """The order of the sweep seeds' runs: the aperture arm (the claim the paper places at
    κ = 0.1), then ARGENT's other sweeps (MERU, the ablations), the model-size arm, and MoLo's
    ablations; within each group every sweep seed, so a study stopped early leaves whole groups."""
    if run.variant.endswith(APERTURE):
        group = 0
    elif run.variant.endswith(SMALLER):
        group = 2
    else:
        group = 1 if run.study == "argent" else 3
    return group, run.seed


def longer(run: Run) -> Run:
    """The schedule check of a run: the same run at twice its steps (every reporting period
    scaled with it), in its own folder, variant ``<variant>`` + :data:`LONGER`."""
    config = json.loads(json.dumps(run.config))
    steps = 2 * config["train"]["steps"]
    every = max(LOG_EVERY, steps // VAL_POINTS)
    config["train"].update(steps=steps, ckpt_every=every, val_every=every, diag_every=every)
    variant = run.variant + LONGER
    output = Path(config["train"]["output_dir"])
    config["train"]["output_dir"] = str(output.parent.parent / slug(variant) / output.name)
    return Run(run.study, variant, run.seed, config, run.benchmarks, run.nproc, "schedule check")


def plan(scale_name: str, studies: tuple[str, ...] = ("himo", "argent")) -> list[Run]:
    """Every run of the study at ``scale_name``: references first, then every seed's headline
    fine-tunes, then the sweep seeds' other runs (:func:`sweep_priority`), then (where the scale
    asks for it) the schedule check of the first seed's headline runs. The headline comparisons
    come first so that a study stopped early (and decided with ``--partial``) still has them."""
    if scale_name not in SCALES:
        raise ValueError(f"unknown study scale {scale_name!r}; expected one of {list(SCALES)}")
    scale, root = SCALES[scale_name], study_root(scale_name)
    references = [
        r for r in reference_runs(scale, root) if r.study in studies or r.variant == PRETRAIN
    ]
    finetunes = []
    for seed in scale.seeds:
        if "himo" in studies:
            finetunes += himo_runs(scale, seed, root)
        if "argent" in studies:
            finetunes += argent_runs(scale, seed, root)
    headline = [r for r in finetunes if r.variant in HEADLINE]
    sweeps = sorted((r for r in finetunes if r.variant not in HEADLINE), key=sweep_priority)
    runs = references + headline + sweeps
    if scale.schedule_check:
        first = scale.seeds[0]
        runs += [longer(r) for r in runs if r.variant in HEADLINE and r.seed == first]
    return runs


def study_root(scale_name: str) -> Path:
    """The study's training folders and caches: ``runs/study-<scale>/`` (``runs_root``)."""
    return runs_root() / f"study-{scale_name}"


def _cache(scale_name: str) -> Path:
    return study_root(scale_name) / "cache"


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
    state = load_checkpoint(checkpoint)
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


def init_checksum(config: dict[str, Any]) -> str | None:
    """SHA-256 of the run's initial weights file (a base), None for a random start."""
    init = Path(config["model"]["init"])
    if config["model"]["init"] == "random":
        return None
    if not init.is_file():
        raise FileNotFoundError(
            f"{init}: the study's fine-tunes start from the committed bases (results/bases/); "
            "run `make pretrain` to rebuild them"
        )
    return hashlib.sha256(init.read_bytes()).hexdigest()


def finished(run: Run, scale_name: str) -> bool:
    """Whether the run's ``run.done`` exists and records the config the plan gives it now and
    the checksum of its initial weights."""
    done = run_target(run, scale_name) / "run.done"
    if not done.is_file():
        return False
    recorded = json.loads(done.read_text())
    return recorded["config"] == portable_config(run.config) and recorded.get(
        "init_sha256"
    ) == init_checksum(run.config)


def execute(run: Run, scale_name: str) -> dict[str, Any]:
    """Train (or resume) and evaluate one run; copy its results and log under ``results/``
    and return its ``run.done`` record. A finished run (:func:`finished`) is skipped."""
    target = run_target(run, scale_name)
    if finished(run, scale_name):
        return json.loads((target / "run.done").read_text())
    config = json.loads(json.dumps(run.config))
    output = Path(config["train"]["output_dir"])
    checkpoint = output / "last.pt"
    start = time.perf_counter()
    if stale_training(output, config):
        set_aside(output)
    init_record(output).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(init_record(output), str(init_checksum(config)))
    if not trained_to_end(output):
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
    record = {
        "run": run.name,
        "variant": run.variant,
        "study": run.study,
        "seed": run.seed,
        "config": portable_config(config),
        "init_sha256": init_checksum(config),
        "train_seconds": round(train_seconds, 1),
        "eval_seconds": round(time.perf_counter() - start - train_seconds, 1),
        "feature_std": feature_std,
        "collapsed": collapsed,
        "environment": environment(),
    }
    atomic_write_text(target / "run.done", json.dumps(record, indent=1))
    return record


def init_record(output: Path) -> Path:
    """The file beside a run's training folder that holds its initial weights' checksum
    (a base rebuilt at the same path is another start)."""
    return output.with_name(f"{output.name}.init-sha256")


def stale_training(output: Path, config: dict[str, Any]) -> bool:
    """Whether ``output`` holds a training this run cannot continue or reuse: of another
    config (``train.trained_with_other_config``) or from other initial weights."""
    if not output.exists():
        return False
    recorded = init_record(output)
    other_start = recorded.is_file() and recorded.read_text() != str(init_checksum(config))
    return other_start or trained_with_other_config(output, config)


def set_aside(output: Path) -> Path:
    """Rename a training folder of an older plan's config to ``<name>.stale<k>`` beside it
    (the first free k), so the run trains afresh and nothing is deleted."""
    k = 1
    while (target := output.with_name(f"{output.name}.stale{k}")).exists():
        k += 1
    output.rename(target)
    print(f"[study] {repo_relative(output)}: trained with another config; set aside as "
          f"{target.name}", flush=True)  # fmt: skip
    return target


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


@contextlib.contextmanager
def study_settings(threads: int = 1):
    """What every study run executes under: a fixed number of torch threads and torch's
    deterministic algorithms (restored afterwards)."""
    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1])


def run_environment(threads: int) -> dict[str, Any]:
    """The environment a study run executes in (``paperlib.environment`` under
    :func:`study_settings`)."""
    with study_settings(threads):
        return environment()


def _execute_in_worker(job: tuple[Run, str, int]) -> dict[str, Any]:
    """Worker: :func:`execute` under :func:`study_settings` (results do not depend on how many
    workers run); returns the record and the run's wall seconds."""
    run, scale_name, threads = job
    start = time.perf_counter()
    with study_settings(threads):
        record = execute(run, scale_name)
    return {"record": record, "seconds": time.perf_counter() - start}


def execute_all(
    runs: list[Run], scale_name: str, workers: int, threads: int = 1
) -> dict[str, float]:
    """Execute every run, ``workers`` at a time (each in its own process with ``threads``
    threads); prints progress; returns the wall seconds per stage (summed over its runs)."""
    pending = [r for r in runs if not finished(r, scale_name)]
    print(
        f"[study {scale_name}] {len(runs) - len(pending)} of {len(runs)} runs finished; "
        f"{len(pending)} to run on {workers} worker(s)",
        flush=True,
    )
    stages: dict[str, float] = {}
    if not pending:
        return stages
    failed: list[str] = []
    with worker_pool(workers) as pool:
        futures: dict[Future, Run] = {
            pool.submit(_execute_in_worker, (r, scale_name, threads)): r for r in pending
        }
        done_count, remaining = 0, set(futures)
        while remaining:
            finished_now, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for future in finished_now:
                run, done_count = futures[future], done_count + 1
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 - one run's failure stops no other run
                    failed.append(f"{run.name}: {type(error).__name__}: {error}")
                    print(
                        f"[study {scale_name}] {done_count}/{len(pending)} {run.name} FAILED: {error}",
                        flush=True,
                    )
                    continue
                stage = run.stage or run.study
                stages[stage] = stages.get(stage, 0.0) + result["seconds"]
                print(
                    f"[study {scale_name}] {done_count}/{len(pending)} {run.name} done in "
                    f"{result['seconds']:.0f} s",
                    flush=True,
                )
    if failed:
        raise RunsFailedError(
            f"{len(failed)} run(s) failed (the others are finished and kept; run the study "
            "again to retry them):\n" + "\n".join(failed)
        )
    return stages


def run_study(
    scale_name: str,
    studies: tuple[str, ...] = ("himo", "argent"),
    workers: int = 2,
    threads: int = 1,
    partial: bool = False,
) -> Path:
    """Run (or finish) every run of the study, then its curves and claims; returns the folder."""
    runs = plan(scale_name, studies)
    total = time.perf_counter()
    stages = execute_all(runs, scale_name, workers, threads)
    summarise(scale_name, runs, partial or set(studies) != {"himo", "argent"}, stages, threads)
    record = json.loads((results_dir(scale_name) / "study.json").read_text())
    record.update(
        workers=workers,
        threads_per_run=threads,
        seconds_this_invocation=round(time.perf_counter() - total),
    )
    atomic_write_text(results_dir(scale_name) / "study.json", json.dumps(record, indent=1) + "\n")
    return results_dir(scale_name)


def summarise(
    scale_name: str,
    runs: list[Run],
    partial: bool,
    stages: dict[str, float] | None = None,
    threads: int = 1,
) -> dict[str, Any]:
    """``curves.json``, ``claims.json`` and ``study.json`` from the finished runs (after a study,
    or for ``--decide-only``); returns the decided claims. ``study.json`` records the design,
    the runs planned and finished, and each stage's seconds summed over its finished runs'
    ``run.done`` (training plus evaluation, whichever invocation made them)."""
    start = time.perf_counter()
    write_curves(scale_name, runs)
    stages = {**(stages or {}), "curves": time.perf_counter() - start}
    report = decide(scale_name, partial)
    verdicts = [c["verdict"] for c in report["claims"]]
    print(
        f"[study {scale_name}] claims: "
        + ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts))),
        flush=True,
    )
    done = {r.name: run_target(r, scale_name) / "run.done" for r in runs}
    finished_seconds: dict[str, float] = {}
    for run in runs:
        if done[run.name].is_file():
            record = json.loads(done[run.name].read_text())
            stage = run.stage or run.study
            finished_seconds[stage] = (
                finished_seconds.get(stage, 0.0)
                + record.get("train_seconds", 0.0)
                + record.get("eval_seconds", 0.0)
            )
    scale = SCALES[scale_name]
    summary = {
        "scale": scale_name,
        "runs": len(runs),
        "runs_finished": sum(path.is_file() for path in done.values()),
        "partial": report["partial"],
        "bases": list(scale.bases),
        "seeds": list(scale.seeds),
        "sweep_seeds": list(scale.sweep_seeds),
        "stage_seconds_of_finished_runs": {k: round(v) for k, v in finished_seconds.items()},
        "stage_seconds_this_invocation": {k: round(v) for k, v in stages.items()},
        "environment": run_environment(threads),
    }
    atomic_write_text(results_dir(scale_name) / "study.json", json.dumps(summary, indent=1) + "\n")
    return report


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
        "--workers", type=int, default=2, help="runs at once, one thread each (default 2)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads of each run (fixed, so results do not depend on the machine's "
        "core count; default 1)",
    )
    parser.add_argument(
        "--partial",
        action="store_true",
        help="decide the claims although planned runs are missing (marked partial)",
    )
    parser.add_argument(
        "--decide-only",
        action="store_true",
        help="re-write curves.json, claims.json and study.json from the finished runs' "
        "results files (train nothing)",
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
    torch.set_num_threads(1)
    try:
        if args.summary:
            print(summary_table(load_claims(args.scale)))
            return 0
        if args.refresh_items:
            count = refresh_items(args.scale)
            print(f"[study {args.scale}] per-item values of {count} runs rewritten")
        if args.decide_only or args.refresh_items:
            summarise(args.scale, plan(args.scale), args.partial)
            return 0
        run_study(args.scale, tuple(args.studies), args.workers, args.threads, args.partial)
    except (MissingRunsError, RunsFailedError, ValueError, FileNotFoundError) as error:
        print(f"study: {error}", file=sys.stderr)
        return 2
    return 0
