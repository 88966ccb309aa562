"""One training step of each paper preset at its per-GPU batch, and the evaluation's throughput.

For each paper preset (HiMo ViT-B/16 and ViT-L/14 on ShareGPT4V, ARGENT-S/B/L on GRIT: the
preset's own method, model, context length, loss and precision) at the paper's per-GPU batch
(the preset's global ``train.batch_size`` over ``--gpus``, 8: HiMo's 128 a GPU, ARGENT's 96) on
synthetic data of the preset's inputs (box crops and phrases for ARGENT), it records:

- ``samples/s``: batch × measured steps / their wall time (after warm-up steps), the step
  being the loop's own ``backward_step`` + ``apply_update`` (forward, float32 loss, backward,
  clipping, AdamW, clamps) on batches already on the device;
- ``peak GiB``: ``torch.cuda.max_memory_allocated`` over the preset's steps;
- ``HiDe %``: for ``himo``, the time MoLo's HiDe term adds to the loss (forward + backward of
  ``molo_loss`` minus the same with λ = 0, on the step's features) as a share of the step;
- ``MFU``: the step's FLOPs (``torch.utils.flop_counter`` over one forward + backward) per
  second over the device's dense bf16 peak (``--peak-tflops``; known for H100/H200/A100);
- ``eval img/s``: ``engine.evaluation.Embedder.images`` on decoded 256 × 256 images (the
  model's preprocessing, then the image tower), as ``python -m paperlib.evaluate`` runs it.

The table is printed and written with the device, torch version and settings to
``results/benchmarks/gpu_step.json`` (``--output``). ``--study-runs`` times instead one seed-0
run of each headline arm of the CPU-scale study as ``python -m paperlib.study --device cuda``
trains it (its planned config on the device, from the committed bases, into a temporary
folder): wall seconds, steps, samples/s.

    python benchmarks/gpu_step.py                    # the GPU check, one script
    python benchmarks/gpu_step.py --tiny --output /tmp/gpu_step.json  # the same code on CPU
    python benchmarks/gpu_step.py --study-runs       # the study's runs on the GPU (full scale)
    python benchmarks/gpu_step.py --study-runs --tiny  # the smoke scale's, on CPU
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from PIL import Image
from torch.utils.flop_counter import FlopCounterMode

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
from paperlib.notebooks import PARAMS_DIR, load_parameters
from paperlib.study.plan.design import plan
from paperlib.study.run.devices import on_device
from paperlib.study.run.execution import study_settings
from paperlib.train import config_from, train_run

# dense bf16 tensor-core peaks (TFLOP/s) by device name
PEAK_TFLOPS = {"H200": 989.0, "H100": 989.0, "A100": 312.0}
# the paper presets timed, as params/<notebook>/<preset>.yaml
PRESETS = (
    ("train_himo", "vit-b16-sharegpt4v-8xh100"),
    ("train_himo", "vit-l14-sharegpt4v-8xh100"),
    ("train_argent", "argent-s-grit"),
    ("train_argent", "argent-b-grit"),
    ("train_argent", "argent-l-grit"),
)
PAPER_GPUS = 8  # the presets' global batches are over one node of 8 GPUs
OUTPUT = Path(__file__).resolve().parent.parent / "results" / "benchmarks" / "gpu_step.json"


@dataclass(frozen=True)
class Setting:
    """What one run of the check measures: GPUs the global batch is over, device, precision
    (None: the preset's), step counts, and ``tiny`` (paper-tiny on the CPU at batch 8)."""

    gpus: int
    device: str
    precision: str | None
    warmup: int
    steps: int
    eval_images: int
    tiny: bool


def config_for(folder: str, preset: str, s: Setting):
    """The preset's training config at its per-GPU batch, on synthetic data (never read)."""
    raw = load_parameters(PARAMS_DIR / folder / f"{preset}.yaml")
    overrides = [
        *raw.get("overrides", []), "data.dataset=synthetic", "data.num_workers=0",
        "model.init=random", "train.accum_steps=1", f"train.device={s.device}",
        "train.val_every=0", *(["model.name=paper-tiny"] if s.tiny else []),
        *([f"train.precision={s.precision}"] if s.precision else []),
    ]  # fmt: skip
    paper = config_from({"config": raw["config"], "overrides": overrides}, ["data.size=100000"])
    batch = 8 if s.tiny else max(1, paper.train.batch_size // s.gpus)
    sized = [f"data.size={batch}", f"train.batch_size={batch}"]
    return config_from({"config": raw["config"], "overrides": [*overrides, *sized]})


def synthetic_batch(module, tokenizer, config, size: int, batch: int, device) -> dict:
    """Random pixels and captions of the method's inputs, on ``device``."""
    words = ["a red", "small square", "left of", "the dog", "under a", "blue circle"]
    captions = [" ".join(words[(i + k) % 6] for k in range(8)) for i in range(batch)]
    out = {"image": torch.randn(batch, 3, size, size), "text": tokenizer(captions)}
    if module.geometry == "hyperbolic" and module.boxes:
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


def eval_images_per_s(module, preprocess, tokenizer, s: Setting, batch: int) -> float:
    """Images/s of the evaluation's embedding pass on decoded images."""
    embed = Embedder(module, preprocess, tokenizer, batch_size=min(batch, s.eval_images))
    images = [Image.new("RGB", (256, 256), (i % 256, 40, 90)) for i in range(s.eval_images)]
    device = next(module.parameters()).device
    seconds = _timed(lambda: embed.images(images), device, 1)
    return s.eval_images / seconds


def measure(folder: str, preset: str, s: Setting) -> dict[str, float | str]:
    """Every figure of one paper preset."""
    config = config_for(folder, preset, s)
    device = torch.device(s.device)
    torch.manual_seed(0)
    module, preprocess, tokenizer = build_module(config, device)
    precision = config.train.precision
    attach_grad_scaler(module, precision, device)
    optimizer, scheduler = build_optimizer(module, config)
    amp = autocast_context(precision, device)
    size, batch_size = input_size(module), config.train.batch_size
    batch = synthetic_batch(module, tokenizer, config, size, batch_size, device)
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
    himo = config.method == "himo"
    hide = hide_seconds(module, features, device, s.steps) if himo else math.nan
    tflops = peak_tflops(device)
    module.eval()
    return {
        "preset": f"{folder}/{preset}",
        "method": config.method,
        "model": config.model.name,
        "batch/GPU": batch_size,
        "samples/s": batch_size / seconds,
        "peak GiB": peak,
        "HiDe %": 100 * hide / seconds,
        "MFU %": 100 * flops / seconds / (tflops * 1e12) if tflops else math.nan,
        "eval img/s": eval_images_per_s(module, preprocess, tokenizer, s, batch_size),
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


def write_record(rows: list[dict], path: Path, s: Setting) -> Path:
    """The figures with the device, torch version and settings, as JSON at ``path``."""
    device = torch.cuda.get_device_name() if s.device == "cuda" else "cpu"
    record = {
        "device": device,
        "torch": torch.__version__,
        "setting": {"gpus": s.gpus, "warmup": s.warmup, "steps": s.steps, "tiny": s.tiny},
        "rows": [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in rows
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="paper-tiny at 32 px on the CPU")
    parser.add_argument(
        "--gpus", type=int, default=PAPER_GPUS, help="GPUs a preset's batch is over"
    )
    parser.add_argument("--steps", type=int, default=5, help="measured steps")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--eval-images", type=int, default=1024)
    parser.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak")
    parser.add_argument("--presets", nargs="+", choices=[p for _, p in PRESETS], help="a subset")
    parser.add_argument("--output", type=Path, help=f"the JSON record (GPU default: {OUTPUT})")
    parser.add_argument("--study-runs", action="store_true", help="time the study's runs")
    args = parser.parse_args(argv)
    if args.study_runs:
        if not args.tiny and not torch.cuda.is_available():
            parser.error("no CUDA device: run with --tiny for the smoke scale on CPU")
        rows = study_run_timing("smoke" if args.tiny else "full", "cpu" if args.tiny else "cuda")
        print(table(rows))
        return rows
    if args.tiny:
        setting = Setting(args.gpus, "cpu", "fp32", 1, 1, 16, True)
    else:
        if not torch.cuda.is_available():
            parser.error("no CUDA device: run with --tiny for the CPU version")
        setting = Setting(args.gpus, "cuda", None, args.warmup, args.steps, args.eval_images, False)
    if args.peak_tflops is not None:
        PEAK_TFLOPS.clear()
        PEAK_TFLOPS[""] = args.peak_tflops  # every device name contains ""
    rows = []
    for folder, preset in PRESETS:
        if args.presets and preset not in args.presets:
            continue
        start = time.perf_counter()
        rows.append(measure(folder, preset, setting))
        print(f"[gpu_step] {preset}: {time.perf_counter() - start:.0f} s", flush=True)
        with contextlib.suppress(AttributeError):
            torch.cuda.empty_cache()
    print(table(rows))
    output = args.output or (None if args.tiny else OUTPUT)
    if output is not None:
        print(f"[gpu_step] written {write_record(rows, output, setting)}")
    return rows


if __name__ == "__main__":
    main()
