#!/usr/bin/env python3
"""Does a gentler start keep the base's fine-grained zero-shot in a hyperbolic fine-tune?

Every hyperbolic fine-tune of the full study loses zero-shot accuracy in its first validation
period and does not regain it (the study's curves, ``results/full/curves.json``). This probe
re-trains one committed run (ARGENT, seed 0, by default) with only the learning rate and
warm-up changed, and validates L1, L3 and short I2T R@1 every ``--val-every`` steps. It writes
the validation curves of each setting to ``--out`` as JSON; the study itself is not touched.

    python scripts/hyperbolic_lr_probe.py --setting 1e-4:10 --setting 5e-5:60
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from paperlib.engine.loop import train  # noqa: E402
from paperlib.train import read_validation  # noqa: E402

METRICS = ["short_i2t_r1", "zeroshot_L1", "zeroshot_L3"]


def probe_config(run_done: Path, lr: float, warmup: int, val_every: int, out: Path) -> dict:
    """The committed run's config with ``lr``/``warmup`` changed and L3 validated too."""
    config = copy.deepcopy(json.loads(run_done.read_text())["config"])
    config["optim"].update(lr=lr, warmup_steps=warmup)
    config["train"].update(output_dir=str(out), val_metrics=METRICS, val_every=val_every)
    return config


def validation_curve(log: Path) -> list[dict]:
    """The ``{"step", **metrics}`` validation records of the run whose log is ``log``."""
    return [{"step": r["step"], **r["val"]} for r in read_validation(log.parent)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=REPO / "results/full/argent/argent/seed0")
    parser.add_argument("--setting", action="append", required=True, help="LR:WARMUP_STEPS")
    parser.add_argument("--val-every", type=int, default=30)
    parser.add_argument("--out", type=Path, default=REPO / "results/full/probes/hyperbolic-lr.json")
    args = parser.parse_args(argv)
    os.chdir(REPO)  # the committed config's paths (base, world cache) are the repository's
    curves = {}
    with tempfile.TemporaryDirectory() as scratch:
        for setting in args.setting:
            lr, warmup = setting.split(":")
            folder = Path(scratch) / setting.replace(":", "-")
            config = probe_config(
                args.run / "run.done", float(lr), int(warmup), args.val_every, folder
            )
            train(config)
            curves[setting] = validation_curve(folder / "log.jsonl")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {"run": str(args.run.relative_to(REPO)), "metrics": METRICS, "curves": curves}
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
