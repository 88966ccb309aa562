"""Tutorial 05's readings: each paper's tables beside this study, the schedule checks at twice
the steps, the scale trend's tables, and what a CPU-scale verdict can and cannot say
(``docs/methods/conventions.md#verdicts``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from paperlib.analysis.readings.stand_in import NOT_RUN, regime
from paperlib.analysis.readings.words import Reading, listing, plural, span

CLEAR = 2.0  # a schedule check's change counts beyond this many standard errors
#: where a claim's paired interval lies, in words (:func:`beside`)
SIDES = {
    "paper": "on the paper's side",
    "other": "on the other side",
    "zero": "across 0",
    "none": "without an interval",
    "not run": f"with no interval, its runs {NOT_RUN}",
}


def _side(claim: Mapping[str, Any]) -> str:
    """``paper``, ``other`` or ``zero`` as the claim's interval lies on the paper's side of 0,
    on the other side, or holds 0; ``not run`` where its runs have not run yet, ``none``
    without an interval."""
    if claim.get("verdict") == NOT_RUN:
        return "not run"
    interval = claim.get("interval")
    if not interval:
        return "none"
    low, high = interval if claim["better"] == "higher" else (-interval[1], -interval[0])
    return "paper" if low > 0 else "other" if high < 0 else "zero"


def beside(claims: Sequence[Mapping[str, Any]], shown: Collection[str], paper: str) -> Reading:
    """How the rows of ``paper``'s tables (the claims whose id is in ``shown``) read here: in the
    paper the first row beats the second on each; here each claim's paired interval (the two
    arms on the same seeds and test items) lies on the paper's side, on the other side, or holds
    0."""
    rows = [c for c in claims if c["claim"] in shown]
    sides = {side: [c["claim"] for c in rows if _side(c) == side] for side in SIDES}
    parts = [
        f"{len(ids)} {SIDES[side]} ({', '.join(f'`{i}`' for i in ids)})"
        for side, ids in sides.items()
        if ids
    ]
    point = (
        f"{paper}'s table rows here: {len(sides['paper'])} of {len(rows)} on the paper's side by "
        f"the paired interval, {len(sides['other'])} on the other side"
        + (f", {len(sides['not run'])} {NOT_RUN}." if sides["not run"] else ".")
    )
    return Reading(
        f"In {paper}'s tables the first row beats the second on each of these {len(rows)} rows. "
        "Here the two arms' own intervals are each arm's level; whether one beats the other is "
        "read from the claim's paired interval (same seeds, same test items), which lies "
        f"{listing(parts)}. The absolute numbers of the two sides are not comparable: the paper "
        "measures large models on real benchmarks, this study small ones on the generated world.",
        point,
    )


def _falls(checks: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """The checks whose change at twice the steps lies beyond ``CLEAR`` standard errors below
    0 (``fall``), above it (``rise``), or within (``within``)."""
    out: dict[str, list] = {"fall": [], "rise": [], "within": []}
    for c in checks:
        gain, se = c["gain"], c["standard_error"]
        out["fall" if gain < -CLEAR * se else "rise" if gain > CLEAR * se else "within"].append(c)
    return out


def schedule(checks: Sequence[Mapping[str, Any]]) -> Reading:
    """The schedule checks (``claims.json``'s ``schedule_checks``): per study and validation
    metric, how many runs' final value falls, rises or stays within ``CLEAR`` standard errors
    at twice their steps, with the range of the falls."""
    if not checks:
        return Reading("No run of this study has trained at twice its steps, so no check is read.")
    groups: dict[tuple[str, str], list] = {}
    for c in checks:
        groups.setdefault((c["study"], c["metric"]), []).append(c)
    parts, hurt = [], []
    for (study, metric), group in groups.items():
        split = _falls(group)
        n, falls = len(group), split["fall"]
        counted = []
        if falls:
            counted.append(f"{len(falls)} fall by {span((-c['gain'] for c in falls), '.3f')}")
        if split["rise"]:
            counted.append(
                f"{len(split['rise'])} rise by {span((c['gain'] for c in split['rise']), '.3f')}"
            )
        if split["within"]:
            counted.append(
                f"{len(split['within'])} {plural(len(split['within']), 'stays', 'stay')} within"
            )
        parts.append(f"{study} {metric}: of {n} checks {listing(counted)}")
        if len(falls) == n:
            hurt.append(f"{study} {metric}")
    steps = span((c["steps"][1] / c["steps"][0] for c in checks), ".0f")
    conclusion = (
        f"Every check of {listing(hurt)} falls: at this scale longer training hurts "
        f"{plural(len(hurt), 'that curve', 'those curves')}, so more steps would not have helped."
        if hurt
        else "No metric falls in every check."
    )
    text = (
        f"At {steps} times their steps, counting a change beyond {CLEAR:g} standard errors: "
        f"{'; '.join(parts)}. {conclusion}"
    )
    return Reading(text, conclusion if hurt else "")


def trend_intervals(claims: Sequence[Mapping[str, Any]]) -> int:
    """How many per-setting effects of the scale trend (``claim["trend"][axis]``) have an
    interval."""
    return sum(
        1
        for c in claims
        for axis in ("batch", "length")
        for point in ((c.get("trend") or {}).get(axis) or [])
        if point.get("interval")
    )


def _regimes(claims: Sequence[Mapping[str, Any]]) -> str:
    """Each study's headline regime, named by the paper of its claims; a study none of whose
    claims has run says so."""
    studies = list(dict.fromkeys(c["study"] for c in claims))
    parts = []
    for study in studies:
        mine = [c for c in claims if c["study"] == study]
        ran = [c for c in mine if c["headline"] and c.get("regime")]
        parts.append(f"{mine[0]['paper']}: {regime(ran[0]) if ran else NOT_RUN}")
    return "; ".join(parts)


def scale_limits(
    claims: Sequence[Mapping[str, Any]],
    params: Mapping[str, float],
    image_size: int,
    seeds: int,
    items: Mapping[str, int],
) -> Reading:
    """What a verdict at this scale can and cannot say, from the decided ``claims`` (each
    study's headline regime, the claims whose metric is not the paper's quantity, the PEP
    claims), the models' sizes (``params``: millions of parameters), the ``image_size``, the
    headline ``seeds`` and each paper's test ``items``."""
    regimes = _regimes(claims)
    other = sum(c.get("paper_units") is False for c in claims)
    pep = sum("/pep_" in c["item"] for c in claims)
    models = listing(f"{name} ({m:.1f}M parameters)" for name, m in params.items())
    tested = listing(f"{n:,} for {p}" for p, n in items.items())
    return Reading(
        "**What this scale can say.** Whether each mechanism moves its metric in the paper's "
        "direction, on a world whose ground truth is exact, between runs that differ in the one "
        f"thing under test, paired over {seeds} {plural(seeds, 'seed', 'seeds')} and the same "
        f"test items ({tested}), with an interval that says how sure the direction is. **What it "
        "cannot say.** The papers' numbers, or how large the effects are at the papers' scale: "
        f"the models here are {models} reading {image_size}-pixel images (the papers': ViTs at "
        f"224 px), trained at {regimes}. {other} claims measure another quantity than the "
        f"paper's (R@1 for R@5, a per-image PEP AUC for the pooled one), and the {pep} PEP "
        "claims read the generated world's caption chains, not cleaned HierarCaps: for them only "
        "the sign compares with the paper, not the size. A verdict here is a statement about the "
        "mechanism at this scale."
    )


#: each trend reading's first words, and how :func:`trend_sentence` says them
TREND_KINDS = {
    "moves toward": "move toward the paper's side",
    "moves away": "move away from the paper's side",
    "no change established": "establish no change",
    "not estimable": "are not estimable",
    "not measured": "are not measured",
}


def trend_sentence(readings: dict[str, dict[str, str]]) -> str:
    """One sentence over the trend's readings (``study.report.tables.trend_readings``): how many
    slopes fall in each kind of :data:`TREND_KINDS`, and which claims (and axes) move toward the
    paper's side."""
    found: dict[str, list[str]] = {kind: [] for kind in TREND_KINDS}
    for name, reading in readings.items():
        for axis, text in reading.items():
            found[next(k for k in TREND_KINDS if text.startswith(k))].append(f"{name} ({axis})")
    others = [f"{len(found[k])} {w}" for k, w in TREND_KINDS.items()
              if found[k] and k != "moves toward"]  # fmt: skip
    toward = (
        f"{len(found['moves toward'])} move toward the paper's side as the scale grows ("
        + ("; ".join(found["moves toward"]) or "none")
        + ")"
    )
    return (
        f"Of the {sum(len(r) for r in readings.values())} slopes ({len(readings)} headline claims "
        f"× batch and length), {', '.join(others) + ', and ' if others else ''}{toward}."
    )


def trend(
    readings: Mapping[str, Mapping[str, str]], claims: Sequence[Mapping[str, Any]]
) -> Reading:
    """The scale trend: its slopes in a sentence (``readings``,
    ``study.report.tables.trend_readings``) and whether the per-setting tables are shown (only
    where some setting of the ``claims`` with a trend has an interval); a study that runs no
    trend says so."""
    if not readings:
        return Reading(
            "No headline arm of this study trains at other batch sizes or lengths, so it has no "
            "scale trend to read."
        )
    with_interval = trend_intervals(claims)
    return Reading(
        trend_sentence(readings)
        + (
            f" The effect at each setting is tabulated above where its seeds give it an interval "
            f"({with_interval} settings)."
            if with_interval
            else " No single setting's effect has an interval at this scale (each setting's seeds "
            "give too few degrees of freedom), so the per-setting tables are left out: the "
            "slopes carry the trend."
        )
    )


def targets(rows: Sequence[Mapping[str, Any]]) -> Reading:
    """The learning targets (``claims.json``'s ``targets``): how many are met, each missed one
    with its median and the range of its runs' values against the target, and the arms whose
    targets have no run yet."""
    unrun = [t for t in rows if t.get("runs") == 0]
    missed = [t for t in rows if not t["met"] and t.get("runs") != 0]
    listed = "; ".join(
        f"{t['variant']}, {t['metric']}"
        + (f" as a share of its base's ({t['of_base']})" if t.get("of_base") else "")
        + (
            f": median {t['median']:.3f} (runs {span(t['values'], '.3f')}) "
            f"against ≥ {t['target']:g}"
            if t["median"] is not None
            else ": no valid run"
        )
        for t in missed
    )
    arms = list(dict.fromkeys(t["variant"] for t in unrun))
    met = len(rows) - len(missed) - len(unrun)
    return Reading(
        f"{met} of the {len(rows)} learning targets {plural(met, 'is', 'are')} met"
        + (f"; missed: {listed}" if missed else "")
        + (
            f"; {len(unrun)} {plural(len(unrun), 'has', 'have')} no run yet, those of "
            f"{len(arms)} {plural(len(arms), 'arm', 'arms')} ({'; '.join(arms)})"
            if unrun
            else ""
        )
        + "."
    )
