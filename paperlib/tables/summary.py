"""Tables of this project's study results: mean ± std over seeds, and the decided claims.

Rows come from :func:`paperlib.study.load_results` (one per study, variant, seed, dataset).
A *metric* is addressed as ``(dataset, metric name)``; a column spec adds a label, a scale
(e.g. 100 for percentages) and whether higher is better.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
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


def _signed(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:+.{digits}g}"


def effect_text(claim: dict) -> str:
    """A decided claim's effect and its adjusted interval (``claims.json``), e.g.
    ``+0.012 [+0.004, +0.02]``; an untested claim's raw interval is marked ``raw``; ``–``
    without a valid seed pair."""
    if claim.get("effect") is None:
        return "–"
    if claim.get("interval"):
        low, high = claim["interval"]
        return f"{_signed(claim['effect'])} [{_signed(low)}, {_signed(high)}]"
    low, high = claim["interval_raw"]
    return f"{_signed(claim['effect'])} [{_signed(low)}, {_signed(high)}] raw"


def claim_name(claim: dict) -> str:
    """A claim's short name: its metric and the two runs compared (or, for a claim on one run's
    two metrics, the run and "vs all captions")."""
    if claim.get("baseline_item"):
        return f"{claim['label']}: {claim['variant']}, vs all captions"
    return f"{claim['label']}: {claim['variant']} vs {claim['baseline']}"


def claims_table(claims: list[dict]) -> pd.DataFrame:
    """The compact table of decided claims: short name, the paper's effect (in the study's
    units) and the table it is read from (its rows are in :func:`claim_line`), this study's
    effect with its adjusted interval, the smallest effect of interest, the verdict and
    valid / total seeds."""
    return pd.DataFrame(
        [
            {
                "claim": claim_name(c),
                "paper": _signed(c.get("paper_effect")),
                "paper's table": c.get("paper_effect_table") or "–",
                "this study [adjusted interval]": effect_text(c),
                "smallest": f"±{c['smallest']:g}",
                "verdict": c["verdict"],
                "seeds": f"{len(c['seeds'])}/{c['runs_total']}",
            }
            for c in claims
        ]
    ).set_index("claim")


def _where(claim: dict) -> str:
    return f" ({claim['paper_effect_row']})" if claim.get("paper_effect_row") else ""


def claim_line(claim: dict) -> str:
    """One line per decided claim: verdict, statement, effect, interval, seeds, and why."""
    head = f"[{claim['verdict']}] {claim['statement']} ({claim_name(claim)})"
    if claim.get("effect") is None:
        return f"{head}: {claim['reason']}"
    return (
        f"{head}: effect {effect_text(claim)}, paper {_signed(claim.get('paper_effect'))}"
        f"{_where(claim)}, "
        f"smallest ±{claim['smallest']:g}, {len(claim['seeds'])}/{claim['runs_total']} seeds; "
        f"{claim['reason']}"
    )


def claims_details(claims: list[dict], summary: str) -> str:
    """Every claim in full as one collapsed HTML block (``<details>``): one item per claim,
    :func:`claim_line` followed by the runs it left out, each escaped."""
    items = []
    for claim in claims:
        left_out = "".join(
            f"<br>&nbsp;&nbsp;left out: {html.escape(run)}" for run in claim.get("invalid_runs", [])
        )
        items.append(f"<li>{html.escape(claim_line(claim))}{left_out}</li>")
    return f"<details><summary>{html.escape(summary)}</summary><ul>{''.join(items)}</ul></details>"
