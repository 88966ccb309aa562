"""The facts tutorials 00–02 state in their prose, checked on the generated world, the committed
bases and the committed study's results (the notebooks state them; this file asserts them)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from paperlib.analysis.components import correlation_ratio, world_factors
from paperlib.analysis.prefixes import reads_of
from paperlib.data.world import MAX_SHORT_WORDS, draw_scene, scene_sentences, scene_short_caption
from paperlib.engine.config import ModelConfig
from paperlib.figures import assert_values_match_claims
from paperlib.models.clip import create_model, embed_texts
from paperlib.study.decide.chance import world_chance
from paperlib.study.plan.bases import base_path
from paperlib.study.plan.design import EVAL_SEED, PRETRAIN
from paperlib.study.plan.scales import SCALES
from paperlib.study.report.decided import available_scale, item_value, load_claims, valid_seeds
from paperlib.study.results.reader import HIMO_MODELS, run_info

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
