"""Code versions that train alike: ``results/code-versions.json``.

A run record names the training code that made it by its hash (``paperlib.provenance``), and
the study re-trains a run made by other code. Some other code trains the same: the same source
hashed by an older hash function, or a change shown to leave every run of the smoke study
bit-identical (``python -m paperlib.study.equivalence``). The file records each such pair of
hashes with its evidence::

    {"equivalences": [{"from": "<sha256>", "to": "<sha256>",
                       "evidence": {"kind": "same source files", ...}}, ...]}

and :func:`equivalent_hashes` gives every hash a recorded chain of pairs joins to a code hash
(each pair read both ways). The file is read as untrusted input: a bad one is refused naming
the file, the field, what was expected and what was found.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.study.reader import REPO_ROOT
from paperlib.untrusted import brief, unique_keys

CODE_VERSIONS = REPO_ROOT / "results" / "code-versions.json"
EVIDENCE_KINDS = ("same source files", "bit-identical smoke study")
TOP_KEYS = ("about", "equivalences")
ABOUT = (
    "Training-code hashes (paperlib.provenance.code_hash) recorded as training alike, each "
    "pair with its evidence; the study keeps a run made by a hash joined to the checkout's "
    "(paperlib.study.code_versions)."
)
_SHA256 = re.compile(r"[0-9a-f]{64}")


class CodeVersionsError(ValueError):
    """``code-versions.json`` is not what it must be; the message names the file and field."""


def _refuse(path: Path, field: str, expected: str, value: Any) -> CodeVersionsError:
    return CodeVersionsError(f"{path}: {field} must be {expected}; got {brief(value, 80)}")


def _check_hash(path: Path, field: str, value: Any) -> str:
    """``value`` when it is a SHA-256 hex digest, else :class:`CodeVersionsError`."""
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        raise _refuse(path, field, "a code hash (64 lowercase hex digits)", value)
    return value


def _check_entry(path: Path, index: int, entry: Any) -> dict[str, Any]:
    """One equivalence: an object with ``from`` and ``to`` hashes and an ``evidence`` object
    of a known ``kind``."""
    field = f"equivalences[{index}]"
    if not isinstance(entry, dict):
        raise _refuse(path, field, "an object with from, to and evidence", entry)
    for key in ("from", "to"):
        _check_hash(path, f"{field}.{key}", entry.get(key))
    evidence = entry.get("evidence")
    if not isinstance(evidence, dict):
        raise _refuse(path, f"{field}.evidence", "an object saying why they train alike", evidence)
    if evidence.get("kind") not in EVIDENCE_KINDS:
        raise _refuse(
            path, f"{field}.evidence.kind", f"one of {EVIDENCE_KINDS}", evidence.get("kind")
        )
    return entry


def check_code_versions(data: Any, path: Path) -> list[dict[str, Any]]:
    """The equivalences of a parsed ``code-versions.json`` (``path`` names it in errors)."""
    if not isinstance(data, dict) or not isinstance(data.get("equivalences"), list):
        raise _refuse(path, "the top level", 'an object with an "equivalences" list', data)
    if unknown := sorted(set(data) - set(TOP_KEYS)):
        raise _refuse(path, "the top level", f"keys among {TOP_KEYS}", unknown)
    return [_check_entry(path, i, entry) for i, entry in enumerate(data["equivalences"])]


def read_equivalences(path: Path | None = None) -> list[dict[str, Any]]:
    """The equivalences recorded in ``path`` (default :data:`CODE_VERSIONS`; none where the
    file does not exist); :class:`CodeVersionsError` naming the file for one that is not JSON
    or not of the form."""
    path = path or CODE_VERSIONS
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(), object_pairs_hook=unique_keys(str(path)))
    except (json.JSONDecodeError, RecursionError) as error:
        raise CodeVersionsError(f"{path}: not valid JSON ({str(error)[:200]})") from None
    except ValueError as error:  # a repeated key, named by unique_keys
        raise CodeVersionsError(str(error)) from None
    return check_code_versions(data, path)


def equivalent_hashes(current: str, path: Path | None = None) -> set[str]:
    """``current`` and every code hash a chain of recorded equivalences joins to it."""
    neighbours: dict[str, set[str]] = {}
    for entry in read_equivalences(path):
        neighbours.setdefault(entry["from"], set()).add(entry["to"])
        neighbours.setdefault(entry["to"], set()).add(entry["from"])
    reached, todo = {current}, [current]
    while todo:
        for other in neighbours.get(todo.pop(), set()) - reached:
            reached.add(other)
            todo.append(other)
    return reached


def add_equivalence(entry: dict[str, Any], path: Path | None = None) -> None:
    """Append ``entry`` to the equivalences recorded in ``path`` (default
    :data:`CODE_VERSIONS`), checked as the reader checks it."""
    path = path or CODE_VERSIONS
    entries = read_equivalences(path) + [entry]
    data = {"about": ABOUT, "equivalences": entries}
    check_code_versions(data, path)
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")
