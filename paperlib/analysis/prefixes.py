"""What a text tower reads of a caption's cumulative prefixes under its context length
(tutorial 02; ``docs/methods/himo-clip.md#long-text``, ``docs/methods/himo-clip.md#himo-at-k``).

A tower with a 77-token context cuts every longer text to its first 77 tokens, so once a
caption's prefixes pass that length they all read alike and score alike: the curve of score
against prefix length is flat there by construction, whatever the model learned. These helpers
count, for the held-out world's captions, how many prefixes a context reads in full and from
which prefix on they read alike, so that the tutorial compares scores over a fixed set of
prefixes every tower reads in full.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from paperlib.data.world import draw_scene, scene_sentences
from paperlib.segments import cumulative_prefixes


def world_prefixes(seed: int, size: int) -> list[list[str]]:
    """The cumulative sentence prefixes of the long captions of world samples 0..size-1 of
    ``seed`` (as ``data.world.World`` gives them in ``Sample.segments``), without rendering."""
    return [cumulative_prefixes(scene_sentences(draw_scene(seed, i))) for i in range(size)]


def token_lengths(prefixes: Sequence[Sequence[str]], tokenizer) -> list[np.ndarray]:
    """Per caption, the uncut token count of each prefix: its BPE tokens plus the start and end
    tokens (an open_clip ``SimpleTokenizer``'s ``encode``)."""
    return [np.array([len(tokenizer.encode(text)) + 2 for text in caption]) for caption in prefixes]


def read_in_full(lengths: Sequence[np.ndarray], context: int) -> np.ndarray:
    """(captions,) how many leading prefixes of each caption fit in ``context`` tokens (each
    prefix is at least as long as the one before, so these are the first ones)."""
    return np.array([int(np.sum(n <= context)) for n in lengths])


def reads_alike_from(prefixes: Sequence[Sequence[str]], tokenizer) -> np.ndarray:
    """(captions,) the 1-based prefix from which every later prefix of the caption reads the
    same as the whole caption once ``tokenizer`` cuts it to its context; the caption's number
    of prefixes where only the whole caption reads so."""
    out = []
    for caption in prefixes:
        ids = tokenizer(list(caption))
        same = (ids == ids[-1]).all(dim=1).tolist()
        first = len(same)
        while first > 1 and same[first - 2]:
            first -= 1
        out.append(first)
    return np.array(out)


def reads_of(tokenizer) -> Callable[[str], tuple[int, ...]]:
    """What a tower reads of a text: its token ids, cut to ``tokenizer``'s context (the ``reads``
    of ``study.decide.chance.world_chance``, so that texts cut alike count as one input)."""

    def reads(text: str) -> tuple[int, ...]:
        return tuple(tokenizer([text])[0].tolist())

    return reads
