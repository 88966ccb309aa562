"""Deciding the study's claims from the results files: the decision rule's steps, in order.

:func:`decide` writes ``results/<scale>/claims.json`` from :func:`report`
(``docs/methods/conventions.md#verdicts``):

1. the finished runs, each checked against the plan, their validity decided anew from their logs
   (``results.validity``: collapsed, or still rising against δ; the runs left out are named);
2. per declared claim (``plan.claims``), its record (``decide.claim_record``): its valid seed pairs,
   δ on the study's scale, the effect with its interval at the claim's level of the study's one
   error statement (``decide.error_control``), both arms against the base, chance, premise,
   regime, trend, and what makes it untestable;
3. per declared family (every claim of a paper), Holm's adjusted p-values for the sign and the
   equivalence, reported; then each claim's verdict, read off its displayed interval
   (``decide.verdicts.claim_verdict``);
4. the study's checks beside the claims: the learning targets and schedule checks
   (``decide.targets``), the runs left out, forgotten or not converged, and the code versions
   that trained the runs.

A claim whose runs are missing (a seed or a variant the scale plans) is an error naming them,
unless ``partial=True``: then it is decided on what exists and marked ``partial``."""

from __future__ import annotations

import json
from typing import Any

from paperlib.atomic import atomic_write_text
from paperlib.provenance import code_hash
from paperlib.study.decide.base_reference import forgotten_runs
from paperlib.study.decide.claim_record import decide_claim
from paperlib.study.decide.error_control import holm, statement
from paperlib.study.decide.inference import ALPHA
from paperlib.study.decide.targets import (
    base_plateaus,
    check_targets,
    schedule_checks,
    schedule_flags,
)
from paperlib.study.decide.trend_effects import trend_slope_count
from paperlib.study.decide.verdicts import MIN_SEED_DF, claim_verdict, scale_wording, seeds_wording
from paperlib.study.paths import results_dir, slug
from paperlib.study.plan.claims import CLAIMS, FAMILY_SIZES
from paperlib.study.plan.scales import SCALES, Scale
from paperlib.study.results.validity import MissingRunsError, finished_runs, invalid_reason
from paperlib.study.run.code_versions import equivalent_hashes


def report(scale_name: str, partial: bool = False) -> dict[str, Any]:
    """Every claim of ``plan.claims`` decided from the results files, with the study's checks
    beside them (nothing is written): the rule's steps of the module docstring. Missing runs
    raise :class:`MissingRunsError` unless ``partial``."""
    runs = finished_runs(scale_name)
    claims = decided_claims(scale_name, SCALES[scale_name], runs)
    missing = missing_runs(scale_name, claims, partial)
    checks = schedule_checks(scale_name, runs)
    annotate(scale_name, claims, runs, checks)
    return {
        "scale": scale_name,
        "alpha": ALPHA,
        "families": dict(FAMILY_SIZES),
        "error_control": error_statement(scale_name),
        "code_versions": run_code_versions(runs),
        "partial": bool(missing),
        "claims": claims,
        "targets": check_targets(scale_name, runs),
        "schedule_checks": checks,
        "base_plateaus": base_plateaus(),
        **left_out_runs(scale_name, runs),
    }


def missing_runs(scale_name: str, claims: list[dict], partial: bool) -> list[str]:
    """The planned runs the decided claims lack; a :class:`MissingRunsError` naming them unless
    ``partial``."""
    missing = sorted({m for r in claims for m in r["missing_runs"]})
    if missing and not partial:
        raise MissingRunsError(
            f"results/{scale_name}: {len(missing)} planned run(s) have no results: "
            + ", ".join(missing[:12]) + (" ..." if len(missing) > 12 else "")
            + "; run the study to finish them, or decide a partial study (--partial)"
        )  # fmt: skip
    return missing


def annotate(scale_name: str, claims: list[dict], runs: list[dict], checks: list[dict]) -> None:
    """Add to each decided claim whether it is partial, the schedule checks that flag it, and
    how it reads with the runs the plateau rule leaves out counted in (:func:`without_exclusions`,
    the claims decided again from the same runs with none judged unconverged)."""
    scale = SCALES[scale_name]
    unexcluded = decided_claims(scale_name, scale, [{**r, "unconverged": None} for r in runs])
    for record, other in zip(claims, unexcluded, strict=True):
        record["partial"] = bool(record["missing_runs"])
        record["schedule_flags"] = schedule_flags(checks, record)
        record["without_exclusions"] = without_exclusions(record, other)


def left_out_runs(scale_name: str, runs: list[dict]) -> dict[str, list[str]]:
    """The runs the claims leave out (collapsed, or not converged where the scale asks a
    plateau), those that forgot their base, and those not converged, each named with why."""
    scale = SCALES[scale_name]
    return {
        "excluded_runs": [
            f"{r['study']}/{slug(r['variant'])}/seed{r['seed']}: {why}"
            for r in runs
            if (why := invalid_reason(r, scale.require_plateau))
        ],
        "forgotten_runs": forgotten_runs(scale_name, runs),
        "unconverged_runs": [
            f"{r['study']}/{slug(r['variant'])}/seed{r['seed']}: {r['unconverged']}"
            for r in runs
            if r.get("unconverged")
        ],
    }


def decided_claims(scale_name: str, scale: Scale, runs: list[dict]) -> list[dict]:
    """Every claim decided from ``runs`` and adjusted over its family, in declaration order."""
    decided = [decide_claim(scale_name, c, runs, scale) for c in CLAIMS]
    claims = []
    for family in FAMILY_SIZES:
        members = [r for r in decided if r["family"] == family]
        claims += adjust_family(members) if members else []
    order = {c.id: i for i, c in enumerate(CLAIMS)}
    return sorted(claims, key=lambda r: order[r["claim"]])


def testable(record: dict) -> bool:
    """Whether a decided claim enters its family's tests with its own p-values (else p = 1)."""
    return "untestable" not in record and record.get("seed_df", 0) >= MIN_SEED_DF


def adjust_family(records: list[dict]) -> list[dict]:
    """Holm over one declared family, every claim of it counted (a claim that cannot be tested
    enters with p = 1), for the sign and for the equivalence, reported beside the verdicts;
    then every claim's verdict, read off its displayed interval (:func:`claim_verdict`)."""
    families = {r["family"] for r in records}
    if len(families) != 1 or None in families:
        raise ValueError(f"adjust_family takes the claims of one declared family; got {families}")
    (family,) = families
    size = FAMILY_SIZES[family]
    if len(records) > size:
        raise ValueError(f"family {family!r} declares {size} claims; {len(records)} given")
    padding = [1.0] * (size - len(records))  # declared claims not decided here count as p = 1
    p_sign = holm([r["p_raw"] if testable(r) else 1.0 for r in records] + padding)
    p_eq = holm([r["p_equivalence_raw"] if testable(r) else 1.0 for r in records] + padding)
    out = []
    for record, ps, pe in zip(records, p_sign, p_eq):
        adjusted = {**record, "p_adjusted": ps, "p_equivalence_adjusted": pe, "family_size": size}
        decided = {**adjusted, **claim_verdict(adjusted)}
        decided["reason"] += seeds_wording(decided) + scale_wording(decided)
        out.append(decided)
    return out


def without_exclusions(record: dict, other: dict) -> dict[str, Any]:
    """The claim as decided with the runs the plateau rule leaves out counted in (``other``,
    from the same runs with no run judged unconverged): its verdict, effect, interval and seeds,
    and whether the verdict differs from ``record``'s."""
    return {
        "verdict": other["verdict"],
        "effect": other.get("effect"),
        "interval": other.get("interval"),
        "seeds": other["seeds"],
        "runs_added": len(other["seeds"]) - len(record["seeds"]),
        "changes_verdict": other["verdict"] != record["verdict"],
    }


SEEDS_FIXED = (
    "each claim's seeds are the scale's (Scale.seeds for the headline arms, Scale.arm_seeds for "
    "the others), fixed before its runs; a claim whose seeds were added after a first look at "
    "its data is listed under 'sequential' with its correction"
)


def error_statement(scale_name: str) -> dict[str, Any]:
    """``claims.json``'s one error statement (``study.decide.error_control.statement``) over the
    study's claims and the trend slopes ``scale_name`` reports."""
    looked = [c.id for c in CLAIMS if c.looks > 1]
    return statement(len(CLAIMS), trend_slope_count(scale_name), looked, SEEDS_FIXED)


def run_code_versions(runs: list[dict]) -> list[dict[str, Any]]:
    """The code versions the decided runs were trained by: each training-code hash (None for a
    run recorded without provenance) with its commits, how many runs it made, most first, and
    whether ``results/code-versions.json`` joins it to this checkout's code (``joins_checkout``:
    the study keeps its runs)."""
    joined = equivalent_hashes(code_hash())
    versions: dict[str | None, dict[str, Any]] = {}
    for r in runs:
        provenance = r.get("provenance") or {}
        entry = versions.setdefault(
            provenance.get("code_hash"), {"code_hash": provenance.get("code_hash"), "commits": set(), "runs": 0}
        )  # fmt: skip
        entry["runs"] += 1
        if provenance.get("commit"):
            entry["commits"].add(provenance["commit"])
    listed = [
        {**v, "commits": sorted(v["commits"]), "joins_checkout": v["code_hash"] in joined}
        for v in versions.values()
    ]
    return sorted(listed, key=lambda v: -v["runs"])


def decide(scale_name: str, partial: bool = False) -> dict[str, Any]:
    """:func:`report`, written to ``results/<scale>/claims.json``."""
    decided = report(scale_name, partial)
    atomic_write_text(results_dir(scale_name) / "claims.json", json.dumps(decided, indent=1) + "\n")
    return decided
