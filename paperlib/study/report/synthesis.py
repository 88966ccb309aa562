"""The decided claims in words: what reproduced, what did not and why, and one verdict walked
from its effect to its label.

Everything here reads the claims ``paperlib.study.decide.decide`` wrote to ``claims.json`` (its
``claims`` list, and where named its ``alpha`` and a family's interval level) and decides
nothing: :func:`verdict_walk` tries the labels of :mod:`paperlib.study.decide.verdicts` in the
rules' order on one claim's recorded numbers and refuses a claim whose first label that holds is not
the one ``claims.json`` records and :func:`paperlib.study.decide.verdicts.verdict` gives.
"""

from __future__ import annotations

import pandas as pd

from paperlib.study.decide import verdicts
from paperlib.study.report import tables

#: every verdict in one of five outcomes, in the order the summary names them (the last two as
#: the README's findings count them)
OUTCOMES: dict[str, tuple[str, ...]] = {
    "reproduce": (verdicts.REPRODUCES, verdicts.REPRODUCES_BELOW),
    "reproduce in sign, below the published effect": (verdicts.SMALLER,),
    "decided otherwise (too small, or the other sign)": (
        verdicts.NEGLIGIBLE, verdicts.NEGLIGIBLE_PAPER_SIGN, verdicts.NEGLIGIBLE_OTHER_SIGN,
        verdicts.CONTRADICTS,
    ),
    "not testable here, premise failing, or split by the base": verdicts.NOT_TESTED,
    "not decided at this scale": verdicts.UNDECIDED,
}  # fmt: skip
# a partial study's claims none of whose runs has finished: listed, and counted apart, only
# where there are some
NOT_RUN_OUTCOME = f"{verdicts.NOT_RUN} (a partial study)"
NOT_TESTED = "not testable here, premise failing, or split by the base"
UNDECIDED = "not decided at this scale"


def paper_claims(claims: list[dict], paper: str) -> list[dict]:
    """The claims of one paper's family, in their order."""
    return [c for c in claims if c["paper"] == paper]


def why(claim: dict) -> str:
    """The reason ``claims.json`` records for a claim's verdict, in a few words: for a claim that
    reproduces (in full or in sign) its effect and interval against δ and the paper's effect;
    for one the bases split, each base's verdict; otherwise the reason's first clause, with the
    design note for a claim its design could not decide."""
    c = claim
    if c["verdict"] in (verdicts.REPRODUCES, verdicts.REPRODUCES_BELOW, verdicts.SMALLER):
        here = (c.get("paper_effect_here") or 0.0) * c.get("shown_scale", 1.0)
        paper = "" if c.get("paper_effect") is None else f", the paper's effect here {here:+.2g}"
        lower = " (lower is better)" if c["better"] == "lower" else ""
        return f"{tables.effect_text(c)}{lower} against δ = {tables.delta_text(c)}{paper}"
    if c["verdict"] == verdicts.DIFFERS_BY_BASE:
        per_base = ", ".join(f"base {b}: {v}" for b, v in c["verdict_per_base"].items())
        return f"the bases disagree ({per_base})"
    first = c["reason"].split("; ")[0]
    if c["verdict"] in (verdicts.UNDERPOWERED, verdicts.UNRESOLVABLE) and c.get("design_note"):
        return f"{first}; {c['design_note']['reason']}"
    return first


def outcome_lines(claims: list[dict]) -> list[str]:
    """A Markdown list: each outcome of :data:`OUTCOMES` with its count, and under it each claim
    (grouped by verdict in the outcome's order, named with its verdict where the outcome has
    several) with :func:`why`."""
    lines = []
    outcomes = dict(OUTCOMES)
    if any(c["verdict"] == verdicts.NOT_RUN for c in claims):
        outcomes[NOT_RUN_OUTCOME] = (verdicts.NOT_RUN,)
    for outcome, members in outcomes.items():
        found = [c for c in claims if c["verdict"] in members]
        lines.append(f"- *{outcome}*: {len(found)}")
        for verdict in members:
            lines += [
                f"    - {tables.claim_name(c)}{'' if len(members) == 1 else f' ({verdict})'}: "
                f"{why(c)}"
                for c in found
                if c["verdict"] == verdict
            ]
    return lines


def outcome_counts(claims: list[dict]) -> dict[str, int]:
    """How many claims fall in each outcome of :data:`OUTCOMES`, in its order."""
    return {
        outcome: sum(c["verdict"] in members for c in claims)
        for outcome, members in OUTCOMES.items()
    }


def _split(claims: list[dict], outcome: str) -> str:
    """`` (2 untestable, 1 premise fails here)``: an outcome's claims by verdict, most frequent
    first; empty where it has none."""
    counts = pd.Series([c["verdict"] for c in claims if c["verdict"] in OUTCOMES[outcome]])
    shown = ", ".join(f"{n} {v}" for v, n in counts.value_counts().items())
    return f" ({shown})" if shown else ""


def outcomes_sentence(claims: list[dict]) -> str:
    """One sentence of the five outcomes' counts, the last two split by verdict (most
    frequent first)."""
    reproduced, in_sign, otherwise, untested, undecided = outcome_counts(claims).values()
    return (
        f"Of the {len(claims)} claims, {reproduced} {_verb(reproduced, 'reproduces')} and "
        f"{in_sign} more {_verb(in_sign, 'reproduces')} in sign with a smaller effect than the "
        f"paper's; {otherwise} {_verb(otherwise)} decided otherwise, {untested} "
        f"{_verb(untested)} not testable here, have a premise that fails or split by the base"
        f"{_split(claims, NOT_TESTED)}, "
        f"and {undecided} {_verb(undecided)} not decided at this scale"
        f"{_split(claims, UNDECIDED)}" + not_run_clause(claims) + "."
    )


def not_run_clause(claims: list[dict]) -> str:
    """``; 17 are not run yet (a partial study)``, or nothing where every claim ran."""
    n = sum(c["verdict"] == verdicts.NOT_RUN for c in claims)
    return f"; {n} {_verb(n)} {NOT_RUN_OUTCOME}" if n else ""


def _verb(n: int, singular: str = "is") -> str:
    """``singular`` for one claim, its plural otherwise ("is"/"are", "reproduces"/"reproduce")."""
    if n == 1:
        return singular
    return "are" if singular == "is" else singular.removesuffix("s")


def walkable(claim: dict) -> bool:
    """Whether every step of the rule reads a number for this claim: a label read off its
    interval (not untestable, its premise held, enough seeds, its bases not split), with a
    published effect in the paper's units and a design that resolves δ."""
    c = claim
    return bool(
        c["verdict"] not in (*verdicts.NOT_TESTED, verdicts.NOT_RUN, verdicts.UNDERPOWERED)
        and c.get("interval")
        and c.get("paper_units")
        and c.get("paper_effect") is not None
        and (c.get("design_note") or {}).get("resolvable")
    )


def _vs(a: float, b: float) -> str:
    return "<" if a < b else "≥"


def verdict_walk(claim: dict) -> tuple[str, str]:
    """One claim's verdict from its interval to its label, as Markdown: ``(facts, conclusion)``.

    ``facts`` lists the claim's effect, its interval (at its level of the study's error
    statement), δ with its rule, the paper's effect on this scale, the premise and the design
    note, then a table of the labels in the order the rule tries them, with the ends of the
    interval each reads and whether it holds; ``conclusion`` names the first label that holds.
    The claim must be :func:`walkable`; a ``ValueError`` says so, or that the first label that
    holds is not the one ``claims.json`` records and :func:`paperlib.study.decide.verdicts.verdict`
    gives."""
    if not walkable(claim):
        raise ValueError(f"{claim['claim']}: no step-by-step walk (see walkable)")
    rules = _walk_rules(claim)
    label, _, because = next(
        (rule for rule in rules if rule[1]), (verdicts.INCONCLUSIVE, True, "no rule holds")
    )
    evidence = verdicts.Evidence(
        effect=claim["effect"], interval=tuple(claim["interval"]), better=claim["better"],
        smallest=claim["smallest"], translated=claim["smallest_rule"]["translated"],
        paper_units=True,
    )  # fmt: skip
    decided = verdicts.verdict(evidence)[0]
    if not label == decided == claim["verdict"]:
        raise ValueError(
            f"{claim['claim']}: the walk gives {label!r}, the rule {decided!r} and claims.json "
            f"{claim['verdict']!r}"
        )
    conclusion = (
        f"The first label that holds is **{label}** ({because}), and it is the label "
        "`claims.json` records for this claim."
    )
    return _walk_facts(claim, rules), conclusion


def _walk_rules(walk: dict) -> list[tuple[str, bool, str]]:
    """The labels in the order the rule tries them, each ``(label, holds, the numbers it
    reads)``, from the interval signed with the paper's side positive."""
    low, high = verdicts.signed(walk["interval"], walk["better"])
    delta, paper = walk["smallest"], walk["smallest_rule"]["translated"]
    ends = f"[{low:+.3g}, {high:+.3g}]"
    return [  # (label, whether it holds, the numbers it reads), in the order the rule tries them
        (verdicts.REPRODUCES_BELOW if high < paper else verdicts.REPRODUCES, low > delta,
         f"the lower end {low:+.3g} {'>' if low > delta else '≤'} +δ = {delta:.3g}; the upper "
         f"end {high:+.3g} {_vs(high, paper)} the paper's effect here {paper:.3g}"),
        (verdicts.CONTRADICTS, high < -delta,
         f"the upper end {high:+.3g} {_vs(high, -delta)} −δ = {-delta:+.3g}"),
        (verdicts.NEGLIGIBLE_PAPER_SIGN if low > 0 else verdicts.NEGLIGIBLE_OTHER_SIGN
         if high < 0 else verdicts.NEGLIGIBLE, -delta < low and high < delta,
         f"the interval {ends} {'lies' if -delta < low and high < delta else 'does not lie'} "
         f"inside ±δ = ±{delta:.3g}"),
        (verdicts.SMALLER, low > 0 and high < paper,
         f"the lower end {low:+.3g} {'>' if low > 0 else '≤'} 0 and the upper end {high:+.3g} "
         f"{_vs(high, paper)} the paper's effect here {paper:.3g}"),
    ]  # fmt: skip


def _walk_facts(walk: dict, rules: list[tuple[str, bool, str]]) -> str:
    """The walk's facts as Markdown: effect, interval, δ, premise, design note, rules' table."""
    note, premise = walk["design_note"], walk["premise"]
    per_base = "; ".join(
        f"base {b}: {e['effect']:+.3g} over {e['seeds']} seeds" for b, e in walk["per_base"].items()
    )
    raw_low, raw_high = walk["interval_raw"]
    return (
        f"**{walk['statement']}** ({tables.claim_name(walk)}; {walk['units']}, "
        f"{walk['better']} is better).\n\n"
        f"- **Effect**: variant − baseline = {walk['effect']:+.3g}, the mean of the per-base "
        f"means ({per_base}), from {len(walk['seeds'])} valid seed pairs of "
        f"{walk['runs_total']}.\n"
        f"- **Interval**: [{walk['interval'][0]:+.3g}, {walk['interval'][1]:+.3g}] at "
        f"{walk['interval_level']:.3%}, its level in the study's one error statement (the raw "
        f"95 % interval: [{raw_low:+.3g}, {raw_high:+.3g}]).\n"
        f"- **δ = {walk['smallest']:.3g}**: {walk['smallest_reason']}.\n"
        f"- **Premise** ({premise['statement']}): measured {premise['measured']:.4g}, held.\n"
        f"- **Design note**, fixed before any run: {note['reason']}; the test items alone put "
        f"the half-width at ±{note['item_floor']:.3g}.\n\n"
        "| label tried | the numbers it reads | holds |\n|---|---|---|\n"
        + "\n".join(
            f"| {name} | {reads} | {'yes' if holds else 'no'} |" for name, holds, reads in rules
        )
    )


def published_against(claims: list[dict], baseline: str) -> str:
    """The claims against ``baseline`` that have a published effect, each with the effect and its
    source; "none" where no claim has one."""
    found = [
        f"{tables.claim_name(c)} ({c['paper_effect']:+.3g}, {c['paper_effect_source']})"
        for c in claims
        if c["baseline"] == baseline and c.get("paper_effect") is not None
    ]
    return ", ".join(found) or "none"


def design_conclusion(claims: list[dict], paper: str) -> str:
    """One sentence from a paper's context and design columns (:func:`tables.sign_text`,
    :func:`tables.size_text`, :func:`tables.design_text`): the signs the intervals establish,
    the intervals below the paper's effect on this scale, the designs that resolve δ, and the
    verdicts that counting the runs the plateau rule left out would change."""
    members = paper_claims(claims, paper)
    signs = [tables.sign_text(c) for c in members]
    sizes = [tables.size_text(c) for c in members]
    compared = [s for s in sizes if s.endswith("the paper's")]
    resolving = sum(tables.design_text(c).startswith("resolves δ") for c in members)
    own, other = signs.count("the paper's"), signs.count("the other")
    below = compared.count("below the paper's")
    changed = [
        c["claim"] for c in members if (c.get("without_exclusions") or {}).get("changes_verdict")
    ]
    return (
        f"Of {paper}'s {len(members)} claims, the interval establishes the paper's sign for "
        f"{own} and the other sign for {other}; of "
        f"the {len(compared)} whose size compares with the paper's, the interval lies below it "
        f"for {below}; {resolving} designs resolve δ, and "
        "counting the runs the plateau rule left out changes "
        + (f"{len(changed)} verdict(s): {', '.join(changed)}." if changed else "no verdict.")
    )
