"""Reporting backends never stop training: one that fails during the run is turned off with one
warning naming it and the run finishes with its whole log; one that is misconfigured is refused
by name before the run folder is claimed (or, failing to open, before the first step)."""

from __future__ import annotations

import errno
import importlib.util
import json

import pytest

from paperlib.engine import loop, reporting
from paperlib.engine.config import ConfigError
from paperlib.engine.reporting import REPORTERS, ReportingWarning
from tests.engine_helpers import tiny_config

STEPS = 4


def _steps(out) -> list[int]:
    lines = (out / "log.jsonl").read_text().splitlines()
    return [r["step"] for r in map(json.loads, lines) if "loss" in r]


def test_a_backend_that_fails_mid_run_is_turned_off_once_and_training_goes_on(
    tmp_path, monkeypatch
):
    calls = {"scalars": 0, "close": 0}

    class Flaky:
        name = "tensorboard"

        def __init__(self, *args):
            pass

        def scalars(self, step, values):
            calls["scalars"] += 1
            if calls["scalars"] >= 2:
                raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            calls["close"] += 1

    monkeypatch.setitem(REPORTERS, "tensorboard", (Flaky, "json"))
    raw = tiny_config(
        "clip", tmp_path / "run", train={"steps": STEPS, "report_to": ["tensorboard"]}
    )
    with pytest.warns(ReportingWarning) as caught:
        result = loop.train(raw)
    assert result.status == "finished" and _steps(tmp_path / "run") == [1, 2, 3, 4]
    (warning,) = caught
    assert "the 'tensorboard' backend failed" in str(warning.message)
    assert "No space left on device" in str(warning.message) and "log.jsonl" in str(warning.message)
    assert calls == {"scalars": 2, "close": 1}  # never called again once off


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None, reason="tracking extra")
def test_tensorboard_failing_in_its_writer_thread_stops_nothing_and_prints_no_traceback(
    tmp_path, monkeypatch, capfd
):
    """The case: a TensorBoard folder that became unwritable stopped training with a thread
    traceback (one unwritable when the run starts is refused by name: the next test's kind)."""
    from tensorboard.summary.writer import record_writer

    real, calls = record_writer.RecordWriter.write, {"n": 0}

    def unwritable_after_open(self, data):
        calls["n"] += 1
        if calls["n"] > 1:  # the file's version record went through when it was opened
            raise OSError(errno.EACCES, "Permission denied")
        real(self, data)

    monkeypatch.setattr(record_writer.RecordWriter, "write", unwritable_after_open)
    raw = tiny_config(
        "clip", tmp_path / "run", train={"steps": STEPS, "report_to": ["tensorboard"]}
    )
    with pytest.warns(ReportingWarning, match="'tensorboard' backend failed"):
        result = loop.train(raw)
    assert result.status == "finished" and _steps(tmp_path / "run") == [1, 2, 3, 4]
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err and "Exception in thread" not in captured.err


@pytest.mark.skipif(importlib.util.find_spec("wandb") is None, reason="tracking extra")
def test_wandb_online_without_a_key_is_refused_before_the_folder_is_claimed(tmp_path, monkeypatch):
    """The case: ``WANDB_MODE=online`` without a key crashed."""
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.netrc
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    raw = tiny_config("clip", tmp_path / "run", train={"report_to": ["wandb"]})
    with pytest.raises(ConfigError, match=r"train\.report_to: wandb with WANDB_MODE=online .*"
                       "no API key"):  # fmt: skip
        loop.train(raw)
    assert not (tmp_path / "run").exists()
    monkeypatch.setenv("WANDB_MODE", "sometimes")
    with pytest.raises(ConfigError, match=r"WANDB_MODE='sometimes'; expected one of"):
        loop.train(raw)
    monkeypatch.setenv("WANDB_MODE", "online")
    monkeypatch.setenv("WANDB_API_KEY", "x" * 40)
    reporting.check_backends(["wandb"])  # a key: accepted


def test_a_backend_that_fails_to_open_is_refused_by_name_before_the_first_step(
    tmp_path, monkeypatch
):
    def broken(*args):
        raise FileExistsError(errno.EEXIST, "File exists", str(tmp_path / "run" / "tensorboard"))

    monkeypatch.setitem(REPORTERS, "tensorboard", (broken, "json"))
    raw = tiny_config("clip", tmp_path / "run", train={"report_to": ["tensorboard"]})
    with pytest.raises(ValueError, match=r"the 'tensorboard' backend could not be opened"):
        loop.train(raw)
    assert not (tmp_path / "run" / "log.jsonl").exists()
