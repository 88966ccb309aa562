"""Live training logs: TensorBoard's event files, read back with TensorBoard's own reader, hold
the scalars of ``log.jsonl``; Weights & Biases gets the same numbers; an unknown or absent
backend is refused by name."""

from __future__ import annotations

import importlib.util
import json
import sys
import types

import pytest

from paperlib.engine.config import ConfigError, build_config
from paperlib.engine.loop import train
from paperlib.engine.reporting import (
    REPORTERS,
    RunLog,
    WandbReporter,
    open_reporters,
    record_scalars,
)
from tests.engine_helpers import tiny_config


def _jsonl_scalars(path) -> dict[str, dict[int, float]]:
    """Every scalar of ``log.jsonl`` by tag and step, read independently of the reporter."""
    out: dict[str, dict[int, float]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if "status" in record:
            continue
        fields = record["val"] if "val" in record else record
        prefix = "val" if "val" in record else "train"
        for key, value in fields.items():
            if key in ("step", "val_size") or isinstance(value, bool | str) or value is None:
                continue
            out.setdefault(f"{prefix}/{key}", {})[record["step"]] = float(value)
    return out


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None, reason="tracking extra")
def test_tensorboard_event_files_hold_the_log_s_scalars(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    raw = tiny_config("meru", tmp_path, train={
        "steps": 4, "report_to": ["tensorboard"], "val_every": 2, "val_size": 32,
        "val_metrics": ["short_i2t_r1", "zeroshot_L1"],
    })  # fmt: skip
    train(raw)
    expected = _jsonl_scalars(tmp_path / "log.jsonl")
    events = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    read = {tag: {e.step: e.value for e in events.Scalars(tag)} for tag in events.Tags()["scalars"]}
    assert {"train/loss", "train/curv", "val/zeroshot_L1"} <= set(read)
    assert set(read) == set(expected)
    for tag, by_step in expected.items():
        assert set(read[tag]) == set(by_step), tag
        for step, value in by_step.items():  # event files store float32
            assert read[tag][step] == pytest.approx(value, rel=1e-6, abs=1e-6), (tag, step)


def test_wandb_receives_each_record_s_scalars_at_its_step(tmp_path, monkeypatch):
    """A stand-in ``wandb`` module records what the reporter sends; offline is the default."""
    calls: dict[str, list] = {"init": [], "log": [], "finish": []}

    class Run:
        def log(self, values, step):
            calls["log"].append((step, values))

        def finish(self):
            calls["finish"].append(True)

    def init(**kwargs):
        calls["init"].append(kwargs)
        return Run()

    monkeypatch.setitem(sys.modules, "wandb", types.SimpleNamespace(init=init))
    monkeypatch.delenv("WANDB_MODE", raising=False)
    records = [
        {"step": 1, "loss": 2.5, "lr": 1e-3, "hide_m": 3, "note": "x"},
        {"step": 2, "val": {"zeroshot_L1": 0.5}, "val_size": 64},
        {"step": 2, "status": "finished"},
    ]

    class Sink:
        def __init__(self):
            self.lines = []

        def write(self, record):
            self.lines.append(record)

    sink = Sink()
    log = RunLog(sink, [WandbReporter(tmp_path, {"method": "clip"})])
    for record in records:
        log.write(record)
    log.close()
    assert sink.lines == records  # log.jsonl keeps every record as it was
    assert calls["init"][0]["mode"] == "offline" and calls["init"][0]["dir"] == str(tmp_path)
    assert calls["log"] == [
        (1, {"train/loss": 2.5, "train/lr": 1e-3, "train/hide_m": 3.0}),
        (2, {"val/zeroshot_L1": 0.5}),
    ]
    assert calls["finish"] == [True]


def test_record_scalars_leave_out_text_flags_and_non_finite_values():
    record = {"step": 3, "loss": float("nan"), "ok": True, "name": "a", "curv": 0.5}
    assert record_scalars(record) == {"train/curv": 0.5}


def test_an_unknown_backend_is_refused_by_name(tmp_path):
    raw = tiny_config("clip", tmp_path, train={"report_to": ["mlflow"]})
    with pytest.raises(ConfigError, match="train.report_to: unknown backend 'mlflow'"):
        build_config(raw)


def test_a_backend_named_twice_is_refused(tmp_path):
    raw = tiny_config("clip", tmp_path, train={"report_to": ["tensorboard", "tensorboard"]})
    with pytest.raises(ConfigError, match="named twice"):
        build_config(raw)


def test_an_absent_package_is_named_when_the_run_opens_it(tmp_path, monkeypatch):
    """The config (and so a checkpoint that names the backend, read for evaluation) loads
    without the package; opening the backend names the package and its extra."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a)
    )
    raw = tiny_config("clip", tmp_path, train={"report_to": ["wandb"]})
    assert build_config(raw).train.report_to == ("wandb",)
    with pytest.raises(ValueError, match=r"needs the package 'wandb'.*\[tracking\]"):
        open_reporters(["wandb"], tmp_path, raw, is_main=True)
    assert open_reporters(["wandb"], tmp_path, raw, is_main=False) == []  # rank > 0: none


def test_a_failing_backend_closes_those_already_open(tmp_path, monkeypatch):
    closed = []

    class Opened:
        def __init__(self, *args):
            pass

        def close(self):
            closed.append(True)

    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setitem(REPORTERS, "tensorboard", (Opened, "json"))
    monkeypatch.setitem(REPORTERS, "wandb", (broken, "json"))
    with pytest.raises(ValueError, match="train.report_to: the 'wandb' backend could not be "
                       r"opened .*\(disk full\)"):  # fmt: skip
        open_reporters(["tensorboard", "wandb"], tmp_path, {}, is_main=True)
    assert closed == [True]


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None, reason="tracking extra")
def test_a_resumed_run_s_events_hold_each_step_once(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    train(tiny_config("clip", tmp_path, train={"steps": 2, "report_to": ["tensorboard"]}))
    train(tiny_config("clip", tmp_path, train={"steps": 4, "report_to": ["tensorboard"]}))
    events = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance={"scalars": 0})
    events.Reload()
    assert [e.step for e in events.Scalars("train/loss")] == [1, 2, 3, 4]
    assert _jsonl_scalars(tmp_path / "log.jsonl")["train/loss"].keys() == {1, 2, 3, 4}


@pytest.mark.skipif(importlib.util.find_spec("wandb") is None, reason="tracking extra")
def test_a_real_wandb_run_is_offline_and_written_in_the_run_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("WANDB_MODE", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    reporter = WandbReporter(tmp_path, {"method": "clip"})
    assert reporter.run.settings.mode == "offline"
    reporter.scalars(1, {"train/loss": 2.5})
    reporter.close()
    (run,) = (tmp_path / "wandb").glob("offline-run-*")
    assert list(run.glob("run-*.wandb"))  # the offline record `wandb sync` would upload
