"""Small data sets in the formats researchers have them, fabricated for the tests: open_clip's
webdataset shards (img2dataset's ``jpg``/``txt``/``json``), GRIT's released annotations as
img2dataset writes them (``noun_chunks`` / ``ref_exps`` in the ``json``), ShareGPT4V with its
image folder a symbolic link, and COCO's val2017 captions for validation."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import webdataset as wds
from PIL import Image, ImageDraw

BACKGROUND = (128, 128, 128)
WORDS = ("red", "green", "blue", "small", "large", "round", "square", "bright", "dark")


def jpeg(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def colour(i: int) -> tuple[int, int, int]:
    return ((37 * i) % 256, (91 * i + 40) % 256, (53 * i + 120) % 256)


def caption(i: int) -> str:
    return f"A {WORDS[i % 9]} {WORDS[(i + 4) % 9]} scene number {i}. It has a {WORDS[(i + 2) % 9]} sky."


def write_tar(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wds.TarWriter(str(path)) as sink:
        for record in records:
            sink.write(record)
    return path


def openclip_shards(folder: Path, count: int, per_shard: int = 4, size: int = 24) -> list[Path]:
    """img2dataset's output as open_clip trains on it: ``<key>.jpg``, ``<key>.txt`` and a
    ``<key>.json`` of download metadata, ``per_shard`` samples a shard (``000000.tar``...)."""
    shards = []
    for start in range(0, count, per_shard):
        records = []
        for i in range(start, min(start + per_shard, count)):
            key = f"{i:09d}"
            meta = {"url": f"https://example.com/{i}.jpg", "key": key, "status": "success",
                    "caption": caption(i), "width": size, "height": size}  # fmt: skip
            records.append({
                "__key__": key, "jpg": jpeg(Image.new("RGB", (size, size), colour(i))),
                "txt": caption(i).encode(), "json": json.dumps(meta).encode(),
            })  # fmt: skip
        shards.append(write_tar(folder / f"{start // per_shard:06d}.tar", records))
    return shards


@dataclass(frozen=True)
class GroundedBox:
    """A box GRIT's annotation gives (fractions of the image) and what its crop shows."""

    phrase: str
    box: tuple[float, float, float, float]
    colour: tuple[int, int, int]
    kept: bool


GRIT_SIZE = (96, 64)


def grit_sample(i: int) -> tuple[str, list[GroundedBox]]:
    """Sample ``i``'s caption and boxes: two blocks of their own colour and a dot too small to
    keep; every fourth sample (i % 4 == 3) has only the dot, so no box is kept."""
    first, second = colour(i), colour(i + 100)
    text = "a red block and a blue block near a dot"
    boxes = [
        GroundedBox("a red block", (0.1, 0.1, 0.5, 0.6), first, True),
        GroundedBox("a blue block", (0.55, 0.2, 0.95, 0.9), second, True),
        GroundedBox("a dot", (0.0, 0.9, 0.1, 1.0), (0, 0, 0), False),
    ]
    return text, boxes[2:] if i % 4 == 3 else boxes


def _grit_image(boxes: list[GroundedBox]) -> Image.Image:
    width, height = GRIT_SIZE
    image = Image.new("RGB", GRIT_SIZE, BACKGROUND)
    draw = ImageDraw.Draw(image)
    for b in boxes:
        x1, y1, x2, y2 = b.box
        draw.rectangle((x1 * width, y1 * height, x2 * width - 1, y2 * height - 1), fill=b.colour)
    return image


def grit_entities(text: str, boxes: list[GroundedBox]) -> dict[str, list]:
    """GRIT's ``noun_chunks`` of the boxes: [start, end, x1, y1, x2, y2, score]."""
    chunks = [
        [text.index(b.phrase), text.index(b.phrase) + len(b.phrase), *b.box, 0.8] for b in boxes
    ]
    return {"noun_chunks": chunks, "ref_exps": chunks[:1]}  # a referring expression repeats one


def grit_annotation_shards(folder: Path, count: int, per_shard: int = 4, inline: bool = True):
    """GRIT as img2dataset downloads it (``jpg``, ``txt``, ``json`` with the grounding
    columns); with ``inline=False`` the json holds no boxes (CC3M's shards) and the grounding
    is returned as JSON Lines by url instead."""
    lines = []
    for start in range(0, count, per_shard):
        records = []
        for i in range(start, min(start + per_shard, count)):
            text, boxes = grit_sample(i)
            meta = {"url": f"https://example.com/grit/{i}.jpg", "key": f"{i:09d}", "id": 1000 + i,
                    "caption": text, "width": GRIT_SIZE[0], "height": GRIT_SIZE[1]}  # fmt: skip
            entities = grit_entities(text, boxes)
            if inline:
                meta.update(entities)
            else:
                lines.append(json.dumps({"url": meta["url"], **entities}))
            records.append({"__key__": f"{i:09d}", "jpg": jpeg(_grit_image(boxes)),
                            "txt": text.encode(), "json": json.dumps(meta).encode()})  # fmt: skip
        write_tar(folder / f"{start // per_shard:05d}.tar", records)
    return "\n".join(lines) + "\n"


def sharegpt4v_linked(root: Path, count: int, kept: Path) -> Path:
    """ShareGPT4V as it is usually assembled: ``root/coco`` a symbolic link to the images kept
    in ``kept``, the caption JSON naming ``coco/<file>``; returns the JSON's path."""
    kept.mkdir(parents=True, exist_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / "coco").symlink_to(kept, target_is_directory=True)
    items = []
    for i in range(count):
        Image.new("RGB", (24, 24), colour(i)).save(kept / f"{i:012d}.jpg", quality=95)
        turns = [
            {"from": "human", "value": "<image>\nDescribe it."},
            {"from": "gpt", "value": caption(i)},
        ]
        items.append({"id": f"sa_{i}", "image": f"coco/{i:012d}.jpg", "conversations": turns})
    path = root / "share-captioner_coco_lcs_sam_1246k_1107.json"
    path.write_text(json.dumps(items))
    return path


def coco_val2017(root: Path, count: int) -> Path:
    """COCO's val2017 layout with five captions an image: ``captions_val2017.json``, ``val2017/``."""
    (root / "val2017").mkdir(parents=True, exist_ok=True)
    images, annotations = [], []
    for i in range(count):
        name = f"{i:012d}.jpg"
        Image.new("RGB", (24, 24), colour(3 * i)).save(root / "val2017" / name, quality=95)
        images.append({"id": i, "file_name": name})
        annotations += [{"image_id": i, "caption": f"{caption(3 * i)} ({k})"} for k in range(5)]
    (root / "captions_val2017.json").write_text(
        json.dumps({"images": images, "annotations": annotations})
    )
    return root
