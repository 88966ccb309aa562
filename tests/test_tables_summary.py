"""Study tables: mean ± std over seeds and the claim verdicts, against direct numpy computations."""

from __future__ import annotations

import numpy as np

from paperlib.tables.summary import Column, format_mean_std, study_table, values, verdict

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


def test_verdicts():
    assert verdict([10, 11, 12], [1, 2, 3]) == "reproduces"
    assert verdict([1, 2, 3], [10, 11, 12]) == "contradicts"
    assert verdict([1, 5, 9], [2, 5, 8]) == "inconclusive"
    assert verdict([1, 2, 3], [10, 11, 12], higher_is_better=False) == "reproduces"
    assert verdict([3.0], [2.0]) == "better (1 seed)"
    assert verdict([], [1.0]) == "no data"
