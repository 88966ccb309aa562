"""The learning targets: the hyperbolic bases have their own rows, and what a headline hyperbolic
fine-tune keeps of its base is the median of run ÷ base, each run over its own seed's base."""

from __future__ import annotations

import json
import statistics

import pytest

from paperlib.study import targets
from paperlib.study.decide import summary_table
from paperlib.study.reader import PRETRAIN_HYPERBOLIC, results_dir, slug
from paperlib.study.scales import SCALES


def _accuracy(variant: str, seed: int, level: str) -> float:
    """A run's zero-shot accuracy as its benchmark file states it (not its items.npz)."""
    path = results_dir("full") / "argent" / slug(variant) / f"seed{seed}"
    return json.loads((path / f"world-zeroshot-{level}.json").read_text())["metrics"]["acc1"]


@pytest.mark.parametrize("variant", ["HyCoCLIP", "ARGENT"])
def test_kept_of_base_is_each_runs_share_of_its_own_base(variant):
    scale = SCALES["full"]
    runs = [{"study": "argent", "variant": variant, "seed": s} for s in scale.seeds]
    runs.append({"study": "argent", "variant": variant, "seed": 99, "collapsed": "no spread"})
    bases = [{"study": "argent", "variant": PRETRAIN_HYPERBOLIC, "seed": b} for b in scale.bases]
    assert all(r["values"] == [] for r in targets.kept_of_base("full", runs))  # no base: no share
    runs += bases
    rows = {r["metric"]: r for r in targets.kept_of_base("full", runs) if r["variant"] == variant}
    for level in ("L1", "L3"):
        row = rows[f"world-zeroshot/{level}_correct"]
        expected = [
            _accuracy(variant, s, level) / _accuracy(PRETRAIN_HYPERBOLIC, s % 2, level)
            for s in scale.seeds
        ]  # the two bases alternate over the seeds
        assert row["values"] == pytest.approx(expected, abs=1e-6)  # the collapsed run left out
        assert row["median"] == pytest.approx(statistics.median(expected), abs=1e-6)
        assert row["met"] == (row["median"] >= 0.9) and row["of_base"] == PRETRAIN_HYPERBOLIC


def test_the_summary_table_names_a_share_of_the_base():
    rows = [
        {"study": "argent", "variant": "ARGENT", "metric": "world-zeroshot/L3_correct",
         "target": 0.9, "median": 0.897, "values": [], "runs": 8, "met": False,
         "of_base": PRETRAIN_HYPERBOLIC},
        {"study": "argent", "variant": PRETRAIN_HYPERBOLIC, "metric": "world-zeroshot/L3_correct",
         "target": 0.3, "median": 0.2855, "values": [], "runs": 2, "met": False},
    ]  # fmt: skip
    table = summary_table({"claims": [], "targets": rows})
    assert (f"| world-zeroshot/L3_correct of ARGENT, as a share of its base's "
            f"({PRETRAIN_HYPERBOLIC}) | 8 | 0.897 | ≥ 0.9 | no |") in table  # fmt: skip
    assert (
        f"| world-zeroshot/L3_correct of {PRETRAIN_HYPERBOLIC} | 2 | 0.285 | ≥ 0.3 | no |" in table
    )


def test_the_hyperbolic_bases_have_their_own_targets():
    rows = {(v, item) for study, v, item, _ in targets.TARGETS if study == "argent"}
    for item in ("world-zeroshot/L1_correct", "world-zeroshot/L3_correct"):
        assert (PRETRAIN_HYPERBOLIC, item) in rows


def test_the_base_plateaus_are_the_current_rule_on_their_recorded_curves():
    """Each base's plateau is decided anew from the curve ``bases.json`` records (the record's
    own ``reached`` was written by an earlier rule), by ``tables.plateau`` with no δ, written
    out here: a least-squares slope over the last 40 % of the curve, still rising where its
    gain's 95 % interval lies above 0."""
    from paperlib.study.pretrain import GEOMETRIES, bases_dir
    from paperlib.tables.plateau import plateau_check

    found = targets.base_plateaus()
    for geometry in GEOMETRIES:
        record = json.loads((bases_dir(geometry) / "bases.json").read_text())["bases"]
        rows = [r for r in found if r["geometry"] == geometry]
        assert [(r["model"], r["base"]) for r in rows] == [(b["model"], b["base"]) for b in record]
        for row, base in zip(rows, record):
            assert set(row) - {"geometry", "model", "base"} == set(base["plateau"])
            for metric in base["plateau"]:
                points = [(p["step"], p["value"]) for p in base["validation"][metric]]
                now = plateau_check(points, base["val_size"], metric)  # no δ: against 0
                assert row[metric] is now.reached, (geometry, base["model"], metric)
                window = [v for s, v in points if s >= 0.6 * points[-1][0]]
                assert now.reached or window[-1] > window[0]  # a rise is a rise on the curve
