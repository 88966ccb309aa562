"""The GPU check runs its whole code path on the CPU at toy size."""

from __future__ import annotations

import math
import sys

import pytest

from paperlib.notebooks import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
import gpu_step  # noqa: E402


@pytest.mark.slow
def test_tiny_run_measures_every_method(capsys):
    rows = gpu_step.main(["--tiny"])
    assert [r["method"] for r in rows] == list(gpu_step.METHODS)
    for row in rows:
        assert row["samples/s"] > 0 and row["eval img/s"] > 0
        assert math.isnan(row["peak GiB"]) and math.isnan(row["MFU %"])  # no CUDA device
    hide = {r["method"]: r["HiDe %"] for r in rows}
    # HiDe's share is a difference of two timings: measured (finite) for MoLo only; its size is
    # for a GPU run to report, not for a test on a shared CPU to assert
    assert math.isfinite(hide["himo"]) and math.isnan(hide["clip"]) and math.isnan(hide["argent"])
    printed = capsys.readouterr().out
    assert "| himo | ViT-B/16 (tiny) |" in printed and "| — |" in printed


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
