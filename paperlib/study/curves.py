"""Learning curves: a held-out metric against training CPU time, for each recipe the study
tried; the evidence behind its learning targets (README, "Learning targets").

The study's own runs listed in :data:`CURVE_VARIANTS` keep a snapshot every fifth of their
schedule (``train.keep_checkpoints``, first seed only). The pre-training recipes the study
tried and left (:data:`REJECTED_RECIPES`) are trained again here on seed 0, each with the
study's pre-training config and one change. Every snapshot is evaluated on the held-out world
(:data:`~paperlib.study.reader.EVAL_SEED`), and the points go to
``results/<scale>/curves.json``. The CPU time is the training process's CPU seconds at the
snapshot's step (``cpu_seconds`` in the training log; 2 threads use about 2 CPU-s per second).
Evaluations are kept under ``runs/study-<scale>/curves/`` (keyed by the snapshot file), so an
interrupted pass resumes; a rejected recipe that finished training is not trained again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.engine.evaluation import checkpoint_key
from paperlib.evaluate import evaluate_run
from paperlib.study.reader import EVAL_SEED, PRETRAIN, repo_relative, results_dir, slug
from paperlib.train import read_log, train_run, trained_to_end

# the metric each curve follows: (benchmark to run, result file's dataset, metric key, label,
# the per-item metric of the same number, as the learning targets name it)
ZEROSHOT_L1 = (
    "world-zeroshot",
    "world-zeroshot-L1",
    "acc1",
    "zero-shot L1 acc1",
    "world-zeroshot/L1_correct",
)
SHORT_I2T = (
    "world-short",
    "world-short",
    "text_retrieval_recall@1",
    "short I2T R@1",
    "world-short/i2t_hit1",
)
LONG_I2T = (
    "world-long",
    "world-long",
    "text_retrieval_recall@1",
    "long I2T R@1",
    "world-long/i2t_hit1",
)
CURVE_VARIANTS = {PRETRAIN: (ZEROSHOT_L1, SHORT_I2T), "MoLo": (LONG_I2T,), "ARGENT": (ZEROSHOT_L1,)}
# the pre-training recipe the study's own replaced (counterfactual twins in every batch)
REJECTED_RECIPES: dict[str, dict[str, dict[str, Any]]] = {
    "short captions, no twins": {"data": {"twins": False}},
}


def keeps_curve(run) -> bool:
    """Whether a study run keeps its snapshots for the curves (``train.keep_checkpoints``: set
    by the runner on the first seed of each :data:`CURVE_VARIANTS` entry)."""
    return bool(run.config["train"].get("keep_checkpoints"))


def snapshot_steps(log: list[dict[str, Any]], run_dir: Path) -> list[tuple[int, Path]]:
    """(step, checkpoint) of every kept snapshot of a run, and of its final ``last.pt``."""
    kept = sorted((int(p.stem.removeprefix("step")), p) for p in run_dir.glob("step*.pt"))
    final = max(r["step"] for r in log)
    return [*kept, (final, run_dir / "last.pt")]


def cpu_seconds_at(log: list[dict[str, Any]], step: int) -> float:
    """The training process's CPU seconds at ``step``, from the log record of that step."""
    for record in log:
        if record.get("step") == step and "cpu_seconds" in record:
            return float(record["cpu_seconds"])
    raise ValueError(f"the training log has no cpu_seconds at step {step} (log every step?)")


def evaluate_points(
    checkpoint: Path, metrics: tuple, folder: Path, eval_size: int, cache: Path
) -> list[float]:
    """The metrics of one snapshot, from one evaluation of the benchmarks whose results file
    ``folder`` lacks (kept there and reused)."""
    missing = sorted({m[0] for m in metrics if not (folder / f"{m[1]}.json").is_file()})
    if missing:
        evaluate_run(
            checkpoint,
            folder,
            benchmarks=missing,
            world_size=eval_size,
            world_seed=EVAL_SEED,
            cache_dir=cache,
        )
    return [
        float(json.loads((folder / f"{m[1]}.json").read_text())["metrics"][m[2]]) for m in metrics
    ]


def run_curves(
    recipe: str, run_dir: Path, metrics: tuple, eval_size: int, runs_root: Path
) -> list[dict[str, Any]]:
    """One curve per metric for the run in ``run_dir`` (its snapshots and its final step)."""

    log = read_log(run_dir)
    points: list[list[dict[str, Any]]] = [[] for _ in metrics]
    for step, checkpoint in snapshot_steps(log, run_dir):  # a retrained run gets new folders
        folder = (
            runs_root
            / "curves"
            / repo_relative(run_dir).replace("/", "_")
            / f"step{step}-{checkpoint_key(checkpoint)}"
        )
        values = evaluate_points(checkpoint, metrics, folder, eval_size, runs_root / "cache")
        for curve, value in zip(points, values):
            curve.append(
                {"step": step, "cpu_seconds": round(cpu_seconds_at(log, step), 1), "value": value}
            )
    return [
        {
            "recipe": recipe,
            "run": repo_relative(run_dir),
            "metric": metric[3],
            "dataset": metric[1],
            "key": metric[2],
            "item": metric[4],
            "eval_size": eval_size,
            "points": curve,
        }
        for metric, curve in zip(metrics, points)
    ]


def write_curves(scale_name: str, study_runs: list, eval_size: int, runs_root: Path) -> Path:
    """Evaluate every snapshot of ``study_runs`` (those keeping them), train the pre-training
    recipes the study left (:data:`REJECTED_RECIPES`, from its first kept pre-training) unless
    trained already, evaluate theirs, and write ``curves.json``."""

    curves = []
    for run in filter(keeps_curve, study_runs):
        curves += run_curves(
            f"{run.variant} (the study's recipe)",
            Path(run.config["train"]["output_dir"]),
            CURVE_VARIANTS[run.variant],
            eval_size,
            runs_root,
        )
    base = next(r for r in study_runs if r.variant == PRETRAIN and keeps_curve(r)).config
    for recipe in REJECTED_RECIPES:
        config = rejected_config(base, recipe, runs_root)
        output = Path(config["train"]["output_dir"])
        if not trained_to_end(output):
            result = train_run(config)
            if result.status != "finished":
                raise RuntimeError(
                    f"curve recipe {recipe!r}: training {result.status} at {result.step}"
                )
        curves += run_curves(
            f"{PRETRAIN}: {recipe}", output, CURVE_VARIANTS[PRETRAIN], eval_size, runs_root
        )
    path = results_dir(scale_name) / "curves.json"
    atomic_write_text(path, json.dumps({"curves": curves}, indent=1) + "\n")
    return path


def rejected_config(base: dict[str, Any], recipe: str, runs_root: Path) -> dict[str, Any]:
    """``base`` (the study's pre-training config) with ``recipe``'s one change, in its own folder."""
    config = json.loads(json.dumps(base))
    for section, values in REJECTED_RECIPES[recipe].items():
        config[section].update(values)
    config["train"]["output_dir"] = str(runs_root / "curves" / "recipes" / slug(recipe))
    config["train"]["keep_checkpoints"] = True
    return config
