"""Timings the README states are the committed benchmark records' (measured by a script in
``benchmarks/``, never typed by hand)."""

from __future__ import annotations

import json

from paperlib.notebooks import REPO_ROOT

STUDY_EXECUTORS = REPO_ROOT / "results" / "benchmarks" / "study_executors.json"


def executors_sentence(record: dict) -> str:
    """The README's sentence on the smoke study's wall time per executor."""
    rows = record["smoke_study"]
    local, one, two = (rows[k] for k in ("local, 2 workers", "ray, 1 node of 2 CPUs",
                                         "ray, 2 nodes of 1 + 2 CPUs"))  # fmt: skip
    return (
        f"On a {record['cpus']}-core machine the smoke study took {local['seconds']} s on the "
        f"local executor (2 workers), {one['seconds']} s on one Ray node of 2 CPUs "
        f"({one['ratio_to_local']}×) and {two['seconds']} s on two nodes of 1 + 2 CPUs "
        f"({two['ratio_to_local']}×), one after another (`benchmarks/study_executors.py`, "
        "`results/benchmarks/study_executors.json`)."
    )


def test_the_readme_s_executor_timings_are_the_record_s():
    record = json.loads(STUDY_EXECUTORS.read_text())
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    assert executors_sentence(record) in readme
    for row in record["smoke_study"].values():
        assert row["seconds"] > 0
    # the README adds that a second node on one machine does not speed the study up
    assert record["smoke_study"]["ray, 2 nodes of 1 + 2 CPUs"]["ratio_to_local"] >= 1
