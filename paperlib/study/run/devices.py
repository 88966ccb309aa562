"""Where the study's runs train: this machine's CPU cores (the committed results), or a GPU.

The study's design fixes ``train.device: cpu``; ``--device cuda`` (or ``cuda:N``) moves every
single-process run onto that GPU at execution (:func:`on_device`), several at a time
(``--runs-per-device``). The device is an execution choice, not part of a run's design: a
run's ``run.done`` records the planned config and, beside it, the device it trained on
(:func:`device_record`), and a finished run counts whatever device made it (the reproduction
check's tolerance applies to its numbers). The two-rank runs (torchrun) stay on CPU with gloo:
both arms of their comparison are two-rank runs, so both train alike. A device this machine
does not have is refused by name before anything runs (:func:`check_device`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from paperlib.study.plan.design import Run

CPU = "cpu"


class DeviceUnavailableError(RuntimeError):
    """``--device`` names a device this machine does not have; the message says what is
    missing."""


def check_device(device: str) -> None:
    """Refuse a device torch cannot use here, naming what is missing."""
    kind, _, index = device.partition(":")
    if kind == CPU and not index:
        return
    if kind != "cuda" or (index and not index.isdigit()):
        raise ValueError(f"--device: expected cpu, cuda or cuda:N, got {device!r}")
    if not torch.cuda.is_available():
        build = torch.version.cuda or "none: a CPU-only build"
        raise DeviceUnavailableError(
            f"--device {device}: torch {torch.__version__} sees no CUDA device (its CUDA: "
            f"{build}); run on a machine with an NVIDIA GPU and its driver, or use --device cpu"
        )
    count = torch.cuda.device_count()
    if index and int(index) >= count:
        raise DeviceUnavailableError(
            f"--device {device}: this machine has {count} CUDA device(s), cuda:0..cuda:{count - 1}"
        )


def on_device(run: Run, device: str) -> Run:
    """``run`` training on ``device`` (a two-rank run stays on CPU, module docstring)."""
    if device == CPU or run.nproc > 1:
        return run
    train = {**run.config["train"], "device": device}
    return replace(run, config={**run.config, "train": train})


def device_record(device: str) -> dict[str, Any]:
    """What ``run.done`` records of the device a run trained on: its name, and a GPU's model."""
    if device == CPU or not torch.cuda.is_available():
        return {"device": device}
    index = torch.device(device).index or 0
    return {"device": device, "name": torch.cuda.get_device_name(index)}


def without_device(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` without ``train.device`` (what a finished run is compared on)."""
    train = {k: v for k, v in config.get("train", {}).items() if k != "device"}
    return {**config, "train": train}


def concurrent_runs(device: str, runs_per_device: int, workers: int) -> int:
    """How many runs execute at once: ``runs_per_device`` on a GPU, ``workers`` on CPU."""
    if runs_per_device < 1 or workers < 1:
        raise ValueError(
            f"--runs-per-device and --workers must be at least 1, got {runs_per_device}, {workers}"
        )
    return workers if device == CPU else runs_per_device
