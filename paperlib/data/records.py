"""One set of checks for dataset records, used by every loader of a user-given file.

A loader reads each record (a JSON object, a CSV row, a line, a shard entry) through a
:class:`Record`, which knows the dataset, where the record sits (``file line 3``) and the
dataset's layout, and checks each field as it is read:

- a field exists (``field``) and has its type: **non-empty text** (``text``), a list of texts
  (``texts``; with ``cumulative=True`` each one extends the one before, as HiMo-Docci's
  prefixes do), an **integer** in range (``integer``), an id (``identifier``);
- an image path stays **inside its root** (``path``) as written: relative, without ``..``
  leaving the root. Symbolic links inside the root are followed wherever they lead: they are
  the layout the user made (ShareGPT4V's image folders are usually links to where each source
  set is kept), while the paths a dataset file names are checked;
- ids are **unique** across the records of a file (:func:`unique_ids`).

Every failure is a :class:`DatasetFormatError` that names the dataset, the file and record,
the field, what was found (shortened) and what the layout expects.
"""

from __future__ import annotations

import os
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paperlib.untrusted import brief

__all__ = ["DatasetFormatError", "Record", "extends", "unique_ids"]


class DatasetFormatError(ValueError):
    """A dataset file exists but lacks a field or breaks the published layout."""


def extends(previous: str, following: str) -> bool:
    """Whether ``following`` is a longer cumulative prefix than ``previous``: it begins with
    ``previous`` up to its final punctuation and spaces (HiMo-Docci drops a prefix's closing
    full stop where the next sentence continues it), and is longer."""
    stem = previous.rstrip()
    while stem and unicodedata.category(stem[-1]).startswith("P"):
        stem = stem[:-1].rstrip()
    return len(following) > len(previous) and following.startswith(stem)


@dataclass(frozen=True)
class Record:
    """One record of ``dataset`` at ``where`` (its file and position), laid out as ``layout``."""

    dataset: str
    where: str
    layout: str
    item: Any

    def error(self, problem: str) -> DatasetFormatError:
        return DatasetFormatError(f"{self.dataset}: {self.where}{problem}; expected {self.layout}")

    def field(self, key: str | int) -> Any:
        """``item[key]``; a DatasetFormatError naming the record and the field without it."""
        try:
            return self.item[key]
        except (KeyError, IndexError, TypeError):
            raise self.error(f" has no field {key!r}") from None

    def _bad(self, key: str | int, what: str, value: Any) -> DatasetFormatError:
        return self.error(f": {key!r} must be {what}, got {brief(value, 80)}")

    def check_text(self, value: Any, key: str | int) -> str:
        """``value`` (field ``key``) when it is a string with a non-space character."""
        if not isinstance(value, str) or not value.strip():
            raise self._bad(key, "non-empty text", value)
        return value

    def text(self, key: str | int) -> str:
        """Field ``key`` as non-empty text."""
        return self.check_text(self.field(key), key)

    def texts(self, key: str | int, cumulative: bool = False) -> list[str]:
        """Field ``key`` as a non-empty list of non-empty texts; with ``cumulative``, each
        extends the one before (:func:`extends`)."""
        value = self.field(key)
        if not isinstance(value, list) or not value:
            raise self._bad(key, "a list of strings, not empty", value)
        for i, text in enumerate(value):
            self.check_text(text, f"{key}[{i}]")
        if cumulative:
            for i, (a, b) in enumerate(zip(value, value[1:]), 1):
                if not extends(a, b):
                    raise self.error(
                        f": {key!r} must list cumulative prefixes, each extending the one "
                        f"before; [{i}] {brief(b, 60)} does not extend [{i - 1}] {brief(a, 60)}"
                    )
        return value

    def integer(self, key: str | int, minimum: int = 0, value: Any = None) -> int:
        """Field ``key`` (or the given ``value``, e.g. decoded text) as an integer at least
        ``minimum``; digits in a string count."""
        value = self.field(key) if value is None else value
        number = value.strip() if isinstance(value, str) else value
        if isinstance(number, str) and number.lstrip("-").isdigit():
            number = int(number)
        if isinstance(number, bool) or not isinstance(number, int) or number < minimum:
            raise self._bad(key, f"an integer >= {minimum}", value)
        return number

    def identifier(self, key: str | int) -> int | str:
        """Field ``key`` as an id: an integer or non-empty text."""
        value = self.field(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return self.check_text(value, key)

    def path(self, key: str | int, root: str | Path, value: Any = None) -> Path:
        """``root / field`` (or ``root / value``) for a path that names a file inside ``root``
        as written; an absolute path, a ``..`` that leaves the root, the root itself or a NUL
        byte is refused (a symbolic link inside the root is followed)."""
        text = self.text(key) if value is None else self.check_text(value, key)
        normal = os.path.normpath(text)
        if (
            "\x00" in text
            or os.path.isabs(text)
            or normal in (".", "..")
            or normal.startswith("../")
        ):
            raise self._bad(key, f"a path inside {root}", text)
        return Path(root) / text


def unique_ids(ids: Sequence[Any], dataset: str, source: str | Path) -> None:
    """DatasetFormatError naming ``source`` and the first id that occurs more than once."""
    counts = Counter(ids)
    repeated = next((i for i in ids if counts[i] > 1), None)
    if repeated is not None:
        raise DatasetFormatError(
            f"{dataset}: {source}: id {brief(repeated, 60)} occurs {counts[repeated]} times; "
            "expected one record per image"
        )
