"""Training throughput of the study's fine-tunes with the text tower reading only the batch's
used columns (``paperlib.models.clip.text_features``) against the whole context (open_clip's
``encode_text``), side by side in one process.

For each method (the full study's seed-0 MoLo at 248 tokens and ARGENT at 77 by default), the
two paths alternate ``--repeats`` times over the same ``--steps`` steps from the same base;
samples/s is the median of the run's logged intervals after the first. One thread, as each
study worker has.

    .venv/bin/python benchmarks/bench_text_trim.py [--steps 40] [--repeats 2]
        [--variants molo argent] [--size 30000]

The training world (``--size`` samples, the study's by default) is rendered into a scratch
cache; no validation runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

import torch

import paperlib.models.clip as clip_module
from paperlib.study.paths import slug
from paperlib.study.plan import design
from paperlib.study.plan.scales import SCALES
from paperlib.train import train_run

TRIMS = clip_module.trims_padding  # the rule text_features consults; swapped to measure
PATHS = {"whole context": lambda model: False, "used columns": TRIMS}


def study_config(variant: str, out: Path, steps: int, size: int) -> dict:
    """The full study's seed-0 config of ``variant`` (a slug; the scale's fixed recipe: the
    text path's cost does not depend on it), cut to ``steps`` steps on a world of ``size``
    samples cached beside ``out``, logging about six intervals."""
    planned = design.plan("full", searched=False)
    run = next(r for r in planned if r.seed == 0 and slug(r.variant) == variant)
    config = json.loads(json.dumps(run.config))
    config["train"].update(steps=steps, output_dir=str(out), val_every=0, ckpt_every=10**9)
    config["train"]["log_every"] = max(1, steps // 6)  # several intervals whatever the plan logs
    config["data"].update(size=size, cache_dir=str(out.parent / "world-cache"))
    return config


def samples_per_second(config: dict) -> float:
    train_run(config)
    log = [json.loads(line) for line in Path(config["train"]["output_dir"], "log.jsonl").open()]
    rates = [row["samples_per_s"] for row in log if "samples_per_s" in row]
    return statistics.median(rates[1:])


def measure(
    variant: str, steps: int, repeats: int, size: int, scratch: Path
) -> dict[str, list[float]]:
    rates: dict[str, list[float]] = {label: [] for label in PATHS}
    try:
        for repeat in range(repeats):
            for label, rule in PATHS.items():
                clip_module.trims_padding = rule
                out = scratch / f"{variant}-{repeat}-{label.replace(' ', '-')}"
                rates[label].append(samples_per_second(study_config(variant, out, steps, size)))
    finally:
        clip_module.trims_padding = TRIMS
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--variants", nargs="+", default=["molo", "argent"])
    parser.add_argument("--size", type=int, default=SCALES["full"].train_size)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as scratch:
        for variant in args.variants:
            rates = measure(variant, args.steps, args.repeats, args.size, Path(scratch))
            whole = statistics.median(rates["whole context"])
            used = statistics.median(rates["used columns"])
            print(
                f"{variant}: whole context {whole:.1f} samples/s, used columns {used:.1f} "
                f"samples/s, ratio {used / whole:.2f} (repeats: {rates})"
            )


if __name__ == "__main__":
    main()
