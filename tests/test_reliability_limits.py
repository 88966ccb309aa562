"""Bounds on what a command may wait for or ask of the machine: a Ray address where nothing
answers is refused by name within the connection timeout (Ray itself waits without end); sizes
read from configs and options have upper bounds, named with the key."""

from __future__ import annotations

import importlib.util
import socket
import time

import pytest

from paperlib.engine import evaluation
from paperlib.engine.config import (
    MAX_GENERATED_SIZE,
    MAX_SHUFFLE_BUFFER,
    MAX_VAL_SIZE,
    ConfigError,
    load_config,
)
from paperlib.study.cli import main as study_main
from paperlib.study.run import executors
from paperlib.study.run.executors import ExecutorUnavailableError, check_reachable, open_executor
from tests.engine_helpers import tiny_config
from tests.recipe_helpers import toy_repository


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # free again once closed: nothing listens there


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="cluster extra")
def test_a_ray_address_where_nothing_answers_is_refused_by_name(tmp_path, monkeypatch, capsys):
    """The case: ``--executor ray --address`` pointing at nothing waited forever behind Ray's
    own warnings."""
    address = f"127.0.0.1:{_closed_port()}"
    start = time.perf_counter()
    with pytest.raises(ExecutorUnavailableError, match=rf"--address {address}: no Ray cluster"):
        with open_executor("ray", 1, address):
            pass
    assert time.perf_counter() - start < executors.CONNECT_TIMEOUT + 30
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    toy_repository(tmp_path, monkeypatch)
    assert study_main(["--scale", "smoke", "--executor", "ray", "--address", address]) == 2
    err = capsys.readouterr().err
    assert f"--address {address}: no Ray cluster answers there" in err and "Traceback" not in err


def test_an_unanswered_address_is_refused_even_when_no_run_is_left(tmp_path, monkeypatch, capsys):
    """A study whose every run has finished needs no executor, yet an address where nothing
    answers is still refused before any stage (no Ray needed to tell)."""
    import shutil

    from paperlib.study.paths import REPO_ROOT

    shutil.copytree(REPO_ROOT / "results" / "smoke", tmp_path / "results" / "smoke")
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    before = (tmp_path / "results" / "smoke" / "claims.json").read_bytes()
    address = f"127.0.0.1:{_closed_port()}"
    assert study_main(["--scale", "smoke", "--executor", "ray", "--address", address]) == 2
    err = capsys.readouterr().err
    assert f"--address {address}: no Ray cluster answers there" in err and "Traceback" not in err
    assert (tmp_path / "results" / "smoke" / "claims.json").read_bytes() == before


def test_an_address_that_is_no_host_and_port_is_named():
    for address in ("nohost", "head:port", "ray://"):
        with pytest.raises(ExecutorUnavailableError, match="expected HOST:PORT or ray://HOST:PORT"):
            check_reachable(address)
    check_reachable("auto")  # Ray's own lookup of the local cluster: left to Ray


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [
        ("data", "size", MAX_GENERATED_SIZE + 1, r"data\.size: expected 1\.\.10000000"),
        ("data", "size", 10**9, r"data\.size: expected 1\.\.10000000, got 1000000000"),
        ("train", "val_size", MAX_VAL_SIZE + 1, r"train\.val_size: expected 1\.\.20000"),
        ("data", "shuffle_buffer", MAX_SHUFFLE_BUFFER + 1, r"data\.shuffle_buffer: expected 0\.\."),
    ],
)
def test_sizes_read_from_configs_have_named_upper_bounds(tmp_path, section, key, value, message):
    """The case: ``data.size=1e9`` or a huge ``train.val_size`` asked for gigabytes with no
    bound or name."""
    with pytest.raises(ConfigError, match=message):
        load_config(tiny_config("clip", tmp_path / "run", **{section: {key: value}}))


def test_the_evaluation_world_has_an_upper_bound(tmp_path):
    with pytest.raises(ValueError, match=r"world_size: expected at least 2 .* at most 20,000"):
        evaluation.evaluate(tmp_path, ["world-long"], output_dir=tmp_path / "o", world_size=10**7)
