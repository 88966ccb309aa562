"""Webdataset shards in HyCoCLIP's GRIT layout (SPEC §3): writer and reader of Samples.

Each record holds ``child.<ext>`` / ``child.txt`` (image, caption), ``numparents.txt``,
``parentNNN.<ext>`` / ``parentNNN.txt`` (box crops and phrases) and, as an extra key,
``json`` with every text field and ``meta`` of the Sample. Images are written as PNG by
default, so pixels round-trip exactly; ``image_format="jpg"`` matches GRIT's files but is
lossy (compare decoded images with a tolerance then). The reader also reads real GRIT/HyCoCLIP
shards, which have no ``json`` key.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

import webdataset as wds
from PIL import Image

from paperlib.data.images import LoadReport, load_rgb
from paperlib.data.sample import BoxSample, Sample, resolve_image, sample_to_item

IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "webp")
_PIL_FORMATS = {"png": "PNG", "jpg": "JPEG"}


def image_bytes(image: Image.Image, image_format: str = "png") -> bytes:
    """Encode an RGB image as PNG (lossless, deterministic) or JPEG (quality 95)."""
    if image_format not in _PIL_FORMATS:
        raise ValueError(f"image_format must be 'png' or 'jpg', got {image_format!r}")
    buffer = io.BytesIO()
    options = {"quality": 95} if image_format == "jpg" else {"compress_level": 1}
    image.save(buffer, format=_PIL_FORMATS[image_format], **options)
    return buffer.getvalue()


def shard_key(sample_id: str) -> str:
    """A webdataset ``__key__`` for an id: no dots or slashes (webdataset splits on them)."""
    return re.sub(r"[./\\\s]", "_", sample_id)


def sample_to_record(sample: Sample, image_format: str = "png") -> dict[str, Any]:
    """One Sample as a GRIT-layout record (plus ``json``); raises if its image is unreadable."""
    image = resolve_image(sample.image)
    if image is None:
        raise ValueError(f"sample {sample.id!r}: image {sample.image!r} is missing or unreadable")
    record = {
        "__key__": shard_key(sample.id),
        f"child.{image_format}": image_bytes(image, image_format),
        "child.txt": sample.caption.encode("utf-8"),
        "numparents.txt": str(len(sample.boxes)).encode("ascii"),
        "json": json.dumps(sample.texts(), sort_keys=True).encode("utf-8"),
    }
    for k, box in enumerate(sample.boxes):
        crop = resolve_image(box.image)
        if crop is None:
            raise ValueError(f"sample {sample.id!r}: box {k} image is missing or unreadable")
        record[f"parent{k:03d}.{image_format}"] = image_bytes(crop, image_format)
        record[f"parent{k:03d}.txt"] = box.phrase.encode("utf-8")
    return record


def write_shards(
    samples: Iterable[Sample],
    directory: str | Path,
    prefix: str = "shard",
    maxcount: int = 1000,
    image_format: str = "png",
) -> list[str]:
    """Write ``samples`` to ``directory/prefix-000000.tar``...; returns the shard paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    pattern = str(directory / f"{prefix}-%06d.tar")
    with wds.ShardWriter(pattern, maxcount=maxcount, verbose=0, mtime=0.0) as writer:
        for sample in samples:
            writer.write(sample_to_record(sample, image_format))
            if not written or written[-1] != writer.fname:
                written.append(writer.fname)
    return written


def _image_key(record: dict[str, Any], stem: str) -> str | None:
    return next((f"{stem}.{e}" for e in IMAGE_EXTENSIONS if f"{stem}.{e}" in record), None)


def record_to_sample(record: dict[str, Any], report: LoadReport | None = None) -> Sample | None:
    """Decode a raw record (bytes values) to a Sample; None when an image is unreadable.

    Raises ``KeyError`` naming the shard, the key and the expected layout when a field is missing.
    """
    where = f"{record.get('__url__', '<shard>')}: record {record.get('__key__')!r}"
    child_key = _image_key(record, "child")
    for key, present in (("child.<png|jpg>", child_key), ("child.txt", "child.txt" in record)):
        if not present:
            raise KeyError(
                f"{where} has no {key!r}; expected GRIT layout child.jpg, child.txt, "
                f"numparents.txt, parent000.jpg, parent000.txt, ... (SPEC §3); keys: {sorted(record)}"
            )
    image = load_rgb(record[child_key], report)
    if image is None:
        return None
    texts = json.loads(record["json"]) if "json" in record else {}
    count = int(record["numparents.txt"]) if "numparents.txt" in record else 0
    boxes = []
    for k in range(count):
        crop_key, text_key = _image_key(record, f"parent{k:03d}"), f"parent{k:03d}.txt"
        if crop_key is None or text_key not in record:
            raise KeyError(f"{where}: numparents.txt says {count} but parent{k:03d} is missing")
        crop = load_rgb(record[crop_key], report)
        if crop is None:
            return None
        saved = texts.get("boxes", [])
        box = tuple(saved[k]["box"]) if k < len(saved) and saved[k]["box"] is not None else None
        boxes.append(BoxSample(crop, record[text_key].decode("utf-8"), box))
    return Sample(
        id=texts.get("id", record["__key__"]),
        image=image,
        caption=record["child.txt"].decode("utf-8"),
        short_caption=texts.get("short_caption"),
        segments=texts.get("segments", []),
        chain=texts.get("chain", []),
        boxes=boxes,
        captions=texts.get("captions", []),
        label=texts.get("label"),
        meta=texts.get("meta", {}),
    )


def _is_present(sample: Any) -> bool:
    return sample is not None


def _as_item(transform: Callable[[Image.Image], Any], sample: Sample) -> dict[str, Any]:
    return sample_to_item(sample, transform(sample.image))


def read_shards(
    urls: str | list[str],
    report: LoadReport | None = None,
    transform: Callable[[Image.Image], Any] | None = None,
    split_by_node: bool = False,
) -> wds.WebDataset:
    """Iterable of Samples from shards, in order (no shuffling); with ``transform``, of the dict
    items :class:`~paperlib.data.sample.SampleDataset` gives (batch with ``collate_samples``).

    Shards are split across DataLoader workers (give at least as many shards as workers) and,
    with ``split_by_node``, across DDP ranks. Records with unreadable images are skipped and
    counted in ``report`` (that of the process that decoded them).
    """
    if isinstance(urls, (list, tuple)):
        missing = [u for u in urls if "://" not in str(u) and not Path(u).exists()]
        if missing:
            raise FileNotFoundError(f"webdataset shards not found: {missing}")
        urls = [str(u) for u in urls]
    dataset = wds.WebDataset(
        urls,
        shardshuffle=False,
        handler=wds.reraise_exception,
        empty_check=False,
        nodesplitter=wds.split_by_node if split_by_node else wds.single_node_only,
    )
    dataset = dataset.map(partial(record_to_sample, report=report)).select(_is_present)
    return dataset.map(partial(_as_item, transform)) if transform is not None else dataset
