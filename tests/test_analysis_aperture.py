"""The records tutorial 03 reads (paperlib.analysis.aperture), and the papers' rows tutorial 05
sets beside the study (paperlib.analysis.published), against values built by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from paperlib.analysis import aperture as A
from paperlib.analysis.published import beside_paper, paper_rows
from paperlib.study.plan.claims import CLAIMS
from paperlib.tables import published_table


def test_track_merges_a_step_s_records_and_keeps_steps_holding_every_key():
    log = [{"step": 100, "curv": 0.9, "loss": 1.0}, {"step": 400, "curv": 0.7},
           {"step": 400, "diag/x": 0.2}, {"step": 800, "curv": 0.5, "diag/x": 0.6},
           {"status": "finished"}]  # fmt: skip
    t = A.track(log, ("curv", "diag/x"))
    assert t.steps.tolist() == [400, 800] and t.values["diag/x"].tolist() == [0.2, 0.6]
    assert (t.first("curv"), t.last("curv")) == (0.7, 0.5)
    assert t.first_step("diag/x", 0.5) == 800 and t.first_step("curv", 0.4, above=False) is None
    with pytest.raises(ValueError, match="no logged step holds"):
        A.track(log, ("missing",))


def test_the_curvature_floor_is_the_model_s_clamp():
    assert A.curvature_floor() == pytest.approx(0.1) and A.curvature_floor(2.0) == pytest.approx(
        0.2
    )
    assert A.at_floor(0.09999999403953552) and not A.at_floor(0.102)


def test_seed_mean_is_a_t_interval_clipped_to_the_range():
    values = [0.1, 0.3, 0.2, 0.25]
    m = A.seed_mean(values)
    half = stats.t.ppf(0.975, 3) * np.std(values, ddof=1) / 2
    assert m.mean == pytest.approx(0.2125) and m.high == pytest.approx(0.2125 + half)
    assert A.seed_mean([0.0, 0.02, 0.0], (0, 1)).low == 0
    one = A.seed_mean([0.5])
    assert (one.low, one.high, one.n) == (None, None, 1)
    d = A.paired_difference({0: 1.0, 1: 2.0, 2: 5.0}, {0: 0.5, 1: 1.0, 3: 9.0})
    assert d.values == (0.5, 1.0)  # the shared seeds only
    with pytest.raises(ValueError):
        A.paired_difference({0: 1.0}, {1: 1.0})


def test_probe_arms_read_the_record_and_the_curvature_at_a_step():
    record = {"arms": {"X": {
        "curve": [{"step": 0, "inside_short": 0.0, "norm_short": 1.4},
                  {"step": 400, "inside_short": 0.5, "norm_short": 0.6}],
        "training": [{"step": 100, "curv": 0.9}, {"step": 300, "curv": 0.5}, {"step": 350}],
    }}}  # fmt: skip
    arm = A.probe_arms(record)["X"]
    assert arm.inside.tolist() == [0.0, 0.5] and arm.curv_steps.tolist() == [100, 300]
    assert (arm.curv_at(50), arm.curv_at(299), arm.curv_at(1000)) == (0.9, 0.9, 0.5)


def test_ray_balance_finds_the_sign_change_and_the_active_hinge():
    norms = np.linspace(0.1, 1.0, 10)
    hinge = np.where(norms > 0.45, norms - 0.45, 0.0)
    slopes = {"hinge": np.where(hinge > 0, 1.0, 0.0), "huber": np.full(10, 0.2),
              "reg": 2 * norms - 1 / norms}  # fmt: skip
    found = A.ray_balance(norms, hinge, slopes, 0.6)
    total = slopes["huber"] + slopes["reg"]
    assert found["stationary"] == norms[np.flatnonzero(total[:-1] * total[1:] < 0)[0]]
    assert (
        found["hinge_from"] == pytest.approx(0.5) and found["meru_inward"] and found["ada_inward"]
    )
    none = A.ray_balance(norms, np.zeros(10), {**slopes, "reg": np.ones(10)}, 0.6)
    assert math.isnan(none["hinge_from"]) and math.isnan(none["stationary"])


def test_last_values_are_each_seed_s_last_point():
    curves = [{"variant": "A", "seed": 0, "metric": "m", "points": [{"value": 1}, {"value": 2}]},
              {"variant": "A", "seed": 1, "metric": "m", "points": [{"value": 3}]},
              {"variant": "B", "seed": 0, "metric": "m", "points": [{"value": 9}]}]  # fmt: skip
    assert A.last_values(curves, "A", "m") == {0: 2.0, 1: 3.0}


def _published(table: str, select: dict, *path: str) -> float:
    rows, _ = published_table(table)
    (row,) = [r for r in rows if all(r.get(k) == v for k, v in select.items())]
    for key in path:
        row = row[key]
    return row


def test_paper_rows_are_the_published_numbers_of_both_arms():
    rows = paper_rows(CLAIMS)
    h2 = rows["himo-h2-vs-longclip"]
    assert h2["variant"] == (
        "HiMo L/14",
        _published("himo_monotonicity", {"model": "HiMo", "arch": "L/14"}, "himo@2", "avg"),
    )
    assert h2["baseline"][1] == _published(
        "himo_monotonicity", {"model": "Long-CLIP", "arch": "L/14"}, "himo@2", "avg"
    )
    ssi = rows["himo-ssi-vs-longclip"]  # lower is better: the variant's own value, not flipped
    assert ssi["variant"][1] == pytest.approx(_published("himo_ssi", {"model": "HiMo"}, "ssi"))
    long = rows["himo-long-i2t-vs-longclip"]
    sets = ("Urban1k", "DOCCI", "Long-DCI")
    mean = np.mean(
        [_published("himo_retrieval", {"model": "HiMo", "arch": "L/14"}, s, "i2t_r1") for s in sets]
    )
    assert (
        long["variant"][1] == pytest.approx(mean)
        and long["metric"] == "i2t_r1, mean of Urban1k, DOCCI, Long-DCI"
    )
    assert not rows["argent-t2i-vs-hycoclip"]["same_units"]  # R@1 here, R@5 there
    assert "himo-h2-vs-infonce" not in rows  # the paper prints no InfoNCE (λ=0) row  # fmt: skip


def test_beside_paper_shows_both_arms_with_their_intervals():
    value = {"mean": 0.5, "interval": [0.4, 0.6]}
    claims = [{"claim": "himo-h2-vs-longclip", "variant": "MoLo", "baseline": "Long-CLIP",
               "variant_value": value, "baseline_value": None, "shown": "HiMo@2, % of captions",
               "shown_scale": 100, "verdict": "negligible"},
              {"claim": "not-published", "variant": "X", "baseline": "Y"}]  # fmt: skip
    frame = beside_paper(claims, paper_rows(CLAIMS))
    assert frame.index.tolist() == ["himo-h2-vs-longclip"]
    row = frame.iloc[0]
    assert row["here: variant"] == "MoLo 50 [40, 60]" and row["here: baseline"] == "Long-CLIP –"
    assert row["paper: variant"] == "HiMo L/14 97.9" and row["verdict"] == "negligible"
