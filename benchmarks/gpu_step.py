"""One training step of each paper's method at paper scale, and the evaluation's throughput.

For ``clip``, ``himo`` (MoLo with HiDe, 248 tokens as HiMo's presets) and ``argent`` (with
box crops and phrases, as GRIT batches have them) at ViT-B/16 and ViT-L/14, 224 px, bf16
autocast, global batch 256 on one device, it prints per configuration:

- ``samples/s``: batch × measured steps / their wall time (after warm-up steps), the step
  being the loop's own ``backward_step`` + ``apply_update`` (forward, float32 loss, backward,
  clipping, AdamW, clamps) on batches already on the device;
- ``peak GiB``: ``torch.cuda.max_memory_allocated`` over the configuration's steps;
- ``HiDe %``: for ``himo``, the time MoLo's HiDe term adds to the loss (forward + backward of
  ``molo_loss`` minus the same with λ = 0, on the step's features) as a share of the step;
- ``MFU``: the step's FLOPs (``torch.utils.flop_counter`` over one forward + backward) per
  second over the device's dense bf16 peak (``--peak-tflops``; known for H100/H200/A100);
- ``eval img/s``: ``engine.evaluation.Embedder.images`` on decoded 256 × 256 images (the
  model's preprocessing on the CPU, then the image tower), as ``python -m paperlib.evaluate``
  runs it.

``--study-runs`` times instead one seed-0 run of each headline arm of the CPU-scale study as
``python -m paperlib.study --device cuda`` trains it (its planned config on the device, from
the committed bases, into a temporary folder): wall seconds, steps, samples/s.

    python benchmarks/gpu_step.py                    # the GPU check (about 5 minutes on H100)
    python benchmarks/gpu_step.py --tiny             # the same code on CPU, paper-tiny
    python benchmarks/gpu_step.py --study-runs       # the study's runs on the GPU (full scale)
    python benchmarks/gpu_step.py --study-runs --tiny  # the smoke scale's, on CPU
"""

from __future__ import annotations

import argparse
import contextlib
import math
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from PIL import Image
from torch.utils.flop_counter import FlopCounterMode

from paperlib.engine.config import load_config
from paperlib.engine.evaluation import Embedder
from paperlib.engine.loop import (
    apply_update,
    attach_grad_scaler,
    autocast_context,
    backward_step,
    build_optimizer,
)
from paperlib.engine.methods import build_module, input_size
from paperlib.losses.himo import molo_loss
from paperlib.study.design import plan
from paperlib.study.devices import on_device
from paperlib.study.execution import study_settings
from paperlib.train import train_run

# dense bf16 tensor-core peaks (TFLOP/s) by device name
PEAK_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0}
ARCHITECTURES = {"ViT-B/16": "ViT-B-16", "ViT-L/14": "ViT-L-14"}
METHODS = ("clip", "himo", "argent")


@dataclass(frozen=True)
class Setting:
    """What one run of the check measures: sizes, device, precision and step counts."""

    batch: int
    device: str
    precision: str
    warmup: int
    steps: int
    eval_images: int
    tiny: bool


def config_for(method: str, arch: str, s: Setting):
    """The training config of one measured configuration (synthetic data: never read)."""
    name = "paper-tiny" if s.tiny else ARCHITECTURES[arch]
    context = 248 if method == "himo" else 77
    return load_config(
        {
            "method": method,
            "model": {"name": name, "context_length": context},
            "data": {"dataset": "synthetic", "size": s.batch},
            "optim": {"lr": 1e-5, "max_grad_norm": 1.0},
            "train": {"batch_size": s.batch, "precision": s.precision, "device": s.device},
        }
    )


def synthetic_batch(module, tokenizer, config, size: int, batch: int, device) -> dict:
    """Random pixels and captions of the method's inputs, on ``device``."""
    words = ["a red", "small square", "left of", "the dog", "under a", "blue circle"]
    captions = [" ".join(words[(i + k) % 6] for k in range(8)) for i in range(batch)]
    out = {"image": torch.randn(batch, 3, size, size), "text": tokenizer(captions)}
    if config.method == "argent":
        out["box_image"] = torch.randn(batch, 3, size, size)
        out["box_text"] = tokenizer([c.split()[1] for c in captions])
    return {k: v.to(device) for k, v in out.items()}


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _timed(fn, device: torch.device, repeats: int) -> float:
    """Seconds per call of ``fn`` (after one untimed call)."""
    fn()
    _sync(device)
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    _sync(device)
    return (time.perf_counter() - start) / repeats


def step_flops(module, batch: dict, amp) -> float:
    """FLOPs of one forward + backward of the module on ``batch`` (the loss included)."""
    with FlopCounterMode(display=False) as counter:
        with amp:
            features = module(batch)
        out = module.compute_loss({k: v.float() for k, v in features.items()})
        out.total.backward()
    module.zero_grad(set_to_none=True)
    return float(counter.get_total_flops())


def hide_seconds(module, features: dict, device: torch.device, repeats: int) -> float:
    """Seconds HiDe's term adds to MoLo's loss (forward + backward), on the step's features."""
    image = features["image"].detach().float().requires_grad_()
    text = features["text"].detach().float().requires_grad_()
    scale = module.logit_scale.detach().clone().requires_grad_()
    cfg = module.loss_cfg

    def loss(lam: float):
        out = molo_loss(image, text, scale, tau=cfg.tau, lam=lam, label_smoothing=0.1)
        out.loss.backward()

    return _timed(lambda: loss(cfg.lam), device, repeats) - _timed(
        lambda: loss(0.0), device, repeats
    )


def eval_images_per_s(module, preprocess, tokenizer, s: Setting) -> float:
    """Images/s of the evaluation's embedding pass on decoded images."""
    embed = Embedder(module, preprocess, tokenizer, batch_size=min(s.batch, s.eval_images))
    images = [Image.new("RGB", (256, 256), (i % 256, 40, 90)) for i in range(s.eval_images)]
    device = next(module.parameters()).device
    seconds = _timed(lambda: embed.images(images), device, 1)
    return s.eval_images / seconds


def measure(method: str, arch: str, s: Setting) -> dict[str, float | str]:
    """Every figure of one (method, architecture) configuration."""
    config = config_for(method, arch, s)
    device = torch.device(s.device)
    torch.manual_seed(0)
    module, preprocess, tokenizer = build_module(config, device)
    attach_grad_scaler(module, s.precision, device)
    optimizer, scheduler = build_optimizer(module, config)
    amp = autocast_context(s.precision, device)
    size = input_size(module)
    batch = synthetic_batch(module, tokenizer, config, size, s.batch, device)
    module.train()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    features: dict = {}

    def step():
        optimizer.zero_grad(set_to_none=True)
        _, _, feats = backward_step(module, module, batch, accum_steps=1, amp=amp, step=1)
        apply_update(module, optimizer, scheduler, config)
        features.update(feats)

    for _ in range(max(0, s.warmup - 1)):
        step()
    seconds = _timed(step, device, s.steps)
    peak = torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else math.nan
    flops = step_flops(module, batch, amp)
    hide = hide_seconds(module, features, device, s.steps) if method == "himo" else math.nan
    tflops = peak_tflops(device)
    module.eval()
    return {
        "method": method,
        "arch": arch if not s.tiny else f"{arch} (tiny)",
        "samples/s": s.batch / seconds,
        "peak GiB": peak,
        "HiDe %": 100 * hide / seconds,
        "MFU %": 100 * flops / seconds / (tflops * 1e12) if tflops else math.nan,
        "eval img/s": eval_images_per_s(module, preprocess, tokenizer, s),
    }


def peak_tflops(device: torch.device, given: float | None = None) -> float | None:
    """The device's dense bf16 peak: ``given``, else looked up by CUDA device name."""
    if given is not None or device.type != "cuda":
        return given
    name = torch.cuda.get_device_name(device)
    return next((v for k, v in PEAK_TFLOPS.items() if k in name), None)


def table(rows: list[dict]) -> str:
    """The figures as a markdown table (``—`` where a figure does not apply)."""
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [
            "—" if isinstance(v, float) and math.isnan(v) else f"{v:.4g}"
            if isinstance(v, float) else str(v)
            for v in row.values()
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


STUDY_ARMS = (("himo", "MoLo"), ("argent", "ARGENT"))


def study_run_timing(scale: str, device: str) -> list[dict]:
    """Seconds of one seed-0 run of each :data:`STUDY_ARMS` arm of the study at ``scale`` on
    ``device`` (training only, one torch thread as the study runs it)."""
    rows = []
    for study, variant in STUDY_ARMS:
        run = next(r for r in plan(scale, (study,)) if r.variant == variant and r.seed == 0)
        with tempfile.TemporaryDirectory() as folder:
            train = {**run.config["train"], "output_dir": str(Path(folder) / "run")}
            config = on_device(replace(run, config={**run.config, "train": train}), device).config
            start = time.perf_counter()
            with study_settings(1):
                result = train_run(config)
            seconds = time.perf_counter() - start
        steps, batch = config["train"]["steps"], config["train"]["batch_size"]
        rows.append({
            "study run": run.name, "device": device, "status": result.status, "steps": steps,
            "seconds": seconds, "samples/s": steps * batch / seconds,
        })  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="paper-tiny at 32 px on the CPU")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=5, help="measured steps")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--eval-images", type=int, default=1024)
    parser.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--study-runs", action="store_true", help="time the study's runs")
    args = parser.parse_args(argv)
    if args.study_runs:
        if not args.tiny and not torch.cuda.is_available():
            parser.error("no CUDA device: run with --tiny for the smoke scale on CPU")
        rows = study_run_timing("smoke" if args.tiny else "full", "cpu" if args.tiny else "cuda")
        print(table(rows))
        return rows
    if args.tiny:
        setting = Setting(8, "cpu", "fp32", 1, 1, 16, True)
    else:
        if not torch.cuda.is_available():
            parser.error("no CUDA device: run with --tiny for the CPU version")
        setting = Setting(
            args.batch, "cuda", "bf16", args.warmup, args.steps, args.eval_images, False
        )
    if args.peak_tflops is not None:
        PEAK_TFLOPS.clear()
        PEAK_TFLOPS[""] = args.peak_tflops  # every device name contains ""
    rows = []
    for arch in list(ARCHITECTURES)[:1] if args.tiny else ARCHITECTURES:  # tiny: one size
        for method in args.methods:
            start = time.perf_counter()
            rows.append(measure(method, arch, setting))
            print(f"[gpu_step] {method} {arch}: {time.perf_counter() - start:.0f} s", flush=True)
            with contextlib.suppress(AttributeError):
                torch.cuda.empty_cache()
    print(table(rows))
    return rows


if __name__ == "__main__":
    main()
