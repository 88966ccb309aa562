"""What a text tower reads of the world's caption prefixes (tutorial 02), against the rendered
world, the tokenizer's own cut and the study's exported embeddings."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from paperlib.analysis.prefixes import (
    read_in_full,
    reads_alike_from,
    reads_of,
    token_lengths,
    world_prefixes,
)
from paperlib.data.world import World
from paperlib.models.clip import create_model
from paperlib.study.plan.design import EVAL_SEED, PRETRAIN
from paperlib.study.report.decided import available_scale
from paperlib.study.results.reader import HIMO_MODELS, load_embeddings


@pytest.fixture(scope="module")
def tokenizer():
    return create_model("paper-tiny-rn", pretrained=None)[2]  # 77 tokens


def test_world_prefixes_are_the_rendered_samples_segments():
    world = World(seed=EVAL_SEED, image_size=32)
    assert world_prefixes(EVAL_SEED, 5) == [world.sample(i).segments for i in range(5)]


def test_read_in_full_counts_the_prefixes_the_tokenizer_does_not_cut(tokenizer):
    prefixes = world_prefixes(EVAL_SEED, 20)
    fits = read_in_full(token_lengths(prefixes, tokenizer), tokenizer.context_length)
    for caption, k in zip(prefixes, fits):
        rows = [row[row != 0].tolist() for row in tokenizer(list(caption))]  # padding dropped
        whole = [
            [tokenizer.sot_token_id, *tokenizer.encode(t), tokenizer.eot_token_id] for t in caption
        ]
        assert [row == full for row, full in zip(rows, whole)] == [
            j < k for j in range(len(caption))
        ]


def test_reads_alike_from_is_where_the_cut_prefixes_stop_changing(tokenizer):
    prefixes = [["a b.", "a b. c d.", "a b. c d. e f."]] + world_prefixes(EVAL_SEED, 10)
    alike = reads_alike_from(prefixes, tokenizer)
    assert alike[0] == 3  # short texts: only the whole caption reads as itself
    for caption, first in zip(prefixes, alike):
        ids = [tuple(row.tolist()) for row in tokenizer(list(caption))]
        assert all(row == ids[-1] for row in ids[first - 1 :])
        assert first == 1 or ids[first - 2] != ids[-1]
    reads = reads_of(tokenizer)
    assert reads(prefixes[1][-1]) == tuple(tokenizer([prefixes[1][-1]])[0].tolist())


def test_the_short_context_towers_cut_prefixes_have_equal_embeddings(tokenizer):
    """Where the 77-token tower reads two prefixes alike, the study exported the same feature:
    its flat tail is the cut, not the model."""
    emb = load_embeddings(available_scale("auto", study="himo"), "himo", PRETRAIN)
    lengths = emb["segments_all_lengths"].tolist()
    prefixes = world_prefixes(EVAL_SEED, len(lengths))
    alike = reads_alike_from(prefixes, tokenizer)
    for rows, first in zip(emb["segments_all"].split(lengths), alike):
        assert torch.equal(rows[first - 1 :], rows[-1:].expand(len(rows) - first + 1, -1))
        if first > 1:
            assert not torch.equal(rows[first - 2], rows[-1])
    assert HIMO_MODELS[PRETRAIN] == "pre-trained"
    assert np.sum(alike < np.array(lengths)) > 0
