"""Each metric's smallest effect of interest δ follows the one rule of the method page: the
paper's method's lead over the runner-up in the paper's own table. The expected values are
recomputed here by hand from the papers' printed numbers, not from the code under test."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paperlib.tables.claims import METRICS
from paperlib.tables.smallest_effect import PaperLead

CONVENTIONS = Path(__file__).resolve().parents[1] / "docs" / "methods" / "conventions.md"

# the papers' numbers, typed from the tables: (method, runner-up), in the study's units
BY_HAND = {
    "long-i2t": ((93.0 + 82.4 + 62.2) / 3 - (92.3 + 81.5 + 59.6) / 3) / 100,  # HiMo vs FineLIP*
    "long-t2i": ((93.1 + 84.4 + 61.9) / 3 - (91.2 + 82.6 + 58.5) / 3) / 100,
    "short-i2t": ((92.5 + 65.1) / 2 - (89.0 + 62.8) / 2) / 100,  # HiMo vs Long-CLIP (L/14)
    "short-t2i": (53.2 - 52.0) / 100,  # ARGENT-S vs HyCoCLIP-S, COCO T2I R@5
    "himo2": 97.9 - 96.4,
    "himo3": 64.2 - 59.7,
    "himoK": 0.88 - 0.83,
    "ssi": 8.72 - 4.63,  # lower is better: FineLIP's SSI less HiMo's
    "cola": (38.6 - 34.8) / 100,  # HiMo vs TULIP
    "zs-l1": (38.8 - 37.3) / 100,
    "zs-l3": (38.8 - 37.3) / 100,
    "pep": (99.3 - 96.8) / 100,
    "pep-finest": (99.3 - 96.8) / 100,
    "aperture": (53.2 - 52.0) / 100,  # no paper prints it: ARGENT's lead in the same unit
    "hier-precision": (18.05 - 15.36) / 100,
    "hier-recall": (48.10 - 43.23) / 100,
}


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_each_delta_is_the_papers_lead_over_its_runner_up(name):
    metric = METRICS[name]
    assert metric.smallest == pytest.approx(BY_HAND[name], abs=1e-6)
    assert "lead over" in metric.smallest_reason or "gain from" in metric.smallest_reason


def test_every_metric_has_a_delta_by_the_rule():
    assert set(METRICS) == set(BY_HAND)


def test_the_method_page_table_states_the_computed_deltas():
    """The δ table of the method page reads the values the code computes."""
    text = CONVENTIONS.read_text()
    rows = re.findall(r"^  \| ([^|]+) \| ([^|]+) \| [^|]+ \|$", text, flags=re.M)
    stated = {label.strip(): value.strip() for label, value in rows if label.strip() != "metric"}
    expected = {
        "long I2T / T2I R@1": ("long-i2t", "long-t2i"),
        "short I2T R@1": ("short-i2t",),
        "HiMo@2 / HiMo@3": ("himo2", "himo3"),
        "HiMo@K": ("himoK",),
        "SSI": ("ssi",),
        "COLA": ("cola",),
        "short T2I R@1, aperture fraction": ("short-t2i",),
        "zero-shot L1 / L3": ("zs-l1",),
        "PEP AUC (both)": ("pep",),
        "hier. precision / recall": ("hier-precision", "hier-recall"),
    }
    assert set(stated) == set(expected)
    for label, names in expected.items():
        numbers = [float(x) for x in re.findall(r"\d+\.?\d*", stated[label])]
        assert numbers == pytest.approx([METRICS[n].smallest for n in names], abs=6e-5), label


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
def test_the_committed_claims_carry_the_deltas_the_rule_gives(scale):
    """claims.json is decided under the declared δ: each claim's δ and its reason are its
    metric's."""
    from paperlib.study.reader import load_claims
    from paperlib.tables.claims import CLAIMS

    by_id = {c.id: c.metric for c in CLAIMS}
    for claim in load_claims(scale)["claims"]:
        metric = by_id[claim["claim"]]
        assert (claim["smallest"], claim["smallest_reason"]) == (
            metric.smallest,
            metric.smallest_reason,
        ), claim["claim"]
