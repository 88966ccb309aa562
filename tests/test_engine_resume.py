"""Nothing lost: atomic checkpoints, SIGTERM then resume == uninterrupted run, NaN stops."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
import yaml

from paperlib.engine import checkpoint
from paperlib.engine.config import load_config
from paperlib.engine.data import Collate, build_dataset
from paperlib.engine.loop import NonFiniteLossError, backward_step, train
from paperlib.engine.methods import build_module
from tests.engine_helpers import REPO, comparable, final_weights, tiny_config


def test_rng_state_round_trip():
    random.seed(1), np.random.seed(1), torch.manual_seed(1)
    state = checkpoint.rng_state()
    expected = (random.random(), np.random.rand(), torch.rand(1).item())
    random.seed(9), np.random.seed(9), torch.manual_seed(9)
    checkpoint.set_rng_state(state)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == expected


def test_atomic_save_leaves_old_file_on_failure(tmp_path):
    path = checkpoint.atomic_save({"a": torch.ones(2)}, tmp_path / "last.pt")

    class Unpicklable:
        def __reduce__(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        checkpoint.atomic_save({"a": Unpicklable()}, path)
    assert torch.equal(torch.load(path, weights_only=True)["a"], torch.ones(2))


def _wait_for_step(log, step, proc, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if log.is_file():
            lines = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
            if any(r.get("step", 0) >= step for r in lines):
                return True
        time.sleep(0.02)
    return False


@pytest.mark.slow
def test_sigterm_then_resume_matches_uninterrupted_run(tmp_path):
    steps = 16
    sections = {"train": {"steps": steps, "ckpt_every": 1000}}
    ref = train(tiny_config("himo", tmp_path / "ref", **sections))
    assert ref.status == "finished" and ref.step == steps

    raw = tiny_config("himo", tmp_path / "cut", **sections)
    cfg = tmp_path / "cut.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": str(torch.get_num_threads())}
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperlib.train", str(cfg)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert _wait_for_step(tmp_path / "cut" / "log.jsonl", 3, proc), proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 75, err  # stopped with its checkpoint: the same command resumes
    assert "SIGTERM" in out
    saved = torch.load(tmp_path / "cut" / "last.pt", weights_only=True)
    assert 3 <= saved["step"] < steps  # really stopped mid-way
    log = [json.loads(x) for x in (tmp_path / "cut" / "log.jsonl").read_text().splitlines()]
    assert log[-1] == {"step": saved["step"], "status": "interrupted"}

    resumed = train(raw)  # same output_dir: resumes from last.pt
    assert resumed.status == "finished" and resumed.step == steps
    assert resumed.history[0]["step"] == saved["step"] + 1
    before = [r["cpu_seconds"] for r in log if r.get("step", 0) <= saved["step"] and "loss" in r]
    assert resumed.history[0]["cpu_seconds"] > before[-1]  # the CPU clock continues
    a, b = final_weights(tmp_path / "ref"), final_weights(tmp_path / "cut")
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(
            comparable(b, key), comparable(a, key), rtol=1e-4, atol=1e-6, msg=key
        )
    tail_ref = {r["step"]: r["loss"] for r in ref.history}
    for record in resumed.history:
        assert record["loss"] == pytest.approx(tail_ref[record["step"]], rel=1e-5)
        assert (
            record["hide_m"]
            == next(r for r in ref.history if r["step"] == record["step"])["hide_m"]
        )


def test_resume_refuses_a_different_run(tmp_path):
    train(tiny_config("clip", tmp_path / "run", train={"steps": 1}))
    from paperlib.engine.config import ConfigError

    with pytest.raises(ConfigError, match="train.output_dir: .* differs in method"):
        train(tiny_config("himo", tmp_path / "run", train={"steps": 2}))
    with pytest.raises(ConfigError, match=r"differs in data\.seed, optim\.lr"):
        train(
            tiny_config(
                "clip", tmp_path / "run", train={"steps": 2}, data={"seed": 3}, optim={"lr": 0.5}
            )
        )
    longer = train(tiny_config("clip", tmp_path / "run", train={"steps": 2, "log_every": 2}))
    assert longer.status == "finished" and longer.step == 2  # length and logging may change


@pytest.mark.parametrize("method, term", [("clip", "contrastive"), ("himo", "global")])
def test_non_finite_loss_names_step_and_term(tmp_path, method, term):
    config = load_config(tiny_config(method, tmp_path / "nan"))
    config.model.logit_scale_init = 1e4  # past the range a config accepts: the loss overflows
    with pytest.raises(NonFiniteLossError, match=rf"step 1: term '{term}'"):
        train(config)


@pytest.mark.parametrize("method, loss", [("clip", {}), ("himo", {}), ("longclip", {"pcm_dim": 4})])
def test_gradient_accumulation_equals_one_pass(tmp_path, method, loss):
    config = load_config(tiny_config(method, tmp_path, loss=loss))
    torch.manual_seed(0)
    module, preprocess, tokenizer = build_module(config)
    dataset = build_dataset(config.data, preprocess, image_size=32)
    batch = Collate(tokenizer, short_text=method == "longclip")([dataset[i] for i in range(16)])
    grads, losses = [], []
    for accum in (1, 4):
        module.zero_grad(set_to_none=True)
        out, _, _ = backward_step(
            module, module, batch, accum_steps=accum, amp=contextlib.nullcontext(), step=1
        )
        losses.append(out.total.item())
        grads.append(
            {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}
        )
    assert losses[1] == pytest.approx(losses[0], rel=1e-6)
    assert grads[0].keys() == grads[1].keys() and len(grads[0]) > 10
    for name, g in grads[0].items():
        scale = g.abs().max().item()
        torch.testing.assert_close(grads[1][name], g, rtol=1e-4, atol=1e-5 * scale + 1e-9, msg=name)
