"""The study on a Ray cluster: a head and a second node started on this machine, the smoke
study's HiMo part (its recipe search, references, one- and two-rank fine-tunes) executed on them
and on the local executor, and the two compared: on one machine every run's per-item values
and the decided claims are the same, bit for bit (a stronger check than the reproduction
tolerance, which covers other machines)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from paperlib.study.paths import REPO_ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the cluster extra"),
]


@pytest.fixture
def two_node_cluster():
    """A head node of one CPU and a second node of two (a two-rank run needs two CPUs on one
    node), started as processes on this machine by Ray's own ``cluster_utils.Cluster`` (and
    only these stopped afterwards)."""
    from ray.cluster_utils import Cluster

    head = {"num_cpus": 1, "num_gpus": 0, "include_dashboard": False}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    try:
        cluster.add_node(num_cpus=2, num_gpus=0)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        cluster.shutdown()


def _smoke_study(folder: Path, extra: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PAPERLIB_RESULTS": str(folder / "results"),
           "PAPERLIB_RUNS": str(folder / "runs"), "HF_HUB_OFFLINE": "1"}  # fmt: skip
    command = [sys.executable, "-m", "paperlib.study", "--scale", "smoke", "--studies", "himo"]
    done = subprocess.run(
        [*command, *extra], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=3600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def test_the_smoke_study_on_two_ray_nodes_is_the_local_executor_s(tmp_path, two_node_cluster):
    on_ray = _smoke_study(tmp_path / "ray", ["--executor", "ray", "--address", two_node_cluster])
    assert "(ray, cpu)" in on_ray.stdout
    shutil.rmtree(tmp_path / "ray" / "runs")  # checkpoints (2 GB) are not compared; results are
    _smoke_study(tmp_path / "local", ["--workers", "2"])
    ray, local = tmp_path / "ray" / "results" / "smoke", tmp_path / "local" / "results" / "smoke"
    items = sorted(p.relative_to(local) for p in local.rglob("items.npz"))
    assert items and items == sorted(p.relative_to(ray) for p in ray.rglob("items.npz"))
    assert any("2-ranks" in str(p) for p in items)  # the two-rank runs ran on one Ray node
    for name in items:
        mine, theirs = np.load(local / name), np.load(ray / name)
        assert mine.files == theirs.files, name
        for key in mine.files:
            assert np.array_equal(mine[key], theirs[key]), (name, key)
    claims = [json.loads((root / "claims.json").read_text())["claims"] for root in (local, ray)]
    assert claims[0] == claims[1]
