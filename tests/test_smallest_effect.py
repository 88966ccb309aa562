"""Each claim's smallest effect of interest δ follows the one rule of the method page: the
paper's effect, as a share of its baseline's headroom, carried onto the headroom the claim's
reference leaves here, halved, and never above a third of that headroom. The worked examples
are recomputed by hand from the papers' printed numbers, not from the code under test."""

from __future__ import annotations

from dataclasses import replace

import pytest

from paperlib.study.plan.claims import CLAIMS, ClaimDeclarationError, validate_claims
from paperlib.study.plan.smallest_effect import (
    PaperLead,
    PublishedEffect,
    delta_by_formula,
    translate,
)
from paperlib.study.results.references import check_delta

BY_ID = {c.id: c for c in CLAIMS}


def test_worked_example_himo2_against_longclip_where_a_third_of_the_headroom_binds():
    """HiMo Table 2 (L/14, the three sets' average): HiMo 97.9, Long-CLIP 35.0: the effect 62.9
    closes 62.9 / 65.0 of Long-CLIP's headroom. A reference at 62.7 leaves 37.3: the effect
    here is 36.09, half of it 18.05, a third of the headroom 12.43, so δ = 12.43."""
    published, source = BY_ID["himo-h2-vs-longclip"].published()
    assert (published.effect, published.level, published.best) == pytest.approx((62.9, 35.0, 100))
    assert source == "the paper's effect"
    t = translate(published, 62.7, "the bases", 100.0, source)
    share = 62.9 / 65.0
    assert t.translated == pytest.approx(share * 37.3)
    assert t.delta == pytest.approx(37.3 / 3) and t.binds == "a third of the headroom"
    assert t.delta == pytest.approx(delta_by_formula(share, 62.7, 100.0))


def test_worked_example_argent_pep_where_a_third_binds_and_long_i2t_where_half_binds():
    """ARGENT Table 2, S: PEP AUC 99.3 against HyCoCLIP's 96.8 closes 2.5 / 3.2 of the
    headroom; at a reference of 0.9245 (headroom 0.0755) the effect here is 0.0590, δ the third
    0.02517. HiMo Table 1's lead on long I2T R@1 (HiMo 79.2 over FineLIP* 77.8, the mean of
    Urban1k, DOCCI and Long-DCI) closes 1.4 / 22.2; at 0.2765 the effect here is 0.0456 and δ
    its half, 0.0228."""
    pep, _ = BY_ID["argent-pep-vs-hycoclip"].published()
    t = translate(pep, 0.9245, "the bases", 1.0, "the paper's effect")
    assert pep.share == pytest.approx(2.5 / 3.2)
    assert t.translated == pytest.approx(2.5 / 3.2 * 0.0755)
    assert t.delta == pytest.approx(0.0755 / 3)
    lead, source = BY_ID["himo-long-i2t-vs-infonce"].published()
    hand = ((93.0 + 82.4 + 62.2) - (92.3 + 81.5 + 59.6)) / 3
    assert lead.effect == pytest.approx(hand) and source.startswith("the paper's lead")
    assert lead.level == pytest.approx((92.3 + 81.5 + 59.6) / 3)
    t = translate(lead, 0.2765, "the bases", 1.0, source)
    assert t.delta == pytest.approx(hand / (100 - lead.level) * 0.7235 / 2)
    assert t.binds == "half the translated effect"


def test_the_papers_effect_and_its_delta_come_from_one_quantity():
    """HiMo against Long-CLIP on long I2T reads the same three datasets the paper averages; on
    short I2T its two; SSI (lower is better) reads the effect on the paper's side."""
    long, _ = BY_ID["himo-long-i2t-vs-longclip"].published()
    himo, lc = (93.0 + 82.4 + 62.2) / 3, (82.7 + 66.5 + 46.5) / 3
    assert (long.effect, long.level) == pytest.approx((himo - lc, lc))
    short, _ = BY_ID["himo-short-i2t-vs-longclip"].published()
    assert short.effect == pytest.approx((92.5 + 65.1) / 2 - (89.0 + 62.8) / 2)
    ssi, _ = BY_ID["himo-ssi-vs-longclip"].published()
    assert (ssi.effect, ssi.level, ssi.best) == pytest.approx((11.45 - 4.63, 11.45, 0.0))
    assert ssi.share == pytest.approx(6.82 / 11.45)


def test_a_gain_printed_without_its_baseline_reads_the_baseline_from_the_method_level():
    """MoLo's HiMo@K gain of 0.19 over the global loss alone: the global loss sits at HiMo's
    0.88 less 0.19."""
    published, _ = BY_ID["himo-hk-vs-infonce"].published()
    assert (published.effect, published.level) == pytest.approx((0.19, 0.69))


def test_a_metric_no_table_prints_borrows_its_papers_smallest_lead_share():
    published, source = BY_ID["argent-aperture-vs-hycoclip"].published()
    assert "no table prints" in source
    shares = [(38.8 - 37.3) / (100 - 37.3), (53.2 - 52.0) / 48.0, (99.3 - 96.8) / 3.2]
    shares += [(18.05 - 15.36) / (100 - 15.36), (48.10 - 43.23) / (100 - 43.23)]
    assert published.share == pytest.approx(min(shares))


def test_a_delta_above_the_rule_is_refused_naming_the_claim_and_the_field():
    claim = BY_ID["argent-pep-vs-hycoclip"]
    published, _ = claim.published()
    good = translate(published, 0.9245, "the bases", 1.0, "the paper's effect")
    check_delta(claim, good)
    with pytest.raises(ClaimDeclarationError, match="argent-pep-vs-hycoclip.*smallest .* half"):
        check_delta(claim, replace(good, delta=good.translated * 0.6, binds="declared"))
    with pytest.raises(ClaimDeclarationError, match="smallest .* a third of the reference"):
        check_delta(claim, replace(good, translated=1.0, delta=good.headroom * 0.4))


def test_a_claim_without_a_premise_or_with_an_unreadable_effect_is_refused_by_name():
    claim = BY_ID["himo-h2-vs-longclip"]
    with pytest.raises(ClaimDeclarationError, match="'himo-h2-vs-longclip': premise: none"):
        validate_claims([replace(claim, premise=None)])
    bad = replace(claim.premise, kind="vibes")
    with pytest.raises(ClaimDeclarationError, match="premise: kind 'vibes' has no measure"):
        validate_claims([replace(claim, premise=bad)])
    effect = replace(claim.paper_effect, baseline={"model": "HiMo", "arch": "L/14"})
    with pytest.raises(ClaimDeclarationError, match="paper_effect: .* not on the claim's side"):
        validate_claims([replace(claim, paper_effect=effect)])


def test_a_translation_refuses_an_effect_off_its_claims_side_or_a_baseline_at_its_best():
    with pytest.raises(ValueError, match="not on its claim's side"):
        translate(PublishedEffect(-1.0, 50.0, 100.0, "t"), 0.5, "r", 1.0, "s")
    with pytest.raises(ValueError, match="sits at the best value"):
        PublishedEffect(1.0, 100.0, 100.0, "t").share  # noqa: B018


def _ssi_lead(better: str) -> PaperLead:
    return PaperLead("himo_ssi", (("ssi",),), {"model": "HiMo"}, "SSI", better=better)


def test_lower_is_better_picks_the_smallest_other_row():
    name, mine, theirs = _ssi_lead("lower").runner_up()
    assert (name, mine, theirs) == ("FineLIP", 4.63, 8.72)


def test_a_table_where_the_method_does_not_lead_is_refused():
    with pytest.raises(ValueError, match="does not lead"):
        _ssi_lead("higher").value()  # HiMo has the lowest SSI, so it trails when higher wins


def test_an_absent_method_row_is_named():
    lead = PaperLead("himo_ssi", (("ssi",),), {"model": "CLIP"}, "SSI", better="lower")
    with pytest.raises(KeyError, match="CLIP"):
        lead.value()


@pytest.mark.parametrize("scale", ["full", "smoke"])
def test_the_committed_claims_keep_delta_within_the_rule(scale):
    """In claims.json every δ is at most half the paper's effect on this scale and a third of
    its reference's headroom, and is the rule's own reading of the claim's recorded numbers."""
    from paperlib.study.report.decided import load_claims

    for claim in load_claims(scale)["claims"]:
        rule, delta = claim["smallest_rule"], claim["smallest"]
        assert delta <= rule["translated"] / 2 + 1e-12, claim["claim"]
        assert delta <= rule["headroom"] / 3 + 1e-12, claim["claim"]
        share = rule["paper_effect"] / abs(rule["paper_best"] - rule["paper_baseline"])
        assert delta == pytest.approx(delta_by_formula(share, rule["reference"], claim["ceiling"]))
