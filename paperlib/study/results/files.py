"""The checks every reader of the study's results files makes, one small checker per file kind:
``run.done``, ``items.npz``, ``log.jsonl``, a benchmark's JSON, ``curves.json`` and ``study.json``
(``claims.json``'s reader, :mod:`~paperlib.study.report.decided`, builds on them).

Each field is checked for type, shape, length and range where it is read (a rate lies in
[0, 1], a count is an integer, a seed is an integer the plan holds). A bad value is a
:class:`ResultsFileError` of one line naming the file, the field, what was expected and what
was found; the study's commands turn it into exit status 2.

A shape is a mapping ``{field: kind}``: a kind is a name of :data:`KINDS` (``"rate?"`` may also
be null), a nested shape, or ``[kind]`` (a list of that kind); :class:`Maybe` marks a field a
file may leave out. Fields a shape does not name are not read and not checked.
"""

from __future__ import annotations

import functools
import json
import math
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from paperlib.study.run.collapse import LOSS_TERM
from paperlib.untrusted import brief

STUDIES = ("himo", "argent")


class Maybe:
    """A field a shape names that a file may leave out (the reader's default then holds); when
    present it is checked as ``kind``."""

    def __init__(self, kind: Any):
        self.kind = kind


class ResultsFileError(ValueError):
    """A study results file that cannot be read as the study wrote it; the message names the
    file, the field, what was expected and what was found."""


def refuse(path: Path | str, field: str, expected: str, found: Any) -> ResultsFileError:
    """The error for ``field`` of ``path``: ``<path>: <field>: expected ..., found ...``."""
    shown = found if isinstance(found, str) and found.startswith("<") else brief(found, 80)
    return ResultsFileError(f"{path}: {field}: expected {expected}, found {shown}")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "text": ("a string", lambda v: isinstance(v, str)),
    "flag": ("true or false", lambda v: isinstance(v, bool)),
    "count": ("an integer ≥ 0", lambda v: _int(v) and v >= 0),
    "positive": ("an integer ≥ 1", lambda v: _int(v) and v >= 1),
    "seed": ("an integer seed ≥ 0", lambda v: _int(v) and v >= 0),
    "number": ("a finite number", _number),
    "logged": ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
    "nonnegative": ("a finite number ≥ 0", lambda v: _number(v) and v >= 0),
    "positive_number": ("a finite number > 0", lambda v: _number(v) and v > 0),
    "rate": ("a number in [0, 1]", lambda v: _number(v) and 0 <= v <= 1),
    "study": (f"one of {list(STUDIES)}", lambda v: v in STUDIES),
    "method": (f"one of {sorted(LOSS_TERM)}", lambda v: isinstance(v, str) and v in LOSS_TERM),
    "interval": (
        "a list of two finite numbers, low ≤ high",
        lambda v: isinstance(v, list) and len(v) == 2 and all(map(_number, v)) and v[0] <= v[1],
    ),
    "better": ("'higher' or 'lower'", lambda v: v in ("higher", "lower")),
    "object": ("a JSON object", lambda v: isinstance(v, dict)),
}


def check_value(value: Any, kind: Any, path: Path | str, field: str) -> Any:
    """``value`` checked against ``kind`` (a :data:`KINDS` name, ``name?``, a shape or
    ``[kind]``); returns it."""
    if isinstance(kind, dict):
        return check_shape(value, kind, path, field)
    if isinstance(kind, list):
        if not isinstance(value, list):
            raise refuse(path, field, "a list", value)
        for i, entry in enumerate(value):
            check_value(entry, kind[0], path, f"{field}[{i}]")
        return value
    name, nullable = kind.rstrip("?"), kind.endswith("?")
    expected, accepts = KINDS[name]
    if (value is None and nullable) or (value is not None and accepts(value)):
        return value
    raise refuse(path, field, expected + (" or null" if nullable else ""), value)


def check_shape(data: Any, shape: dict[str, Any], path: Path | str, prefix: str = "") -> Any:
    """``data``, a JSON object holding every field of ``shape`` of its kind; returns it."""
    where = prefix or "the file"
    if not isinstance(data, dict):
        raise refuse(path, where, "a JSON object", data)
    for key, kind in shape.items():
        field = f"{prefix}.{key}" if prefix else key
        if isinstance(kind, Maybe):
            if key in data:
                check_value(data[key], kind.kind, path, field)
            continue
        if key not in data:
            raise refuse(path, field, _described(kind), "<missing>")
        check_value(data[key], kind, path, field)
    return data


def _described(kind: Any) -> str:
    if isinstance(kind, dict):
        return "a JSON object"
    if isinstance(kind, list):
        return "a list"
    return KINDS[kind.rstrip("?")][0]


def read_json(path: Path, shape: dict[str, Any], unreadable: str = "not valid JSON") -> dict:
    """A JSON file of ``shape`` (:func:`check_shape`); missing, unreadable and malformed files
    refused by name (``unreadable``: what a file that does not parse is called)."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ResultsFileError(f"{path}: {unreadable} ({type(error).__name__}: {error})") from None
    return check_shape(data, shape, path)


# --------------------------------------------------------------------------- run.done

RUN_DONE = {
    "run": "text",
    "study": "study",
    "variant": "text",
    "seed": "seed",
    "config": {
        "method": "method",
        "model": Maybe({"name": "text"}),
        "train": {
            "batch_size": "positive",
            "steps": Maybe("count"),
            "val_every": Maybe("count"),
        },
    },
    "evaluated": Maybe("flag"),
    "feature_std": "nonnegative?",
    "collapsed": Maybe("text?"),
    "train_seconds": Maybe("nonnegative"),
    "eval_seconds": Maybe("nonnegative"),
    "provenance": Maybe({"code_hash": Maybe("text?"), "commit": Maybe("text?")}),
}


# what a trained run's record holds besides (its regime)
TRAINED_CONFIG = {"optim": Maybe({"lr": Maybe("positive_number"), "warmup_steps": Maybe("count")})}
# what ``--status`` reads of any record, a recipe run's too: its seconds, its config a mapping
RUN_SECONDS = {
    "train_seconds": Maybe("nonnegative"),
    "eval_seconds": Maybe("nonnegative"),
    "config": Maybe("object"),
}


def read_run_done(path: Path) -> dict[str, Any]:
    """A ``run.done`` record (:data:`RUN_DONE`; a trained run's regime, :data:`TRAINED_CONFIG`),
    its seed the one its folder names (``seed<k>``; a recipe run's folder names its grid point)."""
    record = read_json(path, RUN_DONE, "not a study run record")
    if trained(record):
        check_shape(record["config"], TRAINED_CONFIG, path, "config")
    if record.get("evaluated", True):
        check_value(record["feature_std"], "nonnegative", path, "feature_std")
    if path.parent.name.startswith("seed") and path.parent.name != f"seed{record['seed']}":
        raise refuse(
            path, "seed", f"the seed its folder names ({path.parent.name})", record["seed"]
        )
    return record


def read_run_seconds(path: Path) -> dict[str, Any]:
    """What ``--status`` reads of a ``run.done`` (:data:`RUN_SECONDS`)."""
    return read_json(path, RUN_SECONDS, "not a study run record")


def trained(record: dict[str, Any]) -> bool:
    """Whether a run record trained: ``train.steps`` > 0, or not recorded (references record
    0 steps: they evaluate their start)."""
    return record["config"]["train"].get("steps", 1) > 0


# --------------------------------------------------------------------------- log.jsonl

LOG_FIELDS = {"step": "count", "loss": "logged", "val": "object", "val_size": "positive"}


def validation_kind(metric: str) -> str:
    """A validation metric's kind: a mean norm (``norm_<kind>``, ``engine.validation``) is a
    number ≥ 0, every other metric a rate in [0, 1]."""
    return "nonnegative" if metric.startswith("norm_") else "rate"


def check_log(path: Path, records: list[Any], record: dict[str, Any]) -> list[dict[str, Any]]:
    """A trained run's log records: each an object with a step, its loss terms numbers, its
    validation values rates; at least one loss record with the method's contrastive term and,
    where the run validates (``train.val_every`` > 0), one validation record."""
    term = LOSS_TERM[record["config"]["method"]]
    for i, entry in enumerate(records, 1):
        if not isinstance(entry, dict):
            raise refuse(path, f"record {i}", "a JSON object", entry)
        shape = {k: v for k, v in {**LOG_FIELDS, term: "logged"}.items() if k in entry}
        check_shape(entry, {"step": "count", **shape}, path, f"record {i}")
        for metric, value in entry.get("val", {}).items():
            check_value(value, validation_kind(metric), path, f"record {i}.val.{metric}")
    if not any("loss" in r and term in r for r in records):
        raise refuse(path, f"the {term!r} loss term", "logged training steps", "<none logged>")
    if record["config"]["train"].get("val_every", 0) > 0 and not any("val" in r for r in records):
        raise refuse(path, "val", "the run's validation curve", "<no validation record>")
    return records


def read_log(folder: Path, record: dict[str, Any], read: Callable[[Path], list]) -> list[dict]:
    """The checked log of the run in ``folder`` (``read``: the training code's log reader);
    [] for a reference run, which has no curve; a trained run's missing log refused."""
    path = folder / "log.jsonl"
    if not trained(record):
        return read(path) if path.is_file() else []
    if not path.is_file():
        steps = record["config"]["train"].get("steps", "its")
        raise refuse(path, "the file", f"the training log of a run of {steps} steps", "<missing>")
    return check_log(path, read(path), record)


# --------------------------------------------------------------------------- items.npz


def read_items(path: Path) -> dict[str, np.ndarray]:
    """A run's per-item values: each a non-empty 1-D vector of finite numbers, float64 (read
    only). A file is read and checked once while its size and modification time stand: deciding
    the claims asks for the same run's values once per claim and arm."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing; run the study again")
    stat = path.stat()
    return dict(_checked_items(str(path), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=1024)
def _checked_items(path: str, mtime_ns: int, size: int) -> dict[str, np.ndarray]:
    """:func:`read_items` of one version of a file (``mtime_ns`` and ``size`` key it)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            values = {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(
            f"{path}: unreadable per-item values ({type(error).__name__}: {error}); delete the "
            "run's folder and run the study again"
        ) from None
    for key, value in values.items():
        if value.ndim != 1 or value.size == 0 or value.dtype.kind not in "biuf":
            raise refuse(
                Path(path), key, "a non-empty vector of numbers", f"<{value.dtype} {value.shape}>"
            )
        if not np.isfinite(value).all():
            raise refuse(Path(path), key, "finite values", "<NaN or infinity>")
    checked = {k: v.astype(np.float64) for k, v in values.items()}
    for value in checked.values():
        value.flags.writeable = False  # shared between callers: never changed in place
    return checked


def item(values: dict[str, np.ndarray], key: str, path: Path) -> np.ndarray:
    """``values[key]`` of the ``items.npz`` at ``path``, refused by name when it lacks it."""
    if key not in values:
        raise refuse(path, key, "a per-item vector", "<missing>")
    return values[key]


def stack(rows: list[tuple[Path, np.ndarray]], key: str) -> np.ndarray:
    """(seeds, items) of one item's vectors, refused when their lengths differ."""
    first_path, first = rows[0]
    for path, row in rows[1:]:
        if len(row) != len(first):
            raise refuse(path, key, f"{len(first)} items (as {first_path})", f"<{len(row)} items>")
    return np.stack([row for _, row in rows])


# --------------------------------------------------------------------------- <dataset>.json

BENCHMARK_FILE = {"dataset": "text", "metrics": "object"}


def read_benchmark(path: Path) -> dict[str, Any]:
    """A run's CLIP_benchmark results file: its dataset and every metric a finite number."""
    data = read_json(path, BENCHMARK_FILE)
    for metric, value in data["metrics"].items():
        check_value(value, "number", path, f"metrics.{metric}")
    return data


# --------------------------------------------------------------------------- curves.json

CURVE = {
    "study": "study",
    "variant": "text",
    "seed": "seed",
    "metric": "text",
    "val_size": "positive",
    "points": [{"step": "count", "value": "nonnegative"}],
}
APERTURE = {
    "study": "study",
    "variant": "text",
    "seed": "seed",
    "points": [{"step": "count"}],
}
CURVES_FILE = {"validation": [CURVE], "bases": ["object"], "aperture": [APERTURE]}


def read_curves(path: Path) -> dict[str, Any]:
    """``curves.json`` (:data:`CURVES_FILE`): validation values by step, each of its metric's
    kind (:func:`validation_kind`)."""
    curves = read_json(path, CURVES_FILE)
    for i, curve in enumerate(curves["validation"]):
        for j, point in enumerate(curve["points"]):
            field = f"validation[{i}].points[{j}].value"
            check_value(point["value"], validation_kind(curve["metric"]), path, field)
    return curves


# --------------------------------------------------------------------------- study.json

STUDY_FILE = {
    "environment": "object",
    "provenance": Maybe("object?"),
    "scale": Maybe("text"),
    "runs": Maybe("count"),
    "runs_finished": Maybe("count"),
    "partial": Maybe("flag"),
    "seeds": Maybe(["seed"]),
}


def read_study(path: Path) -> dict[str, Any]:
    """``study.json`` (:data:`STUDY_FILE`), no more runs finished than planned."""
    record = read_json(path, STUDY_FILE)
    if record.get("runs_finished", 0) > record.get("runs", math.inf):
        raise refuse(
            path, "runs_finished", f"at most runs ({record['runs']})", record["runs_finished"]
        )
    return record


def writable_file(path: Path) -> Path:
    """``path``, refused when something other than a file (a folder) is in its place."""
    if path.exists() and not path.is_file():
        raise refuse(path, "the file", "a file the study writes (or nothing)", "<a folder>")
    return path
