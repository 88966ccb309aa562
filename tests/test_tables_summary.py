"""Study tables: mean ± std over seeds against direct numpy computations, and the claims table."""

from __future__ import annotations

import numpy as np

from paperlib.tables.summary import (
    Column,
    claim_line,
    claim_name,
    claims_table,
    format_mean_std,
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


def test_the_claims_table_names_each_claim_with_both_effects():
    claim = {
        "label": "PEP AUC", "variant": "ARGENT", "baseline": "HyCoCLIP", "paper_effect": 0.025,
        "effect": 0.0123, "interval": [0.004, 0.0206], "interval_raw": [0.006, 0.018],
        "smallest": 0.005, "verdict": "reproduces", "seeds": [0, 1, 2], "runs_total": 3,
        "statement": "ARGENT orders entailment better", "reason": "the adjusted interval ...",
    }  # fmt: skip
    table = claims_table([claim, {**claim, "effect": None, "verdict": "untestable"}])
    row = table.loc["PEP AUC: ARGENT vs HyCoCLIP"].iloc[0]
    assert (
        row["paper"] == "+0.025"
        and row["this study [adjusted interval]"] == "+0.0123 [+0.004, +0.0206]"
    )
    assert row["smallest"] == "±0.005" and row["seeds"] == "3/3"
    assert table.iloc[1]["this study [adjusted interval]"] == "–"
    assert "effect +0.0123 [+0.004, +0.0206]" in claim_line(claim)
    cleaning = {**claim, "baseline_item": "x", "variant": "InfoNCE", "baseline": "InfoNCE"}
    assert claim_name(cleaning) == "PEP AUC: InfoNCE, vs all captions"
