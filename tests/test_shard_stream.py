"""The training stream over webdataset shards: seeded shard shuffle and sample buffer
(HyCoCLIP's reading order), and a resume that positions the stream without decoding."""

from __future__ import annotations

import itertools

import pytest
from torch.utils.data import DataLoader

from paperlib.data.webdataset import ShardStream, pass_shards, raw_records, write_shards
from paperlib.data.world import World


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


@pytest.mark.parametrize("workers", [0, 2])
def test_a_resumed_stream_continues_the_uninterrupted_one(shards, workers):
    whole, _ = _batches(shards, 0, 20, workers=workers)
    for start in (1, 5, 11):
        resumed, _ = _batches(shards, start, 20 - start, workers=workers)
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
