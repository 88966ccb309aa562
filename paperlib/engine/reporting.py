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
distinct backends (:func:`check_report_to`); a backend whose package is absent, or ``wandb``
set to upload (``WANDB_MODE=online``) without an API key, is refused by name before the run's
folder is claimed (:func:`check_backends`), and one that fails to open is refused by name
before the first step, so a checkpoint that names one still loads for evaluation without it.
A backend only mirrors the log: one that fails during the run (a full or unwritable folder, a
lost connection) is turned off with one :class:`ReportingWarning` naming it, and training goes
on. Only rank 0 reports, and the backends are closed however the run ends.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import netrc
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlparse

from paperlib.untrusted import error_text

SKIPPED_FIELDS = ("step", "status", "val_size")  # the x axis and bookkeeping, not curves
REPORT_FOLDERS = ("tensorboard", "wandb")  # what the backends write in the run folder
WANDB_MODES = ("offline", "online", "disabled", "dryrun", "run")  # what wandb.init accepts


class ReportingWarning(RuntimeWarning):
    """A reporting backend failed during a run and was turned off; ``log.jsonl`` goes on."""


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

    name = "tensorboard"

    def __init__(self, output_dir: Path, config: dict[str, Any], start: int = 0) -> None:
        from torch.utils.tensorboard import SummaryWriter

        folder = str(output_dir / REPORT_FOLDERS[0])
        # events past the checkpoint's step are logged again by the resumed run
        self.writer = SummaryWriter(log_dir=folder, purge_step=start + 1 if start else None)
        self._hook = threading.excepthook
        threading.excepthook = self._quiet_writer_thread

    def _quiet_writer_thread(self, args) -> None:
        """TensorBoard writes from a thread of its own, which raises a failed write again on
        the next call from the run (where :class:`RunLog` turns the backend off); its own
        traceback is not printed."""
        if type(args.thread).__name__ != "_AsyncWriterThread":
            self._hook(args)

    def scalars(self, step: int, values: dict[str, float]) -> None:
        for tag, value in values.items():
            self.writer.add_scalar(tag, value, global_step=step)

    def close(self) -> None:
        try:
            self.writer.close()
        finally:
            threading.excepthook = self._hook


class WandbReporter:
    """A Weights & Biases run, offline unless ``WANDB_MODE`` is set, under
    ``<output_dir>/wandb``, with the run's config."""

    name = "wandb"

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


def wandb_key_found() -> bool:
    """Whether an API key for Weights & Biases is at hand: ``WANDB_API_KEY``, or the netrc
    entry ``wandb login`` writes for its host (``WANDB_BASE_URL``, default api.wandb.ai)."""
    if os.environ.get("WANDB_API_KEY"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")).hostname or ""
    try:
        return netrc.netrc().authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


def check_backends(names: Sequence[str]) -> None:
    """Everything a run can check of its backends before it starts: known, distinct,
    installed (:func:`check_installed`), and ``wandb``'s mode one it accepts, with a key to
    upload when it is ``online``; ValueError naming the backend and what it needs."""
    check_report_to(names)
    check_installed(names)
    if "wandb" not in names:
        return
    mode = os.environ.get("WANDB_MODE", "offline")
    if mode not in WANDB_MODES:
        raise ValueError(
            f"train.report_to: wandb: WANDB_MODE={mode!r}; expected one of {WANDB_MODES}"
        )
    if mode in ("online", "run") and not wandb_key_found():
        raise ValueError(
            f"train.report_to: wandb with WANDB_MODE={mode} uploads the run, and no API key is "
            "set (WANDB_API_KEY, or `wandb login`); set one, or WANDB_MODE=offline to keep "
            "the run in <output_dir>/wandb"
        )


class RunLog:
    """``log.jsonl`` (``write``: one JSON line per record) and the configured backends, which
    receive each record's scalars (rank 0 only). A backend that fails is turned off with one
    :class:`ReportingWarning` naming it; the log goes on."""

    def __init__(self, jsonl: Any, reporters: Sequence[Reporter] = ()) -> None:
        self.jsonl, self.reporters = jsonl, list(reporters)

    def write(self, record: dict[str, Any]) -> None:
        self.jsonl.write(record)
        values = record_scalars(record)
        if values and "step" in record:
            for reporter in list(self.reporters):
                self._call(reporter, lambda r: r.scalars(int(record["step"]), values))

    def close(self) -> None:
        for reporter in list(self.reporters):
            self._call(reporter, lambda r: r.close(), closing=True)
        self.reporters = []

    def _call(
        self, reporter: Reporter, action: Callable[[Reporter], None], closing: bool = False
    ) -> None:
        """``action(reporter)``; a failure turns the backend off (:class:`RunLog`)."""
        try:
            action(reporter)
        except Exception as error:  # noqa: BLE001 - a mirror of the log never stops the run
            self.reporters.remove(reporter)
            name = getattr(reporter, "name", type(reporter).__name__)
            warnings.warn(
                f"train.report_to: the {name!r} backend failed ({error_text(error, 300)}); it "
                "is turned off for the rest of this run, whose log.jsonl keeps every record",
                ReportingWarning,
                stacklevel=3,
            )
            if not closing:
                with contextlib.suppress(Exception):
                    reporter.close()


def open_reporters(
    names: Sequence[str], output_dir: Path, config: dict[str, Any], is_main: bool, start: int = 0
) -> list[Reporter]:
    """The backends of ``train.report_to`` for this process (none off rank 0), from step
    ``start``; one that fails to open is refused naming it, and those already open are
    closed."""
    if not is_main:
        return []
    check_backends(names)
    opened: list[Reporter] = []
    for name in names:
        try:
            opened.append(REPORTERS[name][0](output_dir, config, start))
        except BaseException as error:
            for reporter in opened:
                reporter.close()
            if not isinstance(error, Exception):
                raise
            raise ValueError(
                f"train.report_to: the {name!r} backend could not be opened in {output_dir} "
                f"({error_text(error, 300)}); fix it or leave {name!r} out of train.report_to"
            ) from error
    return opened
