"""How close a re-run came: every metric of the committed results files beside its reproduced
value, judged against a tolerance declared once per metric kind (:data:`TOLERANCES`).

    python -m paperlib.study.compare --scale smoke --reproduced build/reproduce/results

Kinds (:func:`metric_kind`):

- ``fraction``: retrieval recalls, accuracies, COLA, hierarchical P/R: rates over test items,
  so one item more or less moves them by 1/n; the tolerance is one item (1/n, n the items the
  rate counts);
- ``percentage``: HiMo@2 and HiMo@3, rates in percent: 100/n;
- ``continuous``: correlations, AUCs, AP, SSI, d_corr: 1 % relative, at least 1e-3 absolute
  (float noise and an occasional flipped tie stay well inside it).

A claim whose verdict differs between the two ``claims.json`` is named and counts as out of
tolerance. The report is printed and written as ``<report>.md`` and ``<report>.json``; the exit
status is 1 when anything is out of tolerance.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from paperlib.atomic import atomic_write_text
from paperlib.study.reader import REPO_ROOT

TOLERANCES = {
    "fraction": "one test item: 1/n",
    "percentage": "one test item: 100/n",
    "continuous": "1 % relative, at least 1e-3 absolute",
}
RELATIVE, ABSOLUTE = 1e-2, 1e-3
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
    return len(items["world-long/i2t_hit1"])


def tolerance(kind: str, committed: float, n: int) -> float:
    """The largest difference accepted for a metric of ``kind`` (:data:`TOLERANCES`)."""
    # results files hold float32 values: both sides of a one-item difference carry rounding
    # of up to float32's resolution at that magnitude (~6e-8 below 1), so 1e-6 slack is kept
    if kind == "fraction":
        return 1.0 / n + 1e-6
    if kind == "percentage":
        return 100.0 / n + 1e-4
    return max(RELATIVE * abs(committed), ABSOLUTE)


def _items(folder: Path) -> dict[str, np.ndarray]:
    path = folder / "items.npz"
    if not path.is_file():
        return {}
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def compare_runs(committed: Path, reproduced: Path) -> list[dict[str, Any]]:
    """One row per metric of every committed results file (``<study>/<variant>/seed<k>/*.json``)."""
    rows, items_of = [], {}
    for path in sorted(committed.glob("*/*/seed*/*.json")):
        relative = path.relative_to(committed)
        theirs = reproduced / relative
        mine = json.loads(path.read_text())
        other = json.loads(theirs.read_text())["metrics"] if theirs.is_file() else {}
        if path.parent not in items_of:  # one read of a run's items.npz for all its files
            items_of[path.parent] = _items(path.parent)
        items = items_of[path.parent]
        for metric, value in mine["metrics"].items():
            kind = metric_kind(metric)
            n = item_count(mine["dataset"], metric, items) if items else 1
            again = other.get(metric)
            diff = None if again is None else float(again) - float(value)
            limit = tolerance(kind, float(value), n)
            rows.append(
                {
                    "file": relative.as_posix(),
                    "metric": metric,
                    "kind": kind,
                    "committed": value,
                    "reproduced": again,
                    "difference": diff,
                    "tolerance": limit,
                    "within": diff is not None and abs(diff) <= limit,
                }
            )
    return rows


def verdict_flips(committed: Path, reproduced: Path) -> list[dict[str, str]]:
    """Claims whose verdict differs between the two ``claims.json`` (or is missing)."""

    def verdicts(folder: Path) -> dict[str, str]:
        path = folder / "claims.json"
        return (
            {c["claim"]: c["verdict"] for c in json.loads(path.read_text())["claims"]}
            if path.is_file()
            else {}
        )

    mine, theirs = verdicts(committed), verdicts(reproduced)
    return [
        {"claim": c, "committed": v, "reproduced": theirs.get(c, "missing")}
        for c, v in mine.items()
        if theirs.get(c) != v
    ]


def relative(row: dict[str, Any]) -> float:
    """A row's difference relative to its committed value."""
    return abs(row["difference"]) / max(abs(float(row["committed"])), 1e-12)


def largest_by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per kind: the largest absolute difference, its relative size and its metric."""
    out = {}
    for kind in TOLERANCES:
        found = [r for r in rows if r["kind"] == kind and r["difference"] is not None]
        if found:
            worst = max(found, key=lambda r: abs(r["difference"]))
            out[kind] = {
                "metric": f"{worst['file']}:{worst['metric']}",
                "difference": worst["difference"],
                "relative": relative(worst),
                "max_relative": max(map(relative, found)),
            }
    return out


def markdown(rows: list[dict[str, Any]], flips: list[dict[str, str]], largest: dict) -> str:
    """The report as markdown: the summary per kind, the verdict flips, then every metric."""
    bad = [r for r in rows if not r["within"]]
    lines = [
        f"# Reproduction check: {len(rows) - len(bad)} of {len(rows)} metrics within "
        f"tolerance; {len(flips)} verdict flip(s)",
        "",
        "| kind | tolerance | largest difference | relative | metric |",
        "|---|---|---|---|---|",
    ]
    for kind, text in TOLERANCES.items():
        w = largest.get(kind)
        lines.append(
            f"| {kind} | {text} | "
            + (
                f"{w['difference']:+.3g} | {w['relative']:.2g} | {w['metric']} |"
                if w
                else "– | – | – |"
            )
        )
    lines += (
        ["", "## Verdict flips", ""]
        + [f"- {f['claim']}: {f['committed']} → {f['reproduced']}" for f in flips]
        + (["- none"] if not flips else [])
    )
    lines += [
        "",
        "## Every metric",
        "",
        "| file | metric | committed | reproduced | difference | tolerance | within |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        again = "missing" if r["reproduced"] is None else f"{r['reproduced']:.6g}"
        diff = "–" if r["difference"] is None else f"{r['difference']:+.3g}"
        lines.append(
            f"| {r['file']} | {r['metric']} | {r['committed']:.6g} | {again} | {diff} | "
            f"{r['tolerance']:.3g} | {'yes' if r['within'] else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def compare(committed: Path, reproduced: Path, report: Path) -> bool:
    """Compare, print the summary and failures, write ``report``.md/.json; True when all holds."""
    if not (committed / "claims.json").is_file():
        raise FileNotFoundError(f"no committed results at {committed} (claims.json missing)")
    if not reproduced.is_dir():
        raise FileNotFoundError(f"no reproduced results at {reproduced}")
    rows, flips = compare_runs(committed, reproduced), verdict_flips(committed, reproduced)
    largest = largest_by_kind(rows)
    text = markdown(rows, flips, largest)
    report.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(report.with_suffix(".md"), text)
    atomic_write_text(
        report.with_suffix(".json"),
        json.dumps(
            {"rows": rows, "verdict_flips": flips, "largest": largest, "tolerances": TOLERANCES},
            indent=1,
        )
        + "\n",
    )
    print("\n".join(text.splitlines()[: 4 + len(TOLERANCES)]))  # the summary table
    for r in (r for r in rows if not r["within"]):
        print(f"OUT OF TOLERANCE {r['file']} {r['metric']}: {r['committed']} -> {r['reproduced']}")
    print(f"[compare] report: {report.with_suffix('.md')}")
    return all(r["within"] for r in rows) and not flips


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.study.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--scale", default="smoke")
    parser.add_argument(
        "--reproduced",
        type=Path,
        required=True,
        help="the results root of the re-run (holds <scale>/)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=None,
        help="report path without suffix (default: <reproduced>/<scale>-comparison)",
    )
    args = parser.parse_args(argv)
    reproduced = args.reproduced / args.scale
    report = args.report or args.reproduced / f"{args.scale}-comparison"
    committed = (
        REPO_ROOT / "results" / args.scale
    )  # the committed copy, whatever $PAPERLIB_RESULTS says
    return 0 if compare(committed, reproduced, report) else 1


if __name__ == "__main__":
    sys.exit(main())
