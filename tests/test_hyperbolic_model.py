"""MERU-style hyperbolic CLIP head over an open_clip model (docs/methods/argent.md#meru)."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from paperlib.geometry.lorentz import exp_map0, pairwise_dist
from paperlib.losses.batch import HyperbolicBatch
from paperlib.losses.entailment import meru_loss
from paperlib.models.clip import create_model
from paperlib.models.hyperbolic import HyperbolicCLIP, alpha_for_norm


@pytest.fixture(scope="module")
def bundle():
    torch.manual_seed(0)
    model, _, tokenizer = create_model("paper-tiny")
    return HyperbolicCLIP(model), tokenizer


def _batch(tokenizer, n=4):
    torch.manual_seed(1)
    images = torch.randn(n, 3, 32, 32)
    tokens = tokenizer([f"a photo of thing {i}" for i in range(n)])
    return images, tokens


def test_initial_values(bundle):
    model, _ = bundle
    assert model.curv.item() == pytest.approx(1.0)
    assert model.visual_alpha.item() == pytest.approx(math.log(512**-0.5))
    assert model.logit_scale.item() == pytest.approx(math.log(1 / 0.07))
    assert not model.clip.logit_scale.requires_grad


def test_features_are_exp_map_of_scaled_open_clip_features(bundle):
    model, tokenizer = bundle
    images, tokens = _batch(tokenizer)
    with torch.no_grad():
        out = model(images, tokens)
        raw = model.clip.encode_image(images, normalize=False)
        expected = exp_map0(raw * model.visual_alpha.exp(), model.curv)
        raw_text = model.clip.encode_text(tokens, normalize=False)
        expected_text = exp_map0(raw_text * model.textual_alpha.exp(), model.curv)
    torch.testing.assert_close(out["image_features"], expected)
    torch.testing.assert_close(out["text_features"], expected_text)
    logits = model.logits(out["image_features"], out["text_features"])
    ref = -pairwise_dist(out["image_features"], out["text_features"], 1.0) / 0.07
    torch.testing.assert_close(logits, ref, rtol=1e-5, atol=1e-5)


def test_bf16_autocast_features_are_float32(bundle):
    model, tokenizer = bundle
    images, tokens = _batch(tokenizer)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        features = model.encode_image(images)
    assert features.dtype == torch.float32 and bool(torch.isfinite(features).all())


def test_scalars_are_clamped_by_projection():
    model, tokenizer = HyperbolicCLIP(create_model("paper-tiny").model, curv_init=0.5), None
    with torch.no_grad():
        model.visual_alpha.fill_(1.0)
        model.textual_alpha.fill_(-3.0)
        model.logit_scale.fill_(10.0)
        model.log_curv.fill_(math.log(100.0))
    model.clamp_parameters_()
    assert model.visual_alpha.item() == 0.0 and model.textual_alpha.item() == -3.0
    assert model.logit_scale.item() == pytest.approx(math.log(100.0))
    assert model.curv.item() == pytest.approx(5.0)
    with torch.no_grad():
        model.log_curv.fill_(math.log(1e-3))
    model.clamp_parameters_()
    assert model.curv.item() == pytest.approx(0.05)
    del tokenizer


def test_param_groups_exclude_scalars_norms_and_biases(bundle):
    model, _ = bundle
    groups = model.param_groups(weight_decay=0.2)
    decay, no_decay = ({id(p) for p in g["params"]} for g in groups)
    assert groups[0]["weight_decay"] == 0.2 and groups[1]["weight_decay"] == 0.0
    trainable = {id(p) for p in model.parameters() if p.requires_grad}
    assert decay | no_decay == trainable and not decay & no_decay
    for p in (model.visual_alpha, model.textual_alpha, model.log_curv, model.logit_scale):
        assert id(p) in no_decay
    for name, p in model.named_parameters():
        if p.requires_grad and (p.ndim < 2 or name.endswith("bias")):
            assert id(p) in no_decay, name
    assert id(model.clip.visual.conv1.weight) in decay


def test_training_step_gives_finite_gradients_to_every_scalar(bundle):
    model, tokenizer = bundle
    images, tokens = _batch(tokenizer)
    optimiser = torch.optim.AdamW(model.param_groups(0.2), lr=1e-3)
    image_features = model.encode_image(images)
    text_features = model.encode_text(tokens)
    batch = HyperbolicBatch(image_features, text_features, model.curv, model.logit_scale)
    loss = meru_loss(batch).total
    loss.backward()
    for p in (model.visual_alpha, model.textual_alpha, model.log_curv, model.logit_scale):
        assert p.grad is not None and bool(torch.isfinite(p.grad)), p
    optimiser.step()
    assert bool(torch.isfinite(model.log_curv))


def test_rejects_bad_curvature():
    with pytest.raises(ValueError, match="curv_init"):
        HyperbolicCLIP(create_model("paper-tiny").model, curv_init=0.0)


def test_alpha_for_norm_scales_the_mean_norm_to_the_target():
    torch.manual_seed(2)
    features = torch.randn(32, 16) * 40.0
    for norm in (0.5, 1.0, 2.0):
        alpha = alpha_for_norm(features, norm)
        scaled = features * math.exp(alpha)
        assert scaled.norm(dim=-1).mean().item() == pytest.approx(norm, rel=1e-5)
    short = torch.randn(8, 16) * 1e-3  # already shorter: α stays at MERU's bound, 0
    assert alpha_for_norm(short, 1.0) == 0.0
    for bad in (torch.zeros(4, 16), torch.full((4, 16), float("nan"))):
        with pytest.raises(ValueError, match="feature-norm.*finite, positive"):
            alpha_for_norm(bad)


def _trained_batchnorm(clip, images: torch.Tensor) -> None:
    """Update ``clip``'s BatchNorm statistics on a few other batches, as training would."""
    clip.train()
    with torch.no_grad():
        for i in range(3):
            clip.encode_image(images.roll(i + 1, dims=-1) * 0.5, normalize=False)


def test_calibrate_alpha_sets_each_tower_from_its_own_features_and_keeps_batchnorm():
    """With trained BatchNorm statistics, α is measured in eval mode and the statistics kept."""
    torch.manual_seed(3)
    clip, _, tokenizer = create_model("paper-tiny-rn")
    images, tokens = _batch(tokenizer, n=6)
    _trained_batchnorm(clip, images)
    model = HyperbolicCLIP(clip).train()
    buffers = {k: v.clone() for k, v in model.named_buffers() if "running" in k}
    model.calibrate_alpha_(images, tokens, norm=0.02)  # below both raw norms
    assert model.training  # its mode is given back
    for key, value in model.named_buffers():
        if key in buffers:
            torch.testing.assert_close(value, buffers[key])  # eval mode: statistics kept
    model.eval()
    with torch.no_grad():
        image = model.clip.encode_image(images, normalize=False) * model.visual_alpha.exp()
        text = model.clip.encode_text(tokens, normalize=False) * model.textual_alpha.exp()
    assert image.norm(dim=-1).mean().item() == pytest.approx(0.02, rel=1e-4)
    assert text.norm(dim=-1).mean().item() == pytest.approx(0.02, rel=1e-4)
    assert model.visual_alpha.item() != pytest.approx(model.textual_alpha.item())


def test_calibrate_alpha_of_a_random_tower_measures_what_its_first_step_sees():
    """A random ResNet's eval-mode features are one constant vector (its BatchNorm statistics
    were never updated), so α is measured on the train-mode features, the ones the loss lifts;
    the BatchNorm buffers are given back bit for bit."""
    torch.manual_seed(4)
    clip, _, tokenizer = create_model("paper-tiny-rn")
    model = HyperbolicCLIP(clip).train()
    images, tokens = _batch(tokenizer, n=8)
    reference = copy.deepcopy(clip).train()  # the independent reference: a copy's first step
    with torch.no_grad():
        step = reference.encode_image(images, normalize=False)
        constant = reference.eval().encode_image(images, normalize=False)
    spread = (constant - constant.mean(0)).norm(dim=-1).max() / constant.norm(dim=-1).mean()
    assert spread < 0.01  # eval mode: all but the same vector for every input, and short
    assert step.norm(dim=-1).mean() > 5 * constant.norm(dim=-1).mean()
    buffers = {k: v.clone() for k, v in model.named_buffers()}
    model.calibrate_alpha_(images, tokens, norm=1.0)
    for key, value in model.named_buffers():
        assert torch.equal(value, buffers[key]), key
    expected = min(0.0, math.log(1.0 / step.norm(dim=-1).mean().item()))
    assert model.visual_alpha.item() == pytest.approx(expected, abs=1e-6)
    assert model.visual_alpha.item() < 0.0  # the train-mode features are longer than 1
    lifted = (step * model.visual_alpha.exp()).norm(dim=-1).mean().item()
    assert lifted == pytest.approx(1.0, rel=1e-5)
