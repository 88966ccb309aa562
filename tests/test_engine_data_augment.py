"""HyCoCLIP's training views (RandomResizedCrop) and per-visit box draws
(docs/methods/argent.md#hycoclip)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms as T

from paperlib.data.webdataset import write_shards
from paperlib.data.world import World
from paperlib.engine.config import ConfigError, DataConfig, build_config
from paperlib.engine.data import BoxItems, augmented, build_dataset, build_loader
from paperlib.models.clip import create_model
from tests.engine_helpers import tiny_config


def gradient_image(size: int = 64) -> Image.Image:
    ramp = np.linspace(0, 255, size, dtype=np.uint8)
    return Image.fromarray(np.stack([np.tile(ramp, (size, 1))] * 3, axis=-1))


def test_random_resized_crop_replaces_resize_and_centre_crop_only():
    preprocess = create_model("paper-tiny").preprocess
    assert augmented(preprocess, DataConfig(), 32) is preprocess  # augment="none"
    train = augmented(preprocess, DataConfig(augment="random-resized-crop"), 32)
    first, *rest = train.transforms
    assert isinstance(first, T.RandomResizedCrop) and first.scale == (0.5, 1.0)
    assert first.size == (32, 32) and first.interpolation == T.InterpolationMode.BICUBIC
    kept = [t for t in preprocess.transforms if not isinstance(t, (T.Resize, T.CenterCrop))]
    assert rest == kept and any(isinstance(t, T.Normalize) for t in rest)
    torch.manual_seed(0)
    views = [train(gradient_image()) for _ in range(4)]
    assert all(v.shape == (3, 32, 32) for v in views)
    assert not all(torch.equal(views[0], v) for v in views[1:])  # random views


def test_box_draw_per_visit_changes_and_fixed_does_not():
    per_visit = BoxItems(lambda x: x, seed=3)
    fixed = BoxItems(lambda x: x, seed=3, draw="fixed")
    draws = {"per-visit": [], "fixed": []}
    for visit in range(20):
        per_visit.visit = fixed.visit = visit
        draws["per-visit"].append(per_visit.choice("sample-7", 6))
        draws["fixed"].append(fixed.choice("sample-7", 6))
    assert len(set(draws["fixed"])) == 1
    assert len(set(draws["per-visit"])) >= 3
    again = BoxItems(lambda x: x, seed=3)
    again.visit = 5
    assert again.choice("sample-7", 6) == draws["per-visit"][5]  # a function of (seed, id, visit)
    with pytest.raises(ValueError, match="data.box_draw"):
        BoxItems(lambda x: x, seed=0, draw="random")


def _box_texts(root, tmp_path, draw: str, start_step: int, steps: int) -> list[torch.Tensor]:
    raw = tiny_config(
        "argent",
        tmp_path / f"run-{draw}",
        data={
            "dataset": "webdataset",
            "root": str(root),
            "box_draw": draw,
            "shard_shuffle": False,  # in file order: pass k + 1 repeats pass k's samples
            "shuffle_buffer": 0,
        },
        train={"batch_size": 4, "steps": 100},
    )
    config = build_config(raw)
    bundle = create_model("paper-tiny")
    dataset = build_dataset(config.data, bundle.preprocess, image_size=32)
    loader = build_loader(
        config, dataset, bundle.tokenizer, rank=0, world_size=1, start_step=start_step
    )
    return [batch["box_text"] for batch in itertools.islice(loader, steps)]


def test_shards_draw_a_new_box_each_pass_and_resume_in_the_same_pass(tmp_path):
    world = World(seed=5, image_size=32)
    samples = [world.sample(i) for i in range(8)]
    assert all(len(s.boxes) > 1 for s in samples)
    write_shards(samples, tmp_path / "shards", maxcount=4)
    per_visit = _box_texts(tmp_path / "shards", tmp_path, "per-visit", 0, 6)  # 2 per pass
    fixed = _box_texts(tmp_path / "shards", tmp_path, "fixed", 0, 6)
    assert all(torch.equal(fixed[k], fixed[k + 2]) for k in range(4))
    assert not all(torch.equal(per_visit[k], per_visit[k + 2]) for k in range(4))
    resumed = _box_texts(tmp_path / "shards", tmp_path, "per-visit", 3, 3)
    assert all(torch.equal(a, b) for a, b in zip(resumed, per_visit[3:]))


def test_augment_and_crop_scale_are_checked():
    base = tiny_config("clip", "runs/x")
    with pytest.raises(ConfigError, match="data.augment"):
        build_config({**base, "data": {**base["data"], "augment": "random-crop"}})
    with pytest.raises(ConfigError, match="data.crop_scale"):
        build_config({**base, "data": {**base["data"], "crop_scale": [0.8, 0.5]}})
