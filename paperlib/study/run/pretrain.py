"""The study's pre-trained bases: small CLIPs of the world trained once, to their plateau.

Both papers fine-tune released CLIP weights; the study's fine-tunes start from bases of the
generated world in the same way. Each base is a CLIP (InfoNCE) on the world's COCO-like short
captions, 77 tokens, with each scene's counterfactual twin in the same batch (``data.twins``:
the same scene with its main object's shape replaced by one of another super-category, a hard
negative that colour and layout cannot solve), trained on its own world (``data.seed`` = the
base's seed) until its held-out validation curve (``engine.validation``) is flat
(``study.plan.plateau``). There are :data:`BASES` independent bases of :data:`MODEL` and of the
model-size arm's :data:`MODEL_SMALLER`: seed variance comes from the fine-tunes, and the
verdicts show whether they hinge on one base.

Each base has a geometry (:data:`GEOMETRIES`). The Euclidean bases are CLIPs. The hyperbolic
bases are MERU models of the same towers, world, recipe and budget, trained from random
weights with MERU's initialisation (learned curvature from 1, α = 1/√ of the embedding width,
MERU's logit scale), so that the hyperbolic fine-tunes can start in their
own geometry; they go to ``results/bases-hyperbolic/`` and keep their curvature, α and logit
scale beside the encoders.

``python -m paperlib.study.run.pretrain [--geometry hyperbolic]`` (``make pretrain``) trains them,
two at a time on one thread each, resumably (``runs/pretrain/``), and writes
``results/bases/`` (``results/bases-hyperbolic/`` for the hyperbolic ones):

- ``<model>-base<k>.pt``: the weights as an open_clip state dict in float16 (what every
  fine-tune's ``model.init`` names; float16 keeps each file under 25 MB); a hyperbolic base's
  file is a training checkpoint's shape (``config``: its method and model name; ``model``)
  holding the encoders in float16 and the curvature, α and logit scale in float32, which
  ``model.init`` reads the same way;
- ``<model>-base<k>.log.jsonl``: its training log (loss, validation records);
- ``bases.json``: the recipe, and per base its steps, CPU and wall seconds, SHA-256 of the
  weights, validation curve, plateau check and environment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from paperlib.atomic import atomic_write, atomic_write_text
from paperlib.engine.methods import read_init_checkpoint
from paperlib.environment import environment
from paperlib.study.paths import portable_config, repo_relative, runs_root
from paperlib.study.plan.bases import (
    BASES,
    GEOMETRIES,
    MODEL,
    MODEL_SMALLER,
    PLATEAU_METRICS,
    RECIPES,
    base_config,
    base_path,
    bases_dir,
)
from paperlib.study.plan.plateau import curves_of, run_plateaus
from paperlib.study.run.workers import worker_pool
from paperlib.train import log_records, read_log, train_run, trained_to_end


def _half(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: (v.half() if v.is_floating_point() else v) for k, v in state.items()}


def export_weights(checkpoint: Path, target: Path) -> str:
    """Write the checkpoint's open_clip state (floating tensors in float16) to ``target``, and
    for a hyperbolic checkpoint its curvature, α and logit scale (float32) with it, in a
    training checkpoint's shape that ``model.init`` reads; returns its SHA-256."""
    clip_state, scalars = read_init_checkpoint(str(checkpoint))
    if scalars:  # the method and model only: no machine's paths in a committed file
        trained = torch.load(checkpoint, map_location="cpu", weights_only=True)["config"]
        config = {"method": trained["method"], "model": {"name": trained["model"]["name"]}}
        model = {f"model.clip.{k}": v for k, v in _half(clip_state).items()}
        saved: dict[str, Any] = {"config": config, "model": {**model, **scalars}}
    else:
        saved = _half(clip_state)
    atomic_write(target, lambda handle: torch.save(saved, handle))
    return hashlib.sha256(target.read_bytes()).hexdigest()


def _train_base(job: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """Worker: train one base config (one thread), returning its wall seconds."""
    config, name = job
    torch.set_num_threads(1)
    start = time.perf_counter()
    if not trained_to_end(config["train"]["output_dir"]):
        result = train_run(config)
        if result.status != "finished":
            raise RuntimeError(f"{name}: training {result.status} at step {result.step}")
    return {"name": name, "wall_seconds": round(time.perf_counter() - start, 1)}


def base_record(config: dict[str, Any], model: str, base: int, weights: Path) -> dict[str, Any]:
    """``bases.json``'s entry for one trained base (curve, plateau checks, cost)."""
    output = Path(config["train"]["output_dir"])
    log, records = read_log(output), log_records(output / "log.jsonl")
    n = config["train"]["val_size"]  # the bases' validation set is as large as the test set
    curves = curves_of(records)
    plateaus = {m: p for m, p in run_plateaus(records, n).items() if m in PLATEAU_METRICS}
    return {
        "model": model,
        "base": base,
        "weights": repo_relative(weights),
        "steps": log[-1]["step"],
        "cpu_seconds": round(log[-1]["cpu_seconds"], 1),
        "validation": {m: [{"step": s, "value": v} for s, v in c] for m, c in curves.items()},
        "val_size": n,
        "plateau": {m: {**asdict(p), "reached": p.reached} for m, p in plateaus.items()},
    }


def pretrain(
    scale: str = "full", workers: int = 2, out: Path | None = None, geometry: str = "euclidean"
) -> Path:
    """Train every base of :data:`BASES` × (``MODEL``, ``MODEL_SMALLER``) of ``geometry`` at
    ``scale``, export them into ``out`` and write ``bases.json``; returns ``out``. ``out``
    defaults to the committed folder of the geometry for the full recipe only (another scale's
    bases go to ``runs/pretrain-<scale>/<folder>/``, never over the committed ones)."""
    recipe, runs = RECIPES[scale], runs_root() / f"pretrain-{scale}"
    folder = GEOMETRIES[geometry].folder
    out = out or (bases_dir(geometry) if scale == "full" else runs / folder)
    jobs = [
        (base_config(model, base, recipe, runs, geometry), f"{model}-base{base}")
        for model in (MODEL, MODEL_SMALLER)
        for base in BASES
    ]
    start = time.perf_counter()
    with worker_pool(workers) as pool:
        walls = {r["name"]: r["wall_seconds"] for r in pool.map(_train_base, jobs)}
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for config, name in jobs:
        model, base = config["model"]["name"], config["data"]["seed"]
        output = Path(config["train"]["output_dir"])
        weights = base_path(model, base, out)
        sha = export_weights(output / "last.pt", weights)
        shutil.copyfile(output / "log.jsonl", out / f"{name}.log.jsonl")
        entry = base_record(config, model, base, weights)
        entries.append({**entry, "sha256": sha, "wall_seconds": walls[name]})
    summary = {
        "recipe": asdict(recipe),
        "scale": scale,
        "geometry": geometry,
        "config": {name: portable_config(config) for config, name in jobs},
        "bases": entries,
        "wall_seconds": round(time.perf_counter() - start, 1),
        "workers": workers,
        "environment": environment(),
    }
    atomic_write_text(out / "bases.json", json.dumps(summary, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.study.run.pretrain", description=__doc__
    )
    parser.add_argument("--scale", choices=sorted(RECIPES), default="full")
    parser.add_argument("--workers", type=int, default=2, help="bases trained at once")
    parser.add_argument(
        "--geometry", choices=sorted(GEOMETRIES), default="euclidean",
        help="Euclidean CLIP bases (results/bases/) or hyperbolic MERU ones "
        "(results/bases-hyperbolic/)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    out = pretrain(args.scale, args.workers, geometry=args.geometry)
    print(f"[pretrain] bases written to {repo_relative(out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
