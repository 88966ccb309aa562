"""The training stream over webdataset shards: seeded shard shuffle and sample buffer
(HyCoCLIP's reading order), and a resume that positions the stream without reading or
decoding what it served."""

from __future__ import annotations

import itertools
import random
import tarfile

import pytest
import webdataset as wds
from torch.utils.data import DataLoader

from paperlib.data import webdataset as stream_module
from paperlib.data.shuffle_buffer import ShuffleBuffer, resume_point, shard_record_count
from paperlib.data.webdataset import ShardStream, pass_shards, raw_records, write_shards
from paperlib.data.world import World
from tests.engine_helpers import write_records


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    root = tmp_path_factory.mktemp("stream")
    world = World(seed=2, image_size=32)
    return write_shards((world.sample(i) for i in range(24)), root, maxcount=4)  # 6 shards


class CountingKeys:
    """Decode = the record's key; counts the calls (the decodes a resume would pay)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, record, visit):
        self.calls += 1
        return f"{visit}:{record['__key__']}"


def _batches(shards, start: int, count: int, *, workers: int = 0, **options) -> tuple[list, int]:
    decode = CountingKeys()
    stream = ShardStream(shards, decode, seed=7, **options)
    stream.place(rank=0, world_size=1, batches=start, local_batch=3)
    loader = DataLoader(stream, batch_size=3, num_workers=workers)
    return [list(b) for b in itertools.islice(loader, count)], decode.calls


def test_passes_shuffle_shards_and_records_with_the_seed(shards):
    keys = [r["__key__"] for r in raw_records(shards)]
    (first, *_), _ = _batches(shards, 0, 1)
    batches, _ = _batches(shards, 0, 16)  # two passes of 24 records
    flat = [k for b in batches for k in b]
    passes = [[k.split(":")[1] for k in flat if k.startswith(f"{v}:")] for v in (0, 1)]
    assert all(sorted(p) == sorted(keys) for p in passes)  # every record once a pass
    assert passes[0] != keys and passes[0] != passes[1]  # shuffled, anew each pass
    assert batches[0] == first  # the same seed, the same order
    other = ShardStream(shards, CountingKeys(), seed=8)
    assert [k for _, k in zip(range(24), other)] != flat[:24]
    assert pass_shards(shards, 7, 0, shuffle=False) == shards
    assert sorted(pass_shards(shards, 7, 0)) == sorted(shards)


def test_in_order_without_shuffling(shards):
    keys = [f"0:{r['__key__']}" for r in raw_records(shards)]
    batches, _ = _batches(shards, 0, 8, shard_shuffle=False, buffer=0)
    assert [k for b in batches for k in b] == keys


@pytest.mark.parametrize("buffer", [5, 4000])
@pytest.mark.parametrize("workers", [0, 2])
def test_a_resumed_stream_continues_the_uninterrupted_one(shards, workers, buffer):
    whole, _ = _batches(shards, 0, 20, workers=workers, buffer=buffer)
    for start in (1, 5, 11, 17):
        resumed, _ = _batches(shards, start, 20 - start, workers=workers, buffer=buffer)
        assert resumed == whole[start:]


def test_resume_decodes_only_what_it_serves(shards):
    _, early = _batches(shards, 1, 2)
    _, late = _batches(shards, 30, 2)  # past the first pass
    assert early == late == 2 * 3


def test_too_few_shards_for_the_readers_is_named(shards):
    stream = ShardStream(shards[:1], CountingKeys())
    stream.place(rank=0, world_size=2, batches=0, local_batch=3)
    with pytest.raises(ValueError, match="1 shard.*2 rank"):
        next(iter(stream))


@pytest.mark.parametrize("size", [1, 2, 5, 16, 40])
@pytest.mark.parametrize("total", [0, 1, 7, 30])
def test_the_shuffle_buffer_draws_as_webdataset_does(size, total):
    ours = list(ShuffleBuffer(size, random.Random(size * 100 + total)).run(range(total)))
    theirs = wds.shuffle(size, initial=size, rng=random.Random(size * 100 + total))
    assert ours == list(theirs(iter(range(total))))


@pytest.mark.parametrize("size", [1, 3, 8])
def test_resume_point_continues_the_shuffle_exactly(size):
    total = 25
    whole = list(ShuffleBuffer(size, random.Random(4)).run(range(total)))
    for served in range(total + 1):
        rng = random.Random(4)
        read, buffered = resume_point(total, size, rng, served)
        assert read <= total and len(buffered) <= size
        assert set(buffered) | set(whole[:served]) == set(range(read))  # read = served + waiting
        rest = ShuffleBuffer(size, rng, list(buffered)).run(range(read, total))
        assert whole[:served] + list(rest) == whole
    with pytest.raises(ValueError, match="served: expected 0..25"):
        resume_point(total, size, random.Random(4), 26)


def test_record_counts_from_headers_match_what_webdataset_reads(shards, tmp_path):
    for url in shards:
        assert shard_record_count(url) == len(list(raw_records([url]))) == 4
    mixed = [  # multi-file records, a one-file record, a webdataset meta member
        {"__key__": "a", "jpg": b"x", "txt": b"t", "json": b"{}"},
        {"__key__": "dir/b", "txt": b"t"},
        {"__key__": "c", "cls": b"1", "txt": b"u"},
    ]
    path = write_records(tmp_path / "mixed.tar", mixed)
    with tarfile.open(path, "a") as tar:
        info = tarfile.TarInfo("__meta__")
        info.size = 0
        tar.addfile(info)
    assert shard_record_count(str(path)) == len(list(raw_records([str(path)]))) == 3


class CountingReads:
    """``raw_records`` that counts the records it reads (the bytes a resume pays)."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self, urls):
        for record in raw_records(urls):
            self.reads += 1
            yield record


@pytest.mark.parametrize("buffer", [0, 5])
def test_a_resume_reads_no_more_late_than_early(shards, buffer, monkeypatch):
    whole, _ = _batches(shards, 0, 60, buffer=buffer)  # 180 records: 7.5 passes of 24
    reads = {}
    for start in (3, 51):  # inside pass 0; inside pass 6
        counter = CountingReads()
        monkeypatch.setattr(stream_module, "raw_records", counter)
        resumed, decodes = _batches(shards, start, 2, buffer=buffer)
        assert resumed == whole[start : start + 2] and decodes == 2 * 3
        reads[start] = counter.reads
    assert reads[51] <= reads[3] + 2 * 4  # at most the records of the shards it starts in
    assert reads[51] < 51 * 3  # far fewer than the records served before it


def test_counting_a_compressed_shard_is_a_named_error(tmp_path):
    import gzip

    from paperlib.data.records import DatasetFormatError

    plain = write_records(tmp_path / "plain.tar", [{"__key__": "a", "txt": b"t"}])
    packed = tmp_path / "packed.tar"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    with pytest.raises(DatasetFormatError, match="packed.tar: cannot count.*uncompressed tar"):
        shard_record_count(str(packed))
