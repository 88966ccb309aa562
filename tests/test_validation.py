"""In-training validation: its metrics equal the evaluation's on the same world samples, it is
logged at step 0 and every ``val_every`` steps, and it leaves the training itself unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from paperlib.data.world import WorldDataset
from paperlib.engine.evaluation import evaluate, load_trained
from paperlib.engine.validation import (
    PARENT_KINDS,
    VALIDATION_SEED,
    build_validation_set,
    validate,
)
from paperlib.train import read_log, read_validation, train_run

METRICS = ["short_i2t_r1", "long_i2t_r1", "zeroshot_L1", "zeroshot_L3"]


def _config(output, method="clip", val_every=0, steps=12):
    return {
        "method": method,
        "model": {"name": "paper-tiny-rn"},
        "data": {"dataset": "world", "size": 256, "caption": "short_caption", "seed": 3},
        "optim": {"lr": 1e-3},
        "train": {
            "steps": steps,
            "batch_size": 32,
            "log_every": 2,
            "val_every": val_every,
            "val_size": 64,
            "val_metrics": METRICS,
            "output_dir": str(output),
            "progress": False,
            "device": "cpu",
        },
    }


@pytest.mark.slow
@pytest.mark.parametrize("method", ["clip", "argent"])
def test_validation_equals_the_evaluation_of_the_same_samples(tmp_path, method):
    train_run(_config(tmp_path / "run", method, val_every=6))
    records = read_validation(tmp_path / "run")
    assert [r["step"] for r in records] == [0, 6, 12] and records[-1]["val_size"] == 64
    rows = evaluate(
        tmp_path / "run",
        ["world-short", "world-long", "world-zeroshot"],
        output_dir=tmp_path / "eval",
        world_size=64,
        world_seed=VALIDATION_SEED,
    )
    found = {row["dataset"]: row["metrics"] for row in rows}
    last = records[-1]["val"]
    assert last["short_i2t_r1"] == pytest.approx(found["world-short"]["text_retrieval_recall@1"])
    assert last["long_i2t_r1"] == pytest.approx(found["world-long"]["text_retrieval_recall@1"])
    assert last["zeroshot_L1"] == pytest.approx(found["world-zeroshot-L1"]["acc1"])
    assert last["zeroshot_L3"] == pytest.approx(found["world-zeroshot-L3"]["acc1"])


@pytest.mark.slow
def test_validation_does_not_change_the_training(tmp_path):
    plain = read_log(train_run(_config(tmp_path / "a")).output_dir)
    validated = read_log(train_run(_config(tmp_path / "b", val_every=4)).output_dir)
    assert [r["loss"] for r in plain] == [r["loss"] for r in validated]  # BatchNorm included


def test_validate_restores_the_training_mode_and_refuses_unknown_metrics(tmp_path):
    train_run(_config(tmp_path / "run", steps=0))
    module, preprocess, tokenizer, _ = load_trained(tmp_path / "run")
    data = build_validation_set(16, 32, preprocess, tokenizer, ["short_i2t_r1"])
    module.train()
    out = validate(module, data, ["short_i2t_r1"])
    assert module.training and 0.0 <= out["short_i2t_r1"] <= 1.0
    with pytest.raises(ValueError, match="train.val_metrics"):
        build_validation_set(4, 32, preprocess, tokenizer, ["top5"])
    assert json.loads((tmp_path / "run" / "config.json").read_text())["train"]["val_every"] == 0
    assert torch.is_tensor(data.images) and data.images.shape[0] == 16


PARENTS = [f"{stat}_{kind}" for stat in ("inside", "norm") for kind in PARENT_KINDS]


def test_parent_metrics_count_the_held_out_parents_inside_the_aperture_radius(tmp_path):
    """``inside_<kind>`` / ``norm_<kind>`` against numpy over the features of the parents the
    training items of the validation world carry (``WorldDataset``'s own box choice)."""
    raw = _config(tmp_path / "run", "hycoclip", steps=0)
    raw["model"].update(curv_init=4.0)  # a radius of 0.1, among the random model's norms
    train_run(raw)
    module, preprocess, tokenizer, _ = load_trained(tmp_path / "run")
    data = build_validation_set(24, 32, preprocess, tokenizer, PARENTS)
    items = WorldDataset(VALIDATION_SEED, 24, image_size=32)
    phrases = [items.raw_item(i)["box_phrase"] for i in range(24)]
    assert torch.equal(data.texts["box_text"], tokenizer(phrases))
    crops = torch.stack([preprocess(items.raw_item(i)["box_image"]) for i in range(24)])
    assert torch.equal(data.box_images, crops)
    out = validate(module, data, PARENTS)
    module.eval()
    with torch.no_grad():
        norms = {
            "short": module.embed_text(data.texts["short"]).norm(dim=-1).numpy(),
            "box_text": module.embed_text(tokenizer(phrases)).norm(dim=-1).numpy(),
            "box_image": module.embed_image(crops).norm(dim=-1).numpy(),
        }
    radius = 2 * 0.1 / np.sqrt(module.model.curv.item())
    for kind, values in norms.items():
        assert out[f"inside_{kind}"] == pytest.approx(np.mean(values < radius), abs=1e-12)
        assert out[f"norm_{kind}"] == pytest.approx(np.mean(values), rel=1e-5)
    assert 0.0 < out["inside_short"] + out["inside_box_text"] + out["inside_box_image"]
    train_run(_config(tmp_path / "clip", steps=0))
    clip, preprocess, tokenizer, _ = load_trained(tmp_path / "clip")
    euclidean = build_validation_set(4, 32, preprocess, tokenizer, PARENTS)
    with pytest.raises(ValueError, match="inside_short measures a hyperbolic model"):
        validate(clip, euclidean, PARENTS)
