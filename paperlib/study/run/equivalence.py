"""Recording that other code trains as this checkout's does (``results/code-versions.json``).

``--against REV`` runs the smoke study (``python -m paperlib.study --scale smoke``, as
``make reproduce`` does) twice in folders of its own: once from a ``git worktree`` of ``REV``
and once from this checkout (``--studies`` names one study where ``REV`` planned the other's
runs differently: only its runs are compared, and the evidence says so). Only when every run of the
two is bit for bit the same (its ``items.npz`` arrays, its ``log.jsonl`` records but for the timing
fields :data:`TIMING_FIELDS`, the feature spread and collapse verdict of its ``run.done``) does it
record the code hash that ``REV``'s own run records carry as training alike this checkout's,
with the runs compared, the machine's torch CPU capability and each run's hashes; otherwise it
prints what differs and exits 1. ``--same-source REV`` records that ``REV``'s training code
hashed by its bytes (``paperlib.provenance.source_bytes_hash``, the hash of the runs recorded
before the source was normalised) and by ``paperlib.provenance.code_hash`` is one version.

    python -m paperlib.study.run.equivalence --against HEAD
    python -m paperlib.study.run.equivalence --same-source HEAD
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperlib.provenance import code_hash, read_run_record, source_bytes_hash
from paperlib.study.paths import REPO_ROOT
from paperlib.study.run.code_versions import add_equivalence, equivalent_hashes

SCALE = "smoke"
STUDY_COMMAND = ("-m", "paperlib.study", "--scale", SCALE)
STUDIES = ("himo", "argent")  # both, unless a comparison names the one whose design both share
TIMING_FIELDS = ("samples_per_s", "cpu_seconds")  # log.jsonl fields that measure the machine
RECORD_FIELDS = ("feature_std", "collapsed")  # run.done fields the trained model decides
COMPARED = (
    "items.npz arrays (names, dtypes, shapes, bytes); log.jsonl records without "
    f"{', '.join(TIMING_FIELDS)}; run.done {', '.join(RECORD_FIELDS)}"
)
FOLDER = REPO_ROOT / "build" / "equivalence"


class StudyFailedError(RuntimeError):
    """The smoke study did not finish under one of the two checkouts."""


def _git(*args: str) -> str:
    """``git args`` in this repository; its output."""
    done = subprocess.run(
        ["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@contextlib.contextmanager
def worktree(commit: str, folder: Path) -> Iterator[Path]:
    """A detached ``git worktree`` of ``commit`` at ``folder`` for the block, removed after."""
    if folder.exists():
        shutil.rmtree(folder)
    _git("worktree", "prune")
    _git("worktree", "add", "--detach", str(folder), commit)
    try:
        yield folder
    finally:
        _git("worktree", "remove", "--force", str(folder))


def run_smoke_study(
    tree: Path, folder: Path, label: str, studies: tuple[str, ...] = STUDIES
) -> float:
    """The smoke study of ``studies`` from the checkout at ``tree`` with its results and runs in
    ``folder`` (emptied first); its lines relayed with ``label``; returns its wall seconds."""
    if folder.exists():
        shutil.rmtree(folder)
    env = {
        **os.environ,
        "PAPERLIB_RESULTS": str(folder / "results"),
        "PAPERLIB_RUNS": str(folder / "runs"),
        "PYTHONPATH": str(tree),
        "HF_HUB_OFFLINE": "1",
    }
    start, tail = time.perf_counter(), []
    with subprocess.Popen(
        [sys.executable, *STUDY_COMMAND, "--studies", *studies], cwd=tree, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    ) as proc:  # fmt: skip
        for line in proc.stdout:
            tail = (tail + [line.rstrip()])[-40:]
            if line.startswith("[study"):
                print(f"[equivalence {label}] {line.rstrip()}", flush=True)
    if proc.returncode != 0:
        raise StudyFailedError(
            f"the {SCALE} study under {label} exited {proc.returncode}:\n" + "\n".join(tail)
        )
    return time.perf_counter() - start


def run_folders(results: Path) -> dict[str, Path]:
    """Every run folder (one with a ``run.done``) of a study's results, by its relative path."""
    return {
        done.parent.relative_to(results).as_posix(): done.parent
        for done in sorted(results.glob("**/run.done"))
    }


def items_arrays(folder: Path) -> dict[str, np.ndarray]:
    """A run's per-item arrays (none for a run that is trained only)."""
    path = folder / "items.npz"
    if not path.is_file():
        return {}
    with np.load(path, allow_pickle=False) as items:
        return {name: items[name] for name in items.files}


def log_lines(folder: Path) -> list[str]:
    """A run's ``log.jsonl`` records without :data:`TIMING_FIELDS`, each as canonical JSON (so
    NaN equals NaN and key order does not count)."""
    lines = (folder / "log.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [
        json.dumps({k: v for k, v in r.items() if k not in TIMING_FIELDS}, sort_keys=True)
        for r in records
    ]


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays are bit for bit the same: dtype, shape and bytes."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def run_differences(ours: Path, theirs: Path) -> list[str]:
    """What differs between two runs of the same plan entry: ``items.npz`` arrays by name,
    ``log.jsonl`` by record index, and :data:`RECORD_FIELDS`; empty when bit-identical."""
    a, b = items_arrays(ours), items_arrays(theirs)
    differences = [
        f"items.npz:{name}"
        for name in sorted(set(a) | set(b))
        if name not in a or name not in b or not same_array(a[name], b[name])
    ]
    log_a, log_b = log_lines(ours), log_lines(theirs)
    if len(log_a) != len(log_b):
        differences.append(f"log.jsonl: {len(log_a)} records against {len(log_b)}")
    differences += [f"log.jsonl[{i}]" for i, (x, y) in enumerate(zip(log_a, log_b)) if x != y]
    record_a, record_b = read_run_record(ours / "run.done"), read_run_record(theirs / "run.done")
    differences += [f"run.done:{k}" for k in RECORD_FIELDS if record_a.get(k) != record_b.get(k)]
    return differences


def study_differences(ours: Path, theirs: Path) -> dict[str, list[str]]:
    """Per run of either study's results (``ours``: this checkout's, ``theirs``: the
    revision's), what differs (:func:`run_differences`); a run only one has is a difference."""
    a, b = run_folders(ours), run_folders(theirs)
    differences = {name: ["missing from the revision's study"] for name in sorted(set(a) - set(b))}
    differences |= {
        name: ["missing from this checkout's study"] for name in sorted(set(b) - set(a))
    }
    for name in sorted(set(a) & set(b)):
        if found := run_differences(a[name], b[name]):
            differences[name] = found
    return differences


@dataclass(frozen=True)
class StudyRun:
    """One smoke study: its results, wall seconds, and what its run records carry: the one
    code hash, the commits the runs started from and whether any checkout was modified."""

    results: Path
    seconds: float
    code: str
    commits: tuple[str, ...]
    modified: bool


def smoke_study(
    tree: Path, folder: Path, label: str, studies: tuple[str, ...] = STUDIES
) -> StudyRun:
    """:func:`run_smoke_study` and what its run records carry; ValueError when they carry
    several code hashes (the code changed while the study ran)."""
    seconds = run_smoke_study(tree, folder, label, studies)
    results = folder / "results" / SCALE
    made = [read_run_record(f / "run.done")["provenance"] for f in run_folders(results).values()]
    hashes = {p["code_hash"] for p in made}
    if len(hashes) != 1:
        raise ValueError(f"{label}: the runs carry {len(hashes)} code hashes; expected one")
    commits = tuple(sorted({p["commit"] for p in made}))
    return StudyRun(results, seconds, hashes.pop(), commits, any(p["dirty"] for p in made))


def run_hashes(results: Path) -> dict[str, dict[str, str | None]]:
    """Per run, SHA-256 of its ``items.npz`` (None for a run that is trained only) and of its
    ``log.jsonl`` records as compared (:func:`log_lines`)."""
    return {
        name: {
            "items": _file_hash(folder / "items.npz"),
            "log": hashlib.sha256("\n".join(log_lines(folder)).encode()).hexdigest(),
        }
        for name, folder in run_folders(results).items()
    }


def _file_hash(path: Path) -> str | None:
    """SHA-256 of a file's bytes; None where there is none."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def smoke_evidence(
    revision: StudyRun, checkout: StudyRun, studies: tuple[str, ...] = STUDIES
) -> dict[str, Any]:
    """The evidence of a bit-identical smoke study: what was run and compared, on what
    machine, and each run's hashes."""
    hashes = run_hashes(checkout.results)
    return {
        "kind": "bit-identical smoke study",
        "revision": revision.commits[0],
        "checkout_commits": list(checkout.commits),  # what its runs started from
        "checkout_modified": checkout.modified,
        "date": time.strftime("%Y-%m-%d"),
        "command": "python " + " ".join((*STUDY_COMMAND, "--studies", *studies)),
        "studies": list(studies),
        "compared": COMPARED,
        "runs_compared": len(hashes),
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "seconds": {"revision": round(revision.seconds), "checkout": round(checkout.seconds)},
        "runs": hashes,
    }


def _commit(rev: str) -> str:
    """The full commit id ``rev`` names."""
    return _git("rev-parse", "--verify", f"{rev}^{{commit}}")


def check_revision(
    rev: str, commit: str, checkout: StudyRun, folder: Path, studies: tuple[str, ...] = STUDIES
) -> bool:
    """Run the smoke study of ``studies`` at ``commit`` (named ``rev``) and compare it with this
    checkout's; record the equivalence when every run is bit-identical. Returns whether they
    were."""
    print(f"[equivalence] {rev} ({commit[:12]}): the {SCALE} study in a worktree", flush=True)
    with worktree(commit, folder / f"tree-{commit[:12]}") as tree:
        revision = smoke_study(tree, folder / f"revision-{commit[:12]}", rev, studies)
    if revision.commits != (commit,) or revision.modified:
        raise ValueError(f"{rev}: its runs name {revision.commits}; expected {commit} unmodified")
    if differences := study_differences(checkout.results, revision.results):
        for name, found in differences.items():
            print(f"[equivalence] {rev}: {name} differs: {', '.join(found[:8])}", flush=True)
        print(f"[equivalence] {rev}: {len(differences)} run(s) differ; nothing recorded")
        return False
    count = len(run_folders(checkout.results))
    print(f"[equivalence] {rev}: all {count} runs bit-identical", flush=True)
    old, current = revision.code, checkout.code
    if old in equivalent_hashes(current):
        print(f"[equivalence] {old[:12]} is already recorded as {current[:12]}'s equivalent")
        return True
    evidence = smoke_evidence(revision, checkout, studies)
    add_equivalence({"from": old, "to": current, "evidence": evidence})
    print(f"[equivalence] recorded {old[:12]} -> {current[:12]} in results/code-versions.json")
    return True


def against(revs: list[str], folder: Path, studies: tuple[str, ...] = STUDIES) -> bool:
    """:func:`check_revision` of every revision (named commits resolved first) against one
    smoke study of ``studies`` of this checkout; whether all were bit-identical."""
    commits, current = [_commit(rev) for rev in revs], code_hash()
    print(f"[equivalence] this checkout ({current[:12]}): the {SCALE} study", flush=True)
    checkout = smoke_study(REPO_ROOT, folder / "checkout", "checkout", studies)
    if checkout.code != current or code_hash() != current:
        raise ValueError("the training code changed while this checkout's study ran")
    checks = [check_revision(r, c, checkout, folder, studies) for r, c in zip(revs, commits)]
    return all(checks)


def same_source(rev: str, folder: Path) -> None:
    """Record that ``rev``'s training code hashed by bytes and normalised is one version."""
    commit = _commit(rev)
    with worktree(commit, folder / f"tree-{commit[:12]}") as tree:
        old, new = source_bytes_hash(tree / "paperlib"), code_hash(tree / "paperlib")
    if old in equivalent_hashes(new):
        print(f"[equivalence] {rev}: {old[:12]} is already recorded as {new[:12]}'s equivalent")
        return
    evidence = {"kind": "same source files", "commit": commit, "source_bytes_hash": old,
                "code_hash": new}  # fmt: skip
    add_equivalence({"from": old, "to": new, "evidence": evidence})
    print(f"[equivalence] {rev}: recorded {old[:12]} (bytes) -> {new[:12]} (normalised)")


def main(argv: list[str] | None = None) -> int:
    """The command line; exit status 1 when a revision's runs differ, 2 on a failure."""
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.study.run.equivalence",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--against", nargs="+", metavar="REV", help="compare smoke studies")
    what.add_argument("--same-source", nargs="+", metavar="REV", help="hash REV both ways")
    parser.add_argument("--folder", type=Path, default=FOLDER, help="worktrees and studies")
    parser.add_argument(
        "--studies", nargs="+", choices=STUDIES, default=list(STUDIES),
        help="the studies whose smoke runs are compared (default both; name one where the "
        "revision planned the other differently)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    folder = args.folder.resolve()  # the studies run from other folders
    try:
        if args.same_source:
            for rev in args.same_source:
                same_source(rev, folder)
            return 0
        return 0 if against(args.against, folder, tuple(args.studies)) else 1
    except (subprocess.CalledProcessError, StudyFailedError, ValueError) as error:
        detail = getattr(error, "stderr", None) or ""
        print(f"equivalence: {error} {detail}".strip(), file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
