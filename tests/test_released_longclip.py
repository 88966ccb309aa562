"""Released Long-CLIP checkpoints (docs/methods/himo-clip.md#long-text) against outputs of
Long-CLIP's own code.

The fixture ``tests/fixtures/released/longclip-tiny.pt`` is a reduced-size checkpoint written by
``scripts/fixtures/make_longclip_fixture.py`` with the official Long-CLIP model code, the way its
training saves checkpoints; ``longclip-tiny.json`` beside it holds fixed inputs and the official
``encode_image`` / ``encode_text`` outputs of the model the official ``longclip.load`` reads back.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from open_clip.transformer import QuickGELU
from PIL import Image

from paperlib.models.clip import create_model
from paperlib.models.hyperbolic import HyperbolicCLIP
from paperlib.models.longclip_checkpoint import (
    EXPECTED,
    infer_longclip_config,
    load_longclip_checkpoint,
    read_longclip_state,
)

FIXTURE = Path(__file__).parent / "fixtures" / "released" / "longclip-tiny.pt"
RECORD = json.loads(FIXTURE.with_suffix(".json").read_text())


def decode(entry: dict) -> torch.Tensor:
    dtype = np.dtype(entry["dtype"]).newbyteorder("<")
    array = np.frombuffer(base64.b64decode(entry["base64"]), dtype=dtype)
    return torch.from_numpy(array.reshape(entry["shape"]).astype(array.dtype.newbyteorder("=")))


@pytest.fixture(scope="module")
def bundle():
    return load_longclip_checkpoint(FIXTURE)


@pytest.fixture(scope="module")
def inputs():
    return decode(RECORD["pixels"]), decode(RECORD["model_tokens"]).long()


def _text_features(model, tokens) -> torch.Tensor:
    with torch.no_grad():
        return model.encode_text(tokens)


# --------------------------------------------------------------------------- the fixture


def test_fixture_is_a_bare_official_state_dict_and_small():
    state = torch.load(FIXTURE, map_location="cpu", weights_only=True)
    assert all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items())
    assert state["positional_embedding"].shape == state["positional_embedding_res"].shape
    assert state["positional_embedding"].shape[0] == 248
    assert not any(k.startswith("mask") for k in state)  # the masks are not saved
    assert {v.dtype for v in state.values()} == {torch.float32}
    # res differs from the base on every row, as a fine-tuned release does
    diff = (state["positional_embedding_res"] - state["positional_embedding"]).abs().amax(dim=1)
    assert (diff > 1e-3).all()
    size = FIXTURE.stat().st_size + FIXTURE.with_suffix(".json").stat().st_size
    assert size < 2_000_000
    assert RECORD["source"] == "github.com/beichenzbc/Long-CLIP"
    assert max(RECORD["token_lengths"]) > 77 and min(RECORD["token_lengths"]) <= 20


# --------------------------------------------------------------------------- equivalence


def test_loaded_model_reproduces_official_embeddings(bundle, inputs):
    pixels, tokens = inputs
    with torch.no_grad():
        image = bundle.model.encode_image(pixels)
    text = _text_features(bundle.model, tokens)
    official_image = decode(RECORD["image_features"])
    official_text = decode(RECORD["text_features"])
    assert image.dtype == torch.float32 and text.shape == official_text.shape
    torch.testing.assert_close(image, official_image, rtol=0, atol=1e-5)
    torch.testing.assert_close(text, official_text, rtol=0, atol=1e-5)
    longest = int(np.argmax(RECORD["token_lengths"]))
    assert RECORD["token_lengths"][longest] > 77
    torch.testing.assert_close(text[longest], official_text[longest], rtol=0, atol=1e-5)


def test_architecture_is_inferred_from_the_shapes(bundle):
    config = infer_longclip_config(read_longclip_state(FIXTURE))
    arch = RECORD["architecture"]
    vision, text = config["vision_cfg"], config["text_cfg"]
    assert config["embed_dim"] == arch["embed_dim"] and config["quick_gelu"] is True
    assert (vision["image_size"], vision["patch_size"]) == (
        arch["image_resolution"],
        arch["vision_patch_size"],
    )
    assert (vision["width"], vision["layers"]) == (arch["vision_width"], arch["vision_layers"])
    assert (text["width"], text["layers"]) == (
        arch["transformer_width"],
        arch["transformer_layers"],
    )
    assert text["heads"] == arch["transformer_heads"]
    assert (text["vocab_size"], text["context_length"]) == (arch["vocab_size"], 248)
    model = bundle.model
    assert model.visual.transformer.resblocks[0].attn.num_heads == arch["vision_width"] // 64
    for tower in (model.visual, model.transformer):
        assert any(isinstance(m, QuickGELU) for m in tower.modules())
    assert not model.training


def test_preprocess_matches_the_official_transform(bundle):
    images = [Image.fromarray(decode(entry).numpy()) for entry in RECORD["images"]]
    assert len({im.size for im in images}) > 1  # non-square sizes exercise resize + crop
    pixels = torch.stack([bundle.preprocess(im) for im in images])
    torch.testing.assert_close(pixels, decode(RECORD["pixels"]), rtol=0, atol=1e-6)


def test_tokenizer_matches_longclip_tokenize_at_248(bundle):
    official = decode(RECORD["tokens"]).long()
    ours = bundle.tokenizer(RECORD["texts"])
    assert ours.shape == official.shape == (len(RECORD["texts"]), 248)
    assert torch.equal(ours, official)


# --------------------------------------------------------------------------- residual scheme


@pytest.mark.parametrize(
    ("table", "rows", "changes_short", "changes_long"),
    [
        ("positional_embedding_res", slice(20, None), False, True),
        ("positional_embedding_res", slice(0, 20), False, False),
        ("positional_embedding", slice(20, None), False, False),
        ("positional_embedding", slice(0, 20), True, True),
    ],
)
def test_positions_below_20_read_the_base_and_the_rest_the_residual(
    inputs, table, rows, changes_short, changes_long
):
    model = load_longclip_checkpoint(FIXTURE).model
    tokens = inputs[1]
    lengths = torch.tensor(RECORD["token_lengths"])
    short, long = lengths <= 20, lengths > 20
    assert short.any() and long.any()
    before = _text_features(model, tokens)
    with torch.no_grad():
        getattr(model, table)[rows] += 0.5 * torch.randn_like(getattr(model, table)[rows])
    change = (_text_features(model, tokens) - before).abs().amax(dim=1)
    assert bool((change[short] > 1e-3).all()) is changes_short
    assert bool((change[long] > 1e-3).all()) is changes_long
    assert bool((change[short] < 1e-5).all()) is not changes_short
    assert bool((change[long] < 1e-5).all()) is not changes_long


def test_residual_is_trainable_and_base_frozen(inputs):
    model = load_longclip_checkpoint(FIXTURE).model
    assert model.positional_embedding_res.requires_grad
    assert not model.positional_embedding.requires_grad
    model.encode_text(inputs[1]).sum().backward()
    assert model.positional_embedding.grad is None
    grad = model.positional_embedding_res.grad
    assert grad[:20].abs().max() == 0 and grad[20:].abs().max() > 0


# --------------------------------------------------------------------------- accepted forms


def test_nested_prefixed_and_half_precision_files_load(tmp_path, inputs):
    state = torch.load(FIXTURE, map_location="cpu", weights_only=True)
    nested = tmp_path / "nested.pt"
    torch.save({"state_dict": {f"module.{k}": v for k, v in state.items()}, "epoch": 3}, nested)
    half = tmp_path / "half.pt"
    torch.save({k: v.half() for k, v in state.items()}, half)
    official = decode(RECORD["text_features"])
    text = _text_features(load_longclip_checkpoint(nested).model, inputs[1])
    torch.testing.assert_close(text, official, rtol=0, atol=1e-5)
    model = load_longclip_checkpoint(half).model
    assert {p.dtype for p in model.parameters()} == {torch.float32}
    text = _text_features(model, inputs[1])
    assert 0 < (text - official).abs().max() < 2e-2  # float16 rounding of every tensor


# --------------------------------------------------------------------------- refusals


class _Opaque:
    """A pickled object that only a full (non-weights-only) unpickler would rebuild."""


def _write_bad_file(kind: str, path: Path) -> None:
    state = torch.load(FIXTURE, map_location="cpu", weights_only=True)
    if kind == "truncated":
        path.write_bytes(FIXTURE.read_bytes()[: FIXTURE.stat().st_size // 2])
    elif kind == "random_bytes":
        path.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, np.uint8).tobytes())
    elif kind == "needs_full_unpickler":
        torch.save({"state_dict": state, "args": argparse.Namespace(lr=1e-6)}, path)
    elif kind == "plain_pickle":
        path.write_bytes(pickle.dumps(_Opaque(), protocol=2))
    elif kind == "not_a_state_dict":
        torch.save(["a caption", 3, {"lr": 1e-6}], path)
    elif kind == "open_clip_77":
        torch.save(create_model("paper-tiny").model.state_dict(), path)
    elif kind == "meru_like":
        meru = HyperbolicCLIP(create_model("paper-tiny", context_length=248).model)
        torch.save(meru.state_dict(), path)
    elif kind == "meru_release_keys":
        keys = ("textual.token_embedding.weight", "visual_proj.weight", "curv", "visual_alpha")
        torch.save({k: torch.zeros(2, 2) for k in keys}, path)
    elif kind == "short_residual":
        torch.save({**state, "positional_embedding_res": state["positional_embedding"][:77]}, path)


@pytest.mark.parametrize(
    "kind",
    [
        "truncated",
        "random_bytes",
        "needs_full_unpickler",
        "plain_pickle",
        "not_a_state_dict",
        "open_clip_77",
        "meru_like",
        "meru_release_keys",
        "short_residual",
    ],
)
def test_other_files_are_refused_naming_the_file_and_the_format(tmp_path, kind):
    path = tmp_path / f"{kind}.pt"
    _write_bad_file(kind, path)
    with pytest.raises(ValueError) as err:
        load_longclip_checkpoint(path)
    message = str(err.value)
    assert str(path) in message and EXPECTED in message
    assert "weights_only=False" not in message and "weights_only` set to `False" not in message
    assert err.value.__cause__ is None or "weights_only" not in str(err.value.__cause__)


def test_open_clip_state_dict_is_pointed_to_create_model(tmp_path):
    path = tmp_path / "openclip.pt"
    _write_bad_file("open_clip_77", path)
    with pytest.raises(ValueError, match="77 rows and no residual copy.*create_model"):
        load_longclip_checkpoint(path)


def test_missing_file_is_a_file_not_found_error(tmp_path):
    path = tmp_path / "longclip-L.pt"
    assert not os.path.exists(path)
    with pytest.raises(FileNotFoundError) as err:
        load_longclip_checkpoint(path)
    assert str(path) in str(err.value) and EXPECTED in str(err.value)
