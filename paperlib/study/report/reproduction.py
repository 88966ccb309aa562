"""How close a re-run came to the committed study: the rule the comparison applies.

A re-run reproduces the committed study when every claim's verdict is the same, every effect
whose committed adjusted interval excludes zero keeps its sign, and every metric lies within its
tolerance. A metric's tolerance is :data:`MARGIN` times the largest difference that any metric
of its kind in the same run, or the same metric in any run of the study, showed across the CPU
configurations of ``results/<scale>/variation.json`` (:mod:`~paperlib.study.report.variation`:
other kernels, other thread counts), and never less than :data:`FLOOR` (one test item for
rates).

Kinds (:func:`metric_kind`): ``fraction`` (recalls, accuracies, COLA, hierarchical P/R: rates
over n test items), ``percentage`` (HiMo@2/3) and ``continuous`` (correlations, AUC, AP, SSI,
d_corr). Before comparing, each side's ``claims.json`` is checked against what its results
files decide (:func:`check_decided`: every declared claim, the same effects and verdicts), and
``variation.json`` against the committed results it was measured on (:func:`read_variation`).
``python -m paperlib.study.compare`` applies it and writes the report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from paperlib.environment import environment_differences
from paperlib.study.decide.decide import report
from paperlib.study.paths import results_root_at
from paperlib.study.plan.claims import CLAIMS
from paperlib.study.report.decided import read_claims
from paperlib.study.report.variation import fingerprint, metric_values, spreads
from paperlib.study.results import files

MARGIN = 3.0
FLOOR = {
    "fraction": "one test item: 1/n",
    "percentage": "one test item: 100/n",
    "continuous": "1e-4 absolute",
}
PERCENT_METRICS = {"himo@2": "world-monotonicity/himo2", "himo@3": "world-monotonicity/himo3"}
FRACTION_METRICS = (
    "recall@",
    "acc1",
    "acc5",
    "mean_per_class_recall",
    "cola_accuracy",
    "precision",
    "recall",
)


class CompareInputError(ValueError):
    """An input of the comparison is missing or malformed; the message names the file."""


def metric_kind(metric: str) -> str:
    """The tolerance kind of a results-file metric (see the module docstring)."""
    if metric in PERCENT_METRICS:
        return "percentage"
    if any(metric == key or (key.endswith("@") and key in metric) for key in FRACTION_METRICS):
        return "fraction"
    return "continuous"


def item_count(dataset: str, metric: str, items: dict[str, np.ndarray]) -> int:
    """How many test items a rate counts: the length of its per-item vector where the run's
    ``items.npz`` has one (COLA pairs, images with enough segments), else the held-out set."""
    key = PERCENT_METRICS.get(metric) or ("world-cola/correct" if dataset == "world-cola" else None)
    if key and key in items:
        return len(items[key])
    return len(items["world-long/i2t_hit1"]) if "world-long/i2t_hit1" in items else 1


def floor(kind: str, n: int) -> float:
    """The smallest tolerance of a kind (:data:`FLOOR`); float32 files carry ~1e-7 rounding."""
    if kind == "fraction":
        return 1.0 / n + 1e-6
    if kind == "percentage":
        return 100.0 / n + 1e-4
    return 1e-4


def checked(read: Callable[..., Any], path: Path, *args: Any) -> Any:
    """``read(path, *args)`` (a reader of ``results.files``), its refusal a
    :class:`CompareInputError`."""
    try:
        return read(path, *args)
    except files.ResultsFileError as error:
        raise CompareInputError(str(error)) from None


def _items(folder: Path) -> dict[str, np.ndarray]:
    path = folder / "items.npz"
    return checked(files.read_items, path) if path.is_file() else {}


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise CompareInputError(f"{path}: missing ({what})") from None
    except (OSError, ValueError) as error:
        raise CompareInputError(f"{path}: not valid JSON ({what}: {error})") from None
    if not isinstance(data, dict):
        raise CompareInputError(f"{path}: expected a JSON object ({what})")
    return data


def pooled_spreads(spread: dict[str, float]) -> dict[tuple[str, str], float]:
    """Per (run folder, kind): the largest spread of any of its metrics of that kind; and per
    ``("*", file name:metric)``: the largest spread of that metric in any run of the study (a
    run that moved little on the measured configurations can move as much as the others)."""
    out: dict[tuple[str, str], float] = {}
    for key, value in spread.items():
        file, metric = key.rsplit(":", 1)
        folder, name = file.rsplit("/", 1) if "/" in file else ("", file)
        for group in ((folder, metric_kind(metric)), ("*", f"{name}:{metric}")):
            out[group] = max(out.get(group, 0.0), value)
    return out


def measured_spread(
    pooled: dict[tuple[str, str], float], run: str, file: str, metric: str
) -> float | None:
    """The spread a metric's tolerance is built on: the larger of its run's largest spread of
    its kind and its own largest spread over the study's runs (None: nothing measured)."""
    found = [
        pooled.get((run, metric_kind(metric))),
        pooled.get(("*", f"{file}:{metric}")),
    ]
    found = [v for v in found if v is not None]
    return max(found) if found else None


def tolerance(kind: str, n: int, pooled: float | None) -> tuple[float, str]:
    """A metric's tolerance and where it came from (module docstring)."""
    low = floor(kind, n)
    if pooled is None:
        return low, f"floor ({FLOOR[kind]}): no measured variation for this run"
    measured = MARGIN * pooled
    if measured >= low:
        return measured, (
            f"{MARGIN:g} × {pooled:.3g}, the largest {kind} spread of the run or of this metric "
            "in any run"
        )
    return low, f"floor ({FLOOR[kind]}) > {MARGIN:g} × measured {pooled:.3g}"


def compare_runs(committed: Path, reproduced: Path, variation: dict) -> list[dict[str, Any]]:
    """One row per metric of every committed results file (``<study>/<variant>/seed<k>/*.json``)."""
    committed_values = metric_values(committed)
    pooled = pooled_spreads(spreads(variation, committed_values))
    rows, items_of = [], {}
    for path in sorted(committed.glob("*/*/seed*/*.json")):
        relative = path.relative_to(committed)
        theirs = reproduced / relative
        result = checked(files.read_benchmark, path)
        mine, dataset = result["metrics"], result["dataset"]
        other = checked(files.read_benchmark, theirs)["metrics"] if theirs.is_file() else {}
        if path.parent not in items_of:  # one read of a run's items.npz for all its files
            items_of[path.parent] = _items(path.parent)
        for metric, value in mine.items():
            kind = metric_kind(metric)
            n = item_count(dataset, metric, items_of[path.parent])
            again = other.get(metric)
            diff = None if again is None else float(again) - float(value)
            spread = measured_spread(pooled, relative.parent.as_posix(), relative.name, metric)
            limit, source = tolerance(kind, n, spread)
            rows.append(
                {
                    "file": relative.as_posix(),
                    "metric": metric,
                    "kind": kind,
                    "committed": value,
                    "reproduced": again,
                    "difference": diff,
                    "tolerance": limit,
                    "tolerance_from": source,
                    "within": diff is not None and abs(diff) <= limit,
                }
            )
    return rows


def claim_changes(committed: dict, reproduced: dict) -> list[dict[str, Any]]:
    """Claims whose verdict changed, or whose effect changed sign where the committed adjusted
    interval excluded zero (or that are missing)."""
    theirs = {c["claim"]: c for c in reproduced.get("claims", [])}
    out = []
    for c in committed.get("claims", []):
        other = theirs.get(c["claim"])
        if other is None:
            out.append({"claim": c["claim"], "change": "missing from the re-run"})
            continue
        if other["verdict"] != c["verdict"]:
            out.append(
                {"claim": c["claim"], "change": f"verdict {c['verdict']} → {other['verdict']}"}
            )
        interval = c.get("interval")
        if interval and (interval[0] > 0 or interval[1] < 0) and other.get("effect") is not None:
            if np.sign(other["effect"]) != np.sign(c["effect"]):
                out.append(
                    {
                        "claim": c["claim"],
                        "change": f"effect {c['effect']:+.4g} → {other['effect']:+.4g}",
                    }
                )
    return out


def check_decided(folder: Path, scale: str, what: str) -> dict[str, Any]:
    """``folder``'s ``claims.json``, checked to be what its results files decide: the same
    claims as ``study.plan.claims`` declares, the same effects and verdicts; else the comparison
    would check numbers nobody computed. Returns the file's content."""
    if not (folder / "claims.json").exists():
        raise CompareInputError(f"{folder / 'claims.json'}: missing ({what})")
    recorded = checked(read_claims, folder / "claims.json", False)
    try:
        with results_root_at(folder.parent):
            decided = report(scale, partial=True)
    except (ValueError, FileNotFoundError) as error:
        raise CompareInputError(
            f"{folder}: its results files cannot be decided ({error})"
        ) from None
    again = {c["claim"]: c for c in decided["claims"]}
    listed = [c["claim"] for c in recorded["claims"]]
    if sorted(listed) != sorted(c.id for c in CLAIMS):
        raise CompareInputError(
            f"{folder / 'claims.json'}: lists claims {sorted(set(listed) ^ {c.id for c in CLAIMS})[:5]} "
            "that the declared claims do not (or the other way round); re-decide it"
        )
    for claim in recorded["claims"]:
        fresh = again[claim["claim"]]
        same = fresh["verdict"] == claim.get("verdict")
        if same and claim.get("effect") is not None:
            same = fresh["effect"] is not None and abs(fresh["effect"] - claim["effect"]) <= 1e-9
        if not same or (claim.get("effect") is None) != (fresh["effect"] is None):
            raise CompareInputError(
                f"{folder / 'claims.json'}: claim {claim['claim']!r} records effect "
                f"{claim.get('effect')} ({claim.get('verdict')}), but its results files decide "
                f"{fresh['effect']} ({fresh['verdict']}); re-decide with "
                f"`python -m paperlib.study --scale {scale} --decide-only`"
            )
    return recorded


def read_variation(committed: Path) -> dict[str, Any]:
    """``variation.json``, checked against the committed results it was measured on (their
    results files checked first)."""
    path = committed / "variation.json"
    variation = _read_json(path, "the measured variation; `make variation` writes it")
    for result in sorted(committed.glob("*/*/seed*/*.json")):  # read by the fingerprint
        checked(files.read_benchmark, result)
    if variation.get("committed_fingerprint") != fingerprint(metric_values(committed)):
        raise CompareInputError(
            f"{path}: measured against other committed results (fingerprint "
            f"{variation.get('committed_fingerprint')}); re-measure with `make variation`"
        )
    return variation


def environments(committed: Path, reproduced: Path) -> list[tuple[str, Any, Any]]:
    """Differences between the committed study's environment and the re-run's, the code's
    provenance among them (``provenance.code_hash``, ``provenance.commit``; a study recorded
    without it shows None); a side whose ``study.json`` is missing shows as "not recorded"
    rather than as no difference."""
    mine = committed / "study.json"
    theirs = reproduced / "study.json"
    if not (mine.is_file() and theirs.is_file()):
        return [("environment", _recorded(mine), _recorded(theirs))]
    return environment_differences(_environment(mine), _environment(theirs))


def _environment(study: Path) -> dict[str, Any]:
    """A ``study.json``'s environment with its code provenance under ``provenance``."""
    record = checked(files.read_study, study)
    return {**record.get("environment", {}), "provenance": record.get("provenance") or {}}


def _recorded(path: Path) -> str:
    return "recorded" if path.is_file() else f"not recorded ({path.name} missing)"
