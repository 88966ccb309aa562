"""PEP (docs/methods/argent.md#pep) and HierarCaps metrics (docs/methods/argent.md#hierarcaps)
against naive reimplementations."""

from __future__ import annotations

import csv
import math
import zlib

import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score, roc_auc_score

from paperlib.geometry import lorentz as L
from paperlib.metrics import hierarchy as Hm


def _naive_p_ent(parent, child, curv):
    """``max(0, 1 − 2φ/π)`` with MERU's acos angle, one pair at a time (float64)."""
    p, c = parent.double(), child.double()
    pt, ct = L.time_component(p, curv), L.time_component(c, curv)
    c_inner = curv * (float(p @ c) - float(pt * ct))
    num = float(ct) + c_inner * float(pt)
    phi = math.acos(max(-1.0, min(1.0, num / (float(p.norm()) * math.sqrt(c_inner**2 - 1)))))
    return max(0.0, 1 - 2 * phi / math.pi)


def test_pep_pool_rule():
    roots = ["dog", "Dog ", "cat", "bird", "cat", "tree", "car"]
    pairs = Hm.build_pep_pairs(roots, kept=[0, 2, 3, 4, 5, 6], pool_size=3, seed=1)
    again = Hm.build_pep_pairs(roots, kept=[0, 2, 3, 4, 5, 6], pool_size=3, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(vars(pairs).values(), vars(again).values()))
    for i in (0, 2, 3, 4, 5, 6):
        mine = pairs.image == i
        pos, neg = mine & (pairs.label == 1), mine & (pairs.label == 0)
        assert sorted(pairs.level[pos]) == [0, 1, 2, 3] and set(pairs.row[pos]) == {i}
        assert neg.sum() == 3 and set(pairs.level[neg]) == {3}
        key = roots[i].strip().lower()
        assert all(roots[j].strip().lower() != key and j != i for j in pairs.row[neg])
        assert 1 not in pairs.row[mine]  # not kept
    with pytest.raises(ValueError, match="kept rows"):
        Hm.build_pep_pairs(roots, kept=[9])


def test_pep_shared_pool_is_one_pool_for_every_image():
    roots = ["dog", "cat", "bird", "cat", "tree", "car", "fish", "dog", "boat", "sun"]
    kept = [0, 1, 2, 3, 4, 5, 6, 8]
    pairs = Hm.build_pep_pairs(roots, kept=kept, pool_size=4, seed=3, negatives="shared")
    pool = set(pairs.row[pairs.label == 0].tolist())
    assert len(pool) <= 4 and pool <= set(kept)  # drawn once, from the kept rows only
    for i in kept:
        neg = set(pairs.row[(pairs.image == i) & (pairs.label == 0)].tolist())
        eligible = {j for j in pool if j != i and roots[j] != roots[i]}
        assert neg == eligible  # the same pool, minus what cannot be a negative of image i
    per_image = Hm.build_pep_pairs(roots, kept=kept, pool_size=4, seed=3)
    assert len(set(per_image.row[per_image.label == 0].tolist())) > 4  # draws differ per image


def test_pep_given_pool_and_its_errors():
    roots = ["a", "b", "c", "d", "e", "a"]
    pairs = Hm.build_pep_pairs(roots, negatives="shared", pool=[1, 5])
    neg = {
        int(i): sorted(pairs.row[(pairs.image == i) & (pairs.label == 0)].tolist())
        for i in range(6)
    }
    assert neg == {0: [1], 1: [5], 2: [1, 5], 3: [1, 5], 4: [1, 5], 5: [1]}
    with pytest.raises(ValueError, match="negatives='shared'"):
        Hm.build_pep_pairs(roots, pool=[1])
    with pytest.raises(ValueError, match="pool rows must be in"):
        Hm.build_pep_pairs(roots, negatives="shared", pool=[7])
    with pytest.raises(ValueError, match="'per-image' or 'shared'"):
        Hm.build_pep_pairs(roots, negatives="fixed")


def test_pep_auc_ap_equal_sklearn_on_naive_scores():
    gen = torch.Generator().manual_seed(0)
    n, levels, dim, curv = 12, 4, 6, 0.5
    images = L.exp_map0(torch.randn(n, dim, generator=gen), curv)
    depth = torch.linspace(0.3, 1.0, levels)[None, :, None]
    captions = L.exp_map0(
        depth
        * (L.log_map0(images, curv)[:, None] + 0.5 * torch.randn(n, levels, dim, generator=gen)),
        curv,
    )
    roots = [f"root {i % 5}" for i in range(n)]
    pairs = Hm.build_pep_pairs(roots, pool_size=4, seed=0)
    out = Hm.pep_metrics(images, captions, pairs, curv)
    scores = [
        _naive_p_ent(captions[r, lv], images[i], curv)
        for i, r, lv in zip(pairs.image, pairs.row, pairs.level)
    ]
    assert out["pep_auc"] == pytest.approx(roc_auc_score(pairs.label, scores), abs=1e-6)
    assert out["pep_ap"] == pytest.approx(average_precision_score(pairs.label, scores), abs=1e-6)
    assert 0.5 < out["pep_auc"] <= 1.0


def test_entailment_score_limits():
    direction = torch.nn.functional.normalize(torch.ones(1, 4), dim=-1)
    assert float(Hm.entailment_score(direction, 3 * direction, 1.0)) == pytest.approx(1.0, abs=1e-3)
    assert float(Hm.entailment_score(3 * direction, direction, 1.0)) == 0.0


# ----------------------------------------------------------------- HierarCaps, real CSV


def _naive_kendall(a):
    """τ-a between values a and ranks 1..L by counting concordant pairs (no ties here)."""
    n, s = len(a), 0
    for i in range(n):
        for j in range(i + 1, n):
            s += 1 if a[j] > a[i] else -1
    return s / (n * (n - 1) / 2)


def _naive_hierarcaps(images, captions, radius_fn, sim_fn, n_thresholds=50):
    n, levels = len(images), len(captions[0])
    flat = [c for chain in captions for c in chain]
    radii = [radius_fn(c) for c in flat]
    taus = [_naive_kendall(radii[i * levels : (i + 1) * levels]) for i in range(n)]
    lo, hi = min(radii), max(radii)
    thresholds = [lo + (hi - lo) * t / (n_thresholds - 1) for t in range(n_thresholds)]
    thresholds[-1] = hi
    precision, recall = [], []
    for i in range(n):
        sims = [sim_fn(images[i], c) for c in flat]
        preds = set()
        for t in thresholds:
            within = [m for m in range(len(flat)) if radii[m] <= t]
            preds.add(max(within, key=lambda m: (sims[m], -m)))
        hits = [m for m in preds if m // levels == i]
        precision.append(len(hits) / len(preds))
        recall.append(len(hits) / levels)
    return {
        "d_corr": sum(taus) / n,
        "precision": sum(precision) / n,
        "recall": sum(recall) / n,
    }


def _caption_vector(text: str, dim: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(zlib.crc32(text.encode()))
    return torch.randn(dim, generator=gen, dtype=torch.float64)


@pytest.fixture(scope="module")
def hierarcaps_chains(shared_data):
    path = shared_data / "hierarcaps" / "hierarcaps_test.csv"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1000
    chains = [Hm.split_chain(r["captions"]) for r in rows]
    assert all(len(c) == 4 for c in chains)
    return chains[:60]


def _synthetic_features(chains, dim=16):
    """Deterministic per-caption vectors (hash of the text), longer captions further out."""
    captions = torch.stack(
        [
            torch.stack([(0.3 + 0.05 * len(c.split())) * _caption_vector(c, dim) / 4 for c in ch])
            for ch in chains
        ]
    )
    images = captions[:, -1] + 0.2 * torch.stack(
        [_caption_vector(f"img{i}", dim) for i in range(len(chains))]
    )
    return images, captions


def test_hierarcaps_euclidean_equals_naive(hierarcaps_chains):
    images, captions = _synthetic_features(hierarcaps_chains)
    images = torch.nn.functional.normalize(images, dim=-1)
    captions = torch.nn.functional.normalize(captions, dim=-1)
    root = torch.nn.functional.normalize(_caption_vector("", 16), dim=0)
    out = Hm.hierarcaps_metrics(images, captions, "euclidean", root=root)
    naive = _naive_hierarcaps(
        images,
        captions,
        radius_fn=lambda e: float((e - root).norm()),
        sim_fn=lambda v, e: float(v @ e / (v.norm() * e.norm())),
    )
    for key in ("d_corr", "precision", "recall"):
        assert out[key] == pytest.approx(naive[key], abs=1e-9), key


def test_hierarcaps_hyperbolic_equals_naive(hierarcaps_chains):
    curv = 0.8
    images, captions = _synthetic_features(hierarcaps_chains)
    images, captions = L.exp_map0(images, curv), L.exp_map0(captions, curv)

    def dist(u, v):
        inner = float(u @ v) - float(L.time_component(u, curv) * L.time_component(v, curv))
        return math.acosh(max(1.0, -curv * inner)) / math.sqrt(curv)

    out = Hm.hierarcaps_metrics(images, captions, "hyperbolic", curv=curv)
    naive = _naive_hierarcaps(
        images,
        captions,
        radius_fn=lambda e: dist(torch.zeros_like(e), e),
        sim_fn=lambda v, e: -dist(v, e),
    )
    for key in ("d_corr", "precision", "recall"):
        assert out[key] == pytest.approx(naive[key], abs=1e-6), key
    assert out["d_corr"] > 0  # longer captions were placed further out


def test_hierarcaps_checks_shapes():
    with pytest.raises(ValueError, match="image_features"):
        Hm.hierarcaps_metrics(torch.zeros(3, 5), torch.zeros(4, 4, 5), "hyperbolic", curv=1.0)
    with pytest.raises(ValueError, match="root"):
        Hm.hierarcaps_metrics(torch.zeros(4, 5), torch.zeros(4, 4, 5), "euclidean")


def _naive_text_retrieval(sims, radii, texts, levels, removed, n_thresholds=50):
    """Per-image P/R, captions compared as texts, removed captions out of the pool (loops)."""
    n = len(sims)
    lo, hi = min(radii), max(radii)
    thresholds = [lo + (hi - lo) * t / (n_thresholds - 1) for t in range(n_thresholds)]
    thresholds[-1] = hi
    precision, recall = [], []
    for i in range(n):
        preds = set()
        for t in thresholds:
            pool = [m for m in range(len(texts)) if radii[m] <= t and not removed[i][m]]
            if pool:
                preds.add(texts[max(pool, key=lambda m: (sims[i][m], -m))])
        own = texts[i * levels : (i + 1) * levels]
        precision.append(len(preds & set(own)) / len(preds))
        recall.append(sum(c in preds for c in own) / levels)
    return precision, recall


def test_text_matched_retrieval_with_ambiguous_captions_removed_equals_loops():
    gen = torch.Generator().manual_seed(5)
    n, levels, dim = 12, 4, 6
    words = ["a shape", "a red shape", "a red disc", "a red disc left"]
    texts = [
        words[lv] if (i % 3 == 0 and lv < 2) else f"{words[lv]} {i}"
        for i in range(n)
        for lv in range(levels)
    ]
    images = torch.randn(n, dim, generator=gen)
    captions = torch.randn(n * levels, dim, generator=gen)
    sims = (
        torch.nn.functional.normalize(images, dim=-1)
        @ torch.nn.functional.normalize(captions, dim=-1).T
    )
    radii = torch.rand(n * levels, generator=gen)
    image_sim = torch.randn(n, n, generator=gen)
    removed = Hm.ambiguous_captions(image_sim, texts, levels, neighbours=3)
    for i in range(n):  # naive: the captions of the 3 most similar other images, not own texts
        others = sorted((j for j in range(n) if j != i), key=lambda j: -float(image_sim[i, j]))[:3]
        own = set(texts[i * levels : (i + 1) * levels])
        expected = {
            m for j in others for m in range(j * levels, (j + 1) * levels) if texts[m] not in own
        }
        assert set(np.flatnonzero(removed[i]).tolist()) == expected
    for mask in (np.zeros_like(removed), removed):
        p, r = Hm.hierarchical_retrieval_items(
            sims, radii, levels, caption_texts=texts, removed=mask
        )
        naive_p, naive_r = _naive_text_retrieval(sims.tolist(), radii.tolist(), texts, levels, mask)
        np.testing.assert_allclose(p, naive_p, atol=1e-12)
        np.testing.assert_allclose(r, naive_r, atol=1e-12)
    shared = Hm.hierarchical_retrieval_items(sims, radii, levels, caption_texts=texts)
    by_index = Hm.hierarchical_retrieval_items(sims, radii, levels)
    assert (shared[1] >= by_index[1]).all() and (shared[1] > by_index[1]).any()  # shared texts hit


def test_hierarcaps_text_scoring_on_the_real_csv_equals_loops(hierarcaps_chains):
    """The real chains repeat captions across images: text scoring counts them as hits."""
    chains = hierarcaps_chains
    images, captions = _synthetic_features(chains)
    images = torch.nn.functional.normalize(images, dim=-1)
    captions = torch.nn.functional.normalize(captions, dim=-1)
    root = torch.nn.functional.normalize(_caption_vector("", 16), dim=0)
    texts = [c for chain in chains for c in chain]
    assert len(set(texts)) < len(texts)  # shared captions exist in these rows
    out = Hm.hierarcaps_metrics(images, captions, "euclidean", root=root, caption_texts=texts)
    flat = captions.reshape(-1, 16)
    sims = (images @ flat.T).tolist()
    radii = (flat - root).norm(dim=-1).tolist()
    naive_p, naive_r = _naive_text_retrieval(
        sims, radii, texts, 4, np.zeros((len(chains), len(texts)), bool)
    )
    assert out["precision"] == pytest.approx(np.mean(naive_p), abs=1e-12)
    assert out["recall"] == pytest.approx(np.mean(naive_r), abs=1e-12)
    by_index = Hm.hierarcaps_metrics(images, captions, "euclidean", root=root)
    assert out["recall"] >= by_index["recall"]
