"""The papers' published numbers (one data file, sources named) and tables of this project's results."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

PUBLISHED_FILE = Path(__file__).resolve().parent / "published.json"


@lru_cache(maxsize=1)
def published() -> dict:
    """All published tables; each entry has ``source``, ``where`` (the paper and table, short),
    ``unit`` and ``rows``."""
    return json.loads(PUBLISHED_FILE.read_text())


def published_table(name: str) -> tuple[list[dict], str]:
    """``(rows, source)`` of one published table, e.g. ``"argent_ablations"``."""
    tables = published()
    if name not in tables or name.startswith("_"):
        known = ", ".join(k for k in tables if not k.startswith("_"))
        raise KeyError(f"no published table {name!r} in {PUBLISHED_FILE}; known: {known}")
    return tables[name]["rows"], tables[name]["source"]


def published_where(name: str) -> str:
    """The short name of one published table's place in its paper, e.g. ``"ARGENT Table 3"``."""
    published_table(name)  # the named error for an unknown table
    return published()[name]["where"]
