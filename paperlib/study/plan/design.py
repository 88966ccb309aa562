"""The CPU-scale study's design: every run it plans, and the config each trains with.

The two papers train differently, and the study trains each as its paper does. HiMo-CLIP
fine-tunes a released CLIP: every HiMo run starts from one of the pre-trained Euclidean bases of
:mod:`paperlib.study.plan.bases` (``results/bases/``; seed ``s`` uses base ``bases[s %
len(bases)]``) and trains on a world of its own base (world seed :data:`FINETUNE_WORLD` + base,
scenes the base never saw); the seed sets the batch order. ARGENT trains every model from
scratch: every ARGENT run starts from random weights and trains on the world of its seed's base,
as the bases were pre-trained. So seed variance comes from the runs, and each verdict shows
whether it hinges on one base (or training world).

- **HiMo** (``docs/methods/himo-clip.md#molo``): fine-tunes on long captions (248 tokens, Long-CLIP
  residual positions), all with MoLo's settings (logit scale reset to ln 100 and decayed, label
  smoothing 0.1, lr, steps): ``MoLo`` (τ = 0.9, λ = 1), ``InfoNCE (λ=0)`` (MoLo with λ = 0:
  the component term is the only difference) and ``Long-CLIP`` (Long-CLIP's loss: long
  InfoNCE + the long caption's first sentence ↔ PCA-reduced image features, ``loss.pcm_dim``
  components; ``data.short_text``: the world's short captions stay a test set, as both papers'
  ShareGPT4V has none); MoLo's batch-size and HiDe-scope ablations (:data:`HIMO_SWEEP`), each
  on the seeds its claims' design notes ask (``Scale.arm_seeds``: the sweep seeds or more).
- **ARGENT** (``docs/methods/argent.md#argent-objective``; :data:`ARGENT_ARMS`,
  :func:`scratch_config`): every arm from random weights with MERU's initialisation (α = log(d^-½),
  curvature 1, learned), on short captions with one box crop and its phrase per sample (GRIT-like),
  at the hyperbolic bases' recipe (their world with counterfactual twins, learning rate, warm-up and
  weight decay) and one budget, ``Scale.scratch_steps`` × ``Scale.scratch_batch``, read off a
  committed probe (``scripts/scratch_budget_probe.py``, ``study.plan.scratch_budget``): the main
  arms ``HyCoCLIP``, ``ARGENT`` and ``MERU`` and the model-size pair (``, smaller model``: the
  same ResNet at half the width); ARGENT's Table 3 ablations (no weights, weights on all pairs,
  no regularizer, Ent instead of AdaEnt) in a smaller setting of their own, as the paper's CC3M
  one is: the smaller model, at the same budget. Each runs on the seeds its claims' design
  notes ask (``Scale.arm_seeds``), its held-out parents (captions, box phrases, box crops)
  against ``2K/√c`` validated over training and counted per test sample at the end; each is
  evaluated on ``Scale.argent_eval_size`` test samples (the item floors of its claims ask for
  more than HiMo's).
- **The scale trend** (:func:`trend_runs`): on the sweep seeds every HiMo headline arm again at
  other batch sizes (equal samples seen) and training lengths (``Scale.trend_*_factors``), so
  each HiMo headline claim's effect can be read against scale (``study.decide.trend``).
  ARGENT's trend is cut: its from-scratch budget is the study's largest cost.
- **References**: each base evaluated as it is (variants ``pretrain (short captions)`` and
  ``pretrain, hyperbolic (short captions)``, seed = base: the reference level of each claim's
  smallest effect, ``study.results.references``), and an untrained model of each geometry (the
  level a guard must clear).

Every trained run logs a held-out validation curve (``engine.validation``, world
``VALIDATION_SEED``): a HiMo fine-tune every fifth of its schedule, an ARGENT run
``Scale.scratch_val_points`` times; ``study.plan.plateau`` checks it stopped improving. Every run is
then evaluated on the same test samples of its study (world seed
:data:`~paperlib.study.plan.design.EVAL_SEED`), so variants and seeds are compared item by item.
Per run, ``results/<scale>/<study>/<variant>/seed<k>/`` receives the CLIP_benchmark JSON files,
the training log, ``items.npz`` (per-item metric values, ``metrics.items``) and ``run.done``
(config, timing, environment, provenance, collapse check); seed-0 runs of
:data:`~paperlib.study.plan.design.EMBEDDING_VARIANTS` also keep their held-out embeddings
(``study.run.exports``). Runs execute two at a time (one thread each, ``--workers``;
``study.run.parallel``), live in ``runs/study-<scale>/`` and resume (``study.run.execution``): a
finished run (its ``run.done`` records the planned config, its base's checksum, the hash of the
code that trains and evaluates it and the package versions) is skipped, an unfinished training
resumes from its last checkpoint. At the end the curves go to ``curves.json``
(``study.results.curves``) and the claims of ``study.plan.claims`` are decided
(``study.decide.decide``) into ``claims.json`` (``study.summary``).

    python -m paperlib.study --scale smoke      # one seed, short schedules (make reproduce)
    python -m paperlib.study --scale full       # 8 seeds, sweeps on 3 or more (make study)

**Recipe stage** (``study.plan.recipe``): the HiMo paper's learning rate (1e-6, fine-tuning a
converged ViT-L) does not carry over to an 8.5M-parameter model and a few hundred steps, so
where the scale has a grid (``Scale.recipe_grid``: the study's learning rates × warm-ups, the
warm-up a fraction of the run's steps) each HiMo headline arm, variant and baseline alike, first
trains seed 0 at every grid point (``results/<scale>/recipe/<arm>/lr<lr>-wu<warm-up>/``:
validated, not evaluated on the test set). Its pick follows the arm's ``recipe.Rule``: the point
that keeps ≥ 0.8 of the base's validation ``short_i2t_r1`` and ``zeroshot_L1`` with the best
last ``long_i2t_r1``. The picks go to ``results/<scale>/recipe.json``; every run of the arm, and
of the sweep arms that vary it (``recipe.RECIPE_OF``), then trains with it. ARGENT's arms train
at the bases' recipe and search nothing. Choices the papers do not make for us (CPU scale):
Long-CLIP keeps ``pcm_dim`` = 8 of 64 dimensions (the paper: 32 of 768).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from paperlib.engine.validation import VALIDATION_METRICS
from paperlib.models import LOGIT_SCALE_MAX
from paperlib.study.paths import results_dir, runs_root, slug
from paperlib.study.plan import recipe
from paperlib.study.plan.bases import GEOMETRIES, MODEL, MODEL_SMALLER, base_path, bases_dir
from paperlib.study.plan.claims import (
    EUCLIDEAN_CLIP,
    HEADLINE_ARMS,
    HYPERBOLIC_MERU,
    LONGER,
    SMALLER,
    UNTRAINED,
)
from paperlib.study.plan.scales import SCALES, Scale

# the shared pre-training's variant name, and the hyperbolic one (each base evaluated as it is:
# a claim's reference), declared with the claims that name them
PRETRAIN = EUCLIDEAN_CLIP
PRETRAIN_HYPERBOLIC = HYPERBOLIC_MERU  # the ARGENT study's bases (``plan.bases``'s MERU)
EVAL_SEED = 10_000  # the held-out world every run is evaluated on (scenes no training draws)
# the seed-0 runs whose held-out embeddings the tutorials read
EMBEDDING_VARIANTS = (PRETRAIN, "InfoNCE (λ=0)", "MoLo", "Long-CLIP", "MERU", "HyCoCLIP", "ARGENT")


def is_base_reference(variant: str) -> bool:
    """Whether ``variant`` is a base evaluated as it is (either geometry, either model size)."""
    return variant.removesuffix(SMALLER) in (PRETRAIN, PRETRAIN_HYPERBOLIC)


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
    evaluate: bool = True  # False: trained and validated only (a recipe search's grid point)
    folder: str = ""  # results folder under results/<scale>/ (default <study>/<variant>/seed<k>)
    parents: bool = False  # also record each held-out sample's parents inside 2K/√c (items)
    eval_size: int = 0  # test samples it is evaluated on (0: the scale's ``eval_size``)

    @property
    def name(self) -> str:
        return self.folder or f"{self.study}/{self.variant}/seed{self.seed}"


def stage_of(run: Run) -> str:
    """The stage a run's time is counted under: its own (``recipe``, ``trend``, ...) or its
    study's."""
    return run.stage or run.study


LOG_EVERY = 5


def _config(
    method: str,
    seed: int,
    scale: Scale,
    steps: int,
    batch: int,
    output: Path,
    architecture: str = MODEL,
    geometry: str = "euclidean",
    **sections,
) -> dict:
    """A fine-tune's training config from base ``scale.base_of(seed)`` of ``architecture`` and
    ``geometry`` (``study.plan.bases.GEOMETRIES``)."""
    base = scale.base_of(seed)
    every = max(LOG_EVERY, steps // VAL_POINTS)
    weights = base_path(architecture, base, bases_dir(geometry))
    config = {
        "method": method,
        "model": {"name": architecture, "init": str(weights)},
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


# the bases evaluated as they are: geometry -> (study, variant, method, benchmarks, batch field)
BASE_REFERENCES = {
    "euclidean": ("himo", PRETRAIN, "clip", HIMO_BENCHMARKS, "finetune_batch"),
    "hyperbolic": ("argent", PRETRAIN_HYPERBOLIC, "meru", ARGENT_BENCHMARKS, "scratch_batch"),
}


def base_reference_runs(scale: Scale, root: Path, geometry: str) -> list[Run]:
    """The bases of ``geometry`` of both model sizes, evaluated as they are (seed = base)."""
    study, variant, method, benchmarks, batch = BASE_REFERENCES[geometry]
    runs = []
    for model, suffix in ((MODEL, ""), (MODEL_SMALLER, SMALLER)):
        for base in scale.bases:
            output = root / f"bases/{model}{GEOMETRIES[geometry].run_suffix}-base{base}"
            config = _config(method, base, scale, 0, getattr(scale, batch), output, model,
                             geometry)  # fmt: skip
            runs.append(
                Run(study, variant + suffix, base, _evaluation_only(config), benchmarks,
                    stage="references")
            )  # fmt: skip
    return runs


def reference_runs(scale: Scale, root: Path) -> list[Run]:
    """The bases of both geometries as they are (seed = base) and an untrained model of each
    geometry (seed 0): evaluated, not trained (0 steps: the checkpoint is the start)."""
    runs = base_reference_runs(scale, root, "euclidean")
    runs += base_reference_runs(scale, root, "hyperbolic")
    himo = _config("himo", 0, scale, 0, scale.finetune_batch, root / "untrained/himo",
                   **_himo_sections(scale, {}))  # fmt: skip
    himo["model"]["init"] = "random"
    argent = scratch_config("ARGENT", "argent", {}, scale, 0, root / "untrained/argent")
    argent["train"]["steps"] = 0
    for study, config, benchmarks in (
        ("himo", himo, HIMO_BENCHMARKS),
        ("argent", argent, ARGENT_BENCHMARKS),
    ):
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
# the validation curves of a HiMo fine-tune: its primary metric, then what the base knew
# (the recipe stage's retention check, ``study.plan.recipe``)
HIMO_METRICS = ("long_i2t_r1", "short_i2t_r1", "zeroshot_L1")

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
    """MoLo, MoLo with λ = 0 and Long-CLIP from the seed's base; on each ablation's seeds
    (``Scale.arm_seeds``) also MoLo's batch-size and HiDe-scope ablations (:data:`HIMO_SWEEP`)."""
    molo = HIMO_HEADLINE["MoLo"][1]
    variants = {label: (method, loss, 1.0, 1) for label, (method, loss) in HIMO_HEADLINE.items()}
    variants["Long-CLIP"] = ("longclip", {"pcm_dim": scale.pcm_dim, "short_weight": 0.5}, 1.0, 1)
    for label, (loss, factor, nproc) in HIMO_SWEEP.items():
        if seed in scale.arm_seeds(label):
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


# the validation curves of an ARGENT-study run: the learning targets' metrics and zero-shot L3,
# then its held-out parents against the aperture radius (share inside and mean norm, each kind)
ARGENT_METRICS = (
    "short_i2t_r1", "zeroshot_L1", "zeroshot_L3",
    *(m for m in VALIDATION_METRICS if m.startswith(("inside_", "norm_"))),
)  # fmt: skip
# ARGENT's paper trains every model from scratch, each arm of a comparison at one budget; its
# main comparisons (Table 2) at the model sizes it compares, its ablations (Table 3) in a
# smaller setting of their own (CC3M). The study does the same: every arm below trains from
# random weights with MERU's initialisation, and the ablations run at the smaller model
ARGENT_MAIN = {"HyCoCLIP": ("hycoclip", {}), "ARGENT": ("argent", {}), "MERU": ("meru", {})}
ARGENT_SIZE = {f"HyCoCLIP{SMALLER}": ("hycoclip", {}), f"ARGENT{SMALLER}": ("argent", {})}
ARGENT_ABLATIONS = {
    f"ARGENT{SMALLER}, no weights": ("argent", {"weights": "none"}),
    f"ARGENT{SMALLER}, weights on all pairs": ("argent", {"weights": "all"}),
    f"ARGENT{SMALLER}, no regularizer": ("argent", {"regularize": False}),
    f"ARGENT{SMALLER}, Ent": ("argent", {"entailment": "ent"}),
}
ARGENT_ARMS = {**ARGENT_MAIN, **ARGENT_SIZE, **ARGENT_ABLATIONS}


def scratch_config(
    label: str, method: str, loss: dict[str, Any], scale: Scale, seed: int, output: Path
) -> dict[str, Any]:
    """The config of one ARGENT-study arm trained from random weights (MERU's initialisation:
    α = log(d^-½), curvature 1, learned), as the hyperbolic bases were pre-trained
    (``study.plan.bases``: the world of the seed's base with counterfactual twins, its learning
    rate, warm-up and weight decay, on short captions with one box crop and its phrase per
    sample) for ``Scale.scratch_steps`` at ``Scale.scratch_batch``, validated
    ``Scale.scratch_val_points`` times on :data:`ARGENT_METRICS`."""
    steps = scale.scratch_steps
    every = max(LOG_EVERY, steps // scale.scratch_val_points)
    return {
        "method": method,
        "model": {"name": MODEL_SMALLER if SMALLER in label else MODEL, "init": "random"},
        "data": {
            "dataset": "world",
            "size": scale.scratch_world_size,
            "image_size": 32,
            "seed": scale.base_of(seed),
            "caption": "short_caption",
            "twins": True,
            "cache_dir": str(runs_root() / "world-cache"),
        },
        "optim": {
            "lr": scale.scratch_lr,
            "warmup_steps": scale.scratch_warmup,
            "weight_decay": scale.scratch_weight_decay,
        },
        "loss": dict(loss),
        "train": {
            "steps": steps,
            "batch_size": scale.scratch_batch,
            "seed": seed,
            "log_every": max(1, every // 4),
            "diag_every": every,
            "ckpt_every": every,
            "val_every": every,
            "val_size": scale.scratch_val_size,
            "val_metrics": list(ARGENT_METRICS),
            "output_dir": str(output),
            "progress": False,
            "device": "cpu",
        },
    }


def argent_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """Every ARGENT-study arm of ``seed`` on the seeds it runs on (``Scale.arm_seeds``): the main
    arms and the model-size pair, then the ablations; each from random weights
    (:func:`scratch_config`), its held-out parents counted per test sample at the end."""
    return [
        Run(
            "argent", label, seed,
            scratch_config(label, method, loss, scale, seed, root / f"argent/{slug(label)}/seed{seed}"),
            ARGENT_BENCHMARKS, parents=True, eval_size=scale.argent_eval_size,
        )
        for label, (method, loss) in ARGENT_ARMS.items()
        if seed in scale.arm_seeds(label)
    ]  # fmt: skip


HEADLINE = tuple(v for variants in HEADLINE_ARMS.values() for v in variants)


def sweep_priority(run: Run) -> tuple[int, int]:
    """The order of the runs beside the headline arms': ARGENT's model-size pair and MERU, then
    its ablations, then MoLo's ablations; within each group every seed, so a study stopped
    early leaves whole groups."""
    if run.variant in ARGENT_ABLATIONS:
        group = 1
    else:
        group = 0 if run.study == "argent" else 2
    return group, run.seed


def rescaled(run: Run, variant: str, steps: int, batch: int, stage: str) -> Run:
    """The same run at ``steps`` × ``batch`` (every reporting period scaled with its steps),
    in its own folder, as ``variant``."""
    config = json.loads(json.dumps(run.config))
    every = max(LOG_EVERY, steps // VAL_POINTS)
    config["train"].update(
        steps=steps, batch_size=batch, ckpt_every=every, val_every=every, diag_every=every
    )
    output = Path(config["train"]["output_dir"])
    config["train"]["output_dir"] = str(output.parent.parent / slug(variant) / output.name)
    return Run(run.study, variant, run.seed, config, run.benchmarks, run.nproc, stage)


def longer(run: Run) -> Run:
    """The schedule check of a run: the same run at twice its steps, variant ``<variant>`` +
    :data:`LONGER`."""
    train = run.config["train"]
    return rescaled(
        run, run.variant + LONGER, 2 * train["steps"], train["batch_size"], "schedule check"
    )


# MoLo's batch-size ablation names its two settings; other factors read "4× batch"
BATCH_WORDS = {0.5: "half batch", 2.0: "double batch"}


def trend_label(variant: str, axis: str, factor: float) -> str:
    """The variant of a headline arm at another batch size (``axis="batch"``; equal samples
    seen) or training length (``"length"``): e.g. ``MoLo, 4× batch``, ``ARGENT, 0.5× steps``
    (twice the steps is the schedule check's :data:`LONGER`)."""
    if axis == "batch":
        return f"{variant}, {BATCH_WORDS.get(factor, f'{factor:g}× batch')}"
    if axis == "length":
        return f"{variant}, {factor:g}× steps"
    raise ValueError(f"axis must be 'batch' or 'length'; got {axis!r}")


def trend_arm(variant: str) -> str:
    """The headline arm a trend variant (:func:`trend_label`) varies."""
    for arm in HEADLINE:
        if variant.startswith(f"{arm}, "):
            return arm
    raise ValueError(f"{variant!r} is not a trend variant of a headline arm {list(HEADLINE)}")


def trend_runs(runs: list[Run], scale: Scale) -> list[Run]:
    """The scale trend of every headline arm on the sweep seeds: each batch factor of
    ``scale.trend_batch_factors`` at equal samples seen (steps ÷ factor; the learning rate kept,
    as MoLo's batch ablation keeps it) and each length factor of ``scale.trend_length_factors``
    at the headline batch."""
    out = []
    for run in runs:
        if run.variant not in HEADLINE or run.seed not in scale.sweep_seeds:
            continue
        steps, batch = run.config["train"]["steps"], run.config["train"]["batch_size"]
        for f in scale.trend_batch_factors:
            label = trend_label(run.variant, "batch", f)
            out.append(rescaled(run, label, round(steps / f), round(batch * f), "trend"))
        for f in scale.trend_length_factors:
            label = trend_label(run.variant, "length", f)
            out.append(rescaled(run, label, round(steps * f), batch, "trend"))
    return out


def plan(
    scale_name: str, studies: tuple[str, ...] = ("himo", "argent"), searched: bool = True
) -> list[Run]:
    """Every run of the study at ``scale_name``: references first, then every seed's headline
    runs (HiMo's fine-tunes, ARGENT's from-scratch arms), then the other runs
    (:func:`sweep_priority`), then the HiMo headline arms' scale trend (:func:`trend_runs`;
    ARGENT's is cut, its from-scratch budget being the study's largest cost), then (where the
    scale asks for it) the schedule check of the first seed's headline fine-tunes. The headline
    comparisons come first so that a study stopped early (and decided with ``--partial``)
    still has them. Each HiMo fine-tune trains at its arm's picked recipe (``recipe.apply``: a
    ``recipe.RecipeMissingError`` where the scale has a grid and ``recipe.json`` no pick);
    ``searched=False`` keeps the scale's fixed ones (the same runs and folders: what reading
    finished results needs). ARGENT's arms train at the hyperbolic bases' recipe, searched by
    none."""
    if scale_name not in SCALES:
        raise ValueError(f"unknown study scale {scale_name!r}; expected one of {list(SCALES)}")
    scale, root = SCALES[scale_name], study_root(scale_name)
    references = [r for r in reference_runs(scale, root) if r.study in studies]
    finetunes = []
    for seed in scale.seeds:
        if "himo" in studies:
            finetunes += himo_runs(scale, seed, root)
        if "argent" in studies:
            finetunes += argent_runs(scale, seed, root)
    unsearched = [r for r in finetunes if r.variant in HEADLINE and r.study == "himo"]
    trend = trend_runs(unsearched, scale)
    if scale.schedule_check:
        trend += [longer(r) for r in unsearched if r.seed == scale.seeds[0]]
    if searched:  # a trend point takes its arm's recipe, its warm-up the same share of its steps
        finetunes = [
            replace(r, config=recipe.apply(r.config, r.variant, scale_name))
            if r.variant not in ARGENT_ARMS else r
            for r in finetunes
        ]  # fmt: skip
        trend = [
            replace(r, config=recipe.apply(r.config, trend_arm(r.variant), scale_name))
            for r in trend
        ]
    headline = [r for r in finetunes if r.variant in HEADLINE]
    sweeps = sorted((r for r in finetunes if r.variant not in HEADLINE), key=sweep_priority)
    return _unique(references + headline + sweeps + trend)


def _unique(runs: list[Run]) -> list[Run]:
    """The runs with each name once (a trend point that is already a sweep, e.g. MoLo's half
    batch, or the schedule check, is the same run); a name planned twice with two configs is
    an error naming it."""
    seen: dict[str, Run] = {}
    for run in runs:
        other = seen.setdefault(run.name, run)
        if json.dumps(other.config, sort_keys=True) != json.dumps(run.config, sort_keys=True):
            raise ValueError(f"{run.name}: planned twice with different configs")
    return list(seen.values())


def study_root(scale_name: str) -> Path:
    """The study's training folders and caches: ``runs/study-<scale>/`` (``runs_root``)."""
    return runs_root() / f"study-{scale_name}"


def run_target(run: Run, scale_name: str) -> Path:
    """The run's results folder, ``results/<scale>/<study>/<variant>/seed<k>/`` (a recipe
    run's: ``results/<scale>/recipe/<arm>/lr<lr>-wu<warm-up>/``)."""
    if run.folder:
        return results_dir(scale_name) / run.folder
    return results_dir(scale_name) / run.study / slug(run.variant) / f"seed{run.seed}"


def recipe_plan(scale_name: str, studies: tuple[str, ...] = ("himo", "argent")) -> list[Run]:
    """The recipe stage's runs (``study.plan.recipe``): each searched arm of ``studies`` at every
    point of the scale's grid, seed 0 at the arm's full schedule, trained and validated, not
    evaluated; none where the scale has no grid."""
    scale, root = SCALES[scale_name], study_root(scale_name)
    arms = (himo_runs(scale, 0, root) if "himo" in studies else []) + (
        argent_runs(scale, 0, root) if "argent" in studies else []
    )
    return [
        _recipe_run(run, lr, warmup, root)
        for run in arms
        if run.variant in recipe.SEARCHED_ARMS
        for lr, warmup in recipe.grid(scale, run.study)
    ]


def _recipe_run(run: Run, lr: float, warmup: float, root: Path) -> Run:
    """``run`` at one grid point, in the recipe stage's folders."""
    folder = recipe.point_folder(run.variant, lr, warmup)
    config = json.loads(json.dumps(run.config))
    steps = config["train"]["steps"]
    config["optim"].update(lr=lr, warmup_steps=recipe.warmup_steps(warmup, steps))
    config["train"]["output_dir"] = str(root / folder)
    return replace(run, config=config, stage="recipe", evaluate=False, folder=folder)


def regime_table(scale_name: str) -> str:
    """The study's regimes as a Markdown table (the study page's): per arm of either study,
    how it starts, the world it trains on, its budget (steps × batch, samples seen) and its
    seeds, read from the plan."""
    rows: dict[tuple[str, str], list] = {}
    for run in plan(scale_name, searched=False):
        if run.stage in ("references", "trend", "recipe", "schedule check"):
            continue
        config = run.config
        data, train = config["data"], config["train"]
        start = "random weights" if config["model"]["init"] == "random" else "a pre-trained base"
        world = f"{data['size']:,} scenes" + (" with twins" if data.get("twins") else "")
        budget = (
            f"{train['steps']:,} × {train['batch_size']} ({train['steps'] * train['batch_size']:,})"
        )
        key = (run.study, run.variant)
        row = rows.setdefault(key, [config["model"]["name"], start, world, budget, []])
        row[4].append(run.seed)
    lines = [
        "| study | arm | model | start | training world (per base) | steps × batch (samples) | seeds |",
        "|---|---|---|---|---|---|---|",
    ]
    for (study, variant), (model, start, world, budget, seeds) in rows.items():
        lines.append(
            f"| {study} | {variant} | {model} | {start} | {world} | {budget} | "
            f"{len(seeds)} ({', '.join(map(str, sorted(seeds)))}) |"
        )
    return "\n".join(lines)
