"""The GPU check runs its whole code path on the CPU at toy size."""

from __future__ import annotations

import json
import math
import sys

import pytest

from paperlib.notebooks import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import gpu_step  # noqa: E402


@pytest.mark.slow
def test_tiny_run_measures_every_paper_preset(capsys, tmp_path):
    rows = gpu_step.main(["--tiny", "--output", str(tmp_path / "gpu_step.json")])
    assert [r["preset"] for r in rows] == [f"{f}/{p}" for f, p in gpu_step.PRESETS]
    assert [r["method"] for r in rows] == ["himo", "himo", "argent", "argent", "argent"]
    for row in rows:
        assert row["samples/s"] > 0 and row["eval img/s"] > 0 and row["batch/GPU"] == 8
        assert math.isnan(row["peak GiB"]) and math.isnan(row["MFU %"])  # no CUDA device
    hide = [r["HiDe %"] for r in rows]
    # HiDe's share is a difference of two timings: measured (finite) for MoLo only; its size is
    # for a GPU run to report, not for a test on a shared CPU to assert
    assert all(math.isfinite(h) for h in hide[:2]) and all(math.isnan(h) for h in hide[2:])
    printed = capsys.readouterr().out
    assert "| train_himo/vit-l14-sharegpt4v-8xh100 | himo | paper-tiny | 8 |" in printed
    record = json.loads((tmp_path / "gpu_step.json").read_text())
    assert record["device"] == "cpu" and record["setting"]["tiny"] is True
    assert [r["preset"] for r in record["rows"]] == [r["preset"] for r in rows]
    assert record["rows"][2]["HiDe %"] is None  # NaN written as null: valid JSON


def test_paper_per_gpu_batch_is_the_global_batch_over_the_node():
    setting = gpu_step.Setting(8, "cpu", "fp32", 1, 1, 4, False)
    himo = gpu_step.config_for("train_himo", "vit-b16-sharegpt4v-8xh100", setting)
    argent = gpu_step.config_for("train_argent", "argent-s-grit", setting)
    assert (himo.train.batch_size, argent.train.batch_size) == (128, 96)
    assert himo.model.context_length == 248 and himo.model.init == "random"
    assert argent.model.name == "hycoclip-vit-s" and argent.data.dataset == "synthetic"


def test_peak_lookup_and_table():
    import torch

    assert gpu_step.peak_tflops(torch.device("cpu")) is None
    assert gpu_step.peak_tflops(torch.device("cpu"), 100.0) == 100.0
    text = gpu_step.table([{"method": "clip", "samples/s": 12.345, "MFU %": math.nan}])
    assert text.splitlines()[2] == "| clip | 12.35 | — |"


@pytest.mark.slow
def test_the_study_run_timing_trains_the_smoke_scale_s_headline_runs():
    rows = gpu_step.main(["--study-runs", "--tiny"])
    assert [r["study run"] for r in rows] == ["himo/MoLo/seed0", "argent/ARGENT/seed0"]
    assert all(r["status"] == "finished" and r["device"] == "cpu" for r in rows)
    assert all(r["seconds"] > 0 and r["samples/s"] > 0 for r in rows)
