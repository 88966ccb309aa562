"""Output folders: the project writes only where it will not overwrite or delete a user's file.

A **training run folder** (``train.output_dir``) belongs to one run. It is accepted when it
does not exist yet, is empty, or holds only files training writes (:data:`RUN_FILES`: the
checkpoints, the log, the config, the lock and the temporary files of atomic writes) and
either the mark :data:`MARKER` that the loop leaves in every folder it starts, or a checkpoint
or lock of a run made before the mark existed. Anything else (a user's ``notes.txt``, their own
``config.json`` or ``log.jsonl`` in a folder the loop never started) is refused by name; nothing
is cleaned.

An **evaluation output folder** (``--output``) is shared with whatever else the user keeps
there (the study keeps its per-run files beside the results); there, each file an evaluation
would replace must be one an evaluation wrote (:func:`check_replaceable`).
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from paperlib.engine.config import ConfigError
from paperlib.engine.reporting import REPORT_FOLDERS
from paperlib.untrusted import brief

MARKER = ".paperlib-run"
# every name training writes in its folder (regular expressions on the whole name)
_WRITTEN = (r"last\.pt", r"step\d+\.pt", r"log\.jsonl", r"config\.json", r"launch\.json")
RUN_FILES = tuple(re.compile(p) for p in (*_WRITTEN, *REPORT_FOLDERS, re.escape(MARKER), r"\.lock"))
# atomic writes' temporaries: ".<name>.<random>.tmp" (paperlib.atomic)
TEMPORARY = tuple(re.compile(rf"\.{p}\.[^/]+\.tmp") for p in _WRITTEN)
_SHOWN = 5


def is_run_file(name: str) -> bool:
    """Whether training writes files named ``name`` (including its atomic temporaries)."""
    return any(p.fullmatch(name) for p in (*RUN_FILES, *TEMPORARY))


def writable_folder(folder: Path, option: str, keep: bool = True) -> Path:
    """``folder``, created if needed; ConfigError naming ``option`` when it is a file, lies
    under a file, or cannot be written (checked with a temporary file, removed again). With
    ``keep=False`` the folders the check created are removed again (nothing is left behind
    before the first result is written)."""
    created = [p for p in (folder, *folder.parents) if not p.exists()]  # deepest first
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(f"{option}: cannot write to {folder} ({reason})") from None
    finally:
        for path in [] if keep else created:
            if path.is_dir():
                path.rmdir()
    return folder


def check_run_folder(folder: Path, option: str = "train.output_dir") -> None:
    """What :func:`claim_run_folder` checks, leaving nothing behind: ``folder`` writable (the
    folders the check created removed again) and holding only a run's files."""
    writable_folder(folder, option, keep=False)
    if folder.is_dir():
        _refuse_foreign(folder, option)


def claim_run_folder(folder: Path, option: str = "train.output_dir") -> None:
    """Accept ``folder`` for a training run (module docstring) and mark it; ConfigError naming
    ``option`` and the files that are not a run's otherwise. Writes nothing but the mark."""
    writable_folder(folder, option)
    names = _refuse_foreign(folder, option)
    if MARKER not in names:
        (folder / MARKER).write_text(json.dumps({"written_by": "paperlib.engine.loop"}) + "\n")


def _refuse_foreign(folder: Path, option: str) -> list[str]:
    """The names in ``folder``; ConfigError naming ``option`` and the files that are not a
    run's when it holds any, or files without a run's mark."""
    names = sorted(entry.name for entry in folder.iterdir())
    foreign = [n for n in names if not is_run_file(n)]
    started = MARKER in names or "last.pt" in names or ".lock" in names
    if foreign or (names and not started):
        shown = foreign or names
        raise ConfigError(
            f"{option}: {folder} holds files a training run did not write "
            f"({', '.join(brief(n, 60) for n in shown[:_SHOWN])}"
            f"{', ...' if len(shown) > _SHOWN else ''}); choose an empty or new folder, or "
            "move them out (nothing was changed)"
        )
    return names


def orphaned_temporaries(folder: Path) -> list[Path]:
    """Temporary files of atomic writes in ``folder`` that an interrupted run left behind."""
    return [p for p in folder.iterdir() if any(t.fullmatch(p.name) for t in TEMPORARY)]


def check_replaceable(
    paths: Iterable[Path], written_here: Callable[[Path], bool], option: str
) -> None:
    """ConfigError naming ``option`` and the files among ``paths`` that exist but that
    ``written_here`` does not recognise as the project's output (they would be replaced)."""
    foreign = [p for p in paths if p.exists() and not (p.is_file() and written_here(p))]
    if foreign:
        raise ConfigError(
            f"{option}: {foreign[0].parent} holds {', '.join(p.name for p in foreign[:_SHOWN])}, "
            "which an evaluation did not write and would replace; choose another folder or "
            "move them out (nothing was changed)"
        )
