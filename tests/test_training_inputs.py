"""Training data as researchers have it: open_clip-layout shards and box-less GRIT-layout
shards for the methods without box terms (a box method refused naming the sample), shard lists
as webdataset spells them (braces, ``::``, ``pipe:``) with an exact resume, and ShareGPT4V's
held-out size as a config key."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from PIL import Image
from torch.utils.data import DataLoader

from paperlib.data.webdataset import (
    ShardStream,
    raw_records,
    record_to_sample,
    shard_urls,
    write_shards,
)
from paperlib.data.world import World
from paperlib.engine.config import ConfigError, load_config
from paperlib.engine.data import build_dataset
from paperlib.engine.loop import train
from paperlib.models.clip import create_model
from tests.engine_helpers import tiny_config
from tests.real_formats import caption, colour, openclip_shards, sharegpt4v_linked


def _shards(tmp_path, **data):
    return {"dataset": "webdataset", "root": str(tmp_path / "shards"), "shuffle_buffer": 4, **data}


def test_openclip_layout_records_read_as_samples_without_boxes(tmp_path):
    (shard,) = openclip_shards(tmp_path / "shards", 3, per_shard=4)
    samples = [record_to_sample(r) for r in raw_records([str(shard)])]
    assert [s.id for s in samples] == ["000000000", "000000001", "000000002"]
    assert [s.caption for s in samples] == [caption(i) for i in range(3)]
    assert all(s.boxes == [] for s in samples)
    pixels = np.asarray(samples[2].image, dtype=int)[12, 12]
    assert np.abs(pixels - colour(2)).max() <= 8  # the jpg itself, not its json


@pytest.mark.parametrize("method", ["clip", "himo"])
def test_openclip_layout_shards_train_the_methods_without_boxes(tmp_path, method):
    openclip_shards(tmp_path / "shards", 8)
    raw = tiny_config(
        method, tmp_path / "run", data=_shards(tmp_path), train={"steps": 2, "batch_size": 4}
    )
    assert train(raw).status == "finished"


def test_boxless_grit_layout_shards_train_himo(tmp_path):
    world = World(seed=1, image_size=32)
    samples = [world.sample(i) for i in range(8)]
    for sample in samples:
        sample.boxes = []  # numparents.txt 0
    write_shards(samples, tmp_path / "shards", maxcount=4)
    raw = tiny_config(
        "himo", tmp_path / "run", data=_shards(tmp_path), train={"steps": 2, "batch_size": 4}
    )
    assert train(raw).status == "finished"


def test_a_box_method_on_boxless_shards_is_refused_naming_the_sample(tmp_path):
    openclip_shards(tmp_path / "shards", 8)
    raw = tiny_config(
        "argent", tmp_path / "run", data=_shards(tmp_path), train={"steps": 2, "batch_size": 4}
    )
    with pytest.raises(ValueError, match=r"sample '\d{9}' has no box.*grit_boxes"):
        train(raw)


def _keys(stream: ShardStream, start: int, count: int) -> list[str]:
    stream.place(rank=0, world_size=1, batches=start, local_batch=2)
    loader = DataLoader(stream, batch_size=2, collate_fn=list)
    return [k for batch in itertools.islice(loader, count) for k in batch]


def _key(record, visit):
    return f"{visit}:{record['__key__']}"


def test_shard_lists_as_webdataset_spells_them_give_the_same_stream(tmp_path):
    shards = openclip_shards(tmp_path / "shards", 12, per_shard=2)  # 000000.tar .. 000005.tar
    folder = shard_urls(tmp_path / "shards")
    braces = shard_urls(
        f"{tmp_path}/shards/{{000000..000002}}.tar::{tmp_path}/shards/{{000003..000005}}.tar"
    )
    assert folder == braces == [str(s) for s in shards]
    piped = shard_urls(f"pipe:cat {tmp_path}/shards/{{000000..000005}}.tar")
    assert piped == [f"pipe:cat {s}" for s in shards]
    straight = _keys(ShardStream(folder, _key, seed=3, buffer=5), 0, 14)
    assert _keys(ShardStream(piped, _key, seed=3, buffer=5), 0, 14) == straight
    # a resume over pipe: URLs (record counts read from the streamed tar) continues exactly
    assert _keys(ShardStream(piped, _key, seed=3, buffer=5), 5, 9) == straight[10:]


def test_a_shard_list_with_missing_files_is_refused_by_name(tmp_path):
    openclip_shards(tmp_path / "shards", 4, per_shard=2)
    data = _shards(tmp_path, root=f"{tmp_path}/shards/{{000000..000002}}.tar")
    with pytest.raises(
        ConfigError, match=r"data.root: .*1 of 3 shard\(s\) not found \(.*000002.tar\)"
    ):
        load_config(tiny_config("clip", tmp_path / "run", data=data))
    with pytest.raises(ConfigError, match="no .tar shards in"):
        load_config(
            tiny_config("clip", tmp_path / "run", data=_shards(tmp_path, root=str(tmp_path)))
        )


def test_sharegpt4v_held_out_size_is_a_config_key(tmp_path):
    json_path = sharegpt4v_linked(tmp_path / "sharegpt4v", 10, tmp_path / "kept" / "coco")
    bundle = create_model("paper-tiny")
    data = {"dataset": "sharegpt4v", "root": str(json_path.parent)}
    sizes = {}
    for held_out in (0, 3, 1000):
        config = load_config(
            tiny_config("himo", tmp_path / "r", data={**data, "held_out": held_out})
        )
        sizes[held_out] = len(build_dataset(config.data, bundle.preprocess, image_size=32))
    assert sizes == {0: 10, 3: 7, 1000: 0}
    with pytest.raises(ConfigError, match="data.held_out: expected >= 0"):
        load_config(tiny_config("himo", tmp_path / "r", data={**data, "held_out": -1}))
    first = json.loads(json_path.read_text())[3]["conversations"][1]["value"]
    config = load_config(tiny_config("himo", tmp_path / "r", data={**data, "held_out": 3}))
    item = build_dataset(config.data, bundle.preprocess, image_size=32)[0]
    assert item["caption"] == first  # training starts after the held-out entries
    assert Image.open(tmp_path / "sharegpt4v" / "coco" / f"{3:012d}.jpg").size == (24, 24)
