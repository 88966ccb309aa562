"""The words the readings share: a paragraph with its summary point, ranges and lists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    """A paragraph read off a section's numbers and its one-line ``point`` for a summary;
    a notebook shows it as Markdown."""

    text: str
    point: str = ""

    def _repr_markdown_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text


def summary(readings: Iterable[Reading]) -> Reading:
    """The points of ``readings`` (those that have one) as a Markdown list."""
    return Reading("\n".join(f"- {r.point}" for r in readings if r.point))


def span(values: Iterable[float], fmt: str = ".2f") -> str:
    """The range of ``values`` as text: ``0.61–0.92``, signed ``-0.63 to -0.39`` (a format
    with ``+``), or one value when both ends print alike."""
    values = list(values)
    low, high = (number(f(values), fmt) for f in (min, max))
    if low == high:
        return low
    return f"{low} to {high}" if "+" in fmt else f"{low}–{high}"


def number(value: float, fmt: str) -> str:
    """``value`` in ``fmt``, a value that rounds to zero printed without a minus sign."""
    text = f"{value:{fmt}}"
    if text.startswith("-") and float(text.rstrip("%")) == 0:
        return ("+" if "+" in fmt else "") + text[1:]
    return text


def listing(names: Iterable[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = list(names)
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


def plural(count: int, one: str, many: str) -> str:
    """``one`` for a count of 1, else ``many``."""
    return one if count == 1 else many


def who(
    labels: Sequence[str], every: Sequence[str], nobody: str = "no model", all_: str = "every model"
) -> str:
    """``all_`` when ``labels`` holds all of ``every``, else their listing, else ``nobody``."""
    if labels and set(labels) == set(every):
        return all_
    return listing(labels) or nobody


def verb(labels: Sequence[str], every: Sequence[str], one: str, many: str) -> str:
    """The verb agreeing with :func:`who`'s subject: singular for ``every model`` or one model."""
    return many if 1 < len(labels) < len(every) else one


def interval_text(value: Mapping | None, fmt: str = "+.3f") -> str:
    """``mean [low, high]`` of a value with a 95 % ``interval``
    (``study.report.decided.item_value``), ``–`` for None."""
    if value is None:
        return "–"
    low, high = value["interval"]
    return f"{value['mean']:{fmt}} [{low:{fmt}}, {high:{fmt}}]"
