"""Executing one run of the study: train (or resume), evaluate, record; skip what is finished.

A run is finished when its ``run.done`` records what the plan and the checkout give it now
(:func:`record_differences`): the config, its initial weights' checksum, the hash of the code
that trains and evaluates it (``paperlib.provenance``; a hash recorded as training alike,
``paperlib.study.run.code_versions``, counts as the checkout's) and the Python and package versions.
A training folder of another config or start is set aside (renamed), never deleted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import time
from pathlib import Path
from typing import Any

import torch

from paperlib.atomic import atomic_write_text
from paperlib.environment import environment, environment_differences, package_versions
from paperlib.provenance import code_hash, read_run_record, run_provenance
from paperlib.study.paths import portable_config, repo_relative
from paperlib.study.plan.design import EMBEDDING_VARIANTS, Run, run_target
from paperlib.study.run.code_versions import equivalent_hashes
from paperlib.study.run.collapse import run_collapse
from paperlib.study.run.devices import device_record, without_device
from paperlib.study.run.exports import evaluate_into, export_embeddings, write_items
from paperlib.train import (
    read_log,
    train_distributed,
    train_run,
    trained_to_end,
    trained_with_other_config,
)


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


def current_code() -> dict[str, Any]:
    """What a run record must share with this checkout besides its config and start: the
    training code's hash (``paperlib.provenance``), the Python and the package versions."""
    return {
        "provenance": {"code_hash": code_hash()},
        "environment": {"python": platform.python_version(), "packages": package_versions()},
    }


def _recorded_code(record: dict[str, Any]) -> dict[str, Any]:
    """The :func:`current_code` fields of a ``run.done`` record."""
    env = record["environment"]
    return {
        "provenance": {"code_hash": record["provenance"]["code_hash"]},
        "environment": {"python": env.get("python"), "packages": env.get("packages")},
    }


def as_current_code(recorded: Any, current: dict[str, Any]) -> Any:
    """``recorded`` (:func:`current_code` fields of a run or training) with its code hash read
    as ``current``'s where ``code-versions.json`` records the two as training alike."""
    if not isinstance(recorded, dict) or not isinstance(recorded.get("provenance"), dict):
        return recorded
    code, now = recorded["provenance"].get("code_hash"), current["provenance"]["code_hash"]
    if code == now or code not in equivalent_hashes(now):
        return recorded
    return {**recorded, "provenance": {**recorded["provenance"], "code_hash": now}}


def record_differences(record: dict[str, Any], run: Run) -> list[str]:
    """The dotted fields in which a run's ``run.done`` record differs from what the plan and
    this checkout give the run now (config, ``init_sha256``, ``provenance.code_hash`` unless
    a recorded equivalent, ``environment.python``, ``environment.packages.<name>``); a record
    without provenance differs in ``provenance``. Empty: the run is finished."""
    if "provenance" not in record:
        return ["provenance"]
    differences = []
    done_config = without_device(record["config"])
    if done_config != (planned := without_device(portable_config(run.config))):
        keys = [key for key, _, _ in environment_differences(done_config, planned)]
        differences += [f"config.{key}" for key in keys] or ["config"]
    if record["init_sha256"] != init_checksum(run.config):
        differences.append("init_sha256")
    now = current_code()
    recorded = as_current_code(_recorded_code(record), now)
    return differences + [key for key, _, _ in environment_differences(recorded, now)]


def finished_record(run: Run, scale_name: str) -> dict[str, Any] | None:
    """The run's ``run.done`` record when it records what the plan and this checkout give the
    run now (:func:`record_differences`), else None; an unreadable one is a
    ``RunRecordError``."""
    done = run_target(run, scale_name) / "run.done"
    if not done.is_file():
        return None
    record = read_run_record(done)
    return None if record_differences(record, run) else record


def finished(run: Run, scale_name: str) -> bool:
    """Whether the run is finished: it has a :func:`finished_record`."""
    return finished_record(run, scale_name) is not None


def _finished_record(run: Run, scale_name: str) -> dict[str, Any] | None:
    """:func:`finished_record`, with a log line naming the fields in which an existing record
    differs."""
    if (record := finished_record(run, scale_name)) is not None:
        return record
    done = run_target(run, scale_name) / "run.done"
    if done.is_file():
        differences = record_differences(read_run_record(done), run)
        print(f"[study] {run.name}: run.done differs in {', '.join(differences)}; running it "
              "again", flush=True)  # fmt: skip
    return None


def execute(run: Run, scale_name: str) -> dict[str, Any]:
    """Train (or resume) and evaluate one run (a run with ``evaluate`` False: train only);
    copy its results and log under ``results/`` and return its ``run.done`` record. A finished
    run (:func:`finished`) is skipped."""
    if (record := _finished_record(run, scale_name)) is not None:
        return record
    target = run_target(run, scale_name)
    config = json.loads(json.dumps(run.config))
    output = Path(config["train"]["output_dir"])
    start, made_by = time.perf_counter(), run_provenance()  # the code as the run starts
    if reason := stale_training(output, config):
        set_aside(output, reason)
    init_record(output).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(init_record(output), str(init_checksum(config)))
    atomic_write_text(code_record(output), json.dumps(current_code()))
    if not trained_to_end(output):
        if run.nproc > 1:
            train_distributed(config, run.nproc, run.name)
        else:
            result = train_run(config)
            if result.status != "finished":
                raise RuntimeError(f"{run.name}: training {result.status} at step {result.step}")
    train_seconds = time.perf_counter() - start
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(output / "log.jsonl", target / "log.jsonl")
    feature_std, collapsed = (
        _evaluate(run, scale_name, config, target) if run.evaluate else (None, None)
    )
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
        "evaluated": run.evaluate,
        **device_record(config["train"].get("device", "cpu")),
        "environment": environment(),
        "provenance": made_by,
    }
    atomic_write_text(target / "run.done", json.dumps(record, indent=1))
    return record


def _evaluate(
    run: Run, scale_name: str, config: dict[str, Any], target: Path
) -> tuple[float, str | None]:
    """Evaluate a trained run on the test world into ``target`` (results files, items, and the
    embeddings of :data:`EMBEDDING_VARIANTS`' seed 0); returns its feature spread and collapse
    reason."""
    output = Path(config["train"]["output_dir"])
    checkpoint = output / "last.pt"
    emb = evaluate_into(run, scale_name, checkpoint, target)
    feature_std = write_items(checkpoint, emb, target, run.parents)
    collapsed = run_collapse({"config": config, "feature_std": feature_std}, read_log(output))
    if run.seed == 0 and run.variant in EMBEDDING_VARIANTS:
        export_embeddings(emb, checkpoint, target, run)
    return feature_std, collapsed


def init_record(output: Path) -> Path:
    """The file beside a run's training folder that holds its initial weights' checksum
    (a base rebuilt at the same path is another start)."""
    return output.with_name(f"{output.name}.init-sha256")


def code_record(output: Path) -> Path:
    """The file beside a run's training folder that holds the :func:`current_code` it was
    trained with (another code or package version trains afresh)."""
    return output.with_name(f"{output.name}.code.json")


def stale_training(output: Path, config: dict[str, Any]) -> str | None:
    """Why ``output`` holds a training this run cannot continue or reuse, or None: of another
    config (``train.trained_with_other_config``), from other initial weights, or by other code
    (not a recorded equivalent) or package versions (or by code that did not record its
    version)."""
    if not output.exists():
        return None
    recorded = init_record(output)
    if recorded.is_file() and recorded.read_text() != str(init_checksum(config)):
        return "trained from other initial weights"
    if trained_with_other_config(output, config):
        return "trained with another config"
    now = current_code()
    if as_current_code(_recorded_training_code(output), now) != now:
        return "trained by other code or package versions"
    return None


def _recorded_training_code(output: Path) -> dict[str, Any] | None:
    """The :func:`code_record` beside ``output``; None where it is missing or unreadable."""
    try:
        return json.loads(code_record(output).read_text())
    except (OSError, ValueError):
        return None


def set_aside(output: Path, reason: str = "trained with another config") -> Path:
    """Rename a training folder this run cannot reuse (``reason``) to ``<name>.stale<k>`` beside
    it (the first free k), so the run trains afresh and nothing is deleted."""
    k = 1
    while (target := output.with_name(f"{output.name}.stale{k}")).exists():
        k += 1
    output.rename(target)
    print(f"[study] {repo_relative(output)}: {reason}; set aside as {target.name}",
          flush=True)  # fmt: skip
    return target


@contextlib.contextmanager
def study_settings(threads: int = 1):
    """What every study run executes under: a fixed number of torch threads and torch's
    deterministic algorithms (restored afterwards)."""
    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    # deterministic cuBLAS needs a fixed workspace, set before CUDA's first matmul
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
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
