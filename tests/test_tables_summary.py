"""Study tables: mean ± std over seeds against direct numpy computations, and the claims table."""

from __future__ import annotations

import numpy as np

from paperlib.study.decide.regime import regime_text
from paperlib.study.report.tables import (
    Column,
    base_text,
    claim_line,
    claim_name,
    claims_context,
    claims_table,
    delta_text,
    design_text,
    effect_text,
    format_mean_std,
    paper_text,
    premise_text,
    sign_text,
    size_text,
    study_table,
    values,
)

ROWS = [
    {"study": "s", "variant": "a", "seed": 1, "dataset": "d", "acc1": 0.5},
    {"study": "s", "variant": "a", "seed": 0, "dataset": "d", "acc1": 0.7},
    {"study": "s", "variant": "a", "seed": 2, "dataset": "d", "acc1": 0.6},
    {"study": "s", "variant": "b", "seed": 0, "dataset": "d", "acc1": 0.2},
    {"study": "s", "variant": "b", "seed": 0, "dataset": "other", "acc1": 0.9},
]


def test_values_pick_one_variant_and_dataset_in_seed_order():
    col = Column("acc", "d", "acc1", scale=100)
    assert values(ROWS, "s", "a", col) == [70.0, 50.0, 60.0]
    assert values(ROWS, "s", "b", col) == [20.0]
    assert values(ROWS, "s", "c", col) == []


def test_mean_std_matches_numpy():
    xs = [70.0, 50.0, 60.0]
    assert format_mean_std(xs) == f"{np.mean(xs):.1f} ± {np.std(xs, ddof=1):.1f}"
    assert format_mean_std([20.0]) == "20.0"
    assert format_mean_std([]) == "–"


def test_study_table_shape_and_seed_counts():
    table = study_table(ROWS, "s", ["a", "b"], [Column("acc", "d", "acc1", 100)])
    assert list(table.index) == ["a", "b"]
    assert table.loc["a", "seeds"] == 3 and table.loc["b", "seeds"] == 1
    assert table.loc["a", "acc"] == "60.0 ± 10.0"


# a decided claim in the study's units (fractions) shown as points of 100: ARGENT's PEP against
# HyCoCLIP, the paper's +2.5 points carried onto this scale as +0.031 (+3.1 points)
PEP = {
    "label": "PEP AUC", "variant": "ARGENT", "baseline": "HyCoCLIP", "better": "higher",
    "shown": "PEP AUC, of 100", "shown_scale": 100, "paper_effect": 0.025,
    "paper_effect_here": 0.031, "paper_units": True,
    "smallest_rule": {"paper_effect": 2.5, "share": 0.78, "source": "the paper's effect"},
    "effect": 0.0123, "interval": [0.004, 0.0206], "interval_raw": [0.006, 0.018],
    "smallest": 0.005, "premise": {"held": True, "measured": 0.925, "paper": 96.8},
    "verdict": "reproduces in sign, below the published effect", "seeds": [0, 1, 2],
    "runs_total": 3, "statement": "ARGENT orders entailment better", "reason": "the interval ...",
}  # fmt: skip


def test_the_claims_table_shows_each_number_in_the_metric_s_shown_units():
    table = claims_table([PEP, {**PEP, "effect": None, "verdict": "untestable"}])
    row = table.loc["PEP AUC: ARGENT vs HyCoCLIP"].iloc[0]
    assert list(table.columns) == [
        "shown as", "paper → here", "paper's table", "this study [interval]", "δ", "premise",
        "verdict", "seeds",
    ]  # fmt: skip
    assert row["shown as"] == "PEP AUC, of 100"
    assert row["paper → here"] == "+2.5 → +3.1"  # 0.031 × 100, two significant digits
    # ×100: +1.23 in [+0.40, +2.06], whose half-width 0.83 resolves two decimals
    assert row["this study [interval]"] == "+1.23 [+0.40, +2.06]"
    assert row["δ"] == "±0.5" and row["premise"] == "holds: 92.5 (paper 96.8)"
    assert row["seeds"] == "3/3" and row["verdict"] == PEP["verdict"]
    assert row["paper's table"] == "–"  # no table recorded
    placed = {
        **PEP,
        "paper_effect_table": "ARGENT Table 2",
        "paper_effect_row": "ARGENT Table 2: ARGENT S − HyCoCLIP S",
    }
    assert claims_table([placed]).iloc[0]["paper's table"] == "ARGENT Table 2"
    line = claim_line(placed)
    assert "effect +1.23 [+0.40, +2.06] (PEP AUC, of 100)" in line
    assert "paper +2.5 → +3.1 (ARGENT Table 2: ARGENT S − HyCoCLIP S), δ ±0.5" in line
    assert "premise holds: 92.5 (paper 96.8), 3/3 seeds; the interval ..." in line
    assert table.iloc[1]["this study [interval]"] == "–"
    cleaning = {**PEP, "baseline_item": "x", "variant": "InfoNCE", "baseline": "InfoNCE"}
    assert claim_name(cleaning) == "PEP AUC: InfoNCE, vs all captions"


def test_an_effect_shows_the_digits_its_interval_resolves():
    def shown(effect, interval, scale=1.0):
        return effect_text({"effect": effect, "interval": interval, "shown_scale": scale})

    # two significant digits of the half-width: 0.0126 -> 3 decimals, 1.5 -> 1, 15 -> 0
    assert shown(0.1, [0.0874, 0.1126]) == "+0.100 [+0.087, +0.113]"
    assert shown(4.2, [2.7, 5.7]) == "+4.2 [+2.7, +5.7]"
    assert shown(4.2, [-10.8, 19.2]) == "+4 [-11, +19]"
    assert shown(-0.004, [-1.004, 0.996]) == "+0.0 [-1.0, +1.0]"  # no "-0.0"
    assert shown(0.003, [0.001, 0.005], scale=100) == "+0.30 [+0.10, +0.50]"
    assert effect_text({"effect": 0.2, "interval": None, "seed_df": 0}) == (
        "+0.2 (no interval: 0 seed df)"
    )
    assert effect_text({"effect": None}) == "–"


def test_the_paper_s_effect_reads_its_own_lead_or_the_borrowed_share():
    lead = {
        "better": "higher", "paper_effect": None, "paper_effect_here": 15.54,
        "smallest_rule": {"paper_effect": 1.5, "share": 0.42, "source": "the paper's lead on this metric"},
    }  # fmt: skip
    assert paper_text(lead) == "(lead +1.5) → +16"
    share = {
        "better": "lower", "paper_effect": None, "paper_effect_here": -0.0243, "shown_scale": 100,
        "smallest_rule": {"paper_effect": 0.5, "share": 0.0243, "source": "no table prints this metric"},
    }  # fmt: skip
    assert paper_text(share) == "(share 0.024) → -2.4"
    ssi = {
        "better": "lower", "paper_effect": -6.82, "paper_effect_here": -3.3,
        "smallest_rule": {"paper_effect": 6.82, "share": 0.6, "source": "the paper's effect"},
    }  # fmt: skip
    assert paper_text(ssi) == "-6.82 → -3.3"  # the paper's side is down
    assert paper_text({"better": "higher"}) == "–"
    assert delta_text({"smallest": 0.0123, "shown_scale": 100}) == "±1.2"


def test_the_premise_reads_held_or_failed_with_the_measured_value_in_shown_units():
    assert premise_text({"premise": {"held": False, "measured": 95.7, "paper": 35.0}}) == (
        "fails: 95.7 (paper 35)"
    )
    aperture = {"held": False, "measured": 0.0, "paper": "inside"}
    assert premise_text({"premise": aperture, "shown_scale": 100}) == "fails: 0 inside"
    assert premise_text({"premise": {"held": True, "measured": 0.41, "paper": None}}) == (
        "holds: 0.41"
    )
    assert premise_text({}) == "–"


def test_sign_size_base_and_regime_are_read_from_the_decided_claim():
    claim = {
        "effect": 0.0123, "interval": [0.004, 0.0206], "paper_effect": 0.025, "paper_units": True,
        "paper_effect_here": 0.031, "better": "higher",
        "verdict": "reproduces in sign, below the published effect",
        "regime": {"batch_size": 64, "steps": 400, "lr": 5e-4},
        "against_base": {"variant": {"effect": -0.08}, "baseline": {"effect": -0.095},
                         "reading": "both arms fall below the base"},
    }  # fmt: skip
    # the sign is the interval's: it excludes 0 on one side, or holds it
    assert sign_text(claim) == "the paper's" and size_text(claim) == "below the paper's"
    assert sign_text({**claim, "interval": [-0.02, -0.004]}) == "the other"
    assert sign_text({**claim, "interval": [-0.001, 0.02]}) == "not established"
    lower = {**claim, "better": "lower", "interval": [-0.0206, -0.004], "paper_effect_here": -0.031}
    assert sign_text(lower) == "the paper's" and size_text(lower) == "below the paper's"
    assert sign_text({**claim, "verdict": "untestable"}) == "not established"
    assert sign_text({**claim, "interval": None}) == "not established"
    assert sign_text({**claim, "effect": None}) == "–"
    # the size is the interval against the paper's effect carried onto this scale
    assert size_text({**claim, "paper_units": False}) == "other units"
    assert size_text({**claim, "paper_effect_here": 0.01}) == "contains the paper's"
    assert size_text({**claim, "paper_effect_here": 0.001}) == "above the paper's"
    assert size_text({**claim, "paper_effect_here": None}) == "–"
    assert regime_text(claim) == "batch 64 × 400 steps, lr 0.0005"
    assert base_text(claim) == "-0.08 / -0.095: both arms fall below the base"
    assert base_text({**claim, "against_base": {"variant": None}}) == "–"
    named = {**claim, "label": "R@1", "variant": "A", "baseline": "B", "family_size": 17}
    row = claims_context([named]).loc["R@1: A vs B"]
    assert (row["sign"], row["size"], row["family"]) == ("the paper's", "below the paper's", 17)
    assert (row["variant − base"], row["baseline − base"]) == ("-0.08", "-0.095")
    assert row["regime"] == "batch 64 × 400 steps, lr 0.0005"
    assert claims_context([{**named, "against_base": None}]).iloc[0]["variant − base"] == "–"
    lined = {**named, "statement": "A beats B", "smallest": 0.005, "seeds": [0], "runs_total": 1,
             "reason": "why"}  # fmt: skip
    assert "variant / baseline − base -0.08 / -0.095: both arms fall below" in claim_line(lined)


def test_claims_details_folds_every_claim_line_escaped():
    from html.parser import HTMLParser

    from paperlib.study.report.tables import claims_details

    claims = [
        {
            "label": "R@1", "variant": "A<b>", "baseline": "B", "statement": "A & B differ",
            "verdict": "inconclusive", "effect": None, "reason": "no seeds",
            "invalid_runs": ["A<b>/seed2: collapsed"],
        },
        {
            "label": "AUC", "variant": "C", "baseline": "D", "statement": "C beats D",
            "verdict": "reproduces", "effect": 0.02, "interval": [0.01, 0.03],
            "interval_raw": [0.012, 0.028], "paper_effect": 0.025, "smallest": 0.005,
            "seeds": [0, 1], "runs_total": 2, "reason": "above zero", "invalid_runs": [],
        },
    ]  # fmt: skip
    block = claims_details(claims, "Every claim")

    class Text(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tags, self.items, self.summary = [], [], ""

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            if tag == "li":
                self.items.append("")

        def handle_data(self, data):
            if "summary" in self.tags and "ul" not in self.tags:
                self.summary += data
            elif self.items:
                self.items[-1] += data

    parsed = Text()
    parsed.feed(block)
    assert block.startswith("<details>") and block.endswith("</details>")
    assert parsed.summary == "Every claim" and len(parsed.items) == 2
    assert parsed.items[0].startswith(claim_line(claims[0]))  # "<b>" shown, not a tag
    assert "left out: A<b>/seed2: collapsed" in parsed.items[0].replace("\xa0", "")
    assert parsed.items[1] == claim_line(claims[1])
    assert "b" not in parsed.tags


def test_the_design_and_exclusion_cells_read_the_claims_notes():
    from paperlib.study.report.tables import design_text, exclusions_text

    note = {"item_floor": 0.006, "delta": 0.01, "half_width": 0.008, "per_base_needed": 3}
    assert design_text({"design_note": note}) == "resolves δ (±0.008)"
    assert design_text({"design_note": {**note, "half_width": 0.02}}) == "needs 3 seeds per base"
    floor = {**note, "item_floor": 0.012, "half_width": None}
    assert design_text({"design_note": floor}) == "item floor ±0.012 ≥ δ"
    assert design_text({}) == "–"
    same = {"verdict": "reproduces", "runs_added": 0, "changes_verdict": False}
    assert exclusions_text({"without_exclusions": same}) == "–"
    moved = {"verdict": "negligible", "runs_added": 2, "changes_verdict": True}
    assert exclusions_text({"without_exclusions": moved}) == "negligible (+2 pairs)"


def test_the_readme_paragraph_is_computed_from_the_claims():
    """Counts, the runs left out, the premises that fail and the error statement come from the
    claims themselves."""
    from paperlib.study.decide.error_control import statement
    from paperlib.study.report.study_paragraph import study_paragraph, verdict_counts

    def claim(name, verdict, paper="HiMo-CLIP", **more):
        return {
            "claim": name, "verdict": verdict, "paper": paper, "headline": True,
            "study": "himo" if paper == "HiMo-CLIP" else "argent",
            "regime": {"lr": 3e-5, "warmup_steps": 100, "steps": 400},
            "retention": {"variant": {"a": 0.93}, "baseline": {"a": 0.871}},
            "seeds_kept": {"pairs": 7}, **more,
        }  # fmt: skip

    held = {"held": True, "measured": 50.0, "paper": None}
    failing = claim(
        "c", "premise fails here", premise={"held": False, "measured": 95.7, "paper": 35.0},
        without_exclusions={"verdict": "negligible", "changes_verdict": True},
    )  # fmt: skip
    claims = [
        claim("a", "reproduces", premise=held), claim("b", "underpowered", premise=held), failing,
        claim("d", "reproduces", paper="ARGENT", premise=held),
    ]  # fmt: skip
    looked = ["e", "f"]
    decided = {"claims": claims, "code_versions": [{"code_hash": "ab" * 32}],
               "unconverged_runs": ["x: rising", "y: rising", "s/scratch/seed1: rising"],
               "excluded_runs": ["x: not converged: rising", "y: not converged: rising"],
               "error_control": statement(36, 38, looked, "fixed")}  # fmt: skip
    text = study_paragraph(decided)
    assert "code hash `abababababab`" in text
    assert "every HiMo fine-tune at lr 3e-5 with 100 of its 400 steps as warm-up" in text
    assert "keeps at least 0.87 of its base's" in text
    assert "2 runs still rising past δ" in text
    assert "would change 1 verdicts: `c` (premise fails here → negligible)" in text
    assert verdict_counts(claims, "HiMo-CLIP") in text
    assert verdict_counts(claims, "HiMo-CLIP") == (
        "HiMo-CLIP (3 claims): 1 premise fails here, 1 reproduces, 1 underpowered"
    )
    assert "1 claim's premise fails here, so it is not decided: `c` (95.7 here, paper 35)." in (
        text
    )
    # the aperture's premise in points of 100 against the paper's word; one without a level
    aperture = claim(
        "g", "premise fails here", paper="ARGENT", shown_scale=100,
        premise={"held": False, "measured": 0.004, "paper": "inside"},
    )  # fmt: skip
    unprinted = claim("h", "premise fails here", premise={"held": False, "measured": 1.5})
    both = study_paragraph({**decided, "claims": [*claims, aperture, unprinted]})
    assert (
        "3 claims' premises fail here, so they are not decided: `c` (95.7 here, paper 35); `g` "
        "(0.4 here, paper inside); `h` (1.5 here, paper no level)."
    ) in both
    # the error statement: 80 % of 0.05 over 36 verdicts, each at 1 − 0.04 / 36
    assert (
        "One error rate, 0.05, covers every interval shown: 80% of it over the 36 verdicts "
        "(each at 99.889%), the rest over the base readings and trend slopes; 2 claims whose "
        "seeds were added after a first look split theirs between the two looks."
    ) in text
    assert "One error rate" not in study_paragraph({k: v for k, v in decided.items()
                                                    if k != "error_control"})  # fmt: skip
    assert "1 more rises too and is kept, not being asked for a plateau: `s/scratch/seed1`" in text
    assert "1 claim is underpowered" in text and "unresolvable" not in text
    settled = {**decided, "claims": [claims[0], claims[3]], "unconverged_runs": []}
    assert "No claim is left undecided by its design." in study_paragraph(settled)
    assert "Every claim's premise holds here." in study_paragraph(settled)
    assert "0 runs still rising past δ" in study_paragraph(settled)
    assert "more rise" not in study_paragraph(settled)
    assert "learning targets" not in text  # none recorded: nothing said of them
    row = {"study": "argent", "metric": "world-zeroshot/L3_correct", "target": 0.3, "runs": 2}
    targets = [
        {**row, "variant": "base", "median": 0.2855, "met": False},
        {**row, "variant": "ARGENT", "median": 0.8974, "met": False, "target": 0.9,
         "of_base": "base"},
        {**row, "variant": "HyCoCLIP", "median": 0.31, "met": True},
    ]  # fmt: skip
    assert study_paragraph({**decided, "targets": targets}).endswith(
        "2 of the 3 learning targets are missed: world-zeroshot/L3_correct of base (median "
        "0.285 against 0.3); world-zeroshot/L3_correct of ARGENT as a share of its base's "
        "(median 0.897 against 0.9)."
    )
    plateaus = [
        {"geometry": "euclidean", "model": "m", "base": 0, "zeroshot_L1": True, "short_i2t_r1": True},
        {"geometry": "hyperbolic", "model": "m", "base": 1, "zeroshot_L1": True,
         "short_i2t_r1": False},
    ]  # fmt: skip
    assert (
        "1 of the 2 bases end pre-training with a validation metric still rising at its end (the "
        "slope over the last 40 % of its schedule established above 0 against the curve's "
        "noise): the hyperbolic `m` base 1 (short_i2t_r1)."
    ) in study_paragraph({**decided, "base_plateaus": plateaus})
    flat = {**decided, "base_plateaus": plateaus[:1]}
    assert study_paragraph(flat).endswith("Every base passes its plateau check (1 of 1).")
    met = {**decided, "targets": [targets[2]]}
    assert study_paragraph(met).endswith("Every learning target is met (1 of 1).")


def test_the_design_table_gives_seeds_per_base_the_note_and_the_verdict_with_exclusions():
    from paperlib.study.report.tables import claims_design

    claim = {
        "label": "R@1", "variant": "A", "baseline": "B",
        "design_note": {"item_floor": 0.004, "delta": 0.01, "half_width": 0.008,
                        "per_base_needed": 3, "valid_per_base": {"0": 3, "1": 4}},
        "without_exclusions": {"verdict": "negligible", "runs_added": 1, "changes_verdict": True},
    }  # fmt: skip
    row = claims_design([claim]).loc["R@1: A vs B"]
    assert row.to_dict() == {
        "seeds per base": "3 + 4", "design": "resolves δ (±0.008)",
        "with the excluded runs": "negligible (+1 pairs)",
    }  # fmt: skip
    bare = claims_design([{"label": "x", "variant": "C", "baseline": "D"}]).iloc[0]
    assert bare.to_dict() == {"seeds per base": "–", "design": "–", "with the excluded runs": "–"}


def test_an_absent_optional_folder_is_named_as_given(capsys, tmp_path, monkeypatch):
    from paperlib import notebooks

    monkeypatch.setattr(notebooks, "REPO_ROOT", tmp_path)
    (tmp_path / "here").mkdir()
    assert notebooks.optional_folder("here", "HierarCaps") == "here"
    assert notebooks.optional_folder("../shared/data/x", "HierarCaps") is None
    printed = capsys.readouterr().out
    assert "HierarCaps not found at ../shared/data/x" in printed and str(tmp_path) not in printed
    assert notebooks.optional_folder(None, "HierarCaps") is None


MIXED_UNITS = (
    "the row's effect and δ are in the metric's shown units (×100 for a share) but {} keeps the "
    "study's raw units, e.g. docs/study.md's long I2T R@1 row: δ ±2.3 beside {}"
)


def test_the_design_cell_is_in_the_row_s_shown_units():
    note = {"item_floor": 0.006, "delta": 0.023, "half_width": 0.0196, "per_base_needed": 3}
    assert design_text({"design_note": note, "shown_scale": 100}) == "resolves δ (±1.96)"


def test_the_base_cell_is_in_the_row_s_shown_units():
    arms = {"variant": {"effect": 0.338}, "baseline": {"effect": 0.296}, "reading": "both rise"}
    assert base_text({"against_base": arms, "shown_scale": 100}).startswith("+33.8 / +29.6")
