"""The aperture claims' premise: whether the baseline leaves captions inside MERU's radius, and
how close a training caption came to it."""

from __future__ import annotations

from paperlib.study.reader import results_dir, slug
from paperlib.tables.claims import Claim
from paperlib.train import log_records


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
