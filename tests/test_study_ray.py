"""The study on a Ray cluster: a head and a second node started on this machine, the smoke
study executed on them, and its results compared with the committed ones (made by the local
executor) within the reproduction tolerance, as ``make reproduce`` compares."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from paperlib.study.compare import compare
from paperlib.study.reader import REPO_ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="the cluster extra"),
]
RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray(*args: str, env: dict[str, str]) -> None:
    subprocess.run([str(RAY), *args], check=True, env=env, capture_output=True, timeout=300)


@pytest.fixture
def two_node_cluster():
    """A head node and a second node process, one CPU each, on this machine (Ray's folder is
    short: its socket paths must fit the OS's limit)."""
    port, folder = _free_port(), tempfile.mkdtemp(prefix="ray", dir="/tmp")
    env = {**os.environ, "RAY_TMPDIR": folder}
    common = ("--num-cpus", "1", "--num-gpus", "0", "--disable-usage-stats",
              "--node-ip-address", "127.0.0.1")  # fmt: skip
    try:
        _ray("start", "--head", "--port", str(port), "--include-dashboard=false", *common, env=env)
        _ray("start", "--address", f"127.0.0.1:{port}", *common, env=env)
        yield f"127.0.0.1:{port}", env
    finally:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=300)
        shutil.rmtree(folder, ignore_errors=True)


def test_the_smoke_study_on_two_ray_nodes_matches_the_local_executor_s(tmp_path, two_node_cluster):
    address, env = two_node_cluster
    env = {
        **env,
        "PAPERLIB_RESULTS": str(tmp_path / "results"),
        "PAPERLIB_RUNS": str(tmp_path / "runs"),
        "HF_HUB_OFFLINE": "1",
    }
    command = [sys.executable, "-m", "paperlib.study", "--scale", "smoke",
               "--executor", "ray", "--address", address]  # fmt: skip
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "(ray, cpu)" in done.stdout
    committed = REPO_ROOT / "results" / "smoke"
    assert compare(committed, tmp_path / "results" / "smoke", tmp_path / "report" / "compare")
