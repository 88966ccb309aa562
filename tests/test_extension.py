"""The extension points docs/layout.md names: a method and a training dataset added through their
registries alone train, with their config section validated like the built-in ones."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from paperlib.engine.config import ConfigError, load_config
from paperlib.engine.data import SyntheticDataset
from paperlib.engine.loop import train
from paperlib.engine.methods import EuclideanModule, LossResult
from paperlib.engine.registry import DATASET_REGISTRY, METHOD_REGISTRY, Method, TrainingDataset
from paperlib.losses.contrastive import infonce_loss
from paperlib.train import read_log
from tests.engine_helpers import tiny_config


@dataclass
class ScaledConfig:
    """A toy loss's config section: one weight, checked like the built-in ones."""

    weight: float = 2.0

    def __post_init__(self) -> None:
        if not self.weight > 0:
            raise ValueError(f"weight: expected > 0, got {self.weight}")


def scaled_infonce(batch, config: ScaledConfig) -> LossResult:
    loss = config.weight * infonce_loss(batch.image, batch.text, batch.logit_scale)
    return LossResult(loss, {"scaled": loss})


@pytest.fixture
def toy_method(monkeypatch):
    monkeypatch.setitem(
        METHOD_REGISTRY, "toy", Method("toy", scaled_infonce, ScaledConfig, EuclideanModule)
    )


def test_a_method_added_through_the_registry_alone_trains(tmp_path, toy_method):
    config = load_config(tiny_config("toy", tmp_path / "toy", loss={"weight": 3.0}))
    assert isinstance(config.loss, ScaledConfig) and config.loss.weight == 3.0
    toy = train(config)
    clip = train(tiny_config("clip", tmp_path / "clip"))  # same seed, model and batches
    assert toy.step == 4 and [r["step"] for r in read_log(tmp_path / "toy")] == [1, 2, 3, 4]
    # step 1 is scored before any update: 3 × the plain InfoNCE of the same start
    assert toy.history[0]["scaled"] == pytest.approx(3 * clip.history[0]["contrastive"], rel=1e-6)
    assert toy.history[-1]["scaled"] < toy.history[0]["scaled"]  # and it learns


def test_a_registered_method_s_config_is_checked_like_the_others(tmp_path, toy_method):
    with pytest.raises(ConfigError, match="^loss.weight: expected > 0"):
        load_config(tiny_config("toy", tmp_path, loss={"weight": 0.0}))
    with pytest.raises(ConfigError, match="^loss.tau: expected a key of toy's loss"):
        load_config(tiny_config("toy", tmp_path, loss={"tau": 0.9}))
    with pytest.raises(ConfigError, match="^loss.wieght: unknown key"):
        load_config(tiny_config("toy", tmp_path, loss={"wieght": 1.0}))


def test_a_dataset_added_through_the_registry_alone_trains(tmp_path, monkeypatch):
    built = []

    def noise(data, transform, image_size):
        built.append((data.size, image_size))
        return SyntheticDataset(data.size, image_size, seed=data.seed + 1)

    monkeypatch.setitem(
        DATASET_REGISTRY, "noise", TrainingDataset("noise", noise, boxes=True, generated=True)
    )
    raw = tiny_config("argent", tmp_path, data={"dataset": "noise", "size": 32})
    result = train(raw)
    assert built == [(32, 32)] and result.step == 4
    assert all(torch.isfinite(torch.tensor(r["loss"])) for r in result.history)
    with pytest.raises(ConfigError, match="^data.size=8 is smaller than train.batch_size"):
        load_config(tiny_config("clip", tmp_path, data={"dataset": "noise", "size": 8}))


def test_an_unknown_dataset_is_named_with_the_registered_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"^data.dataset: unknown dataset 'nowhere'.*'world'"):
        load_config(tiny_config("clip", tmp_path, data={"dataset": "nowhere"}))
