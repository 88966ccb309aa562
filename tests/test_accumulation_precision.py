"""Gradient accumulation is exact or refused by name; fp16 trains with a loss scaler."""

from __future__ import annotations

import contextlib

import pytest
import torch

from paperlib.engine.config import ConfigError, load_config
from paperlib.engine.loop import (
    attach_grad_scaler,
    backward_step,
    batchnorm_layers,
    check_accumulation,
    dry_run,
    grad_scaler,
    train,
)
from paperlib.engine.methods import build_module
from tests.engine_helpers import shards_config, tiny_config


def test_a_per_rank_batch_accum_steps_does_not_divide_is_refused(tmp_path):
    # global 12 on 2 ranks: 6 rows per rank, which 4 micro-batches cannot split evenly
    config = load_config(tiny_config("clip", tmp_path, train={"batch_size": 12, "accum_steps": 4}))
    module, _, _ = build_module(config)
    with pytest.raises(ConfigError, match=r"train.accum_steps=4.*per-rank batch.*= 6"):
        check_accumulation(module, config, world_size=2)
    check_accumulation(module, config, world_size=1)  # 12 rows, 3 each: exact


def test_backward_step_refuses_rows_it_would_drop(tmp_path):
    config = load_config(tiny_config("clip", tmp_path, train={"batch_size": 8, "accum_steps": 2}))
    module, _, tokenizer = build_module(config)
    batch = {"image": torch.randn(6, 3, 32, 32), "text": tokenizer(["a red circle"] * 6)}
    with pytest.raises(ConfigError, match="accum_steps=4 does not divide .* 6 rows"):
        backward_step(module, module, batch, accum_steps=4, amp=contextlib.nullcontext(), step=1)


def test_batchnorm_models_refuse_accumulation_by_name(tmp_path):
    raw = tiny_config("clip", tmp_path, model={"name": "paper-tiny-rn"}, train={"accum_steps": 2})
    config = load_config(raw)
    module, _, _ = build_module(config)
    assert batchnorm_layers(module)  # the ResNet towers normalise with batch statistics
    with pytest.raises(ConfigError, match="paper-tiny-rn.*BatchNorm"):
        check_accumulation(module, config, world_size=1)
    with pytest.raises(ConfigError, match="paper-tiny-rn.*BatchNorm"):
        dry_run(config)
    plain = load_config(tiny_config("clip", tmp_path, model={"name": "paper-tiny-rn"}))
    check_accumulation(build_module(plain)[0], plain, world_size=1)  # one pass: fine
    assert not batchnorm_layers(build_module(load_config(tiny_config("clip", tmp_path)))[0])


def test_fp16_scales_the_loss_and_unscales_before_the_update(tmp_path):
    config = load_config(tiny_config("clip", tmp_path, train={"precision": "fp16"}))
    module, _, tokenizer = build_module(config)
    attach_grad_scaler(module, "fp16", torch.device("cpu"))
    scaler = grad_scaler(module)
    assert scaler is not None and scaler.get_scale() == 2.0**16
    batch = {"image": torch.randn(4, 3, 32, 32), "text": tokenizer(["a red circle"] * 4)}
    reference = load_config(tiny_config("clip", tmp_path / "ref"))
    plain, _, _ = build_module(reference)
    plain.load_state_dict(module.state_dict())
    attach_grad_scaler(plain, "fp32", torch.device("cpu"))
    assert grad_scaler(plain) is None
    for m in (module, plain):
        backward_step(m, m, batch, accum_steps=1, amp=contextlib.nullcontext(), step=1)
    name, p = next((n, p) for n, p in module.named_parameters() if p.grad is not None)
    ref = dict(plain.named_parameters())[name].grad
    torch.testing.assert_close(p.grad, ref * 2.0**16, rtol=1e-4, atol=1e-6)  # scaled


def test_an_fp16_run_trains_and_resumes_its_scaler(tmp_path):
    raw = tiny_config("clip", tmp_path / "run", train={"precision": "fp16", "steps": 2})
    first = train(raw)
    state = torch.load(first.checkpoint, weights_only=True)
    assert "grad_scaler" in state and state["grad_scaler"]["scale"] > 0
    again = train({**raw, "train": {**raw["train"], "steps": 3}})
    assert again.step == 3 and again.status == "finished"


def test_evaluating_a_run_needs_no_training_data(tmp_path):
    import shutil

    from paperlib.engine.evaluation import evaluate

    raw = shards_config("clip", tmp_path, samples=16, maxcount=8, steps=1, batch_size=8)
    train(raw)
    shutil.rmtree(tmp_path / "shards")  # the training data is gone
    rows = evaluate(tmp_path / "run", ["world-long"], output_dir=tmp_path / "eval", world_size=8)
    assert rows[0]["dataset"] == "world-long" and rows[0]["model"] == "clip:paper-tiny"
