"""Atomic training checkpoints and exact resume (model, optimiser, scheduler, data, RNG).

A checkpoint is one ``torch.save`` dict written to a temporary file and moved into place with
``os.replace`` (atomic on POSIX), so a crash never leaves a half-written ``last.pt``. It holds
the model state, optimiser and scheduler states, the step (the data position: the batch
sampler is a pure function of seed and step), the run's status at that step
(:data:`TRAINING_STATUSES`), every rank's RNG states (torch, CUDA, numpy, python) and the
resolved config. Everything loads with ``weights_only=True``; :func:`training_progress` tells
how far the run that wrote a checkpoint got.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperlib.atomic import atomic_write
from paperlib.state_files import load_tensor_file

LAST = "last.pt"
# a run's status when it wrote a checkpoint: a periodic save, a stop by a signal, the end
TRAINING_STATUSES = ("running", "interrupted", "finished")


def rng_state() -> dict[str, Any]:
    """This process's RNG states as tensors and plain numbers (``weights_only`` loadable)."""
    np_state = np.random.get_state(legacy=False)
    py_version, py_internal, py_gauss = random.getstate()
    state = {
        "torch": torch.get_rng_state(),
        "numpy": {
            "key": torch.from_numpy(np_state["state"]["key"].astype(np.int64)),
            "pos": int(np_state["state"]["pos"]),
            "has_gauss": int(np_state["has_gauss"]),
            "gauss": float(np_state["gauss"]),
        },
        "python": {"version": py_version, "internal": list(py_internal), "gauss": py_gauss},
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned."""
    torch.set_rng_state(state["torch"])
    np_ = state["numpy"]
    np.random.set_state(
        {
            "bit_generator": "MT19937",
            "state": {"key": np_["key"].numpy().astype(np.uint32), "pos": np_["pos"]},
            "has_gauss": np_["has_gauss"],
            "gauss": np_["gauss"],
        }
    )
    py = state["python"]
    random.setstate((py["version"], tuple(py["internal"]), py["gauss"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def atomic_save(obj: Any, path: str | Path) -> Path:
    """``torch.save`` to ``path`` atomically (:func:`paperlib.atomic.atomic_write`)."""
    return atomic_write(path, lambda handle: torch.save(obj, handle))


def save_checkpoint(
    path: str | Path,
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    step: int,
    rng_states: list[dict[str, Any]],
    config: dict[str, Any],
    grad_scaler: dict[str, Any] | None = None,
    status: str = "running",
) -> Path:
    """Write a full training checkpoint atomically; ``rng_states`` is one entry per rank;
    ``grad_scaler`` the fp16 loss scaler's state when the run has one; ``status`` one of
    :data:`TRAINING_STATUSES`."""
    if status not in TRAINING_STATUSES:
        raise ValueError(f"status must be one of {TRAINING_STATUSES}; got {status!r}")
    state = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "step": step,
        "status": status,
        "rng": rng_states,
        "config": config,
    }
    if grad_scaler is not None:
        state["grad_scaler"] = grad_scaler
    return atomic_save(state, path)


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint` (``weights_only=True``)."""
    path = Path(path)
    expected = (
        "expected a training checkpoint written by paperlib's loop (save_checkpoint: "
        "model, optimizer, scheduler, step, rng, config), read with weights_only=True"
    )
    state = load_tensor_file(path, expected, map_location)
    if not isinstance(state, dict):
        raise ValueError(f"{path} holds a {type(state).__name__}; {expected}")
    missing = {"model", "optimizer", "scheduler", "step", "rng", "config"} - set(state)
    if missing:
        raise ValueError(
            f"{path} is not a training checkpoint: missing {sorted(missing)}; {expected}"
        )
    return state


def training_progress(state: dict[str, Any], source: str | Path) -> dict[str, Any]:
    """How far the run that wrote the checkpoint ``state`` got: ``{"step", "steps",
    "status"}`` (``steps``: its ``train.steps``). A checkpoint written before the status was
    recorded is ``finished`` at its last step and ``running`` before it. ValueError naming
    ``source`` and the field for a step, step count or status out of range."""
    config = state.get("config")
    train_section = config.get("train") if isinstance(config, dict) else None
    steps = train_section.get("steps") if isinstance(train_section, dict) else None
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(
            f"{source}: field 'config.train.steps' must be an int >= 0; found {steps!r}"
        )
    step = checked_step(state, steps, source)
    status = state.get("status", "finished" if step == steps else "running")
    if status not in TRAINING_STATUSES:
        raise ValueError(
            f"{source}: field 'status' must be one of {TRAINING_STATUSES}; found {status!r}"
        )
    return {"step": step, "steps": steps, "status": status}


def latest(output_dir: str | Path) -> Path | None:
    """``output_dir/last.pt`` if it exists (the checkpoint a run resumes from)."""
    path = Path(output_dir) / LAST
    return path if path.is_file() else None


def state_dict_mismatch(model: torch.nn.Module, saved: dict[str, Any], shown: int = 3) -> str:
    """How ``saved`` differs from ``model.state_dict()`` in keys and shapes ('' if it fits)."""
    own = model.state_dict()
    parts = []
    for label, keys in (
        ("missing", [k for k in own if k not in saved]),
        ("unexpected", [k for k in saved if k not in own]),
    ):
        if keys:
            parts.append(f"{len(keys)} {label} key(s): {', '.join(keys[:shown])}")
    shapes = [
        f"{k} {tuple(saved[k].shape)} vs {tuple(v.shape)}"
        for k, v in own.items()
        if isinstance(saved.get(k), torch.Tensor) and saved[k].shape != v.shape
    ]
    if shapes:
        parts.append(f"{len(shapes)} shape(s) differ: {'; '.join(shapes[:shown])}")
    dtypes = [
        f"{k} is {saved[k].dtype}, expected floating point"
        for k, v in own.items()
        if v.is_floating_point()
        and isinstance(saved.get(k), torch.Tensor)
        and not saved[k].is_floating_point()
    ]
    if dtypes:
        parts.append(f"{len(dtypes)} tensor(s) not floating point: {'; '.join(dtypes[:shown])}")
    return "; ".join(parts)


def checked_step(state: dict[str, Any], steps: int, source: str | Path) -> int:
    """The checkpoint's ``step``: an int in ``[0, steps]`` (``train.steps``), else ValueError
    naming ``source``, the field, what was expected and what was found."""
    step = state.get("step")
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= steps:
        raise ValueError(
            f"{source}: field 'step' must be an int in [0, train.steps={steps}]; "
            f"found {step!r} ({type(step).__name__})"
        )
    return step


def restore(
    state: dict[str, Any],
    *,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
    rank: int = 0,
    source: str | Path = "the checkpoint",
) -> int:
    """Load model/optimiser/scheduler and this rank's RNG from ``state``; returns the step.

    With a different world size than the saving run, rank ``r`` takes the saved RNG of rank
    ``r mod saved_world`` (the data order does not depend on it: it is a function of the step).
    The scheduler gets back its position (step, base rates), not its schedule: a
    ``LambdaLR``'s callable keeps the caller's (so a run resumed with more ``train.steps``
    follows the longer schedule). A model state that does not fit ``model`` (another architecture) raises ValueError naming
    ``source`` and the first keys or shapes that differ, before anything is loaded.
    """
    mismatch = state_dict_mismatch(model, state["model"])
    if mismatch:
        raise ValueError(
            f"{source} holds weights of another architecture than the model its "
            f"config builds ({mismatch})"
        )
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    position = dict(state["scheduler"])
    if "lr_lambdas" in position:  # None: LambdaLR leaves that callable as the caller built it
        position["lr_lambdas"] = [None] * len(position["lr_lambdas"])
    scheduler.load_state_dict(position)
    rngs = state["rng"]
    set_rng_state(rngs[rank % len(rngs)])
    return int(state["step"])
