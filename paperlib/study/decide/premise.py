"""Each claim's premise: what the paper says its baseline does, measured here on the baseline arm.

A comparison assumes that the paper's baseline fails as the paper says it does; where the study's
baseline does not, the claim reads "premise fails here" and is not decided
(``docs/methods/conventions.md#verdicts``). Two kinds (``study.plan.claims.PREMISE_KINDS``):

- *room*: the baseline leaves at least the paper's effect on this scale (``T``, the δ rule's
  translation) between its mean and the metric's best value, so the paper's effect could occur
  here; the paper's value is its baseline's level where the paper prints one (Long-CLIP's
  HiMo@2 35.0, HyCoCLIP's PEP 96.8);
- *parents inside*: the baseline leaves at least δ of its held-out parents inside MERU's radius
  ``2K/√c``, at the end or at a validation after its first update (ARGENT's §3 argument), and
  how close they came to it where it does not.

:func:`premise_record` gives ``{statement, kind, paper, measured, threshold, held, reason}``."""

from __future__ import annotations

from typing import Any

from paperlib.engine.validation import PARENT_KINDS
from paperlib.study.paths import results_dir, slug
from paperlib.study.plan.claims import PARENTS_INSIDE, Claim, better_sign
from paperlib.study.plan.smallest_effect import Translation
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


def parents_over_training(scale_name: str, claim: Claim, seeds: list[int]) -> dict | None:
    """Over the baseline's validation records after its first update (``engine.validation``'s
    ``inside_<kind>`` and ``norm_<kind>``, every seed): the largest share of held-out parents
    of one kind inside the radius, with its kind, step and seed, and the smallest mean norm of
    each kind; None where no run validated its parents. Step 0 is left out: it measures the
    initialisation (from scratch, MERU's α puts every box crop inside the radius), not what the
    objective does to the parents."""
    best, lowest = None, {}
    for seed in seeds:
        log = results_dir(scale_name) / claim.study / slug(claim.baseline) / f"seed{seed}"
        log = log / "log.jsonl"
        for record in log_records(log) if log.is_file() else []:
            values = record.get("val", {}) if record.get("step", 0) > 0 else {}
            for kind in PARENT_KINDS:
                if f"inside_{kind}" not in values:
                    continue
                share, norm = values[f"inside_{kind}"], values[f"norm_{kind}"]
                if best is None or share > best["share"]:
                    best = {"share": share, "kind": kind, "step": record["step"], "seed": seed}
                lowest[kind] = min(lowest.get(kind, norm), norm)
    return None if best is None else {**best, "lowest_norms": lowest}


def premise_record(
    scale_name: str, claim: Claim, seeds: list[int], baseline: float, translation: Translation
) -> dict[str, Any]:
    """The claim's premise (module docstring) measured on its ``baseline`` arm's mean over
    ``seeds``: ``held`` and, where it fails, the ``reason`` in words."""
    premise, published = claim.premise, translation.published
    own = claim.paper_effect is not None  # the paper prints its baseline's level
    out: dict[str, Any] = {"statement": premise.statement, "kind": premise.kind}
    if premise.kind == PARENTS_INSIDE:
        return {**out, **_parents_inside(scale_name, claim, seeds, baseline, translation.delta)}
    room = better_sign(claim.metric.better) * (claim.metric.ceiling - baseline)
    held = room >= translation.translated
    out.update(
        paper=published.level if own else None,
        paper_source=published.where if own else None,
        measured=baseline,
        threshold=translation.translated,
        held=held,
    )
    paper = f"{published.level:.4g} in the paper" if own else "no level printed by the paper"
    out["reason"] = None if held else (
        f"the baseline at {baseline:.4g} here ({paper}) leaves {room:.3g} to the best value, "
        f"less than the paper's effect on this scale ({translation.translated:.3g})"
    )  # fmt: skip
    return out


def _parents_inside(
    scale_name: str, claim: Claim, seeds: list[int], baseline: float, smallest: float
) -> dict[str, Any]:
    """The *parents inside* premise: the baseline's share inside ``2K/√c`` at the end or at a
    validation after its first update, against δ."""
    history = parents_over_training(scale_name, claim, seeds)
    during = None if history is None else history["share"]
    measured = max(baseline, during or 0.0)
    out = {"paper": "inside", "measured": measured, "at_end": baseline, "during": during,
           "threshold": smallest, "held": measured >= smallest}  # fmt: skip
    out["reason"] = (
        None if out["held"] else _not_inside(scale_name, claim, seeds, baseline, history)
    )
    return out


def _not_inside(
    scale_name: str, claim: Claim, seeds: list[int], baseline: float, history: dict | None
) -> str:
    """In words: how close the baseline's parents came to the radius, where they stayed out."""
    if history is None:
        gap = closest_to_radius(scale_name, claim, seeds)
        closest = "" if gap is None else f"; the closest training caption ends {gap:+.3f} from it"
    else:
        norms = ", ".join(f"{k} {v:.3g}" for k, v in history["lowest_norms"].items())
        most = (
            "no parent of any kind inside after the first update" if history["share"] == 0
            else f"at most {history['share']:.2%} of one kind ({history['kind']}, step "
            f"{history['step']})"
        )  # fmt: skip
        closest = f"; over training {most}, the lowest mean norms {norms}"
    return f"the baseline leaves {baseline:.2%} of the held-out parents inside 2K/√c at the end{closest}"


def first_step_inside(curves: list[dict[str, Any]], smallest: float) -> dict[tuple, int | None]:
    """Per (variant, metric) of ``curves.json`` validation curves of held-out parents
    (``inside_<kind>``): the first validation step after the first update at which the mean
    over the variant's seeds (those validated at the same steps as its first) reaches
    ``smallest``, or None where it never does. Step 0 measures the initialisation."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for curve in curves:
        groups.setdefault((curve["variant"], curve["metric"]), []).append(curve)
    first: dict[tuple, int | None] = {}
    for key, group in groups.items():
        steps = [p["step"] for p in group[0]["points"]]
        same = [
            [p["value"] for p in c["points"]]
            for c in group
            if [p["step"] for p in c["points"]] == steps
        ]
        means = [sum(column) / len(column) for column in zip(*same)]
        first[key] = next((s for s, m in zip(steps, means) if s > 0 and m >= smallest), None)
    return first
