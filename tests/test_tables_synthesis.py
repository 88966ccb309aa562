"""The decided claims in words (``paperlib.tables.synthesis``) on a small hand-made claims list:
each sentence against the one written out by hand, and the walk of one verdict against the
decision rule ``paperlib.tables.verdicts.verdict`` on the same numbers."""

from __future__ import annotations

import pytest

from paperlib.tables import synthesis, verdicts
from paperlib.tables.verdicts import Evidence, verdict


def claim(name: str, label: str, **fields) -> dict:
    """A decided claim with the fields the sentences read; ``fields`` override them."""
    return {
        "claim": name, "paper": "P", "label": label, "variant": "X", "baseline": "Y",
        "baseline_item": None, "better": "higher", "smallest": 0.02, "effect": 0.1,
        "interval": [0.05, 0.15], "interval_raw": [0.07, 0.13], "paper_effect": None,
        "reason": "first clause; second clause", "design_note": None, **fields,
    }  # fmt: skip


NOTE = {"reason": "4 seeds per base reach ±0.01 < δ", "item_floor": 0.004, "resolvable": True,
        "delta": 0.02, "half_width": 0.01, "per_base_needed": None}  # fmt: skip
CLAIMS = [
    claim("a", "R@1", verdict=verdicts.REPRODUCES, paper_effect=0.08),
    claim("b", "loss", better="lower", effect=-0.03, interval=[-0.05, -0.01], smallest=0.005,
          verdict=verdicts.SMALLER, paper_effect=-0.1),
    claim("c", "SSI", verdict=verdicts.NEGLIGIBLE, reason="equivalent within ±0.02; sign"),
    claim("d", "PEP", verdict=verdicts.UNDERPOWERED, reason="1 seed df; no interval",
          design_note={**NOTE, "reason": "needs 6 seeds per base"}),
    claim("e", "COLA", verdict=verdicts.BASE_DEPENDENT,
          verdict_per_base={"0": verdicts.REPRODUCES, "1": verdicts.INCONCLUSIVE}),
    claim("f", "L1", verdict=verdicts.UNTESTABLE, reason="the variant's mean lies at chance"),
    claim("g", "L3", verdict=verdicts.UNTESTABLE, reason="a model did not learn", paper="Q"),
]  # fmt: skip


def test_every_verdict_lies_in_exactly_one_outcome():
    listed = [v for members in synthesis.OUTCOMES.values() for v in members]
    assert sorted(listed + [verdicts.NOT_RUN]) == sorted(verdicts.VERDICTS)  # not run: apart
    assert synthesis.UNDECIDED in synthesis.OUTCOMES


def test_paper_claims_keep_one_family_in_order():
    assert [c["claim"] for c in synthesis.paper_claims(CLAIMS, "P")] == list("abcdef")
    assert [c["claim"] for c in synthesis.paper_claims(CLAIMS, "Q")] == ["g"]


def test_why_reads_each_kind_of_verdict_its_own_way():
    a, b, c, d, e, f, _ = CLAIMS
    assert synthesis.why(a) == "+0.1 [+0.05, +0.15] against δ = ±0.02, the paper's +0.08"
    assert synthesis.why(b) == (
        "-0.03 [-0.05, -0.01] (lower is better) against δ = ±0.005, the paper's -0.1"
    )
    assert synthesis.why({**a, "paper_effect": None}) == "+0.1 [+0.05, +0.15] against δ = ±0.02"
    assert synthesis.why(c) == "equivalent within ±0.02"
    assert synthesis.why(d) == "1 seed df; needs 6 seeds per base"
    assert synthesis.why({**d, "design_note": None}) == "1 seed df"
    assert synthesis.why(e) == "the bases disagree (base 0: reproduces, base 1: inconclusive)"
    assert synthesis.why(f) == "the variant's mean lies at chance"


def test_outcome_lines_count_each_outcome_and_group_its_claims_by_verdict():
    lines = synthesis.outcome_lines(synthesis.paper_claims(CLAIMS, "P"))
    assert lines == [
        "- *reproduce*: 1",
        "    - R@1: X vs Y: +0.1 [+0.05, +0.15] against δ = ±0.02, the paper's +0.08",
        "- *reproduce in sign, below the published effect*: 1",
        "    - loss: X vs Y: -0.03 [-0.05, -0.01] (lower is better) against δ = ±0.005, "
        "the paper's -0.1",
        "- *decided otherwise (too small, below the paper's, or the other sign)*: 1",
        "    - SSI: X vs Y (negligible): equivalent within ±0.02",
        "- *not testable here, or split by the base*: 2",
        "    - L1: X vs Y (untestable): the variant's mean lies at chance",
        "    - COLA: X vs Y (depends on the base): the bases disagree (base 0: reproduces, "
        "base 1: inconclusive)",
        "- *not decided at this scale*: 1",
        "    - PEP: X vs Y (underpowered): 1 seed df; needs 6 seeds per base",
    ]


def test_outcome_counts_and_sentence():
    counts = synthesis.outcome_counts(CLAIMS)
    assert list(counts.values()) == [1, 1, 1, 3, 1] and list(counts) == list(synthesis.OUTCOMES)
    assert synthesis.outcomes_sentence(CLAIMS[:4] + CLAIMS[5:]) == (
        "Of the 6 claims, 1 reproduces and 1 more reproduces in sign with a smaller effect than "
        "the paper's; 1 is decided otherwise, 2 are not testable here or split by the base "
        "(2 untestable), and 1 is not decided at this scale (1 underpowered)."
    )
    assert synthesis.outcomes_sentence(CLAIMS[:2]).endswith(
        "0 are not testable here or split by the base, and 0 are not decided at this scale."
    )


def test_the_notebook_s_and_the_readme_s_undecided_claims_are_the_same():
    from paperlib.study.decide import findings_sentences

    counts = synthesis.outcome_counts(CLAIMS)
    undecided = counts[synthesis.UNDECIDED]
    assert f"{undecided} is not decided at this scale" in findings_sentences({"claims": CLAIMS})


def test_published_against_names_the_claims_with_a_published_effect():
    sourced = [{**c, "paper_effect_source": "Table 1"} for c in CLAIMS]
    assert synthesis.published_against(sourced, "Y") == (
        "R@1: X vs Y (+0.08, Table 1), loss: X vs Y (-0.1, Table 1)"
    )
    assert synthesis.published_against(sourced, "Z") == "none"


def test_design_conclusion_counts_signs_sizes_designs_and_changed_verdicts():
    decided = [
        claim("h", "m1", verdict=verdicts.REPRODUCES, p_adjusted=0.01, paper_effect=0.2,
              paper_units=True, design_note=NOTE),  # interval below the paper's
        claim("i", "m2", verdict=verdicts.CONTRADICTS, effect=-0.1, interval=[-0.15, -0.05],
              p_adjusted=0.01, paper_effect=0.01, paper_units=True,
              without_exclusions={"changes_verdict": True}),  # interval below too
        claim("j", "m3", verdict=verdicts.INCONCLUSIVE, p_adjusted=0.5, paper_effect=0.1,
              paper_units=True, design_note={**NOTE, "half_width": 0.03, "per_base_needed": 9}),
        claim("k", "m4", verdict=verdicts.REPRODUCES, p_adjusted=0.01, paper_effect=0.1,
              paper_units=False),  # other units: not compared
        claim("l", "m5", verdict=verdicts.REPRODUCES, p_adjusted=0.01, paper="Q"),
    ]  # fmt: skip
    assert synthesis.design_conclusion(decided, "P") == (
        "Of P's 4 claims, Holm establishes the paper's sign for 2 and the other sign for 1; of "
        "the 3 whose size compares with the paper's, the interval lies below it for 2; 1 "
        "designs resolve δ, and counting the runs the plateau rule left out changes 1 "
        "verdict(s): i."
    )
    assert synthesis.design_conclusion(decided, "Q").endswith("changes no verdict.")


def test_trend_sentence_counts_each_kind_of_reading():
    readings = {
        "a": {"batch": "moves toward the paper's side as ...", "length": "not estimable: 1 df"},
        "b": {"batch": "moves away from ...", "length": "moves toward the paper's side ..."},
    }
    assert synthesis.trend_sentence(readings) == (
        "Of the 4 slopes (2 headline claims × batch and length), 1 move away from the paper's "
        "side, 1 are not estimable, and 2 move toward the paper's side as the scale grows "
        "(a (batch); b (length))."
    )
    flat = {"a": {"batch": "no change established", "length": "not measured"}}
    assert synthesis.trend_sentence(flat).endswith(
        "1 establish no change, 1 are not measured, and 0 move toward the paper's side as the "
        "scale grows (none)."
    )


# ------------------------------------------------------------------ one verdict walked

ALPHA, FAMILY = 0.05, 5
LEVEL = 1 - ALPHA / FAMILY


def walk_claim(**fields) -> dict:
    """A claim every step of the rules reads a number for, decided ``reproduces``."""
    decided = dict(
        statement="X beats Y", units="fraction of items", chance=0.1,
        ceiling=1.0, smallest_reason="the paper's smallest gap", paper_effect=0.08,
        paper_units=True, design_note=NOTE, family_size=FAMILY, seed_df=4, seeds=[0, 1, 2, 3],
        runs_total=4, p_adjusted=0.001, p_equivalence_adjusted=0.9,
        variant_value={"mean": 0.6}, baseline_value={"mean": 0.5},
        guard={"failed": None, "why": "R@1 ≥ 0.1", "variant": {"mean": 0.6},
               "baseline": {"mean": 0.5}},
        per_base={"0": {"effect": 0.09, "seeds": 2}, "1": {"effect": 0.11, "seeds": 2}},
        interaction=None, verdict=verdicts.REPRODUCES,
    )  # fmt: skip
    return claim("x-vs-y", "R@1", **{**decided, **fields})


def rule_verdict(c: dict, room: float) -> str:
    """The decision rule's label on the claim's own numbers."""
    return verdict(
        Evidence(
            effect=c["effect"],
            simultaneous=tuple(c["interval"]),
            p_sign=c["p_adjusted"],
            p_equivalence=c["p_equivalence_adjusted"],
            better=c["better"],
            smallest=c["smallest"],
            paper_effect=c["paper_effect"],
            paper_units=True,
            alpha=ALPHA,
            room=room,
        )  # fmt: skip
    )[0]


def test_walkable_needs_every_number_the_rules_read():
    c = walk_claim()
    assert synthesis.walkable(c)
    placed = [{**other, "paper_units": True, "design_note": NOTE} for other in CLAIMS]
    assert [other["claim"] for other in placed if synthesis.walkable(other)] == ["a", "b"]
    for missing in ({"interval": None}, {"paper_units": False}, {"paper_effect": None},
                    {"design_note": {**NOTE, "resolvable": False}}, {"design_note": None},
                    {"verdict": verdicts.INCONCLUSIVE}):  # fmt: skip
        assert not synthesis.walkable({**c, **missing}), missing


def test_the_walk_tries_each_label_in_order_and_lands_on_the_rules_label():
    c = walk_claim()
    assert rule_verdict(c, room=1.0 - 0.5) == verdicts.REPRODUCES
    facts, conclusion = synthesis.verdict_walk(c, ALPHA, LEVEL)
    table = facts.split("| label tried | the numbers it reads | holds |\n|---|---|---|\n")[1]
    rows = [row.split(" | ") for row in table.split("\n")]
    assert [row[0].lstrip("| ") for row in rows] == [
        verdicts.UNTESTABLE, verdicts.UNDERPOWERED, verdicts.AT_CEILING, verdicts.NEGLIGIBLE,
        verdicts.CONTRADICTS, verdicts.SMALLER, verdicts.REPRODUCES,  # the sign known: SMALLER
    ]  # fmt: skip
    assert [row[-1].rstrip(" |") for row in rows] == ["no"] * 6 + ["yes"]
    assert rows[2][1] == (
        "the baseline's room to the best value 1, 0.5, ≥ the paper's effect +0.08"
    )
    assert rows[5][1] == "the interval's upper end +0.15 ≥ the paper's effect +0.08"
    assert (
        "- **Effect**: variant − baseline = +0.1, the mean of the per-base means (base 0: "
        "+0.09 over 2 seeds; base 1: +0.11 over 2 seeds), from 4 valid seed pairs of 4." in facts
    )
    assert "[+0.05, +0.15] at 99.00%, Bonferroni's level over the 5 claims of the P family" in facts
    assert "the base × method interaction is not significant: the pooled label stands" in facts
    assert conclusion == (
        "The first label that holds is **reproduces** (the paper's sign, Holm p = 0.001 < "
        "α = 0.05; the interval's lower end +0.05 > +δ = 0.02), and it is the label "
        "`claims.json` records for this claim."
    )


def test_a_later_label_that_also_holds_is_named_and_lower_is_better_is_turned():
    c = walk_claim(
        better="lower", effect=-0.03, interval=[-0.05, -0.01], interval_raw=[-0.04, -0.02],
        smallest=0.005, paper_effect=-0.1, chance=None, ceiling=0.0,
        variant_value={"mean": 0.47}, baseline_value={"mean": 0.5}, verdict=verdicts.SMALLER,
        interaction={"df_between": 1, "df_within": 6, "F": 9.5}, interaction_p_adjusted=0.01,
        verdict_per_base={"0": verdicts.SMALLER, "1": verdicts.SMALLER},
    )  # fmt: skip
    assert rule_verdict(c, room=-(0.0 - 0.5)) == verdicts.SMALLER
    facts, conclusion = synthesis.verdict_walk(c, ALPHA, LEVEL)
    assert conclusion == (
        f"The first label that holds is **{verdicts.SMALLER}** (the interval's upper end +0.05 < "
        "the paper's effect +0.1), and it is the label `claims.json` records for this claim; "
        "reproduces would hold as well, but the rules try it later."
    )
    assert "F(1, 6) = 9.5, Holm p = 0.01), so each base is judged alone" in facts
    assert "they agree, and the pooled label stands" in facts


def test_the_walk_refuses_a_claim_it_cannot_walk_or_a_label_the_rules_do_not_give():
    with pytest.raises(ValueError, match="the walk gives 'reproduces'"):
        synthesis.verdict_walk(walk_claim(verdict=verdicts.SMALLER), ALPHA, LEVEL)
    with pytest.raises(ValueError, match="Bonferroni"):
        synthesis.verdict_walk(walk_claim(), ALPHA, 0.95)
    with pytest.raises(ValueError, match="untestable"):
        synthesis.verdict_walk(walk_claim(variant_value={"mean": 0.11}), ALPHA, LEVEL)
    with pytest.raises(ValueError, match="too few seeds"):
        synthesis.verdict_walk(walk_claim(seed_df=1), ALPHA, LEVEL)
    with pytest.raises(ValueError, match="no step-by-step walk"):
        synthesis.verdict_walk(walk_claim(interval=None), ALPHA, LEVEL)


def test_claims_not_run_yet_are_listed_and_counted_apart():
    from paperlib.study.reader import load_claims

    claims = [dict(c) for c in load_claims("smoke")["claims"][:2]]
    claims[1].update(verdict=verdicts.NOT_RUN, reason="not run: 8 planned run(s) missing")
    assert synthesis.outcomes_sentence(claims).endswith(f"; 1 is {synthesis.NOT_RUN_OUTCOME}.")
    assert f"- *{synthesis.NOT_RUN_OUTCOME}*: 1" in synthesis.outcome_lines(claims)
    assert synthesis.NOT_RUN_OUTCOME not in " ".join(synthesis.outcome_lines(claims[:1]))
