"""Where and on what the study's runs execute: a GPU device refused by name where torch sees
none, the configs ``--device cuda`` builds, the device kept out of what makes a run finished,
and the resources a run asks a cluster for."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from paperlib.study import cli
from paperlib.study.paths import portable_config
from paperlib.study.plan import design
from paperlib.study.run import parallel
from paperlib.study.run.devices import (
    DeviceUnavailableError,
    check_device,
    concurrent_runs,
    device_record,
    on_device,
)
from paperlib.study.run.execution import current_code, init_checksum, record_differences
from paperlib.study.run.executors import local_executor, open_executor
from paperlib.study.run.parallel import Execution

NO_GPU = pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")


def _runs() -> tuple[design.Run, design.Run]:
    runs = design.plan("smoke")
    single = next(r for r in runs if r.nproc == 1 and r.config["train"]["steps"] > 0)
    ranks = next(r for r in runs if r.nproc > 1)
    return single, ranks


@NO_GPU
def test_cuda_without_a_gpu_is_refused_naming_what_is_missing():
    with pytest.raises(DeviceUnavailableError, match=r"--device cuda: torch .* sees no CUDA"):
        check_device("cuda")
    with pytest.raises(DeviceUnavailableError, match="cuda:1"):
        check_device("cuda:1")
    check_device("cpu")


def test_an_unknown_device_is_refused():
    for bad in ("tpu", "cuda:x", "cpu:0"):
        with pytest.raises(ValueError, match="expected cpu, cuda or cuda:N"):
            check_device(bad)


@NO_GPU
def test_the_study_command_refuses_cuda_before_any_run(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    assert cli.main(["--scale", "smoke", "--device", "cuda"]) == 2
    assert "sees no CUDA device" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "results").exists()


def test_on_device_moves_single_process_runs_and_keeps_two_rank_runs_on_cpu():
    single, ranks = _runs()
    moved = on_device(single, "cuda:0")
    assert moved.config["train"]["device"] == "cuda:0"
    assert single.config["train"]["device"] == "cpu"  # the plan is not changed
    assert {k: v for k, v in moved.config.items() if k != "train"} == {
        k: v for k, v in single.config.items() if k != "train"
    }
    assert on_device(ranks, "cuda").config["train"]["device"] == "cpu"
    assert on_device(single, "cpu") is single


def test_a_run_finished_on_a_gpu_counts_as_finished_for_the_cpu_plan():
    single, _ = _runs()
    record = {
        "config": portable_config(on_device(single, "cuda").config),
        "init_sha256": init_checksum(single.config),
        **current_code(),
        **device_record("cpu"),
    }
    assert record_differences(record, single) == []
    optim = {**record["config"]["optim"], "lr": 0.5}
    changed = {**record, "config": {**record["config"], "optim": optim}}
    assert record_differences(changed, single) == ["config.optim.lr"]


def test_a_gpu_index_under_ray_is_refused_and_a_cluster_checks_its_own_gpus():
    with pytest.raises(ValueError, match="under --executor ray use --device cuda"):
        Execution(executor="ray", device="cuda:1").check()
    # the machine that starts a study on a cluster needs no GPU: the cluster is asked
    Execution(executor="ray", address="head:6379", device="cuda").check()


def test_a_ray_task_no_node_can_hold_is_refused_by_name():
    from paperlib.study.run.executors import ExecutorUnavailableError, _submit_task

    nodes = [{"CPU": 1.0}, {"CPU": 1.0}]
    with pytest.raises(
        ExecutorUnavailableError, match=r"asks for 2 CPU\(s\) on one node.*largest has 1"
    ):
        _submit_task(None, abs, -1, 2, 0.0, where="head:6379", nodes=nodes)
    with pytest.raises(ExecutorUnavailableError, match="GPUs: 0"):
        _submit_task(None, abs, -1, 1, 0.5, where="head:6379", nodes=nodes)


def test_resources_a_run_asks_a_cluster_for():
    single, ranks = _runs()
    assert Execution().resources(single) == (1, 0.0)
    assert Execution(threads=2).resources(ranks) == (4, 0.0)  # two ranks of two threads
    gpu = Execution(device="cuda", runs_per_device=4)
    assert gpu.resources(single) == (1, 0.25) and gpu.resources(ranks) == (2, 0.0)
    assert gpu.slots == 4 and Execution(workers=3).slots == 3
    with pytest.raises(ValueError, match="at least 1"):
        concurrent_runs("cuda", 0, 2)


def test_executors_are_named_and_local_refuses_an_address():
    with pytest.raises(ValueError, match="unknown executor 'slurm'"):
        open_executor("slurm", 1)
    with pytest.raises(ValueError, match="needs --executor ray"):
        with local_executor(1, "127.0.0.1:6379"):
            pass


def test_the_local_executor_runs_a_task_in_a_worker_process():
    with open_executor("local", 1) as submit:
        assert submit(abs, -3).result() == 3


def test_execution_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Execution().device = "cuda"  # type: ignore[misc]


def test_ray_tasks_get_the_study_s_folders_and_offline_flag(monkeypatch):
    from paperlib.study.run.executors import forwarded_environment

    monkeypatch.setenv("PAPERLIB_RESULTS", "/shared/results")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("SOME_OTHER", "x")
    forwarded = forwarded_environment()
    assert forwarded["PAPERLIB_RESULTS"] == "/shared/results" and forwarded["HF_HUB_OFFLINE"] == "1"
    assert "SOME_OTHER" not in forwarded


def test_execute_all_runs_a_plan_on_the_local_executor(tmp_path, monkeypatch):
    """The scheduling path the study takes, end to end on one cheap run: the executor opened
    with the largest run's CPUs, the run executed in a worker, its stage timed."""

    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    search = design.recipe_plan("smoke", ("himo",))[0]  # a recipe point: trained, not evaluated
    stages = parallel.execute_all([search], "smoke", Execution(workers=1))
    assert set(stages) == {"recipe"} and stages["recipe"] > 0
    done = json.loads((tmp_path / "results" / "smoke" / search.name / "run.done").read_text())
    assert done["device"] == "cpu" and done["config"] == portable_config(search.config)


def test_the_command_runs_the_stages_in_order_and_records_how_it_ran_them(tmp_path, monkeypatch):
    """``python -m paperlib.study``: the run stage first, then the summary of the runs it planned
    (partial where one study is asked for), then ``study.json`` records the executor, workers,
    threads, device and seconds of this invocation beside what the summary wrote."""
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    calls = []
    run = design.plan("smoke", ("argent",))[0]

    def run_study(scale, studies, execution):
        calls.append(("run", scale, studies, execution.workers, execution.threads))
        return [run], {"argent": 12.0}

    def summarise(scale, runs, partial, stages, threads):
        calls.append(("summarise", scale, runs, partial, stages, threads))
        folder = tmp_path / "results" / scale
        folder.mkdir(parents=True)
        (folder / "study.json").write_text(json.dumps({"scale": scale, "runs": len(runs)}))

    monkeypatch.setattr(cli, "run_study", run_study)
    monkeypatch.setattr(cli, "summarise", summarise)
    argv = ["--scale", "smoke", "--studies", "argent", "--workers", "3", "--threads", "2"]
    assert cli.main(argv) == 0
    assert calls == [
        ("run", "smoke", ("argent",), 3, 2),
        ("summarise", "smoke", [run], True, {"argent": 12.0}, 2),
    ]
    record = json.loads((tmp_path / "results" / "smoke" / "study.json").read_text())
    assert record["scale"] == "smoke" and record["runs"] == 1  # the summary's fields kept
    assert {k: record[k] for k in ("workers", "threads_per_run", "executor", "device")} == {
        "workers": 3, "threads_per_run": 2, "executor": "local", "device": "cpu"
    }  # fmt: skip
    assert isinstance(record["seconds_this_invocation"], int)
