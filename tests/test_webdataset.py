"""Webdataset shards in GRIT layout: round trip, HyCoCLIP shards, bad records, 2 workers."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest
import torch
import webdataset as wds
from PIL import Image
from torch.utils.data import DataLoader

from paperlib.data.images import LoadReport
from paperlib.data.records import DatasetFormatError
from paperlib.data.sample import collate_samples
from paperlib.data.webdataset import read_shards, record_to_sample, write_shards
from paperlib.data.world import World, WorldDataset


def jpeg_bytes(colour: tuple[int, int, int], size: int = 24) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), colour).save(buffer, format="JPEG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def world_shards(tmp_path_factory):
    world = World(seed=2, image_size=32)
    directory = tmp_path_factory.mktemp("shards")
    return world, write_shards((world.sample(i) for i in range(24)), directory, maxcount=8)


def test_shards_round_trip_every_field_and_pixel(world_shards):
    world, paths = world_shards
    assert len(paths) == 3
    read = list(read_shards(paths))
    assert [s.id for s in read] == [world.sample(i).id for i in range(24)]
    for index, got in enumerate(read):
        want = world.sample(index)
        assert got.texts() == want.texts()
        assert np.array_equal(np.asarray(got.image), np.asarray(want.image))
        for a, b in zip(got.boxes, want.boxes):
            assert np.array_equal(np.asarray(a.image), np.asarray(b.image))
            assert (a.phrase, a.box) == (b.phrase, b.box)


def test_shards_use_the_grit_layout(world_shards):
    world, paths = world_shards
    with tarfile.open(paths[0]) as tar:
        names = tar.getnames()
    key = "world-2-00000000"
    count = len(world.sample(0).boxes)
    expected = {f"{key}.{n}" for n in ("child.png", "child.txt", "numparents.txt", "json")}
    expected |= {f"{key}.parent{k:03d}.{e}" for k in range(count) for e in ("png", "txt")}
    assert {n for n in names if n.startswith(key + ".")} == expected


def test_jpg_shards_decode_close_to_the_original(tmp_path):
    world = World(seed=0, image_size=64)
    paths = write_shards([world.sample(0)], tmp_path, image_format="jpg")
    got = next(iter(read_shards(paths)))
    diff = np.abs(np.asarray(got.image, dtype=int) - np.asarray(world.sample(0).image, dtype=int))
    assert diff.mean() < 4.0


def test_reads_hycoclip_shards_without_json(tmp_path):
    path = str(tmp_path / "grit-000000.tar")
    with wds.TarWriter(path) as writer:
        writer.write(
            {
                "__key__": "000001",
                "child.jpg": jpeg_bytes((200, 30, 30)),
                "child.txt": b"a dog on a red sofa",
                "numparents.txt": b"2",
                "parent000.jpg": jpeg_bytes((10, 10, 10), 12),
                "parent000.txt": b"a dog",
                "parent001.jpg": jpeg_bytes((200, 30, 30), 16),
                "parent001.txt": b"a red sofa",
            }
        )
    (sample,) = list(read_shards([path]))
    assert sample.id == "000001" and sample.caption == "a dog on a red sofa"
    assert [b.phrase for b in sample.boxes] == ["a dog", "a red sofa"]
    assert sample.boxes[1].image.size == (16, 16) and sample.image.mode == "RGB"


def test_missing_field_names_the_key_and_layout():
    record = {"__key__": "k1", "__url__": "s.tar", "child.txt": b"x"}
    with pytest.raises(DatasetFormatError, match=r"s\.tar.*'k1'.*child.*GRIT layout"):
        record_to_sample(record)
    record = {
        "__key__": "k2",
        "child.jpg": jpeg_bytes((0, 0, 0)),
        "child.txt": b"x",
        "numparents.txt": b"1",
    }
    with pytest.raises(DatasetFormatError, match="parent000 is missing"):
        record_to_sample(record)
    with pytest.raises(FileNotFoundError, match="nope.tar"):
        read_shards(["/does/not/exist/nope.tar"])


def test_unreadable_image_is_skipped_and_counted(tmp_path):
    path = str(tmp_path / "bad-000000.tar")
    with wds.TarWriter(path) as writer:
        writer.write({"__key__": "good", "child.jpg": jpeg_bytes((1, 2, 3)), "child.txt": b"ok"})
        writer.write({"__key__": "bad", "child.jpg": b"not an image", "child.txt": b"broken"})
    report = LoadReport()
    samples = list(read_shards([path], report=report))
    assert [s.id for s in samples] == ["good"]
    assert report.loaded == 1 and report.num_skipped == 1


def batches_by_id(loader) -> dict[str, tuple]:
    out = {}
    for batch in loader:
        for k, sample_id in enumerate(batch["id"]):
            out[sample_id] = (batch["caption"][k], batch["chain"][k], batch["image"][k])
    return out


def test_dataloader_with_two_workers_same_samples_from_world_and_shards(tmp_path):
    torch.manual_seed(0)
    world = World(seed=4, image_size=32)
    paths = write_shards((world.sample(i) for i in range(16)), tmp_path, maxcount=4)
    from_world = batches_by_id(
        DataLoader(WorldDataset(4, 16, 32), batch_size=3, num_workers=2, collate_fn=collate_samples)
    )
    shards = read_shards(paths, transform=WorldDataset(4, 1, 32).transform)
    from_shards = batches_by_id(
        DataLoader(shards, batch_size=3, num_workers=2, collate_fn=collate_samples)
    )
    assert sorted(from_world) == sorted(from_shards) == [world.sample(i).id for i in range(16)]
    for sample_id, (caption, chain, image) in from_world.items():
        assert (caption, chain) == from_shards[sample_id][:2]
        assert torch.equal(image, from_shards[sample_id][2])
        index = int(sample_id.rsplit("-", 1)[1])
        assert caption == world.sample(index).caption
        pixels = (image.permute(1, 2, 0) * 255).round().to(torch.uint8).numpy()
        assert pixels.tobytes() == world.sample(index).image.tobytes()
