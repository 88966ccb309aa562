"""The tutorials' readings say what their numbers say: each word that states a direction or a
comparison is checked against numbers built to fall on one side or the other, and each number
a sentence prints against the value it was given."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from paperlib.analysis.aperture import (
    APERTURE,
    CAPTION_NORM,
    CAPTIONS_INSIDE,
    RADIUS,
    ProbeArm,
    Track,
    paired_difference,
    seed_mean,
)
from paperlib.analysis.components import FACTORS
from paperlib.analysis.hyperbolic import LEVEL_NAMES, Layout, LevelNorms
from paperlib.analysis.readings import (
    aperture,
    findings,
    hide,
    horopca,
    monotonicity,
    papers,
    quickstart,
    stand_in,
)
from paperlib.analysis.readings.words import (
    Reading,
    interval_text,
    listing,
    span,
    summary,
    verb,
    who,
)
from paperlib.study.plan.plateau import plateau_check

BASE = "pre-trained"
TOWERS = [BASE, "InfoNCE (λ=0)", "Long-CLIP", "MoLo"]

# ------------------------------------------------------------------ words


def test_span_listing_verb_and_interval_text():
    assert span([0.61, 0.92]) == "0.61–0.92"
    assert span([-0.63, -0.39], "+.2f") == "-0.63 to -0.39"
    assert span([0.5, 0.5004]) == "0.50"  # both ends print alike: one value
    assert span([-0.001, 0.06], "+.2f") == "+0.00 to +0.06"  # no "-0.00"
    assert span([3, 7], "d") == "3–7"
    assert listing([]) == "" and listing(["a"]) == "a" and listing("abc") == "a, b and c"
    assert verb(["a", "b"], "abc", "rises", "rise") == "rise"
    assert verb(list("abc"), "abc", "rises", "rise") == "rises"  # "every model rises"
    assert who(list("ab"), "ab") == "every model" and who([], "ab", "no arm") == "no arm"
    assert who(list("ab"), "ab", all_="every arm") == "every arm" and who(["a"], "ab") == "a"
    assert interval_text(None) == "–"
    assert interval_text({"mean": 0.5, "interval": [0.25, 0.75]}) == "+0.500 [+0.250, +0.750]"
    text = summary([Reading("a", "one."), Reading("b"), Reading("c", "two.")])
    assert text.text == "- one.\n- two." and text._repr_markdown_() == text.text


# ------------------------------------------------------------------ tutorial 01


def _cumulative(shares):
    return np.cumsum(np.asarray(shares, dtype=float))


def _counts(kept_at_tau, base_most=4):
    return {0.5: dict.fromkeys(TOWERS, 1), 0.9: kept_at_tau, 0.99: dict.fromkeys(TOWERS, base_most)}


def test_spectrum_reads_where_the_fine_tuned_curves_lie():
    steep = [0.6, 0.3, 0.07, 0.03]
    flat = [0.4, 0.3, 0.2, 0.1]
    below = {BASE: _cumulative(steep)} | {t: _cumulative(flat) for t in TOWERS[1:]}
    kept = {BASE: 2, "InfoNCE (λ=0)": 3, "Long-CLIP": 3, "MoLo": 4}
    reading = hide.spectrum(_counts(kept), below, 0.9, BASE, 100)
    assert "lie below the pre-trained tower's at every m from 1 to 4" in reading.text
    assert "spreads the variance over more directions" in reading.point
    assert "3 (InfoNCE (λ=0)), 3 (Long-CLIP), 4 (MoLo) directions" in reading.text
    above = {BASE: _cumulative(flat)} | {t: _cumulative(steep) for t in TOWERS[1:]}
    reading = hide.spectrum(_counts(dict.fromkeys(TOWERS, 2)), above, 0.9, BASE, 100)
    assert "concentrates the variance in fewer directions" in reading.text
    crossing = dict(below) | {"MoLo": _cumulative([0.7, 0.1, 0.1, 0.1])}
    reading = hide.spectrum(_counts(kept), crossing, 0.9, BASE, 100)
    assert "neither concentrates nor spreads" in reading.text
    assert "MoLo at 3" in reading.text  # below the base at m = 2, 3 and 4 of 1–4


def _eta(leading, background_from=None, shown=4):
    """(factors, components) η² tables: the first ``leading`` components explained by the
    super-category, from ``background_from`` on by the background."""
    table = np.full((len(FACTORS), shown), 0.05)
    table[FACTORS.index("super-category"), :leading] = 0.8
    if background_from is not None:
        table[FACTORS.index("background"), background_from:] = 0.7
    return table


def test_components_reads_the_leading_and_the_background_components():
    from paperlib.analysis.components import followed_factor

    eta = {BASE: _eta(2)} | {t: _eta(2, 2) for t in TOWERS[1:]}
    followed = {label: [followed_factor(c) for c in t.T] for label, t in eta.items()}
    reading = hide.components(eta, followed, FACTORS, BASE)
    assert reading.text.startswith("In all 4 towers PC1–PC2 follow the taxonomy")
    assert "PC3–PC4 in InfoNCE (λ=0), Long-CLIP and MoLo (η² 0.70)" in reading.text
    assert "none of the first 4 components of the pre-trained tower" in reading.text
    assert "in the fine-tuned towers, the background colour" in reading.text
    eta = dict.fromkeys(TOWERS, _eta(1))
    followed = {label: [followed_factor(c) for c in t.T] for label, t in eta.items()}
    reading = hide.components(eta, followed, FACTORS, BASE)
    assert "no component among the first 4 of any tower follows the background" in reading.text
    assert "leads none of the first 4 components" in reading.point
    eta = dict.fromkeys(TOWERS, _eta(0))
    followed = {label: [followed_factor(c) for c in t.T] for label, t in eta.items()}
    assert "do not follow" in hide.components(eta, followed, FACTORS, BASE).point


def test_kept_dropped_sorts_factors_by_the_part_that_holds_them():
    kept = pd.DataFrame({"a": [0.8, 0.7], "b": [0.05, 0.04], "c": [0.3, 0.05], "d": [0.01] * 2},
                        index=["X", "Y"])  # fmt: skip
    dropped = pd.DataFrame({"a": [0.1, 0.1], "b": [0.3, 0.2], "c": [0.1, 0.2], "d": [0.02] * 2},
                           index=["X", "Y"])  # fmt: skip
    reading = hide.kept_dropped(kept, dropped, {"X": 0.95, "Y": 0.97}, 0.9, 0.08)
    assert "keeps a (η² 0.70–0.80 of the kept part" in reading.text
    assert "drops b (η² 0.20–0.30 of the dropped part" in reading.text
    assert "c sits in the kept part of the X tower and in the dropped part of the Y tower" in (
        reading.text
    )
    assert " d " not in reading.text  # under a tenth in both parts: left out
    assert "0.080 of its batch's variance, at most 1 − τ = 0.10" in reading.text
    assert "more than 1 − τ" in hide.kept_dropped(kept, dropped, {"X": 1.0}, 0.9, 0.2).text


def _content(category, noise=0.02, others=0.0):
    difference = pd.DataFrame({"category": category, "sub-category": category,
                               "background": [others] * len(category)})  # fmt: skip
    return difference, pd.Series({"category": noise, "sub-category": noise, "background": noise})


@pytest.mark.parametrize(
    ("category", "words"),
    [
        ([0.1, 0.2], "as the paper expects"),
        ([-0.1, -0.2], "the opposite of the paper's expectation"),
        ([0.1, -0.2], "mixed, not the consistent gain"),
        ([0.1, 0.01], "only partly as the paper expects"),
        ([0.01, -0.01], "not the gain the paper expects"),
    ],
)
def test_batch_content_reads_clear_differences_against_the_noise(category, words):
    difference, noise = _content(category)
    angles = {"g": np.array([40.0, 50.0]), "h": np.array([30.0, 40.0])}
    reading = hide.batch_content(difference, noise, ["category", "sub-category"], angles,
                                 np.array([10.0, 12.0, 14.0]), 70.0)  # fmt: skip
    assert words in reading.text and words in reading.point
    assert "None of the other factors differs clearly" in reading.text
    assert "moves the kept directions beyond sampling" in reading.text  # 35 > 12 + 2 × 2
    assert "35.0–45.0°, against 12.0° (s.d. 2.0°)" in reading.text


def test_batch_content_reads_angles_within_sampling_and_other_factors():
    difference, noise = _content([0.1, 0.2], others=0.3)
    close = {"g": np.array([11.0, 13.0])}
    reading = hide.batch_content(difference, noise, ["category"], close, np.array([10.0, 14.0]), 70)
    assert "no more than sampling does" in reading.text
    assert "those that differ clearly in some batch: sub-category" in reading.text


def _sweep(first, last, m_small=3, m_ref=5):
    return {"sizes": np.array([8, 64]), "m": np.array([[m_small] * 3, [m_ref] * 3]),
            "angle": np.array([first, last]), "m_ref": np.array(m_ref)}  # fmt: skip


def test_batch_size_reads_a_fall_beyond_its_standard_error():
    falls = {
        "A": _sweep([40.0, 41, 42], [10.0, 11, 12]),
        "B": _sweep([35.0, 36, 37], [9.0, 10, 11]),
    }
    reading = hide.batch_size(falls, 128)
    assert "in every tower the mean angle between two disjoint sub-batches falls" in reading.text
    assert "from 36.0–41.0° at N = 8 to 10.0–11.0° at N = 64" in reading.text
    assert "fewer in every tower" in reading.text and "as the paper's" in reading.point
    noisy = falls | {"B": _sweep([30.0, 10, 50], [20.0, 40, 30])}
    reading = hide.batch_size(noisy, 128)
    assert "falls clearly in A" in reading.text
    assert "does not stabilise the components in every tower" in reading.point


# ------------------------------------------------------------------ tutorial 02


def test_argument_reads_the_crossing_and_the_published_sign():
    reading = monotonicity.argument(1.0, 1963, 0.7, True, {"Long-CLIP": -0.55})
    assert "100.0 % of 1963 random draws" in reading.text
    assert "exceeds h = 0.70, exactly where the margin turns negative" in reading.text
    assert "(-0.55, below 0), something fine-tuning" in reading.text
    reading = monotonicity.argument(0.99, 10, 0.7, False, {"Long-CLIP": 0.2})
    assert "not exactly where" in reading.text and "is not below 0" in reading.text


def test_full_vs_component_reads_whether_the_ordering_comes_from_molo():
    share = {BASE: 95.0, "InfoNCE (λ=0)": 99.0, "Long-CLIP": 99.7, "MoLo": 95.7}
    median = dict.fromkeys(share, 0.1)
    reading = monotonicity.full_vs_component(share, median, [BASE, "InfoNCE (λ=0)"])
    assert reading.text.startswith("At seed 0 every model ranks the full caption above")
    assert "-3.3 points" in reading.text and "does not come from MoLo's component term" in (
        reading.text
    )
    share |= {BASE: 40.0, "MoLo": 99.5}
    reading = monotonicity.full_vs_component(share, median, [BASE, "InfoNCE (λ=0)"])
    assert "InfoNCE (λ=0), Long-CLIP and MoLo rank" in reading.text
    assert "+0.5 points" in reading.text and "not a tested claim" in reading.text


def _scores(rise, noise=0.01, n=50, k=4, dip=False, seed=0):
    rng = np.random.default_rng(seed)
    steps = np.linspace(0, rise, k) + (np.array([0, 0.1, 0.0, 0.0])[:k] * dip)
    return 0.4 + steps + noise * rng.normal(size=(n, k))


def test_prefix_curves_reads_rises_dips_and_the_cut():
    fixed = {"A": _scores(0.2), "B": _scores(0.2, dip=True), "C": _scores(0.0, noise=0.05)}
    alike, prefixes = np.array([6] * 30 + [9] * 20), np.array([9] * 30 + [10] * 20)
    reading = monotonicity.prefix_curves(fixed, alike, prefixes, 77, "A")
    assert "the mean score of A and B rises from the first sentence to the 4th" in reading.text
    assert "falls from k = 2 to 3 in B" in reading.text
    assert "for 50 of the 50 captions every prefix from prefix 6–9 (by caption)" in reading.text
    uncut = monotonicity.prefix_curves(fixed, prefixes, prefixes, 248, "A")
    assert "cut" not in uncut.text.split("standard errors", 1)[1]
    falling = {"A": _scores(-0.2)}
    assert (
        "the mean score of no model rises"
        in monotonicity.prefix_curves(falling, prefixes, prefixes, 77, "A").text
    )


def test_himo_k_reads_each_model_against_chance():
    rhos = {"A": np.array([0.5, 0.6, 0.7, -0.1]), "B": np.array([0.4, -0.4, 0.5, -0.5])}
    reading = monotonicity.himo_k(rhos, 0.0)
    assert "the HiMo@K of A lies above its chance level 0" in reading.text
    assert "A +0.42 ± 0.18, 25 % of images with ρ < 0" in reading.text
    assert "every model has images whose scores fall" in reading.text


def test_k10_case_compares_the_median_largest_falls():
    rows = {"share with ≥ 1 fall": [1.0, 0.9], "share rising overall (ρ > 0)": [1.0, 0.9]}
    summary_k10 = pd.DataFrame(rows | {"median largest fall": [0.04, 0.04]}, index=["MoLo", "X"])
    assert "not the much larger falls" in monotonicity.k10_case(summary_k10).text
    summary_k10["median largest fall"] = [0.01, 0.03]
    assert "3.00 times MoLo's: much larger" in monotonicity.k10_case(summary_k10).text


def test_takeaway_reads_the_short_caption_tower_and_the_tally():
    values = {BASE: {"mean": 0.3, "interval": [0.25, 0.35], "seeds": [0, 1]},
              "MoLo": {"mean": 0.5, "interval": [0.45, 0.55], "seeds": [0, 1]}}  # fmt: skip
    tally = {"negligible": 3, "contradicts": 0}
    reading = monotonicity.takeaway(values, 0.0, BASE, _scores(0.2), tally, "contradicts")
    assert "Within the 4 prefixes it reads in full" in reading.text
    assert "scores rise with added text" in reading.text
    assert "+0.300 [+0.250, +0.350], above its chance level 0" in reading.text
    assert "every model's HiMo@K interval lies above chance" in reading.text
    assert reading.text.endswith("none of the 3 monotonicity verdicts contradict the paper.")
    values["MoLo"]["interval"] = [-0.1, 0.2]
    tally["contradicts"] = 1
    reading = monotonicity.takeaway(
        values, 0.0, BASE, _scores(0.0, noise=0.1), tally, "contradicts"
    )
    assert "show no change beyond 2 standard errors" in reading.text
    assert "every model" not in reading.text and "1 of the 4 monotonicity verdicts contradicts" in (
        reading.text
    )


# ------------------------------------------------------------------ tutorial 00


def test_base_training_reads_the_current_plateau_rule():
    steps = list(range(0, 1001, 100))
    flat = plateau_check([(s, 0.9) for s in steps], 1000, "zeroshot_L1")
    rising = plateau_check([(s, 0.5 + s / 2000) for s in steps], 1000, "short_i2t_r1")
    reading = quickstart.base_training(0, "results/bases/x.pt", 1000, {"a": flat, "b": rising})
    assert "(steps 600–1,000, 5 points) the plateau rule finds" in reading.text
    assert "zero-shot accuracy over the super-categories is flat (+0.000" in reading.text
    assert "which includes 0" in reading.text
    assert "short-caption image→text R@1 is still rising (+0.100" in reading.text
    assert "wholly above 0)" in reading.text


def test_similarity_and_common_component():
    table = pd.DataFrame({"shown own": [1, 6], "held-out own": [0.005, 1.0], "min": [-0.1, -0.9],
                          "max": [0.2, 0.97]}, index=["untrained", "base 0"])  # fmt: skip
    reading = quickstart.similarity(table, 6, 200)
    assert "untrained: 1 of the 6 shown images and 0.5% of the 200 held-out ones" in reading.text
    assert "chance is 1 in 6 among the shown, 0.5% among all" in reading.text
    keys = (
        "image–image cosine",
        "caption–caption cosine",
        quickstart.PICKS_MEAN,
        quickstart.PICKS_OWN,
    )
    before = dict(zip(keys, (0.9999, 0.55, 1.0, 0.005)))
    after = dict(zip(keys, (0.01, 0.6, 0.005, 1.0)))
    shown = {"picked": 6, "images": 6, "column": 5}
    reading = quickstart.common_component(before, after, 200, shown)
    assert "sits mostly in the image features" in reading.text
    assert "Pre-training spreads the image features (mean cosine 0.9999 → 0.0100), but not " in (
        reading.text
    )
    assert "6 of the 6 shown images pick caption 5" in reading.text
    after[keys[1]] = 0.01
    assert "spreads the image features (mean cosine 0.9999 → 0.0100) and the caption" in (
        quickstart.common_component(before, after, 200, shown).text
    )
    before = dict(zip(keys, (0.3, 0.6, 0.2, 0.1)))
    assert "in the caption features" in quickstart.common_component(before, after, 200, shown).text


# ------------------------------------------------------------------ tutorial 03


def _track(**series):
    steps = np.arange(1, len(next(iter(series.values()))) + 1) * 400
    return Track(steps, {k: np.asarray(v, dtype=float) for k, v in series.items()})


def _base(curv, norm, inside, aperture, entailment):
    radius = [0.2 / c**0.5 for c in curv]
    return _track(**{"curv": curv, CAPTION_NORM: norm, RADIUS: radius, CAPTIONS_INSIDE: inside,
                     APERTURE: aperture, "entailment": entailment})  # fmt: skip


def test_pretraining_reads_the_failure_and_the_curvature_at_its_clamp():
    failed = {
        "base 0": _base(
            [0.75, 0.3, 0.1, 0.1],
            [1.3, 0.9, 0.6, 0.6],
            [0, 0.2, 0.9, 0.99],
            [0.17, 0.5, 1.5, 1.56],
            [1.4, 0.4, 0.01, 0.0],
        ),  # fmt: skip
        "base 1": _base(
            [0.75, 0.3, 0.1, 0.1],
            [1.4, 0.9, 0.6, 0.61],
            [0, 0.1, 0.8, 0.98],
            [0.18, 0.5, 1.5, 1.56],
            [1.44, 0.4, 0.01, 0.0],
        ),  # fmt: skip
    }
    reading = aperture.pretraining(failed, 0.1, 1600)
    assert "the learned curvature falls from 0.75 to 0.10 — its lower clamp c₀/10 = 0.1" in (
        reading.text
    )
    assert "reached at step 1,200 and held to the end" in reading.text
    assert "caption norm falls from 1.30–1.40 to 0.60–0.61" in reading.text
    assert "radius 2K/√c, set by the curvature alone, grows from 0.23 to 0.63" in reading.text
    assert "inside the radius rises from 0% to 98%–99% (past half from step 1,200)" in reading.text
    assert "the failure ARGENT describes" in reading.text and "aperture failure" in reading.point
    held = {"base 0": _base([0.75, 0.5], [1.3, 1.2], [0, 0.1], [0.17, 0.2], [1.4, 1.0])}
    reading = aperture.pretraining(held, 0.1, 800)
    assert "falls from 0.75 to 0.50, above its lower clamp 0.1" in reading.text
    assert "the failure does not show here" in reading.text and "past half" not in reading.text


def test_gradient_reads_the_peaks_and_the_zero_inside():
    peaks = {"exact": 5e4, "MERU": 1.4e4, "ours": 350.0}
    reading = aperture.gradient(peaks, 0.0, -0.5, 0.2, 1.0)
    assert "(‖x‖ − r₀)^-0.50" in reading.text and "40 times lower" in reading.text
    assert "exactly zero" in reading.text and "none on the other" in reading.text
    assert "at most 1e-05" in aperture.gradient(peaks, 1e-5, -0.5, 0.2, 1.0).text


def _balance(r0, stationary, hinge_from=0.2, meru=True, ada=True):
    return {"r0": r0, "stationary": stationary, "hinge_from": hinge_from, "meru_inward": meru,
            "ada_inward": ada}  # fmt: skip


def test_ray_reads_the_balance_against_the_radius_at_each_curvature():
    balance = {0.1: _balance(0.632, 0.41), 1.0: _balance(0.2, 0.408)}
    text = aperture.ray(balance, 0.1, 1.0).text
    assert "balances at ‖x‖ ≈ 0.410, inside the radius 0.632" in text
    assert "the same balance lies at 0.408, outside its radius 0.200" in text
    assert "positive wherever it is active and zero elsewhere" in text
    balance = {0.1: _balance(0.632, float("nan"), float("nan"), ada=False), 1.0: _balance(0.2, 0.5)}
    text = aperture.ray(balance, 0.1, 1.0).text
    assert "no balance point" in text and "zero at every norm" in text
    assert "does not push it in everywhere" in text


def _probe(inside, norm, curv):
    steps = np.arange(len(inside)) * 400
    return ProbeArm(steps, np.array(inside), np.array(norm), np.arange(1, len(curv) + 1) * 100,
                    np.array(curv))  # fmt: skip


def test_probe_reads_when_captions_fall_inside_and_says_one_seed_is_no_difference():
    arms = {
        "HyCoCLIP": _probe([0, 0, 0, 0.98, 1.0], [1.4, 0.9, 0.7, 0.38, 0.4], [0.9, 0.5, 0.12, 0.1]),
        "ARGENT": _probe([0, 0, 0, 0, 0], [1.4, 0.9, 0.8, 0.75, 0.74], [0.9, 0.5, 0.3, 0.2]),
    }
    reading = aperture.probe(arms, 300, 0.1, 1000)
    assert "HyCoCLIP's is 0% up to step 800 and 98.0%–100.0% from step 1,200 on" in reading.text
    assert "ARGENT's is 0 at every validation (mean caption norm 0.74–0.90)" in reading.text
    assert "(HyCoCLIP from step 400 and ARGENT never)" in reading.text
    assert "it is 0.120 (HyCoCLIP) and 0.300 (ARGENT), above the clamp" in reading.text
    assert "no difference between the arms is established" in reading.text
    assert "HyCoCLIP most from step 1,200 on; ARGENT none at any validation" in reading.point
    dips = {"A": _probe([0, 0.6, 0.2], [1.0, 0.5, 0.6], [0.5])}
    assert "reaches at most 60.0%" in aperture.probe(dips, 100, 0.1, 10).text


def test_study_runs_read_levels_with_their_intervals_and_no_difference_without_one():
    rows = {
        "HyCoCLIP": {"curv": seed_mean([0.1, 0.1, 0.1]), "inside": seed_mean([0.9, 0.95, 0.97]),
                     "norm": seed_mean([0.4, 0.42, 0.41])},
        "ARGENT": {"curv": seed_mean([0.12, 0.13, 0.11]), "inside": seed_mean([0.0, 0.01, 0.0], (0, 1)),
                   "norm": seed_mean([0.75, 0.74, 0.76])},
    }  # fmt: skip
    diff = paired_difference({0: 0.70, 1: 0.71, 2: 0.72}, {0: 0.75, 1: 0.755, 2: 0.765})
    reading = aperture.study_runs(rows, 2800, 0.1, ("no reg", "with reg", diff), "full")
    assert reading.text.startswith(
        "In the full study's runs at the last validation (step 2,800; over each arm's seeds"
    )
    assert "the learned curvature of HyCoCLIP sits at its clamp 0.1 in every seed" in reading.text
    assert "the others end at ARGENT 0.120 [" in reading.text
    assert (
        "HyCoCLIP leaves most held-out captions inside 2K/√c; ARGENT keeps most held-out "
        "captions outside." in reading.text
    )
    assert "no reg ends with a held-out caption norm -0.047 [" in reading.text
    assert "(paired over 3 seeds): lower, as the ray of section 4 predicts" in reading.text
    assert reading.point.startswith("In the full study's runs (step 2,800; over each arm's seeds")
    noisy = paired_difference({0: 0.70, 1: 0.80}, {0: 0.75, 1: 0.74})
    assert "the interval holds 0: no difference is read" in (
        aperture.study_runs(rows, 2800, 0.1, ("a", "b", noisy), "full").text
    )
    one = paired_difference({0: 0.9}, {0: 0.75})
    assert "(paired over 1 seed): one seed gives no interval, so no difference is read" in (
        aperture.study_runs(rows, 2800, 0.1, ("a", "b", one), "full").text
    )


def test_study_runs_on_one_seed_say_so_once_and_agree_with_every_arm():
    one = {
        arm: {"curv": seed_mean([c]), "inside": seed_mean([0.0]), "norm": seed_mean([1.2])}
        for arm, c in (("MERU", 0.99), ("ARGENT", 0.98))
    }
    assert not aperture.has_intervals(one)
    reading = aperture.study_runs(one, 20, 0.1, None, "smoke")
    assert "(step 20; one seed per arm, no interval)" in reading.text
    assert "no interval)" not in reading.text.split("no interval)", 1)[1]  # said once
    assert "no arm's curvature has reached its clamp 0.1; they end at MERU 0.990 and ARGENT" in (
        reading.text
    )
    assert "Every arm keeps most held-out captions outside." in reading.text
    assert reading.point.endswith("every arm keeps most held-out captions outside.")
    mixed = {**one, "HyCoCLIP": {**one["MERU"], "inside": seed_mean([0.9])}}
    assert "HyCoCLIP leaves most held-out captions inside 2K/√c; MERU and ARGENT keep most" in (
        aperture.study_runs(mixed, 20, 0.1, None, "smoke").text
    )
    clamped = {a: {**r, "curv": seed_mean([0.1])} for a, r in one.items()}
    assert "the learned curvature of every arm sits at its clamp 0.1" in (
        aperture.study_runs(clamped, 20, 0.1, None, "smoke").text
    )
    assert aperture.has_intervals({"A": {"curv": seed_mean([0.1, 0.2])}})


def test_domain_and_adaent_read_their_numbers():
    assert "grows from 0.14 at c = 2 to 0.63 at c = 0.1" in (
        aperture.domain({0.1: 0.632, 1.0: 0.2, 2.0: 0.141}).text
    )
    reading = aperture.adaent(True, [0.95, 0.32], 0.63, 1.565, (0.0, 0.993), 5.0)
    assert "by the same amount for each parent norm tried (0.32, 0.95, inside and outside" in (
        reading.text
    )
    assert "unpenalised for every angle below 1.565 rad" in reading.text
    assert "rises from 0.00 for a duplicate to 0.99 at d_L = 5" in reading.text
    assert "depends on the parent norm" in aperture.adaent(False, [1.0], 0.6, 1.5, (0, 1), 5).text


# ------------------------------------------------------------------ tutorial 04


def _layout(tau, neighbours=0.6, chance=(0.3, 0.01)):
    return Layout({0: 0.1, 1: 0.2, 2: 0.3, 3: 0.4, 4: 0.5}, tau, neighbours, chance, 10)


def test_view_reads_the_radial_order_by_its_interval_and_neighbours_against_chance():
    layouts = {
        "A": _layout((0.3, 0.2, 0.4)),
        "B": _layout((-0.2, -0.3, -0.1), neighbours=0.31),
        "C": _layout((0.05, -0.02, 0.1)),
    }
    reading = horopca.view("HoroPCA", layouts)
    assert "the levels of A sit farther from O the more specific the level" in reading.text
    assert "the levels of B sit nearer O the more specific the level" in reading.text
    assert "the levels of C are not ordered by distance from O" in reading.text
    assert "A 0.10, 0.20, 0.30, 0.40, 0.50" in reading.text
    assert "A and C keep points of one level together beyond chance" in reading.text
    assert reading.point == "HoroPCA: A orders the levels outward from O."
    umap = horopca.view("UMAP", layouts)
    assert "its radial order is not evidence" in umap.text and umap.point.startswith(
        "UMAP: A and C"
    )


def test_sequence_and_norms_read_the_medians_with_the_tau_interval():
    assert horopca._sequence([0.6, 0.62, 0.65, 0.6, 0.7], horopca.SHORT) == (
        "rises from level 1 to level 3, falls to level 4 and rises to images"
    )
    quartiles = dict(zip(LEVEL_NAMES, [(0, m, 1) for m in (0.6, 0.62, 0.65, 0.6, 0.7)]))
    inside = {"captions": 0.9, **dict.fromkeys(LEVEL_NAMES, 0.9), "image": 0.2}
    levels = {
        "A": LevelNorms(quartiles, inside, (-0.5, -0.6, -0.4), (0.8, 0.03)),
        "B": LevelNorms(
            quartiles, {**inside, "captions": 0.1, "image": 0.0}, (0.05, -0.01, 0.1), (0.5, 0.05)
        ),  # fmt: skip
    }
    reading = horopca.norms(levels)
    assert "A 0.600, 0.620, 0.650, 0.600, images 0.700 (it rises from level 1 to level 3" in (
        reading.text
    )
    assert "A -0.50 [-0.60, -0.40] (more specific captions nearer the origin)" in reading.text
    assert "B +0.05 [-0.01, +0.10] (no order)" in reading.text
    assert "A 80% ± 3%, B 50% ± 5% of the images: A places images beyond" in reading.text
    assert "A: captions 90%, images 20%" in reading.text and "in A and B." in reading.text


def test_crops_and_distortions_read_their_intervals():
    d = {
        "A": {"near-full crop": 0.2, "object crop": 1.6},
        "B": {"near-full crop": 1.0, "object crop": 1.0},
    }
    h = {
        "A": {"near-full crop": 0.18, "object crop": 0.8},
        "B": {"near-full crop": 0.6, "object crop": 0.6},
    }
    reading = horopca.crops(d, h, {"A": (-1.4, -1.5, -1.3), "B": (0.0, -0.1, 0.1)})  # fmt: skip
    assert "Near-full crops sit nearer their image in A." in reading.text
    assert reading.point.startswith("Near-full crops sit nearer their image than object crops in A")
    table = {"A": {"HoroPCA": (0.5, 0.3), "tangent PCA": (0.6, 0.3), "UMAP": (10.0, 0.3)},
             "B": {"HoroPCA": (0.7, 0.3), "tangent PCA": (0.6, 0.3), "UMAP": (0.4, 0.3)}}  # fmt: skip
    reading = horopca.distortions(table)
    assert "better than tangent PCA for A and not for B" in reading.text
    assert "is not its scale alone" in reading.text


# ------------------------------------------------------------------ tutorial 05


def _claim(name, interval, better="higher"):
    return {"claim": name, "interval": interval, "better": better}


def test_beside_reads_each_row_by_its_paired_interval():
    claims = [_claim("a", [0.1, 0.2]), _claim("b", [-0.2, -0.1]), _claim("c", [-0.1, 0.1]),
              _claim("d", None), _claim("e", [-0.2, -0.1], "lower")]  # fmt: skip
    reading = papers.beside(claims, ["a", "b", "c", "d", "e"], "P")
    text = reading.text
    assert (
        reading.point
        == "P's table rows here: 2 of 5 on the paper's side by the paired interval, 1 on the other side."
    )
    assert "on each of these 5 rows" in text
    assert (
        "2 on the paper's side (`a`, `e`), 1 on the other side (`b`), 1 across 0 (`c`) and 1 "
        in (text)
    )


def test_beside_says_which_rows_have_not_run():
    claims = [_claim("a", [0.1, 0.2]), {**_claim("b", None), "verdict": "not run yet"},
              {**_claim("c", None), "verdict": "not run yet"}]  # fmt: skip
    reading = papers.beside(claims, ["a", "b", "c"], "P")
    assert "1 on the paper's side (`a`) and 2 with no interval, its runs not run yet" in (
        reading.text
    )
    assert reading.point == (
        "P's table rows here: 1 of 3 on the paper's side by the paired interval, 0 on the other "
        "side, 2 not run yet."
    )


def _regimed(study, paper, headline=True, steps=400, init="base"):
    regime = {"batch_size": 64, "steps": steps, "init": init, "model": "m"} if steps else None
    return {"study": study, "paper": paper, "headline": headline, "regime": regime,
            "paper_units": True, "item": "x/y"}  # fmt: skip


def test_scale_limits_name_each_study_s_regime_or_that_it_has_not_run():
    claims = [_regimed("himo", "H"), _regimed("himo", "A", steps=20),
              _regimed("argent", "A", steps=None)]  # fmt: skip
    reading = papers.scale_limits(claims, {"m": 8.46}, 32, 8, {"H": 1000, "A": 3000})
    assert "trained at H: batch 64 × 400 steps from a pre-trained base; A: not run yet." in (
        reading.text
    )
    assert "m (8.5M parameters) reading 32-pixel images" in reading.text
    assert "paired over 8 seeds and the same test items (1,000 for H and 3,000 for A)" in (
        reading.text
    )
    ran = [_regimed("himo", "H"), _regimed("argent", "A", steps=2800, init="random")]
    assert "A: batch 64 × 2,800 steps from random weights" in (
        papers.scale_limits(ran, {"m": 1.0}, 32, 1, {"H": 1}).text
    )


def _check(gain, se=0.02, metric="long_i2t_r1", study="himo"):
    return {"study": study, "metric": metric, "gain": gain, "standard_error": se,
            "steps": [400, 800]}  # fmt: skip


def test_schedule_reads_falls_as_falls():
    checks = [_check(-0.058), _check(-0.196), _check(-0.1), _check(-0.01, metric="zeroshot_L1"),
              _check(0.05, metric="zeroshot_L1")]  # fmt: skip
    reading = papers.schedule(checks)
    assert "At 2 times their steps" in reading.text
    assert "himo long_i2t_r1: of 3 checks 3 fall by 0.058–0.196" in reading.text
    assert "himo zeroshot_L1: of 2 checks 1 rise by 0.050 and 1 stays within" in reading.text
    assert "Every check of himo long_i2t_r1 falls: at this scale longer training hurts" in (
        reading.text
    )
    assert reading.point.startswith("Every check of himo long_i2t_r1 falls")
    assert "No metric falls in every check" in papers.schedule([_check(-0.01)]).text
    assert papers.schedule([]).text.startswith("No run of this study has trained at twice")


def test_targets_name_each_missed_one_with_its_runs():
    rows = [{"variant": "A", "metric": "m", "target": 0.3, "median": 0.27, "values": [0.25, 0.29],
             "met": False}, {"variant": "B", "metric": "m", "target": 0.3, "median": 0.4,
             "values": [0.4], "met": True}]  # fmt: skip
    assert papers.targets(rows).text == (
        "1 of the 2 learning targets is met; missed: A, m: median 0.270 (runs 0.250–0.290) "
        "against ≥ 0.3."
    )
    unrun = [{"variant": v, "metric": m, "target": 0.6, "median": None, "values": [], "met": False,
              "runs": 0} for v in ("C", "D, smaller") for m in ("m", "n")]  # fmt: skip
    invalid = {**rows[0], "median": None, "values": [], "runs": 2}
    assert papers.targets([*rows, invalid, *unrun]).text == (
        "1 of the 7 learning targets is met; missed: A, m: median 0.270 (runs 0.250–0.290) "
        "against ≥ 0.3; A, m: no valid run; 4 have no run yet, those of 2 arms (C; D, smaller)."
    )


def test_trend_reads_the_slopes_or_says_there_is_no_trend():
    assert papers.trend({}, []).text.startswith("No headline arm of this study trains at other")
    readings = {"c1": {"batch": "not estimable: no df", "length": "moves toward the paper: +0.2"}}
    claims = [{"trend": {"batch": [{"interval": [0, 1]}], "length": []}}]
    text = papers.trend(readings, claims).text
    assert text.startswith("Of the 2 slopes (1 headline claims × batch and length)")
    assert "tabulated above where its seeds give it an interval (1 settings)" in text
    assert "the per-setting tables are left out" in papers.trend(readings, [{"trend": None}]).text


def test_trend_intervals_count_only_settings_with_an_interval():
    claims = [{"trend": {"batch": [{"interval": None}, {"interval": [0, 1]}], "length": []}},
              {"trend": None}]  # fmt: skip
    assert papers.trend_intervals(claims) == 1


# ------------------------------------------------------------------ the README's first screen


def _decided(verdict, paper="P", effect=0.12, interval=(0.09, 0.15), smallest=0.05):
    return {"paper": paper, "verdict": verdict, "statement": "MoLo improves retrieval",
            "shown": "long T2I R@1, of 100", "shown_scale": 100, "effect": effect,
            "interval": list(interval), "better": "higher", "smallest": smallest}  # fmt: skip


def test_first_screen_names_the_clearest_claim_and_groups_the_rest():
    claims = [
        _decided("reproduces"),
        _decided(
            "reproduces in sign, below the published effect", effect=0.02, interval=(0.01, 0.03)
        ),
        _decided("contradicts", paper="Q"),  # fmt: skip
        _decided("the arms are near-copies", paper="Q"),
        _decided("the arms are near-copies", paper="Q"),
        _decided("negligible", paper="Q"),
    ]
    text = findings.first_screen({"claims": claims})
    assert text.startswith(
        "Of P's 2 claims, 2 reproduce in the paper's direction, the clearest that MoLo improves "
        "retrieval, +12.0 [+9.0, +15.0] points of 100 on long T2I R@1, and none contradicts it."
    )
    assert "Of Q's 4 claims, 0 reproduce in the paper's direction and 1 contradicts it." in text
    assert text.endswith(
        "The other 3 show nothing either way at this CPU scale: 1 finds an effect too small to "
        "matter and 2 are no test of the paper here, most (2) because the two arms answer almost "
        "every test item alike."
    )


def test_first_screen_counts_the_claims_not_run_beside_their_paper():
    claims = [
        _decided("reproduces"),
        *[_decided("not run yet", paper="Q") for _ in range(3)],
        _decided("reproduces", paper="Q"),
        _decided("premise fails here", paper="Q"),
        _decided("the arms are near-copies", paper="Q"),
        _decided("untestable", paper="Q"),
    ]
    text = findings.first_screen({"claims": claims})
    assert len(re.findall(r"\. (?=[A-Z])", text)) == 2  # three sentences
    assert "Of Q's 7 claims, 3 are not run yet; of the other 4, 1 reproduces in the paper's " in (
        text
    )
    assert text.endswith(
        "The other 3 show nothing either way at this CPU scale: 3 are no test of the paper here."
    )  # the three are one each: no reason is the most common
    most = [*claims[:6], claims[5], claims[5], claims[6]]  # three premise failures of four
    assert "4 are no test of the paper here, most (3) because the baseline does not do" in (
        findings.first_screen({"claims": most})
    )
    half = [*claims, claims[5]]  # two premise failures of four: not most
    assert "4 are no test of the paper here, 2 of them because the baseline does not do" in (
        findings.first_screen({"claims": half})
    )
    done = [_decided("reproduces"), _decided("not run yet")]
    assert findings.first_screen({"claims": done}).endswith(
        "Every claim that has run is shown one way or the other."
    )


# ------------------------------------------------------------------ which study a section reads


def _study_claim(verdict, study="argent", paper="A", steps=20, seeds=(0,), variant="V"):
    regime = {"batch_size": 32, "steps": steps, "init": "random"} if steps else None
    return {"study": study, "paper": paper, "verdict": verdict, "regime": regime,
            "seeds": list(seeds), "variant": variant, "baseline": "B"}  # fmt: skip


def _target(variant, met, study="argent"):
    return {"study": study, "variant": variant, "met": met}


def _decided_file(claims, targets=()):
    return {"claims": claims, "targets": list(targets)}


def test_the_smoke_study_stands_in_said_as_such_with_its_learning_targets():
    smoke = _decided_file(
        [_study_claim("untestable"), _study_claim("untestable", study="h", paper="H")],
        [_target("V", False), _target("B", False), _target("base", True), _target("V", True, "h")],
    )
    full = _decided_file([_study_claim("not run yet", steps=None, seeds=()),
                          _study_claim("not run yet", steps=None, seeds=()),
                          _study_claim("reproduces", study="h", paper="H")])  # fmt: skip
    reading = stand_in.read_from("smoke", full, smoke, "argent")
    assert reading.text.startswith("**The smoke study stands in here.** The full study's A arms "
                                   "have not run yet: all 2 of its claims on them read")  # fmt: skip
    assert "train at batch 32 × 20 steps from random weights on seed 0 (one seed: no interval)" in (
        reading.text
    )
    assert "none of its arms' 2 learning targets is met, so no arm has learned the world" in (
        reading.text
    )  # the base's and the other study's targets are not the arms'
    assert reading.point.endswith("in the smoke study (batch 32 × 20 steps from random weights) "
                                  "no arm learned the world.")  # fmt: skip
    some = _decided_file(smoke["claims"], [_target("V", True), _target("B", False)])
    partly = _decided_file([*full["claims"], _study_claim("reproduces", steps=400)])
    text = stand_in.read_from("smoke", partly, some, "argent").text
    assert "have not all run: 2 of its 3 claims on them read *not run yet*" in text
    assert "1 of its arms' 2 learning targets is met: an arm that missed" in text
    learned = _decided_file(smoke["claims"], [_target("V", True), _target("B", True)])
    assert "every one of its arms' 2 learning targets is met" in (
        stand_in.read_from("smoke", None, learned, "argent").text
    )
    assert "There is no full study yet." in stand_in.read_from("smoke", None, smoke, "argent").text


def test_the_full_study_is_read_as_such_or_says_what_has_not_run():
    smoke = _decided_file([_study_claim("untestable", seeds=(0, 1))], [_target("V", False)])
    decided = _decided_file([_study_claim("reproduces", steps=400)])
    assert stand_in.read_from("full", decided, smoke, "argent").text == (
        "This section reads the full study's A runs."
    )
    partial = _decided_file([_study_claim("not run yet", steps=None, seeds=())])
    reading = stand_in.read_from("full", partial, smoke, "argent")
    assert reading.text.startswith(
        "The full study's A arms have not run yet: all 1 of its claims on them read *not run "
        "yet*, and nothing is read of them here. The smoke study has run them, at batch 32 × 20 "
        "steps from random weights on seeds 0 and 1, a check"
    )
    assert stand_in.regime(_study_claim("x", steps=2800)) == (
        "batch 32 × 2,800 steps from random weights"
    )


def test_trend_sentence_counts_each_kind_of_reading():
    readings = {
        "a": {"batch": "moves toward the paper's side as ...", "length": "not estimable: 1 df"},
        "b": {"batch": "moves away from ...", "length": "moves toward the paper's side ..."},
    }
    assert papers.trend_sentence(readings) == (
        "Of the 4 slopes (2 headline claims × batch and length), 1 move away from the paper's "
        "side, 1 are not estimable, and 2 move toward the paper's side as the scale grows "
        "(a (batch); b (length))."
    )
    flat = {"a": {"batch": "no change established", "length": "not measured"}}
    assert papers.trend_sentence(flat).endswith(
        "1 establish no change, 1 are not measured, and 0 move toward the paper's side as the "
        "scale grows (none)."
    )
