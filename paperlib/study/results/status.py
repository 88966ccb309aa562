"""Where a study stands, stage by stage: its runs planned and finished and the core-seconds the
finished ones took (``python -m paperlib.study --status``). A study too long for one sitting
is trained in parts (runs resume and are kept while the code that trains them is unchanged or
recorded as training alike, ``paperlib.study.run.code_versions``); this tells what is left and,
from the finished runs' mean, about how long it will take, and which of those codes made the
finished runs."""

from __future__ import annotations

from typing import Any

from paperlib.provenance import code_hash
from paperlib.study.plan.design import Run, plan, recipe_plan, run_target, stage_of
from paperlib.study.plan.recipe import RecipeMissingError
from paperlib.study.results.files import read_run_seconds
from paperlib.study.run.execution import finished_record


def record_seconds(record: dict[str, Any]) -> float:
    """A checked ``run.done`` record's training plus evaluation seconds."""
    return record.get("train_seconds", 0.0) + record.get("eval_seconds", 0.0)


def stage_seconds(runs: list[Run], scale_name: str) -> dict[str, float]:
    """Per stage, the seconds of its runs that have a ``run.done`` (whichever invocation made
    them)."""
    seconds: dict[str, float] = {}
    for run in runs:
        done = run_target(run, scale_name) / "run.done"
        if done.is_file():
            stage = stage_of(run)
            seconds[stage] = seconds.get(stage, 0.0) + record_seconds(read_run_seconds(done))
    return seconds


def stage_status(runs: list[Run], scale_name: str) -> dict[str, dict[str, Any]]:
    """Per stage (in plan order): runs planned, runs finished (``execution.finished``: made by
    this code, config and environment) and the finished runs' seconds."""
    rows: dict[str, dict[str, Any]] = {}
    for run in runs:
        row = rows.setdefault(stage_of(run), {"planned": 0, "finished": 0, "seconds": 0.0})
        row["planned"] += 1
        if (done := run_target(run, scale_name) / "run.done").is_file():
            read_run_seconds(done)  # checked before the record is compared with the plan
        if (record := finished_record(run, scale_name)) is not None:
            row["finished"] += 1
            row["seconds"] += record_seconds(record)
    return rows


def study_status(
    scale_name: str, studies: tuple[str, ...] = ("himo", "argent")
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """:func:`stage_status` of the recipe stage and, once ``recipe.json`` has its picks, of
    every planned stage; with the reason the plan is not known yet (else None)."""
    rows = stage_status(recipe_plan(scale_name, studies), scale_name)
    try:
        runs = plan(scale_name, studies)
    except RecipeMissingError as error:
        return rows, f"the other stages are planned from the recipe's picks ({error})"
    return {**rows, **stage_status(runs, scale_name)}, None


def status_lines(
    rows: dict[str, dict[str, Any]], waiting: str | None, workers: int = 2
) -> list[str]:
    """The status as lines: per stage finished / planned and core-seconds, an estimate of what
    is left where a stage has finished runs, and the total."""
    lines, left = [], 0.0
    for stage, row in rows.items():
        line = f"{stage}: {row['finished']} of {row['planned']} runs, {row['seconds']:.0f} core-s"
        if row["finished"] and row["finished"] < row["planned"]:
            more = row["seconds"] / row["finished"] * (row["planned"] - row["finished"])
            left += more
            line += f"; about {more:.0f} core-s left at its finished runs' mean"
        elif row["finished"] < row["planned"]:
            line += "; none finished yet"
        lines.append(line)
    spent = sum(row["seconds"] for row in rows.values())
    done = all(row["finished"] == row["planned"] for row in rows.values()) and not waiting
    lines.append(
        f"spent {spent:.0f} core-s (about {spent / workers / 60:.0f} min on {workers} workers); "
        + (
            "every planned run finished"
            if done
            else f"at least {left:.0f} core-s left in the stages that have finished runs"
            + _unestimated(rows)
        )
    )
    return lines + ([waiting] if waiting else [])


def _unestimated(rows: dict[str, dict[str, Any]]) -> str:
    """``"; N runs more in stages with none finished"`` (empty when there are none)."""
    count = sum(row["planned"] for row in rows.values() if not row["finished"])
    return f"; {count} runs more in stages with none finished" if count else ""


def finished_code_hashes(runs: list[Run], scale_name: str) -> dict[str, int]:
    """Per training-code hash, how many of ``runs`` are finished by a record it made (the
    checkout's hash or one recorded as training alike)."""
    counts: dict[str, int] = {}
    for run in runs:
        if (record := finished_record(run, scale_name)) is not None:
            code = record["provenance"]["code_hash"]
            counts[code] = counts.get(code, 0) + 1
    return counts


def code_version_line(counts: dict[str, int], current: str) -> str | None:
    """Which code made the finished runs (:func:`finished_code_hashes`), as one line; None when
    none is finished."""
    if not counts:
        return None
    own = f"this checkout's training code ({current[:12]})"
    if set(counts) == {current}:
        return f"every finished run was made by {own}"
    others = [code for code in counts if code != current]
    made = [f"{counts[code]} made by {code[:12]}" for code in others]
    made += [f"{counts[current]} by {own}"] if current in counts else []
    return (
        f"finished runs: {', '.join(made)}; results/code-versions.json records "
        f"{', '.join(code[:12] for code in others)} as training alike this checkout's code"
    )


def study_code_line(scale_name: str, studies: tuple[str, ...] = ("himo", "argent")) -> str | None:
    """:func:`code_version_line` of the finished runs of the recipe stage and, once its picks
    are known, of every planned stage."""
    try:
        runs = plan(scale_name, studies)
    except RecipeMissingError:
        runs = []
    counts = finished_code_hashes(recipe_plan(scale_name, studies) + runs, scale_name)
    return code_version_line(counts, code_hash())
