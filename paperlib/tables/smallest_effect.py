"""The smallest effect of interest δ of each metric, read from the papers' own tables by one rule.

**The rule** (docs/methods/conventions.md, "The smallest effect of interest δ"): δ is the
margin by which the paper's method leads the runner-up on that metric in the paper's own
table, at the model size the claims compare, averaged over the datasets the paper measures
the metric on (the paper's own "avg" column where it prints one). An effect smaller than δ
would not have made the method the best in the paper's own table, so it is not a gain of the
kind the paper reports. Where a table compares only two settings (ARGENT's Table 1), the
runner-up is the other setting. Where the study's metric is not the paper's own column (R@1
against R@5, the world's zero-shot levels against ImageNet top-1, PEP per image against
pooled), or no paper prints it (the aperture fraction), δ is the lead on the paper's nearest
column in the same unit, and the reason says which (``claims.BORROWED``).

:class:`PaperLead` declares where a metric's lead is read; :meth:`PaperLead.value` computes it
from ``tables/published.json`` and :meth:`PaperLead.reason` states it with its rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean

from paperlib.tables import published_table, published_where

NAME_KEYS = ("model", "variant", "captions")  # what names a row in the published tables


@dataclass(frozen=True)
class PaperLead:
    """The lead of ``method`` over the best other row of ``table``, on the mean of
    ``columns`` (paths into a row), among the rows matching ``where``, times ``scale``."""

    table: str
    columns: tuple[tuple[str, ...], ...]
    method: dict[str, str]
    label: str  # what the columns measure, for the reason
    where: dict[str, str] = field(default_factory=dict)
    better: str = "higher"
    scale: float = 1.0
    # how the reason names the two rows where their table names are not models
    wording: str = "{method}'s lead over {runner_up}"

    def scores(self) -> dict[str, float]:
        """Each row's mean over ``columns``, by the row's name; rows that lack a column are
        left out (the paper did not measure that model there)."""
        rows, _ = published_table(self.table)
        out = {}
        for row in rows:
            if not all(row.get(k) == v for k, v in self.where.items()):
                continue
            values = [_read(row, path) for path in self.columns]
            if None not in values:
                out[_name(row)] = fmean(values)
        return out

    def runner_up(self) -> tuple[str, float, float]:
        """``(runner-up's name, method's score, runner-up's score)`` in the paper's units."""
        scores = self.scores()
        method = _name(self.method)
        if method not in scores:
            raise KeyError(f"{self.table}: no row {self.method} with every column {self.columns}")
        others = {k: v for k, v in scores.items() if k != method}
        if not others:
            raise KeyError(f"{self.table}: no other row beside {method} under {self.where}")
        pick = max if self.better == "higher" else min
        name = pick(others, key=others.__getitem__)
        return name, scores[method], others[name]

    def value(self) -> float:
        """δ in the study's units: the method's lead over the runner-up (positive; a table
        where the method does not lead is refused, the rule has no δ there)."""
        name, mine, theirs = self.runner_up()
        lead = (mine - theirs) if self.better == "higher" else (theirs - mine)
        if not lead > 0:
            raise ValueError(
                f"{self.table}: {_name(self.method)} does not lead {name} on {self.label}"
            )
        return round(lead * self.scale, 6)

    def reason(self) -> str:
        """The rule's reading, e.g. "HiMo's lead over FineLIP* on ... (HiMo Table 1, L/14):
        79.2 vs 77.8"."""
        name, mine, theirs = self.runner_up()
        size = " ".join(self.where.values())
        at = f"{published_where(self.table)}{', ' + size if size else ''}"
        who = self.wording.format(method=_name(self.method), runner_up=name)
        return f"{who} on {self.label} ({at}): {mine:.4g} vs {theirs:.4g}"


def _name(row: dict) -> str:
    return next(row[k] for k in NAME_KEYS if k in row)


def _read(row: dict, path: tuple[str, ...]) -> float | None:
    value = row
    for key in path:
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return float(value)
