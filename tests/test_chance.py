"""Chance levels from a permutation null (``paperlib.study.decide.chance``): each closed form
against the brute-force average of the project's own metric functions over every permutation of
small score arrays, with and without ties, and the study's test world's records."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
import torch

from paperlib.metrics import hierarchy, monotonicity, zeroshot
from paperlib.metrics.composition import PROTOCOLS, cola_correct
from paperlib.metrics.items import retrieval_items
from paperlib.metrics.retrieval import same_text_positives
from paperlib.study.decide.chance import (
    RULES,
    HeldOutSet,
    cola_null,
    enumerated_null,
    image_to_text_null,
    rise_null,
    text_to_image_null,
    top_null,
    world_chance,
    world_held_out,
)

SEGMENT_ROWS = [
    [0.3, 0.1],
    [0.2, 0.2],
    [0.5, 0.1, 0.3],
    [0.1, 0.1, 0.4],
    [0.4, 0.4, 0.4],
    [0.9, 0.2, 0.5, 0.7],
    [0.2, 0.7, 0.2, 0.9],
]


def one_item(scores) -> list[int]:
    """The group of every entry of ``scores``: one item's scores, permuted together."""
    return list(range(np.asarray(scores).size))


def held_out(long_texts=("a", "b"), short_texts=("a", "b"), classes=None, protocol="text_to_image"):
    segments = {2: (("a", "a b"),), 3: (("a", "a b", "a b c"),)}
    return HeldOutSet(
        tuple(long_texts), segments, tuple(short_texts), classes or {1: 4, 3: 24}, protocol
    )


def rule_value(item: str, held: HeldOutSet) -> float:
    return RULES[item].record(held)["value"]


@pytest.mark.parametrize("row", SEGMENT_ROWS)
def test_a_strict_rise_and_pearson_against_every_order_of_k_segments(row):
    rise = enumerated_null(
        lambda s: monotonicity.strict_monotone_accuracy([s]), row, [one_item(row)]
    )
    assert rise == pytest.approx(rise_null(row))
    rho = enumerated_null(
        lambda s: monotonicity.monotonicity_correlations([s]), row, [one_item(row)]
    )
    assert abs(rho) < 1e-12  # HiMo@K's null is 0, with ties and for constant scores too
    if len(set(row)) == len(row):
        assert rise == pytest.approx(1 / math.factorial(len(row)))
    else:
        assert rise == 0.0  # equal scores never rise strictly


def test_the_himo_rules_give_percentages_of_the_enumerated_rise():
    held = held_out()
    for k, item in ((2, "world-monotonicity/himo2"), (3, "world-monotonicity/himo3")):
        row = np.linspace(0.1, 0.9, k)[::-1]
        rise = enumerated_null(
            lambda s: monotonicity.strict_monotone_accuracy([s]), row, [one_item(row)]
        )
        assert rule_value(item, held) == pytest.approx(100 * rise)
    assert rule_value("world-monotonicity/himo2", held) == 50.0
    assert rule_value("world-monotonicity/himo3", held) == pytest.approx(100 / 6)
    assert rule_value("world-monotonicity/himoK", held) == 0.0


def test_segments_read_alike_never_rise():
    """Two images: one whose 2 segments are distinct inputs, one whose 2 are read alike (a
    context cut): each input's score permuted over the image's distinct inputs."""
    segments = {2: (("a", "a b"), ("c", "c")), 3: (("a", "a b", "a b c"),)}
    held = HeldOutSet(("x", "y"), segments, ("x", "y"), {1: 4, 3: 24})

    def rise(s):  # s: the scores of "a", "a b" (the first image) and of "c" (the second)
        return monotonicity.strict_monotone_accuracy([[s[0], s[1]], [s[2], s[2]]])

    got = enumerated_null(rise, [0.3, 0.8, 0.5], [[0, 1], [2]])
    assert got == pytest.approx(0.25)
    assert rule_value("world-monotonicity/himo2", held) == pytest.approx(100 * got)


@pytest.mark.parametrize("row", [[0.4, 0.1, 0.3, 0.2], [0.4, 0.4, 0.1, 0.2], [0.1, 0.1, 0.3, 0.3]])
def test_zero_shot_against_every_order_of_an_images_class_scores(row):
    def correct(scores):
        rank, _ = zeroshot.label_ranks(torch.tensor(scores)[None], torch.tensor([2]))
        return float(rank[0] == 0)

    got = enumerated_null(correct, row, [one_item(row)])
    assert got == pytest.approx(top_null(row, 1))
    if len(set(row)) == len(row):
        assert got == pytest.approx(
            rule_value("world-zeroshot/L1_correct", held_out(classes={1: 4, 3: 24}))
        )
    elif row.count(max(row)) > 1:
        assert got == 0.0  # the label never stands strictly first


def test_one_query_with_two_right_candidates_and_a_tied_top():
    row = np.array([[0.7, 0.7, 0.1, 0.3, 0.2]])
    positive = torch.eye(5, dtype=torch.bool)  # the other queries: one right text each
    positive[0, :2] = True  # the query under test: two right candidates

    def hit(scores):
        """The hit of query 0 among five texts, the other four queries (every text needs a
        positive) scoring their own text first."""
        full = torch.eye(5, dtype=torch.float64)
        full[0] = torch.tensor(scores[0])
        return retrieval_items(full, positive, ks=(1,))["i2t_hit1"][:1]

    got = enumerated_null(hit, row, [one_item(row)])
    assert got == pytest.approx(top_null(row, 2)) and got == pytest.approx(1 / 10)  # C(2,2)/C(5,2)
    distinct = np.array([[0.7, 0.6, 0.1, 0.3, 0.2]])
    assert enumerated_null(hit, distinct, [one_item(distinct)]) == pytest.approx(2 / 5)


DUPLICATED = ["a red disc", "a red disc", "a blue ring", "a cyan bar"]  # 4 images, 3 texts


def text_scores(texts, seed=0):
    """(images, distinct texts) scores of a model that scores identical texts alike, and the
    column of each text."""
    distinct = list(dict.fromkeys(texts))
    rng = np.random.default_rng(seed)
    return rng.permutation(len(texts) * len(distinct)).reshape(len(texts), -1) / 100, [
        distinct.index(t) for t in texts
    ]


@pytest.mark.parametrize("same_text", [True, False])
def test_retrieval_with_a_duplicate_caption_against_every_assignment(same_text):
    scores, column = text_scores(DUPLICATED)
    positive = same_text_positives(DUPLICATED) if same_text else None

    def hits(direction):
        def metric(s):
            return retrieval_items(torch.tensor(s[:, column]), positive, ks=(1,))[direction]

        return metric

    rows = [list(range(r * 3, r * 3 + 3)) for r in range(4)]  # each image: its 3 distinct texts
    columns = [list(range(c, 12, 3)) for c in range(3)]  # each distinct text: the 4 images
    i2t = enumerated_null(hits("i2t_hit1"), scores, rows)
    t2i = enumerated_null(hits("t2i_hit1"), scores, columns)
    assert i2t == pytest.approx(image_to_text_null(DUPLICATED, same_text))
    assert t2i == pytest.approx(text_to_image_null(DUPLICATED, same_text))
    if same_text:  # world-short: 1 / 3 distinct captions; (2 + 2 + 1 + 1) / 4² for captions
        assert (i2t, t2i) == (pytest.approx(1 / 3), pytest.approx(6 / 16))
        held = held_out(short_texts=DUPLICATED)
        assert rule_value("world-short/i2t_hit1", held) == pytest.approx(i2t)
        assert rule_value("world-short/t2i_hit1", held) == pytest.approx(t2i)
    else:  # 1:1: the two images sharing a caption never hit (it ties a wrong one)
        assert (i2t, t2i) == (pytest.approx(2 / (4 * 3)), pytest.approx(1 / 4))
        held = held_out(long_texts=DUPLICATED)
        assert rule_value("world-long/i2t_hit1", held) == pytest.approx(i2t)
        assert rule_value("world-long/t2i_hit1", held) == pytest.approx(t2i)


def test_one_to_one_retrieval_with_distinct_captions_is_one_over_n():
    texts = ["x", "y", "z"]
    scores, _ = text_scores(texts, seed=1)
    rows = [list(range(r * 3, r * 3 + 3)) for r in range(3)]

    def i2t(s):
        return retrieval_items(torch.tensor(s), ks=(1,))["i2t_hit1"]

    assert enumerated_null(i2t, scores, rows) == pytest.approx(1 / 3)
    assert rule_value("world-long/i2t_hit1", held_out(long_texts=texts)) == pytest.approx(1 / 3)
    assert rule_value("world-long/t2i_hit1", held_out(long_texts=texts)) == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    "scores", [[0.9, 0.4, 0.7, 0.1, 0.3], [0.5, 0.5, 0.5, 0.1, 0.9], [0.2] * 5]
)
def test_pep_of_two_positives_and_three_negatives_averages_one_half(scores, monkeypatch):
    """One image's AUC through ``hierarchy.pep_metrics`` (sklearn's, a tied pair ½), its
    entailment scores replaced by each assignment, as ``tests/test_ties.py`` does."""
    assigned = {}
    monkeypatch.setattr(hierarchy, "entailment_score", lambda parent, child, curv: assigned["s"])
    label = np.array([1, 1, 0, 0, 0])
    pairs = hierarchy.PEPPairs(np.zeros(5, int), np.zeros(5, int), np.zeros(5, int), label)

    def auc(s):
        assigned["s"] = torch.tensor(s)
        return hierarchy.pep_metrics(torch.zeros(1, 3), torch.zeros(1, 1, 3), pairs, 1.0)["pep_auc"]

    got = enumerated_null(auc, scores, [one_item(scores)])
    assert got == pytest.approx(0.5)
    assert rule_value("world-hierarchy/pep_auc_all", held_out()) == 0.5
    assert rule_value("world-hierarchy/pep_auc_finest", held_out()) == 0.5


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize(
    "block",
    [[[0.9, 0.2], [0.4, 0.7]], [[1.0, 1.0], [0.0, 2.0]], [[1.0, 1.0], [2.0, 2.0]], [[1.0] * 2] * 2],
)
def test_cola_against_every_assignment_of_a_2x2_block(protocol, block):
    got = enumerated_null(
        lambda s: cola_correct(torch.tensor(s)[None], protocol).double(), block, [one_item(block)]
    )
    assert got == pytest.approx(cola_null(block, protocol))
    if len({v for row in block for v in row}) == 4:
        assert got == pytest.approx(1 / 6 if protocol == "group" else 1 / 4)
        assert rule_value("world-cola/correct", held_out(protocol=protocol)) == pytest.approx(got)


def test_the_enumerator_permutes_within_groups_only():
    scores = np.array([[1.0, 2.0], [3.0, 4.0]])
    first = enumerated_null(lambda s: s[0, 0], scores, [[0, 1]])  # the first row's two entries
    assert first == pytest.approx(1.5)
    assert enumerated_null(lambda s: s[1, 0], scores, [[0, 1]]) == 3.0  # outside every group
    with pytest.raises(ValueError, match="share"):
        enumerated_null(lambda s: 0.0, scores, [[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="assignments"):
        enumerated_null(lambda s: 0.0, np.zeros(12), [range(12)])
    with pytest.raises(ValueError, match="positives"):
        top_null([0.1, 0.2], 3)
    with pytest.raises(ValueError, match="2 × 2"):
        cola_null([0.1, 0.2, 0.3], "text_to_image")


def test_the_rules_cover_every_metric_the_claims_read():
    from paperlib.study.plan.claims import METRICS

    assert set(RULES) == {m.item for m in METRICS.values()}
    for item in ("world-monotonicity/ssi", "aperture/parents_inside_radius"):
        assert RULES[item].expected is None and RULES[item].null.startswith("None: ")


def test_the_world_test_set_is_the_one_the_study_evaluates():
    from paperlib.data.world import World, zeroshot_prompts
    from paperlib.engine.evaluation import world_short_captions

    held = world_held_out(7, 40)
    assert list(held.short_texts) == world_short_captions(7, 40)
    world = World(seed=7, image_size=32)
    assert list(held.long_texts[:3]) == [world.sample(i).caption for i in range(3)]
    assert held.classes == {level: len(zeroshot_prompts(level)) for level in (1, 2, 3)}


def first_words(text: str) -> str:
    """A context cut: the first 60 words (about the 77 tokens of a CLIP context)."""
    return " ".join(text.split()[:60])


def test_a_context_cut_makes_some_world_segments_one_input():
    held = world_held_out(7, 40, reads=first_words)
    for k in (2, 3):
        cuts = [monotonicity.cumulative_segments(c, k) for c in world_held_out(7, 40).long_texts]
        distinct = [len(set(map(first_words, cut))) == k for cut in cuts if cut is not None]
        assert 0 < sum(distinct) < len(distinct)  # some images lose their strict rise
        share = sum(distinct) / len(distinct) / math.factorial(k)
        assert rule_value(f"world-monotonicity/himo{k}", held) == pytest.approx(100 * share)


def test_the_world_records_are_json_and_follow_the_test_captions():
    records = json.loads(json.dumps(world_chance(7, 60)))
    held = world_held_out(7, 60)
    counts = Counter(held.short_texts)
    assert records["world-short/i2t_hit1"]["value"] == pytest.approx(1 / len(counts))
    copies = np.array([counts[t] for t in held.short_texts])
    assert records["world-short/t2i_hit1"]["value"] == pytest.approx(copies.mean() / 60)
    assert len(set(held.long_texts)) == 60 and records["world-long/i2t_hit1"]["value"] == 1 / 60
    assert records["world-zeroshot/L3_correct"]["value"] == pytest.approx(1 / 24)
    assert records["world-zeroshot/L1_correct"]["value"] == pytest.approx(1 / 4)
    for record in records.values():
        assert set(record) == {"value", "null", "exact"}
        assert record["exact"] == (record["value"] is not None)
