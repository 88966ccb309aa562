"""Dataset files as users have them: UTF-16 and Latin-1 text is refused naming the file, a
UTF-8 byte-order mark and CRLF line ends read as plain UTF-8, a huge single field reads or is
named, a folder where a file is expected is refused by name and a symbolic link inside the
dataset root is followed; images of every odd kind (1x1, CMYK, palette, 16-bit, animated,
EXIF-rotated, zero bytes, a folder) decode to the right RGB pixels or are skipped with their
path; a shard that repeats a key or whose member names leave it is refused naming it."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from paperlib.data import loaders
from paperlib.data.images import LoadReport, load_rgb
from paperlib.data.records import DatasetFormatError
from paperlib.data.webdataset import raw_records, read_shards, write_shards
from paperlib.data.world import World

ROW = {"img_path": "a.png", "caption": ["A b.", "A b. C d."], "raw_caption": "A b. C d."}
SHARE = [{"image": "a.png", "conversations": [{"value": "q"}, {"value": "A café."}]}]


def _image(path: Path, colour=(9, 90, 200), size=(4, 4), mode="RGB") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, size, colour).save(path)
    return path


def _urban(root: Path, caption: bytes) -> list:
    _image(root / "image" / "0.jpg")
    (root / "caption").mkdir(parents=True)
    (root / "caption" / "0.txt").write_bytes(caption)
    return loaders.load_urban1k(root)


def _share(root: Path, data: bytes) -> list:
    _image(root / "a.png")
    (root / "s.json").write_bytes(data)
    return loaders.load_sharegpt4v(root / "s.json", root)


def _long_dci(root: Path, data: bytes) -> list:
    _image(root / "a.png")
    (root / "d.csv").write_bytes(data)
    return loaders.load_long_dci(root / "d.csv", root)


def _himo(root: Path, data: bytes) -> list:
    _image(root / "images" / "a.png")
    (root / "h.json").write_bytes(data)
    return loaders.load_himo_docci(root / "h.json", root / "images")


SHARE_TEXT = json.dumps(SHARE, ensure_ascii=False)
HIMO_TEXT = json.dumps(ROW) + "\n"
DCI_TEXT = "filepath\ttitle\na.png\tA long caption.\n"
READS = {  # how the file is written: (loader, bytes, the caption it must give)
    "Urban1k with a byte-order mark": (_urban, b"\xef\xbb\xbfA cat.\n", "A cat."),
    "Urban1k in CRLF": (_urban, b"A cat.\r\nA second line.\r\n", "A cat."),
    "Urban1k of a 10 MB caption": (_urban, b"x" * 10**7 + b"\n", "x" * 10**7),
    "ShareGPT4V with a byte-order mark": (_share, b"\xef\xbb\xbf" + SHARE_TEXT.encode(), "A café."),
    "ShareGPT4V in CRLF": (_share, SHARE_TEXT.replace(", ", ",\r\n").encode(), "A café."),
    "HiMo-Docci with a byte-order mark": (_himo, ("\ufeff" + HIMO_TEXT).encode(), "A b. C d."),
    "HiMo-Docci in CRLF": (_himo, HIMO_TEXT.replace("\n", "\r\n").encode(), "A b. C d."),
    "Long-DCI with a byte-order mark": (_long_dci, b"\xef\xbb\xbf" + DCI_TEXT.encode(), None),
    "Long-DCI in CRLF": (_long_dci, DCI_TEXT.replace("\n", "\r\n").encode(), None),
}


@pytest.mark.parametrize("case", list(READS))
def test_a_byte_order_mark_crlf_and_a_huge_field_read_as_plain_utf8(tmp_path, case):
    load, data, caption = READS[case]
    (sample,) = load(tmp_path / "root", data)
    assert sample.caption == (caption or "A long caption.")


REFUSED = {  # (loader, bytes, what the message says after the file's path)
    "Urban1k in UTF-16": (_urban, "A cat.\n".encode("utf-16"), "is UTF-16 text"),
    "ShareGPT4V in UTF-16": (_share, SHARE_TEXT.encode("utf-16"), "is UTF-16 text"),
    "ShareGPT4V in Latin-1": (_share, SHARE_TEXT.encode("latin-1"), "is not UTF-8 text (byte"),
    "Long-DCI in Latin-1": (
        _long_dci,
        DCI_TEXT.replace("long", "café").encode("latin-1"),
        "is not UTF-8 text (byte",
    ),
    "Long-DCI of a 200 000-character title": (
        _long_dci,
        b"filepath\ttitle\na.png\t" + b"x" * 200_000 + b"\n",
        "after line 1: not a readable row (field larger than field limit",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_utf16_latin1_and_an_unreadable_row_are_named_with_the_file(tmp_path, case):
    load, data, message = REFUSED[case]
    with pytest.raises(DatasetFormatError, match=r"^[\w-]+: (?P<path>\S+) ") as caught:
        load(tmp_path / "root", data)
    path = caught.value.args[0].split(": ", 2)[1].split(" ")[0]
    assert Path(path).is_file() and path.startswith(str(tmp_path / "root"))
    assert message in caught.value.args[0]


def test_a_folder_where_a_dataset_file_is_expected_is_named(tmp_path):
    (tmp_path / "s.json").mkdir()
    with pytest.raises(DatasetFormatError, match=r"s\.json is a folder, not a file"):
        loaders.load_sharegpt4v(tmp_path / "s.json", tmp_path)
    _image(tmp_path / "u" / "image" / "0.jpg")
    (tmp_path / "u" / "caption" / "0.txt").mkdir(parents=True)
    with pytest.raises(DatasetFormatError, match=r"caption/0\.txt is a folder, not a file"):
        loaders.load_urban1k(tmp_path / "u")


def test_a_symlinked_subfolder_inside_the_root_is_followed_and_a_path_leaving_it_is_not(tmp_path):
    kept = _image(tmp_path / "elsewhere" / "coco" / "a.png")  # the images, kept elsewhere
    root = tmp_path / "root"
    root.mkdir()
    (root / "coco").symlink_to(kept.parent, target_is_directory=True)  # ShareGPT4V's usual way
    (root / "s.json").write_text(SHARE_TEXT.replace('"a.png"', '"coco/a.png"'))
    (sample,) = loaders.load_sharegpt4v(root / "s.json", root)
    assert Path(sample.image) == root / "coco" / "a.png"
    assert Path(sample.image).resolve() == kept.resolve()
    (root / "s.json").write_text(SHARE_TEXT.replace('"a.png"', '"../elsewhere/coco/a.png"'))
    with pytest.raises(DatasetFormatError, match=r"'image' must be a path inside"):
        loaders.load_sharegpt4v(root / "s.json", root)


# ---------------------------------------------------------------- images


def _pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.int64)


def test_odd_images_decode_to_their_rgb_pixels(tmp_path):
    report = LoadReport()
    one = load_rgb(_image(tmp_path / "one.png", (1, 2, 3), (1, 1)), report)
    assert one.size == (1, 1) and one.getpixel((0, 0)) == (1, 2, 3)
    cmyk = Image.new("CMYK", (3, 2), (0, 255, 255, 0))
    cmyk.save(tmp_path / "cmyk.jpg", quality=100)
    assert np.abs(_pixels(load_rgb(tmp_path / "cmyk.jpg", report)) - (255, 0, 0)).max() <= 2
    palette = Image.new("RGB", (3, 3), (10, 200, 30)).quantize(4)
    palette.save(tmp_path / "p.png")
    assert (_pixels(load_rgb(tmp_path / "p.png", report)) == (10, 200, 30)).all()
    Image.fromarray(np.full((2, 3), 40000, dtype=np.uint16)).save(tmp_path / "16.png")
    assert (_pixels(load_rgb(tmp_path / "16.png", report)) == 40000 // 256).all()
    assert report.loaded == 4 and report.num_skipped == 0


def test_an_animated_image_reads_its_first_frame(tmp_path):
    frames = [Image.new("RGB", (4, 4), c) for c in ((255, 0, 0), (0, 0, 255))]
    frames[0].save(tmp_path / "a.gif", save_all=True, append_images=frames[1:])
    assert (_pixels(load_rgb(tmp_path / "a.gif")) == (255, 0, 0)).all()


def test_an_exif_rotated_image_keeps_its_stored_pixels_as_the_papers_pipelines_read_them(
    tmp_path,
):
    """PIL's open + convert (open_clip's and the papers' loaders) ignores the EXIF
    orientation tag; so does load_rgb, so features match the references'."""
    stored = Image.new("RGB", (6, 2), (0, 0, 0))
    stored.paste((255, 255, 255), (0, 0, 3, 2))
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90° clockwise to display"
    stored.save(tmp_path / "e.png", exif=exif)
    out = load_rgb(tmp_path / "e.png")
    assert out.size == (6, 2) and np.array_equal(_pixels(out), _pixels(stored))


def test_a_zero_byte_file_and_a_folder_are_skipped_with_their_path(tmp_path):
    report = LoadReport()
    (tmp_path / "z.png").write_bytes(b"")
    (tmp_path / "d.png").mkdir()
    assert load_rgb(tmp_path / "z.png", report) is None
    assert load_rgb(tmp_path / "d.png", report) is None
    assert [p for p, _ in report.skipped] == [str(tmp_path / "z.png"), str(tmp_path / "d.png")]
    assert "IsADirectoryError" in report.skipped[1][1]


# ---------------------------------------------------------------- shards


def _tar(path: Path, members: list[tuple[str, bytes]]) -> str:
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (5, 6, 7)).save(out, "png")
    return out.getvalue()


def _record(key: str, caption: bytes = b"a cat") -> list[tuple[str, bytes]]:
    return [(f"{key}.child.png", _png()), (f"{key}.child.txt", caption)]


@pytest.mark.parametrize(
    "members, message",
    [
        (_record("0001") + _record("0002") + _record("0001", b"again"), "'0001' occurs twice"),
        (_record("../../etc/0001"), "'../../etc/0001' has member names that leave the shard"),
        (_record("/etc/0001"), "'/etc/0001' has member names that leave the shard"),
        (_record("0001") + [("0001.child.txt", b"b")], "cannot be read as a tar file"),
    ],
    ids=["repeated key", "dot-dot member", "absolute member", "repeated member"],
)
def test_a_shard_that_repeats_a_key_or_leaves_itself_is_named(tmp_path, members, message):
    shard = _tar(tmp_path / "s.tar", members)
    for read in (raw_records, read_shards):  # the training stream's reader and the evaluation's
        with pytest.raises(DatasetFormatError) as caught:
            list(read([shard]))
        text = caught.value.args[0]
        assert text.startswith(f"GRIT: {shard}") and message in text, text


def test_shards_the_project_wrote_still_read_every_record(tmp_path):
    world = World(seed=0, image_size=32)
    samples = [world.sample(i) for i in range(6)]
    shards = write_shards(samples, tmp_path / "shards", maxcount=4)
    assert [r["__key__"] for r in raw_records(shards)] == [
        r["__key__"] for shard in shards for r in raw_records([shard])
    ]
    assert [s.caption for s in read_shards(shards)] == [s.caption for s in samples]


def test_a_symlinked_dataset_root_still_reads(tmp_path):
    target = tmp_path / "store"
    _image(target / "a.png")
    (target / "s.json").write_text(SHARE_TEXT)
    os.symlink(target, tmp_path / "root")
    (sample,) = loaders.load_sharegpt4v(tmp_path / "root" / "s.json", tmp_path / "root")
    assert sample.caption == "A café."
