"""HiMo@K, segments, SSI and noise injection (docs/methods/himo-clip.md#himo-at-k) against scipy
and naive loops."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from scipy.stats import pearsonr

from paperlib.metrics.monotonicity import (
    cumulative_segments,
    himo_at_k,
    inject_noise,
    monotonicity_correlations,
    segment_scores,
    semantic_stability_index,
    split_sentences,
    strict_monotone_accuracy,
)


def test_split_sentences_rule():
    text = (
        "A dog runs. It is brown, e.g. like coffee. Mr. Smith owns it! "
        'The 3.5 m fence is white?  "Stop" says a sign. (A note.) 2 cats sit.'
    )
    assert split_sentences(text) == [
        "A dog runs.",
        "It is brown, e.g. like coffee.",
        "Mr. Smith owns it!",
        "The 3.5 m fence is white?",
        '"Stop" says a sign.',
        "(A note.)",
        "2 cats sit.",
    ]
    assert split_sentences("  no terminal punctuation ") == ["no terminal punctuation"]
    assert split_sentences("") == []


def test_cumulative_segments_even_rule():
    caption = " ".join(f"Sentence {i}." for i in range(1, 6))  # 5 sentences
    segs = cumulative_segments(caption, 3)
    assert [len(split_sentences(s)) for s in segs] == [2, 4, 5]  # ceil(j*5/3)
    assert segs[-1] == caption
    assert cumulative_segments(caption, 2) == [
        "Sentence 1. Sentence 2. Sentence 3.",
        caption,
    ]
    assert cumulative_segments(caption, 6) is None
    assert cumulative_segments(caption, 1) == [caption]
    for k in range(1, 6):
        segs = cumulative_segments(caption, k)
        assert all(b.startswith(a) and len(b) > len(a) for a, b in zip(segs, segs[1:]))
    with pytest.raises(ValueError, match="k"):
        cumulative_segments(caption, 0)


def test_segments_on_himo_docci_captions(shared_data):
    path = shared_data / "himo_docci" / "himo_docci_data.json"
    rows = [json.loads(line) for line in path.read_text().splitlines()[:200]]
    usable = 0
    for row in rows:
        for k in (2, 3):
            segs = cumulative_segments(row["raw_caption"], k)
            if segs is None:
                continue
            usable += 1
            assert segs[-1] == " ".join(split_sentences(row["raw_caption"]))
            assert all(b.startswith(a) and len(b) > len(a) for a, b in zip(segs, segs[1:]))
    assert usable > 300  # most DOCCI captions have at least 3 sentences


def test_strict_monotone_accuracy_hand_made_and_naive():
    scores = np.array([[0.1, 0.2, 0.3], [0.1, 0.3, 0.2], [0.2, 0.2, 0.3], [0.0, 0.1, 0.5]])
    assert strict_monotone_accuracy(scores) == pytest.approx(0.5)  # the tie fails
    assert strict_monotone_accuracy(torch.tensor(scores[:, :2])) == pytest.approx(0.75)
    rng = np.random.default_rng(0)
    rand = rng.normal(size=(200, 3))
    naive = np.mean([r[0] < r[1] < r[2] for r in rand])
    assert strict_monotone_accuracy(rand) == pytest.approx(naive)
    with pytest.raises(ValueError, match="K >= 2"):
        strict_monotone_accuracy([[0.1]])


def test_himo_at_k_matches_scipy_pearson():
    rng = np.random.default_rng(1)
    rows = [rng.normal(size=k) + 0.3 * np.arange(k) for k in rng.integers(2, 18, size=50)]
    ref = [pearsonr(np.arange(1, len(r) + 1), r)[0] for r in rows]
    np.testing.assert_allclose(monotonicity_correlations(rows), ref, atol=1e-12)
    assert himo_at_k(rows) == pytest.approx(np.mean(ref))
    assert monotonicity_correlations([[0.1, 0.2], [0.3, 0.1]]).tolist() == [1.0, -1.0]


def test_himo_at_k_constant_scores():
    rows = [[0.5, 0.5, 0.5, 0.5], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]]
    assert monotonicity_correlations(rows).tolist() == pytest.approx([0.0, 1.0, -1.0])
    assert himo_at_k(rows) == pytest.approx(0.0)
    assert himo_at_k(rows[:2], constant=None) == pytest.approx(1.0)  # dropped
    with pytest.raises(ValueError, match="constant"):
        himo_at_k(rows[:1], constant=None)


def test_segment_scores_are_cosines():
    torch.manual_seed(0)
    img = torch.randn(3, 4)
    segs = [torch.randn(k, 4) for k in (2, 5, 3)]
    got = segment_scores(img * 3.0, segs)
    for i, seg in enumerate(segs):
        ref = F.cosine_similarity(seg, img[i].expand_as(seg), dim=1)
        torch.testing.assert_close(got[i], ref)
    with pytest.raises(ValueError, match="one segment tensor per image"):
        segment_scores(img, segs[:2])


def test_ssi_definition():
    assert semantic_stability_index([0.5, 0.25], [0.45, 0.25]) == pytest.approx(5.0)
    rng = np.random.default_rng(2)
    clean = rng.uniform(0.2, 0.4, 100)
    noisy = clean + rng.normal(0, 0.02, 100)
    naive = 100 * sum(abs(n - c) / abs(c) for c, n in zip(clean, noisy)) / 100
    assert semantic_stability_index(torch.tensor(clean), noisy) == pytest.approx(naive)
    assert semantic_stability_index(clean, clean) == 0.0
    with pytest.raises(ValueError, match="zero score"):
        semantic_stability_index([0.0, 0.1], [0.1, 0.1])
    with pytest.raises(ValueError, match="equal-length"):
        semantic_stability_index([0.1], [0.1, 0.2])


def test_inject_noise_procedure():
    captions = [
        "A red truck. It has six wheels. The driver waves.",
        "A giraffe stands. It is five metres tall.",
        "A bowl of soup. Steam rises. A spoon lies beside it. Bread is near.",
    ]
    noisy = inject_noise(captions, n_noise=2, seed=3)
    assert noisy == inject_noise(captions, n_noise=2, seed=3)  # deterministic
    assert noisy != inject_noise(captions, n_noise=2, seed=4)
    for i, (clean, dirty) in enumerate(zip(captions, noisy)):
        own, got = split_sentences(clean), split_sentences(dirty)
        assert len(got) == len(own) + 2 and got[0] == own[0]
        remaining = list(got)
        for sentence in own:  # originals kept, in order
            remaining = remaining[remaining.index(sentence) + 1 :]
        extra = [s for s in got if s not in own]
        others = {s for j, c in enumerate(captions) if j != i for s in split_sentences(c)}
        assert len(extra) == 2 and set(extra) <= others
    pooled = inject_noise(captions[:1], 1, pool=["Noise here."], seed=0)
    assert "Noise here." in split_sentences(pooled[0])
    assert inject_noise(captions, 0) == [" ".join(split_sentences(c)) for c in captions]
    with pytest.raises(ValueError, match="no noise sentences"):
        inject_noise(captions[:1], 1)
