"""How much the smoke study moves between CPUs: the measurement behind the reproduction check.

CPU training is not bit-reproducible across machines: the kernels torch, oneDNN and MKL pick
for the processor, and the number of threads, change the order of floating-point sums, and a
training run carries those differences forward. :func:`measure` runs the smoke study once per
:data:`CONFIGURATIONS` (each a set of kernel limits and a thread count that another machine
could have) in its own folders, and writes ``results/smoke/variation.json``: for every metric
of every results file, the committed value and the value under each configuration.
``paperlib.study.compare`` derives each metric's tolerance from it (:func:`spreads`).

    python -m paperlib.study.report.variation          # make variation (4 smoke studies)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.study.paths import REPO_ROOT

# name -> (environment variables, threads per run): this CPU's own kernels with another thread
# count, ATen's vector kernels capped (ATEN_CPU_CAPABILITY, as CI runs), and whole machines
# simulated by capping ATen, oneDNN (convolutions) and MKL (matrix products) alike
CONFIGURATIONS: dict[str, tuple[dict[str, str], int]] = {
    "native, 2 threads": ({}, 2),
    "ATen default, 1 thread": ({"ATEN_CPU_CAPABILITY": "default"}, 1),
    "AVX2 machine, 1 thread": (
        {
            "ATEN_CPU_CAPABILITY": "avx2",
            "ONEDNN_MAX_CPU_ISA": "AVX2",
            "MKL_ENABLE_INSTRUCTIONS": "AVX2",
        },
        1,
    ),  # fmt: skip
    "SSE4 machine, 1 thread": (
        {
            "ATEN_CPU_CAPABILITY": "default",
            "ONEDNN_MAX_CPU_ISA": "SSE41",
            "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
        },
        1,
    ),  # fmt: skip
}
COMMAND = "python -m paperlib.study.report.variation --scale smoke"


def metric_values(results: Path) -> dict[str, float]:
    """``{"<study>/<variant>/seed<k>/<file>.json:<metric>": value}`` of a results folder."""
    out = {}
    for path in sorted(results.glob("*/*/seed*/*.json")):
        relative = path.relative_to(results).as_posix()
        for metric, value in json.loads(path.read_text())["metrics"].items():
            if isinstance(value, (int, float)):
                out[f"{relative}:{metric}"] = float(value)
    return out


def fingerprint(values: dict[str, float]) -> str:
    """A hash of a results folder's metric values (what a measurement was made against)."""
    text = json.dumps(sorted(values.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _run_configuration(name: str, scale: str, folder: Path) -> tuple[dict[str, float], float]:
    """The smoke study under one configuration, in ``folder``; its metrics and wall seconds."""
    variables, threads = CONFIGURATIONS[name]
    env = {**os.environ, **variables, "PAPERLIB_RESULTS": str(folder / "results")}
    env["PAPERLIB_RUNS"] = str(folder / "runs")
    command = [sys.executable, "-m", "paperlib.study", "--scale", scale, "--threads", str(threads)]
    start = time.perf_counter()
    proc = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the {scale} study under {name!r} failed:\n{proc.stderr[-3000:]}")
    return metric_values(folder / "results" / scale), time.perf_counter() - start


def measure(scale: str = "smoke", names: list[str] | None = None) -> Path:
    """Run the study under every configuration and write ``results/<scale>/variation.json``."""
    committed = metric_values(REPO_ROOT / "results" / scale)
    if not committed:
        raise FileNotFoundError(f"results/{scale} holds no results files to measure against")
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="variation-") as tmp:
        for name in names or list(CONFIGURATIONS):
            print(f"[variation] {name}", flush=True)
            values, seconds = _run_configuration(name, scale, Path(tmp) / f"c{len(runs)}")
            runs[name] = {
                "variables": CONFIGURATIONS[name][0],
                "threads": CONFIGURATIONS[name][1],
                "seconds": round(seconds, 1),
                "values": values,
            }
    out = {
        "command": COMMAND,
        "how": "the study at this scale, once per configuration, each in its own folders; "
        "values are the results files' metrics",
        "committed_fingerprint": fingerprint(committed),
        "configurations": runs,
    }
    path = REPO_ROOT / "results" / scale / "variation.json"
    atomic_write_text(path, json.dumps(out, indent=1) + "\n")
    return path


def spreads(variation: dict[str, Any], committed: dict[str, float]) -> dict[str, float]:
    """Per metric key, the largest |value − committed| over the measured configurations."""
    out: dict[str, float] = {}
    for run in variation["configurations"].values():
        for key, value in run["values"].items():
            if key in committed:
                out[key] = max(out.get(key, 0.0), abs(value - committed[key]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.study.report.variation", description=__doc__
    )
    parser.add_argument("--scale", default="smoke")
    parser.add_argument("--only", nargs="+", choices=list(CONFIGURATIONS), default=None)
    args = parser.parse_args(argv)
    print(f"[variation] wrote {measure(args.scale, args.only)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
