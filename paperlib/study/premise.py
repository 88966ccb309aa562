"""The aperture claims' premise: whether the baseline leaves captions inside MERU's radius, and
how close a training caption came to it."""

from __future__ import annotations

from typing import Any

from paperlib.study.reader import REPO_ROOT, results_dir, slug
from paperlib.tables.claims import Claim
from paperlib.train import log_records

# the record of ``scripts/aperture_probe.py``: the aperture arm's runs at other start norms,
# kept outside ``results/<scale>/`` (which a study rewrites)
APERTURE_PROBE = REPO_ROOT / "results" / "probes" / "aperture.json"
PROBE_BASELINES = ("MERU", "HyCoCLIP")  # the models whose captions the premise is about


def closest_to_radius(scale_name: str, claim: Claim, seeds: list[int]) -> float | None:
    """The smallest gap, over the baseline's valid seeds (the arm whose captions the premise is
    about), between a training batch's shortest caption and MERU's radius ``2K/√c`` at the
    last logged diagnostics step (the trained model, not the base it started from; negative:
    inside); None where no log has the diagnostics."""
    gaps = []
    for seed in seeds:
        folder = results_dir(scale_name) / claim.study / slug(claim.baseline) / f"seed{seed}"
        log = folder / "log.jsonl"
        diags = [r for r in log_records(log) if "diag/text/norm_min" in r] if log.is_file() else []
        if diags:
            gaps.append(diags[-1]["diag/text/norm_min"] - diags[-1]["diag/aperture_radius"])
    return min(gaps) if gaps else None


def premise_reason(scale_name: str, claim: Claim, seeds: list[int], record: dict) -> str | None:
    """For an aperture claim whose baseline leaves fewer held-out captions inside the radius
    than the smallest effect of interest: "premise not reproduced" (ARGENT's claim starts from
    a baseline whose captions fall inside), with the closest a training caption came to it."""
    if not claim.item.startswith("aperture/"):
        return None
    baseline = record["baseline_value"]["mean"]
    if baseline >= claim.metric.smallest:
        return None
    gap = closest_to_radius(scale_name, claim, seeds)
    closest = "" if gap is None else f"; the closest training caption ends {gap:+.3f} from it"
    return (
        f"premise not reproduced: the baseline leaves {baseline:.2%} of the held-out captions "
        f"inside 2K/√c, less than the smallest effect of interest ({claim.metric.smallest:g})"
        f"{closest}"
    )


def probe_baselines(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trained baseline runs (:data:`PROBE_BASELINES`) of the aperture probe's ``runs``."""
    return [r for r in runs if r["trained"] and r["run"].split("/")[1].startswith(PROBE_BASELINES)]


def start_norms_reached(runs: list[dict[str, Any]], smallest: float) -> list[float]:
    """The start norms at which a trained baseline of the probe keeps at least ``smallest`` of
    the held-out captions inside the radius (the premise reached), sorted."""
    return sorted(
        {r["alpha_norm"] for r in probe_baselines(runs) if r["held_out_inside"] >= smallest}
    )
