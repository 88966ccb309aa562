"""Chance levels from a permutation null on the test set itself
(``docs/methods/conventions.md#ties``).

A metric's chance level is its expected value when a model's scores carry no information about
which candidate is right: when the scores one per-item value compares are exchangeable, every
assignment of them to the candidates equally likely. Each per-item metric of the study has a
rule (:data:`RULES`, by item name) that says what is permuted and gives that expectation in
closed form from the test set's structure (:class:`HeldOutSet`), in the metric's units:

- HiMo@2 / HiMo@3: the K cumulative-segment scores of one image; a strict rise has probability
  1/K! (in percent: 50 and 100/6), none where two segments are the same input;
- HiMo@K: the prefix scores of one image; Pearson ρ(k, s_k) averages to 0 over the K! orders
  (each score sits at each k equally often, so the centred numerator sums to 0);
- zero-shot at a taxonomy level: the C class scores of one image; its label strictly first
  with probability 1/C;
- PEP per image: the image's positive and negative caption scores; each (positive, negative)
  pair is ordered either way equally often, so the AUC averages 0.5 whatever the counts;
- COLA: the four scores of a pair's 2 × 2 block, under its protocol (:func:`cola_null`: 1/4
  for ``text_to_image``, the study's, and ``image_to_text``; 1/6 for ``group``);
- retrieval R@1, across items: an image query's scores over the distinct test captions
  (identical captions are one text and score alike for every model), a caption query's over
  the test images (:func:`image_to_text_null`, :func:`text_to_image_null`).

SSI, the aperture share and hierarchical precision / recall have no such null: their rules say
why and give None.

**Ties.** With distinct scores (of distinct inputs) no null depends on the scores at all, so no
trained or untrained model is needed. Where scores tie, the project's conventions decide
(``conventions.md#ties``): a tie is a miss for a hit (a rank, an argmax, a strict rise, COLA's
strict inequalities), so tied scores can only lower a hit metric's null, and the value given is
then an upper bound; :func:`rise_null`, :func:`top_null` and :func:`cola_null` give it from one
item's scores. Pearson and the AUC (a tied pair counts ½) keep their null with ties. Inputs
identical for every model tie structurally and are counted: identical captions, and the long
texts a model's context cuts to the same tokens where the caller says how it reads them
(``reads`` of :func:`world_held_out`: 77 tokens make some HiMo@2 / HiMo@3 segments one input).

:func:`enumerated_null` averages a metric over every permutation of small score arrays, the
check of each closed form (``tests/test_chance.py``); :func:`world_chance` gives each rule's
record on the study's test world.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperlib.data.world import class_names, draw_scene, scene_sentences, scene_short_caption
from paperlib.metrics.composition import PROTOCOLS
from paperlib.metrics.monotonicity import cumulative_segments

MAX_ORDERS = 2_000_000  # the most assignments enumerated_null averages over


def rise_null(values: Sequence[Hashable]) -> float:
    """The chance that one image's K segment scores, in random order, rise strictly: 1/K!
    when they are distinct, else 0 (equal scores never rise strictly). Given the segments'
    inputs instead, identical inputs score alike: the same rule."""
    values = list(values)
    return 1.0 / math.factorial(len(values)) if len(set(values)) == len(values) else 0.0


def rise_share(segments: Sequence[Sequence[Hashable]]) -> float:
    """:func:`rise_null` averaged over the images' K segment inputs: the null of HiMo@2 or
    HiMo@3 (K = 2, 3) as a share."""
    return float(np.mean([rise_null(s) for s in segments]))


def top_null(scores, positives: int) -> float:
    """The chance that one query whose ``n`` candidate scores are assigned at random, with
    ``positives`` of its candidates right, is a hit at 1: every copy of the highest score must
    land on a right candidate (a wrong one tying it is a miss), ``C(p, m) / C(n, m)`` with
    ``m`` copies of the maximum."""
    values = np.asarray(scores, dtype=np.float64).ravel()
    if not 1 <= positives <= values.size:
        raise ValueError(f"positives must be 1 to {values.size}; got {positives}")
    copies = int((values == values.max()).sum())
    return math.comb(positives, copies) / math.comb(values.size, copies)


def cola_null(block, protocol: str = "text_to_image") -> float:
    """The chance that one COLA pair whose four scores are assigned at random to its (image,
    caption) cells is correct under ``protocol`` (``metrics.composition``, strict). An
    assignment puts a 2-subset A of the values on two cells (6 ways), in 2 × 2 orders:
    ``text_to_image`` and ``image_to_text`` ask two disjoint pairs of cells to be ordered, one
    order of each when neither pair ties, ``#{A: A and the rest tie-free} / 24``; ``group`` asks
    both own cells above both others, ``#{A: min A > max rest} / 6``."""
    values = np.asarray(block, dtype=np.float64).ravel()
    if values.size != 4 or protocol not in PROTOCOLS:
        raise ValueError(
            f"need a 2 × 2 block and one of {PROTOCOLS}; got {values.size} scores, {protocol!r}"
        )
    splits = [
        (values[list(a)], np.delete(values, list(a))) for a in itertools.combinations(range(4), 2)
    ]
    if protocol == "group":
        return sum(bool(a.min() > rest.max()) for a, rest in splits) / 6
    return sum(bool(a[0] != a[1] and rest[0] != rest[1]) for a, rest in splits) / 24


def image_to_text_null(texts: Sequence[str], same_text: bool) -> float:
    """Mean R@1 of the image queries (image i's caption ``texts[i]``) when each image's scores
    over the D distinct captions are exchangeable: 1/D for an image whose caption is unique or
    where an identical caption counts as a hit (``same_text``), 0 where an identical caption
    is a wrong candidate (it ties the image's own: a miss)."""
    counts = Counter(texts)
    hits = sum(1 for t in texts if same_text or counts[t] == 1)
    return hits / (len(texts) * len(counts))


def text_to_image_null(texts: Sequence[str], same_text: bool) -> float:
    """Mean R@1 of the caption queries when each caption's scores over the N test images are
    exchangeable: ``p / N``, ``p`` the images whose caption is identical to it (``same_text``)
    or 1 (its own image)."""
    counts = Counter(texts)
    return sum(counts[t] if same_text else 1 for t in texts) / len(texts) ** 2


def enumerated_null(metric_of_scores: Callable[[np.ndarray], Any], scores, groups) -> float:
    """The mean of ``metric_of_scores`` (a number, or per-item values, averaged) over every
    assignment of ``scores`` that permutes the entries of each of ``groups`` (disjoint sequences
    of flat indices; entries in no group stay): a null's expectation by brute force."""
    base = np.asarray(scores, dtype=np.float64)
    flat = base.ravel()
    index = [np.asarray(g, dtype=np.intp).ravel() for g in groups]
    taken = np.concatenate(index) if index else np.zeros(0, dtype=np.intp)
    if np.unique(taken).size != taken.size:
        raise ValueError("groups must not share an entry")
    orders = math.prod(math.factorial(g.size) for g in index)
    if orders > MAX_ORDERS:
        raise ValueError(f"{orders} assignments to enumerate; at most {MAX_ORDERS}")
    values = []
    for picks in itertools.product(*(itertools.permutations(g.tolist()) for g in index)):
        permuted = flat.copy()
        for g, pick in zip(index, picks):
            permuted[g] = flat[list(pick)]
        value = metric_of_scores(permuted.reshape(base.shape))
        values.append(float(np.mean(np.asarray(value, dtype=np.float64))))
    return math.fsum(values) / len(values)


@dataclass(frozen=True)
class HeldOutSet:
    """What the nulls depend on: each test image's long caption and its K cumulative
    segments (``segments[K]``, the images that have them), as a model reads them (inputs
    identical once read score alike), its short caption, the zero-shot classes at each
    taxonomy level and COLA's protocol."""

    long_texts: tuple[Hashable, ...]
    segments: Mapping[int, tuple[tuple[Hashable, ...], ...]]
    short_texts: tuple[str, ...]
    classes: Mapping[int, int]
    cola_protocol: str = "text_to_image"


@dataclass(frozen=True)
class ChanceRule:
    """One per-item metric's null: what is permuted (or why nothing is) and its expectation
    from a :class:`HeldOutSet` (None: no permutation null)."""

    item: str
    null: str
    expected: Callable[[HeldOutSet], float] | None = None

    def record(self, held_out: HeldOutSet) -> dict[str, Any]:
        """``{"value", "null", "exact"}``: the expectation (None without a null), the sentence,
        and whether the value is the null's exact expectation (closed form, not measured)."""
        value = None if self.expected is None else float(self.expected(held_out))
        return {"value": value, "null": self.null, "exact": value is not None}


_CAPTIONS = "its scores over the test captions (identical captions scoring alike) are permuted"
_IMAGES = "its scores over the test images are permuted"
_NO_ORDER = "no scores are compared within an item, so no permutation moves it"
_RISE = "cumulative-segment scores of each image are permuted; a strict rise has chance"
_PAIRS = "are permuted together; each pair is ordered either way equally often, ties ½: 0.5"
_RADII = (
    "None: the caption predicted at each radius threshold depends on the captions' radii as "
    "well as the image's scores, and the cleaning removes captions by the model's own image "
    "similarities: no exchangeable scores leave the metric's structure fixed."
)
_RULES = (
    ChanceRule(
        "world-long/i2t_hit1",
        f"Each image query: {_CAPTIONS}; a hit needs its own caption strictly first "
        "(1/N with distinct captions).",
        lambda h: image_to_text_null(h.long_texts, False),
    ),
    ChanceRule(
        "world-long/t2i_hit1",
        f"Each long-caption query: {_IMAGES}; a hit needs its own image strictly first (1/N).",
        lambda h: text_to_image_null(h.long_texts, False),
    ),
    ChanceRule(
        "world-short/i2t_hit1",
        f"Each image query: {_CAPTIONS}, so an identical caption is one candidate and a hit: "
        "1 over the number of distinct short captions.",
        lambda h: image_to_text_null(h.short_texts, True),
    ),
    ChanceRule(
        "world-short/t2i_hit1",
        f"Each short-caption query: {_IMAGES}; any image with an identical caption is a hit: "
        "the mean over captions of their copies over N.",
        lambda h: text_to_image_null(h.short_texts, True),
    ),
    ChanceRule(
        "world-monotonicity/himo2",
        f"The 2 {_RISE} 1/2! (in percent), 0 where two segments are read alike.",
        lambda h: 100 * rise_share(h.segments[2]),
    ),
    ChanceRule(
        "world-monotonicity/himo3",
        f"The 3 {_RISE} 1/3! (in percent), 0 where two segments are read alike.",
        lambda h: 100 * rise_share(h.segments[3]),
    ),
    ChanceRule(
        "world-monotonicity/himoK",
        "The prefix scores of each image are permuted; Pearson ρ(k, s_k) with the fixed "
        "non-constant k averages 0 over the orders (constant scores count 0).",
        lambda h: 0.0,
    ),
    ChanceRule(
        "world-monotonicity/ssi",
        "None: SSI is one score's relative change when noise sentences are added; "
        f"{_NO_ORDER}. A text-blind model's scores do not move: its reference is 0.",
    ),
    ChanceRule(
        "world-cola/correct",
        "The four scores of each pair's 2 × 2 block (two images × two captions) are permuted, "
        "read under COLA's protocol with strict inequalities.",
        lambda h: cola_null(range(4), h.cola_protocol),
    ),
    *(
        ChanceRule(
            f"world-zeroshot/L{level}_correct",
            f"Each image's scores over the level-{level} classes are permuted; a hit needs its "
            "label strictly first: 1 over the number of classes.",
            lambda h, level=level: 1 / h.classes[level],
        )
        for level in (1, 3)
    ),
    ChanceRule(
        "world-hierarchy/pep_auc_all",
        f"Each image's scores of its chain's captions (positives) and of its negatives {_PAIRS}.",
        lambda h: 0.5,
    ),
    ChanceRule(
        "world-hierarchy/pep_auc_finest",
        f"Each image's scores of its finest caption (positive) and of its negatives {_PAIRS}.",
        lambda h: 0.5,
    ),
    ChanceRule(
        "aperture/parents_inside_radius",
        "None: the share of a sample's parents whose norm lies inside 2K/√c is a property of "
        f"the embeddings' norms; {_NO_ORDER}.",
    ),
    ChanceRule("world-hierarchy/hier_precision_cleaned", _RADII),
    ChanceRule("world-hierarchy/hier_recall_cleaned", _RADII),
)
RULES: dict[str, ChanceRule] = {rule.item: rule for rule in _RULES}


def world_held_out(
    seed: int, n_items: int, reads: Callable[[str], Hashable] | None = None
) -> HeldOutSet:
    """The :class:`HeldOutSet` of world samples ``0..n_items-1`` of ``seed``: their scenes'
    long captions (as ``data.world.World`` writes them) and 2 and 3 cumulative segments (as
    ``engine.benchmarks.segment_embeddings`` cuts them), each as ``reads`` gives it (e.g. a
    tokenizer's ids cut at a model's context; default: the text), their short captions and the
    taxonomy's classes."""
    read = reads or (lambda text: text)
    scenes = [draw_scene(seed, i) for i in range(n_items)]
    captions = [" ".join(scene_sentences(s)) for s in scenes]
    segments = {k: [cumulative_segments(c, k) for c in captions] for k in (2, 3)}
    return HeldOutSet(
        tuple(read(c) for c in captions),
        {
            k: tuple(tuple(map(read, s)) for s in cut if s is not None)
            for k, cut in segments.items()
        },
        tuple(scene_short_caption(s) for s in scenes),
        {level: len(class_names(level)) for level in (1, 2, 3)},
    )


def world_chance(
    seed: int, n_items: int, reads: Callable[[str], Hashable] | None = None
) -> dict[str, dict[str, Any]]:
    """Every rule's record (:meth:`ChanceRule.record`) on the world test set of ``n_items``
    samples of ``seed`` (the study's: ``study.plan.design.EVAL_SEED``, ``Scale.eval_size``), its
    long texts as ``reads`` gives them (:func:`world_held_out`)."""
    held_out = world_held_out(seed, n_items, reads)
    return {item: rule.record(held_out) for item, rule in RULES.items()}
