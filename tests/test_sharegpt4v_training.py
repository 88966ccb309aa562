"""ShareGPT4V as training data: which caption file, and a set too small for one batch."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from paperlib.engine.config import load_config
from paperlib.engine.data import build_dataset, build_loader, sharegpt4v_json
from paperlib.models.clip import create_model
from tests.engine_helpers import tiny_config


def _sharegpt4v(root, entries: int, name: str = "captions.json"):
    root.mkdir(exist_ok=True)
    Image.new("RGB", (8, 8), (200, 10, 10)).save(root / "a.jpg")
    items = [
        {"image": "a.jpg", "conversations": [{"value": "q"}, {"value": f"caption {i}"}]}
        for i in range(entries)
    ]
    (root / name).write_text(json.dumps(items))


def _config(root, **data):
    return load_config(
        tiny_config(
            "himo",
            root / "run",
            data={"dataset": "sharegpt4v", "root": str(root), **data},
            train={"batch_size": 4},
        )
    )


def test_the_caption_file_is_named_or_the_only_one(tmp_path):
    _sharegpt4v(tmp_path, 3)
    assert sharegpt4v_json(_config(tmp_path).data).name == "captions.json"
    _sharegpt4v(tmp_path, 3, "another.json")
    with pytest.raises(FileNotFoundError, match="2 .json files.*data.json_file"):
        sharegpt4v_json(_config(tmp_path).data)
    chosen = _config(tmp_path, json_file="captions.json").data
    assert sharegpt4v_json(chosen) == tmp_path / "captions.json"
    with pytest.raises(FileNotFoundError, match="data.json_file"):
        sharegpt4v_json(_config(tmp_path, json_file="nope.json").data)


def test_a_set_smaller_than_a_batch_after_the_held_out_entries_is_named(tmp_path):
    _sharegpt4v(tmp_path, 1002)  # 2 training entries after the 1,000 held out
    config = _config(tmp_path)
    bundle = create_model("paper-tiny")
    dataset = build_dataset(config.data, bundle.preprocess, image_size=32)
    assert len(dataset) == 2
    with pytest.raises(ValueError, match="2 training entries.*first 1,000 are held out"):
        build_loader(config, dataset, bundle.tokenizer, rank=0, world_size=1, start_step=0)
