"""Where a study stands (``python -m paperlib.study --status``): runs planned and finished per
stage, the seconds spent and what is left."""

from __future__ import annotations

import json

from paperlib.study.paths import results_root_at
from paperlib.study.plan import design
from paperlib.study.results import status
from tests.recipe_helpers import toy_repository, write_picks


def test_status_lines_estimate_what_is_left_from_the_finished_runs_mean():
    rows = {
        "recipe": {"planned": 4, "finished": 1, "seconds": 300.0},
        "himo": {"planned": 2, "finished": 0, "seconds": 0.0},
        "argent": {"planned": 2, "finished": 2, "seconds": 500.0},
    }
    lines = status.status_lines(rows, "waiting for the recipe", workers=2)
    assert (
        lines[0]
        == "recipe: 1 of 4 runs, 300 core-s; about 900 core-s left at its finished runs' mean"
    )
    assert lines[1] == "himo: 0 of 2 runs, 0 core-s; none finished yet"
    assert lines[2] == "argent: 2 of 2 runs, 500 core-s"
    assert lines[3].startswith("spent 800 core-s (about 7 min on 2 workers)")
    assert lines[3].endswith("at least 900 core-s left in the stages that have finished runs; "
                             "2 runs more in stages with none finished")  # fmt: skip
    assert lines[4] == "waiting for the recipe"
    assert status.status_lines({"argent": rows["argent"]}, None)[-1] == (
        "spent 500 core-s (about 4 min on 2 workers); every planned run finished"
    )


def _finish(run: design.Run, seconds: float) -> None:
    target = design.run_target(run, "full")
    target.mkdir(parents=True, exist_ok=True)
    record = {"train_seconds": seconds, "eval_seconds": 1.0}
    (target / "run.done").write_text(json.dumps(record))


def test_study_status_counts_finished_runs_and_waits_for_the_recipe(tmp_path, monkeypatch):
    toy_repository(tmp_path, monkeypatch)
    with results_root_at(tmp_path / "results"):
        searches = design.recipe_plan("full")
        finished_names = {searches[0].name, searches[3].name}
        monkeypatch.setattr(
            status,
            "finished_record",
            lambda run, scale: (
                json.loads((design.run_target(run, scale) / "run.done").read_text())
                if run.name in finished_names
                else None
            ),
        )
        _finish(searches[0], 100.0)
        _finish(searches[3], 200.0)
        _finish(searches[5], 50.0)  # a record the check refuses (stale): not finished
        rows, waiting = status.study_status("full")
        assert rows == {"recipe": {"planned": len(searches), "finished": 2, "seconds": 302.0}}
        assert "recipe.json" in waiting
        assert status.stage_seconds(searches, "full") == {"recipe": 353.0}  # every record
        write_picks("full")
        rows, waiting = status.study_status("full")
        planned = design.plan("full")
        assert waiting is None and rows["recipe"]["finished"] == 2
        assert sum(row["planned"] for row in rows.values()) == len(searches) + len(planned)
        trend = [r for r in planned if r.stage == "trend"]
        # the full study plans no scale trend: a stage with no planned run has no row
        assert not trend and "trend" not in rows
