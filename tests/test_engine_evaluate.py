"""Evaluation: cached embedding pass, metrics against direct computation, CLIP_benchmark JSON."""

from __future__ import annotations

import json

import pytest
import torch

from paperlib.engine import evaluation as ev
from paperlib.engine.loop import train
from paperlib.evaluate import main as evaluate_main
from paperlib.metrics.results import read_result
from paperlib.metrics.retrieval import retrieval_metrics_from_scores
from tests.engine_helpers import tiny_config


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval")
    return {
        m: train(tiny_config(m, root / m, train={"steps": 2})).output_dir
        for m in ("clip", "argent")
    }


def test_score_matrix_retrieval_matches_a_naive_loop():
    torch.manual_seed(0)
    scores = torch.randn(7, 7)
    got = retrieval_metrics_from_scores(scores, ks=(1, 3))
    for k in (1, 3):
        t2i = sum(int((scores[:, j] >= scores[j, j]).sum() - 1 < k) for j in range(7)) / 7
        i2t = sum(int((scores[i] >= scores[i, i]).sum() - 1 < k) for i in range(7)) / 7
        assert got[f"image_retrieval_recall@{k}"] == pytest.approx(t2i)
        assert got[f"text_retrieval_recall@{k}"] == pytest.approx(i2t)


@pytest.mark.parametrize("method", ["clip", "argent"])
def test_evaluate_writes_results_and_reuses_cache(runs, tmp_path, method):
    out = tmp_path / "results"
    rows = ev.evaluate(runs[method], output_dir=out, world_size=24)
    names = {r["dataset"] for r in rows}
    assert {
        "world-long",
        "world-short",
        "world-monotonicity",
        "world-cola",
        "world-zeroshot-L1",
        "world-zeroshot-L3",
        "world-hierarchy",
    } <= names
    for row in rows:
        again = read_result(out / f"{row['dataset']}.json")
        assert set(again) >= {"dataset", "model", "pretrained", "task", "metrics", "language"}
    hierarchy = next(r for r in rows if r["dataset"] == "world-hierarchy")["metrics"]
    assert ("pep_auc" in hierarchy) == (method == "argent")  # PEP only for hyperbolic models
    cache_files = list((out / "cache").rglob("*.pt"))
    assert len(cache_files) == 1  # one embedding pass for all world benchmarks
    # the long-retrieval numbers equal a direct computation from fresh embeddings
    module, preprocess, tokenizer, _ = ev.load_trained(runs[method])
    emb = torch.load(cache_files[0], weights_only=True)
    from paperlib.data.world import World

    world = World(seed=12345, image_size=32)
    samples = [world.sample(i) for i in range(24)]
    embed = ev.Embedder(module, preprocess, tokenizer)
    img, txt = embed.images([s.image for s in samples]), embed.texts([s.caption for s in samples])
    torch.testing.assert_close(emb["image"], img)
    if method == "clip":
        scores = img @ txt.T
    else:
        from paperlib.geometry.lorentz import pairwise_dist

        scores = -pairwise_dist(img, txt, module.model.curv.item())
    long = next(r for r in rows if r["dataset"] == "world-long")["metrics"]
    direct = retrieval_metrics_from_scores(scores)
    for key, value in direct.items():
        assert long[key] == pytest.approx(value)
    short_texts = ev.world_short_captions(12345, 24)
    assert short_texts == [s.short_caption for s in samples]
    # second call: served from the cache (file untouched), same numbers
    mtime = cache_files[0].stat().st_mtime_ns
    rows2 = ev.evaluate(runs[method], output_dir=out, world_size=24, pretrained_label="ckpt")
    assert cache_files[0].stat().st_mtime_ns == mtime
    assert [r["metrics"] for r in rows2] == [r["metrics"] for r in rows]
    assert {r["pretrained"] for r in rows} == {str(runs[method])}  # default: the path given
    assert {read_result(out / f"{r['dataset']}.json")["pretrained"] for r in rows2} == {"ckpt"}
    assert "| world-long |" in (out / "results.md").read_text()


def test_cli_names_bad_inputs(tmp_path, capsys):
    assert evaluate_main([str(tmp_path / "none"), "--output", str(tmp_path / "o")]) == 2
    assert "checkpoint not found" in capsys.readouterr().err


def test_hierarcaps_real_data(runs, tmp_path, shared_data):
    rows = ev.evaluate(
        runs["argent"],
        ["hierarcaps"],
        output_dir=tmp_path / "h",
        hierarcaps_root=shared_data / "hierarcaps",
        hierarcaps_limit=40,
    )
    metrics = rows[0]["metrics"]
    assert -1.0 <= metrics["d_corr"] <= 1.0 and 0.0 <= metrics["pep_auc"] <= 1.0
    assert json.loads((tmp_path / "h" / "hierarcaps.json").read_text())["task"] == "hierarchy"
