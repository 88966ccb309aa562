"""The study page's paragraph on the committed study, written from ``claims.json`` alone.

Every figure the paragraph states (code version, recipe, retention, seed pairs kept, runs left
out and what counting them in would change, verdict counts, the claims at a ceiling, the
claims a design could not decide, the bases' plateau checks and the learning targets missed)
is read here from the decided claims, so the study page
(``docs/study.md``) and ``claims.json`` cannot drift apart: ``python -m paperlib.study
--summary`` prints it above the claims table, and ``tests/test_readme_claims.py`` finds both on
that page.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

RECIPE_WORDS = {  # paper -> (its arms, by how they start; where their recipe comes from)
    "HiMo-CLIP": ("every HiMo fine-tune", "the recipe's pick"),
    "ARGENT": ("every ARGENT-paper arm from random weights", "the hyperbolic bases' recipe"),
}
OWN_STUDY = {"HiMo-CLIP": "himo", "ARGENT": "argent"}
UNDECIDED = ("underpowered", "unresolvable at this test set")


def verdict_counts(claims: list[dict], paper: str) -> str:
    """``HiMo-CLIP (17 claims): 5 reproduces, 2 negligible, ...``: counts, largest first."""
    counts = Counter(c["verdict"] for c in claims if c["paper"] == paper)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    words = ", ".join(f"{n} {verdict}" for verdict, n in ranked)
    return f"{paper} ({sum(counts.values())} claims): {words}"


def _recipe(claims: list[dict], paper: str) -> str:
    """The recipe every headline arm of ``paper`` trained at (its own arms, not the shared
    InfoNCE fine-tunes of an evaluation claim), and where it comes from."""
    arms, source = RECIPE_WORDS[paper]
    own = [c for c in claims if c["headline"] and c["paper"] == paper and c.get("regime")]
    own = [c for c in own if c["study"] == OWN_STUDY[paper]]
    settings = {(c["regime"]["lr"], c["regime"]["warmup_steps"], c["regime"]["steps"]) for c in own}
    if not settings:
        return f"no {arms.removeprefix('every ')} finished yet"
    if len(settings) != 1:
        return f"{arms} at {len(settings)} recipes"
    ((lr, warmup, steps),) = settings
    mantissa, exponent = f"{lr:.0e}".split("e")
    rate = f"{mantissa}e{int(exponent)}"
    return f"{arms} at lr {rate} with {warmup:,} of its {steps:,} steps as warm-up ({source})"


def _span(values: list[int]) -> str:
    """``8``, or ``0 to 6`` where the values differ."""
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low} to {high}"


def _pairs(claims: list[dict], paper: str) -> str:
    """``8 of 8``: the seed pairs ``paper``'s own headline claims keep, of those planned."""
    kept = [
        c["seeds_kept"] for c in claims
        if c["headline"] and c["paper"] == paper and c["study"] == OWN_STUDY[paper]
    ]  # fmt: skip
    if not kept:
        return "no"
    planned = [k.get("of", k["pairs"]) for k in kept]
    return f"{_span([k['pairs'] for k in kept])} of {_span(planned)}"


def _run_name(entry: str) -> str:
    """``study/variant/seedN`` of a ``claims.json`` run entry (``name: why``)."""
    return entry.split(":")[0]


def _exclusions(decided: dict[str, Any]) -> str:
    """How many runs the plateau rule leaves out, which verdicts counting them would move, and
    the runs still rising that it keeps (an arm not asked for a plateau: the from-scratch
    aperture runs, or every run of a scale that asks none)."""
    claims = decided["claims"]
    moved = [
        f"`{c['claim']}` ({c['verdict']} → {c['without_exclusions']['verdict']})"
        for c in claims
        if (c.get("without_exclusions") or {}).get("changes_verdict")
    ]
    left_out = {_run_name(e) for e in decided["excluded_runs"]}
    rising = [_run_name(u) for u in decided["unconverged_runs"]]
    kept = [r for r in rising if r not in left_out]
    n = len(rising) - len(kept)
    out = f"{n} {'run' if n == 1 else 'runs'} still rising past δ in their last fifth"
    out += f" {'is' if n == 1 else 'are'} left out with their seed's other arm (`unconverged_runs`); counted in, they "
    out += (f"would change {len(moved)} verdicts: {', '.join(moved)}" if moved else
            "would change no verdict")  # fmt: skip
    if not kept:
        return out
    verb = "rises too and is kept" if len(kept) == 1 else "rise too and are kept"
    names = ", ".join(f"`{r}`" for r in kept)
    return f"{out}. {len(kept)} more {verb}, not being asked for a plateau: {names}"


def _premises(claims: list[dict]) -> str:
    """The claims whose premise fails here, each with its measured value against the paper's."""
    failed = [c for c in claims if (c.get("premise") or {}).get("held") is False]
    if not failed:
        return "Every claim's premise holds here."
    items = []
    for c in failed:
        premise, scale = c["premise"], c.get("shown_scale", 1.0)
        paper = premise.get("paper")
        said = paper if isinstance(paper, str) else "no level" if paper is None else f"{paper:.3g}"
        items.append(f"`{c['claim']}` ({premise['measured'] * scale:.3g} here, paper {said})")
    verb = (
        "claim's premise fails here, so it is"
        if len(failed) == 1
        else ("claims' premises fail here, so they are")
    )
    return f"{len(failed)} {verb} not decided: " + "; ".join(items) + "."


def _error_control(decided: dict[str, Any]) -> str:
    """One sentence of the study's error statement (``claims.json``'s ``error_control``)."""
    control = decided.get("error_control")
    if not control:
        return ""
    split = {part["readings"]: part for part in control["split"]}
    verdicts = split["verdicts"]
    looked = len(control["sequential"]["claims"])
    return (
        f"One error rate, {control['familywise_rate']:g}, covers every interval shown: "
        f"{verdicts['share']:.0%} of it over the {verdicts['count']} verdicts (each at "
        f"{verdicts['level_each']:.3%}), the rest over the base readings and trend slopes; "
        f"{looked} claims whose seeds were added after a first look split theirs between "
        "the two looks."
    )


def _undecided(claims: list[dict]) -> str:
    counts = Counter(c["verdict"] for c in claims if c["verdict"] in UNDECIDED)
    why = {
        "underpowered": "underpowered (their design notes name the seeds per base that would "
        "resolve δ)",
        "unresolvable at this test set": "unresolvable at this test set (the test items alone "
        "put the interval's half-width at or above δ)",
    }
    parts = [
        f"{n} {'claim is' if n == 1 else 'claims are'} {why[verdict]}"
        for verdict in UNDECIDED
        if (n := counts[verdict])
    ]
    return " and ".join(parts) + "." if parts else "No claim is left undecided by its design."


def _target_name(target: dict) -> str:
    share = " as a share of its base's" if target.get("of_base") else ""
    return f"{target['metric']} of {target['variant']}{share}"


def _missed_targets(decided: dict[str, Any]) -> str:
    """The learning targets the runs miss, each with its median (``study.decide.targets``)."""
    rows = decided.get("targets", [])
    missed = [t for t in rows if not t["met"]]
    if not missed:
        return f"Every learning target is met ({len(rows)} of {len(rows)})." if rows else ""
    listed = "; ".join(
        f"{_target_name(t)} ("
        + ("no run" if t["median"] is None else f"median {t['median']:.3f}")
        + f" against {t['target']:g})"
        for t in missed
    )
    return f"{len(missed)} of the {len(rows)} learning targets are missed: {listed}."


def _base_plateaus(decided: dict[str, Any]) -> str:
    """The bases whose plateau check (``study.decide.targets.base_plateaus``) a metric fails."""
    bases = decided.get("base_plateaus", [])
    keys = ("geometry", "model", "base")
    failing = [(b, [m for m, ok in b.items() if m not in keys and not ok]) for b in bases]
    failing = [(b, metrics) for b, metrics in failing if metrics]
    if not failing:
        return (
            f"Every base passes its plateau check ({len(bases)} of {len(bases)})." if bases else ""
        )
    listed = "; ".join(
        f"the {b['geometry']} `{b['model']}` base {b['base']} ({', '.join(metrics)})"
        for b, metrics in failing
    )
    return (f"{len(failing)} of the {len(bases)} bases end pre-training with a validation metric "
            f"still rising at its end (the slope over the last 40 % of its schedule established "
            f"above 0 against the curve's noise): {listed}.")  # fmt: skip


def study_paragraph(decided: dict[str, Any]) -> str:
    """The study page's paragraph on the committed study (module docstring)."""
    claims = decided["claims"]
    versions = decided["code_versions"]
    hashes = ", ".join(f"`{v['code_hash'][:12]}`" for v in versions)
    if versions and all(v.get("joins_checkout") for v in versions):
        hashes += ", which `results/code-versions.json` records as training alike this checkout's"
    kept = min(
        v for c in claims if c["headline"] and c.get("retention")
        for arm in ("variant", "baseline") for v in c["retention"][arm].values()
    )  # fmt: skip
    parts = [
        f"The committed runs were trained by code hash {hashes} (`code_versions` in",
        "`claims.json`): " + _recipe(claims, "HiMo-CLIP") + "; " + _recipe(claims, "ARGENT") + ".",
        f"Every headline fine-tune keeps at least {int(100 * kept) / 100:.2f}",
        "of its base's short I2T R@1 and zero-shot L1. " + _exclusions(decided) + ".",
        f"The HiMo headline claims keep {_pairs(claims, 'HiMo-CLIP')} seed pairs, the ARGENT",
        f"ones {_pairs(claims, 'ARGENT')}. " + verdict_counts(claims, "HiMo-CLIP") + ".",
        verdict_counts(claims, "ARGENT") + ". " + _premises(claims), _undecided(claims),
        _error_control(decided),
        _base_plateaus(decided), _missed_targets(decided),
    ]  # fmt: skip
    return " ".join(part for part in parts if part)


def _percent(share: float) -> str:
    return f"{100 * share:.2g} %"


def aperture_sentence(claim: dict) -> str:
    """One aperture claim as the study page states it: each arm's share of held-out parents
    inside 2K/√c and the verdict with its interval, or the verdict and why where no seed pair
    was decided."""
    if claim.get("variant_value") is None:
        return f"{claim['claim']}: {claim['verdict']} ({claim['reason']})."
    shares = (
        f"{claim['variant']} leaves {_percent(claim['variant_value']['mean'])} of the held-out "
        f"parents inside 2K/√c, {claim['baseline']} {_percent(claim['baseline_value']['mean'])}"
    )
    interval = claim.get("interval")
    effect = (
        f", {claim['effect']:+.3f} [{interval[0]:+.3f}, {interval[1]:+.3f}]" if interval else ""
    )
    pairs = claim["seeds_kept"]["pairs"]
    return f"{claim['claim']}: {shares}; on {pairs} seed pairs it reads {claim['verdict']}{effect}."


def aperture_paragraph(decided: dict[str, Any]) -> str:
    """The study page's paragraph on the aperture claims (ARGENT's main arms, trained from random
    weights at the learned curvature), each by :func:`aperture_sentence`."""
    claims = [c for c in decided["claims"] if c["item"].startswith("aperture/")]
    return "The aperture claims, on each held-out sample's parents (caption, box phrase, box " \
        "crop): " + " ".join(aperture_sentence(c) for c in claims)  # fmt: skip
