"""The decided claims in words (``paperlib.study.report.synthesis``) on a small hand-made claims
list: each sentence against the one written out by hand, and the walk of one verdict from its
interval to its label against the labels read off by hand (and the decision rule
``paperlib.study.decide.verdicts.verdict`` on the same numbers)."""

from __future__ import annotations

import pytest

from paperlib.study.decide import verdicts
from paperlib.study.report import synthesis


def claim(name: str, label: str, **fields) -> dict:
    """A decided claim with the fields the sentences read; ``fields`` override them."""
    return {
        "claim": name, "paper": "P", "label": label, "variant": "X", "baseline": "Y",
        "baseline_item": None, "better": "higher", "smallest": 0.02, "effect": 0.1,
        "interval": [0.05, 0.15], "interval_raw": [0.07, 0.13], "paper_effect": None,
        "paper_effect_here": None, "reason": "first clause; second clause", "design_note": None,
        **fields,
    }  # fmt: skip


NOTE = {"reason": "4 seeds per base reach ±0.01 < δ", "item_floor": 0.004, "resolvable": True,
        "delta": 0.02, "half_width": 0.01, "per_base_needed": None}  # fmt: skip
PREMISE_REASON = (
    "premise fails here (95.7 here vs 35 in the paper): the baseline leaves 4.3 to the best "
    "value; the interval [-4.4, -1.6] lies inside ±δ = ±12"
)
CLAIMS = [
    claim("a", "R@1", verdict=verdicts.REPRODUCES, paper_effect=0.08, paper_effect_here=0.06),
    claim("b", "loss", better="lower", effect=-0.03, interval=[-0.05, -0.01], smallest=0.005,
          verdict=verdicts.SMALLER, paper_effect=-0.1, paper_effect_here=-0.08),
    claim("c", "SSI", verdict=verdicts.NEGLIGIBLE, reason="the interval lies inside ±δ; sign"),
    claim("d", "PEP", verdict=verdicts.UNDERPOWERED, reason="1 seed df; no interval",
          design_note={**NOTE, "reason": "needs 6 seeds per base"}),
    claim("e", "COLA", verdict=verdicts.DIFFERS_BY_BASE,
          verdict_per_base={"0": verdicts.REPRODUCES, "1": verdicts.INCONCLUSIVE}),
    claim("f", "L1", verdict=verdicts.UNTESTABLE, reason="the variant's mean lies at chance"),
    claim("h", "H2", verdict=verdicts.PREMISE_FAILS, reason=PREMISE_REASON),
    claim("g", "L3", verdict=verdicts.UNTESTABLE, reason="a model did not learn", paper="Q"),
]  # fmt: skip
A, B, C, D, E, F, H, G = CLAIMS


def test_every_verdict_lies_in_exactly_one_outcome():
    listed = [v for members in synthesis.OUTCOMES.values() for v in members]
    assert sorted(listed + [verdicts.NOT_RUN]) == sorted(verdicts.VERDICTS)  # not run: apart
    assert synthesis.UNDECIDED in synthesis.OUTCOMES


def test_paper_claims_keep_one_family_in_order():
    assert [c["claim"] for c in synthesis.paper_claims(CLAIMS, "P")] == list("abcdefh")
    assert [c["claim"] for c in synthesis.paper_claims(CLAIMS, "Q")] == ["g"]


def test_why_reads_each_kind_of_verdict_its_own_way():
    # the effect in the digits its interval resolves (half-width 0.05: three decimals), against
    # δ and the paper's effect carried onto this scale (not the published one)
    assert synthesis.why(A) == (
        "+0.100 [+0.050, +0.150] against δ = ±0.02, the paper's effect here +0.06"
    )
    assert synthesis.why(B) == (
        "-0.030 [-0.050, -0.010] (lower is better) against δ = ±0.005, the paper's effect here "
        "-0.08"
    )
    below = {**A, "verdict": verdicts.REPRODUCES_BELOW}
    assert synthesis.why(below) == synthesis.why(A)
    assert synthesis.why({**A, "paper_effect": None}) == "+0.100 [+0.050, +0.150] against δ = ±0.02"
    assert synthesis.why(C) == "the interval lies inside ±δ"
    assert synthesis.why(D) == "1 seed df; needs 6 seeds per base"
    assert synthesis.why({**D, "design_note": None}) == "1 seed df"
    assert synthesis.why(E) == "the bases disagree (base 0: reproduces, base 1: inconclusive)"
    assert synthesis.why(F) == "the variant's mean lies at chance"
    assert synthesis.why(H) == PREMISE_REASON.split("; ")[0]


def test_why_states_delta_and_the_paper_s_effect_in_the_effect_s_units():
    import re

    shares = {**A, "effect": 0.122, "interval": [0.092, 0.152], "smallest": 0.0498,
              "paper_effect_here": 0.0996, "shown_scale": 100}  # fmt: skip
    text = synthesis.why(shares)
    assert text.startswith("+12.2 [+9.2, +15.2] against δ = ±")
    delta = float(re.search(r"δ = ±([\d.]+)", text).group(1))
    here = float(re.search(r"the paper's effect here \+([\d.]+)", text).group(1))
    assert delta == pytest.approx(4.98, rel=0.05) and here == pytest.approx(9.96, rel=0.05)


def test_outcome_lines_count_each_outcome_and_group_its_claims_by_verdict():
    lines = synthesis.outcome_lines(synthesis.paper_claims(CLAIMS, "P"))
    assert lines == [
        "- *reproduce*: 1",
        "    - R@1: X vs Y (reproduces): +0.100 [+0.050, +0.150] against δ = ±0.02, the paper's "
        "effect here +0.06",
        "- *reproduce in sign, below the published effect*: 1",
        "    - loss: X vs Y: -0.030 [-0.050, -0.010] (lower is better) against δ = ±0.005, "
        "the paper's effect here -0.08",
        "- *decided otherwise (too small, or the other sign)*: 1",
        "    - SSI: X vs Y (negligible): the interval lies inside ±δ",
        "- *not testable here, premise failing, or split by the base*: 3",
        "    - H2: X vs Y (premise fails here): premise fails here (95.7 here vs 35 in the "
        "paper): the baseline leaves 4.3 to the best value",
        "    - L1: X vs Y (untestable): the variant's mean lies at chance",
        "    - COLA: X vs Y (differs between the two bases): the bases disagree (base 0: "
        "reproduces, base 1: inconclusive)",
        "- *not decided at this scale*: 1",
        "    - PEP: X vs Y (underpowered): 1 seed df; needs 6 seeds per base",
    ]


def test_outcome_counts_and_sentence():
    counts = synthesis.outcome_counts(CLAIMS)
    assert list(counts.values()) == [1, 1, 1, 4, 1] and list(counts) == list(synthesis.OUTCOMES)
    assert synthesis.outcomes_sentence([A, B, C, D, F, H, G]) == (
        "Of the 7 claims, 1 reproduces and 1 more reproduces in sign with a smaller effect than "
        "the paper's; 1 is decided otherwise, 3 are not testable here, have a premise that fails "
        "or split by the base (2 untestable, 1 premise fails here), and 1 is not decided at this "
        "scale (1 underpowered)."
    )
    assert synthesis.outcomes_sentence(CLAIMS[:2]).endswith(
        "0 are not testable here, have a premise that fails or split by the base, and 0 are not "
        "decided at this scale."
    )
    for label in verdicts.NOT_TESTED:  # each label that keeps a claim from being decided
        assert synthesis.outcome_counts([{**F, "verdict": label}])[synthesis.NOT_TESTED] == 1


def test_the_notebook_s_and_the_readme_s_undecided_claims_are_the_same():
    from paperlib.study.report.findings import findings_sentences

    counts = synthesis.outcome_counts(CLAIMS)
    undecided = counts[synthesis.UNDECIDED]
    assert f"{undecided} is not decided at this scale" in findings_sentences({"claims": CLAIMS})


def test_published_against_names_the_claims_with_a_published_effect():
    sourced = [{**c, "paper_effect_source": "Table 1"} for c in CLAIMS]
    assert synthesis.published_against(sourced, "Y") == (
        "R@1: X vs Y (+0.08, Table 1), loss: X vs Y (-0.1, Table 1)"
    )
    assert synthesis.published_against(sourced, "Z") == "none"


DECIDED = [
    # the interval [+0.05, +0.15]: the paper's sign, below the paper's +0.2 here; resolves δ
    claim("h", "m1", verdict=verdicts.REPRODUCES, paper_effect=0.2, paper_effect_here=0.2,
          paper_units=True, design_note=NOTE),
    # [-0.15, -0.05]: the other sign, below the paper's +0.01 here
    claim("i", "m2", verdict=verdicts.CONTRADICTS, effect=-0.1, interval=[-0.15, -0.05],
          paper_effect=0.01, paper_effect_here=0.01, paper_units=True,
          without_exclusions={"changes_verdict": True}),
    # [-0.05, +0.15]: no sign, holds the paper's +0.1 here; needs 9 seeds per base
    claim("j", "m3", verdict=verdicts.INCONCLUSIVE, interval=[-0.05, 0.15], paper_effect=0.1,
          paper_effect_here=0.1, paper_units=True,
          design_note={**NOTE, "half_width": 0.03, "per_base_needed": 9}),
    # the paper's sign, in other units: no size compared
    claim("k", "m4", verdict=verdicts.REPRODUCES, paper_effect=0.1, paper_effect_here=0.05,
          paper_units=False),
    claim("l", "m5", verdict=verdicts.REPRODUCES, paper="Q"),
]  # fmt: skip


def test_design_conclusion_counts_signs_sizes_designs_and_changed_verdicts():
    """The signs are the intervals' (h and k on the paper's side, i on the other), the sizes
    the intervals against the paper's effect on this scale (h and i below it, j around it)."""
    sentence = synthesis.design_conclusion(DECIDED, "P")
    assert sentence.startswith("Of P's 4 claims, ")
    assert sentence.endswith(
        "the paper's sign for 2 and the other sign for 1; of the 3 whose size compares with the "
        "paper's, the interval lies below it for 2; 1 designs resolve δ, and counting the runs "
        "the plateau rule left out changes 1 verdict(s): i."
    )
    assert synthesis.design_conclusion(DECIDED, "Q").endswith("changes no verdict.")


def test_design_conclusion_says_the_signs_are_the_intervals():
    assert "Holm" not in synthesis.design_conclusion(DECIDED, "P")


# ------------------------------------------------------------------ one verdict walked

LEVEL = 1 - 0.05 * 0.8 / 36  # a claim's level in the study's error statement


def walk_claim(**fields) -> dict:
    """A claim every step of the rule reads a number for: the interval [+0.05, +0.15] against
    δ = 0.02 and the paper's effect here 0.08, decided ``reproduces``."""
    decided = dict(
        statement="X beats Y", units="fraction of items", smallest_reason="half the paper's "
        "effect here", paper_effect=0.08, paper_effect_here=0.08,
        smallest_rule={"translated": 0.08}, paper_units=True, design_note=NOTE, seed_df=6,
        seeds=[0, 1, 2, 3], runs_total=4, interval_level=LEVEL,
        premise={"statement": "Y leaves room", "measured": 0.5, "held": True},
        per_base={"0": {"effect": 0.09, "seeds": 2}, "1": {"effect": 0.11, "seeds": 2}},
        verdict=verdicts.REPRODUCES,
    )  # fmt: skip
    return claim("x-vs-y", "R@1", **{**decided, **fields})


def walk_rows(facts: str) -> list[list[str]]:
    """The walk's table: one ``[label, the numbers it reads, holds]`` per row."""
    table = facts.split("| label tried | the numbers it reads | holds |\n|---|---|---|\n")[1]
    return [row.strip("| ").split(" | ") for row in table.split("\n")]


def test_walkable_needs_a_label_read_off_the_interval_and_every_number_the_rule_reads():
    c = walk_claim()
    assert synthesis.walkable(c)
    placed = [{**other, "paper_units": True, "design_note": NOTE} for other in CLAIMS]
    assert [other["claim"] for other in placed if synthesis.walkable(other)] == ["a", "b"]
    assert synthesis.walkable({**placed[2], "paper_effect": 0.1})  # negligible, read off it too
    for missing in ({"interval": None}, {"paper_units": False}, {"paper_effect": None},
                    {"design_note": {**NOTE, "resolvable": False}}, {"design_note": None},
                    *({"verdict": v} for v in (*verdicts.NOT_TESTED, verdicts.NOT_RUN,
                                               verdicts.UNDERPOWERED))):  # fmt: skip
        assert not synthesis.walkable({**c, **missing}), missing


def test_the_walk_states_the_claim_s_numbers_and_tries_each_label_in_order():
    facts, conclusion = synthesis.verdict_walk(walk_claim())
    assert facts.startswith(
        "**X beats Y** (R@1: X vs Y; fraction of items, higher is better).\n\n"
        "- **Effect**: variant − baseline = +0.1, the mean of the per-base means (base 0: "
        "+0.09 over 2 seeds; base 1: +0.11 over 2 seeds), from 4 valid seed pairs of 4.\n"
        "- **Interval**: [+0.05, +0.15] at 99.889%, its level in the study's one error "
        "statement (the raw 95 % interval: [+0.07, +0.13]).\n"
        "- **δ = 0.02**: half the paper's effect here.\n"
        "- **Premise** (Y leaves room): measured 0.5, held.\n"
        "- **Design note**, fixed before any run: 4 seeds per base reach ±0.01 < δ; the test "
        "items alone put the half-width at ±0.004.\n\n"
    )
    # by hand: the lower end 0.05 > δ = 0.02 and the upper end 0.15 ≥ 0.08, so it reproduces
    # in full; it lies neither below −δ nor inside ±δ, and not below the paper's effect
    assert walk_rows(facts) == [
        [verdicts.REPRODUCES, "the lower end +0.05 > +δ = 0.02; the upper end +0.15 ≥ the "
         "paper's effect here 0.08", "yes"],
        [verdicts.CONTRADICTS, "the upper end +0.15 ≥ −δ = -0.02", "no"],
        [verdicts.NEGLIGIBLE_PAPER_SIGN, "the interval [+0.05, +0.15] does not lie inside ±δ = "
         "±0.02", "no"],
        [verdicts.SMALLER, "the lower end +0.05 > 0 and the upper end +0.15 ≥ the paper's "
         "effect here 0.08", "no"],
    ]  # fmt: skip
    assert conclusion == (
        "The first label that holds is **reproduces** (the lower end +0.05 > +δ = 0.02; the "
        "upper end +0.15 ≥ the paper's effect here 0.08), and it is the label `claims.json` "
        "records for this claim."
    )


# (interval, better, δ, the paper's effect here, the label read off by hand, which rows hold)
WALKS = [
    # lower is better: signed, [+0.01, +0.05] lies beyond δ = 0.005 and below 0.1
    ([-0.05, -0.01], "lower", 0.005, 0.1, verdicts.REPRODUCES_BELOW, [True, False, False, True]),
    # [+0.01, +0.05]: not beyond δ = 0.02, not inside it, above 0 and below 0.08
    ([0.01, 0.05], "higher", 0.02, 0.08, verdicts.SMALLER, [False, False, False, True]),
    # [−0.01, +0.015] inside ±0.02, holding 0
    ([-0.01, 0.015], "higher", 0.02, 0.08, verdicts.NEGLIGIBLE, [False, False, True, False]),
    # [+0.005, +0.015] inside ±0.02, above 0
    ([0.005, 0.015], "higher", 0.02, 0.08, verdicts.NEGLIGIBLE_PAPER_SIGN,
     [False, False, True, True]),
    # [−0.09, −0.03]: beyond −δ
    ([-0.09, -0.03], "higher", 0.02, 0.08, verdicts.CONTRADICTS, [False, True, False, False]),
    # [−0.01, +0.05]: holds 0 and reaches past δ: no label holds
    ([-0.01, 0.05], "higher", 0.02, 0.08, verdicts.INCONCLUSIVE, [False, False, False, False]),
]  # fmt: skip


@pytest.mark.parametrize("interval, better, delta, here, label, holds", WALKS)
def test_each_walk_lands_on_the_label_read_off_by_hand(interval, better, delta, here, label, holds):
    c = walk_claim(interval=interval, interval_raw=interval, better=better, smallest=delta,
                   smallest_rule={"translated": here}, effect=sum(interval) / 2, verdict=label)  # fmt: skip
    evidence = verdicts.Evidence(sum(interval) / 2, tuple(interval), better, delta, here, True)
    assert verdicts.verdict(evidence)[0] == label
    facts, conclusion = synthesis.verdict_walk(c)
    assert [row[-1] == "yes" for row in walk_rows(facts)] == holds
    assert conclusion.startswith(f"The first label that holds is **{label}** (")
    if label == verdicts.INCONCLUSIVE:
        assert "(no rule holds)" in conclusion


def test_the_walk_refuses_a_claim_it_cannot_walk_or_a_label_the_rule_does_not_give():
    with pytest.raises(ValueError, match="the walk gives 'reproduces', the rule 'reproduces'"):
        synthesis.verdict_walk(walk_claim(verdict=verdicts.SMALLER))
    for unwalkable in ({"interval": None}, {"verdict": verdicts.PREMISE_FAILS},
                       {"verdict": verdicts.DIFFERS_BY_BASE}, {"verdict": verdicts.UNTESTABLE},
                       {"paper_units": False}):  # fmt: skip
        with pytest.raises(ValueError, match="no step-by-step walk"):
            synthesis.verdict_walk(walk_claim(**unwalkable))


def test_claims_not_run_yet_are_listed_and_counted_apart():
    from paperlib.study.report.decided import load_claims

    claims = [dict(c) for c in load_claims("full")["claims"][:2]]
    claims[1].update(verdict=verdicts.NOT_RUN, reason="not run: 8 planned run(s) missing")
    assert synthesis.outcomes_sentence(claims).endswith(f"; 1 is {synthesis.NOT_RUN_OUTCOME}.")
    assert f"- *{synthesis.NOT_RUN_OUTCOME}*: 1" in synthesis.outcome_lines(claims)
    assert synthesis.NOT_RUN_OUTCOME not in " ".join(synthesis.outcome_lines(claims[:1]))
