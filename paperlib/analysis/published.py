"""Each paper's tables beside this project's study (tutorial 05): for every decided claim whose
paper prints both compared rows, the paper's two numbers in its units and this study's two
absolute values with their 95 % intervals in the metric's shown units.

The claims are ``claims.json``'s records (each arm's ``variant_value`` / ``baseline_value``:
the mean over valid seeds and its interval, the claims' estimator); the paper's rows come from
the claims' declarations (``study.plan.claims.CLAIMS``: each ``paper_effect`` names its table
and rows in ``tables/published.json``), passed in by the caller.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

NO_VALUE = "–"


def paper_rows(declared: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """{claim id: the paper's two rows}: ``table`` (e.g. ``HiMo Table 1``), ``variant`` and
    ``baseline`` (row name, value in the paper's units) and ``same_units`` (whether the study
    measures the paper's quantity), for each declared claim whose published effect names both
    rows (``PaperEffect.baseline``)."""
    rows = {}
    for claim in declared:
        effect = claim.paper_effect
        if effect is None or effect.baseline is None:
            continue
        published = effect.published(claim.metric.ceiling, claim.metric.better)
        sign = 1.0 if claim.metric.better == "higher" else -1.0
        rows[claim.id] = {
            "table": published.where.split(":")[0],
            "metric": _paths(effect.paths),
            "variant": (" ".join(effect.variant.values()), published.level + sign * published.effect),
            "baseline": (" ".join(effect.baseline.values()), published.level),
            "same_units": effect.same_units,
        }  # fmt: skip
    return rows


def _paths(paths: Sequence[tuple[str, ...]]) -> str:
    """A published effect's key paths in words: ``i2t_r1, mean of Urban1k, DOCCI, Long-DCI``
    for one key over several datasets, else the paths joined."""
    keys = {p[-1] for p in paths}
    if len(paths) > 1 and len(keys) == 1 and all(len(p) == 2 for p in paths):
        return f"{keys.pop()}, mean of {', '.join(p[0] for p in paths)}"
    return ", ".join(".".join(p) for p in paths)


def value_text(value: Mapping[str, Any] | None, scale: float) -> str:
    """``mean [low, high]`` of a claims.json arm value in shown units (× ``scale``), three
    significant digits; ``–`` for an arm with no valid seed."""
    if value is None:
        return NO_VALUE
    low, high = (x * scale for x in value["interval"])
    return f"{value['mean'] * scale:.3g} [{low:.3g}, {high:.3g}]"


def beside_paper(claims: Sequence[Mapping[str, Any]], rows: Mapping[str, Mapping]) -> pd.DataFrame:
    """One row per claim of ``claims`` that :func:`paper_rows` has: the paper's table, its two
    rows and numbers, this study's two arms with their intervals (shown units), the shown
    metric, whether the two measure the same quantity, and the claim's verdict."""
    table = []
    for c in claims:
        paper = rows.get(c["claim"])
        if paper is None:
            continue
        (v_row, v_value), (b_row, b_value) = paper["variant"], paper["baseline"]
        scale = c.get("shown_scale", 1.0)
        # one run's two metrics (ARGENT's Table 1): each side named by the paper's row
        v_name, b_name = (
            (f"{c['variant']}, {v_row}", f"{c['baseline']}, {b_row}")
            if c.get("baseline_item") else (c["variant"], c["baseline"])
        )  # fmt: skip
        table.append({
            "paper's table": paper["table"],
            "paper's metric": paper["metric"],
            "paper: variant": f"{v_row} {v_value:.3g}",
            "paper: baseline": f"{b_row} {b_value:.3g}",
            "here: variant": f"{v_name} {value_text(c.get('variant_value'), scale)}",
            "here: baseline": f"{b_name} {value_text(c.get('baseline_value'), scale)}",
            "here, shown as": c["shown"],
            "same quantity": "yes" if paper["same_units"] else "no",
            "verdict": c["verdict"],
        })  # fmt: skip
    return pd.DataFrame(table, index=[c["claim"] for c in claims if c["claim"] in rows])
