"""Which code made a result: the git commit, whether tracked files were modified, and a hash of
the source that trains and evaluates a run (:data:`TRAINING_CODE`).

Every study run record (``run.done``) carries :func:`run_provenance`; the study re-trains a run
whose recorded ``code_hash`` is neither the checkout's nor recorded as training alike
(``paperlib.study.run.code_versions``), and :func:`code_versions` tells how many versions of the
code a set of records was made by. The commit alone would not do: a run made from a modified
checkout records the commit it started from.

:func:`code_hash` covers what the training code does: each Python file's syntax tree (its
statements, names and literals) and each JSON file's data. It ignores what cannot change a
run: comments, layout, the docstrings of modules, classes and functions, and the key order and
spacing of a JSON file. The tree is Python's own (``ast.dump``), so another Python minor version
may hash the same source otherwise (run records name their Python version too).
:func:`source_bytes_hash` is the older hash over the files' bytes, with which runs recorded
before this one were made.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

PACKAGE_ROOT = Path(__file__).resolve().parent

TRAINING_CODE: tuple[str, ...] = (
    "__init__.py",
    "atomic.py",
    "exit_status.py",
    "collectives.py",
    "processes.py",
    "segments.py",
    "state_files.py",
    "tensor_checks.py",
    "untrusted.py",
    "geometry",
    "data",
    "models",
    "model_configs",
    "losses",
    "metrics",
    "engine",
    "train.py",
    "evaluate.py",
    "study/run/exports.py",
)
"""The source that trains and evaluates a study run, relative to the package: every paperlib
module that ``paperlib.train`` and ``paperlib.evaluate`` import (directly or not; a package
counts whole, its ``.py`` and ``.json`` files, e.g. the model configs and the zero-shot suite),
and ``study/run/exports.py``, which evaluates a run and writes its per-item values. Left out:
what only reads or presents results (``tables``, whose ``beside_published`` formats the
evaluation's printed table; ``study.decide``, ``study.report``, ``figures``, the notebooks) and
what plans runs (their configs are recorded on their own)."""

CODE_SUFFIXES = (".py", ".json")
RECORD_KEYS = ("run", "config", "init_sha256", "environment")
PROVENANCE_KEYS = ("commit", "dirty", "code_hash")


class RunRecordError(ValueError):
    """A ``run.done`` is not JSON or lacks a key; the message names the file."""


def training_code_files(root: Path = PACKAGE_ROOT) -> list[Path]:
    """The files of :data:`TRAINING_CODE` under the package folder ``root``, sorted by their
    path relative to it."""
    files: list[Path] = []
    for entry in TRAINING_CODE:
        path = root / entry
        if path.is_dir():
            files += [
                p
                for p in path.rglob("*")
                if p.suffix in CODE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts
            ]
        else:
            files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


DOCSTRING_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(statement: ast.stmt) -> bool:
    """Whether a first statement is a docstring: an expression that is a string constant."""
    value = statement.value if isinstance(statement, ast.Expr) else None
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def _without_docstrings(tree: ast.Module) -> ast.Module:
    """``tree`` with the docstring of its module and of every class and function removed; a
    class or function body left empty holds ``pass`` (a module's may be empty)."""
    for node in ast.walk(tree):
        if isinstance(node, DOCSTRING_OWNERS) and node.body and _is_docstring(node.body[0]):
            empty = [] if isinstance(node, ast.Module) else [ast.Pass()]
            node.body = node.body[1:] or empty
    return tree


def normalised_python(source: str | bytes, filename: str = "<source>") -> str:
    """The syntax tree of a Python source without docstrings, as ``ast.dump`` writes it (no
    line numbers): equal for sources that differ only in comments, layout and docstrings."""
    tree = _without_docstrings(ast.parse(source, filename=filename))
    return ast.dump(tree, annotate_fields=True, include_attributes=False)


def normalised_json(text: str | bytes) -> str:
    """A JSON text's data written one way (keys sorted, no spaces)."""
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


def normalised_code(path: Path) -> bytes:
    """What :func:`code_hash` hashes of one training-code file: :func:`normalised_python` of a
    ``.py`` file, :func:`normalised_json` of a ``.json`` file."""
    return _normalised(path.read_bytes(), path.suffix, str(path))


@functools.lru_cache(maxsize=1024)
def _normalised(data: bytes, suffix: str, filename: str) -> bytes:
    """:func:`normalised_code` of a file's bytes, kept per content: parsing the training code
    takes a fifth of a second, and the study asks for the hash once per run."""
    if suffix == ".py":
        return normalised_python(data, filename).encode()
    try:
        return normalised_json(data).encode()
    except ValueError as error:
        raise ValueError(f"{filename}: not valid JSON ({error})") from None


def _files_hash(root: Path, content: Callable[[Path], bytes]) -> str:
    """SHA-256 over the relative path and ``content`` of every file of
    :func:`training_code_files` (each path and length delimited, so no two file sets hash
    alike by concatenation)."""
    digest = hashlib.sha256()
    for path in training_code_files(root):
        data = content(path)
        digest.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def code_hash(root: Path = PACKAGE_ROOT) -> str:
    """The training code's version: SHA-256 over every training-code file's
    :func:`normalised_code`, so comments, layout and docstrings leave it unchanged."""
    return _files_hash(root, normalised_code)


def source_bytes_hash(root: Path = PACKAGE_ROOT) -> str:
    """SHA-256 over every training-code file's bytes: the code hash of the runs recorded before
    :func:`code_hash` normalised the source."""
    return _files_hash(root, Path.read_bytes)


def _git(root: Path, *args: str) -> str | None:
    """``git args`` in ``root``'s checkout: its output, or None outside one (or without git)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def run_provenance(root: Path = PACKAGE_ROOT) -> dict[str, Any]:
    """``{"commit", "dirty", "code_hash"}`` of the code in ``root``: the checkout's HEAD (None
    outside a checkout), whether tracked files differ from it, and :func:`code_hash`."""
    commit = _git(root, "rev-parse", "HEAD")
    status = _git(root, "status", "--porcelain", "--untracked-files=no") if commit else None
    return {"commit": commit, "dirty": bool(status), "code_hash": code_hash(root)}


def read_run_record(done: Path) -> dict[str, Any]:
    """One ``run.done`` with the keys every record has (:data:`RECORD_KEYS`) and, where it has
    a ``provenance``, that object's keys; :class:`RunRecordError` naming the file otherwise.
    A record without ``provenance`` (written before runs recorded it) is returned as it is."""
    try:
        record = json.loads(done.read_text())
        missing = [k for k in RECORD_KEYS if k not in record]
        if "provenance" in record:
            missing += [f"provenance.{k}" for k in PROVENANCE_KEYS if k not in record["provenance"]]
    except (OSError, ValueError, TypeError) as error:
        raise RunRecordError(
            f"{done}: not a study run record ({type(error).__name__}: {error}); delete its "
            "folder and run the study again"
        ) from None
    if missing:
        raise RunRecordError(
            f"{done}: not a study run record (missing {', '.join(missing)}); delete its folder "
            "and run the study again"
        )
    return record


def code_versions(records: Iterable[Path]) -> set[str | None]:
    """The code hashes the ``run.done`` files ``records`` were made by; None stands for the
    records that do not say (no ``provenance``)."""
    versions: set[str | None] = set()
    for done in records:
        provenance = read_run_record(done).get("provenance")
        versions.add(provenance["code_hash"] if provenance else None)
    return versions
