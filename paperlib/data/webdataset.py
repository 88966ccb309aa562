"""Webdataset shards in HyCoCLIP's GRIT layout or open_clip's
(``docs/methods/conventions.md#dataset-formats``): writer and reader of Samples.

A GRIT-layout record holds ``child.<ext>`` / ``child.txt`` (image, caption),
``numparents.txt``, ``parentNNN.<ext>`` / ``parentNNN.txt`` (box crops and phrases) and, as an
extra key, ``json`` with every text field and ``meta`` of the Sample. Images are written as PNG
by default, so pixels round-trip exactly; ``image_format="jpg"`` matches GRIT's files but is
lossy (compare decoded images with a tolerance then). The reader also reads real GRIT/HyCoCLIP
shards, which have no ``json`` key, and open_clip's layout (img2dataset's output: ``jpg``,
``png`` or ``webp`` with ``txt``, and a ``json`` of download metadata, not read): a sample
without boxes.

``data.root`` names the shards as webdataset and open_clip spell them (:func:`shard_urls`):
a folder of ``*.tar``, brace patterns (``shards/{000000..000099}.tar``), several lists joined
by ``::``, and URLs webdataset opens (``pipe:aws s3 cp s3://bucket/000001.tar -``).

Training streams them with :class:`ShardStream`: HyCoCLIP's reading order (a seeded shuffle of
the shard list, shards split over ranks and DataLoader workers, a shuffle buffer of 4,000
records) and a resume that neither reads nor decodes the records a run consumed
(``paperlib.data.shuffle_buffer``).
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import webdataset as wds
from PIL import Image
from torch.utils.data import IterableDataset, get_worker_info

from paperlib.data.images import LoadReport, load_rgb
from paperlib.data.records import DatasetFormatError, Record
from paperlib.data.sample import BoxSample, Sample, resolve_image, sample_to_item
from paperlib.data.shuffle_buffer import (
    URL_SCHEME,
    ShuffleBuffer,
    resume_point,
    shard_record_count,
)
from paperlib.untrusted import brief

IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "webp")
_PIL_FORMATS = {"png": "PNG", "jpg": "JPEG"}
GRIT_LAYOUT = (
    "GRIT layout child.jpg, child.txt, numparents.txt, parent000.jpg, parent000.txt, ... "
    "(HyCoCLIP's webdataset shards)"
)
OPENCLIP_LAYOUT = "open_clip layout jpg|png|webp and txt, optional json (img2dataset's shards)"
SHARD_LAYOUTS = f"webdataset shards in the {GRIT_LAYOUT} or the {OPENCLIP_LAYOUT}"


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


def _utf8(entry: Record, key: str) -> str:
    """The UTF-8 text of ``key`` in a record; DatasetFormatError naming it otherwise."""
    data = entry.field(key)
    try:
        return data.decode("utf-8") if isinstance(data, bytes) else str(data)
    except UnicodeDecodeError as err:
        raise entry.error(f": {key!r} is not UTF-8 text (byte {err.start})") from None


def _saved_texts(entry: Record) -> dict[str, Any]:
    """The record's optional ``json`` entry (this writer's text fields), as a mapping."""
    if "json" not in entry.item:
        return {}
    try:
        texts = json.loads(_utf8(entry, "json"))
    except ValueError as err:
        raise entry.error(f": 'json' is not valid JSON ({brief(str(err), 80)})") from None
    if not isinstance(texts, dict):
        raise entry.error(f": 'json' must hold a mapping, got {brief(texts)}")
    return texts


def _where(record: dict[str, Any]) -> str:
    return f"{record.get('__url__', '<shard>')}: record {brief(record.get('__key__'), 60)}"


def _openclip_sample(record: dict[str, Any], report: LoadReport | None) -> Sample | None:
    """A record in open_clip's layout (``jpg|png|webp`` + ``txt``) as a Sample without boxes;
    its ``json`` (img2dataset's download metadata) is not read."""
    entry = Record("webdataset", _where(record), OPENCLIP_LAYOUT, record)
    caption = _utf8(entry, "txt")
    image_key = next(e for e in IMAGE_EXTENSIONS if e in record)
    image = load_rgb(record[image_key], report)
    return None if image is None else Sample(id=record["__key__"], image=image, caption=caption)


def record_to_sample(record: dict[str, Any], report: LoadReport | None = None) -> Sample | None:
    """Decode a raw record (bytes values) to a Sample; None when an image is unreadable. A
    record in open_clip's layout (no ``child.*``) gives a sample without boxes.

    Raises :class:`~paperlib.data.records.DatasetFormatError` naming the shard, the record and
    the key when a field is missing or malformed (a caption that is not UTF-8, a parent count
    that is not an integer >= 0 or does not match the parents present).
    """
    where = _where(record)
    entry = Record("GRIT", where, SHARD_LAYOUTS, record)
    child_key = _image_key(record, "child")
    if child_key is None and any(e in record for e in IMAGE_EXTENSIONS):
        return _openclip_sample(record, report)
    if child_key is None:
        raise entry.error(f" has no 'child.<png|jpg>' or 'jpg' (keys: {brief(sorted(record))})")
    caption = _utf8(entry, "child.txt")
    count = 0
    if "numparents.txt" in record:
        count = entry.integer("numparents.txt", value=_utf8(entry, "numparents.txt"))
    texts = _saved_texts(entry)
    image = load_rgb(record[child_key], report)
    if image is None:
        return None
    boxes = []
    for k in range(count):
        crop_key, text_key = _image_key(record, f"parent{k:03d}"), f"parent{k:03d}.txt"
        if crop_key is None or text_key not in record:
            raise entry.error(f": numparents.txt says {count} but parent{k:03d} is missing")
        crop = load_rgb(record[crop_key], report)
        if crop is None:
            return None
        saved = texts.get("boxes", [])
        box = tuple(saved[k]["box"]) if k < len(saved) and saved[k]["box"] is not None else None
        boxes.append(BoxSample(crop, _utf8(entry, text_key), box))
    return Sample(
        id=texts.get("id", record["__key__"]),
        image=image,
        caption=caption,
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


def shard_error(exn: Exception, shard: str | None = None) -> bool:
    """webdataset's error handler for reading the shards: a tar file that cannot be read
    (or that repeats a member within a record) becomes a DatasetFormatError naming it
    (``shard``, else the path webdataset appends to the error's arguments); the project's own
    errors pass unchanged."""
    if isinstance(exn, DatasetFormatError):
        raise exn
    texts = [a for a in exn.args if isinstance(a, str)]
    found = next((t for t in reversed(texts) if t.endswith(".tar") or "/" in t), "a shard")
    shard = shard or found
    reason = brief(texts[0], 80) if texts else type(exn).__name__
    raise DatasetFormatError(
        f"GRIT: {shard} cannot be read as a tar file ({type(exn).__name__}: {reason}); "
        f"expected {SHARD_LAYOUTS}"
    ) from exn


def checked_records(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """``records`` as they come; DatasetFormatError naming the shard and the key of a record
    whose member names leave the shard (absolute, or through ``..``) or whose key occurs a
    second time in the same shard."""
    shard, seen = None, set()
    for record in records:
        key, url = record.get("__key__"), record.get("__url__", "<shard>")
        if url != shard:
            shard, seen = url, set()
        parts = str(key).replace("\\", "/").split("/")
        if str(key).startswith(("/", "\\")) or ".." in parts:
            raise DatasetFormatError(
                f"GRIT: {url}: record {brief(key, 60)} has member names that leave the shard "
                f"(absolute or through '..'); expected {GRIT_LAYOUT}"
            )
        if key in seen:
            raise DatasetFormatError(
                f"GRIT: {url}: record {brief(key, 60)} occurs twice in the shard (its members "
                "written apart, or two records of one key); expected one record per key"
            )
        seen.add(key)
        yield record


def is_local_shard(url: str) -> bool:
    """Whether ``url`` is a file path rather than a URL webdataset opens (``pipe:...``)."""
    return not URL_SCHEME.match(url)


def shard_urls(spec: str | Path) -> list[str]:
    """The shards ``data.root`` names: the sorted ``*.tar`` of a folder, else a shard list as
    webdataset spells it (``::`` joins lists, braces expand, ``pipe:`` and other URLs pass as
    given). FileNotFoundError naming what is missing: a folder without shards, or local shard
    files of the list that do not exist (the first few and their count)."""
    text = os.fspath(spec)
    if Path(text).is_dir():
        shards = sorted(str(p) for p in Path(text).glob("*.tar"))
        if not shards:
            raise FileNotFoundError(f"no .tar shards in {text}; expected {SHARD_LAYOUTS}")
        return shards
    try:
        urls = wds.shardlists.expand_urls(text)
    except ValueError as error:  # an unbalanced brace pattern
        raise FileNotFoundError(f"{brief(text, 120)} is not a shard list ({error})") from None
    urls = [u for u in urls if u]
    missing = [u for u in urls if is_local_shard(u) and not Path(u).is_file()]
    if missing or not urls:
        shown = ", ".join(missing[:3]) if missing else "no shard"
        raise FileNotFoundError(
            f"{brief(text, 120)}: {len(missing)} of {len(urls)} shard(s) not found ({shown}); "
            "expected a folder of .tar shards or a shard list (a.tar::b/{000..009}.tar, pipe:...)"
        )
    return urls


def _as_item(transform: Callable[[Image.Image], Any], sample: Sample) -> dict[str, Any]:
    return sample_to_item(sample, transform(sample.image))


def read_shards(
    urls: str | list[str],
    report: LoadReport | None = None,
    transform: Callable[[Image.Image], Any] | None = None,
    split_by_node: bool = False,
) -> wds.DataPipeline:
    """Iterable of Samples from shards, in order (no shuffling); with ``transform``, of the dict
    items :class:`~paperlib.data.sample.SampleDataset` gives (batch with ``collate_samples``).

    Shards are split across DataLoader workers (give at least as many shards as workers) and,
    with ``split_by_node``, across DDP ranks. Records with unreadable images are skipped and
    counted in ``report`` (that of the process that decoded them). A shard that is not a
    readable tar file raises
    :class:`~paperlib.data.records.DatasetFormatError` naming it (:func:`shard_error`).
    """
    if isinstance(urls, (list, tuple)):
        missing = [u for u in urls if "://" not in str(u) and not Path(u).exists()]
        if missing:
            raise FileNotFoundError(f"webdataset shards not found: {missing}")
        urls = [str(u) for u in urls]
    dataset = wds.DataPipeline(
        wds.SimpleShardList(urls),
        wds.split_by_node if split_by_node else wds.single_node_only,
        wds.split_by_worker,
        _shard_records,
        wds.map(partial(record_to_sample, report=report)),
        wds.select(_is_present),
    )
    return dataset if transform is None else dataset.compose(wds.map(partial(_as_item, transform)))


# --------------------------------------------------------------------------- training stream

SHUFFLE_BUFFER = 4000  # HyCoCLIP's GRIT training: wds.shuffle(4000, initial=4000)


def _stream_seed(*parts: int) -> int:
    """A 32-bit seed from integers (the same on every machine and Python run)."""
    return zlib.crc32(json.dumps(parts).encode())


def pass_shards(urls: list[str], seed: int, visit: int, shuffle: bool = True) -> list[str]:
    """The shard order of pass ``visit``: a seeded permutation (``shuffle``) or file order."""
    order = list(urls)
    if shuffle:
        random.Random(_stream_seed(seed, visit)).shuffle(order)
    return order


def raw_records(urls: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The undecoded records (bytes values, ``__key__``, ``__url__``) of shards, in order,
    through :func:`checked_records`; an error names the shard it came from."""
    for url in urls:
        samples = wds.tarfile_to_samples(handler=partial(shard_error, shard=url))
        yield from checked_records(samples([{"url": url}]))


def _shard_records(sources: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A pipeline stage: the records (:func:`raw_records`) of each ``{"url": ...}`` given."""
    for source in sources:
        yield from raw_records([source["url"]])


class ShardStream(IterableDataset):
    """An endless, seeded and resumable stream of training items from webdataset shards.

    Each pass ``v`` (0, 1, ...) permutes the shard list with ``(seed, v)`` (``shard_shuffle``),
    gives stream ``k`` of ``n`` (one per DDP rank × DataLoader worker) the shards ``k::n``, and
    serves their records through a shuffle buffer of ``buffer`` records (webdataset's
    ``shuffle``, filled to ``buffer`` before the first record; ≤ 1 reads in order) seeded by
    ``(seed, v, k)``. HyCoCLIP's reading order differs in two details, both named here: it
    gives rank r the sorted shards r::world once and shuffles within them, and its endless
    stream replays one pass order; this splits each pass's permutation, drawing a new order
    every pass. ``decode(record, visit)`` turns a raw record into an item (None drops it; the
    next item counts the records dropped before it as ``skipped_images``).

    :meth:`place` positions every stream after the batches a run consumed: a worker's
    stream has served whole batches of ``local_batch`` records (DataLoader workers take turns
    batch by batch, worker 0 first, so the resumed workers' roles turn with the step). From
    each shard's record count (its tar headers, read once on resume) it drops whole passes
    unread, rebuilds the current pass's buffer over record positions
    (:func:`~paperlib.data.shuffle_buffer.resume_point`) and reads only the buffered records and
    those after the last one read: the cost of a resume does not grow with the step. A record
    dropped as unreadable shifts a resumed stream by one record, since the count assumes every
    record decoded.
    """

    def __init__(
        self,
        urls: list[str],
        decode: Callable[[dict[str, Any], int], Any],
        *,
        seed: int = 0,
        shard_shuffle: bool = True,
        buffer: int = SHUFFLE_BUFFER,
    ) -> None:
        super().__init__()
        self.urls, self.decode, self.seed = list(urls), decode, seed
        self.shard_shuffle, self.buffer = shard_shuffle, buffer
        self.place(rank=0, world_size=1, batches=0, local_batch=1)

    def place(self, *, rank: int, world_size: int, batches: int, local_batch: int) -> None:
        """Read as DDP rank ``rank`` of ``world_size``, after ``batches`` batches of
        ``local_batch`` items (the resume position)."""
        self.rank, self.world_size = rank, world_size
        self.start_batches, self.local_batch = batches, local_batch

    def _stream(self) -> tuple[int, int, int]:
        """(stream id, stream count, records this stream skips) of the calling worker."""
        info = get_worker_info()
        worker, workers = (0, 1) if info is None else (info.id, info.num_workers)
        streams = self.world_size * workers
        if len(self.urls) < streams:
            raise ValueError(
                f"data.root: {len(self.urls)} shard(s) for {self.world_size} rank(s) × "
                f"{workers} data.num_workers; give at least one shard per reader"
            )
        # the DataLoader asks worker 0 first: after b batches it plays the worker that
        # served batch b in the uninterrupted run
        worker = (worker + self.start_batches) % workers
        served = max(0, (self.start_batches - worker + workers - 1) // workers)
        return self.rank * workers + worker, streams, served * self.local_batch

    def records(
        self, stream: int, streams: int, skip: int = 0
    ) -> Iterator[tuple[int, dict[str, Any]]]:
        """(pass, raw record) of one stream, endless, after the first ``skip`` it serves."""
        first, counts = 0, self._counts() if skip else {}
        while skip and skip >= (total := self._pass_total(first, stream, streams, counts)):
            skip, first = skip - total, first + 1  # whole passes: nothing read
        for visit in itertools.count(first):
            shards = self._stream_shards(visit, stream, streams)
            rng = random.Random(_stream_seed(self.seed, visit, stream))
            records = self._pass_records(shards, rng, skip, counts)
            skip, empty = 0, True
            for record in records:
                empty = False
                yield visit, record
            if empty:
                raise ValueError(f"data.root: the shards {shards[:3]} hold no record")

    def _counts(self) -> dict[str, int]:
        """Each shard's record count (its tar headers; needed only to resume)."""
        return {url: shard_record_count(url) for url in self.urls}

    def _stream_shards(self, visit: int, stream: int, streams: int) -> list[str]:
        """The shards stream ``stream`` of ``streams`` reads in pass ``visit``."""
        return pass_shards(self.urls, self.seed, visit, self.shard_shuffle)[stream::streams]

    def _pass_total(self, visit: int, stream: int, streams: int, counts: dict[str, int]) -> int:
        shards = self._stream_shards(visit, stream, streams)
        total = sum(counts[url] for url in shards)
        if total == 0:
            raise ValueError(f"data.root: the shards {shards[:3]} hold no record")
        return total

    def _pass_records(
        self, shards: list[str], rng: random.Random, skip: int, counts: dict[str, int]
    ) -> Iterator[dict[str, Any]]:
        """One pass's records through the buffer, from the ``skip``-th it serves on: the
        buffer's state rebuilt over positions (``shuffle_buffer.resume_point``), then only
        the buffered records and those after the last read are fetched."""
        if not skip:
            records = raw_records(shards)
            return ShuffleBuffer(self.buffer, rng).run(records) if self.buffer > 1 else records
        if self.buffer <= 1:
            return records_from(shards, counts, skip)
        total = sum(counts[url] for url in shards)
        read, buffered = resume_point(total, self.buffer, rng, skip)
        waiting = records_at(shards, counts, set(buffered))
        state = [waiting[position] for position in buffered]
        return ShuffleBuffer(self.buffer, rng, state).run(records_from(shards, counts, read))

    def __iter__(self) -> Iterator[Any]:
        stream, streams, skip = self._stream()
        dropped = 0
        for visit, record in self.records(stream, streams, skip):
            item = self.decode(record, visit)
            if item is None:
                dropped += 1
                continue
            if dropped and isinstance(item, dict):
                item["skipped_images"], dropped = dropped, 0
            yield item


def _shard_starts(shards: list[str], counts: dict[str, int]) -> list[int]:
    """The pass position of each shard's first record."""
    return list(itertools.accumulate((counts[url] for url in shards), initial=0))[:-1]


def records_from(shards: list[str], counts: dict[str, int], start: int) -> Iterator[dict[str, Any]]:
    """The records of ``shards`` (in order) from pass position ``start`` on: shards wholly
    before it are not opened; the first one is read past its first records."""
    for url, first in zip(shards, _shard_starts(shards, counts)):
        if first + counts[url] <= start:
            continue
        yield from itertools.islice(raw_records([url]), max(0, start - first), None)


def records_at(
    shards: list[str], counts: dict[str, int], positions: set[int]
) -> dict[int, dict[str, Any]]:
    """The records at these pass positions, reading only the shards that hold them."""
    found: dict[int, dict[str, Any]] = {}
    for url, first in zip(shards, _shard_starts(shards, counts)):
        wanted = {p - first for p in positions if first <= p < first + counts[url]}
        if not wanted:
            continue
        for index, record in enumerate(raw_records([url])):
            if index in wanted:
                found[first + index] = record
            if len(found) == len(positions) or index >= max(wanted):
                break
    return found
