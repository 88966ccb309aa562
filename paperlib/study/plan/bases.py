"""The study's pre-trained bases as planned: their models, geometries and recipes, each base's
training config, and where the committed bases lie (``results/bases/``,
``results/bases-hyperbolic/``). :mod:`paperlib.study.run.pretrain` trains them; every
fine-tune's plan names their weights."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paperlib.study.paths import REPO_ROOT

MODEL = "paper-tiny-rn"  # a 32 px ResNet image tower, 2-layer text transformer (8.5M)
MODEL_SMALLER = "paper-micro-rn"  # the same at half the width (2.9M): the model-size arm
BASES = (0, 1)
PLATEAU_METRICS = ("zeroshot_L1", "short_i2t_r1")  # the curves a base must flatten on
VAL_METRICS = (*PLATEAU_METRICS, "zeroshot_L3")


@dataclass(frozen=True)
class Geometry:
    """A kind of base: the method that pre-trains it and the folder its bases go to."""

    method: str
    folder: str  # under results/
    run_suffix: str  # added to the model's name in the runs folder


GEOMETRIES = {
    "euclidean": Geometry("clip", "bases", ""),
    "hyperbolic": Geometry("meru", "bases-hyperbolic", "-meru"),
}


@dataclass(frozen=True, kw_only=True)
class Recipe:
    """A base's training schedule (CLIP on short captions with twins); every scale's bases
    share one optimiser (``lr``, ``weight_decay``)."""

    steps: int
    batch: int
    lr: float = 1e-3
    warmup: int
    weight_decay: float = 0.1
    size: int  # training-world samples
    val_size: int
    val_points: int  # validation records over the schedule (plus step 0)


RECIPES = {
    "full": Recipe(steps=6400, batch=128, warmup=200, size=200_000, val_size=1000, val_points=16),
    "smoke": Recipe(steps=8, batch=32, warmup=2, size=256, val_size=64, val_points=2),
}


def bases_dir(geometry: str = "euclidean") -> Path:
    """``results/bases/`` (``results/bases-hyperbolic/``): the committed bases of a geometry
    that every study scale fine-tunes from."""
    return REPO_ROOT / "results" / GEOMETRIES[geometry].folder


def base_path(model: str, base: int, folder: Path | None = None) -> Path:
    """The weights file of base ``base`` of ``model``."""
    return (folder or bases_dir()) / f"{model}-base{base}.pt"


def base_config(
    model: str, base: int, recipe: Recipe, runs: Path, geometry: str = "euclidean"
) -> dict[str, Any]:
    """The training config of one base of ``geometry`` (the method's own initialisation:
    MERU's defaults for a hyperbolic base)."""
    every = recipe.steps // recipe.val_points
    kind = GEOMETRIES[geometry]
    return {
        "method": kind.method,
        "model": {"name": model, "init": "random"},
        "data": {
            "dataset": "world",
            "size": recipe.size,
            "image_size": 32,
            "seed": base,
            "caption": "short_caption",
            "twins": True,
            "cache_dir": str(runs / "world-cache"),
        },
        "optim": {
            "lr": recipe.lr,
            "warmup_steps": recipe.warmup,
            "weight_decay": recipe.weight_decay,
        },
        "loss": {},
        "train": {
            "steps": recipe.steps,
            "batch_size": recipe.batch,
            "seed": base,
            "log_every": max(1, every // 4),
            "diag_every": every,
            "ckpt_every": every,
            "val_every": every,
            "val_size": recipe.val_size,
            "val_metrics": list(VAL_METRICS),
            "output_dir": str(runs / f"{model}{kind.run_suffix}-base{base}"),
            "progress": False,
            "device": "cpu",
        },
    }
