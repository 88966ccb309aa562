"""Every benchmark script runs to its end at a tiny size (``make bench`` runs them at their
full sizes), so a script that breaks is found by the tests, not by the next measurement; the
engine benchmark repeats its training, which needs a fresh run folder each time."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.engine_helpers import REPO

pytestmark = pytest.mark.slow

# script: (tiny arguments, a line its report must print)
TINY = {
    "bench_engine.py": (
        ["--steps", "10", "--batch", "16", "--repeats", "2", "--methods", "clip"]
        + ["--eval-size", "16"],
        "from cache",
    ),
    "bench_world.py": (["--samples", "30", "--items", "20"], "samples/s"),
    "bench_molo.py": (["--quick", "--repeats", "1"], "HiDe share"),
    "bench_horopca.py": (["--quick", "--n", "30", "--dim", "8"], "speed-up"),
    "bench_text_trim.py": (["--steps", "12", "--repeats", "1", "--size", "800"], "ratio"),
}


def test_every_benchmark_script_has_a_tiny_size():
    assert set(TINY) == {p.name for p in (REPO / "benchmarks").glob("bench_*.py")}


@pytest.mark.parametrize("script", sorted(TINY))
def test_a_benchmark_script_runs_to_its_report_at_a_tiny_size(script, tmp_path):
    arguments, report = TINY[script]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *arguments],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert report in proc.stdout, proc.stdout[-2000:]
