"""COLA reference scorers: random 1/4, bag of words at chance, attribute binding solves all."""

from __future__ import annotations

import numpy as np
import pytest

from paperlib.data.cola_baselines import (
    COLA_RANDOM_ACCURACY,
    attribute_binding_cola_accuracy,
    bag_of_words_cola_accuracy,
    bag_of_words_score,
    bound_pairs,
    cola_accuracy_from_scores,
    cola_pair_scores,
    mentions,
)
from paperlib.data.world import World, draw_scene, scene_cola_query

NUM_PAIRS = 300


@pytest.fixture(scope="module")
def world_pairs() -> tuple[World, list[int]]:
    """World(0) and the first NUM_PAIRS indices that have a COLA pair."""
    indices = [i for i in range(2000) if scene_cola_query(draw_scene(0, i)) is not None]
    return World(0, 32), indices[:NUM_PAIRS]


def test_random_scorer_succeeds_one_time_in_four():
    scores = np.random.default_rng(0).random((200_000, 2, 2))
    measured = cola_accuracy_from_scores(scores)
    assert abs(measured - COLA_RANDOM_ACCURACY) < 0.005, measured
    assert COLA_RANDOM_ACCURACY == 0.25


def test_accuracy_rule_is_text_to_image_with_strict_ties():
    right = np.array([[[2.0, 0.0], [1.0, 3.0]]])  # s[i, c]: each caption prefers its own image
    wrong = np.array([[[1.0, 0.0], [2.0, 3.0]]])  # caption 0 prefers image 1
    tied = np.ones((1, 2, 2))
    assert cola_accuracy_from_scores(right) == 1.0
    assert cola_accuracy_from_scores(wrong) == 0.0
    assert cola_accuracy_from_scores(tied, tie="fail") == 0.0
    many_ties = cola_accuracy_from_scores(np.ones((40_000, 2, 2)), tie="random", seed=1)
    assert abs(many_ties - 0.25) < 0.01, many_ties
    with pytest.raises(ValueError, match="tie"):
        cola_accuracy_from_scores(tied, tie="never")


def test_mentions_read_longest_names_and_bind_colours_to_shapes():
    caption = "a red diamond frame and a blue mirrored l shape"
    assert mentions(caption) == ["red", "diamond frame", "blue", "mirrored l shape"]
    assert bound_pairs(caption) == [("red", "diamond frame"), ("blue", "mirrored l shape")]
    objects = [{"colour": "blue", "sub": "diamond frame"}, {"colour": "red", "sub": "disc"}]
    assert bag_of_words_score(caption, objects) == 3.0  # red, diamond frame, blue


def test_bag_of_words_ties_everywhere_and_is_at_chance(world_pairs):
    world, indices = world_pairs
    scores = cola_pair_scores(world, indices, bag_of_words_score)
    assert scores.shape == (NUM_PAIRS, 2, 2)
    assert np.all(scores == scores[:, :1, :1])  # same count for both captions on both images
    assert bag_of_words_cola_accuracy(world, indices, tie="fail") == 0.0
    measured = bag_of_words_cola_accuracy(world, indices, tie="random", seed=0)
    assert abs(measured - COLA_RANDOM_ACCURACY) < 0.075, measured  # 3 sigma at 300 pairs
    mean = np.mean([bag_of_words_cola_accuracy(world, indices, "random", s) for s in range(10)])
    assert abs(mean - COLA_RANDOM_ACCURACY) < 0.025, mean


def test_attribute_binding_solves_every_pair(world_pairs):
    world, indices = world_pairs
    assert attribute_binding_cola_accuracy(world, indices) == 1.0
