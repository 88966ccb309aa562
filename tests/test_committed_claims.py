"""The committed full study's ``results/full/claims.json`` against the rule it states, recomputed
here from each claim's own recorded numbers: every premise measured on the baseline arm and
judged as ``docs/methods/conventions.md#verdicts`` says, the one error statement naming the
claims looked at twice and setting each interval's level, each displayed interval rebuilt from
its variance parts at that level, each label read off its interval, and the chance levels of
the permutation null."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from paperlib.study.decide import verdicts
from paperlib.study.plan.claims import CLAIMS
from paperlib.study.report.decided import load_claims

NEGLIGIBLE_ALL = (
    verdicts.NEGLIGIBLE,
    verdicts.NEGLIGIBLE_PAPER_SIGN,
    verdicts.NEGLIGIBLE_OTHER_SIGN,
)
DECIDED = load_claims("full")
CLAIMED = DECIDED["claims"]
IDS = [c["claim"] for c in CLAIMED]
# a partial study's claims whose runs have not finished carry no measurement to check
MEASURED = [c for c in CLAIMED if c["verdict"] != verdicts.NOT_RUN]
MEASURED_IDS = [c["claim"] for c in MEASURED]


def signed(claim: dict) -> tuple[float, float]:
    """The claim's interval with the paper's side positive."""
    low, high = claim["interval"]
    return (low, high) if claim["better"] == "higher" else (-high, -low)


def test_every_declared_claim_is_decided_once():
    assert IDS == [c.id for c in CLAIMS]


def test_a_claim_not_run_yet_names_its_missing_runs_and_reads_nothing():
    """Only a partial study leaves claims not run, each with its planned runs missing, no
    effect, no interval and no seed pair kept."""
    not_run = [c for c in CLAIMED if c["verdict"] == verdicts.NOT_RUN]
    assert bool(not_run) == DECIDED["partial"]
    for claim in not_run:
        assert claim["missing_runs"] and claim["seeds_kept"]["pairs"] == 0, claim["claim"]
        assert claim["effect"] is None and claim["interval"] is None, claim["claim"]
        assert claim["reason"].startswith(f"not run: {len(claim['missing_runs'])} planned run(s)")


@pytest.mark.parametrize("claim", MEASURED, ids=MEASURED_IDS)
def test_every_premise_is_measured_on_the_baseline_and_judged_by_its_kind(claim):
    premise = claim["premise"]
    assert premise["measured"] is not None and isinstance(premise["held"], bool)
    baseline = claim["baseline_value"]["mean"]
    if premise["kind"] == "room":
        # the baseline leaves at least the paper's effect on this scale to the best value
        assert premise["measured"] == pytest.approx(baseline)
        sign = 1.0 if claim["better"] == "higher" else -1.0
        room = sign * (claim["ceiling"] - baseline)
        assert premise["threshold"] == pytest.approx(abs(claim["paper_effect_here"]))
        assert premise["held"] == (room >= abs(claim["paper_effect_here"]))
    else:
        # at least δ of the baseline's parents inside 2K/√c, at the end or during training
        assert premise["kind"] == "parents inside"
        assert premise["at_end"] == pytest.approx(baseline)
        assert premise["measured"] == pytest.approx(max(baseline, premise["during"] or 0.0))
        assert premise["held"] == (premise["measured"] >= claim["smallest"])
    if not premise["held"]:  # not decided: this label or one the rule tries before it
        assert claim["verdict"] in verdicts.NOT_TESTED, claim["verdict"]


def test_the_error_statement_names_every_claim_looked_at_twice():
    control = DECIDED["error_control"]
    looked = [c["claim"] for c in CLAIMED if c["looks"] > 1]
    assert looked and control["sequential"]["claims"] == looked
    assert looked == [c.id for c in CLAIMS if c.looks > 1]
    assert control["familywise_rate"] == 0.05
    split = {part["readings"]: part for part in control["split"]}
    assert split["verdicts"]["count"] == len(CLAIMS)
    assert split["base readings"]["count"] == 5 * len(CLAIMS)
    assert split["trend slopes"]["count"] == 2 * sum(1 for c in CLAIMED if c["trend"])


@pytest.mark.parametrize("claim", MEASURED, ids=MEASURED_IDS)
def test_each_interval_is_the_claim_s_level_of_the_error_statement(claim):
    """80 % of 0.05 spread over every declared claim, halved for a claim looked at twice; the
    interval rebuilt from its seed and item terms (t with its within-base degrees of freedom,
    z for the items) at that level."""
    alpha = 0.05 * 0.8 / len(CLAIMS) / claim["looks"]
    assert claim["interval_level"] == pytest.approx(1 - alpha, rel=1e-12)
    if claim.get("interval") is None:
        assert claim["effect"] is None or claim["seed_df"] < verdicts.MIN_SEED_DF
        return
    t = stats.t.isf(alpha / 2, claim["seed_df"])
    z = stats.norm.isf(alpha / 2)
    half = math.sqrt(t * t * claim["seed_term"] + z * z * claim["item_term"])
    assert claim["interval"] == pytest.approx([claim["effect"] - half, claim["effect"] + half])
    raw = claim["interval_raw"]
    assert claim["interval"][0] <= raw[0] and raw[1] <= claim["interval"][1]


@pytest.mark.parametrize("claim", CLAIMED, ids=IDS)
def test_each_label_read_off_an_interval_is_what_the_interval_shows(claim):
    """Every negligible interval lies inside ±δ, every reproducing one beyond +δ, every
    contradicting one beyond −δ, and one that reproduces in sign excludes 0 below the paper's
    effect here; the sign a negligible label names is the interval's."""
    label, delta = claim["verdict"], claim["smallest"]
    if label not in (*NEGLIGIBLE_ALL, verdicts.REPRODUCES, verdicts.REPRODUCES_BELOW,
                     verdicts.CONTRADICTS, verdicts.SMALLER):  # fmt: skip
        return
    low, high = signed(claim)
    here = abs(claim["paper_effect_here"])
    if label in NEGLIGIBLE_ALL:
        assert -delta < low and high < delta
        assert (label == verdicts.NEGLIGIBLE_PAPER_SIGN) == (low > 0)
        assert (label == verdicts.NEGLIGIBLE_OTHER_SIGN) == (high < 0)
    elif label in (verdicts.REPRODUCES, verdicts.REPRODUCES_BELOW):
        assert low > delta
        below = bool(claim["paper_units"]) and high < here
        assert (label == verdicts.REPRODUCES_BELOW) == below
    elif label == verdicts.CONTRADICTS:
        assert high < -delta
    else:
        assert 0 < low <= delta and high < here and claim["paper_units"]


def test_the_chance_of_himo_k_is_the_permutation_null_s_zero():
    himo_k = [c for c in CLAIMED if c["item"] == "world-monotonicity/himoK"]
    assert len(himo_k) == 4  # MoLo against InfoNCE and Long-CLIP, the batch and HiDe ablations
    for claim in himo_k:
        assert claim["chance"] is not None and abs(claim["chance"]) <= 0.05, claim["claim"]
        assert claim["chance"] == 0.0  # ρ averages exactly 0 over the orders of a row
