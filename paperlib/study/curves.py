"""Learning curves: a held-out metric against training CPU time, for each recipe the study
tried; the evidence behind its learning targets (README, "Learning targets").

The study's own runs listed in :data:`CURVE_VARIANTS` keep a snapshot every fifth of their
schedule (``train.keep_checkpoints``, first seed only). The pre-training recipes the study
tried and left (:data:`REJECTED_RECIPES`) are trained again here on seed 0, each with the
study's pre-training config and one change. Every snapshot is evaluated on the held-out world
(:data:`~paperlib.study.reader.EVAL_SEED`), and the points go to
``results/<scale>/curves.json``. The CPU time is the training process's CPU seconds at the
snapshot's step (``cpu_seconds`` in the training log; 2 threads use about 2 CPU-s per second).
Evaluations are kept under ``runs/study-<scale>/curves/``, so an interrupted pass resumes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.study.reader import EVAL_SEED, PRETRAIN, repo_relative, results_dir, slug

# the metric each curve follows: (benchmark to run, result file's dataset, metric key, label,
# the per-item metric of the same number, as the learning targets name it)
ZEROSHOT_L1 = ("world-zeroshot", "world-zeroshot-L1", "acc1", "zero-shot L1 acc1",
               "world-zeroshot/L1_correct")  # fmt: skip
SHORT_I2T = ("world-short", "world-short", "text_retrieval_recall@1", "short I2T R@1",
             "world-short/i2t_hit1")  # fmt: skip
LONG_I2T = ("world-long", "world-long", "text_retrieval_recall@1", "long I2T R@1",
            "world-long/i2t_hit1")  # fmt: skip
CURVE_VARIANTS = {PRETRAIN: (ZEROSHOT_L1, SHORT_I2T), "MoLo": (LONG_I2T,), "ARGENT": (ZEROSHOT_L1,)}
# the pre-training recipe the study's own replaced (counterfactual twins in every batch)
REJECTED_RECIPES: dict[str, dict[str, dict[str, Any]]] = {
    "short captions, no twins": {"data": {"twins": False}},
}


def snapshot_steps(log: list[dict[str, Any]], run_dir: Path) -> list[tuple[int, Path]]:
    """(step, checkpoint) of every kept snapshot of a run, and of its final ``last.pt``."""
    kept = sorted((int(p.stem.removeprefix("step")), p) for p in run_dir.glob("step*.pt"))
    final = max(r["step"] for r in log if "loss" in r)
    return [*kept, (final, run_dir / "last.pt")]


def cpu_seconds_at(log: list[dict[str, Any]], step: int) -> float:
    """The training process's CPU seconds at ``step``, from the log record of that step."""
    for record in log:
        if record.get("step") == step and "cpu_seconds" in record:
            return float(record["cpu_seconds"])
    raise ValueError(f"the training log has no cpu_seconds at step {step} (log every step?)")


def evaluate_point(checkpoint: Path, metric: tuple[str, ...], folder: Path, eval_size: int,
                   cache: Path) -> float:  # fmt: skip
    """The metric of one snapshot; its results file is kept in ``folder`` and reused."""
    benchmark, dataset, key = metric[:3]
    result = folder / f"{dataset}.json"
    if not result.is_file():
        from paperlib.evaluate import run as evaluate_run

        evaluate_run(checkpoint, folder, benchmarks=[benchmark], world_size=eval_size,
                     world_seed=EVAL_SEED, cache_dir=cache)  # fmt: skip
    return float(json.loads(result.read_text())["metrics"][key])


def run_curves(recipe: str, run_dir: Path, metrics: tuple, scale_name: str, eval_size: int,
               runs_root: Path) -> list[dict[str, Any]]:  # fmt: skip
    """One curve per metric for the run in ``run_dir`` (its snapshots and its final step)."""
    from paperlib.train import read_log

    log = read_log(run_dir)
    curves = []
    for metric in metrics:
        points = []
        for step, checkpoint in snapshot_steps(log, run_dir):
            folder = runs_root / "curves" / repo_relative(run_dir).replace("/", "_") / f"step{step}"
            value = evaluate_point(checkpoint, metric, folder, eval_size, runs_root / "cache")
            points.append({"step": step, "cpu_seconds": round(cpu_seconds_at(log, step), 1),
                           "value": value})  # fmt: skip
        curves.append({"recipe": recipe, "run": repo_relative(run_dir), "metric": metric[3],
                       "dataset": metric[1], "key": metric[2], "item": metric[4],
                       "eval_size": eval_size, "points": points})  # fmt: skip
    return curves


def write_curves(scale_name: str, study_runs: list, eval_size: int, runs_root: Path,
                 rejected_configs: dict[str, dict[str, Any]]) -> Path:  # fmt: skip
    """Evaluate every snapshot of ``study_runs`` (those keeping checkpoints) and train and
    evaluate ``rejected_configs`` (recipe -> training config); write ``curves.json``."""
    from paperlib.train import run as train_run

    curves = []
    for run in study_runs:
        if run.config["train"].get("keep_checkpoints") and run.variant in CURVE_VARIANTS:
            label = f"{run.variant} (the study's recipe)"
            run_dir = Path(run.config["train"]["output_dir"])
            curves += run_curves(label, run_dir, CURVE_VARIANTS[run.variant], scale_name,
                                 eval_size, runs_root)  # fmt: skip
    for recipe, config in rejected_configs.items():
        result = train_run(config)
        if result.status != "finished":
            raise RuntimeError(
                f"curve recipe {recipe!r}: training {result.status} at {result.step}"
            )
        curves += run_curves(f"{PRETRAIN}: {recipe}", Path(config["train"]["output_dir"]),
                             CURVE_VARIANTS[PRETRAIN], scale_name, eval_size, runs_root)  # fmt: skip
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
