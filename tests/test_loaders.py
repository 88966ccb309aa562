"""Loaders against fixtures written in each published format
(docs/methods/conventions.md#dataset-formats) and the real files."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest
from PIL import Image

from paperlib.data import loaders
from paperlib.data.images import LoadReport
from paperlib.data.loaders import (
    DatasetFormatError,
    download,
    fetch_hierarcaps,
    load_coco_captions,
    load_cola,
    load_docci,
    load_flickr30k,
    load_hierarcaps,
    load_himo_docci,
    load_image_folder,
    load_long_dci,
    load_sharegpt4v,
    load_urban1k,
    sha256_of,
)
from paperlib.data.webdataset import shard_urls

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"


def put_image(path: Path, colour=(10, 20, 30), mode="RGB") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, (8, 6), colour if mode == "RGB" else 128).save(path)
    return path


def write_jsonl(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- fixtures per format


def test_sharegpt4v(tmp_path):
    items = [
        {
            "id": f"s{i}",
            "image": f"coco/{i}.jpg",
            "conversations": [
                {"from": "human", "value": "<image>"},
                {"from": "gpt", "value": f"Line one {i}.\nLine two."},
            ],
        }
        for i in range(3)
    ]
    for i in range(3):
        put_image(tmp_path / "img" / f"coco/{i}.jpg")
    (tmp_path / "sg.json").write_text(json.dumps(items))
    samples = load_sharegpt4v(tmp_path / "sg.json", tmp_path / "img")
    assert [s.id for s in samples] == ["s0", "s1", "s2"]
    assert samples[1].caption == "Line one 1. Line two."
    assert samples[2].image == tmp_path / "img" / "coco/2.jpg"
    val = load_sharegpt4v(tmp_path / "sg.json", tmp_path / "img", split="val", val_size=2)
    train = load_sharegpt4v(tmp_path / "sg.json", tmp_path / "img", split="train", val_size=2)
    assert [s.id for s in val] == ["s0", "s1"] and [s.id for s in train] == ["s2"]
    del items[1]["conversations"]
    (tmp_path / "bad.json").write_text(json.dumps(items))
    with pytest.raises(DatasetFormatError, match=r"bad\.json item 1 has no field 'conversations'"):
        load_sharegpt4v(tmp_path / "bad.json", tmp_path / "img")


def test_urban1k(tmp_path):
    root = tmp_path / "Urban1k"
    for i in (2, 1):
        put_image(root / "image" / f"{i}.jpg")
        (root / "caption").mkdir(parents=True, exist_ok=True)
        (root / "caption" / f"{i}.txt").write_text(f"Long caption {i}.\nsecond line\n")
    for given in (tmp_path, root):
        samples = load_urban1k(given)
        assert [(s.id, s.caption) for s in samples] == [
            ("1", "Long caption 1."),
            ("2", "Long caption 2."),
        ]
    (root / "image" / "2.jpg").unlink()
    with pytest.raises(FileNotFoundError, match=r"2\.jpg.*caption/<id>\.txt"):
        load_urban1k(root)


def test_docci_full_file_and_test_file(tmp_path):
    items = [
        {
            "example_id": "train_1",
            "split": "train",
            "image_file": "train_1.jpg",
            "description": "a",
        },
        {"example_id": "test_1", "split": "test", "image_file": "test_1.jpg", "description": "b c"},
    ]
    put_image(tmp_path / "images" / "test_1.jpg")
    write_jsonl(tmp_path / "docci_descriptions.jsonlines", items)
    samples = load_docci(tmp_path)
    assert [(s.id, s.caption) for s in samples] == [("test_1", "b c")]
    other = tmp_path / "other"
    put_image(other / "images" / "test_1.jpg")
    write_jsonl(other / "test_set.jsonl", [{"image_file": "test_1.jpg", "description": "d"}])
    assert [(s.id, s.caption) for s in load_docci(other)] == [("test_1", "d")]
    with pytest.raises(FileNotFoundError, match="docci_descriptions.jsonlines"):
        load_docci(tmp_path / "images")


def test_long_dci(tmp_path):
    put_image(tmp_path / "sa1b" / "sa_1.jpg")
    (tmp_path / "dci_long.csv").write_text("filepath\ttitle\nsa_1.jpg\tA long, detailed text.\n")
    (sample,) = load_long_dci(tmp_path / "dci_long.csv", tmp_path / "sa1b")
    assert (sample.id, sample.caption) == ("sa_1", "A long, detailed text.")
    (tmp_path / "bad.csv").write_text("path\ttitle\nsa_1.jpg\tx\n")
    with pytest.raises(DatasetFormatError, match=r"bad\.csv row 1 has no field 'filepath'"):
        load_long_dci(tmp_path / "bad.csv", tmp_path / "sa1b")


def test_flickr30k(tmp_path):
    lines = [
        f"{name}.jpg#{k}\t{name} caption {k}" for name in ("100", "200") for k in (4, 0, 1, 2, 3)
    ]
    (tmp_path / "test_1k.txt").write_text("\n".join(lines) + "\n")
    for name in ("100", "200"):
        put_image(tmp_path / "images" / f"{name}.jpg")
    samples = load_flickr30k(tmp_path / "test_1k.txt", tmp_path / "images")
    assert [s.id for s in samples] == ["100", "200"]
    assert samples[1].captions == [f"200 caption {k}" for k in range(5)]
    (tmp_path / "short.txt").write_text("\n".join(lines[:4]) + "\n")
    with pytest.raises(DatasetFormatError, match="100.jpg has 4 captions, expected 5"):
        load_flickr30k(tmp_path / "short.txt", tmp_path / "images")
    (tmp_path / "bad.txt").write_text("100.jpg caption without a tab\n")
    with pytest.raises(DatasetFormatError, match=r"bad\.txt line 1"):
        load_flickr30k(tmp_path / "bad.txt", tmp_path / "images")


def test_coco_captions(tmp_path):
    data = {
        "images": [{"id": 9, "file_name": "000009.jpg"}, {"id": 3, "file_name": "000003.jpg"}],
        "annotations": [
            {"image_id": i, "id": 10 * i + k, "caption": f"{i}-{k} "}
            for k in range(6)
            for i in (3, 9)
        ],
    }
    (tmp_path / "captions_val2017.json").write_text(json.dumps(data))
    for name in ("000009.jpg", "000003.jpg"):
        put_image(tmp_path / "val2017" / name)
    samples = load_coco_captions(tmp_path / "captions_val2017.json", tmp_path / "val2017")
    assert [s.id for s in samples] == ["9", "3"]
    assert samples[1].captions == [f"3-{k}" for k in range(5)]
    del data["annotations"]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(DatasetFormatError, match="has no field 'annotations'.*COCO format"):
        load_coco_captions(tmp_path / "bad.json", tmp_path / "val2017")


def write_hierarcaps(root: Path, rows: list[tuple[str, str, int]]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "hierarcaps_test.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "captions", "image_url"])
        for row_id, captions, image_id in rows:
            url = f"http://images.cocodataset.org/val2014/COCO_val2014_{image_id:012d}.jpg"
            writer.writerow([row_id, captions, url])
            put_image(root / "test_imgs" / f"COCO_val2014_{image_id:012d}.jpg")


def test_hierarcaps(tmp_path):
    write_hierarcaps(
        tmp_path,
        [
            (
                "0",
                "table => table with plates => table with three plates, and a man => A table.",
                301718,
            ),
            ("1", "bird => blue bird => blue bird on a branch => A blue bird on a branch.", 100489),
        ],
    )
    samples = load_hierarcaps(tmp_path)
    assert [s.id for s in samples] == ["0", "1"]
    assert samples[0].chain[2] == "table with three plates, and a man"
    assert samples[1].caption == "A blue bird on a branch." and samples[1].short_caption == "bird"
    assert samples[0].image.name == "COCO_val2014_000000301718.jpg"
    assert samples[0].meta["image_id"] == 301718
    write_hierarcaps(tmp_path / "bad", [("0", "bird => blue bird => A blue bird.", 5)])
    with pytest.raises(DatasetFormatError, match="row 1 has 3 levels"):
        load_hierarcaps(tmp_path / "bad")
    with pytest.raises(FileNotFoundError, match=r"nowhere.*hierarcaps_test\.csv.*test_imgs"):
        load_hierarcaps(tmp_path / "nowhere")


def test_himo_docci(tmp_path):
    items = [
        {
            "img_path": "test_00000.jpg",
            "caption": ["A street.", "A street. A sign."],
            "raw_caption": "A street. A sign.",
        }
    ]
    write_jsonl(tmp_path / "himo.json", items)
    (sample,) = load_himo_docci(tmp_path / "himo.json")
    assert sample.id == "test_00000" and sample.image is None
    assert sample.segments == items[0]["caption"] and sample.caption == "A street. A sign."
    with pytest.raises(FileNotFoundError, match="test_00000.jpg"):
        load_himo_docci(tmp_path / "himo.json", image_root=tmp_path / "images")
    write_jsonl(tmp_path / "bad.json", [{"img_path": "x.jpg", "raw_caption": "x"}])
    with pytest.raises(DatasetFormatError, match=r"bad\.json line 1 has no field 'caption'"):
        load_himo_docci(tmp_path / "bad.json")
    for caption in ("A street. A sign.", None, [1, 2]):  # a string would split into characters
        write_jsonl(
            tmp_path / "bad.json", [{"img_path": "x.jpg", "raw_caption": "x", "caption": caption}]
        )
        with pytest.raises(
            DatasetFormatError,
            match=r"line 1: 'caption(\[0\])?' must be (a list of strings|non-empty text)",
        ):
            load_himo_docci(tmp_path / "bad.json")


def test_image_folder_with_class_names(tmp_path):
    for wnid, count in (("n02", 2), ("n01", 1)):
        for k in range(count):
            put_image(tmp_path / "val" / wnid / f"ILSVRC_{k}.JPEG")
    (tmp_path / "val" / "n02" / "notes.txt").write_text("ignored")
    names = {"n01": "tench", "n02": "goldfish"}
    (tmp_path / "names.json").write_text(json.dumps(names))
    for source in (names, ["tench", "goldfish"], tmp_path / "names.json"):
        samples = load_image_folder(tmp_path / "val", source)
        assert [(s.id, s.label, s.caption) for s in samples] == [
            ("n01/ILSVRC_0", 0, "tench"),
            ("n02/ILSVRC_0", 1, "goldfish"),
            ("n02/ILSVRC_1", 1, "goldfish"),
        ]
    with pytest.raises(DatasetFormatError, match="no class name for folders.*n02"):
        load_image_folder(tmp_path / "val", {"n01": "tench"})


def test_cola(tmp_path):
    queries = [
        [
            "https://x/vg/1.jpg",
            "a red cube and a blue ball",
            "https://x/vg/2.jpg",
            "a blue cube and a red ball",
        ]
    ]
    (tmp_path / "cola.json").write_text(json.dumps(queries))
    put_image(tmp_path / "imgs" / "1.jpg")
    put_image(tmp_path / "imgs" / "2.jpg")
    (sample,) = load_cola(tmp_path / "cola.json", tmp_path / "imgs")
    assert sample.captions == queries[0][1::2]
    assert sample.meta["images"] == [tmp_path / "imgs" / "1.jpg", tmp_path / "imgs" / "2.jpg"]
    (tmp_path / "bad.json").write_text(json.dumps([["only", "three", "items"]]))
    with pytest.raises(DatasetFormatError, match="item 0 is not a 4-element list"):
        load_cola(tmp_path / "bad.json", tmp_path / "imgs")


def test_grit_shards_needs_tars(tmp_path):
    with pytest.raises(FileNotFoundError, match="child.jpg.*numparents.txt"):
        shard_urls(tmp_path)
    (tmp_path / "b.tar").write_bytes(b"")
    (tmp_path / "a.tar").write_bytes(b"")
    assert [Path(p).name for p in shard_urls(tmp_path)] == ["a.tar", "b.tar"]


# --------------------------------------------------------------------------- downloads


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self


def test_download_offline_names_url_and_destination(tmp_path, monkeypatch):
    def offline(url, timeout):
        raise URLError("no network")

    monkeypatch.setattr(loaders, "urlopen", offline)
    with pytest.raises(ConnectionError, match=r"hierarcaps_test\.csv.*put it at .*hierarcaps_test"):
        fetch_hierarcaps(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_download_verifies_checksum(tmp_path, monkeypatch):
    payload = b"id,captions,image_url\n"
    good = hashlib.sha256(payload).hexdigest()
    calls = []
    monkeypatch.setattr(
        loaders, "urlopen", lambda url, timeout: calls.append(url) or FakeResponse(payload)
    )
    path = download("https://example.org/f.csv", tmp_path / "f.csv", good)
    assert path.read_bytes() == payload and sha256_of(path) == good
    download("https://example.org/f.csv", tmp_path / "f.csv", good)
    assert len(calls) == 1  # a verified file is not fetched again
    with pytest.raises(ValueError, match="checksum mismatch.*f2.csv"):
        download("https://example.org/f2.csv", tmp_path / "f2.csv", "0" * 64)
    assert not (tmp_path / "f2.csv").exists() and not (tmp_path / "f2.csv.part").exists()


# --------------------------------------------------------------------------- real data


@pytest.fixture
def shared():
    if not SHARED.is_dir():
        pytest.skip(f"real data folder {SHARED} is absent")
    return SHARED


def test_published_checksums_match_the_real_files(shared):
    assert sha256_of(shared / "hierarcaps" / "hierarcaps_test.csv") == loaders.HIERARCAPS_SHA256
    assert sha256_of(shared / "himo_docci" / "himo_docci_data.json") == loaders.HIMO_DOCCI_SHA256


def test_real_hierarcaps(shared):
    samples = load_hierarcaps(shared / "hierarcaps")
    assert len(samples) == 1000 and [s.id for s in samples] == [str(i) for i in range(1000)]
    assert all(len(s.chain) == 4 and all(s.chain) for s in samples)
    assert samples[0].chain[0] == "table" and samples[0].meta["image_id"] == 301718
    assert len({s.meta["image_id"] for s in samples}) == 1000
    assert all(s.image.name.endswith(f"{s.meta['image_id']:012d}.jpg") for s in samples)
    modes = {}
    for sample in samples:
        with Image.open(sample.image) as image:
            modes.setdefault(image.mode, []).append(sample)
    assert set(modes) <= {"RGB", "L"} and len(modes.get("L", [])) >= 1
    report = LoadReport()
    for sample in modes.get("L", []) + modes["RGB"][:5]:
        image = sample.load_image(report)
        assert image.mode == "RGB" and min(image.size) > 32
        assert np.asarray(image).std() > 1
    assert report.num_skipped == 0 and report.converted["L"] == len(modes.get("L", []))


def test_real_himo_docci(shared):
    samples = load_himo_docci(shared / "himo_docci" / "himo_docci_data.json")
    assert len(samples) == 1000 and len({s.id for s in samples}) == 1000
    assert samples[0].id == "test_00000"
    counts = [len(s.segments) for s in samples]
    assert min(counts) == 2 and max(counts) == 17 and abs(np.mean(counts) - 6.66) < 0.01
    for sample in samples:
        for shorter, longer in zip(sample.segments, sample.segments[1:]):
            # each prefix ends a sentence; the next continues it: strict prefix up to that mark
            assert len(shorter) < len(longer)
            assert longer.startswith(shorter.rstrip(" .,;:\u3002")), sample.id


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "no data rows"),
        (b"id,captions,image_url\n", "no data rows"),
        (b"id,captions,image_url\n0,caf\xe9 => a,x_1.jpg\n", r"not UTF-8 text \(byte 27"),
    ],
)
def test_empty_header_only_and_non_utf8_csvs_are_named(tmp_path, content, message):
    (tmp_path / "hierarcaps_test.csv").write_bytes(content)
    with pytest.raises(DatasetFormatError, match=rf"HierarCaps: .*hierarcaps_test\.csv.*{message}"):
        load_hierarcaps(tmp_path, require_images=False)
    (tmp_path / "dci_long.csv").write_bytes(content.replace(b",", b"\t"))
    with pytest.raises(DatasetFormatError, match=rf"Long-DCI: .*dci_long\.csv.*{message}"):
        load_long_dci(tmp_path / "dci_long.csv", tmp_path, require_images=False)


def test_broken_json_and_non_utf8_text_files_are_named(tmp_path):
    (tmp_path / "cola.json").write_text('[["a", "b", "c", "d"]')
    with pytest.raises(DatasetFormatError, match=r"COLA: .*cola\.json is not valid JSON"):
        load_cola(tmp_path / "cola.json", tmp_path)
    (tmp_path / "docci.jsonl").write_bytes(b'{"img_path": "\xff"}\n')
    with pytest.raises(DatasetFormatError, match=r"HiMo-Docci: .*docci\.jsonl is not UTF-8"):
        load_himo_docci(tmp_path / "docci.jsonl")
