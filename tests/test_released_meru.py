"""Released MERU / HyCoCLIP checkpoints and HyCoCLIP's S/B/L architectures
(docs/methods/argent.md#meru, docs/methods/argent.md#hycoclip).

The fixtures were written by ``scripts/fixtures/make_meru_fixture.py`` with the official code
(facebookresearch/meru, PalAvik/hycoclip): a reduced model in the official checkpoint layout,
fixed inputs and the official outputs, plus the official full-size S/B/L parameter counts.
"""

from __future__ import annotations

import math
import re
import traceback
from pathlib import Path

import pytest
import torch
from PIL import Image

from paperlib.models.clip import create_model
from paperlib.models.hyperbolic import HyperbolicCLIP
from paperlib.models.meru_checkpoint import (
    HYCOCLIP_ARCHITECTURES,
    IMAGENET_MEAN,
    IMAGENET_STD,
    build_meru_clip,
    build_meru_model,
    infer_architecture,
    load_meru_checkpoint,
    sincos_position_embedding,
    to_official_state_dict,
)

FIXTURES = Path(__file__).parent / "fixtures" / "released"
FAMILIES = ("meru", "hycoclip")
HEADS = {"meru": {"vision_heads": 4}, "hycoclip": {"vision_heads": 4, "text_heads": 2}}
EXPECTED = re.escape(
    "expected a MERU/HyCoCLIP checkpoint (state dict with visual.*, textual.*, visual_proj, "
    "textual_proj, curv, visual_alpha, textual_alpha, logit_scale)"
)
TOL = {"rtol": 0.0, "atol": 1e-5}


def _file(family: str) -> Path:
    return FIXTURES / f"{family}-tiny.pt"


@pytest.fixture(scope="module", params=FAMILIES)
def loaded(request):
    family = request.param
    checkpoint = torch.load(_file(family), map_location="cpu", weights_only=True)
    bundle = load_meru_checkpoint(_file(family), family=family, **HEADS[family])
    return family, bundle, checkpoint["model"], checkpoint["reference"]


def _small_tokens(tokenizer, ref) -> torch.Tensor:
    """paperlib's token rows in the fixture's reduced vocabulary (ids ranked in vocab_map)."""
    tokens = tokenizer(ref["captions"])
    assert torch.isin(tokens, ref["vocab_map"]).all()
    return torch.searchsorted(ref["vocab_map"], tokens)


# --------------------------------------------------------------------------- fixtures


@pytest.mark.parametrize("family", FAMILIES)
def test_fixture_is_small_and_in_the_released_layout(family):
    path = _file(family)
    assert path.stat().st_size < 2_000_000
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    assert set(checkpoint) == {"model", "reference"}
    state = checkpoint["model"]
    assert {
        "curv",
        "visual_alpha",
        "textual_alpha",
        "logit_scale",
        "visual_proj.weight",
        "textual_proj.weight",
        "pixel_mean",
        "pixel_std",
        "textual.attn_mask",
    } <= set(state)
    assert any(k.startswith("visual.blocks.") for k in state)
    assert any(k.startswith("textual.resblocks.") for k in state)
    ref = checkpoint["reference"]
    assert ref["family"] == family and len(ref["source"]["commit"]) == 40


# --------------------------------------------------------------------------- official outputs


def test_embeddings_reproduce_the_official_model(loaded):
    _, (model, preprocess, tokenizer), _, ref = loaded
    assert isinstance(model, HyperbolicCLIP)
    normalize = preprocess.transforms[-1]
    with torch.no_grad():
        image = model.encode_image(normalize(ref["images"]))
        text = model.encode_text(_small_tokens(tokenizer, ref))
        image_eu = model.clip.encode_image(normalize(ref["images"]), normalize=False)
        text_eu = model.clip.encode_text(_small_tokens(tokenizer, ref), normalize=False)
    torch.testing.assert_close(image, ref["image_features"], **TOL)
    torch.testing.assert_close(text, ref["text_features"], **TOL)
    torch.testing.assert_close(image_eu, ref["image_features_euclidean"], **TOL)
    torch.testing.assert_close(text_eu, ref["text_features_euclidean"], **TOL)
    assert not torch.allclose(image, ref["image_features_euclidean"], atol=1e-3)  # α, exp map


def test_preprocess_reproduces_the_official_pipeline(loaded):
    _, (model, preprocess, _), _, ref = loaded
    pixels = preprocess(Image.fromarray(ref["pil_image"].numpy(), mode="RGB"))
    assert pixels.shape == (3, 32, 32) and model.clip.visual.image_size == (32, 32)
    expected = (ref["pil_pixels"] - ref["pixel_mean"][:, None, None]) / ref["pixel_std"][
        :, None, None
    ]
    assert torch.equal(pixels, expected)
    with torch.no_grad():
        features = model.encode_image(pixels[None])
    torch.testing.assert_close(features, ref["pil_features"], **TOL)


def test_tokenizer_gives_the_official_rows(loaded):
    _, (_, _, tokenizer), _, ref = loaded
    tokens = tokenizer(ref["captions"])
    assert max(ref["official_token_lengths"]) > 77  # the official truncation is exercised
    assert torch.equal(tokens, ref["tokens"])


def test_scalars_are_the_official_values(loaded):
    family, (model, _, _), state, ref = loaded
    assert model.log_curv.item() == state["curv"].item()  # the file stores log c
    torch.testing.assert_close(model.curv, ref["curv"])
    for name in ("visual_alpha", "textual_alpha", "logit_scale"):
        assert getattr(model, name).item() == ref[name].item(), name
    assert model.clip.logit_scale.item() == ref["logit_scale"].item()
    init = math.log(32**-0.5)
    assert abs(model.visual_alpha.item() - init) > 0.1 and abs(model.curv.item() - 1) > 0.3


def test_pixel_normalisation_comes_from_the_file(loaded):
    family, (_, preprocess, _), _, ref = loaded
    normalize = preprocess.transforms[-1]
    assert tuple(normalize.mean) == tuple(ref["pixel_mean"].tolist())
    assert tuple(normalize.std) == tuple(ref["pixel_std"].tolist())
    # HyCoCLIP's class passes its pixel_mean/std one argument late: mean = std = ImageNet std
    official_mean = IMAGENET_STD if family == "hycoclip" else IMAGENET_MEAN
    torch.testing.assert_close(ref["pixel_mean"], torch.tensor(official_mean))


def test_export_gives_back_the_official_state(loaded):
    _, (model, preprocess, _), state, _ = loaded
    normalize = preprocess.transforms[-1]
    out = to_official_state_dict(model, pixel_mean=normalize.mean, pixel_std=normalize.std)
    assert set(out) == set(state)
    for key, value in state.items():
        assert out[key].dtype == value.dtype and torch.equal(out[key], value), key


def test_sincos_positions_equal_the_official_table():
    state = torch.load(_file("meru"), map_location="cpu", weights_only=True)["model"]
    table = state["visual.pos_embed"][0]
    assert torch.equal(table[0], torch.zeros(64))
    assert torch.equal(table[1:], sincos_position_embedding(4, 64))
    assert not torch.equal(table[1:], sincos_position_embedding(4, 64).roll(1, dims=0))


# --------------------------------------------------------------------------- Euclidean baseline


def test_clip_baseline_file_loads_into_a_bare_clip(tmp_path):
    checkpoint = torch.load(_file("meru"), map_location="cpu", weights_only=True)
    ref = checkpoint["reference"]
    state = {
        k: v
        for k, v in checkpoint["model"].items()
        if k not in ("curv", "visual_alpha", "textual_alpha")
    }
    path = tmp_path / "clip_vit_tiny.pth"
    torch.save({"model": state}, path)
    clip, preprocess, tokenizer = load_meru_checkpoint(path, family="clip", vision_heads=4)
    assert not isinstance(clip, HyperbolicCLIP)
    with torch.no_grad():
        image = clip.encode_image(preprocess.transforms[-1](ref["images"]))
        text = clip.encode_text(_small_tokens(tokenizer, ref))
    torch.testing.assert_close(image, ref["image_features_euclidean"], **TOL)
    torch.testing.assert_close(text, ref["text_features_euclidean"], **TOL)
    assert clip.logit_scale.item() == ref["logit_scale"].item()
    with pytest.raises(ValueError, match="family='clip'"):
        load_meru_checkpoint(path, family="meru", vision_heads=4)
    with pytest.raises(ValueError, match="hyperbolic checkpoint.*family='meru'"):
        load_meru_checkpoint(_file("meru"), family="clip", vision_heads=4)


# --------------------------------------------------------------------------- refusals


class _Opaque:
    """A pickled object that a tensor-only read must refuse."""


def _write_bad(kind: str, path: Path) -> None:
    if kind == "truncated":
        path.write_bytes(_file("meru").read_bytes()[:20_000])
    elif kind == "random bytes":
        path.write_bytes(
            bytes(
                torch.randint(0, 256, (4096,), generator=torch.Generator().manual_seed(0))
                .to(torch.uint8)
                .tolist()
            )
        )
    elif kind == "object pickle":
        torch.save({"model": {"visual_proj.weight": _Opaque()}}, path)
    elif kind == "non-tensor values":
        torch.save({"model": [1, 2, 3], "iteration": 5}, path)
    elif kind == "empty state":
        torch.save({}, path)
    elif kind == "open_clip state dict":
        torch.manual_seed(0)
        torch.save(create_model("paper-tiny").model.state_dict(), path)


@pytest.mark.parametrize(
    "kind",
    [
        "truncated",
        "random bytes",
        "object pickle",
        "non-tensor values",
        "empty state",
        "open_clip state dict",
    ],
)
def test_other_files_are_refused_with_the_expected_format(kind, tmp_path):
    path = tmp_path / f"{kind.replace(' ', '_')}.pth"
    _write_bad(kind, path)
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*" + EXPECTED) as info:
        load_meru_checkpoint(path, family="hycoclip")
    shown = "".join(traceback.format_exception(info.value))  # chained errors included
    assert "weights_only" not in shown


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "none.pth"))):
        load_meru_checkpoint(tmp_path / "none.pth")
    with pytest.raises(ValueError, match="family must be one of"):
        load_meru_checkpoint(_file("meru"), family="longclip")


def _edited(tmp_path: Path, edit) -> Path:
    state = dict(torch.load(_file("meru"), map_location="cpu", weights_only=True)["model"])
    edit(state)
    path = tmp_path / "edited.pth"
    torch.save({"model": state}, path)
    return path


def test_loading_is_strict_both_ways(tmp_path):
    path = _edited(tmp_path, lambda s: s.pop("textual.resblocks.1.ln_2.bias"))
    with pytest.raises(ValueError, match=r"missing keys.*transformer\.resblocks\.1\.ln_2\.bias"):
        load_meru_checkpoint(path, vision_heads=4)
    path = _edited(tmp_path, lambda s: s.update({"visual.extra_token": torch.zeros(3)}))
    with pytest.raises(ValueError, match=r"unexpected keys.*visual\.trunk\.extra_token"):
        load_meru_checkpoint(path, vision_heads=4)
    path = _edited(tmp_path, lambda s: s.update({"box_proj.weight": torch.zeros(3)}))
    with pytest.raises(ValueError, match=r"box_proj\.weight.*no place"):
        load_meru_checkpoint(path, vision_heads=4)
    path = _edited(tmp_path, lambda s: s["textual.attn_mask"].fill_(False))
    with pytest.raises(ValueError, match="not a causal mask"):
        load_meru_checkpoint(path, vision_heads=4)


def test_checkpoints_nested_like_training_ones_load(tmp_path):
    checkpoint = torch.load(_file("meru"), map_location="cpu", weights_only=True)
    state = {f"module.{k}": v for k, v in checkpoint["model"].items()}
    path = tmp_path / "checkpoint_00001000.pth"
    torch.save({"model": state, "iteration": 1000, "scaler": {"scale": 2.0**16}}, path)
    model = load_meru_checkpoint(path, vision_heads=4).model
    assert model.visual_alpha.item() == checkpoint["reference"]["visual_alpha"].item()


def test_head_counts_are_inferred_or_required(tmp_path):
    with pytest.raises(ValueError, match=r"vision width 64 .*pass vision_heads="):
        load_meru_checkpoint(_file("hycoclip"), family="hycoclip")
    ref = torch.load(_file("hycoclip"), map_location="cpu", weights_only=True)["reference"]
    model, _, tokenizer = load_meru_checkpoint(_file("hycoclip"), vision_heads=4)  # W/64 = 1
    assert model.clip.transformer.resblocks[0].attn.num_heads == 1
    with torch.no_grad():
        text = model.encode_text(_small_tokens(tokenizer, ref))
    assert not torch.allclose(text, ref["text_features"], atol=1e-3)  # heads change the model


def test_out_of_range_scalars_warn(tmp_path):
    path = _edited(tmp_path, lambda s: s["curv"].fill_(math.log(0.05)))
    with pytest.warns(UserWarning, match=r"curv \(log c\).*outside"):
        load_meru_checkpoint(path, vision_heads=4)


# --------------------------------------------------------------------------- S/B/L builders


@pytest.fixture(scope="module")
def official_counts():
    return torch.load(_file("hycoclip"), map_location="cpu", weights_only=True)["reference"][
        "architectures"
    ]


def _check_against_official(model: HyperbolicCLIP, official: dict) -> None:
    clip = model.clip

    def count(*modules):
        return sum(p.numel() for m in modules for p in m.parameters())

    text = count(clip.transformer, clip.ln_final, clip.token_embedding)
    text += clip.positional_embedding.numel()
    assert count(clip.visual.trunk) == official["visual"]
    assert text == official["textual"]
    assert clip.visual.head.proj.weight.numel() == official["visual_proj"]
    assert clip.text_projection.numel() == official["textual_proj"]
    assert count(model) == official["total"] + 1  # + the unused clip.logit_scale
    trunk = clip.visual.trunk
    assert (trunk.embed_dim, len(trunk.blocks)) == (
        official["vision_width"],
        official["vision_depth"],
    )
    assert trunk.blocks[0].attn.num_heads == official["vision_heads"]
    block = clip.transformer.resblocks[0]
    assert block.attn.num_heads == official["text_heads"]
    assert len(clip.transformer.resblocks) == official["text_layers"]
    assert clip.text_projection.shape == (official["text_width"], official["embed_dim"])


@pytest.mark.parametrize("size", ["S", "B", "L"])
def test_builders_have_the_official_shapes(size, official_counts):
    official = official_counts[size]
    assert HYCOCLIP_ARCHITECTURES[size].vision == official["vision"]
    with torch.device("meta"):  # shapes only: no memory, no init time
        model = build_meru_model(size)
    _check_against_official(model, official)
    inferred = infer_architecture(to_official_state_dict(model))
    assert inferred == HYCOCLIP_ARCHITECTURES[size]  # heads from the width, as in the configs


def test_build_has_meru_initial_scalars_and_fixed_positions():
    torch.manual_seed(0)
    model = build_meru_model(
        "vit_tiny_patch16_224",
        embed_dim=256,
        image_size=64,
        text_layers=1,
        text_width=64,
        text_heads=1,
        vocab_size=100,
    )
    assert model.visual_alpha.item() == pytest.approx(math.log(256**-0.5), abs=1e-7)
    assert model.textual_alpha.item() == pytest.approx(math.log(256**-0.5), abs=1e-7)
    assert model.curv.item() == pytest.approx(1.0)
    trunk = model.clip.visual.trunk
    assert not trunk.pos_embed.requires_grad
    assert torch.equal(trunk.pos_embed[0, 0], torch.zeros(192))
    assert torch.equal(trunk.pos_embed[0, 1:], sincos_position_embedding(4, 192))
    assert isinstance(trunk.norm, torch.nn.LayerNorm) and trunk.norm.eps == 1e-5
    assert model.clip.visual.image_size == (64, 64)
    with torch.no_grad():
        features = model.encode_image(torch.rand(2, 3, 64, 64))
        text = model.encode_text(torch.tensor([[98, 5, 99] + [0] * 74]))
    assert features.shape == (2, 256) and text.shape == (1, 256)
    assert torch.isfinite(features).all() and torch.isfinite(text).all()


def test_builder_refuses_unknown_towers():
    with pytest.raises(ValueError, match="unknown vision tower 'resnet50'"):
        build_meru_clip("resnet50")


@pytest.mark.slow
@pytest.mark.parametrize("size", ["S", "B", "L"])
def test_builds_with_weights_match_the_official_models(size, official_counts):
    torch.manual_seed(0)
    model = build_meru_model(size)  # S about 5 s, B 7 s, L 15 s on 2 shared CPU cores
    _check_against_official(model, official_counts[size])
    assert model.visual_alpha.item() == pytest.approx(math.log(512**-0.5), abs=1e-7)
    assert model.visual_alpha.item() == pytest.approx(official_counts[size]["visual_alpha"])
    trunk = model.clip.visual.trunk
    assert not trunk.pos_embed.requires_grad
    assert torch.equal(trunk.pos_embed[0, 1:], sincos_position_embedding(14, trunk.embed_dim))
    assert model.clip.visual.image_size == (224, 224)
