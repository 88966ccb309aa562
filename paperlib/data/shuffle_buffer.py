"""A seeded shuffle buffer whose state can be rebuilt from a count, and the record counts of
webdataset shards read from their tar headers.

A training stream serves its records through a shuffle buffer (webdataset's ``shuffle``,
HyCoCLIP's 4,000 records). Resuming it after ``n`` served records needs three things: which
records had been read, which of them wait in the buffer (and in what order), and the random
generator's state. :func:`resume_point` replays the buffer over record *positions* (integers)
rather than records, so it costs integer work bounded by one pass and reads no shard; the
stream then reads only the buffered records and what follows
(``paperlib.data.webdataset.ShardStream``).
"""

from __future__ import annotations

import contextlib
import random
import re
import tarfile
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

from webdataset.gopen import gopen
from webdataset.tariterators import group_by_keys

from paperlib.data.records import DatasetFormatError

T = TypeVar("T")

# the member names webdataset's tar reader leaves out (``tar_file_iterator``'s defaults)
_SKIPPED_MEMBER = re.compile(r"__[^/]*__($|/)")
_META_PREFIX, _META_SUFFIX = "__", "__"
URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")  # pipe:, http://, s3://, gs://, ...


class ShuffleBuffer:
    """webdataset's ``shuffle(size, initial=size, rng=rng)``: the same draws in the same order
    (``tests/test_shard_stream.py`` compares them), with the buffer given as a start state.

    While the buffer holds fewer than ``size`` items it takes two items per draw; once full,
    each new item joins it and one item, drawn uniformly, leaves (swapped with the last, then
    popped); when the source ends the rest leave one draw at a time.
    """

    def __init__(self, size: int, rng: random.Random, buffer: list[Any] | None = None) -> None:
        self.size, self.rng = size, rng
        self.buffer: list[Any] = [] if buffer is None else buffer

    def _pick(self) -> Any:
        buf = self.buffer
        k = self.rng.randint(0, len(buf) - 1)
        item, buf[k] = buf[k], buf[-1]
        buf.pop()
        return item

    def run(self, items: Iterable[T]) -> Iterator[T]:
        """The items of ``items`` in shuffled order (after whatever the buffer holds)."""
        source = iter(items)
        for item in source:
            self.buffer.append(item)
            if len(self.buffer) < self.size:
                following = next(source, _END)
                if following is not _END:
                    self.buffer.append(following)
            if len(self.buffer) >= self.size:
                yield self._pick()
        while self.buffer:
            yield self._pick()


_END = object()


class _Counted:
    """An iterator over ``range(total)`` that knows how many positions it gave out."""

    def __init__(self, total: int) -> None:
        self.given, self.total = 0, total

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> int:
        if self.given >= self.total:
            raise StopIteration
        self.given += 1
        return self.given - 1


def resume_point(total: int, size: int, rng: random.Random, served: int) -> tuple[int, list[int]]:
    """Where a :class:`ShuffleBuffer` of ``size`` over ``total`` records stands after serving
    ``served`` of them: (positions read from the source, the buffered positions in buffer
    order). ``rng`` is left in the state the buffer's generator had at that point, so a new
    ``ShuffleBuffer(size, rng, buffered records)`` over the records from that position on
    serves what the uninterrupted one would have."""
    if not 0 <= served <= total:
        raise ValueError(f"served: expected 0..{total} records of this pass, got {served}")
    positions = _Counted(total)
    buffer = ShuffleBuffer(size, rng)
    out = buffer.run(positions)
    for _ in range(served):
        next(out)
    return positions.given, list(buffer.buffer)


@contextlib.contextmanager
def _opened_tar(url: str) -> Iterator[tarfile.TarFile]:
    """A local tar file opened for seeking, or a URL webdataset opens (``pipe:...``) read as a
    stream (every member's bytes pass by once: a stream cannot seek)."""
    if not URL_SCHEME.match(url):
        with tarfile.open(url, mode="r:") as tar:
            yield tar
        return
    with gopen(url) as stream, tarfile.open(fileobj=stream, mode="r|*") as tar:
        yield tar


def _header_entries(path: str) -> Iterator[dict[str, Any]]:
    """The regular members of a tar file as webdataset's reader names them, with empty data:
    headers only (an uncompressed tar is read by seeking past each member's bytes)."""
    with _opened_tar(path) as tar:
        for info in tar:
            name = info.name
            if not info.isreg() or name is None:
                continue
            if "/" not in name and name.startswith(_META_PREFIX) and name.endswith(_META_SUFFIX):
                continue
            if _SKIPPED_MEMBER.match(name):
                continue
            yield {"fname": name, "data": b"", "__url__": path}


def shard_record_count(path: str) -> int:
    """How many records webdataset reads from the tar shard at ``path`` (members grouped by
    key with its own ``group_by_keys``), from the headers alone. A shard that is not an
    uncompressed tar (the headers must be read by seeking) is a DatasetFormatError naming it."""
    try:
        return sum(1 for _ in group_by_keys(_header_entries(path)))
    except (tarfile.TarError, OSError) as exn:
        raise DatasetFormatError(
            f"{path}: cannot count its records from its tar headers ({type(exn).__name__}: "
            f"{exn}); resuming a streamed run needs uncompressed tar shards"
        ) from exn
