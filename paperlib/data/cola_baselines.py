"""Reference scorers for the world's COLA pairs (:meth:`paperlib.data.world.World.cola_pair`).

A COLA query is 2 images and 2 captions that bind the same colours to the same two shapes the
other way round; it counts as solved when each caption scores its own image strictly higher
than the other image (COLA's text-to-image rule, as :mod:`paperlib.metrics.composition`).

- A uniformly random scorer: each caption picks its own image with probability 1/2, so the
  query is solved with probability 1/4 (``COLA_RANDOM_ACCURACY``).
- A bag-of-words scorer counts the caption words that name a colour or a sub-category present
  anywhere in the image: it sees attributes and shapes but not which colour belongs to which
  shape. Both images hold the same colours and shapes, so it ties everywhere: 0 when a tie is
  a miss, 1/4 in expectation with random tie-breaking.
- An attribute-binding scorer checks that each (colour, sub-category) pair the caption names
  is an object of the image: it solves every pair, so the pairs are solvable by binding.

The scorers read the ground truth in ``meta["objects"]``, never the pixels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from paperlib.data.world import COLOURS, SUBCATEGORIES, World

COLA_RANDOM_ACCURACY = 0.25
COLOUR_NAMES: frozenset[str] = frozenset(name for name, _ in COLOURS)
# longest names first, so "diamond frame" is read before "diamond"
_VOCABULARY = sorted(COLOUR_NAMES | set(SUBCATEGORIES), key=lambda n: -len(n.split()))
_MENTION = re.compile(r"\b(" + "|".join(re.escape(n) for n in _VOCABULARY) + r")\b")

Scorer = Callable[[str, list[dict[str, Any]]], float]


def mentions(caption: str) -> list[str]:
    """Colour and sub-category names in ``caption``, in order (longest match first)."""
    return _MENTION.findall(caption.lower())


def bag_of_words_score(caption: str, objects: list[dict[str, Any]]) -> float:
    """Number of caption mentions naming a colour or sub-category of any object of the image."""
    present = {o["colour"] for o in objects} | {o["sub"] for o in objects}
    return float(sum(m in present for m in mentions(caption)))


def bound_pairs(caption: str) -> list[tuple[str, str]]:
    """(colour, sub-category) pairs of ``caption``: each colour bound to the next shape name."""
    pairs, colour = [], None
    for name in mentions(caption):
        if name in COLOUR_NAMES:
            colour = name
        elif colour is not None:
            pairs.append((colour, name))
            colour = None
    return pairs


def attribute_binding_score(caption: str, objects: list[dict[str, Any]]) -> float:
    """Fraction of the caption's (colour, sub-category) pairs that are objects of the image."""
    present = {(o["colour"], o["sub"]) for o in objects}
    pairs = bound_pairs(caption)
    return sum(p in present for p in pairs) / max(1, len(pairs))


def cola_pair_scores(world: World, indices: Iterable[int], scorer: Scorer) -> np.ndarray:
    """(num_pairs, 2, 2) scores ``s[q, i, c]`` of image i and caption c over the indices that
    have a COLA pair (caption 0 describes image 0)."""
    out = []
    for index in indices:
        pair = world.cola_pair(index)
        if pair is None:
            continue
        query = pair[0].meta["cola"]
        captions = (query["caption"], query["swapped_caption"])
        out.append([[scorer(c, image.meta["objects"]) for c in captions] for image in pair])
    return np.asarray(out, dtype=float).reshape(-1, 2, 2)


def cola_accuracy_from_scores(scores: np.ndarray, tie: str = "fail", seed: int = 0) -> float:
    """Text-to-image COLA accuracy: each caption must pick its own image. ``tie="fail"``: a tie
    is a miss; ``tie="random"``: a tied caption picks one of the two images at random."""
    if tie not in ("fail", "random"):
        raise ValueError(f"tie must be 'fail' or 'random', got {tie!r}")
    if len(scores) == 0:
        raise ValueError("no COLA pairs to score")
    own = np.stack([scores[:, 0, 0], scores[:, 1, 1]], axis=1)
    other = np.stack([scores[:, 1, 0], scores[:, 0, 1]], axis=1)
    picks = own > other
    if tie == "random":
        coin = np.random.default_rng(seed).random(own.shape) < 0.5
        picks |= (own == other) & coin
    return float(picks.all(axis=1).mean())


def bag_of_words_cola_accuracy(
    world: World, indices: Iterable[int], tie: str = "random", seed: int = 0
) -> float:
    """COLA accuracy of :func:`bag_of_words_score` (ties broken as ``tie`` says)."""
    scores = cola_pair_scores(world, indices, bag_of_words_score)
    return cola_accuracy_from_scores(scores, tie, seed)


def attribute_binding_cola_accuracy(world: World, indices: Iterable[int]) -> float:
    """COLA accuracy of :func:`attribute_binding_score` (a tie is a miss)."""
    return cola_accuracy_from_scores(cola_pair_scores(world, indices, attribute_binding_score))
