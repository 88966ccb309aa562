"""The exit statuses ``docs/full-scale.md`` documents are the ones the commands give: its table
is read, every (status, command) pair it lists has a case here that drives that command into
that status, and no case exists that the table does not list."""

from __future__ import annotations

import errno
import json
import os
import re
import signal

import pytest

from paperlib import atomic, exit_status
from paperlib.engine import loop
from paperlib.study import compare
from tests.engine_helpers import REPO, tiny_config

COMMANDS = ("train", "evaluate", "study", "study.compare", "notebooks")
NOTEBOOK = (
    "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n"
    '#     name: python3\n# ---\n\n# %% tags=["parameters"]\nsteps = 3\n\n# %%\n'
    "assert steps < 5, 'too many steps'\nprint(steps)\n"
)


def documented() -> set[tuple[int, str]]:
    """The (status, command) pairs of the table under "Errors and exit statuses"."""
    text = (REPO / "docs" / "full-scale.md").read_text()
    section = text.split("### Errors and exit statuses", 1)[1].split("\n## ", 1)[0]
    pairs = set()
    for status, commands in re.findall(r"^\| (\d+) \| [^|]+ \| ([^|]+) \|$", section, re.M):
        named = re.findall(r"`([\w.]+)`", commands)
        for command in COMMANDS if "every command" in commands else named:
            pairs.add((int(status), command))
    return pairs


def _fail_fsync(monkeypatch, marker: str) -> None:
    """``fsync`` of a temporary file whose name holds ``marker`` fails with ENOSPC."""
    real = os.fsync

    def fsync(fd: int) -> None:
        if marker in os.path.basename(os.readlink(f"/proc/self/fd/{fd}")):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(atomic.os, "fsync", fsync)


def _config(tmp_path, **sections) -> str:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(tiny_config("clip", tmp_path / "run", **sections)))
    return str(path)


def _train(tmp_path, monkeypatch, capsys, **sections) -> int:
    from paperlib.train import main

    return main([_config(tmp_path, **sections)])


def _train_interrupted(tmp_path, monkeypatch, capsys) -> int:
    real = loop.apply_update

    def update_then_sigterm(*args, **kwargs):
        lr = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)  # the scheduler's pre-emption, after step 1
        return lr

    monkeypatch.setattr(loop, "apply_update", update_then_sigterm)
    return _train(tmp_path, monkeypatch, capsys)


def _trained(tmp_path):
    return loop.train(tiny_config("clip", tmp_path / "run", train={"steps": 1})).output_dir


def _evaluate(tmp_path, *extra: str) -> int:
    from paperlib.evaluate import main

    argv = [str(_trained(tmp_path)), "--output", str(tmp_path / "out")]
    return main([*argv, "--benchmarks", "world-long", "--world-size", "8", *extra])


def _evaluate_full_disk(tmp_path, monkeypatch):
    run = _trained(tmp_path)
    _fail_fsync(monkeypatch, ".world-long.json.")
    from paperlib.evaluate import main

    argv = [str(run), "--output", str(tmp_path / "out"), "--benchmarks", "world-long"]
    return main([*argv, "--world-size", "8"])


def _study(tmp_path, monkeypatch, *argv: str) -> int:
    from paperlib.study.cli import main

    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    return main(["--scale", "smoke", *argv])


def _study_other_code(tmp_path, monkeypatch) -> int:
    claims = tmp_path / "results" / "smoke" / "claims.json"
    claims.parent.mkdir(parents=True)
    decided = json.loads((REPO / "results" / "smoke" / "claims.json").read_text())
    versions = [{"code_hash": "f" * 64, "commits": [], "runs": 3}]
    claims.write_text(json.dumps({**decided, "code_versions": versions}))
    return _study(tmp_path, monkeypatch, "--summary")


def _study_full_disk(tmp_path, monkeypatch) -> int:
    from paperlib.study import cli

    _fail_fsync(monkeypatch, ".claims.json.")
    written = tmp_path / "results" / "smoke" / "claims.json"
    monkeypatch.setattr(cli, "refuse_runs_of_other_code", lambda scale: None)
    monkeypatch.setattr(cli, "summarise", lambda *a: atomic.atomic_write_text(written, "{}"))
    return _study(tmp_path, monkeypatch, "--decide-only")


def _compare(tmp_path, monkeypatch, reproduced_value: float, fail: str = "") -> int:
    from tests.test_compare import BASE, _results, _variation

    committed = _results(tmp_path / "committed" / "smoke", BASE)
    _variation(committed, {})
    _results(tmp_path / "again" / "smoke", {**BASE, "cola_accuracy": reproduced_value})
    monkeypatch.setattr(
        compare, "check_decided", lambda folder, scale, what: json.loads(
            (folder / "claims.json").read_text())
    )  # fmt: skip
    if fail:
        _fail_fsync(monkeypatch, fail)
    argv = ["--reproduced", str(tmp_path / "again"), "--committed", str(tmp_path / "committed")]
    return compare.main(argv)


def _notebook(tmp_path, monkeypatch, *argv: str) -> int:
    import paperlib.notebooks as notebooks

    monkeypatch.setattr(notebooks, "EXECUTED_DIR", tmp_path / "executed")
    path = tmp_path / "tiny_notebook.py"
    path.write_text(NOTEBOOK)
    return notebooks.main(["run", str(path), *argv])


CASES = {
    (0, "train"): lambda t, m, c: _train(t, m, c, train={"steps": 1}),
    (2, "train"): lambda t, m, c: _train(t, m, c, train={"batch_size": 1}),
    (3, "train"): lambda t, m, c: _train(t, m, c, optim={"lr": 1e20, "warmup_steps": 0}),
    (4, "train"): lambda t, m, c: (_fail_fsync(m, ".last.pt."), _train(t, m, c))[1],
    (75, "train"): _train_interrupted,
    (0, "evaluate"): lambda t, m, c: _evaluate(t),
    (2, "evaluate"): lambda t, m, c: _evaluate(t, "--limit", "urban1k=0"),
    (4, "evaluate"): lambda t, m, c: _evaluate_full_disk(t, m),
    (0, "study"): lambda t, m, c: _study(t, m, "--status"),
    (2, "study"): lambda t, m, c: _study_other_code(t, m),
    (4, "study"): lambda t, m, c: _study_full_disk(t, m),
    (0, "study.compare"): lambda t, m, c: _compare(t, m, 0.5),
    (1, "study.compare"): lambda t, m, c: _compare(t, m, 0.9),
    (2, "study.compare"): lambda t, m, c: _compare(t, m, float("nan")),
    (4, "study.compare"): lambda t, m, c: _compare(t, m, 0.9, fail="smoke-comparison.json."),
    (0, "notebooks"): lambda t, m, c: _notebook(t, m),
    (2, "notebooks"): lambda t, m, c: _notebook(t, m, "-p", "steps", "7"),
}


def test_the_documented_table_lists_exactly_the_cases_run_here():
    assert documented() == set(CASES)
    assert {s for s, _ in CASES} == {
        exit_status.OK, exit_status.DID_NOT_REPRODUCE, exit_status.REFUSED,
        exit_status.NOT_FINITE, exit_status.STORAGE, exit_status.INTERRUPTED,
    }  # fmt: skip


@pytest.mark.parametrize(("status", "command"), sorted(CASES), ids=lambda v: str(v))
def test_each_command_exits_with_its_documented_status(
    tmp_path, monkeypatch, capsys, status, command
):
    code = CASES[(status, command)](tmp_path, monkeypatch, capsys)
    err = capsys.readouterr().err
    assert code == status, err[-2000:]
    assert "Traceback" not in err
    if status in (exit_status.REFUSED, exit_status.NOT_FINITE, exit_status.STORAGE):
        reported = [line for line in err.splitlines() if line.startswith(("training", "evaluate", "study", "compare", "notebooks", "config"))]  # fmt: skip
        assert len(reported) == 1, err  # one line names what went wrong
