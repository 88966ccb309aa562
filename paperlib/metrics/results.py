"""Results files in CLIP_benchmark's JSON format, and merging them into one table
(``docs/methods/conventions.md#results-format``).

One file per (dataset, model, pretrained, task) evaluation::

    {"dataset": ..., "model": ..., "pretrained": ..., "task": ..., "language": "en",
     "metrics": {"image_retrieval_recall@1": 0.41, ...}}

CLIP_benchmark's metric names are used where a metric has one (``acc1``, ``acc5``,
``mean_per_class_recall``, ``image_retrieval_recall@k`` = text→image,
``text_retrieval_recall@k`` = image→text); the papers' other metrics go in the same
``metrics`` dict under the names below. Extra top-level keys are kept as they are.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text

REQUIRED_KEYS = ("dataset", "model", "pretrained", "task", "metrics", "language")
ROW_KEYS = ("dataset", "model", "pretrained", "task", "language")

# CLIP_benchmark's names
ACC1 = "acc1"
ACC5 = "acc5"
MEAN_PER_CLASS_RECALL = "mean_per_class_recall"
# this project's names for metrics CLIP_benchmark does not have
HIMO_AT_2 = "himo@2"
HIMO_AT_3 = "himo@3"
HIMO_AT_K = "himo@k_pearson"
SSI = "ssi"
COLA_ACCURACY = "cola_accuracy"


def image_retrieval_recall(k: int) -> str:
    """CLIP_benchmark's name for text→image Recall@k."""
    return f"image_retrieval_recall@{k}"


def text_retrieval_recall(k: int) -> str:
    """CLIP_benchmark's name for image→text Recall@k."""
    return f"text_retrieval_recall@{k}"


def _check_metrics(metrics: Mapping[str, Any], where: str) -> dict[str, float]:
    if not isinstance(metrics, Mapping):
        raise ValueError(f"{where}: 'metrics' must be a dict of name -> number")
    out = {}
    for name, value in metrics.items():
        if not isinstance(name, str):
            raise ValueError(f"{where}: metric names must be strings; got {name!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where}: metric {name!r} must be a number; got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{where}: metric {name!r} is not finite ({value})")
        out[name] = float(value)
    return out


def make_result(
    dataset: str,
    model: str,
    pretrained: str | None,
    task: str,
    metrics: Mapping[str, float],
    language: str = "en",
    **extra: Any,
) -> dict[str, Any]:
    """A CLIP_benchmark-style result dict; ``pretrained`` None is stored as ``""``."""
    result = {
        "dataset": dataset,
        "model": model,
        "pretrained": "" if pretrained is None else str(pretrained),
        "task": task,
        "metrics": _check_metrics(metrics, "make_result"),
        "language": language,
    }
    result.update(extra)
    return result


def validate_result(result: Mapping[str, Any], where: str = "result") -> dict[str, Any]:
    """Check the six CLIP_benchmark keys and numeric metrics; return a plain dict copy."""
    if not isinstance(result, Mapping):
        raise ValueError(f"{where}: expected a JSON object, got {type(result).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in result]
    if missing:
        raise ValueError(f"{where}: missing key(s) {missing}; expected {list(REQUIRED_KEYS)}")
    out = dict(result)
    out["metrics"] = _check_metrics(result["metrics"], where)
    return out


def write_result(path: str | os.PathLike, result: Mapping[str, Any]) -> Path:
    """Write ``result`` as JSON atomically (temporary file in the same folder + os.replace)."""
    path = Path(path)
    payload = json.dumps(validate_result(result, str(path)), indent=2, allow_nan=False)
    return atomic_write_text(path, payload + "\n")


def read_result(path: str | os.PathLike) -> dict[str, Any]:
    """Read and validate one results file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from err
    return validate_result(data, str(path))


def _expand(sources: Iterable[str | os.PathLike | Mapping[str, Any]]):
    for source in sources:
        if isinstance(source, Mapping):
            yield validate_result(source)
        elif Path(source).is_dir():
            for file in sorted(Path(source).glob("*.json")):
                yield read_result(file)
        else:
            yield read_result(source)


def merge_results(
    sources: Iterable[str | os.PathLike | Mapping[str, Any]] | str | os.PathLike,
) -> list[dict[str, Any]]:
    """Flatten many results (files, folders of ``*.json``, or dicts) into table rows.

    Each row holds ``dataset, model, pretrained, task, language`` and one column per
    metric (absent metrics are simply missing from that row). Rows keep input order
    (folders sorted by file name); duplicates are kept, not merged.
    """
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    rows = []
    for result in _expand(sources):
        row = {key: result[key] for key in ROW_KEYS}
        clash = set(result["metrics"]) & set(ROW_KEYS)
        if clash:
            raise ValueError(f"metric names clash with row keys: {sorted(clash)}")
        row.update(result["metrics"])
        rows.append(row)
    return rows


def metric_columns(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Metric column names over all rows, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            if key not in ROW_KEYS:
                seen.setdefault(key, None)
    return list(seen)
