"""``model.batchnorm: frozen``: a fine-tune keeps its checkpoint's BatchNorm running statistics
(every BatchNorm layer normalises with them in training as in evaluation, none is updated)
while the layers' affine weights train; ``train`` is PyTorch's own behaviour."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from paperlib.engine.config import build_config
from paperlib.engine.evaluation import load_trained
from paperlib.engine.loop import train
from paperlib.engine.methods import build_module
from paperlib.models.batchnorm import batchnorm_layers, untrained_batchnorm
from paperlib.models.clip import create_model
from paperlib.study.plan import bases
from tests.engine_helpers import final_weights, tiny_config

BASE = bases.base_path(bases.MODEL_SMALLER, 0, bases.bases_dir("hyperbolic"))


def _module(batchnorm: str):
    model = {"name": bases.MODEL_SMALLER, "init": str(BASE), "batchnorm": batchnorm}
    return build_module(build_config({"method": "hycoclip", "model": model}))[0]


def _running(module: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in module.state_dict().items() if "running_" in k}


def test_frozen_batchnorm_normalises_with_the_checkpoint_statistics_in_training():
    """A frozen module's training-mode image features are its evaluation-mode ones, exactly,
    and leave the buffers as loaded; PyTorch's training mode normalises by the batch instead
    and moves the running statistics."""
    images = torch.rand(8, 3, 32, 32)
    for mode, same in (("frozen", True), ("train", False)):
        module = _module(mode)
        assert batchnorm_layers(module) and not untrained_batchnorm(module)
        before = _running(module)
        with torch.no_grad():
            evaluated = module.eval().embed_image(images)
            trained = module.train().embed_image(images)
        assert torch.equal(trained, evaluated) is same, mode
        after = _running(module)
        assert all(torch.equal(before[k], after[k]) for k in before) is same, mode
        assert module.training and all(
            layer.training is not same for layer in batchnorm_layers(module)
        )


def test_frozen_batchnorm_stays_frozen_through_an_eval_and_train_round_trip():
    """Validation switches the module to eval and back (``engine.validation``); the BatchNorm
    layers come back in eval mode, the rest in training mode."""
    module = _module("frozen")
    module.eval()
    module.train(True)
    assert module.training and module.clip.transformer.training
    assert not any(layer.training for layer in batchnorm_layers(module))


@pytest.mark.slow
def test_a_frozen_fine_tune_keeps_the_statistics_and_trains_the_affine_weights(tmp_path):
    """Four HyCoCLIP steps from the hyperbolic base: with ``frozen`` every running statistic is
    the base's at the end, every BatchNorm weight has moved; with ``train`` the statistics
    moved too."""
    ends = {}
    for mode in ("frozen", "train"):
        model = {"name": bases.MODEL_SMALLER, "init": str(BASE), "batchnorm": mode}
        train(tiny_config("hycoclip", tmp_path / mode, model=model))
        ends[mode] = final_weights(tmp_path / mode)
    base = _module("train")
    start = base.state_dict()
    layers = [name for name, m in base.named_modules() if m in batchnorm_layers(base)]
    statistics = [f"{name}.{b}" for name in layers for b in ("running_mean", "running_var")]
    assert statistics and set(statistics) <= set(start)
    for key in statistics:
        assert torch.equal(ends["frozen"][key].to(start[key].dtype), start[key]), key
    assert any(not torch.equal(ends["train"][key], start[key]) for key in statistics)
    for key in (f"{name}.weight" for name in layers):
        assert not torch.equal(ends["frozen"][key], start[key]), key
    evaluated, _, _, _ = load_trained(tmp_path / "frozen")  # as the study evaluates it
    for key, value in evaluated.state_dict().items():
        assert torch.equal(value, ends["frozen"][key]), key


def test_frozen_batchnorm_needs_a_checkpoint_and_a_tower_with_batchnorm(tmp_path):
    with pytest.raises(ValueError, match="model.batchnorm: frozen keeps a checkpoint"):
        build_config({"method": "hycoclip", "model": {"batchnorm": "frozen"}})
    with pytest.raises(ValueError, match="model.batchnorm: expected one of"):
        build_config({"method": "hycoclip", "model": {"batchnorm": "eval"}})
    weights = tmp_path / "vit.pt"
    torch.save(create_model("paper-tiny").model.state_dict(), weights)
    vit = {"name": "paper-tiny", "init": str(weights), "batchnorm": "frozen"}
    with pytest.raises(ValueError, match="has no BatchNorm layer"):
        build_module(build_config({"method": "clip", "model": vit}))
