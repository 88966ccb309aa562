"""Wall time of the smoke study on the local executor beside Ray clusters of one and two nodes.

Each configuration runs ``python -m paperlib.study --scale smoke`` from scratch into folders of
its own (its results, runs and world cache), one after the other on this machine, and the
figures are read side by side as ratios to the local executor's time: local with ``--workers
2``; Ray on one node of 2 CPUs; Ray on a head of 1 CPU and a second node of 2 CPUs
(``ray.cluster_utils.Cluster``; a two-rank run needs two CPUs on one node). Needs the cluster extra. A JSON record goes to ``--out``.

    .venv/bin/python benchmarks/study_executors.py [--out build/bench/study_executors.json]

It runs three smoke studies (tens of minutes on two cores), so it is not one of ``make bench``'s
``bench_*`` scripts; the code path it times is the one ``tests/test_study_ray.py`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def smoke_study_seconds(folder: Path, extra: list[str]) -> float:
    """Wall seconds of one smoke study run into ``folder`` with the extra arguments."""
    env = {**os.environ, "PAPERLIB_RESULTS": str(folder / "results"),
           "PAPERLIB_RUNS": str(folder / "runs"), "HF_HUB_OFFLINE": "1"}  # fmt: skip
    command = [sys.executable, "-m", "paperlib.study", "--scale", "smoke", *extra]
    start = time.perf_counter()
    subprocess.run(command, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def on_ray(folder: Path, node_cpus: list[int]) -> float:
    """The smoke study on a Ray cluster of one node per entry of ``node_cpus`` (its CPUs)."""
    from ray.cluster_utils import Cluster

    head = {"num_cpus": node_cpus[0], "num_gpus": 0, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    try:
        for cpus in node_cpus[1:]:
            cluster.add_node(num_cpus=cpus, num_gpus=0)
        cluster.wait_for_nodes()
        return smoke_study_seconds(folder, ["--executor", "ray", "--address", cluster.address])
    finally:
        cluster.shutdown()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "build/bench/study_executors.json")
    args = parser.parse_args(argv)
    seconds = {}
    with tempfile.TemporaryDirectory() as root:
        seconds["local, 2 workers"] = smoke_study_seconds(Path(root) / "local", ["--workers", "2"])
        seconds["ray, 1 node of 2 CPUs"] = on_ray(Path(root) / "ray1", [2])
        seconds["ray, 2 nodes of 1 + 2 CPUs"] = on_ray(Path(root) / "ray2", [1, 2])
    base = seconds["local, 2 workers"]
    record = {name: {"seconds": round(s), "ratio_to_local": round(s / base, 2)}
              for name, s in seconds.items()}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"smoke_study": record, "cpus": os.cpu_count()}, indent=1))
    for name, row in record.items():
        print(f"{name}: {row['seconds']} s ({row['ratio_to_local']}× local)")
    return record


if __name__ == "__main__":
    main()
