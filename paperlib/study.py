"""The CPU-scale study (issue 7): both papers' comparisons on the generated world.

- **HiMo** (SPEC §1.4): per seed, pre-train a small CLIP on *short* captions (77 tokens; it
  stands in for pretrained CLIP), then fine-tune it on *long* captions (248 tokens, Long-CLIP
  residual positions) with global InfoNCE only (``longclip``) or with MoLo (``himo``), plus a
  τ and λ sweep (on seed 0). Metrics: long/short retrieval, HiMo@2/3, HiMo@K, SSI, COLA.
- **ARGENT** (SPEC §2.4): per seed, a small hyperbolic CLIP trained with MERU's entailment,
  HyCoCLIP's, ARGENT's, and ARGENT's ablations (no weights, weights on all pairs, no
  regularizer). Metrics: zero-shot accuracy per taxonomy level, retrieval R@5, PEP AUC/AP, the
  aperture diagnostics from the training logs.

Everything goes through the engine (``paperlib.train.run``, ``paperlib.evaluate.run``); runs
live in ``runs/study-<scale>/`` and are resumable (a finished evaluation is skipped, an
unfinished training resumes from its last checkpoint). What the notebooks need is copied to
``results/<scale>/``: every CLIP_benchmark results file, each run's training log, and, for
seed 0, the embeddings of the held-out world.

    python -m paperlib.study --scale smoke      # one seed, short schedules (make reproduce)
    python -m paperlib.study --scale full       # ≥ 3 seeds (make study)

Choices the papers do not make for us (CPU scale): learning rates are raised from the
papers' 1e-6 (fine-tuning a converged ViT-L) to values that move a 3.4M-parameter model in a
few hundred steps; the HiMo fine-tune starts from our own short-caption pre-training rather
than OpenAI CLIP; hyperbolic runs train on the world's long captions truncated to 77 tokens
with one box crop per image (SPEC §2.3).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from paperlib.atomic import atomic_write_text

REPO_ROOT = Path(__file__).resolve().parent.parent
HIMO_BENCHMARKS = ("world-long", "world-short", "world-monotonicity", "world-cola")
ARGENT_BENCHMARKS = ("world-zeroshot", "world-long", "world-hierarchy")
EVAL_SEED_OFFSET = 10_000  # held-out world: scenes the training world never draws
# the HiMo runs the tutorials compare: study variant -> short label, and their colours
HIMO_MODELS = {"pretrain (short captions)": "pre-trained", "InfoNCE (long captions)": "InfoNCE",
               "MoLo (τ=0.9, λ=1)": "MoLo"}  # fmt: skip
HIMO_COLORS = {"pre-trained": "tab:gray", "InfoNCE": "tab:blue", "MoLo": "tab:red"}
# the runs whose held-out embeddings the tutorials read (seed 0)
EMBEDDING_VARIANTS = ("pretrain (short captions)", "InfoNCE (long captions)", "MoLo (τ=0.9, λ=1)",
                      "MERU (Ent)", "HyCoCLIP (Ent)", "ARGENT")


@dataclass(frozen=True)
class Scale:
    """Schedule sizes of one study scale."""

    seeds: tuple[int, ...]
    pretrain_steps: int
    finetune_steps: int
    hyperbolic_steps: int
    pretrain_batch: int
    batch_size: int
    train_size: int
    eval_size: int
    sweep_seeds: tuple[int, ...]  # seeds that also run the τ / λ sweep


SCALES = {
    "smoke": Scale(seeds=(0,), pretrain_steps=40, finetune_steps=20, hyperbolic_steps=30,
                   pretrain_batch=64, batch_size=32, train_size=2048, eval_size=128, sweep_seeds=()),
    "full": Scale(seeds=(0, 1, 2), pretrain_steps=300, finetune_steps=80, hyperbolic_steps=150,
                  pretrain_batch=128, batch_size=64, train_size=20_000, eval_size=300, sweep_seeds=(0,)),
}  # fmt: skip


@dataclass(frozen=True)
class Run:
    """One training run of the study and how to evaluate it."""

    study: str  # "himo" | "argent"
    variant: str  # row label in the tables
    seed: int
    config: dict[str, Any]
    benchmarks: tuple[str, ...]
    after: str | None = None  # variant whose checkpoint initialises this run

    @property
    def name(self) -> str:
        return f"{self.study}/{self.variant}/seed{self.seed}"


def _base_config(method: str, seed: int, scale: Scale, steps: int, output: Path, **sections) -> dict:
    config = {
        "method": method,
        "model": {"name": "paper-tiny", "init": "random"},
        "data": {"dataset": "world", "size": scale.train_size, "image_size": 32, "seed": seed},
        "optim": {},
        "loss": {},
        "train": {"steps": steps, "batch_size": scale.batch_size, "seed": seed, "log_every": 5,
                  "diag_every": 10, "ckpt_every": max(steps // 4, 10), "output_dir": str(output),
                  "progress": False},
    }  # fmt: skip
    for section, values in sections.items():
        config[section].update(values)
    return config


def himo_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """Pre-train on short captions, then fine-tune on long captions: InfoNCE vs MoLo (+ sweep)."""
    out = root / "himo"
    pre = _base_config(
        "clip", seed, scale, scale.pretrain_steps, out / f"pretrain/seed{seed}",
        data={"caption": "short_caption"}, optim={"lr": 1e-3, "warmup_steps": 20, "weight_decay": 0.1},
        train={"batch_size": scale.pretrain_batch},
    )  # fmt: skip
    runs = [Run("himo", "pretrain (short captions)", seed, pre, HIMO_BENCHMARKS)]
    finetune = {"lr": 1e-4, "warmup_steps": 10}
    variants = {"InfoNCE (long captions)": ("longclip", {})}
    variants["MoLo (τ=0.9, λ=1)"] = ("himo", {})
    if seed in scale.sweep_seeds:
        for tau in (0.8, 0.95):
            variants[f"MoLo (τ={tau}, λ=1)"] = ("himo", {"tau": tau})
        for lam in (0.5, 2.0):
            variants[f"MoLo (τ=0.9, λ={lam:g})"] = ("himo", {"lam": lam})
    for label, (method, loss) in variants.items():
        slug = label.split(" ")[0].lower() + "-" + "-".join(
            f"{k}{v:g}" for k, v in sorted(loss.items())
        )
        config = _base_config(
            method, seed, scale, scale.finetune_steps, out / f"{slug.rstrip('-')}/seed{seed}",
            optim=dict(finetune), loss=loss,
        )  # fmt: skip
        runs.append(Run("himo", label, seed, config, HIMO_BENCHMARKS, after="pretrain (short captions)"))
    return runs


def argent_runs(scale: Scale, seed: int, root: Path) -> list[Run]:
    """MERU Ent, HyCoCLIP, ARGENT and ARGENT's ablations (SPEC §2.4, table 3)."""
    out = root / "argent"
    optim = {"lr": 1e-3, "warmup_steps": 20}
    variants = {
        "MERU (Ent)": ("meru", {}),
        "HyCoCLIP (Ent)": ("hycoclip", {}),
        "ARGENT": ("argent", {}),
        "ARGENT, no weights": ("argent", {"weights": "none"}),
        "ARGENT, weights on all pairs": ("argent", {"weights": "all"}),
        "ARGENT, no regularizer": ("argent", {"regularize": False}),
    }
    runs = []
    for label, (method, loss) in variants.items():
        slug = method + "".join(f"-{k}-{v}" for k, v in loss.items())
        config = _base_config(method, seed, scale, scale.hyperbolic_steps, out / f"{slug}/seed{seed}",
                              optim=dict(optim), loss=loss)  # fmt: skip
        runs.append(Run("argent", label, seed, config, ARGENT_BENCHMARKS))
    return runs


def plan(scale_name: str, studies: tuple[str, ...] = ("himo", "argent")) -> list[Run]:
    """Every run of the study at ``scale_name``, in an order that respects ``Run.after``."""
    if scale_name not in SCALES:
        raise ValueError(f"unknown study scale {scale_name!r}; expected one of {list(SCALES)}")
    scale, root = SCALES[scale_name], REPO_ROOT / "runs" / f"study-{scale_name}"
    runs = []
    for seed in scale.seeds:
        if "himo" in studies:
            runs += himo_runs(scale, seed, root)
        if "argent" in studies:
            runs += argent_runs(scale, seed, root)
    return runs


def repo_relative(path: str | Path) -> str:
    """``path`` relative to the repository when it lies inside it, else unchanged: what the
    results files record, so they read the same wherever the repository is cloned."""
    try:
        return Path(path).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def _portable_config(config: dict[str, Any]) -> dict[str, Any]:
    """The run's config as recorded in ``run.done``: its folder and init checkpoint relative."""
    config = json.loads(json.dumps(config))
    config["train"]["output_dir"] = repo_relative(config["train"]["output_dir"])
    if Path(config["model"]["init"]).suffix == ".pt":
        config["model"]["init"] = repo_relative(config["model"]["init"])
    return config


def results_dir(scale_name: str) -> Path:
    return REPO_ROOT / "results" / scale_name


def _slug(text: str) -> str:
    """ASCII folder name of a variant label: ``MoLo (τ=0.9, λ=1)`` -> ``molo-tau-0-9-lam-1``."""
    text = text.lower().replace("τ", "tau").replace("λ", "lam")
    keep = "".join(c if c.isascii() and c.isalnum() else "-" for c in text)
    return "-".join(part for part in keep.split("-") if part)


def evaluate_into(run: Run, scale_name: str, checkpoint: Path, target: Path) -> Path:
    """Evaluate ``checkpoint`` on the run's benchmarks into ``target``; returns the cache folder."""
    from paperlib.evaluate import run as evaluate_run

    cache = REPO_ROOT / "runs" / f"study-{scale_name}" / "cache"
    evaluate_run(
        checkpoint, target, benchmarks=list(run.benchmarks), world_size=SCALES[scale_name].eval_size,
        world_seed=EVAL_SEED_OFFSET + run.seed, cache_dir=cache, model_label=run.variant,
        pretrained_label=repo_relative(checkpoint),
    )  # fmt: skip
    return cache


def execute(run: Run, scale_name: str, checkpoints: dict[tuple[str, int], Path],
            reevaluate: bool = False) -> Path:
    """Train (or resume) and evaluate one run; copy its results and log under ``results/``."""
    from paperlib.train import run as train_run

    target = results_dir(scale_name) / run.study / _slug(run.variant) / f"seed{run.seed}"
    config = json.loads(json.dumps(run.config))
    if run.after is not None:
        config["model"]["init"] = str(checkpoints[(run.after, run.seed)])
    output = Path(config["train"]["output_dir"])
    checkpoint = output / "last.pt"
    if (target / "run.done").is_file() and checkpoint.is_file():
        if reevaluate:  # metrics again from the cached embeddings (after a metric changed)
            evaluate_into(run, scale_name, checkpoint, target)
        return checkpoint
    start = time.perf_counter()
    result = train_run(config)
    if result.status != "finished":
        raise RuntimeError(f"{run.name}: training {result.status} at step {result.step}")
    train_seconds = time.perf_counter() - start
    cache = evaluate_into(run, scale_name, checkpoint, target)
    shutil.copyfile(output / "log.jsonl", target / "log.jsonl")
    if run.seed == 0 and run.variant in EMBEDDING_VARIANTS:
        export_embeddings(checkpoint, cache, target, SCALES[scale_name].eval_size, run)
    atomic_write_text(target / "run.done", json.dumps({
        "run": run.name, "variant": run.variant, "study": run.study, "seed": run.seed,
        "config": _portable_config(config), "train_seconds": round(train_seconds, 1),
    }, indent=1))  # fmt: skip
    return checkpoint


def export_embeddings(checkpoint: Path, cache: Path, target: Path, eval_size: int, run: Run) -> None:
    """Keep the held-out world features a tutorial reads (seed 0 only; a few hundred kB)."""
    from paperlib.engine.evaluate import checkpoint_key

    files = sorted((cache / checkpoint_key(checkpoint)).glob("world-*.pt"))
    if not files:
        return
    emb = torch.load(files[0], weights_only=True)
    keep = ["image", "caption", "short_caption", "chain", "labels", "segments_all",
            "segments_all_lengths"]  # fmt: skip
    out = {k: emb[k] for k in keep if k in emb}
    if run.study == "argent":
        out.update(box_embeddings(checkpoint, eval_size, EVAL_SEED_OFFSET + run.seed))
    torch.save(out, target / "embeddings.pt")


@torch.no_grad()
def box_embeddings(checkpoint: Path, size: int, seed: int) -> dict[str, Any]:
    """Hyperbolic features of every box crop of the held-out world (object and near-full crops)."""
    from paperlib.data.world import World
    from paperlib.engine.evaluate import Embedder, load_trained
    from paperlib.engine.methods import input_size

    module, preprocess, _, _ = load_trained(checkpoint)
    world = World(seed=seed, image_size=64)
    crops, kinds, owners = [], [], []
    for i in range(size):
        sample = world.sample(i)
        for box, kind in zip(sample.boxes, sample.meta["box_kinds"]):
            crops.append(box.image)
            kinds.append(0 if kind == "object" else 1)
            owners.append(i)
    return {
        "box_image": Embedder(module, preprocess, None, batch_size=256).images(crops),
        "box_kind": torch.tensor(kinds),  # 0 = object crop, 1 = near-full crop
        "box_owner": torch.tensor(owners),
        "curv": torch.tensor(float(module.model.curv)),
        "image_size": torch.tensor(input_size(module)),
    }


def available_scale(preferred: str = "auto") -> str:
    """``preferred`` if given, else ``full`` when its study has finished, else ``smoke``."""
    if preferred != "auto":
        if preferred not in SCALES:
            raise ValueError(f"unknown study scale {preferred!r}; expected 'auto' or one of {list(SCALES)}")
        return preferred
    return "full" if (results_dir("full") / "study.json").is_file() else "smoke"


def run_folder(scale_name: str, study: str, variant: str, seed: int = 0) -> Path:
    """``results/<scale>/<study>/<variant slug>/seed<k>``; errors say how to produce it."""
    folder = results_dir(scale_name) / study / _slug(variant) / f"seed{seed}"
    if not (folder / "run.done").is_file():
        raise FileNotFoundError(
            f"no finished study run at {folder}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return folder


def finished_seeds(scale_name: str, study: str, variant: str) -> list[int]:
    """The seeds of a study run that have finished (their ``run.done`` exists), sorted; an
    error naming the command that produces them when none has."""
    folder = results_dir(scale_name) / study / _slug(variant)
    seeds = sorted(int(p.parent.name.removeprefix("seed")) for p in folder.glob("seed*/run.done"))
    if not seeds:
        raise FileNotFoundError(
            f"no finished study run in {folder}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return seeds


def load_embeddings(scale_name: str, study: str, variant: str) -> dict[str, Any]:
    """Held-out world features of a seed-0 run (see :data:`EMBEDDING_VARIANTS`)."""
    return torch.load(run_folder(scale_name, study, variant) / "embeddings.pt", weights_only=True)


def load_log(scale_name: str, study: str, variant: str, seed: int = 0) -> list[dict[str, Any]]:
    """The training log records (one dict per logged step) of a study run."""
    from paperlib.train import read_log

    return read_log(run_folder(scale_name, study, variant, seed))


def load_results(scale_name: str) -> list[dict[str, Any]]:
    """One flat row per (study, variant, seed, dataset) with that result file's metrics."""
    from paperlib.metrics.results import read_result

    rows = []
    for done in sorted(results_dir(scale_name).glob("*/*/seed*/run.done")):
        info = json.loads(done.read_text())
        for path in sorted(done.parent.glob("*.json")):
            result = read_result(path)
            rows.append({"study": info["study"], "variant": info["variant"], "seed": info["seed"],
                         "dataset": result["dataset"], **result["metrics"]})  # fmt: skip
    return rows


def run_study(scale_name: str, studies: tuple[str, ...] = ("himo", "argent"),
              reevaluate: bool = False) -> Path:
    """Run (or finish) every run of the study; returns the results folder."""
    runs = plan(scale_name, studies)
    checkpoints: dict[tuple[str, int], Path] = {}
    total = time.perf_counter()
    for i, run in enumerate(runs, 1):
        start = time.perf_counter()
        print(f"[study {scale_name}] {i}/{len(runs)} {run.name}", flush=True)
        checkpoints[(run.variant, run.seed)] = execute(run, scale_name, checkpoints, reevaluate)
        print(f"[study {scale_name}] {run.name} done in {time.perf_counter() - start:.0f} s", flush=True)
    elapsed = time.perf_counter() - total
    print(f"[study {scale_name}] all {len(runs)} runs in {elapsed:.0f} s", flush=True)
    summary = {"scale": scale_name, "runs": len(runs), "seeds": list(SCALES[scale_name].seeds),
               "seconds_this_invocation": round(elapsed)}  # fmt: skip
    atomic_write_text(results_dir(scale_name) / "study.json", json.dumps(summary, indent=1) + "\n")
    return results_dir(scale_name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paperlib.study", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", choices=sorted(SCALES), default="smoke")
    parser.add_argument("--studies", nargs="+", choices=("himo", "argent"), default=["himo", "argent"])
    parser.add_argument("--reevaluate", action="store_true",
                        help="recompute the metrics of finished runs from their cached embeddings")
    args = parser.parse_args(argv)
    torch.set_num_threads(min(2, torch.get_num_threads()))
    run_study(args.scale, tuple(args.studies), args.reevaluate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
