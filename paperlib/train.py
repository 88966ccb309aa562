"""Train from a config file: ``python -m paperlib.train CONFIG [section.key=value ...]``.

Runs unchanged single-process or under ``torchrun`` (DDP), e.g.::

    python -m paperlib.train params/train_himo/smoke-cpu.yaml train.steps=20
    torchrun --nproc_per_node 8 -m paperlib.train configs.yaml

``CONFIG`` is a YAML/JSON file with ``method`` and the sections of
:mod:`paperlib.engine.config`; a notebook parameter file (with a ``config`` key holding that
mapping) is accepted too. Notebooks call :func:`run_in` and :func:`read_log`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import torch
import yaml

from paperlib import exit_status
from paperlib.atomic import WriteError, atomic_write_text
from paperlib.engine import distributed
from paperlib.engine.config import (
    Config,
    ConfigError,
    config_keys,
    load_config,
    read_file,
    to_dict,
)
from paperlib.engine.loop import (
    NonFiniteLossError,
    TrainResult,
    config_changes,
    dry_run,
    log_lines,
    train,
)
from paperlib.engine.presets import inherit
from paperlib.engine.run_folder import claim_run_folder
from paperlib.engine.validation import validation_records
from paperlib.processes import stop_with_parent
from paperlib.untrusted import brief, error_text

# set by train_distributed when its caller runs with torch's deterministic algorithms
DETERMINISTIC = "PAPERLIB_DETERMINISTIC"
# the folder holding the paperlib package (what torchrun's processes import it from)
PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def config_from(
    source: str | Path | dict[str, Any], overrides: list[str] | tuple[str, ...] = ()
) -> Config:
    """A validated config from a file or dict.

    A notebook parameter file (``config:`` mapping plus optional ``overrides:`` list) is
    unwrapped; its overrides apply first, then ``overrides``.
    """
    raw = dict(source) if isinstance(source, dict) else read_file(source)
    if not isinstance(source, dict):
        try:
            raw = inherit(Path(source), raw, read_file)  # a preset's base (engine.presets)
        except ValueError as error:
            raise ConfigError(str(error)) from None
    if "config" in raw and isinstance(raw["config"], dict):
        listed = raw.get("overrides") or []
        if not isinstance(listed, list) or not all(isinstance(o, str) for o in listed):
            raise ConfigError(
                f"overrides: expected a list of section.key=value strings, got {brief(listed)}"
            )
        overrides = [*listed, *overrides]
        raw = raw["config"]
    return load_config(raw, overrides)


def train_run(
    source: str | Path | dict[str, Any] | Config, overrides: list[str] | tuple[str, ...] = ()
) -> TrainResult:
    """Train (or resume) from a config; returns :class:`~paperlib.engine.loop.TrainResult`."""
    config = source if isinstance(source, Config) else config_from(source, overrides)
    return train(config, overrides if isinstance(source, Config) else ())


def run_in(
    root: str | Path, config: dict[str, Any], overrides: list[str] | tuple[str, ...] = ()
) -> TrainResult:
    """``train_run`` with ``train.output_dir`` taken relative to ``root`` (the notebooks' repo)."""
    train_section = dict(config.get("train", {}))
    train_section["output_dir"] = str(Path(root) / train_section.get("output_dir", "runs/notebook"))
    return train_run({**config, "train": train_section}, overrides)


def trained_to_end(output_dir: str | Path) -> bool:
    """Whether the training in ``output_dir`` finished: its log's last status is "finished"
    and its ``last.pt`` exists (an interrupted run leaves a checkpoint too)."""
    output = Path(output_dir)
    log = output / "log.jsonl"
    if not (output / "last.pt").is_file() or not log.is_file():
        return False
    status = [r["status"] for r in log_records(log) if "status" in r]
    return bool(status) and status[-1] == "finished"


def trained_with_other_config(output_dir: str | Path, config: dict[str, Any]) -> bool:
    """Whether ``output_dir`` holds a training (its ``config.json``) that ``config`` could not
    resume: one key that changes how it trains differs (``engine.loop.config_changes``:
    reporting periods and the step count may change; a key added since is not compared)."""
    saved = Path(output_dir) / "config.json"
    if not saved.is_file():
        return False
    try:
        return bool(config_changes(json.loads(saved.read_text()), load_config(config)))
    except (ConfigError, ValueError):  # unreadable today: not this run's
        return True


def log_records(path: Path) -> list[dict[str, Any]]:
    """The JSON records of a log file; a line torn by a crash or a full disk is left out."""
    return [record for _, record in log_lines(path.read_text())[1]]


def read_log(output_dir: str | Path) -> list[dict[str, Any]]:
    """The training-step records of ``<output_dir>/log.jsonl``: loss terms, and diagnostics
    (on their own on a ``diag_every`` step that logs no loss); status and validation records
    left out."""
    path = Path(output_dir) / "log.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no training log at {path}")
    return [r for r in log_records(path) if "loss" in r or any(k.startswith("diag/") for k in r)]


def read_validation(output_dir: str | Path) -> list[dict[str, Any]]:
    """The held-out validation records of ``<output_dir>/log.jsonl`` (``engine.validation``),
    by step: ``{"step", "val": {metric: value}, "val_size"}``."""
    path = Path(output_dir) / "log.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no training log at {path}")
    return validation_records(log_records(path))


def train_distributed(config: dict[str, Any], nproc: int, name: str) -> None:
    """Train ``config`` on ``nproc`` local processes with ``torchrun`` (gloo on CPU, one thread
    each); resumes like a single-process run. Raises naming the run when it does not finish."""
    output = Path(config["train"]["output_dir"])
    claim_run_folder(output)  # before launch.json: never into a folder of the user's files
    config_file = output / "launch.json"
    atomic_write_text(config_file, json.dumps(config, indent=1))
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        str(nproc),
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        str(distributed.free_port()),
        "-m",
        "paperlib.train",
        str(config_file),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(PACKAGE_ROOT)}
    if torch.are_deterministic_algorithms_enabled():  # the caller's setting, on every rank
        env[DETERMINISTIC] = "1"
    proc = subprocess.run(
        command, env=env, capture_output=True, text=True, preexec_fn=stop_with_parent
    )
    if proc.returncode != 0 or not trained_to_end(output):
        raise RuntimeError(
            f"{name}: torchrun on {nproc} processes failed (exit {proc.returncode})"
            f":\n{proc.stderr[-2000:]}"
        )


def main(argv: list[str] | None = None) -> int:
    """The command line; its exit statuses are :mod:`paperlib.exit_status`'s: 0 finished, 2
    refused, 3 stopped at a non-finite loss or weight, 4 a write failed, 75 stopped by SIGTERM
    or SIGINT with its checkpoint saved (the same command resumes it)."""
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.train",
        description=__doc__,
        epilog="config keys (section.key=default; METHOD_DEFAULTS of engine.config set each "
        "method's paper values on top):\n" + textwrap.indent(config_keys(), "  "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", type=Path, help="YAML/JSON config file")
    parser.add_argument("overrides", nargs="*", help="section.key=value (value parsed as YAML)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate, build and take one step in memory; write nothing",
    )
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the resolved config (file, base preset, method defaults, overrides) as "
        "YAML and exit",
    )
    args = parser.parse_intermixed_args(argv)
    if threading.current_thread() is threading.main_thread():  # a file-size limit: EFBIG, named
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    if os.environ.get(DETERMINISTIC) == "1":
        torch.use_deterministic_algorithms(True)
    try:
        config = config_from(args.config, args.overrides)
    except ConfigError as err:
        print(f"config error: {error_text(err)}", file=sys.stderr)
        return exit_status.REFUSED
    if args.print_config:
        print(yaml.safe_dump(to_dict(config), sort_keys=False), end="")
        return 0
    try:
        if args.dry_run:
            print(f"[train] dry run: {dry_run(config)[0]}")
            return exit_status.OK
        result = train(config)
        if distributed.is_main():
            print(f"[train] {result.status} at step {result.step}; checkpoint {result.checkpoint}")
    except NonFiniteLossError as err:
        print(f"training stopped: {error_text(err)}", file=sys.stderr)
        return exit_status.NOT_FINITE
    except distributed.DeviceError as err:
        print(f"device error: {error_text(err)}", file=sys.stderr)
        return exit_status.REFUSED
    except WriteError as err:  # a full disk or quota, a file-size limit, an unwritable file
        print(f"training stopped: {err.strerror}", file=sys.stderr)
        return exit_status.STORAGE
    except (ConfigError, ValueError, RuntimeError, OSError) as err:  # named by the engine
        print(f"training refused: {error_text(err)}", file=sys.stderr)
        return exit_status.REFUSED
    finally:
        distributed.cleanup()
    return exit_status.INTERRUPTED if result.status == "interrupted" else exit_status.OK


if __name__ == "__main__":
    sys.exit(main())
