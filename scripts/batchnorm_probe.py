#!/usr/bin/env python3
"""Why did the hyperbolic fine-tunes lose zero-shot L1 in their first steps, at any learning rate?

The study's image tower is a ResNet: its BatchNorm layers keep running statistics, updated by
every training forward pass. HyCoCLIP and ARGENT encode each batch's images and box crops in one
pass (``engine.methods.HyperbolicModule``), so a fine-tune's statistics drift towards a mix of
whole scenes and enlarged crops, and the test set's whole images are then normalised with them.
The papers' towers are ViTs (LayerNorm, no running statistics), where this cannot happen. The
study's fine-tunes now keep their base's statistics (``model.batchnorm: frozen``); this probe
updates them, as PyTorch's default training does, to measure what that costs.

This probe separates that drift from learning. From each headline ARGENT fine-tune's start (the
hyperbolic base of seeds 0 and 1, as ``study.design`` builds it) it runs the fine-tune's first
``--passes`` training batches through the image tower in train mode with no gradient, so no
weight changes and only the BatchNorm statistics move: once with the images and crops the loss
sees, once with the images alone. It writes the validation metrics of the start and of both
(``engine.validation``, the study's validation world) and the code it ran to ``--out``, a
folder the study never rewrites.

    python scripts/batchnorm_probe.py --passes 60
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from paperlib.atomic import atomic_write_text  # noqa: E402
from paperlib.engine.config import load_config  # noqa: E402
from paperlib.engine.data import build_dataset, build_loader  # noqa: E402
from paperlib.engine.methods import build_module, input_size  # noqa: E402
from paperlib.engine.validation import build_validation_set, validate  # noqa: E402
from paperlib.provenance import run_provenance  # noqa: E402
from paperlib.study import design  # noqa: E402

PROBE = REPO / "results" / "probes" / "batchnorm.json"
METRICS = ("zeroshot_L1", "short_i2t_r1")
INPUTS = {"images and crops": ("image", "box_image"), "images alone": ("image",)}


@torch.no_grad()
def drift_statistics(module: torch.nn.Module, batches: list[dict], keys: tuple[str, ...]):
    """A copy of ``module`` whose image tower has seen ``batches`` (their ``keys`` joined, as
    the loss's forward pass joins them) in train mode without gradients: the BatchNorm
    statistics move, no weight does."""
    drifted = copy.deepcopy(module).train()
    for batch in batches:
        drifted.model.clip.encode_image(torch.cat([batch[k] for k in keys]), normalize=False)
    return drifted


def probe_config(seed: int, scale: str, passes: int) -> dict:
    """The headline HyCoCLIP fine-tune of ``seed`` at ``scale`` with a world just large
    enough for ``passes`` batches (no cache, no output folder of the study's), its BatchNorm
    statistics updated in train mode (``model.batchnorm: train``; the study's fine-tunes keep
    them, the fix this probe motivated)."""
    run = next(
        r for r in design.plan(scale, ("argent",), searched=False)
        if r.variant == "HyCoCLIP" and r.seed == seed
    )  # fmt: skip
    config = json.loads(json.dumps(run.config))
    config["model"]["batchnorm"] = "train"  # statistics that move, as PyTorch's default has them
    config["data"].pop("cache_dir", None)
    config["data"]["size"] = config["train"]["batch_size"] * passes
    config["train"]["output_dir"] = str(Path("/tmp") / "batchnorm-probe")
    return config


def probe_seed(seed: int, scale: str, passes: int, val_size: int) -> dict:
    """The validation metrics of ``seed``'s start, and after the statistics drift on each of
    :data:`INPUTS`."""
    config = load_config(probe_config(seed, scale, passes))
    torch.manual_seed(config.train.seed)
    module, preprocess, tokenizer = build_module(config)
    val = build_validation_set(val_size, input_size(module), preprocess, tokenizer, METRICS)
    dataset = build_dataset(config.data, preprocess, image_size=input_size(module))
    loader = build_loader(config, dataset, tokenizer, rank=0, world_size=1, start_step=0)
    batches = [b for _, b in zip(range(passes), loader)]
    out = {"seed": seed, "init": config.model.init, "start": validate(module, val, METRICS)}
    for name, keys in INPUTS.items():
        out[name] = validate(drift_statistics(module, batches, keys), val, METRICS)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=60, help="training batches (default 60)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--scale", default="full")
    parser.add_argument("--val-size", type=int, default=500)
    parser.add_argument("--out", type=Path, default=PROBE)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    seeds = [probe_seed(s, args.scale, args.passes, args.val_size) for s in args.seeds]
    record = {
        "passes": args.passes,
        "scale": args.scale,
        "val_size": args.val_size,
        "metrics": list(METRICS),
        "seeds": seeds,
        "provenance": run_provenance(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, json.dumps(record, indent=1) + "\n")
    print(json.dumps(seeds, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
