"""CLIP_benchmark-format results files (docs/methods/conventions.md#results-format): keys, atomic
writes, merging."""

from __future__ import annotations

import json
import os

import pytest

from paperlib.metrics import results as R


def _result(dataset="urban1k", model="ViT-B-16", **metrics):
    metrics = metrics or {"image_retrieval_recall@1": 0.5, "text_retrieval_recall@1": 0.25}
    return R.make_result(dataset, model, "openai", "zeroshot_retrieval", metrics)


def test_keys_and_metric_names_follow_clip_benchmark(tmp_path):
    result = R.make_result(
        "imagenet1k",
        "ViT-B-32",
        None,
        "zeroshot_classification",
        {R.ACC1: 0.6, R.ACC5: 0.9, R.MEAN_PER_CLASS_RECALL: 0.58},
        run="abc",
    )
    path = R.write_result(tmp_path / "out" / "r.json", result)
    data = json.loads(path.read_text())
    assert set(R.REQUIRED_KEYS) <= set(data) and data["run"] == "abc"
    assert data["pretrained"] == "" and data["language"] == "en"
    assert data["metrics"] == {"acc1": 0.6, "acc5": 0.9, "mean_per_class_recall": 0.58}
    assert R.read_result(path) == data
    assert R.image_retrieval_recall(5) == "image_retrieval_recall@5"
    assert R.text_retrieval_recall(1) == "text_retrieval_recall@1"


def test_reads_a_clip_benchmark_file(tmp_path):
    # the shape CLIP_benchmark writes for zero-shot retrieval
    text = (
        '{"dataset": "flickr30k", "model": "ViT-B-32", "pretrained": "openai", '
        '"task": "zeroshot_retrieval", "metrics": {"image_retrieval_recall@5": 0.83, '
        '"text_retrieval_recall@5": 0.95}, "language": "en"}'
    )
    (tmp_path / "cb.json").write_text(text)
    rows = R.merge_results(tmp_path / "cb.json")
    assert rows == [
        {
            "dataset": "flickr30k",
            "model": "ViT-B-32",
            "pretrained": "openai",
            "task": "zeroshot_retrieval",
            "language": "en",
            "image_retrieval_recall@5": 0.83,
            "text_retrieval_recall@5": 0.95,
        }
    ]


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    path = R.write_result(tmp_path / "r.json", _result())
    before = path.read_text()

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        R.write_result(path, _result(**{R.SSI: 4.6}))
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # no temp file left


def test_invalid_results_are_rejected_with_names(tmp_path):
    with pytest.raises(ValueError, match="'ssi' is not finite"):
        R.make_result("d", "m", "p", "t", {"ssi": float("nan")})
    with pytest.raises(ValueError, match="'acc1' must be a number"):
        R.make_result("d", "m", "p", "t", {"acc1": "high"})
    bad = tmp_path / "bad.json"
    bad.write_text('{"dataset": "d", "metrics": {}}')
    with pytest.raises(ValueError, match=r"bad.json: missing key\(s\) \['model'"):
        R.read_result(bad)
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="broken.json: not valid JSON"):
        R.read_result(tmp_path / "broken.json")
    with pytest.raises(ValueError, match="clash with row keys"):
        R.merge_results([R.make_result("d", "m", "p", "t", {"model": 1.0})])


def test_merge_folder_files_and_dicts(tmp_path):
    folder = tmp_path / "runs"
    R.write_result(folder / "b.json", _result("docci", **{R.HIMO_AT_2: 0.9}))
    R.write_result(folder / "a.json", _result("urban1k"))
    extra = _result("himo_docci", **{R.HIMO_AT_K: 0.88})
    rows = R.merge_results([folder, extra])
    assert [r["dataset"] for r in rows] == ["urban1k", "docci", "himo_docci"]
    assert rows[1]["himo@2"] == 0.9 and "himo@2" not in rows[0]
    assert R.metric_columns(rows) == [
        "image_retrieval_recall@1",
        "text_retrieval_recall@1",
        "himo@2",
        "himo@k_pearson",
    ]
