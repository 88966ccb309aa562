"""Long-CLIP's loss (PCM + long/short InfoNCE) against sklearn / open_clip, and its engine method."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from open_clip.loss import ClipLoss
from sklearn.decomposition import PCA

from paperlib.engine.config import ConfigError, build_config, load_config
from paperlib.engine.data import Collate, build_dataset, build_loader, longclip_short_caption
from paperlib.engine.loop import train
from paperlib.engine.methods import build_module
from paperlib.losses.contrastive import infonce_loss
from paperlib.losses.longclip import longclip_loss, pca_reconstruct
from paperlib.train import read_log, train_distributed
from tests.engine_helpers import assert_same_updates, final_weights, initial_weights, tiny_config


def _features(n: int, d: int, seed: int, dtype=torch.float64) -> torch.Tensor:
    """Unnormalised (n, d) features with well-separated principal variances."""
    g = torch.Generator().manual_seed(seed)
    scales = torch.logspace(0.5, -1.0, d, dtype=dtype)
    return torch.randn(n, d, generator=g, dtype=dtype) * scales + 0.4


def _batch(n: int = 12, d: int = 6, seed: int = 0):
    """(image, long_text, short_text, logit_scale) in float64; only the image unnormalised."""
    image = _features(n, d, seed)
    long_text = F.normalize(image + 0.3 * _features(n, d, seed + 1), dim=1)
    short_text = F.normalize(image + 0.5 * _features(n, d, seed + 2), dim=1)
    return image, long_text, short_text, torch.tensor(math.log(10.0), dtype=torch.float64)


# --------------------------------------------------------------------------- PCA


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shape", [(40, 12), (10, 24)])  # dim <= batch and batch < dim
@pytest.mark.parametrize("k", [1, 3, 7])
def test_pca_reconstruct_matches_sklearn(shape, k, dtype):
    x = _features(*shape, seed=1)
    ref = PCA(n_components=k, svd_solver="full").fit(x.numpy())
    expected = ref.inverse_transform(ref.transform(x.numpy()))
    out = pca_reconstruct(x.to(dtype), k)
    assert out.dtype == dtype and out.shape == x.shape
    np.testing.assert_allclose(out.double().numpy(), expected, atol=1e-5)


def test_pca_reconstruct_keeps_input_when_k_reaches_rank():
    x = _features(20, 10, seed=3)
    assert pca_reconstruct(x, 10) is x and pca_reconstruct(x, 32) is x  # k >= min(batch, dim)
    g = torch.Generator().manual_seed(4)
    low = (
        torch.randn(20, 3, generator=g, dtype=torch.float64)
        @ torch.randn(3, 10, generator=g, dtype=torch.float64)
        + 0.5
    )  # centred rank 3
    for k in (3, 5):
        np.testing.assert_allclose(pca_reconstruct(low, k).numpy(), low.numpy(), atol=1e-10)
    assert not torch.allclose(pca_reconstruct(low, 2), low, atol=1e-3)


def test_pca_reconstruct_gradcheck():
    x = _features(9, 5, seed=5).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: pca_reconstruct(t, 2), (x,), eps=1e-6, atol=1e-5)


def test_pca_reconstruct_rejects_bad_input():
    with pytest.raises(ValueError, match="batch, dim"):
        pca_reconstruct(torch.ones(3), 1)
    with pytest.raises(ValueError, match="positive int"):
        pca_reconstruct(torch.ones(3, 4), 0)


# --------------------------------------------------------------------------- loss


def test_longclip_loss_gradcheck():
    image, long_text, short_text, scale = _batch(n=8, d=5)
    # the PCA runs on the normalised image batch: distinct singular values, a gap at k = 2
    s = torch.linalg.svdvals(F.normalize(image, dim=1) - F.normalize(image, dim=1).mean(0))
    assert (s[:-1] / s[1:]).min() > 1.05 and s[1] / s[2] > 1.2
    inputs = tuple(t.clone().requires_grad_() for t in (image, long_text, short_text, scale))

    def total(*args):
        return longclip_loss(*args, pcm_dim=2, short_weight=0.3).total

    assert torch.autograd.gradcheck(total, inputs, eps=1e-6, atol=1e-5)


def test_short_weight_zero_is_infonce_on_long_texts():
    image, long_text, short_text, scale = _batch()
    out = longclip_loss(image, long_text, short_text, scale, pcm_dim=3, short_weight=0.0)
    expected = infonce_loss(F.normalize(image, dim=1), long_text, scale, label_smoothing=0.1)
    torch.testing.assert_close(out.total, expected, rtol=1e-12, atol=0)
    torch.testing.assert_close(out.long, expected, rtol=1e-12, atol=0)
    assert out.short.isfinite() and not out.short.requires_grad


def test_terms_match_open_clip_clip_loss():
    image, long_text, short_text, scale = _batch(n=16, d=8)
    out = longclip_loss(image, long_text, short_text, scale, pcm_dim=3, label_smoothing=0.0)
    clip_loss = ClipLoss()
    unit = F.normalize(image, dim=1)
    long = clip_loss(unit, long_text, scale.exp())
    short = clip_loss(pca_reconstruct(unit, 3), short_text, scale.exp())  # PCM: not renormalised
    torch.testing.assert_close(out.long, long, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out.short, short, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out.total, 0.5 * (long + short), rtol=1e-12, atol=1e-12)
    assert not torch.allclose(out.short, clip_loss(unit, short_text, scale.exp()))


def test_normalisation_and_scope():
    image, long_text, short_text, scale = _batch()
    out = longclip_loss(image, long_text, short_text, scale, pcm_dim=3, short_weight=0.25)
    scaled = longclip_loss(3.0 * image, long_text, short_text, scale, pcm_dim=3, short_weight=0.25)
    local = longclip_loss(
        image, long_text, short_text, scale, pcm_dim=3, short_weight=0.25, scope="local"
    )
    for other in (scaled, local):  # normalised first; one process: global == local
        torch.testing.assert_close(other.total, out.total, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(out.total, 0.75 * out.long + 0.25 * out.short)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"pcm_dim": 0}, "pcm_dim"),
        ({"short_weight": 1.5}, "short_weight"),
        ({"scope": "rank"}, "scope"),
    ],
)
def test_longclip_loss_rejects_bad_options(kwargs, match):
    image, long_text, short_text, scale = _batch()
    with pytest.raises(ValueError, match=match):
        longclip_loss(image, long_text, short_text, scale, **kwargs)
    with pytest.raises(ValueError, match="shape"):
        longclip_loss(image, long_text[:5], short_text, scale)


# --------------------------------------------------------------------------- data, config


def test_short_caption_fallback_is_long_clips_first_sentence():
    assert longclip_short_caption("A red dog.\nIt runs. Fast.") == "A red dog"
    assert longclip_short_caption("No period") == "No period"
    seen = []

    def tokenizer(texts):
        seen.append(list(texts))
        return torch.zeros(len(texts), 4, dtype=torch.long)

    items = [
        {"image": torch.zeros(3, 2, 2), "caption": c, "short_caption": s}
        for c, s in [("A cat. On a mat.", ""), ("Two dogs. Both run.", "Dogs")]
    ]
    batch = Collate(tokenizer, short_text=True, short_source="dataset")(items)
    assert set(batch) == {"image", "text", "short_text"}
    assert seen == [["A cat. On a mat.", "Two dogs. Both run."], ["A cat", "Dogs"]]
    assert "short_text" not in Collate(tokenizer)(items)


def test_long_clips_short_text_is_the_first_sentence_unless_the_dataset_is_asked_for():
    """The default (both papers' ShareGPT4V): the first sentence, even where the dataset has a
    short caption of its own; "dataset" keeps the old choice; anything else is named."""
    seen = []

    def tokenizer(texts):
        seen.append(list(texts))
        return torch.zeros(len(texts), 4, dtype=torch.long)

    items = [
        {"image": torch.zeros(3, 2, 2), "caption": "Two dogs. Both run.", "short_caption": "Dogs"}
    ]
    Collate(tokenizer, short_text=True)(items)
    assert seen[-1] == ["Two dogs"]
    assert build_config({"method": "longclip"}).data.short_text == "first-sentence"
    with pytest.raises(ConfigError, match="data.short_text"):
        build_config({"method": "longclip", "data": {"short_text": "words"}})
    with pytest.raises(ValueError, match="data.short_text"):
        Collate(tokenizer, short_text=True, short_source="words")(items)


def test_config_defaults_and_validation(tmp_path):
    config = build_config({"method": "longclip"})
    lo, m, o = config.loss, config.model, config.optim
    assert (lo.label_smoothing, lo.pcm_dim, lo.short_weight, lo.scope) == (0.1, 32, 0.5, "global")
    assert (m.context_length, m.long_text) == (248, "residual")
    assert math.isclose(m.logit_scale_init, math.log(100)) and o.decay_logit_scale
    for raw, key in [
        ({"pcm_dim": 0}, "loss.pcm_dim"),
        ({"short_weight": 1.5}, "loss.short_weight"),
        ({"short_weight": -0.1}, "loss.short_weight"),
    ]:
        with pytest.raises(ConfigError) as err:
            build_config({"method": "longclip", "loss": raw})
        assert str(err.value).startswith(f"{key}:")
    baseline = load_config(tiny_config("longclip", tmp_path, loss={"short_weight": 0.0}))
    module, preprocess, tokenizer = build_module(baseline)
    dataset = build_dataset(baseline.data, preprocess, image_size=32)
    loader = build_loader(baseline, dataset, tokenizer, rank=0, world_size=1, start_step=0)
    assert not loader.collate_fn.short_text  # the plain baseline never encodes short captions


# --------------------------------------------------------------------------- engine


def test_engine_trains_longclip_and_logs_both_terms(tmp_path):
    raw = tiny_config("longclip", tmp_path, loss={"pcm_dim": 4}, train={"steps": 3})
    result = train(raw)  # batch 16, 4 components: the PCM's SVD path
    log = read_log(tmp_path)
    assert [r["step"] for r in log] == [1, 2, 3] and log == result.history
    for record in log:
        assert {"long", "short", "loss"} <= set(record) and "contrastive" not in record
        assert all(math.isfinite(record[k]) for k in ("long", "short", "loss"))
        assert record["loss"] == pytest.approx(0.5 * (record["long"] + record["short"]), rel=1e-6)


@pytest.mark.slow
@pytest.mark.distributed
def test_two_process_gloo_matches_single_process(tmp_path):
    """The PCM on the gathered batch (scope global): DDP reproduces the single-process run."""
    sections = {"train": {"steps": 3, "batch_size": 16}, "loss": {"pcm_dim": 4}}
    start = initial_weights(tiny_config("longclip", tmp_path, **sections), tmp_path / "start")
    single = train(tiny_config("longclip", tmp_path / "single", **sections))
    train_distributed(tiny_config("longclip", tmp_path / "ddp", **sections), 2, "longclip/ddp")
    log = [json.loads(x) for x in (tmp_path / "ddp" / "log.jsonl").read_text().splitlines()]
    curve = [r for r in log if "loss" in r]
    assert [r["step"] for r in curve] == [1, 2, 3]
    for ref, got in zip(single.history, curve):
        for key in ("loss", "long", "short", "logit_scale"):
            assert got[key] == pytest.approx(ref[key], rel=2e-4, abs=1e-6), (ref["step"], key)
    assert_same_updates(start, final_weights(tmp_path / "single"), final_weights(tmp_path / "ddp"))
