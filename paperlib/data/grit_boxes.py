"""Box-crop shards for HyCoCLIP and ARGENT from GRIT's released annotations:
``python -m paperlib.data.grit_boxes SOURCE OUT`` (``docs/full-scale.md#grit-and-cc3m``).

GRIT (Kosmos-2's grounded image-text pairs) is released as parquet files of image URLs,
captions and grounding annotations, which img2dataset downloads into webdataset shards
(``--save_additional_columns '["id","noun_chunks","ref_exps"]'``): per sample ``<key>.jpg``,
``<key>.txt`` (the caption) and ``<key>.json``, whose ``noun_chunks`` and ``ref_exps`` list
``[start, end, x1, y1, x2, y2, score]``: a character span of the caption and its box, corners
as fractions of the image's width and height.

This module writes what ``data.dataset: webdataset`` trains the box methods on, HyCoCLIP's
layout (``paperlib.data.webdataset``): ``child.<ext>`` (the image as downloaded, not
re-encoded), ``child.txt``, ``numparents.txt``, and per kept box ``parentNNN.jpg`` (the crop,
padded to a square with black and resized to ``--crop-size``) and ``parentNNN.txt`` (its
phrase, the caption's span), plus ``json`` with the boxes in pixels.

A box is kept when its area is at least ``--min-box-area`` pixels (HyCoCLIP: 32 × 32), its score
at least ``--min-score`` and its span non-empty; noun chunks come first, then referring
expressions, and a (phrase, box) pair given twice is kept once. A sample without a kept box is
left out and counted (GRIT's own pipeline drops such pairs too).

CC3M has no boxes of its own: the ablation presets (``cc3m-*``) need them in GRIT's form, from
a grounding model run over CC3M as GRIT's pipeline does (spaCy noun chunks and a detector).
``--annotations FILE`` takes them as JSON Lines, one object per image with ``url`` (or
img2dataset's ``key``) and ``noun_chunks`` / ``ref_exps``; CC3M's img2dataset shards are the
SOURCE, their captions the ``txt``.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import webdataset as wds
from PIL import Image
from tqdm.auto import tqdm

from paperlib.data.images import load_rgb
from paperlib.data.records import DatasetFormatError
from paperlib.data.webdataset import IMAGE_EXTENSIONS, image_bytes, raw_records, shard_urls
from paperlib.untrusted import brief, error_text

ENTITY_KINDS = ("noun_chunks", "ref_exps")
GRIT_ANNOTATIONS = (
    "img2dataset shards (jpg, txt, json) whose json, or the --annotations line of the same url "
    "or key, holds noun_chunks / ref_exps lists of [start, end, x1, y1, x2, y2, score] "
    "(corners as fractions of the image)"
)


@dataclass(frozen=True)
class BoxRule:
    """Which boxes are kept (``min_area`` px², ``min_score``) and the crops' side."""

    min_area: float = 32 * 32
    min_score: float = 0.0
    crop_size: int = 224


@dataclass
class Summary:
    """What a conversion read and wrote."""

    read: int = 0
    written: int = 0
    without_box: int = 0
    boxes: int = 0
    dropped_boxes: int = 0
    unreadable: int = 0
    shards: list[str] = field(default_factory=list)


def _entity(value: Any, where: str) -> tuple[int, int, float, float, float, float, float]:
    """One ``[start, end, x1, y1, x2, y2, score]`` entry, checked."""
    if not isinstance(value, (list, tuple)) or len(value) != 7:
        raise DatasetFormatError(
            f"GRIT: {where}: expected [start, end, x1, y1, x2, y2, score], got {brief(value, 80)}"
        )
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        raise DatasetFormatError(f"GRIT: {where}: expected numbers, got {brief(value, 80)}")
    start, end, *rest = value
    return (int(start), int(end), *(float(v) for v in rest))


def grounded_boxes(
    annotations: dict[str, Any], caption: str, size: tuple[int, int], rule: BoxRule, where: str
) -> tuple[list[tuple[str, tuple[float, float, float, float]]], int]:
    """The kept (phrase, pixel box xyxy) of one sample and how many entries were dropped:
    noun chunks then referring expressions, each box scaled to ``size`` (width, height) and
    clipped to the image."""
    width, height = size
    kept, seen, dropped = [], set(), 0
    for kind in ENTITY_KINDS:
        for index, value in enumerate(annotations.get(kind) or []):
            start, end, x1, y1, x2, y2, score = _entity(value, f"{where} {kind}[{index}]")
            box = (
                max(0.0, x1 * width),
                max(0.0, y1 * height),
                min(float(width), x2 * width),
                min(float(height), y2 * height),
            )
            phrase = caption[start:end].strip()
            area = max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])
            if (
                not phrase
                or area < rule.min_area
                or score < rule.min_score
                or (phrase, box) in seen
            ):
                dropped += 1
                continue
            seen.add((phrase, box))
            kept.append((phrase, box))
    return kept, dropped


def square_crop(
    image: Image.Image, box: tuple[float, float, float, float], size: int
) -> Image.Image:
    """The box's crop padded to a square with black (centred) and resized to ``size``
    (bicubic): the whole box, undistorted."""
    left, top, right, bottom = (round(v) for v in box)
    crop = image.crop((left, top, max(right, left + 1), max(bottom, top + 1)))
    side = max(crop.size)
    square = Image.new("RGB", (side, side))
    square.paste(crop, ((side - crop.width) // 2, (side - crop.height) // 2))
    return square.resize((size, size), Image.Resampling.BICUBIC)


def read_annotations(path: str | Path) -> dict[str, dict[str, Any]]:
    """JSON Lines of ``{"url" or "key": ..., "noun_chunks": [...], "ref_exps": [...]}`` by url
    and by key; DatasetFormatError naming the line of anything else."""
    found: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as error:
                raise DatasetFormatError(f"GRIT: {path} line {number}: {error}") from None
            names = [item.get(k) for k in ("url", "key")] if isinstance(item, dict) else []
            if not any(isinstance(n, str) and n for n in names):
                raise DatasetFormatError(
                    f"GRIT: {path} line {number}: expected an object with url or key and noun_chunks / ref_exps"
                )
            found.update({n: item for n in names if isinstance(n, str) and n})
    return found


def _metadata(record: dict[str, Any], where: str) -> dict[str, Any]:
    if "json" not in record:
        return {}
    try:
        meta = json.loads(record["json"].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetFormatError(f"GRIT: {where}: json is not readable ({error})") from None
    if not isinstance(meta, dict):
        raise DatasetFormatError(
            f"GRIT: {where}: json must hold an object; expected {GRIT_ANNOTATIONS}"
        )
    return meta


UNREADABLE = -1  # the "dropped" count of a record whose image does not decode


def convert_record(
    record: dict[str, Any], rule: BoxRule, annotations: dict[str, dict] | None = None
) -> tuple[dict[str, Any] | None, int]:
    """One img2dataset record as a HyCoCLIP-layout record (None: no box kept, or an image that
    does not decode) and the number of boxes dropped (:data:`UNREADABLE` for the latter)."""
    where = f"{record.get('__url__', '<shard>')}: record {brief(record.get('__key__'), 60)}"
    ext = next((e for e in IMAGE_EXTENSIONS if e in record), None)
    if ext is None or "txt" not in record:
        raise DatasetFormatError(
            f"GRIT: {where} has no image or txt (keys: {brief(sorted(record))}); expected {GRIT_ANNOTATIONS}"
        )
    caption = record["txt"].decode("utf-8", errors="replace")
    meta = _metadata(record, where)
    if annotations is not None:
        meta = annotations.get(meta.get("url", ""), annotations.get(record["__key__"], {}))
    image = load_rgb(record[ext])
    if image is None:
        return None, UNREADABLE
    boxes, dropped = grounded_boxes(meta, caption, image.size, rule, where)
    if not boxes:
        return None, dropped
    out = {
        "__key__": record["__key__"],
        f"child.{ext}": record[ext],
        "child.txt": caption.encode("utf-8"),
        "numparents.txt": str(len(boxes)).encode("ascii"),
        "json": json.dumps({
            "id": record["__key__"], "caption": caption,
            "boxes": [{"phrase": p, "box": list(b)} for p, b in boxes],
        }).encode("utf-8"),
    }  # fmt: skip
    for k, (phrase, box) in enumerate(boxes):
        out[f"parent{k:03d}.jpg"] = image_bytes(square_crop(image, box, rule.crop_size), "jpg")
        out[f"parent{k:03d}.txt"] = phrase.encode("utf-8")
    return out, dropped


def convert(
    source: str | Path,
    out: str | Path,
    rule: BoxRule = BoxRule(),
    annotations: str | Path | None = None,
    maxcount: int = 10_000,
    progress: bool | None = None,
) -> Summary:
    """Convert the img2dataset shards ``source`` (a folder or a shard list,
    :func:`~paperlib.data.webdataset.shard_urls`) into HyCoCLIP-layout shards
    ``out/grit-000000.tar``...; returns the :class:`Summary` (also written as
    ``out/conversion.json``)."""
    urls = shard_urls(source)
    joined = read_annotations(annotations) if annotations else None
    Path(out).mkdir(parents=True, exist_ok=True)
    summary = Summary()
    pattern = str(Path(out) / "grit-%06d.tar")
    with wds.ShardWriter(pattern, maxcount=maxcount, verbose=0, mtime=0.0) as writer:
        disable = None if progress is None else not progress
        for record in tqdm(raw_records(urls), desc="grit_boxes", unit="sample", disable=disable):
            summary.read += 1
            converted, dropped = convert_record(record, rule, joined)
            if dropped == UNREADABLE:
                summary.unreadable += 1
                continue
            summary.dropped_boxes += dropped
            if converted is None:
                summary.without_box += 1
                continue
            writer.write(converted)
            summary.written += 1
            summary.boxes += int(converted["numparents.txt"])
            if not summary.shards or summary.shards[-1] != writer.fname:
                summary.shards.append(writer.fname)
    (Path(out) / "conversion.json").write_text(json.dumps(vars(summary), indent=1) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.data.grit_boxes",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("source", help="img2dataset shards: a folder of .tar or a shard list")
    parser.add_argument("out", type=Path, help="folder for the box-crop shards")
    parser.add_argument("--annotations", type=Path, help="JSON Lines of boxes by url or key (CC3M)")
    parser.add_argument("--min-box-area", type=float, default=BoxRule.min_area)
    parser.add_argument("--min-score", type=float, default=BoxRule.min_score)
    parser.add_argument("--crop-size", type=int, default=BoxRule.crop_size)
    parser.add_argument("--maxcount", type=int, default=10_000, help="samples per output shard")
    args = parser.parse_args(argv)
    try:
        if args.annotations is not None and not args.annotations.is_file():
            raise FileNotFoundError(f"--annotations: {args.annotations} does not exist")
        summary = convert(
            args.source, args.out, BoxRule(args.min_box_area, args.min_score, args.crop_size),
            args.annotations, args.maxcount,
        )  # fmt: skip
    except (OSError, ValueError) as error:
        print(f"grit_boxes: {error_text(error)}", file=sys.stderr)
        return 2
    print(
        f"[grit_boxes] {summary.written} of {summary.read} samples written with "
        f"{summary.boxes} boxes into {len(summary.shards)} shard(s) in {args.out}; "
        f"{summary.without_box} without a kept box left out"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
