"""Exported runs are read by other tools: open_clip loads a Euclidean run (77 or 248 tokens,
Long-CLIP's residual table folded in) with the same embeddings; the Long-CLIP and MERU/HyCoCLIP
layouts round-trip through the project's official-format loaders and reproduce the committed
official-code fixtures key for key; what a format cannot hold is refused by name."""

from __future__ import annotations

import json

import open_clip
import pytest
import torch
import torch.nn.functional as F

from paperlib.engine.evaluation import load_trained
from paperlib.engine.loop import train
from paperlib.export import OPENCLIP_WEIGHTS, export_run, longclip_state, main
from paperlib.models.longclip_checkpoint import load_longclip_checkpoint
from paperlib.models.meru_checkpoint import load_meru_checkpoint, to_official_state_dict
from tests.engine_helpers import REPO, tiny_config
from tests.test_released_meru import HEADS

FIXTURES = REPO / "tests" / "fixtures" / "released"
TEXTS = ["a small red square left of a blue circle. " * 12, "dog", ""]
# OpenAI CLIP's towers in miniature (QuickGELU, 64-wide heads): what Long-CLIP's loader reads
LONGCLIP_LIKE = {
    "embed_dim": 64,
    "quick_gelu": True,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "head_width": 64, "patch_size": 8},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 64, "heads": 1, "layers": 1},
}


def _embeddings(embed_image, embed_text, tokenizer, pixels):
    with torch.no_grad():
        return embed_image(pixels), embed_text(tokenizer(TEXTS))


def _trained(tmp_path, method: str, **model) -> object:
    raw = tiny_config(method, tmp_path / method, model=model, train={"steps": 1, "batch_size": 8})
    return train(raw).output_dir


@pytest.mark.parametrize("context_length", [77, 248])
def test_open_clip_loads_the_exported_model_with_the_same_embeddings(tmp_path, context_length):
    run = _trained(
        tmp_path, "himo" if context_length == 248 else "clip", context_length=context_length
    )
    assert main([str(run), "--format", "open_clip", str(tmp_path / "out")]) == 0
    model, _, preprocess = open_clip.create_model_and_transforms(f"local-dir:{tmp_path / 'out'}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{tmp_path / 'out'}")
    assert tokenizer(["x"]).shape[1] == context_length
    module, ours_preprocess, ours_tokenizer, _ = load_trained(run)
    pixels = torch.rand(4, 3, 32, 32)
    model.eval()
    theirs = _embeddings(
        lambda x: F.normalize(model.encode_image(x), dim=-1),
        lambda t: F.normalize(model.encode_text(t), dim=-1),
        tokenizer,
        pixels,
    )
    ours = _embeddings(module.embed_image, module.embed_text, ours_tokenizer, pixels)
    for a, b in zip(theirs, ours):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)
    config = json.loads((tmp_path / "out" / "open_clip_config.json").read_text())
    assert config["preprocess_cfg"]["mean"] == list(ours_preprocess.transforms[-1].mean)
    if context_length == 77:  # the bare weights also load by architecture name
        plain = open_clip.create_model(
            "paper-tiny", pretrained=str(tmp_path / "out" / OPENCLIP_WEIGHTS)
        )
        torch.testing.assert_close(
            plain.state_dict()["text_projection"], model.state_dict()["text_projection"]
        )


def test_long_clip_layout_reproduces_the_official_fixture_and_round_trips_a_run(tmp_path):
    fixture = FIXTURES / "longclip-tiny.pt"
    official = torch.load(fixture, weights_only=True)
    exported = longclip_state(load_longclip_checkpoint(fixture).model)
    assert exported.keys() == official.keys()
    assert all(torch.equal(exported[k], official[k]) for k in official)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "export-longclip-like.json").write_text(json.dumps(LONGCLIP_LIKE))
    open_clip.add_model_config(tmp_path / "configs")
    run = _trained(tmp_path, "himo", name="export-longclip-like", context_length=248)
    written = export_run(run, "longclip", tmp_path / "himo.pt")
    bundle = load_longclip_checkpoint(written)
    module, _, tokenizer, _ = load_trained(run)
    pixels = torch.rand(3, 3, 32, 32)
    theirs = _embeddings(
        lambda x: F.normalize(bundle.model.encode_image(x), dim=-1),
        lambda t: F.normalize(bundle.model.encode_text(t), dim=-1),
        bundle.tokenizer,
        pixels,
    )
    for a, b in zip(theirs, _embeddings(module.embed_image, module.embed_text, tokenizer, pixels)):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


@pytest.mark.parametrize("family", ["meru", "hycoclip"])
def test_the_official_hyperbolic_layout_reproduces_the_official_fixtures(family):
    path = FIXTURES / f"{family}-tiny.pt"
    official = torch.load(path, weights_only=True)["model"]
    model, preprocess, _ = load_meru_checkpoint(path, family=family, **HEADS[family])
    normalize = preprocess.transforms[-1]
    exported = to_official_state_dict(model, pixel_mean=normalize.mean, pixel_std=normalize.std)
    assert exported.keys() == official.keys()
    assert all(torch.equal(exported[k].to(official[k].dtype), official[k]) for k in official)


@pytest.mark.slow
def test_a_hyperbolic_run_round_trips_through_the_official_loader(tmp_path):
    raw = tiny_config(
        "argent",
        tmp_path / "run",
        model={"name": "hycoclip-vit-s"},
        train={"steps": 0, "batch_size": 2},
    )
    train(raw)
    written = export_run(tmp_path / "run", "hycoclip", tmp_path / "argent.pth")
    model, preprocess, tokenizer = load_meru_checkpoint(written, family="hycoclip")
    module, ours_preprocess, ours_tokenizer, _ = load_trained(tmp_path / "run")
    assert preprocess.transforms[-1].mean == pytest.approx(ours_preprocess.transforms[-1].mean)
    pixels = torch.rand(2, 3, 224, 224)
    theirs = _embeddings(model.encode_image, model.encode_text, tokenizer, pixels)
    for a, b in zip(
        theirs, _embeddings(module.embed_image, module.embed_text, ours_tokenizer, pixels)
    ):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


def test_what_a_format_cannot_hold_is_refused_by_name(tmp_path, capsys):
    clip_run = _trained(tmp_path, "clip")
    meru_run = _trained(tmp_path, "meru")
    assert main([str(clip_run), "--format", "meru", str(tmp_path / "x.pth")]) == 2
    assert "is a euclidean model: export it as open_clip or longclip" in capsys.readouterr().err
    assert main([str(meru_run), "--format", "open_clip", str(tmp_path / "x")]) == 2
    assert "is a hyperbolic model" in capsys.readouterr().err
    assert main([str(meru_run), "--format", "meru", str(tmp_path / "x.pth")]) == 2
    assert "HyCoCLIP's towers (model.name hycoclip-vit-s/b/l) only" in capsys.readouterr().err
    assert main([str(clip_run), "--format", "longclip", str(tmp_path / "x.pt")]) == 2
    assert "77 text positions (Long-CLIP: 248)" in capsys.readouterr().err
    assert main([str(tmp_path / "missing"), "--format", "open_clip", str(tmp_path / "y")]) == 2
    assert "missing" in capsys.readouterr().err
