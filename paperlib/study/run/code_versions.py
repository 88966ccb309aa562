"""Code versions that train alike: ``results/code-versions.json``.

A run record names the training code that made it by its hash (``paperlib.provenance``), and
the study re-trains a run made by other code. Some other code trains the same: the same source
hashed by an older hash function, or a change shown to leave every run of the smoke study
bit-identical (``python -m paperlib.study.run.equivalence``). The file records each such pair of
hashes with its evidence::

    {"equivalences": [{"from": "<sha256>", "to": "<sha256>",
                       "evidence": {"kind": "same source files", ...}}, ...]}

and :func:`equivalent_hashes` gives every hash a recorded chain of pairs joins to a code hash
(each pair read both ways). The file is read as untrusted input: a bad one is refused naming
the file, the field, what was expected and what was found. Each kind of evidence must carry
what it rests on (:data:`EVIDENCE_FIELDS`): ``same source files`` the commit and both hashes
of its source (equal to the pair's ``from`` and ``to``), ``bit-identical smoke study`` the
revision compared and each compared run's hashes. :func:`other_code` names the run records
that neither the checkout's code nor a recorded equivalent made.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.provenance import read_run_record
from paperlib.study.paths import REPO_ROOT
from paperlib.untrusted import brief, unique_keys

CODE_VERSIONS = REPO_ROOT / "results" / "code-versions.json"
EVIDENCE_KINDS = ("same source files", "bit-identical smoke study")
TOP_KEYS = ("about", "equivalences")
ABOUT = (
    "Training-code hashes (paperlib.provenance.code_hash) recorded as training alike, each "
    "pair with its evidence; the study keeps a run made by a hash joined to the checkout's "
    "(paperlib.study.run.code_versions)."
)
_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
# what each kind of evidence must hold beside its kind
EVIDENCE_FIELDS = {
    "same source files": ("commit", "source_bytes_hash", "code_hash"),
    "bit-identical smoke study": ("revision", "runs_compared", "runs"),
}


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
    _check_evidence(path, f"{field}.evidence", evidence, entry)
    return entry


def _check_evidence(path: Path, field: str, evidence: dict[str, Any], entry: dict) -> None:
    """The fields the evidence's kind rests on (:data:`EVIDENCE_FIELDS`), each of its form: a
    commit id; the source's two hashes, those the pair joins; the runs compared, each with the
    hashes of its items and log."""
    kind = evidence["kind"]
    for key in EVIDENCE_FIELDS[kind]:
        if key not in evidence:
            raise _refuse(path, f"{field}.{key}", f"present (the evidence of {kind!r})", None)
    commit = "commit" if kind == "same source files" else "revision"
    if not isinstance(evidence[commit], str) or not _COMMIT.fullmatch(evidence[commit]):
        raise _refuse(path, f"{field}.{commit}", "a commit id (40 hex digits)", evidence[commit])
    if kind == "same source files":
        for key, side in (("source_bytes_hash", "from"), ("code_hash", "to")):
            if _check_hash(path, f"{field}.{key}", evidence[key]) != entry[side]:
                raise _refuse(path, f"{field}.{key}", f"the pair's {side!r} hash", evidence[key])
        return
    runs = evidence["runs"]
    if not isinstance(runs, dict) or not runs:
        raise _refuse(path, f"{field}.runs", "an object of the runs compared", runs)
    for name, hashes in runs.items():
        if not isinstance(hashes, dict) or set(hashes) != {"items", "log"}:
            raise _refuse(path, f"{field}.runs.{name}", "an object of items and log", hashes)
        if hashes["items"] is not None:
            _check_hash(path, f"{field}.runs.{name}.items", hashes["items"])
        _check_hash(path, f"{field}.runs.{name}.log", hashes["log"])
    if evidence["runs_compared"] != len(runs):
        raise _refuse(
            path, f"{field}.runs_compared", f"the number of runs listed ({len(runs)})",
            evidence["runs_compared"],
        )  # fmt: skip


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


class OtherCodeError(ValueError):
    """Results made by training code that is neither the checkout's nor recorded alike."""


def other_code(counts: dict[str | None, int], current: str, path: Path | None = None) -> dict:
    """Of ``counts`` (runs per code hash; None for runs recorded without provenance), those
    made by code neither ``current`` nor recorded alike in ``path``."""
    joined = equivalent_hashes(current, path)
    return {code: n for code, n in counts.items() if code not in joined}


def record_counts(records: list[Path]) -> dict[str | None, int]:
    """Runs per code hash of the ``run.done`` files ``records`` (None: no provenance)."""
    counts: dict[str | None, int] = {}
    for done in records:
        code = (read_run_record(done).get("provenance") or {}).get("code_hash")
        counts[code] = counts.get(code, 0) + 1
    return counts


def refuse_other_code(counts: dict[str | None, int], where: str, current: str) -> None:
    """:class:`OtherCodeError` naming ``where``, the hashes and their runs when some of
    ``counts`` (runs per code hash) were made by other code (:func:`other_code`)."""
    found = other_code(counts, current)
    if not found:
        return
    made = ", ".join(f"{n} by {(code or 'code not recorded')[:12]}" for code, n in found.items())
    raise OtherCodeError(
        f"{where}: {sum(found.values())} of its {sum(counts.values())} runs were trained by "
        f"other code than this checkout's ({current[:12]}): {made}, which "
        "results/code-versions.json does not record as training alike, so they do not count "
        "as finished here (--status) and what they decide is not this code's; train them again "
        "with this code, or record that the change trains alike (python -m "
        "paperlib.study.run.equivalence --against REV)"
    )


def add_equivalence(entry: dict[str, Any], path: Path | None = None) -> None:
    """Append ``entry`` to the equivalences recorded in ``path`` (default
    :data:`CODE_VERSIONS`), checked as the reader checks it."""
    path = path or CODE_VERSIONS
    entries = read_equivalences(path) + [entry]
    data = {"about": ABOUT, "equivalences": entries}
    check_code_versions(data, path)
    atomic_write_text(path, json.dumps(data, indent=1) + "\n")
