"""The dataset loaders on records that break their format: every loader reads its records
through one set of checks (``paperlib.data.records``), so an image path outside the root, a
field of the wrong type or empty, prefixes that are not cumulative and repeated ids are each
refused by name (dataset, file and record, field, what was found), never loaded. The real
HiMo-Docci file passes the same checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image

from paperlib.data import loaders
from paperlib.data.records import DatasetFormatError, Record, extends, unique_ids


def _image(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (4, 4), (9, 9, 9)).save(path)
    return path


def _lines(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


FIVE = [{"image_id": 1, "caption": f"cap {k}"} for k in range(5)]
TURNS = [{"value": "q"}, {"value": "A cat."}]


def _himo(root: Path, path: str) -> list:
    row = {"img_path": path, "caption": ["A b.", "A b. C d."], "raw_caption": "A b. C d."}
    return loaders.load_himo_docci(_lines(root / "h.json", [row]), root / "images")


def _share(root: Path, path: str) -> list:
    (root / "s.json").write_text(json.dumps([{"image": path, "conversations": TURNS}]))
    return loaders.load_sharegpt4v(root / "s.json", root)


def _coco(root: Path, path: str) -> list:
    data = {"images": [{"id": 1, "file_name": path}], "annotations": FIVE}
    (root / "c.json").write_text(json.dumps(data))
    return loaders.load_coco_captions(root / "c.json", root)


def _flickr(root: Path, path: str) -> list:
    (root / "t.txt").write_text("".join(f"{path}#{k}\tcaption {k}\n" for k in range(5)))
    return loaders.load_flickr30k(root / "t.txt", root)


def _long_dci(root: Path, path: str) -> list:
    (root / "d.csv").write_text(f"filepath\ttitle\n{path}\tA long caption.\n")
    return loaders.load_long_dci(root / "d.csv", root)


def _docci(root: Path, path: str) -> list:
    row = {"image_file": path, "description": "A cat.", "split": "test"}
    _lines(root / "docci_descriptions.jsonlines", [row])
    return loaders.load_docci(root)


def _cola(root: Path, path: str) -> list:
    (root / "c.json").write_text(json.dumps([[f"http://x/{path}", "a", "http://x/b.png", "b"]]))
    return loaders.load_cola(root / "c.json", root / "images", require_images=False)


LOADERS = {
    "HiMo-Docci": (_himo, "img_path"),
    "ShareGPT4V": (_share, "image"),
    "COCO": (_coco, "file_name"),
    "Flickr30k": (_flickr, "image name"),
    "Long-DCI": (_long_dci, "filepath"),
    "DOCCI": (_docci, "image_file"),
}


@pytest.mark.parametrize("escape", ["../", "../../", "absolute", "a/../../"])
@pytest.mark.parametrize("dataset", sorted(LOADERS))
def test_an_image_path_outside_the_root_is_refused(tmp_path, dataset, escape):
    load, field = LOADERS[dataset]
    root = tmp_path / "a" / "root"
    (root / "images").mkdir(parents=True)
    outside = _image(tmp_path / "secret.png")
    path = str(outside) if escape == "absolute" else escape + "secret.png"
    if escape != "absolute":  # make the relative path reach the file, so only the rule refuses
        base = root / "images" if dataset in ("HiMo-Docci", "DOCCI") else root
        path = os.path.relpath(outside, base) if escape == "../../" else path
    with pytest.raises(DatasetFormatError, match=rf"^{dataset}: .*'{field}' must be a path inside"):
        load(root, path)


@pytest.mark.parametrize("name", ["..", ".", ""])
def test_a_cola_image_name_that_is_no_file_inside_the_root_is_refused(tmp_path, name):
    with pytest.raises(DatasetFormatError, match=r"^COLA: .*item 0: 'image_1_url' must be"):
        _cola(tmp_path, name)


@pytest.mark.parametrize("dataset", sorted(LOADERS))
def test_a_path_inside_the_root_and_a_symlinked_root_load(tmp_path, dataset):
    load, _ = LOADERS[dataset]
    target = tmp_path / "store"
    base = target / "images" if dataset in ("HiMo-Docci", "DOCCI") else target
    _image(base / "sub" / "a.png")
    (tmp_path / "root").symlink_to(target)  # the dataset folder is a link to where it is kept
    (sample,) = load(tmp_path / "root", "sub/./a.png")
    assert Path(sample.image).resolve() == (base / "sub" / "a.png").resolve()


BAD_RECORDS = {
    "Long-DCI short row": (
        lambda t: _long_dci_text(t, "filepath\ttitle\na.png\n"),
        r"row 1: 'title' must be non-empty text, got None",
    ),
    "Long-DCI blank title": (
        lambda t: _long_dci_text(t, "filepath\ttitle\na.png\t  \n"),
        r"'title' must be non-empty text, got '  '",
    ),
    "COCO caption is a number": (
        lambda t: _coco_data(
            t,
            {
                "images": [{"id": 1, "file_name": "a.png"}],
                "annotations": [*FIVE[:4], {"image_id": 1, "caption": 7}],
            },
        ),
        r"annotation 4: 'caption' must be non-empty text, got 7",
    ),
    "COCO file_name null": (
        lambda t: _coco_data(t, {"images": [{"id": 1, "file_name": None}], "annotations": FIVE}),
        r"image 0: 'file_name' must be non-empty text, got None",
    ),
    "COCO images a mapping": (
        lambda t: _coco_data(t, {"images": {"id": 1}, "annotations": FIVE}),
        r"c\.json holds a dict, not a list of images",
    ),
    "COCO id a boolean": (
        lambda t: _coco_data(
            t, {"images": [{"id": True, "file_name": "a.png"}], "annotations": FIVE}
        ),
        r"image 0: 'id' must be non-empty text, got True",
    ),
    "ShareGPT4V value a number": (
        lambda t: _share_items(
            t, [{"image": "a.png", "conversations": [{"value": "q"}, {"value": 3}]}]
        ),
        r"item 0: 'value' must be non-empty text, got 3",
    ),
    "ShareGPT4V top level a mapping": (
        lambda t: _share_items(t, {"image": "a.png"}),
        r"s\.json holds a dict, not a JSON list",
    ),
    "HiMo-Docci prefixes reversed": (
        lambda t: _himo_rows(
            t, [{"img_path": "a.png", "caption": ["A b. C d.", "A b."], "raw_caption": "A b. C d."}]
        ),
        r"'caption' must list cumulative prefixes, each extending the one before; \[1\]",
    ),
    "HiMo-Docci prefix that changes a word": (
        lambda t: _himo_rows(
            t, [{"img_path": "a.png", "caption": ["A b.", "A c. D."], "raw_caption": "A c. D."}]
        ),
        r"'caption' must list cumulative prefixes",
    ),
    "HiMo-Docci empty prefix": (
        lambda t: _himo_rows(
            t, [{"img_path": "a.png", "caption": ["A b.", " "], "raw_caption": "A b."}]
        ),
        r"'caption\[1\]' must be non-empty text",
    ),
    "HiMo-Docci raw_caption null": (
        lambda t: _himo_rows(
            t, [{"img_path": "a.png", "caption": ["A b.", "A b. C."], "raw_caption": None}]
        ),
        r"'raw_caption' must be non-empty text, got None",
    ),
    "DOCCI description null": (
        lambda t: _docci_rows(t, [{"image_file": "a.png", "description": None}]),
        r"line 1: 'description' must be non-empty text, got None",
    ),
    "Flickr30k blank caption": (
        lambda t: _flickr_text(t, "".join(f"a.png#{k}\t{'x' if k else ' '}\n" for k in range(5))),
        r"t\.txt line 1: 'caption' must be non-empty text",
    ),
    "Flickr30k repeated caption number": (
        lambda t: _flickr_text(t, "".join(f"a.png#{min(k, 3)}\tc {k}\n" for k in range(5))),
        r"t\.txt line 5 repeats caption #3 of a\.png",
    ),
    "HierarCaps short row": (
        lambda t: _hierarcaps(t, "id,captions,image_url\n1,a => b => c => d\n"),
        r"row 1: 'image_url' must be non-empty text, got None",
    ),
    "Urban1k blank first line": (
        lambda t: _urban(t, b"  \nsecond line\n"),
        r"0\.txt is empty or its first line blank",
    ),
}


def _long_dci_text(tmp: Path, text: str) -> list:
    _image(tmp / "a.png")
    (tmp / "d.csv").write_text(text)
    return loaders.load_long_dci(tmp / "d.csv", tmp)


def _coco_data(tmp: Path, data) -> list:
    _image(tmp / "a.png")
    (tmp / "c.json").write_text(json.dumps(data))
    return loaders.load_coco_captions(tmp / "c.json", tmp)


def _share_items(tmp: Path, items, split: str = "all") -> list:
    _image(tmp / "a.png")
    (tmp / "s.json").write_text(json.dumps(items))
    return loaders.load_sharegpt4v(tmp / "s.json", tmp, split=split)


def _himo_rows(tmp: Path, rows) -> list:
    _image(tmp / "images" / "a.png")
    return loaders.load_himo_docci(_lines(tmp / "h.json", rows), tmp / "images")


def _docci_rows(tmp: Path, rows) -> list:
    _image(tmp / "images" / "a.png")
    return loaders.load_docci(tmp) if _lines(tmp / "test_set.jsonl", rows) else []


def _flickr_text(tmp: Path, text: str) -> list:
    _image(tmp / "a.png")
    (tmp / "t.txt").write_text(text)
    return loaders.load_flickr30k(tmp / "t.txt", tmp)


def _hierarcaps(tmp: Path, text: str) -> list:
    _image(tmp / "test_imgs" / "COCO_val2014_000000000001.jpg")
    (tmp / "hierarcaps_test.csv").write_text(text)
    return loaders.load_hierarcaps(tmp)


def _urban(tmp: Path, caption: bytes) -> list:
    _image(tmp / "image" / "0.jpg")
    (tmp / "caption").mkdir()
    (tmp / "caption" / "0.txt").write_bytes(caption)
    return loaders.load_urban1k(tmp)


@pytest.mark.parametrize("make, message", BAD_RECORDS.values(), ids=BAD_RECORDS)
def test_a_record_that_breaks_its_format_is_named(tmp_path, make, message):
    with pytest.raises(DatasetFormatError, match=message):
        make(tmp_path)


URL = "http://x/COCO_val2014_000000000001.jpg"
REPEATS = {
    "COCO": lambda t: _coco_data(
        t, {"images": [{"id": 1, "file_name": "a.png"}] * 2, "annotations": FIVE}
    ),
    "HiMo-Docci": lambda t: _himo_rows(
        t, [{"img_path": "a.png", "caption": ["A b.", "A b. C."], "raw_caption": "x"}] * 2
    ),
    "DOCCI": lambda t: _docci_rows(
        t, [{"image_file": "a.png", "description": "A.", "example_id": "e1"}] * 2
    ),
    "Long-DCI": lambda t: _long_dci_text(t, "filepath\ttitle\na.png\tA cat.\na.png\tA dog.\n"),
    "HierarCaps": lambda t: _hierarcaps(
        t, f"id,captions,image_url\n1,a => b => c => d,{URL}\n1,a => b => c => e,{URL}\n"
    ),
    "ShareGPT4V": lambda t: _share_items(
        t, [{"id": "7", "image": "a.png", "conversations": TURNS}] * 2, split="val"
    ),
}


@pytest.mark.parametrize("dataset", sorted(REPEATS))
def test_an_id_that_repeats_is_named(tmp_path, dataset):
    with pytest.raises(DatasetFormatError, match=rf"^{dataset}: .*: id .* occurs 2 times"):
        REPEATS[dataset](tmp_path)


def test_sharegpt4v_training_split_may_repeat_a_sample(tmp_path):
    items = [{"id": "7", "image": "a.png", "conversations": TURNS}] * 3
    assert len(_share_items(tmp_path, items, split="train")) == 0  # all in the first 1000
    assert [s.id for s in _share_items(tmp_path, items, split="all")] == ["7", "7", "7"]


def test_cumulative_prefixes_may_drop_a_closing_full_stop():
    assert extends("A street.", "A street. A sign.")
    assert extends("A sign reads ROW.", "A sign reads ROW, with an i above.")  # '.' -> ','
    assert extends("Birds fly in the sky。", "Birds fly in the sky and sing.")  # CJK stop
    assert not extends("A street. A sign.", "A street.")  # shorter
    assert not extends("A street.", "A street.")  # not longer
    assert not extends("A street.", "The street. A sign.")


def test_a_record_reads_ids_integers_and_texts_by_their_rules():
    record = Record("X", "f line 1", "the layout", {"n": "12", "m": -1, "id": 0, "t": ["a", 5]})
    assert record.integer("n") == 12 and record.identifier("id") == 0
    with pytest.raises(DatasetFormatError, match=r"^X: f line 1: 'm' must be an integer >= 0"):
        record.integer("m")
    with pytest.raises(DatasetFormatError, match=r"'t\[1\]' must be non-empty text, got 5"):
        record.texts("t")
    with pytest.raises(DatasetFormatError, match=r"^X: f line 1 has no field 'q'; expected the"):
        record.field("q")
    with pytest.raises(DatasetFormatError, match=r"^X: f\.json: id 'b' occurs 3 times"):
        unique_ids(["a", "b", "b", "b"], "X", "f.json")


def test_the_real_himo_docci_file_passes_the_checks(shared_data):
    samples = loaders.load_himo_docci(shared_data / "himo_docci" / "himo_docci_data.json")
    assert len(samples) == 1000 and all(len(s.segments) >= 2 for s in samples)


def test_the_real_hierarcaps_file_passes_the_checks(shared_data):
    samples = loaders.load_hierarcaps(shared_data / "hierarcaps")
    assert len(samples) == 1000 and len({s.id for s in samples}) == 1000


@pytest.mark.parametrize(
    "name, line, message",
    [
        ("images.txt", "2 ../../../secret.jpg", r"line 2: 1 must be a path inside .*images"),
        ("images.txt", "2", r"images\.txt line 2 has no field 1"),
        ("image_class_labels.txt", "2 one", r"line 2: 1 must be an integer >= 1, got 'one'"),
        ("image_class_labels.txt", "2 0", r"line 2: 1 must be an integer >= 1, got '0'"),
    ],
)
def test_a_cub_table_that_breaks_its_format_is_named(tmp_path, name, line, message):
    from paperlib.data.classification import load_suite_dataset
    from tests.suite_fixtures import write_cub2011

    write_cub2011(tmp_path)
    table = tmp_path / "CUB_200_2011" / name
    lines = table.read_text().splitlines()
    table.write_text("\n".join([lines[0], line, *lines[2:]]) + "\n")
    with pytest.raises(DatasetFormatError, match=rf"^CUB: .*{name}.*{message}|^CUB: .*{message}"):
        load_suite_dataset("cub2011", tmp_path)
