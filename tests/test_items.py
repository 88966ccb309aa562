"""Per-item metric values: their means are the evaluation's metrics, information-free features
land on the permutation-null chance levels (``study.decide.chance``), and per-image PEP AUCs equal
sklearn's on each image's pairs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from paperlib.engine.benchmarks import Scoring, benchmark_metrics
from paperlib.geometry.lorentz import exp_map0, exterior_angle
from paperlib.metrics import results
from paperlib.metrics.hierarchy import build_pep_pairs, entailment_score
from paperlib.metrics.items import item_means, k_cut_scores, parent_items, pep_items, world_items
from paperlib.study.decide.chance import RULES, HeldOutSet
from paperlib.study.plan.claims import CLAIMS


def random_embeddings(n: int = 400, dim: int = 16, seed: int = 0, hyperbolic: bool = False):
    """Information-free features in the layout of ``engine.evaluation.world_embeddings``."""
    g = torch.Generator().manual_seed(seed)

    def feats(*shape):
        x = torch.randn(*shape, dim, generator=g)
        return exp_map0(0.5 * x, 1.0) if hyperbolic else x

    lengths = torch.randint(2, 9, (n,), generator=g)
    emb = {
        "image": feats(n),
        "caption": feats(n),
        "short_caption": feats(n),
        "noisy_caption": feats(n),
        "chain": feats(n, 4),
        "labels": torch.stack([torch.randint(0, k, (n,), generator=g) for k in (4, 12, 24)], 1),
        "segments2": feats(n, 2),
        "segments2_rows": torch.arange(n),
        "segments3": feats(n // 2, 3),
        "segments3_rows": torch.arange(n // 2),
        "segments_all": feats(int(lengths.sum())),
        "segments_all_lengths": lengths,
        "cola_image": feats(n // 2, 2),
        "cola_text": feats(n // 2, 2),
        "prompts_L1": feats(4, 3),
        "prompts_L2": feats(12, 3),
        "prompts_L3": feats(24, 3),
        "empty": feats(1)[0],
        "roots": [f"root {i % 7}" for i in range(n)],
        "short_texts": [f"caption {i}" for i in range(n)],
    }
    return emb


def test_item_means_equal_the_evaluation_metrics():
    emb = random_embeddings()
    means = item_means(world_items(emb, "euclidean", None))
    long = benchmark_metrics(emb, "world-long", Scoring("euclidean"))["world-long"]
    assert means["world-long/i2t_hit1"] == pytest.approx(long["text_retrieval_recall@1"])
    assert means["world-long/t2i_hit5"] == pytest.approx(long["image_retrieval_recall@5"])
    short = benchmark_metrics(emb, "world-short", Scoring("euclidean"))["world-short"]
    assert means["world-short/i2t_hit1"] == pytest.approx(short["text_retrieval_recall@1"])
    mono = benchmark_metrics(emb, "world-monotonicity", Scoring("euclidean"))["world-monotonicity"]
    assert means["world-monotonicity/himo2"] == pytest.approx(mono[results.HIMO_AT_2])
    assert means["world-monotonicity/himo3"] == pytest.approx(mono[results.HIMO_AT_3])
    assert means["world-monotonicity/himoK"] == pytest.approx(mono[results.HIMO_AT_K])
    assert means["world-monotonicity/ssi"] == pytest.approx(mono[results.SSI], rel=1e-5)
    cola = benchmark_metrics(emb, "world-cola", Scoring("euclidean"))["world-cola"]
    assert means["world-cola/correct"] == pytest.approx(cola[results.COLA_ACCURACY])
    zs = benchmark_metrics(emb, "world-zeroshot", Scoring("euclidean"))
    for level in (1, 2, 3):
        assert means[f"world-zeroshot/L{level}_correct"] == pytest.approx(
            zs[f"world-zeroshot-L{level}"]["acc1"]
        )


def test_hyperbolic_items_match_too_and_add_pep_and_aperture():
    emb = random_embeddings(n=200, hyperbolic=True)
    items = world_items(emb, "hyperbolic", 1.0)
    long = benchmark_metrics(emb, "world-long", Scoring("hyperbolic", 1.0))["world-long"]
    assert np.mean(items["world-long/t2i_hit1"]) == pytest.approx(long["image_retrieval_recall@1"])
    assert {
        "world-hierarchy/pep_auc_all",
        "world-hierarchy/pep_auc_finest",
        "aperture/short_caption_inside_radius",
    } <= set(items)
    norms = emb["short_caption"].norm(dim=-1)
    assert items["aperture/short_caption_inside_radius"].mean() == pytest.approx(
        float((norms < 0.2).double().mean())  # 2K/√c with K = 0.1, c = 1
    )


def test_per_image_pep_auc_equals_sklearn_on_that_images_pairs():
    emb = random_embeddings(n=60, hyperbolic=True, seed=3)
    got = pep_items(emb["image"], emb["chain"], emb["roots"], 1.0)
    pairs = build_pep_pairs(emb["roots"], 4, pool_size=59)
    parent = emb["chain"][torch.as_tensor(pairs.row), torch.as_tensor(pairs.level)]
    angle = exterior_angle(parent, emb["image"][torch.as_tensor(pairs.image)], 1.0)
    scores = (1 - 2 * angle / math.pi).numpy()  # p_Ent without its clamp at 0
    clamped = entailment_score(parent, emb["image"][torch.as_tensor(pairs.image)], 1.0).numpy()
    assert np.array_equal(np.argsort(-scores[clamped > 0]), np.argsort(-clamped[clamped > 0]))
    for i in (0, 17, 59):
        mine = pairs.image == i
        assert got["pep_auc_all"][i] == pytest.approx(
            roc_auc_score(pairs.label[mine], scores[mine])
        )
        finest = mine & ((pairs.label == 0) | (pairs.level == 3))
        assert got["pep_auc_finest"][i] == pytest.approx(
            roc_auc_score(pairs.label[finest], scores[finest])
        )


def random_held_out(emb: dict) -> HeldOutSet:
    """What the permutation nulls of :func:`random_embeddings` depend on: every long caption,
    segment and short caption a distinct input (random features score no two alike), the
    prompts' 4, 12 and 24 classes and COLA's text-to-image protocol (``metrics.items``')."""
    n = emb["image"].shape[0]
    segments = {
        2: tuple((f"{i}/1", f"{i}/2") for i in range(emb["segments2"].shape[0])),
        3: tuple((f"{i}/1", f"{i}/2", f"{i}/3") for i in range(emb["segments3"].shape[0])),
    }
    classes = {level: emb[f"prompts_L{level}"].shape[0] for level in (1, 2, 3)}
    return HeldOutSet(tuple(range(n)), segments, tuple(emb["short_texts"]), classes)


# the permutation nulls of information-free features, by hand: 1/N for a one-to-one R@1 (the
# short captions are distinct here), 1/K! of a strict rise (in percent), ρ averaging 0, one of
# four orders for COLA's two captions, 1 over the classes, an AUC of one half
BY_HAND = {
    "world-long/i2t_hit1": lambda n: 1 / n,
    "world-long/t2i_hit1": lambda n: 1 / n,
    "world-short/i2t_hit1": lambda n: 1 / n,
    "world-short/t2i_hit1": lambda n: 1 / n,
    "world-monotonicity/himo2": lambda n: 100 / 2,
    "world-monotonicity/himo3": lambda n: 100 / 6,
    "world-monotonicity/himoK": lambda n: 0.0,
    "world-cola/correct": lambda n: 1 / 4,
    "world-zeroshot/L1_correct": lambda n: 1 / 4,
    "world-zeroshot/L3_correct": lambda n: 1 / 24,
    "world-hierarchy/pep_auc_all": lambda n: 0.5,
    "world-hierarchy/pep_auc_finest": lambda n: 0.5,
}


def test_information_free_features_sit_at_the_permutation_chance_levels():
    """Random features over 3 draws of each geometry: every claim's metric that has a
    permutation null lands on it, and the null is the value written out by hand."""
    pooled: dict[str, list[tuple[np.ndarray, float]]] = {}
    for seed in range(3):
        for geometry in ("euclidean", "hyperbolic"):
            emb = random_embeddings(
                n=1000 if geometry == "euclidean" else 300,
                seed=seed,
                hyperbolic=geometry == "hyperbolic",
            )
            held = random_held_out(emb)
            for k, v in world_items(emb, geometry, 1.0).items():
                if k in RULES and RULES[k].expected is not None:
                    chance = RULES[k].record(held)["value"]
                    n = emb["image"].shape[0]
                    assert chance == pytest.approx(BY_HAND[k](n), rel=1e-12), (k, n)
                    pooled.setdefault(k, []).append((v, chance))
    claimed = {c.item for c in CLAIMS if RULES[c.item].expected is not None}
    assert claimed == set(BY_HAND)  # SSI, the aperture share and the cleaned P/R have none
    for item in sorted(claimed):
        values = np.concatenate([v for v, _ in pooled[item]])
        # each draw's null weighted by its number of items, as the pooled mean weighs them
        chance = sum(v.size * c for v, c in pooled[item]) / values.size
        standard_error = values.std() / np.sqrt(values.size)
        assert abs(values.mean() - chance) < 4 * standard_error + 1e-4, (item, values.mean())
    # every learning guard's threshold lies far above what information-free features reach
    guards = {c.metric.guard for c in CLAIMS if c.metric.guard is not None}
    for guard in guards:
        reached = np.concatenate([v for v, _ in pooled[guard.item]]).mean()
        assert reached < guard.threshold / 2, (guard.item, reached, guard.threshold)


def test_k_cut_scores_pick_the_segment_ends_of_paperlib_segments():
    from paperlib.segments import cumulative_prefixes

    sentences = [f"s{i}." for i in range(7)]
    prefixes = cumulative_prefixes(sentences)
    for k in (1, 4, 7):
        picked = k_cut_scores(np.arange(7.0), k)
        assert [prefixes[int(i)] for i in picked] == cumulative_prefixes(sentences, k)
    assert k_cut_scores(np.arange(7.0), 4).tolist() == [1.0, 3.0, 5.0, 6.0]
    emb = random_embeddings(n=50)
    items = world_items(emb, "euclidean", None)
    long_enough = int((emb["segments_all_lengths"] >= 7).sum())
    assert items["world-monotonicity/himoK7"].shape == (long_enough,)


def test_parent_items_count_each_kind_inside_the_radius_and_their_share_per_sample():
    torch.manual_seed(5)
    curv = 0.25  # radius 2 · 0.1 / 0.5 = 0.4
    norms = {k: torch.rand(50) * 0.8 for k in ("short_caption", "box_text", "box_image")}
    items = parent_items(norms, curv)
    inside = {k: np.array([float(v < 0.4) for v in norms[k].tolist()]) for k in norms}
    for kind, expected in inside.items():
        np.testing.assert_array_equal(items[f"aperture/{kind}_inside_radius"], expected)
    per_sample = [sum(inside[k][i] for k in inside) / 3 for i in range(50)]
    np.testing.assert_allclose(items["aperture/parents_inside_radius"], per_sample)
    assert 0 < items["aperture/parents_inside_radius"].mean() < 1
