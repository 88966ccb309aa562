"""The smallest effect of interest δ of each claim: the paper's effect translated onto the study's
scale by one rule, then halved.

**The rule** (``docs/methods/conventions.md#the-smallest-effect-of-interest``). A paper's effect
closes a share of its baseline's *headroom*, the room between the baseline and the metric's best
value:

    r = E_paper / |best − b_paper|           (E in the paper's direction, its own units)

The study's baseline has a headroom of its own, ``H = |best − L|``, where ``L`` is the metric on
the claim's reference, measured before any arm is compared: the pre-trained bases its arms start
from (their mean), else the untrained model, else the far end of the metric's range. The paper's
effect on the study's scale is the same share of that headroom,

    T = r · H,

and δ is half of it, never above a third of the headroom:

    δ = min(T / 2, H / 3).

An effect below δ is less than half of what the paper reports, carried to this study's levels:
"negligible" then cannot be "the paper's effect, reproduced". δ and the paper's effect come from
one quantity, read once (:class:`PublishedEffect`): the claim's own published comparison, with
its metric, direction and datasets (:class:`paperlib.study.plan.claims.PaperEffect`). A claim the
paper states without a number takes the paper's lead over its runner-up on the same metric in
its own table (:class:`PaperLead`); a metric no table of the paper prints takes the smallest share
among that paper's leads (:func:`smallest_share`), the most cautious of them.

:func:`translate` applies the rule; :class:`Translation` carries every number a claim row shows
(the paper's effect in its units, its share, the reference, the translation, δ and which bound
binds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import fmean

from paperlib.tables import published_table, published_where

NAME_KEYS = ("model", "variant", "captions")  # what names a row in the published tables
HALF = 0.5  # δ is at most this share of the translated effect
THIRD = 1 / 3  # ... and at most this share of the study baseline's headroom


@dataclass(frozen=True)
class PublishedEffect:
    """One published comparison in the paper's own units: the ``effect`` (positive on the
    paper's side), its baseline's ``level`` and the metric's ``best`` value, with ``where`` it is
    read (table and rows)."""

    effect: float
    level: float
    best: float
    where: str

    @property
    def headroom(self) -> float:
        """The paper's baseline's room to the best value."""
        return abs(self.best - self.level)

    @property
    def share(self) -> float:
        """``r``: the share of its baseline's headroom the paper's effect closes."""
        if not self.headroom > 0:
            raise ValueError(f"{self.where}: the baseline sits at the best value ({self.best:g})")
        return self.effect / self.headroom


@dataclass(frozen=True)
class Translation:
    """The rule's reading for one claim (module docstring), in the study's units."""

    published: PublishedEffect
    reference: float  # L: the claim's reference level of the metric
    reference_source: str
    best: float  # the metric's best value, the study's units
    translated: float  # T = r · H
    delta: float  # min(T / 2, H / 3)
    binds: str  # "half the translated effect" | "a third of the headroom"
    source: str  # the published effect's kind: "the claim's own" | "the paper's lead" | ...

    @property
    def headroom(self) -> float:
        return abs(self.best - self.reference)

    def as_dict(self) -> dict:
        """JSON-ready fields (``claims.json``'s ``smallest_rule``)."""
        p = self.published
        return {
            "paper_effect": p.effect,
            "paper_baseline": p.level,
            "paper_best": p.best,
            "paper_where": p.where,
            "share": p.share,
            "reference": self.reference,
            "reference_source": self.reference_source,
            "headroom": self.headroom,
            "translated": self.translated,
            "delta": self.delta,
            "binds": self.binds,
            "source": self.source,
        }

    def reason(self) -> str:
        """The rule in one sentence with this claim's numbers."""
        p = self.published
        return (
            f"{self.source} ({p.where}): {p.effect:.4g} of the baseline's {p.headroom:.4g} to "
            f"its best, a share {p.share:.3g}; the reference ({self.reference_source}) at "
            f"{self.reference:.4g} leaves {self.headroom:.4g}, so the paper's effect here is "
            f"{self.translated:.4g} and δ = {self.delta:.4g} ({self.binds})"
        )


def translate(
    published: PublishedEffect, reference: float, reference_source: str, best: float, source: str
) -> Translation:
    """The rule of the module docstring: ``published`` carried onto a study baseline at
    ``reference`` (its headroom to ``best``, the study's units)."""
    if not math.isfinite(reference):
        raise ValueError(f"the reference level must be finite; got {reference}")
    share, headroom = published.share, abs(best - reference)
    if not share > 0:
        raise ValueError(f"{published.where}: the paper's effect is not on its claim's side")
    translated = share * headroom
    half, third = HALF * translated, THIRD * headroom
    binds = "half the translated effect" if half <= third else "a third of the headroom"
    return Translation(
        published, reference, reference_source, best, translated, min(half, third), binds, source
    )


def delta_by_formula(share: float, reference: float, best: float) -> float:
    """The plain formula beside :func:`translate`: ``min(r · |best − L| / 2, |best − L| / 3)``."""
    headroom = abs(best - reference)
    return min(share * headroom / 2, headroom / 3)


@dataclass(frozen=True)
class PaperLead:
    """The lead of ``method`` over the best other row of ``table``, on the mean of ``columns``
    (paths into a row), among the rows matching ``where``, times ``scale`` (the study's units):
    the published effect of a claim its paper states without a number."""

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
        """The lead in the study's units (positive; a table where the method does not lead is
        refused, the rule has no effect to read there)."""
        name, mine, theirs = self.runner_up()
        lead = (mine - theirs) if self.better == "higher" else (theirs - mine)
        if not lead > 0:
            raise ValueError(
                f"{self.table}: {_name(self.method)} does not lead {name} on {self.label}"
            )
        return round(lead * self.scale, 6)

    def published(self, ceiling: float) -> PublishedEffect:
        """The lead as a :class:`PublishedEffect`: its baseline is the runner-up, its best the
        metric's ``ceiling`` (the study's units) in the paper's."""
        name, _, theirs = self.runner_up()
        return PublishedEffect(
            self.value() / self.scale, theirs, ceiling / self.scale, self.reason()
        )

    def reason(self) -> str:
        """The lead's reading, e.g. "HiMo's lead over FineLIP* on ... (HiMo Table 1, L/14):
        79.2 vs 77.8"."""
        name, mine, theirs = self.runner_up()
        size = " ".join(self.where.values())
        at = f"{published_where(self.table)}{', ' + size if size else ''}"
        who = self.wording.format(method=_name(self.method), runner_up=name)
        return f"{who} on {self.label} ({at}): {mine:.4g} vs {theirs:.4g}"


def smallest_share(leads: list[tuple[PaperLead, float]]) -> PublishedEffect:
    """Of ``(lead, its metric's ceiling)`` pairs (one paper's), the lead whose effect closes the
    smallest share of its runner-up's headroom: a metric no table prints borrows that share."""
    found = [lead.published(ceiling) for lead, ceiling in leads]
    if not found:
        raise ValueError("no lead to borrow a share from")
    return min(found, key=lambda p: p.share)


def _name(row: dict) -> str:
    return next(row[k] for k in NAME_KEYS if k in row)


def _read(row: dict, path: tuple[str, ...]) -> float | None:
    value = row
    for key in path:
        if not isinstance(value, dict) or value.get(key) is None:
            return None
        value = value[key]
    return float(value)
