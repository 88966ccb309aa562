"""A run's evaluation and what it leaves in its results folder: the benchmarks' JSON files,
``items.npz`` (per-item metric values) and, for the tutorials, ``embeddings.pt``.

The evaluation caches the held-out world's embeddings under ``runs/study-<scale>/cache/``;
:func:`refresh_items` rewrites finished runs' results from that cache after a metric changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperlib.atomic import atomic_write
from paperlib.data.world import World, box_crop, chosen_box
from paperlib.engine.checkpoint import load_checkpoint
from paperlib.engine.evaluation import Embedder, checkpoint_key, load_trained, world_texts
from paperlib.engine.methods import HYPERBOLIC_METHODS, input_size
from paperlib.evaluate import evaluate_run
from paperlib.metrics.items import parent_items, world_items
from paperlib.study.paths import repo_relative
from paperlib.study.plan.design import EVAL_SEED, Run, plan, run_target, study_root
from paperlib.study.plan.scales import SCALES


def _cache(scale_name: str) -> Path:
    return study_root(scale_name) / "cache"


def evaluate_into(run: Run, scale_name: str, checkpoint: Path, target: Path) -> dict[str, Any]:
    """Evaluate ``checkpoint`` on the run's benchmarks into ``target`` (on the run's own
    ``eval_size`` test samples where it sets one, else the scale's); returns the held-out world
    embeddings (from the evaluation's cache)."""
    size = run.eval_size or SCALES[scale_name].eval_size
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
    return cached_world_embeddings(scale_name, checkpoint, size)


def cached_world_embeddings(scale_name: str, checkpoint: Path, size: int) -> dict[str, Any]:
    """The held-out world embeddings of ``size`` samples an evaluation of ``checkpoint``
    cached."""
    (emb_file,) = (_cache(scale_name) / checkpoint_key(checkpoint)).glob(
        f"world-{EVAL_SEED}-{size}-*.pt"
    )
    emb = torch.load(emb_file, weights_only=True)
    return {**emb, **world_texts(EVAL_SEED, size)}


def refresh_items(scale_name: str) -> int:
    """Rewrite every finished run's results files and ``items.npz`` from its cached embeddings
    (after a change of a metric); returns the number of runs refreshed."""
    count = 0
    for run in plan(scale_name, searched=False):  # its folders; the recipe is not needed
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


def write_items(
    checkpoint: Path, emb: dict[str, Any], target: Path, parents: bool = False
) -> float:
    """``items.npz`` (per-item metric values) for the run, with each held-out sample's parents
    inside the aperture radius where ``parents`` (``Run.parents``); returns its feature std."""
    geometry, curv = _geometry(checkpoint)
    items = world_items(emb, geometry, curv)
    if parents:
        norms = {"short_caption": emb["short_caption"].float().norm(dim=-1)}
        norms.update(box_parent_norms(checkpoint, len(emb["image"]), EVAL_SEED))
        items.update(parent_items(norms, curv))
    atomic_save_npz(target / "items.npz", items)
    return float(min(emb["image"].float().std(0).mean(), emb["caption"].float().std(0).mean()))


def atomic_save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed`` of float32 copies, written atomically (``paperlib.atomic``)."""
    arrays = {k: v.astype(np.float32) for k, v in arrays.items()}
    atomic_write(path, lambda handle: np.savez_compressed(handle, **arrays))


# the held-out world features a tutorial reads (:func:`export_embeddings`)
TUTORIAL_FEATURES = (
    "image", "caption", "short_caption", "chain", "labels", "segments_all", "segments_all_lengths"
)  # fmt: skip


def export_embeddings(emb: dict[str, Any], checkpoint: Path, target: Path, run: Run) -> None:
    """Keep the held-out world features a tutorial reads (seed 0 only; a few hundred kB)."""
    n = min(300, len(emb["image"]))  # the tutorials' plots use the first 300 held-out samples
    out = {k: emb[k] for k in TUTORIAL_FEATURES if k in emb}
    lengths = out["segments_all_lengths"]
    out["segments_all"] = out["segments_all"][: int(lengths[:n].sum())]
    out = {k: (v[:n] if k != "segments_all" else v).clone() for k, v in out.items()}  # own storage
    if run.study == "argent":
        out.update(box_embeddings(checkpoint, n, EVAL_SEED))
    atomic_write(target / "embeddings.pt", lambda h: torch.save(out, h))


@torch.no_grad()
def box_parent_norms(checkpoint: Path, size: int, seed: int) -> dict[str, torch.Tensor]:
    """Space norms of each held-out sample's box phrase and crop, the box its training item
    would carry (``data.world.chosen_box``, ``data.world.box_crop``)."""
    module, preprocess, tokenizer, _ = load_trained(checkpoint)
    world = World(seed=seed, image_size=input_size(module))
    boxes = [chosen_box(seed, i, world.sample(i)) for i in range(size)]
    embed = Embedder(module, preprocess, tokenizer, batch_size=256)
    crops = [box_crop(b, world.image_size) for b in boxes]
    return {
        "box_text": embed.texts([b.phrase for b in boxes]).float().norm(dim=-1),
        "box_image": embed.images(crops).float().norm(dim=-1),
    }


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
