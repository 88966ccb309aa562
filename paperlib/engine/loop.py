"""The training loop, the only stateful place: data -> model -> loss -> AdamW.

- linear warm-up then cosine decay (:class:`WarmupCosine`), a ``LambdaLR``;
- ``train.accum_steps`` > 1 splits the global batch into micro-batches *without* changing the
  loss: features of every micro-batch are computed without gradient, the loss and its
  feature gradients on the whole batch, then each micro-batch is re-encoded with gradient and
  back-propagated with its slice of those gradients (gradient caching). The result equals the
  one-pass gradient; it needs a deterministic forward (no dropout, as in CLIP's defaults);
- bf16 autocast on CUDA, float32 on CPU (``train.precision``), or fp16 autocast with a
  GradScaler (``precision: fp16``, the references' setting); losses always in float32;
  accumulation that would not equal the one-pass step is refused (:func:`check_accumulation`);
- tqdm progress, JSON-lines log ``<output_dir>/log.jsonl`` (loss terms, HiDe m, lr, logit
  scale, rank 0's CPU seconds continued across resumes, aperture diagnostics every
  ``train.diag_every`` steps);
- a non-finite loss raises :class:`NonFiniteLossError` naming the step and the term, before the
  weights change; non-finite parameters raise it naming the parameter before any checkpoint
  is written; SIGTERM or SIGINT (Ctrl-C) saves ``last.pt`` after the current
  step, its status ``interrupted`` recorded in it, and returns cleanly (the train command then
  exits 75);
- resume from ``<output_dir>/last.pt`` (``train.resume``), on the schedule of the config's
  ``train.steps`` (a finished run extended to more steps trains them: :func:`follow_schedule`);
  ``train.keep_checkpoints`` also keeps every periodic checkpoint as ``step<N>.pt`` (for
  metric-against-time curves);
- the output folder holds only what training writes (``engine.run_folder``); unreadable
  training images passed over are counted in the log (``skipped_images``, every rank, across
  resumes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import json
import math
import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from tqdm.auto import tqdm

from paperlib.atomic import atomic_write, atomic_write_text, writing
from paperlib.engine import checkpoint, distributed
from paperlib.engine.config import Config, ConfigError, load_config, save_config, to_dict
from paperlib.engine.data import build_dataset, build_loader, per_rank_batch
from paperlib.engine.methods import LossResult, build_module, check_stored_weights, input_size
from paperlib.engine.precision import autocast_context
from paperlib.engine.reporting import RunLog, check_backends, open_reporters
from paperlib.engine.run_folder import check_run_folder, claim_run_folder, orphaned_temporaries
from paperlib.engine.validation import build_validation
from paperlib.tensor_checks import NonFiniteInputError


class NonFiniteLossError(FloatingPointError):
    """The loss became NaN or infinite; the message names the step and the term."""


@dataclass
class TrainResult:
    """What :func:`train` returns: where the run lives, how far it got, what it logged."""

    output_dir: Path
    step: int
    status: str  # "finished" or "interrupted"
    checkpoint: Path | None
    history: list[dict[str, Any]] = field(default_factory=list)
    skipped_images: int = 0  # unreadable images passed over, over every rank and resume


class WarmupCosine:
    """LR factor: ``(s+1)/warmup`` for s < warmup, then cosine from 1 to ``min_ratio`` at ``total``."""

    def __init__(self, warmup: int, total: int, min_ratio: float = 0.0) -> None:
        self.warmup, self.total, self.min_ratio = warmup, total, min_ratio

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return (step + 1) / self.warmup
        span = max(1, self.total - self.warmup)
        progress = min(1.0, (step - self.warmup) / span)
        return self.min_ratio + (1 - self.min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


class _StopFlag:
    """Set by SIGTERM or SIGINT (Ctrl-C): the loop finishes its step, saves ``last.pt`` and
    returns. Installed only in the main thread; the previous handlers come back afterwards."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self) -> None:
        self.set = False
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _StopFlag:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._handle) for sig in self.SIGNALS}
        return self

    def _handle(self, signum, frame) -> None:
        self.set = True

    def __exit__(self, *exc) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def attach_grad_scaler(module: nn.Module, precision: str, device: torch.device) -> None:
    """Give ``module`` a ``grad_scaler``: a ``torch.amp.GradScaler`` for ``train.precision:
    fp16`` (as MERU's and HyCoCLIP's training scripts use with fp16 autocast), else None.
    :func:`backward_step` scales the loss with it and :func:`apply_update` unscales, skips a
    step whose gradients overflowed and updates the scale; checkpoints keep its state."""
    scaler = torch.amp.GradScaler(device.type) if precision == "fp16" else None
    module.__dict__["grad_scaler"] = scaler  # plain state, not a parameter or sub-module


def grad_scaler(module: nn.Module):
    """The module's loss scaler (:func:`attach_grad_scaler`), or None."""
    return module.__dict__.get("grad_scaler")


def batchnorm_layers(module: nn.Module) -> list[str]:
    """Names of the BatchNorm layers of ``module`` (e.g. the ResNet towers of paper-tiny-rn)."""
    return [
        name for name, m in module.named_modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)
    ]


def check_accumulation(module: nn.Module, config: Config, world_size: int) -> None:
    """Refuse gradient accumulation that would not equal the one-pass step: a per-rank batch
    that ``train.accum_steps`` does not divide (rows would be dropped), and a model with
    BatchNorm (each micro-batch would be normalised with its own statistics, and the running
    statistics updated twice, so the cached-feature step is another step)."""
    t = config.train
    if t.accum_steps == 1:
        return
    local = t.batch_size // world_size
    if local % t.accum_steps:
        raise ConfigError(
            f"train.accum_steps={t.accum_steps} does not divide the per-rank batch "
            f"train.batch_size / world size = {t.batch_size} / {world_size} = {local}"
        )
    norms = batchnorm_layers(module)
    if norms:
        raise ConfigError(
            f"train.accum_steps={t.accum_steps}: model.name={config.model.name!r} has BatchNorm "
            f"layers ({', '.join(norms[:2])}, ...), whose micro-batch statistics make the "
            "accumulated step differ from the one-pass step; use train.accum_steps=1 (more "
            "GPUs or a smaller train.batch_size) for this model"
        )


def reduce_terms(out: LossResult) -> dict[str, float]:
    """``total`` and every term, averaged over ranks (one all-reduce).

    Terms computed on the gathered global batch are equal on every rank; per-rank terms
    (e.g. the entailment means of ``losses.entailment``) average to the global-batch mean, so
    the logged curve is the single-process one.
    """
    names = ["total", *out.terms]
    values = torch.stack(
        [out.total.detach().float(), *[v.detach().float() for v in out.terms.values()]]
    )
    return dict(zip(names, distributed.mean_across_ranks(values).tolist()))


def check_finite(out: LossResult, step: int) -> dict[str, float]:
    """The rank-averaged terms; raises :class:`NonFiniteLossError` naming the step (1-based)
    and the first non-finite term (every rank raises: the values are all-reduced)."""
    values = reduce_terms(out)
    if math.isfinite(values["total"]):
        return values
    bad = [name for name, value in values.items() if name != "total" and not math.isfinite(value)]
    term = bad[0] if bad else "total"
    raise NonFiniteLossError(
        f"loss is not finite at step {step}: term {term!r} = {values[term]} (all terms: "
        + ", ".join(f"{k}={v:.4g}" for k, v in values.items())
        + "); stopping before the weights are updated"
    )


def check_parameters(module: nn.Module, step: int) -> None:
    """Before a checkpoint is written: raise :class:`NonFiniteLossError` naming the step and
    the first parameter that holds a NaN or inf (one fused norm over all parameters, one device
    sync; between checkpoints the next step's loss check stops a poisoned run)."""
    named = [(name, p) for name, p in module.named_parameters()]
    norms = torch._foreach_norm([p.detach() for _, p in named])
    finite = torch.isfinite(torch.stack(norms))
    if bool(finite.all()):
        return
    name = named[int((~finite).nonzero()[0])][0]
    raise NonFiniteLossError(
        f"parameter {name!r} is not finite after the update of step {step}; stopping before "
        "any checkpoint is written (the last checkpoint holds finite weights: lower optim.lr?)"
    )


def _compute_loss(module: nn.Module, features: dict[str, Tensor], step: int) -> LossResult:
    """``module.compute_loss``; a decomposition that fails on non-finite features (HiDe's
    eigendecomposition) or a loss that names its non-finite inputs becomes
    :class:`NonFiniteLossError` naming the step."""
    try:
        return module.compute_loss(features)
    except NonFiniteInputError as error:
        raise NonFiniteLossError(
            f"loss is not finite at step {step}: {error}; stopping before the weights are updated"
        ) from error
    except torch.linalg.LinAlgError as error:
        bad = [k for k, v in features.items() if not bool(torch.isfinite(v).all())]
        if not bad:
            raise
        raise NonFiniteLossError(
            f"features {bad} are not finite at step {step} (the loss's decomposition failed: "
            f"{error}); stopping before the weights are updated"
        ) from error


def _to_device(batch: dict[str, Tensor], device: torch.device) -> dict[str, Tensor]:
    return {k: v.to(device, non_blocking=True) for k, v in batch.items()}


def _float(features: dict[str, Tensor]) -> dict[str, Tensor]:
    return {k: v.float() for k, v in features.items()}


def backward_step(
    model: nn.Module,
    module: nn.Module,
    batch: dict[str, Tensor],
    *,
    accum_steps: int,
    amp,
    step: int,
) -> tuple[LossResult, dict[str, float], dict[str, Tensor]]:
    """Forward + loss + backward for one global step.

    Returns the loss, its rank-averaged float terms (:func:`check_finite`) and the detached
    features.

    ``model`` is what runs the forward (the DDP wrapper or ``module`` itself). With
    ``accum_steps`` > 1 the gradient is accumulated by gradient caching (module docstring)
    without DDP hooks; the caller then averages gradients across ranks.
    """
    scaler = grad_scaler(module)
    scaled = (lambda loss: scaler.scale(loss)) if scaler is not None else (lambda loss: loss)
    if accum_steps == 1:
        with amp:
            features = model(batch)
        out = _compute_loss(module, _float(features), step)
        values = check_finite(out, step)
        scaled(out.total).backward()
        return out, values, {k: v.detach() for k, v in features.items()}
    n = next(iter(batch.values())).shape[0]
    if n % accum_steps:
        raise ConfigError(
            f"train.accum_steps={accum_steps} does not divide this rank's batch of {n} rows"
        )
    size = n // accum_steps
    micro = [
        {k: v[i * size : (i + 1) * size] for k, v in batch.items()} for i in range(accum_steps)
    ]
    with torch.no_grad(), amp:
        cached = [module(mb) for mb in micro]
    full = {k: torch.cat([c[k] for c in cached]).float().requires_grad_() for k in cached[0]}
    out = _compute_loss(module, full, step)
    values = check_finite(out, step)
    scaled(out.total).backward()
    for i, mb in enumerate(micro):
        with amp:
            features = module(mb)
        keys = list(features)
        grads = [full[k].grad[i * size : (i + 1) * size] for k in keys]
        torch.autograd.backward([features[k].float() for k in keys], grads)
    return out, values, {k: v.detach() for k, v in full.items()}


def build_optimizer(module: nn.Module, config: Config):
    o = config.optim
    groups = module.param_groups(o.weight_decay, o.decay_logit_scale, o.decay_all)
    optimizer = torch.optim.AdamW(groups, lr=o.lr, betas=o.betas, eps=o.eps)
    schedule = WarmupCosine(o.warmup_steps, config.train.steps, o.min_lr_ratio)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)


# what a resumed run may change: its length, where and how often it reports, the device
RESUMABLE = {
    "train.steps",
    "train.output_dir",
    "train.resume",
    "train.progress",
    "train.log_every",
    "train.diag_every",
    "train.ckpt_every",
    "train.keep_checkpoints",
    "train.report_to",
    "train.val_every",
    "train.val_size",
    "train.val_metrics",
    "train.val_benchmark",
    "train.val_root",
    "data.cache_dir",
    "train.device",
    "data.num_workers",
    "data.root",
}


def config_changes(saved: dict[str, Any], config: Config) -> list[str]:
    """Dotted keys whose value differs between a checkpoint's config and ``config``, except
    :data:`RESUMABLE` ones. A key the checkpoint does not hold (added since) stands for its
    default, the behaviour the code that trained it had: it differs where ``config`` sets
    another value."""
    now = json.loads(json.dumps(to_dict(config)))  # tuples -> lists, as a saved config may hold
    before = json.loads(json.dumps(saved))
    changes = ["method"] if before.get("method") != now["method"] else []
    for section, values in now.items():
        if isinstance(values, dict) and isinstance(before.get(section), dict):
            defaults = json.loads(json.dumps(dataclasses.asdict(type(getattr(config, section))())))
            changes += [
                f"{section}.{key}"
                for key, value in values.items()
                if before[section].get(key, defaults.get(key, value)) != value
            ]
    return [c for c in changes if c not in RESUMABLE]


def _check_resume(saved: dict[str, Any], config: Config, path: Path) -> None:
    """Refuse to resume ``path`` with a config that changes how the run trains."""
    changes = config_changes(saved, config)
    if changes:
        raise ConfigError(
            f"train.output_dir: {path} holds a run whose config differs in {', '.join(changes)}; "
            "resume it with its own config, choose another train.output_dir, or set "
            "train.resume=false on an empty folder"
        )


@contextlib.contextmanager
def claimed_output_dir(out_dir: Path, resume: bool, is_main: bool):
    """Hold ``out_dir`` for one run (rank 0): accept it as a run folder (writable, holding
    nothing training did not write: ``run_folder.claim_run_folder``), take its lock (an
    ``flock`` on ``.lock``, released by the OS if the process dies, so the lock of a dead run
    is taken over; the file holds the holder's pid, which a refusal names), refuse a second run on it
    and ``train.resume=false`` on a folder that already holds a run, and remove temporary files
    an interrupted checkpoint write left behind."""
    if not is_main:
        yield
        return
    claim_run_folder(out_dir)
    try:
        handle = open(out_dir / ".lock", "a+")  # held until the run ends
    except OSError as error:
        raise ConfigError(f"train.output_dir: cannot write to {out_dir} ({error})") from error
    try:
        _take_lock(handle, out_dir)
        if not resume and any((out_dir / n).exists() for n in (checkpoint.LAST, "log.jsonl")):
            raise ConfigError(
                f"train.output_dir: {out_dir} already holds a run; with "
                "train.resume=false choose an empty folder or delete it"
            )
        for orphan in orphaned_temporaries(out_dir):
            orphan.unlink()
        yield
    finally:
        handle.close()  # releases the lock


def _take_lock(handle, out_dir: Path) -> None:
    """``flock`` the open ``.lock`` file and write this process's pid into it; RuntimeError
    naming the folder and the holder's pid when another live process holds it."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read(40).strip()
        shown = f"process {holder}" if holder.isdigit() else "another process"
        raise RuntimeError(
            f"train.output_dir: {out_dir} is in use by another run (its .lock is held by "
            f"{shown}); wait for it or choose another folder"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()


def log_lines(text: str) -> tuple[list[str], list[tuple[str, dict[str, Any]]]]:
    """The non-empty lines of a log and those that parse as JSON records; a line that does
    not (a record torn by a crash or a full disk mid-write) is left out of the second list."""
    lines = [line for line in text.splitlines() if line.strip()]
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append((line, record))
    return lines, records


def trim_log(path: Path, step: int) -> None:
    """Cut the log back to the records at or before ``step`` (a resumed run logs the steps
    after its checkpoint again) and drop torn records; written atomically."""
    if not path.is_file():
        return
    text = path.read_text()
    lines, records = log_lines(text)
    kept = [line for line, record in records if record.get("step", 0) <= step]
    if len(kept) != len(lines) or (text and not text.endswith("\n")):
        atomic_write_text(path, "".join(f"{line}\n" for line in kept))


def logged_value(path: Path, step: int, key: str) -> float:
    """The value of ``key`` the log at ``path`` records at ``step`` (the last record at or
    before it; 0 without one): where a resumed run's running totals continue from."""
    if step == 0 or not path.is_file():
        return 0.0
    value = 0.0
    for _, record in log_lines(path.read_text())[1]:
        if key in record and record.get("step", step + 1) <= step:
            value = float(record[key])
    return value


def logged_cpu_seconds(path: Path, step: int) -> float:
    """The training CPU seconds of rank 0 at ``step`` (:func:`logged_value`)."""
    return logged_value(path, step, "cpu_seconds")


def skipped_images(loader) -> dict[str, int]:
    """``{"skipped_images": n}``: the unreadable images every rank's loader passed over (a
    collective call), or ``{}`` when there were none (logs of readable data stay as they
    were)."""
    total = sum(distributed.all_gather_objects(getattr(loader, "total", 0)))
    return {"skipped_images": total} if total else {}


class JsonlLog:
    """Append-only JSON-lines log (written by rank 0 only)."""

    def __init__(self, path: Path, enabled: bool) -> None:
        self.path, self.enabled = path, enabled
        if enabled:
            path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record: dict[str, Any]) -> None:
        if self.enabled:
            with writing(self.path), open(self.path, "a") as handle:
                handle.write(json.dumps(record) + "\n")


def train(
    config: Config | str | Path | dict, overrides: list[str] | tuple[str, ...] = ()
) -> TrainResult:
    """Run (or resume) training as configured; see the module docstring. Every check is made
    before the output folder is claimed: the folder's own (writable, a run's files only,
    ``run_folder.check_run_folder``), then those that need the model (:func:`_build`); then
    the folder is held for the run (:func:`claimed_output_dir`)."""
    if not isinstance(config, Config):
        config = load_config(config, overrides)
    elif overrides:
        config = load_config(to_dict(config), overrides)
    info = distributed.init_distributed(config.train.device)
    if info.is_main:  # the cheap checks of the folder first, leaving nothing behind
        check_run_folder(Path(config.train.output_dir))
    built = _build(config, info)
    with claimed_output_dir(Path(config.train.output_dir), config.train.resume, info.is_main):
        return _train(config, info, built)


def check_world_size(config: Config, world_size: int) -> None:
    """Refuse a global batch the processes cannot share: ``train.batch_size`` that the world
    size does not divide, or a per-rank batch that splits ``data.twins``' pairs (the per-rank
    accumulation: :func:`check_accumulation`)."""
    t = config.train
    try:
        local = per_rank_batch(t.batch_size, world_size)
    except ValueError as error:
        raise ConfigError(f"{error} (the number of processes torchrun started)") from None
    if config.data.twins and local % 2:
        raise ConfigError(
            f"data.twins: the per-rank batch train.batch_size / world size = {local} splits "
            "the twin pairs; expected an even per-rank batch"
        )


@dataclass
class _Built:
    """The run's model and optimiser, built before its folder is claimed."""

    module: Any
    preprocess: Any
    tokenizer: Any
    optimizer: Any
    scheduler: Any


def _build(config: Config, info: distributed.DistInfo) -> _Built:
    """Make every check of the run that does not read its folder (the world size, the
    reporting backends, the model's start and accumulation), seed, and build the module and
    optimiser."""
    t = config.train
    check_world_size(config, info.world_size)
    if info.is_main:
        try:
            check_backends(t.report_to)
        except ValueError as error:
            raise ConfigError(str(error)) from None
    seed_everything(t.seed)
    module, preprocess, tokenizer = build_module(config, info.device)
    check_accumulation(module, config, info.world_size)
    attach_grad_scaler(module, t.precision, info.device)
    optimizer, scheduler = build_optimizer(module, config)
    return _Built(module, preprocess, tokenizer, optimizer, scheduler)


def _resume_step(config: Config, info: distributed.DistInfo, module, optimizer, scheduler) -> int:
    """The step to start from: 0 for a new run, else the checkpoint's, with the module,
    optimiser and scheduler restored (a changed config is refused first)."""
    last = checkpoint.latest(Path(config.train.output_dir)) if config.train.resume else None
    if last is None:
        return 0
    state = checkpoint.load_checkpoint(last, map_location=info.device)
    _check_resume(state["config"], config, last)
    checkpoint.checked_step(state, config.train.steps, last)
    if isinstance(state["model"], dict):  # else restore names what it holds
        check_stored_weights(module, state["model"], str(last), config.optim.clamp_logit_scale)
    scaler = grad_scaler(module)
    if scaler is not None and "grad_scaler" in state:
        scaler.load_state_dict(state["grad_scaler"])
    step = checkpoint.restore(
        state, model=module, optimizer=optimizer, scheduler=scheduler, rank=info.rank, source=last
    )
    follow_schedule(optimizer, scheduler)
    return step


def follow_schedule(optimizer, scheduler) -> None:
    """Set each parameter group's learning rate to the schedule's value at the restored step.

    The optimiser's saved state holds the rate of the schedule the run was saved with; a run
    extended to more ``train.steps`` must go on with the new schedule (the old one ends at
    ``min_lr_ratio · lr``, 0 by default). Same formula as ``LambdaLR``, so a plain resume
    keeps the exact rate.
    """
    for group, base, factor in zip(
        optimizer.param_groups, scheduler.base_lrs, scheduler.lr_lambdas
    ):
        group["lr"] = base * factor(scheduler.last_epoch)


def _save(
    config: Config,
    info: distributed.DistInfo,
    module,
    optimizer,
    scheduler,
    step: int,
    status: str = "running",
) -> Path | None:
    """Check the parameters are finite, then write ``last.pt`` (rank 0; every rank's RNG),
    recording the run's ``status`` at ``step`` (``checkpoint.TRAINING_STATUSES``)."""
    check_parameters(module, step)
    rngs = distributed.all_gather_objects(checkpoint.rng_state())
    path = None
    if info.is_main:
        path = checkpoint.save_checkpoint(
            Path(config.train.output_dir) / checkpoint.LAST,
            model=module,
            optimizer=optimizer,
            scheduler=scheduler,
            step=step,
            rng_states=rngs,
            config=to_dict(config),
            grad_scaler=None if grad_scaler(module) is None else grad_scaler(module).state_dict(),
            status=status,
        )
    distributed.barrier()
    return path


def _record(
    step: int, lr: float, values: dict[str, float], out, module, speed: float, cpu_seconds: float
) -> dict[str, Any]:
    """One ``log.jsonl`` record: loss terms, HiDe/Long-CLIP stats, scalars, speed."""
    return {
        "step": step,
        "lr": lr,
        "loss": values["total"],
        **{k: v for k, v in values.items() if k != "total"},
        **out.stats,
        **module.scalars(),
        "samples_per_s": speed,
        "cpu_seconds": cpu_seconds,  # rank 0, across resumes
    }


@dataclass
class _Prepared:
    """What the loop needs, built and restored: the module (and its DDP wrapper), the
    optimiser, the scheduler, the loader from the resume step, and that step."""

    module: Any
    model: Any
    optimizer: Any
    scheduler: Any
    loader: Any
    start: int
    validation: Any  # engine.validation.Validation, or None


def _prepare(config: Config, info: distributed.DistInfo, built: _Built) -> _Prepared:
    """Restore a checkpoint into the built module, write the config and cut the log back to
    the resume step, then the data from that step."""
    t, out_dir = config.train, Path(config.train.output_dir)
    module, preprocess, tokenizer = built.module, built.preprocess, built.tokenizer
    optimizer, scheduler = built.optimizer, built.scheduler
    fresh = not (t.resume and checkpoint.latest(out_dir) is not None)
    start = _resume_step(config, info, module, optimizer, scheduler)
    if info.is_main:
        save_config(config, out_dir / "config.json")
        trim_log(out_dir / "log.jsonl", start)
    dataset = build_dataset(
        config.data, preprocess, image_size=input_size(module), world_size=info.world_size
    )
    if fresh:  # before DDP's wrap, which gives every rank rank 0's values
        calibrate_alpha(module, config, dataset, tokenizer)
    model = distributed.wrap_ddp(module, info, t.find_unused_parameters)
    loader = build_loader(
        config, dataset, tokenizer, rank=info.rank, world_size=info.world_size, start_step=start
    )
    validation = None
    if info.is_main:  # the world's or real held-out sets (engine.validation)
        validation = build_validation(config, input_size(module), preprocess, tokenizer)
    if info.is_main:  # the logged total is every rank's: it continues on rank 0 alone
        loader.total = int(logged_value(out_dir / "log.jsonl", start, "skipped_images"))
    return _Prepared(module, model, optimizer, scheduler, loader, start, validation)


def calibrate_alpha(module: nn.Module, config: Config, dataset: Any, tokenizer: Any) -> None:
    """``model.alpha_rule: feature-norm``: set α from the first global batch, read as one
    process would (``HyperbolicCLIP.calibrate_alpha_``). Other rules leave ``module`` as
    built."""
    if not (config.hyperbolic and config.model.alpha_rule == "feature-norm"):
        return
    one_step = replace(config, train=replace(config.train, steps=1))  # a 0-step run too
    loader = build_loader(one_step, dataset, tokenizer, rank=0, world_size=1, start_step=0)
    batch = _to_device(next(iter(loader)), next(module.parameters()).device)
    module.model.calibrate_alpha_(batch["image"], batch["text"], config.model.alpha_norm)


def _validate(run: _Prepared, config: Config, step: int) -> dict[str, Any]:
    """The validation record of ``step`` (``engine.validation``)."""
    return run.validation.record(run.module, step)


def _train(config: Config, info: distributed.DistInfo, built: _Built) -> TrainResult:
    """:func:`_loop` over :func:`_prepare`'s run, its log open throughout (the live views of
    ``train.report_to`` are closed however the loop ends)."""
    t, out_dir = config.train, Path(config.train.output_dir)
    run = _prepare(config, info, built)
    reporters = open_reporters(t.report_to, out_dir, to_dict(config), info.is_main, run.start)
    log = RunLog(JsonlLog(out_dir / "log.jsonl", info.is_main), reporters)
    try:
        return _loop(config, info, run, log)
    finally:
        log.close()


def _loop(config: Config, info: distributed.DistInfo, run: _Prepared, log: RunLog) -> TrainResult:
    """The loop (the one place with state)."""
    t, out_dir = config.train, Path(config.train.output_dir)
    module, optimizer, scheduler, start = run.module, run.optimizer, run.scheduler, run.start
    amp = autocast_context(t.precision, info.device)
    history: list[dict[str, Any]] = []
    status, step, progress = "finished", start, _progress(t, start, info.is_main)
    module.train()
    tick, seen = time.perf_counter(), 0
    cpu_start = time.process_time() - logged_cpu_seconds(out_dir / "log.jsonl", start)
    save = functools.partial(_save, config, info, module, optimizer, scheduler)
    if run.validation is not None and start == 0:
        log.write(_validate(run, config, 0))
    with _StopFlag() as stop:
        for batch in run.loader:
            if step >= t.steps:
                break
            optimizer.zero_grad(set_to_none=True)
            batch = _to_device(batch, info.device)
            out, values, features = backward_step(
                run.model, module, batch, accum_steps=t.accum_steps, amp=amp, step=step + 1
            )
            lr = apply_update(module, optimizer, scheduler, config)
            step, seen = step + 1, seen + t.batch_size
            progress.update(1)
            if step % t.log_every == 0 or step == t.steps:
                now = time.perf_counter()
                speed, cpu = seen / max(now - tick, 1e-9), time.process_time() - cpu_start
                record = {
                    **_record(step, lr, values, out, module, speed, cpu),
                    **skipped_images(run.loader),
                }
                if step % t.diag_every == 0:
                    record.update(module.diagnostics(features))
                tick, seen = now, 0
                history.append(record)
                log.write(record)
                progress.set_postfix(loss=f"{record['loss']:.4f}")
            elif step % t.diag_every == 0 and (diagnostics := module.diagnostics(features)):
                history.append({"step": step, **diagnostics})  # not a logging step
                log.write(history[-1])
            if run.validation is not None and (step % t.val_every == 0 or step == t.steps):
                log.write(_validate(run, config, step))
            if step % t.ckpt_every == 0 and step < t.steps:
                path = save(step)
                if t.keep_checkpoints and path is not None:
                    keep_snapshot(path, out_dir / f"step{step}.pt")
            if distributed.any_true(stop.set, info.device):
                status = "interrupted"
                break
    progress.close()
    path, skipped = save(step, status), skipped_images(run.loader)
    log.write({"step": step, "status": status, **skipped})
    if info.is_main and status == "interrupted":
        print(f"[train] SIGTERM/SIGINT: stopped after step {step}; checkpoint {path}", flush=True)
    return TrainResult(out_dir, step, status, path, history, skipped.get("skipped_images", 0))


def keep_snapshot(last: Path, snapshot: Path) -> None:
    """Keep ``last`` as ``snapshot``: a hard link (``last.pt`` is only ever replaced, never
    written in place, so the link keeps this step's file), else an atomic copy."""
    try:
        os.link(last, snapshot)
    except OSError:
        atomic_write(snapshot, lambda handle: handle.write(last.read_bytes()))


def apply_update(module: nn.Module, optimizer, scheduler, config: Config) -> float:
    """After a step's backward: average accumulated gradients across ranks (the micro-steps
    ran under ``no_sync``), clip to ``optim.max_grad_norm``, step optimiser and schedule, let
    the module clamp its scalars. Returns the learning rate the step used."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    if config.train.accum_steps > 1:
        distributed.average_gradients(params)
    scaler = grad_scaler(module)
    if scaler is not None:
        scaler.unscale_(optimizer)  # true gradients before clipping (fp16 loss scaling)
    if config.optim.max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(params, config.optim.max_grad_norm)
    lr = optimizer.param_groups[0]["lr"]
    if scaler is not None:
        scaler.step(optimizer)  # skipped when a gradient overflowed
        scaler.update()
    else:
        optimizer.step()
    scheduler.step()
    module.after_step(config.optim.clamp_logit_scale)
    return lr


def dry_run(config: Config, steps: int = 1) -> list[dict[str, float]]:
    """Build the model, optimiser and data of ``config`` and take ``steps`` steps in memory
    (no checkpoint, no log, no distributed set-up); returns the loss terms per step.

    Use it to validate a preset before launching it (``python -m paperlib.train --dry-run``).
    """
    t = config.train
    device = distributed.pick_device(t.device)
    seed_everything(t.seed)
    module, preprocess, tokenizer = build_module(config, device)
    check_accumulation(module, config, 1)
    attach_grad_scaler(module, t.precision, device)
    optimizer, scheduler = build_optimizer(module, config)
    dataset = build_dataset(config.data, preprocess, image_size=input_size(module))
    calibrate_alpha(module, config, dataset, tokenizer)
    loader = build_loader(config, dataset, tokenizer, rank=0, world_size=1, start_step=0)
    amp = autocast_context(t.precision, device)
    out = []
    for step, batch in zip(range(steps), loader):
        optimizer.zero_grad(set_to_none=True)
        _, values, _ = backward_step(
            module,
            module,
            _to_device(batch, device),
            accum_steps=t.accum_steps,
            amp=amp,
            step=step + 1,
        )
        apply_update(module, optimizer, scheduler, config)
        out.append(values)
    return out


def _progress(t, start: int, main: bool):
    return tqdm(total=t.steps, initial=start, disable=not (t.progress and main), desc="train")
