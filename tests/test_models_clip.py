"""The open_clip model layer: factory, checkpoints, Long-CLIP's positional stretch
(docs/methods/himo-clip.md#long-text)."""

from __future__ import annotations

import json
import os

import pytest
import torch

from paperlib.models.clip import (
    MODEL_CONFIG_DIR,
    create_model,
    embed_texts,
    encode_image,
    encode_text,
    similarity,
    stretch_positional_embedding,
)


def reference_stretch(p: torch.Tensor) -> torch.Tensor:
    """docs/methods/himo-clip.md#long-text written out index by index."""
    new = torch.zeros(248, p.shape[1], dtype=p.dtype)
    new[:20] = p[:20]
    for i in range(56):
        for j in range(4):
            new[20 + 4 * i + j] = ((4 - j) * p[20 + i] + j * p[21 + i]) / 4
    for j in range(4):
        new[244 + j] = p[76] + j * (p[76] - p[75]) / 4
    return new


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stretch_equals_reference_formula(seed):
    table = torch.randn(77, 16, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    out = stretch_positional_embedding(table)
    assert out.shape == (248, 16)
    torch.testing.assert_close(out, reference_stretch(table), rtol=0, atol=1e-12)


def test_stretch_differs_from_open_clip_linear_resize():
    table = torch.randn(77, 8, generator=torch.Generator().manual_seed(3))
    linear = torch.nn.functional.interpolate(
        table.T[None], size=248, mode="linear", align_corners=False
    )[0].T
    assert not torch.allclose(stretch_positional_embedding(table), linear, atol=1e-3)


def test_stretch_rejects_bad_shapes():
    with pytest.raises(ValueError, match="positions, width"):
        stretch_positional_embedding(torch.zeros(77))
    with pytest.raises(ValueError, match="keep"):
        stretch_positional_embedding(torch.zeros(10, 4), keep=20)


def test_tokenizer_and_model_work_offline():
    assert os.environ.get("HF_HUB_OFFLINE") == "1"
    bundle = create_model("paper-tiny", context_length=248)
    tokens = bundle.tokenizer(["a red circle left of a blue square"])
    assert tokens.shape == (1, 248)
    assert bundle.preprocess is not None


def test_short_captions_identical_after_stretch(tmp_path):
    torch.manual_seed(0)
    base = create_model("paper-tiny")
    path = tmp_path / "base77.pt"
    torch.save(base.model.state_dict(), path)
    captions = [
        "a dog",
        "a red circle left of a blue square on grey",
        "two large striped triangles",
    ]
    tokens77 = base.tokenizer(captions)
    assert (tokens77[:, 20:] == 0).all()  # every caption fits in 20 tokens
    for mode in ("residual", "stretch"):
        long = create_model("paper-tiny", pretrained=path, context_length=248, long_text=mode)
        with torch.no_grad():
            f77 = encode_text(base.model.eval(), tokens77)
            f248 = encode_text(long.model.eval(), long.tokenizer(captions))
        torch.testing.assert_close(f248, f77, rtol=0, atol=1e-5)


def test_long_tokenisation_keeps_text_past_77():
    bundle = create_model("paper-tiny", context_length=248)
    base = create_model("paper-tiny")
    words = " ".join(["blue"] * 100)
    a, b = words + " and a red cat", words + " and a green dog"
    ta, tb = bundle.tokenizer([a, b])
    assert (ta[77:] != 0).any() and not torch.equal(ta, tb)
    with torch.no_grad():
        fa, fb = encode_text(bundle.model, torch.stack([ta, tb])).unbind(0)
        ga, gb = encode_text(base.model, base.tokenizer([a, b])).unbind(0)
    assert (fa - fb).abs().max() > 1e-4  # the 248-token model sees the difference
    torch.testing.assert_close(ga, gb)  # the 77-token model truncates it away


def test_residual_mode_freezes_base_and_trains_tail():
    bundle = create_model("paper-tiny", context_length=248, long_text="residual")
    model = bundle.model
    tokens = bundle.tokenizer([" ".join(["green square"] * 40)])
    encode_text(model, tokens).sum().backward()
    assert not model.positional_embedding.requires_grad
    assert model.positional_embedding.grad is None
    grad = model.positional_embedding_res.grad
    assert grad[:20].abs().max() == 0
    assert grad[20:].abs().max() > 0


def test_248_checkpoint_round_trip(tmp_path):
    torch.manual_seed(1)
    bundle = create_model("paper-tiny", context_length=248)
    with torch.no_grad():
        bundle.model.positional_embedding_res.add_(0.1)
    path = tmp_path / "long.pt"
    torch.save({"state_dict": bundle.model.state_dict()}, path)
    again = create_model("paper-tiny", pretrained=path, context_length=248)
    for key, value in bundle.model.state_dict().items():
        torch.testing.assert_close(again.model.state_dict()[key], value)
    with pytest.raises(ValueError, match="context_length=248"):
        create_model("paper-tiny", pretrained=path)


def test_features_are_normalised_and_similarity_is_cosine():
    bundle = create_model("paper-tiny")
    images = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        img = encode_image(bundle.model, images)
    txt = embed_texts(bundle.model, bundle.tokenizer, ["a", "b c", "d e f", "g"], batch_size=3)
    torch.testing.assert_close(img.norm(dim=-1), torch.ones(3))
    torch.testing.assert_close(txt.norm(dim=-1), torch.ones(4))
    expected = torch.nn.functional.cosine_similarity(img[:, None], txt[None], dim=-1)
    torch.testing.assert_close(similarity(img, txt), expected, atol=1e-6, rtol=0)


def test_missing_checkpoint_names_the_path(tmp_path):
    path = tmp_path / "nope.pt"
    with pytest.raises(FileNotFoundError, match=str(path)):
        create_model("paper-tiny", pretrained=path)


def test_corrupt_checkpoint_names_the_path(tmp_path):
    path = tmp_path / "broken.pt"
    path.write_bytes(b"this is not a torch file")
    with pytest.raises(ValueError, match=f"{path}.*state dict"):
        create_model("paper-tiny", pretrained=path)


def test_checkpoint_of_another_architecture_is_refused(tmp_path):
    small = create_model("paper-small")
    path = tmp_path / "small.pt"
    torch.save(small.model.state_dict(), path)
    with pytest.raises(ValueError, match="shape mismatch"):
        create_model("paper-tiny", pretrained=path)


def test_unknown_model_name():
    with pytest.raises(ValueError, match="unknown model 'no-such-net'"):
        create_model("no-such-net")


def test_training_checkpoint_with_clip_prefix_initialises_a_model(tmp_path):
    torch.manual_seed(2)
    bundle = create_model("paper-tiny")
    path = tmp_path / "last.pt"
    state = {f"clip.{k}": v for k, v in bundle.model.state_dict().items()}
    torch.save({"model": state, "config": {"method": "clip"}, "step": 3}, path)
    again = create_model("paper-tiny", pretrained=path, context_length=248)
    torch.testing.assert_close(
        again.model.positional_embedding[:20], bundle.model.positional_embedding[:20]
    )
    torch.testing.assert_close(again.model.visual.conv1.weight, bundle.model.visual.conv1.weight)


def test_the_study_model_sizes_differ_in_width_only_and_have_the_documented_sizes():
    tiny, micro = (
        json.loads((MODEL_CONFIG_DIR / f"{n}.json").read_text())
        for n in ("paper-tiny-rn", "paper-micro-rn")
    )
    assert tiny["vision_cfg"]["layers"] == micro["vision_cfg"]["layers"]
    assert tiny["text_cfg"]["layers"] == micro["text_cfg"]["layers"]
    for cfg in ("vision_cfg", "text_cfg"):
        assert micro[cfg]["width"] * 2 == tiny[cfg]["width"]
    counts = {
        n: sum(p.numel() for p in create_model(n).model.parameters()) / 1e6
        for n in ("paper-tiny-rn", "paper-micro-rn")
    }
    assert round(counts["paper-tiny-rn"], 1) == 8.5 and round(counts["paper-micro-rn"], 1) == 2.9
