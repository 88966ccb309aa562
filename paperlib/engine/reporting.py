"""Live views of a run: every ``log.jsonl`` record mirrored to TensorBoard or Weights & Biases.

``train.report_to`` names the backends (:data:`REPORTERS`), as open_clip's ``--report-to``
does. ``log.jsonl`` stays the run's record; a backend receives the same numbers:

- a training record's numeric fields (loss terms, lr, logit scale, HiDe's component count,
  hyperbolic norms and curvature, speed) as ``train/<field>`` at its step;
- a validation record (``{"step", "val": {metric: value}}``) as ``val/<metric>``;
- the closing record (``status``) and text fields are not scalars and stay in the log only.

``wandb`` runs offline unless ``WANDB_MODE`` says otherwise, so nothing leaves the machine
unless the user configures it; its files go to ``<output_dir>/wandb`` (a resumed run is a new
wandb run from its resume step). TensorBoard's event files go to ``<output_dir>/tensorboard``;
a resumed run drops the events past its checkpoint's step, which it logs again. Both packages
are the ``tracking`` extra (``pip install -e ".[tracking]"``). The config accepts only known,
distinct backends (:func:`check_report_to`); a backend whose package is absent is refused by
name when the run opens it (:func:`open_reporters`), so a checkpoint that names one still loads
for evaluation without it. Only rank 0 reports, and the backends are closed however the run
ends.
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

SKIPPED_FIELDS = ("step", "status", "val_size")  # the x axis and bookkeeping, not curves
REPORT_FOLDERS = ("tensorboard", "wandb")  # what the backends write in the run folder


class Reporter(Protocol):
    def scalars(self, step: int, values: dict[str, float]) -> None: ...

    def close(self) -> None: ...


def record_scalars(record: dict[str, Any]) -> dict[str, float]:
    """The scalars a backend receives for one ``log.jsonl`` record (module docstring)."""
    if "val" in record:
        return {f"val/{k}": float(v) for k, v in record["val"].items() if _number(v)}
    return {
        f"train/{k}": float(v) for k, v in record.items() if k not in SKIPPED_FIELDS and _number(v)
    }


def _number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


class TensorBoardReporter:
    """Event files under ``<output_dir>/tensorboard`` (torch's own ``SummaryWriter``); from a
    resume step, the events past it are dropped."""

    def __init__(self, output_dir: Path, config: dict[str, Any], start: int = 0) -> None:
        from torch.utils.tensorboard import SummaryWriter

        folder = str(output_dir / REPORT_FOLDERS[0])
        # events past the checkpoint's step are logged again by the resumed run
        self.writer = SummaryWriter(log_dir=folder, purge_step=start + 1 if start else None)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        for tag, value in values.items():
            self.writer.add_scalar(tag, value, global_step=step)

    def close(self) -> None:
        self.writer.close()


class WandbReporter:
    """A Weights & Biases run, offline unless ``WANDB_MODE`` is set, under
    ``<output_dir>/wandb``, with the run's config."""

    def __init__(self, output_dir: Path, config: dict[str, Any], start: int = 0) -> None:
        import wandb

        self.run = wandb.init(
            project=os.environ.get("WANDB_PROJECT", "paperlib"),
            name=output_dir.name,
            dir=str(output_dir),
            mode=os.environ.get("WANDB_MODE", "offline"),
            config=config,
            reinit="create_new",
        )

    def scalars(self, step: int, values: dict[str, float]) -> None:
        self.run.log(values, step=step)

    def close(self) -> None:
        self.run.finish()


# backend name → (its class, the import it needs)
REPORTERS: dict[str, tuple[Callable[[Path, dict[str, Any], int], Reporter], str]] = {
    "tensorboard": (TensorBoardReporter, "tensorboard"),
    "wandb": (WandbReporter, "wandb"),
}


def check_report_to(names: Sequence[str]) -> None:
    """Refuse an unknown backend, or one named twice."""
    for name in names:
        if name not in REPORTERS:
            raise ValueError(
                f"train.report_to: unknown backend {name!r}; expected any of {list(REPORTERS)}"
            )
    if len(set(names)) != len(names):
        raise ValueError(f"train.report_to: a backend is named twice in {list(names)}")


def check_installed(names: Sequence[str]) -> None:
    """Refuse a backend whose package is not installed, naming the package and its extra."""
    for name in names:
        package = REPORTERS[name][1]
        if importlib.util.find_spec(package) is None:
            raise ValueError(
                f"train.report_to: {name!r} needs the package {package!r}, which is not "
                'installed; install the tracking extra: pip install -e ".[tracking]"'
            )


class RunLog:
    """``log.jsonl`` (``write``: one JSON line per record) and the configured backends, which
    receive each record's scalars (rank 0 only)."""

    def __init__(self, jsonl: Any, reporters: Sequence[Reporter] = ()) -> None:
        self.jsonl, self.reporters = jsonl, list(reporters)

    def write(self, record: dict[str, Any]) -> None:
        self.jsonl.write(record)
        values = record_scalars(record)
        if values and "step" in record:
            for reporter in self.reporters:
                reporter.scalars(int(record["step"]), values)

    def close(self) -> None:
        for reporter in self.reporters:
            reporter.close()


def open_reporters(
    names: Sequence[str], output_dir: Path, config: dict[str, Any], is_main: bool, start: int = 0
) -> list[Reporter]:
    """The backends of ``train.report_to`` for this process (none off rank 0), from step
    ``start``; if one fails to open, those already open are closed."""
    if not is_main:
        return []
    check_report_to(names)
    check_installed(names)
    opened: list[Reporter] = []
    try:
        for name in names:
            opened.append(REPORTERS[name][0](output_dir, config, start))
    except BaseException:
        for reporter in opened:
            reporter.close()
        raise
    return opened
