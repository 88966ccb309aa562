"""The study on a Ray cluster: a head and a second node started on this machine, the smoke
study executed on them, and its results compared with the committed ones (made by the local
executor) within the reproduction tolerance, as ``make reproduce`` compares."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from paperlib.study.compare import compare
from paperlib.study.reader import REPO_ROOT

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


def test_the_smoke_study_on_two_ray_nodes_matches_the_local_executor_s(tmp_path, two_node_cluster):
    address = two_node_cluster
    env = {
        **os.environ,
        "PAPERLIB_RESULTS": str(tmp_path / "results"),
        "PAPERLIB_RUNS": str(tmp_path / "runs"),
        "HF_HUB_OFFLINE": "1",
    }
    command = [sys.executable, "-m", "paperlib.study", "--scale", "smoke",
               "--executor", "ray", "--address", address]  # fmt: skip
    done = subprocess.run(
        command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=3600
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "(ray, cpu)" in done.stdout
    committed = REPO_ROOT / "results" / "smoke"
    assert compare(committed, tmp_path / "results" / "smoke", tmp_path / "report" / "compare")
