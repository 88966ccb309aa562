"""The decided claims in words: what reproduced, what did not and why, and one verdict walked
from its effect to its label.

Everything here reads the claims ``paperlib.study.decide`` wrote to ``claims.json`` (its
``claims`` list, and where named its ``alpha`` and a family's interval level) and decides
nothing: :func:`verdict_walk` tries the labels of :mod:`paperlib.tables.verdicts` in the rules'
order on one claim's recorded numbers and refuses a claim whose first label that holds is not
the one ``claims.json`` records and :func:`paperlib.tables.verdicts.verdict` gives.
"""

from __future__ import annotations

import math

import pandas as pd

from paperlib.tables import summary, verdicts

#: every verdict in one of five outcomes, in the order the summary names them (the last two as
#: the README's findings count them)
OUTCOMES: dict[str, tuple[str, ...]] = {
    "reproduce": (verdicts.REPRODUCES,),
    "reproduce in sign, below the published effect": (verdicts.SMALLER,),
    "decided otherwise (too small, below the paper's, or the other sign)": (
        verdicts.NEGLIGIBLE, verdicts.NEGLIGIBLE_PAPER_SIGN, verdicts.NEGLIGIBLE_OTHER_SIGN,
        verdicts.BELOW_PUBLISHED, verdicts.CONTRADICTS,
    ),
    "not testable here, or split by the base": verdicts.NOT_TESTED,
    "not decided at this scale": verdicts.UNDECIDED,
}  # fmt: skip
# a partial study's claims none of whose runs has finished: listed, and counted apart, only
# where there are some
NOT_RUN_OUTCOME = f"{verdicts.NOT_RUN} (a partial study)"
NOT_TESTED, UNDECIDED = "not testable here, or split by the base", "not decided at this scale"


def paper_claims(claims: list[dict], paper: str) -> list[dict]:
    """The claims of one paper's family, in their order."""
    return [c for c in claims if c["paper"] == paper]


def why(claim: dict) -> str:
    """The reason ``claims.json`` records for a claim's verdict, in a few words: for a claim that
    reproduces (in full or in sign) its effect and interval against δ and the paper's effect;
    for one the bases split, each base's verdict; otherwise the reason's first clause, with the
    design note for a claim its design could not decide."""
    c = claim
    if c["verdict"] in (verdicts.REPRODUCES, verdicts.SMALLER):
        paper = "" if c.get("paper_effect") is None else f", the paper's {c['paper_effect']:+.3g}"
        lower = " (lower is better)" if c["better"] == "lower" else ""
        return f"{summary.effect_text(c)}{lower} against δ = ±{c['smallest']:g}{paper}"
    if c["verdict"] == verdicts.BASE_DEPENDENT:
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
                f"    - {summary.claim_name(c)}{'' if len(members) == 1 else f' ({verdict})'}: "
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
    """`` (2 untestable, 1 at ceiling)``: an outcome's claims by verdict, most frequent first;
    empty where it has none."""
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
        f"{_verb(untested)} not testable here or split by the base{_split(claims, NOT_TESTED)}, "
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
    """Whether every step of the rules reads a number for this claim: it reproduces (in full or
    in sign) with a simultaneous interval, a published effect in the paper's units and a design
    that resolves δ."""
    c = claim
    return bool(
        c["verdict"] in (verdicts.REPRODUCES, verdicts.SMALLER)
        and c.get("interval")
        and c.get("paper_units")
        and c.get("paper_effect") is not None
        and (c.get("design_note") or {}).get("resolvable")
    )


def _vs(a: float, b: float) -> str:
    return "<" if a < b else "≥"


def _bases(claim: dict) -> str:
    """Whether the base × method interaction splits the verdict by base, and how."""
    interaction = claim.get("interaction")
    if not (interaction and claim["interaction_p_adjusted"] < verdicts.INTERACTION_ALPHA):
        return "the base × method interaction is not significant: the pooled label stands"
    per_base = claim["verdict_per_base"]
    return (
        f"the base × method interaction is significant (F({interaction['df_between']}, "
        f"{interaction['df_within']}) = {interaction['F']:.3g}, Holm p = "
        f"{claim['interaction_p_adjusted']:.3g}), so each base is judged alone: "
        + "; ".join(f"base {b}: {v}" for b, v in per_base.items())
        + (": they agree, and the pooled label stands"
           if len(set(per_base.values())) == 1 else ": they differ")
    )  # fmt: skip


def verdict_walk(claim: dict, alpha: float, level: float) -> tuple[str, str]:
    """One claim's verdict from its effect to its label, as Markdown: ``(facts, conclusion)``.

    ``facts`` lists the claim's effect, simultaneous interval (at ``level``, the family's
    interval level in ``claims.json``), δ, design note and bases, then a table of the labels in
    the order the rules try them, with the numbers each reads and whether it holds;
    ``conclusion`` names the first label that holds. ``alpha`` is ``claims.json``'s. The claim
    must be :func:`walkable`, testable (both arms learned, away from chance, with headroom) and
    have enough seeds; a ``ValueError`` says which of these fails, or that the first label that
    holds is not the one ``claims.json`` records and
    :func:`paperlib.tables.verdicts.verdict` gives."""
    _check_walkable(claim, alpha, level)
    rules, room = _walk_rules(claim, alpha)
    deciding = next((i for i, rule in enumerate(rules) if rule[1]), None)
    label, _, because = (
        rules[deciding] if deciding is not None else (verdicts.INCONCLUSIVE, True, "no rule holds")
    )
    later = [name for name, holds, _ in rules[(deciding or 0) + 1 :] if holds]
    evidence = verdicts.Evidence(
        effect=claim["effect"], simultaneous=tuple(claim["interval"]),
        p_sign=claim["p_adjusted"], p_equivalence=claim["p_equivalence_adjusted"],
        better=claim["better"], smallest=claim["smallest"], paper_effect=claim["paper_effect"],
        paper_units=True, alpha=alpha, room=room,
    )  # fmt: skip
    decided = verdicts.verdict(evidence)[0]
    if not label == decided == claim["verdict"]:
        raise ValueError(
            f"{claim['claim']}: the walk gives {label!r}, the rule {decided!r} and claims.json "
            f"{claim['verdict']!r}"
        )
    conclusion = (
        f"The first label that holds is **{label}** ({because}), and it is the label "
        "`claims.json` records for this claim"
        + (
            f"; {', '.join(later)} would hold as well, but the rules try it later."
            if later
            else "."
        )
    )
    return _walk_facts(claim, level, rules), conclusion


def _check_walkable(walk: dict, alpha: float, level: float) -> None:
    """Refuse a claim :func:`verdict_walk` cannot walk, naming why (its docstring)."""
    if not walkable(walk):
        raise ValueError(f"{walk['claim']}: no step-by-step walk (see walkable)")
    if not math.isclose(level, 1 - alpha / walk["family_size"], rel_tol=1e-5, abs_tol=1e-8):
        raise ValueError(f"{walk['claim']}: level {level} is not Bonferroni's at the family's size")
    direction = 1.0 if walk["better"] == "higher" else -1.0
    variant_mean, baseline_mean = walk["variant_value"]["mean"], walk["baseline_value"]["mean"]
    if walk["guard"]["failed"] is not None or verdicts.untestable_reason(
        variant_mean, baseline_mean, walk["chance"], walk["ceiling"], walk["better"],
        walk["smallest"],
    ):  # fmt: skip
        raise ValueError(f"{walk['claim']}: untestable, no walk past step 1")
    if walk["seed_df"] < verdicts.MIN_SEED_DF or direction * walk["paper_effect"] <= 0:
        raise ValueError(f"{walk['claim']}: too few seeds, or no published effect on its side")


def _walk_rules(walk: dict, alpha: float) -> tuple[list[tuple[str, bool, str]], float]:
    """The labels in the order the rules try them, each ``(label, holds, the numbers it
    reads)``, and the baseline's room to the best value."""
    direction = 1.0 if walk["better"] == "higher" else -1.0
    low, high = verdicts.signed(walk["interval"], walk["better"])  # the paper's direction positive
    paper_effect = direction * walk["paper_effect"]
    delta, note, guard = walk["smallest"], walk["design_note"], walk["guard"]
    variant_mean, baseline_mean = walk["variant_value"]["mean"], walk["baseline_value"]["mean"]
    room = direction * (walk["ceiling"] - baseline_mean)
    sign_known, paper_side = walk["p_adjusted"] < alpha, direction * walk["effect"] > 0
    side = "the paper's sign" if paper_side else "the other sign"
    p_sign, p_equivalence = walk["p_adjusted"], walk["p_equivalence_adjusted"]
    sign_words = f"{side}, Holm p = {p_sign:.3g} {_vs(p_sign, alpha)} α = {alpha:g}"
    rules = [  # (label, whether it holds, the numbers it reads), in the order the rules try them
        (verdicts.UNTESTABLE, False,
         f"the guard ({guard['why']}) is met by both arms ({guard['variant']['mean']:.3g}, "
         f"{guard['baseline']['mean']:.3g}); the means {variant_mean:.4g} and {baseline_mean:.4g} "
         "lie more than δ from chance and leave δ of headroom"),
        (verdicts.UNDERPOWERED, False,
         f"{walk['seed_df']} within-base degrees of freedom ≥ {verdicts.MIN_SEED_DF}; "
         f"{note['reason']}"),
        (verdicts.AT_CEILING, room < paper_effect,
         f"the baseline's room to the best value {walk['ceiling']:g}, {room:.3g}, "
         f"{_vs(room, paper_effect)} the paper's effect {paper_effect:+.3g}"),
        (verdicts.NEGLIGIBLE, p_equivalence < alpha,
         f"two one-sided tests of an effect within ±δ: Holm p = {p_equivalence:.3g} "
         f"{_vs(p_equivalence, alpha)} α = {alpha:g}"),
        (verdicts.CONTRADICTS, sign_known and not paper_side and high < -delta,
         f"{sign_words}; the interval's upper end {high:+.3g} {_vs(high, -delta)} "
         f"−δ = {-delta:+g}"),
        (verdicts.SMALLER if sign_known and paper_side else verdicts.BELOW_PUBLISHED,
         high < paper_effect,
         f"the interval's upper end {high:+.3g} {_vs(high, paper_effect)} the paper's effect "
         f"{paper_effect:+.3g}"),
        (verdicts.REPRODUCES, sign_known and paper_side and low > delta,
         f"{sign_words}; the interval's lower end {low:+.3g} {'>' if low > delta else '≤'} "
         f"+δ = {delta:g}"),
    ]  # fmt: skip
    return rules, room


def _walk_facts(walk: dict, level: float, rules: list[tuple[str, bool, str]]) -> str:
    """The walk's facts as Markdown: effect, interval, δ, design note, bases, the rules' table."""
    delta, note = walk["smallest"], walk["design_note"]
    per_base = "; ".join(
        f"base {b}: {e['effect']:+.3g} over {e['seeds']} seeds" for b, e in walk["per_base"].items()
    )
    raw_low, raw_high = walk["interval_raw"]
    return (
        f"**{walk['statement']}** ({summary.claim_name(walk)}; {walk['units']}, "
        f"{walk['better']} is better).\n\n"
        f"- **Effect**: variant − baseline = {walk['effect']:+.3g}, the mean of the per-base "
        f"means ({per_base}), from {len(walk['seeds'])} valid seed pairs of "
        f"{walk['runs_total']}.\n"
        f"- **Simultaneous interval**: [{walk['interval'][0]:+.3g}, {walk['interval'][1]:+.3g}] "
        f"at {level:.2%}, Bonferroni's level over the {walk['family_size']} claims of the "
        f"{walk['paper']} family (the raw 95 % interval: [{raw_low:+.3g}, {raw_high:+.3g}]).\n"
        f"- **δ = {delta:g}**: {walk['smallest_reason']}.\n"
        f"- **Design note**, fixed before any run: {note['reason']}; the test items alone put "
        f"the half-width at ±{note['item_floor']:.3g}.\n"
        f"- **The bases**: {_bases(walk)}.\n\n"
        "| label tried | the numbers it reads | holds |\n|---|---|---|\n"
        + "\n".join(
            f"| {name} | {reads} | {'yes' if holds else 'no'} |" for name, holds, reads in rules
        )
    )


def published_against(claims: list[dict], baseline: str) -> str:
    """The claims against ``baseline`` that have a published effect, each with the effect and its
    source; "none" where no claim has one."""
    found = [
        f"{summary.claim_name(c)} ({c['paper_effect']:+.3g}, {c['paper_effect_source']})"
        for c in claims
        if c["baseline"] == baseline and c.get("paper_effect") is not None
    ]
    return ", ".join(found) or "none"


def design_conclusion(claims: list[dict], paper: str) -> str:
    """One sentence from a paper's context and design columns (:func:`summary.sign_text`,
    :func:`summary.size_text`, :func:`summary.design_text`): the signs Holm establishes, the
    intervals below the paper's effect, the designs that resolve δ, and the verdicts that
    counting the runs the plateau rule left out would change."""
    members = paper_claims(claims, paper)
    signs = [summary.sign_text(c) for c in members]
    sizes = [summary.size_text(c) for c in members]
    compared = [s for s in sizes if s.endswith("the paper's")]
    resolving = sum(summary.design_text(c).startswith("resolves δ") for c in members)
    own, other = signs.count("the paper's"), signs.count("the other")
    below = compared.count("below the paper's")
    changed = [
        c["claim"] for c in members if (c.get("without_exclusions") or {}).get("changes_verdict")
    ]
    return (
        f"Of {paper}'s {len(members)} claims, Holm establishes the paper's sign for "
        f"{own} and the other sign for {other}; of "
        f"the {len(compared)} whose size compares with the paper's, the interval lies below it "
        f"for {below}; {resolving} designs resolve δ, and "
        "counting the runs the plateau rule left out changes "
        + (f"{len(changed)} verdict(s): {', '.join(changed)}." if changed else "no verdict.")
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
    """One sentence over :func:`summary.trend_readings`: how many slopes fall in each kind of
    :data:`TREND_KINDS`, and which claims (and axes) move toward the paper's side."""
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
