"""The training regime a claim holds at, read from its runs' records and logs: the variant's
batch, steps, learning rate, warm-up, model and start, where each arm's learned curvature ends,
and the mean of a logged value (HiDe's component count) over a run's steps."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperlib.models.hyperbolic import CURV_RANGE
from paperlib.study.paths import results_dir, slug
from paperlib.study.plan.claims import Claim
from paperlib.study.results.files import check_value, read_run_done
from paperlib.train import log_records


def regime(scale_name: str, claim: Claim, seeds: list[int]) -> dict[str, Any] | None:
    """The training regime the claim holds at: the variant's batch, steps, learning rate,
    warm-up, model and start (``init``: "random" weights or a pre-trained "base"), from its
    first valid seed's ``run.done``."""
    if not seeds:
        return None
    done = (
        results_dir(scale_name) / claim.study / slug(claim.variant) / f"seed{seeds[0]}" / "run.done"
    )
    config = read_run_done(done)["config"]
    train, optim = config.get("train", {}), config.get("optim", {})
    return {
        "batch_size": train.get("batch_size"),
        "steps": train.get("steps"),
        "lr": optim.get("lr"),
        "warmup_steps": optim.get("warmup_steps"),
        "model": config.get("model", {}).get("name"),
        "init": "random" if config.get("model", {}).get("init") == "random" else "base",
    }


def end_curvatures(scale_name: str, claim: Claim, seeds: list[int]) -> dict[str, Any] | None:
    """Where each arm's learned curvature ends (the last value its log records, per valid
    seed), and whether every one ends at its lower clamp, its start over
    ``models.hyperbolic.CURV_RANGE`` (0.1 from MERU's 1): there "learned curvature" and the
    paper's fixed κ = 0.1 are one regime. None for a Euclidean claim."""
    ends: dict[str, list[float]] = {}
    for name, variant in (("variant", claim.variant), ("baseline", claim.baseline)):
        for seed in seeds:
            log = results_dir(scale_name) / claim.study / slug(variant) / f"seed{seed}"
            found = [r["curv"] for r in log_records(log / "log.jsonl") if "curv" in r]
            if found:
                ends.setdefault(name, []).append(float(found[-1]))
    if not ends:
        return None
    done = read_run_done(
        results_dir(scale_name) / claim.study / slug(claim.variant) / f"seed{seeds[0]}" / "run.done"
    )
    low = done["config"].get("model", {}).get("curv_init", 1.0) / CURV_RANGE
    at_clamp = all(abs(c - low) <= 1e-3 * low for values in ends.values() for c in values)
    return {**ends, "lower_clamp": low, "at_clamp": at_clamp}


def mean_logged(scale_name: str, study: str, variant: str, seed: int, key: str) -> float | None:
    """The mean of ``key`` over a run's logged training steps (None where it logs none)."""
    log = results_dir(scale_name) / study / slug(variant) / f"seed{seed}" / "log.jsonl"
    values = [r[key] for r in log_records(log) if key in r] if log.is_file() else []
    for value in values:
        check_value(value, "number", log, key)
    return float(np.mean(values)) if values else None


def regime_text(claim: dict) -> str:
    """The training regime a claim holds at, e.g. ``batch 64 × 400 steps, lr 0.0005``."""
    r = claim.get("regime") or {}
    parts = [
        f"batch {r['batch_size']} × {r['steps']} steps" if r.get("batch_size") and r.get("steps") else "",
        f"lr {r['lr']:g}" if isinstance(r.get("lr"), (int, float)) else "",
    ]  # fmt: skip
    return ", ".join(p for p in parts if p) or "–"
