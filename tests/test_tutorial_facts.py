"""The facts tutorials 00–03 state in their prose, checked on the generated world, the committed
bases and the committed study's results (the notebooks state them; this file asserts them)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from paperlib.analysis.aperture import (
    APERTURE,
    CAPTIONS_INSIDE,
    Track,
    at_floor,
    curvature_floor,
    probe_arms,
    ray_balance,
    track,
)
from paperlib.analysis.components import correlation_ratio, world_factors
from paperlib.analysis.hyperbolic import aperture_profile, loss_along_ray
from paperlib.analysis.prefixes import reads_of
from paperlib.analysis.readings import aperture
from paperlib.data.world import MAX_SHORT_WORDS, draw_scene, scene_sentences, scene_short_caption
from paperlib.engine.config import ModelConfig
from paperlib.figures import assert_values_match_claims
from paperlib.geometry.lorentz import aperture_radius
from paperlib.losses.entailment import ARGENTConfig, adaent_loss, entailment_loss, norm_regularizer
from paperlib.models.clip import create_model, embed_texts
from paperlib.study.decide.chance import world_chance
from paperlib.study.paths import REPO_ROOT
from paperlib.study.plan.bases import base_path
from paperlib.study.plan.design import EVAL_SEED, PRETRAIN
from paperlib.study.plan.scales import SCALES
from paperlib.study.report.decided import available_scale, item_value, load_claims, valid_seeds
from paperlib.study.results.reader import HIMO_MODELS, run_info
from paperlib.train import log_records

SCALE = available_scale("auto", study="himo")


# ------------------------------------------------------------------ tutorial 00


def test_the_quickstart_model_is_a_resnet_with_a_two_layer_text_tower():
    model, _, tokenizer = create_model("paper-tiny-rn", pretrained=None)
    assert type(model.visual).__name__ == "ModifiedResNet"
    assert len(model.transformer.resblocks) == 2
    assert tokenizer.context_length == 77
    texts = embed_texts(model.eval(), tokenizer, ["a red square.", "two blue rings."])
    torch.testing.assert_close(texts.norm(dim=-1), torch.ones(2))  # unit rows


def test_the_bases_trained_on_the_short_captions_and_record_their_curves():
    bases = json.loads((base_path("paper-tiny-rn", 0).parent / "bases.json").read_text())
    for record in bases["bases"]:
        name = f"{record['model']}-base{record['base']}"
        assert bases["config"][name]["data"]["caption"] == "short_caption"
        assert set(record["plateau"]) <= set(record["validation"])  # the curves it is checked on


def test_short_captions_are_capped_and_never_the_captions_first_sentence():
    for i in range(200):  # the held-out scenes the quickstart counts over
        scene = draw_scene(EVAL_SEED, i)
        short = scene_short_caption(scene)
        assert len(short.split()) <= MAX_SHORT_WORDS
        assert short != scene_sentences(scene)[0]


# ------------------------------------------------------------------ tutorial 01


def test_nested_taxonomy_levels_only_raise_eta_squared():
    factors = world_factors(EVAL_SEED, 300)
    assert [np.unique(factors[f]).size for f in ("sub-category", "super-category")] == [24, 4]
    rng = np.random.default_rng(0)
    for _ in range(20):
        scores = rng.normal(size=300) + rng.normal(size=4)[factors["super-category"]]
        levels = [correlation_ratio(scores, factors[f]) for f in ("super-category", "category", "sub-category")]  # fmt: skip
        assert levels == sorted(levels)


# ------------------------------------------------------------------ tutorial 02


def test_held_out_captions_have_seven_sentences_and_ten_with_three_objects():
    for i in range(SCALES[SCALE].eval_size):
        scene = draw_scene(EVAL_SEED, i)
        sentences = len(scene_sentences(scene))
        assert sentences >= 7
        assert (sentences >= 10) == (len(scene.objects) >= 3)


def test_the_pre_training_reads_77_tokens_and_the_fine_tunes_248():
    contexts = {
        label: ModelConfig(**run_info(SCALE, "himo", variant)["config"]["model"]).context_length
        for variant, label in HIMO_MODELS.items()
    }
    assert contexts == {"pre-trained": 77, "InfoNCE (λ=0)": 248, "Long-CLIP": 248, "MoLo": 248}


def test_chance_levels_the_monotonicity_section_states():
    chance = {c["item"]: c["chance"] for c in load_claims(SCALE)["claims"]}
    assert chance["world-monotonicity/himo2"] == 50
    assert chance["world-monotonicity/himo3"] == pytest.approx(100 / 6)
    assert chance["world-monotonicity/himoK"] == 0 and chance["world-monotonicity/ssi"] is None
    _, _, tokenizer = create_model("paper-tiny-rn", pretrained=None)
    cut = world_chance(EVAL_SEED, SCALES[SCALE].eval_size, reads_of(tokenizer))
    for item in ("world-monotonicity/himo2", "world-monotonicity/himo3"):
        assert cut[item]["value"] < chance[item]  # tied segments lower it
    assert cut["world-monotonicity/himoK"]["value"] == 0


def test_the_monotonicity_panels_show_the_claims_own_values():
    claims = [
        c for c in load_claims(SCALE)["claims"] if c["item"].startswith("world-monotonicity/")
    ]
    variants = [v for v in HIMO_MODELS if valid_seeds(SCALE, "himo", v)]
    assert PRETRAIN in variants
    values = {
        item: {HIMO_MODELS[v]: item_value(SCALE, "himo", v, item) for v in variants}
        for item in {c["item"] for c in claims}
    }
    assert assert_values_match_claims(claims, values, label_of=HIMO_MODELS, intervals=True) > 0


# ------------------------------------------------------------------ tutorial 03


BASE_LOGS = REPO_ROOT / "results" / "bases-hyperbolic"


def _base_tracks(model: str = "paper-tiny-rn") -> dict[str, Track]:
    return {
        f"base {b}": track(log_records(BASE_LOGS / f"{model}-base{b}.log.jsonl")) for b in (0, 1)
    }


def test_meru_s_own_pre_training_shows_the_aperture_failure():
    """The numbers tutorial 03 reads off the hyperbolic bases' logs: the curvature falls from
    0.75 to its clamp 0.1, the caption norm from 1.33–1.38 to 0.60–0.61, the share of captions
    inside 2K/√c from 0 to 99 %, the entailment loss to 0 and the aperture to π/2."""
    tracks = _base_tracks()
    for t in tracks.values():
        assert round(t.first("curv"), 2) == 0.75 and at_floor(t.last("curv"))
        assert t.first(CAPTIONS_INSIDE) == 0 and t.last(CAPTIONS_INSIDE) >= 0.95
        assert t.last("entailment") < 1e-3 < t.first("entailment")
        assert t.last(APERTURE) > 0.98 * math.pi / 2
    text = aperture.pretraining(tracks, curvature_floor(), 6400).text
    assert "the learned curvature falls from 0.75 to 0.10 — its lower clamp c₀/10 = 0.1" in text
    assert "caption norm falls from 1.33–1.38 to 0.60–0.61" in text
    assert "inside the radius rises from 0% to 99%" in text
    assert "the entailment loss from 1.3882–1.4437 to 0.0000" in text
    assert "the failure ARGENT describes" in text


def test_the_ray_balances_inside_the_radius_at_the_curvature_the_bases_end_at():
    """Section 4's balance point of γ1·AdaEnt + γ2·L_Reg: outside 2K/√c at c = 1, inside it at
    the clamp c = 0.1 where the bases end, for the notebook's child."""
    config = ARGENTConfig()
    norms = torch.linspace(0.01, 1.5, 600, dtype=torch.float64)
    child = 0.6 * torch.tensor([[math.cos(1.2), math.sin(1.2)]], dtype=torch.float64)
    for curv, side in ((1.0, "outside"), (0.1, "inside")):
        hinge, d_hinge = loss_along_ray(lambda p, c=curv: 0.2 * entailment_loss(p, child, c), norms)
        _, d_ada = loss_along_ray(lambda p, c=curv: config.gamma1 * adaent_loss(p, child, c), norms)
        _, d_reg = loss_along_ray(lambda p: config.gamma2 * norm_regularizer(p), norms)
        slopes = {"hinge": d_hinge, "huber": d_ada, "reg": d_reg}
        found = ray_balance(norms, hinge, slopes, aperture_radius(curv))
        assert (found["stationary"] > found["r0"]) == (side == "outside"), (curv, found)
        assert found["meru_inward"] and found["ada_inward"]


def test_meru_s_clamp_peaks_at_float32_s_limit_and_ours_far_lower():
    """Section 2's gradients at c = 1: the exact one follows the −½ power law, MERU's clamp
    (a no-op in float32) peaks near (1/r0)/√ε ≈ 1.4·10⁴, ours more than ten times lower, and
    every version is flat inside the radius."""
    r0 = 0.2
    gap = torch.logspace(-9, 0, 400, dtype=torch.float64)
    exact = aperture_profile(r0 + gap, 1.0, 0.1, asin_margin=0.0)[1].abs()
    small = gap < 1e-6
    slope = np.polyfit(np.log(gap[small].numpy()), np.log(exact[small].numpy()), 1)[0]
    assert abs(slope + 0.5) < 0.01
    meru = float(aperture_profile((r0 + gap).float(), 1.0, 0.1, 1e-8)[1].abs().max())
    ours = float(aperture_profile((r0 + gap).float(), 1.0, 0.1, 1e-4)[1].abs().max())
    limit = 1.0 / (r0 * math.sqrt(2.0**-23))
    assert limit / 2 < meru < 1.01 * limit and 1.3e4 < meru < 1.6e4 and ours < meru / 10
    inside = aperture_profile(torch.linspace(0.01, 0.99 * r0, 50), 1.0, 0.1, 1e-4)[1]
    assert float(inside.abs().max()) == 0.0


def test_the_budget_probe_puts_hycoclip_s_captions_inside_and_argent_s_outside():
    """Section 6's numbers: one seed each, HyCoCLIP's held-out captions inside 2K/√c from step
    1,600 on, ARGENT's at no validation; both curvatures reach the clamp after the study's
    budget of 2,800 steps and sit just above it there."""
    record = json.loads((REPO_ROOT / "results" / "probes" / "scratch_budget.json").read_text())
    arms = probe_arms(record)
    assert arms["HyCoCLIP"].steps[np.argmax(arms["HyCoCLIP"].inside >= 0.5)] == 1600
    assert not arms["ARGENT"].inside.any()
    budget = SCALES["full"].scratch_steps
    assert all(0.1 < a.curv_at(budget) < 0.13 for a in arms.values())
    text = aperture.probe(arms, budget, curvature_floor(), 1000).text
    assert "HyCoCLIP's is 0% up to step 1,200 and 97.8%–100.0% from step 1,600 on" in text
    assert "ARGENT's is 0 at every validation" in text
    assert "at the study's budget of 2,800 steps it is 0.126 (HyCoCLIP) and 0.114 (ARGENT)" in text
