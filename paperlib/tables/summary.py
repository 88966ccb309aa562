"""Tables of this project's study results: mean ± std over seeds, and claim verdicts.

Rows come from :func:`paperlib.study.load_results` (one per study, variant, seed, dataset).
A *metric* is addressed as ``(dataset, metric name)``; a column spec adds a label, a scale
(e.g. 100 for percentages) and whether higher is better.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt
from statistics import mean, stdev

import pandas as pd


@dataclass(frozen=True)
class Column:
    """One table column: ``metric`` of ``dataset``, shown as ``label`` after ``× scale``."""

    label: str
    dataset: str
    metric: str
    scale: float = 1.0
    higher_is_better: bool = True


def values(rows: list[dict], study: str, variant: str, column: Column) -> list[float]:
    """Per-seed values of one column for one variant (seed order)."""
    picked = sorted(
        (r["seed"], r[column.metric])
        for r in rows
        if r["study"] == study
        and r["variant"] == variant
        and r["dataset"] == column.dataset
        and column.metric in r
        and r[column.metric] is not None
    )
    return [v * column.scale for _, v in picked]


def mean_std(xs: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single seed)."""
    if not xs:
        return float("nan"), float("nan")
    return mean(xs), (stdev(xs) if len(xs) > 1 else 0.0)


def format_mean_std(xs: list[float], digits: int = 1) -> str:
    if not xs:
        return "–"
    m, s = mean_std(xs)
    return f"{m:.{digits}f} ± {s:.{digits}f}" if len(xs) > 1 else f"{m:.{digits}f}"


def study_table(
    rows: list[dict], study: str, variants: list[str], columns: list[Column], digits: int = 1
) -> pd.DataFrame:
    """Variants × columns of ``mean ± std`` strings, plus the number of seeds."""
    table = {}
    for variant in variants:
        cells = {c.label: format_mean_std(values(rows, study, variant, c), digits) for c in columns}
        seeds = {r["seed"] for r in rows if r["study"] == study and r["variant"] == variant}
        table[variant] = {"seeds": len(seeds), **cells}
    return pd.DataFrame.from_dict(table, orient="index")


def verdict(candidate: list[float], baseline: list[float], higher_is_better: bool = True) -> str:
    """Does ``candidate`` beat ``baseline`` (the paper's claim) at this scale?

    ``reproduces`` when the mean difference has the claimed sign and exceeds the standard
    error of the difference (Welch's, from the per-seed spreads), ``contradicts`` when it
    exceeds it with the opposite sign, ``inconclusive`` otherwise (and with a single seed,
    where no spread is known, the sign alone is reported as ``… (1 seed)``).
    """
    if not candidate or not baseline:
        return "no data"
    diff = mean(candidate) - mean(baseline)
    if not higher_is_better:
        diff = -diff
    if len(candidate) < 2 or len(baseline) < 2:
        return ("better" if diff > 0 else "not better") + " (1 seed)"
    se = sqrt(stdev(candidate) ** 2 / len(candidate) + stdev(baseline) ** 2 / len(baseline))
    if diff > se:
        return "reproduces"
    if diff < -se:
        return "contradicts"
    return "inconclusive"
