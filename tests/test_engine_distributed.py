"""torchrun DDP (gloo, 2 CPU processes) reproduces the single-process loss curve
(docs/methods/conventions.md#distributed)."""

from __future__ import annotations

import json

import pytest
import torch

from paperlib.engine import distributed
from paperlib.engine.data import GlobalBatchSampler
from paperlib.engine.loop import train
from paperlib.train import train_distributed
from tests.engine_helpers import assert_same_updates, final_weights, initial_weights, tiny_config


def test_rank_slices_concatenate_to_the_single_process_batch():
    single = GlobalBatchSampler(50, 8, seed=3)
    ranks = [GlobalBatchSampler(50, 8, rank=r, world_size=2, seed=3) for r in range(2)]
    for step in (0, 1, 5, 6, 13):  # 6 steps per epoch: crosses epochs
        expected = single.global_indices(step)
        got = sum((s.global_indices(step)[r * 4 : (r + 1) * 4] for r, s in enumerate(ranks)), [])
        assert got == expected and len(set(expected)) == 8
    resumed = GlobalBatchSampler(50, 8, rank=1, world_size=2, seed=3, start_step=4, num_steps=3)
    full = GlobalBatchSampler(50, 8, rank=1, world_size=2, seed=3, num_steps=7)
    assert list(resumed) == list(full)[4:]
    epoch0 = sum((single.global_indices(s) for s in range(6)), [])
    assert len(set(epoch0)) == 48  # an epoch never repeats a sample


def test_single_process_helpers_are_identities():
    info = distributed.init_distributed("cpu")
    assert (info.rank, info.world_size, info.is_main) == (0, 1, True)
    model = torch.nn.Linear(2, 2)
    assert distributed.wrap_ddp(model, info) is model and distributed.unwrap(model) is model
    assert distributed.any_true(True) and not distributed.any_true(False)
    assert distributed.all_gather_objects({"a": 1}) == [{"a": 1}]
    x = torch.arange(3.0)
    assert torch.equal(distributed.mean_across_ranks(x), x)


@pytest.mark.slow
@pytest.mark.distributed
@pytest.mark.parametrize("method", ["clip", "himo", "argent"])
def test_two_process_gloo_matches_single_process(tmp_path, method):
    steps = 4
    sections = {"train": {"steps": steps, "batch_size": 16}}
    start = initial_weights(tiny_config(method, tmp_path, **sections), tmp_path / "start")
    single = train(tiny_config(method, tmp_path / "single", **sections))

    train_distributed(tiny_config(method, tmp_path / "ddp", **sections), 2, f"{method}/ddp")
    log = [json.loads(x) for x in (tmp_path / "ddp" / "log.jsonl").read_text().splitlines()]
    curve = [r for r in log if "loss" in r]
    assert [r["step"] for r in curve] == list(range(1, steps + 1))
    for ref, got in zip(single.history, curve):
        for key in ref:
            if key in ("samples_per_s", "cpu_seconds") or key.startswith("diag/"):
                continue  # timing; diagnostics are of rank 0's local batch
            assert got[key] == pytest.approx(ref[key], rel=2e-4, abs=1e-6), (ref["step"], key)
    assert_same_updates(start, final_weights(tmp_path / "single"), final_weights(tmp_path / "ddp"))


def test_a_cuda_device_this_machine_lacks_is_named(monkeypatch):
    from paperlib.engine.distributed import pick_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("auto") == torch.device("cpu")
    for device in ("cuda", "cuda:0"):
        with pytest.raises(ValueError, match=r"train.device='cuda:0'.*has 0 CUDA device"):
            pick_device(device)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert pick_device("cuda", local_rank=1) == torch.device("cuda:1")
    with pytest.raises(ValueError, match=r"'cuda:2'.*has 2 CUDA device"):
        pick_device("cuda:2")


def test_the_train_command_names_a_missing_gpu_without_a_traceback(tmp_path, capsys, monkeypatch):
    from paperlib.train import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    config = tiny_config("clip", tmp_path / "run")
    (tmp_path / "c.json").write_text(json.dumps(config))
    assert main([str(tmp_path / "c.json"), "train.device=cuda"]) == 2
    assert "device error: train.device='cuda:0': this machine has 0 CUDA" in capsys.readouterr().err
