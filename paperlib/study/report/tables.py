"""Tables of this project's study results: mean ± std over seeds, and the decided claims.

Rows come from :func:`paperlib.study.load_results` (one per study, variant, seed, dataset).
A *metric* is addressed as ``(dataset, metric name)``; a column spec adds a label, a scale
(e.g. 100 for percentages) and whether higher is better.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from statistics import mean, stdev

import pandas as pd

from paperlib.study.decide.regime import regime_text


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


def decimals(half_width: float) -> int:
    """How many decimals a value with this interval half-width resolves: two significant digits
    of the half-width (never fewer than 0)."""
    if not half_width > 0 or not math.isfinite(half_width):
        return 2
    return max(0, 1 - math.floor(math.log10(half_width)))


def _fixed(x: float, places: int) -> str:
    text = f"{x:+.{places}f}"
    return text.replace("-", "+") if float(text) == 0 else text  # no "−0.0"


def effect_text(claim: dict) -> str:
    """A decided claim's effect and its interval (at the claim's level of the study's error
    statement) in the metric's shown units (``Metric.shown``: a share as points of 100), with no
    more digits than the interval resolves, e.g. ``+4.3 [+2.4, +6.2]``; ``–`` without a valid
    seed pair."""
    if claim.get("effect") is None:
        return "–"
    scale = claim.get("shown_scale", 1.0)
    interval = claim.get("interval") or claim.get("interval_raw")
    if not interval:
        return f"{_signed(claim['effect'] * scale, 2)} (no interval: {claim.get('seed_df', 0)} seed df)"
    low, high = (x * scale for x in interval)
    places = decimals((high - low) / 2)
    return (
        f"{_fixed(claim['effect'] * scale, places)} [{_fixed(low, places)}, {_fixed(high, places)}]"
    )


def delta_text(claim: dict) -> str:
    """δ in the shown units, two significant digits, e.g. ``±2.3``."""
    return f"±{claim['smallest'] * claim.get('shown_scale', 1.0):.2g}"


def paper_text(claim: dict) -> str:
    """The paper's effect in its own units and carried onto this study's scale (the δ rule's
    ``T``, shown units), e.g. ``+62.9 → +36``; where the claim has no published effect, the
    paper's lead it borrows (``lead +1.5 → +16``) or, for a metric no table prints, the share
    it borrows (``share 0.024 → −2.4``)."""
    rule = claim.get("smallest_rule")
    if not rule:
        return "–"
    here = f"{claim['paper_effect_here'] * claim.get('shown_scale', 1.0):+.2g}"
    sign = 1.0 if claim["better"] == "higher" else -1.0
    paper = f"{sign * rule['paper_effect']:+.3g}"
    if claim.get("paper_effect") is not None:
        return f"{paper} → {here}"
    if rule["source"].startswith("the paper's lead"):
        return f"(lead {paper}) → {here}"
    return f"(share {rule['share']:.2g}) → {here}"


def premise_text(claim: dict) -> str:
    """Whether the claim's premise held, with the measured value (shown units) against the
    paper's, e.g. ``fails: 95.7 (paper 35)``."""
    premise = claim.get("premise")
    if not premise:
        return "–"
    state = "holds" if premise["held"] else "fails"
    if isinstance(premise.get("paper"), str):
        return (
            f"{state}: {premise['measured'] * claim.get('shown_scale', 1.0):.3g} {premise['paper']}"
        )
    measured = premise["measured"] * claim.get("shown_scale", 1.0)
    paper = "" if premise.get("paper") is None else f" (paper {premise['paper']:.3g})"
    return f"{state}: {measured:.3g}{paper}"


def sign_text(claim: dict) -> str:
    """Which sign the claim's interval establishes (it excludes 0): the paper's, the other, or
    "not established"."""
    interval = claim.get("interval")
    if claim.get("effect") is None or not interval or claim["verdict"] == "untestable":
        return "–" if claim.get("effect") is None else "not established"
    low, high = interval if claim["better"] == "higher" else (-interval[1], -interval[0])
    return "the paper's" if low > 0 else "the other" if high < 0 else "not established"


def size_text(claim: dict) -> str:
    """Where the interval lies against the paper's effect on this scale (``paper_effect_here``):
    below, above or around it; "other units" where the metric is not the paper's quantity."""
    here = claim.get("paper_effect_here")
    if claim.get("paper_effect") is None or claim.get("effect") is None or here is None:
        return "–"
    if not claim.get("paper_units"):
        return "other units"
    if not claim.get("interval"):
        return "–"
    low, high = claim["interval"]
    if claim["better"] == "lower":
        low, high, here = -high, -low, -here
    if high < here:
        return "below the paper's"
    if low > here:
        return "above the paper's"
    return "contains the paper's"


def design_text(claim: dict) -> str:
    """A claim's design note in a few words, in the metric's shown units: the half-width its
    planned seeds give against δ, or the seeds per base that would resolve δ, or the item floor
    that no seed count passes."""
    note = claim.get("design_note")
    if not note:
        return "–"
    scale = claim.get("shown_scale", 1.0)
    if note["item_floor"] is not None and note["item_floor"] >= note["delta"]:
        return f"item floor ±{note['item_floor'] * scale:.3g} ≥ δ"
    if note["half_width"] is not None and note["half_width"] < note["delta"]:
        return f"resolves δ (±{note['half_width'] * scale:.3g})"
    if note["per_base_needed"] is not None:
        return f"needs {note['per_base_needed']} seeds per base"
    return "no design up to 8 seeds per base resolves δ"


def exclusions_text(claim: dict) -> str:
    """The verdict with the runs the plateau rule leaves out counted in, where it differs."""
    other = claim.get("without_exclusions")
    if not other or not other["runs_added"]:
        return "–"
    added = f"+{other['runs_added']} pairs"
    return f"{other['verdict']} ({added})" if other["changes_verdict"] else f"same ({added})"


def base_text(claim: dict) -> str:
    """Both arms against the base they started from, in the metric's shown units, e.g.
    ``-8.12 / -9.53``, with the reading in words."""
    arms = claim.get("against_base") or {}
    if arms.get("variant") is None or arms.get("baseline") is None:
        return "–"
    scale = claim.get("shown_scale", 1.0)
    return (
        f"{_signed(arms['variant']['effect'] * scale)} / "
        f"{_signed(arms['baseline']['effect'] * scale)}: {arms['reading']}"
    )


def claim_name(claim: dict) -> str:
    """A claim's short name: its metric and the two runs compared (or, for a claim on one run's
    two metrics, the run and "vs all captions")."""
    if claim.get("baseline_item"):
        return f"{claim['label']}: {claim['variant']}, vs all captions"
    return f"{claim['label']}: {claim['variant']} vs {claim['baseline']}"


def claims_table(claims: list[dict]) -> pd.DataFrame:
    """The compact table of decided claims, narrow enough for a page: short name, the units
    shown, the paper's effect and its translation onto this scale with the table it is read
    from, this study's effect with its interval, δ, the premise, the verdict and valid /
    planned seeds. How the verdict was reached is in :func:`claims_context`; each claim in full in
    :func:`claim_line`."""
    return pd.DataFrame(
        [
            {
                "claim": claim_name(c),
                "shown as": c.get("shown") or "–",
                "paper → here": paper_text(c),
                "paper's table": c.get("paper_effect_table") or "–",
                "this study [interval]": effect_text(c),
                "δ": delta_text(c),
                "premise": premise_text(c),
                "verdict": c["verdict"],
                "seeds": f"{len(c['seeds'])}/{c['runs_total']}",
            }
            for c in claims
        ]
    ).set_index("claim")


def claims_context(claims: list[dict]) -> pd.DataFrame:
    """What each verdict rests on, one row per claim: the sign the interval establishes, the
    size against the paper's effect on this scale, each arm's effect against the base (the reading
    is in :func:`claim_line`), the regime and the family's size. The design is in
    :func:`claims_design`."""
    return pd.DataFrame(
        [
            {
                "claim": claim_name(c),
                "sign": sign_text(c),
                "size": size_text(c),
                "variant − base": _arm_against_base(c, "variant"),
                "baseline − base": _arm_against_base(c, "baseline"),
                "regime": regime_text(c),
                "family": c.get("family_size") or "–",
            }
            for c in claims
        ]
    ).set_index("claim")


def claims_design(claims: list[dict]) -> pd.DataFrame:
    """Each claim's design, one row per claim: the valid seeds per base, the design note
    (:func:`design_text`) and the verdict with the runs the plateau rule left out counted in
    (:func:`exclusions_text`)."""
    rows = []
    for c in claims:
        valid = (c.get("design_note") or {}).get("valid_per_base") or {}
        rows.append({
            "claim": claim_name(c),
            "seeds per base": " + ".join(str(n) for n in valid.values()) or "–",
            "design": design_text(c),
            "with the excluded runs": exclusions_text(c),
        })  # fmt: skip
    return pd.DataFrame(rows).set_index("claim")


def _arm_against_base(claim: dict, arm: str) -> str:
    against = (claim.get("against_base") or {}).get(arm)
    return "–" if against is None else _signed(against["effect"])


def _where(claim: dict) -> str:
    return f" ({claim['paper_effect_row']})" if claim.get("paper_effect_row") else ""


def claim_line(claim: dict) -> str:
    """One line per decided claim: verdict, statement, effect, interval, seeds, and why."""
    head = f"[{claim['verdict']}] {claim['statement']} ({claim_name(claim)})"
    if claim.get("effect") is None:
        return f"{head}: {claim['reason']}"
    against = base_text(claim)
    return (
        f"{head}: effect {effect_text(claim)} ({claim.get('shown', '')}), paper "
        f"{paper_text(claim)}{_where(claim)}, δ {delta_text(claim)}, premise "
        f"{premise_text(claim)}, {len(claim['seeds'])}/{claim['runs_total']} seeds; "
        + ("" if against == "–" else f"variant / baseline − base {against}; ")
        + claim["reason"]
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
    return folded(items, summary)


def folded(items: list[str], summary: str) -> str:
    """HTML list items (already escaped) as one collapsed ``<details>`` block."""
    return f"<details><summary>{html.escape(summary)}</summary><ul>{''.join(items)}</ul></details>"


TREND_AXES = ("batch", "length")


NOT_COUNTED = "*"  # a trend point whose arms forgot their base or did not learn


def trend_cell(point: dict) -> str:
    """One trend point as text: the effect with its 95 % interval, :data:`NOT_COUNTED` where the
    point does not count; no value where the seed variance gives no interval (``no interval``),
    ``–`` without an effect."""
    if point.get("effect") is None:
        return "–"
    interval = point.get("interval")
    if interval is None:
        return f"no interval ({point.get('seed_df', 0)} seed df)"
    spread = f"[{_signed(interval[0])}, {_signed(interval[1])}]"
    return f"{_signed(point['effect'])} {spread}" + (NOT_COUNTED if point.get("untestable") else "")


def _trend_column(claims: list[dict], axis: str, factor: float) -> str:
    """A trend table's column: the batch size where every claim with a point at the factor
    trains it at one size, else the factor (``batch ×0.5``, ``length ×2``)."""
    sizes = {
        p.get("batch_size")
        for c in claims
        if c.get("trend")
        for p in c["trend"][axis]
        if p["factor"] == factor and p.get("batch_size") is not None
    }
    if axis == "batch" and len(sizes) == 1:
        return f"batch {sizes.pop()}"
    return f"{axis} ×{factor:g}"


def trend_table(claims: list[dict], axis: str) -> pd.DataFrame:
    """Claims × the settings of one trend ``axis``: each point's :func:`trend_cell`; columns by
    :func:`_trend_column`. The axis's reading per claim is :func:`trend_readings`."""
    if axis not in TREND_AXES:
        raise ValueError(f"trend axis {axis!r}: expected one of {TREND_AXES}")
    rows = {}
    for claim in claims:
        if trend := claim.get("trend"):
            rows[claim_name(claim)] = {
                _trend_column(claims, axis, p["factor"]): trend_cell(p) for p in trend[axis]
            }
    return pd.DataFrame.from_dict(rows, orient="index")


def hide_components(claims: list[dict], axis: str = "batch") -> pd.DataFrame:
    """HiDe's mean component count of each arm that logs one, at each setting of ``axis``
    (``trend.<axis>[].hide_m``, over the seeds of the first claim that pairs the arm), one row
    per arm: the count HiDe kept at each batch size."""
    rows: dict[str, dict[str, str]] = {}
    for claim in claims:
        for p in (claim.get("trend") or {}).get(axis, []):
            for side in ("variant", "baseline"):
                m = (p.get("hide_m") or {}).get(side)
                if m is not None:
                    column = _trend_column(claims, axis, p["factor"])
                    rows.setdefault(claim[side], {}).setdefault(column, f"{m:.1f}")
    return pd.DataFrame.from_dict(rows, orient="index")


def trend_readings(claims: list[dict]) -> dict[str, dict[str, str]]:
    """Per claim with a trend, each axis's reading computed from its points
    (``claims.json``'s ``trend.reading``), keyed by :func:`claim_name`."""
    return {
        claim_name(c): {axis: c["trend"]["reading"][axis] for axis in TREND_AXES}
        for c in claims
        if c.get("trend")
    }
