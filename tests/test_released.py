"""Released-model registry, published-number table, PEP protocol and the one-command evaluation."""

from __future__ import annotations

import json

import pytest
import torch

from paperlib.engine import benchmarks as bm
from paperlib.engine.released import RELEASED_MODELS, load_released, released_model
from paperlib.evaluate import main as evaluate_main
from paperlib.evaluate import read_ids
from paperlib.metrics.results import read_result
from paperlib.models.clip import create_model
from paperlib.tables import published
from paperlib.tables.beside_published import (
    PUBLISHED_METRICS,
    SUITE_AVERAGE,
    beside_published,
    markdown,
    published_values,
)


def test_every_registry_model_names_published_rows_that_exist():
    for entry in RELEASED_MODELS.values():
        for table, model, arch in entry.published:
            assert published_values(table, model, arch), entry.name
    assert {"longclip-l14", "himo-l14", "meru-vit-b", "hycoclip-vit-l", "clip-vit-b16"} <= set(
        RELEASED_MODELS
    )


def test_published_metric_map_points_at_real_numbers_and_real_datasets():
    tables = published()
    for (table, path), target in PUBLISHED_METRICS.items():
        leaves = [
            dict(published_values(table, r["model"], r.get("arch", "")))
            for r in tables[table]["rows"]
        ]
        assert any(path in leaf for leaf in leaves), (table, path)
        if target is not None:
            assert target[0] in (*bm.TASKS, SUITE_AVERAGE), target  # a dataset we write
            assert target[2] in (1.0, 100.0)


def test_beside_published_scales_and_marks_what_was_not_run():
    rows = [
        {"dataset": "urban1k", "metrics": {"text_retrieval_recall@1": 0.5}},
        {"dataset": "hierarcaps", "metrics": {"pep_auc": 0.97}},
    ]
    out = beside_published(
        rows, (("himo_retrieval", "Long-CLIP", "B/16"), ("argent_main", "HyCoCLIP", "B"))
    )
    by = {(r["table"], r["published_metric"]): r for r in out}
    hit = by[("himo_retrieval", "Urban1k/i2t_r1")]
    assert hit["ours"] == pytest.approx(50.0) and hit["published"] == pytest.approx(78.9)
    assert hit["status"] == "compared"
    assert by[("argent_main", "pep_auc")]["ours"] == pytest.approx(97.0)
    assert by[("himo_retrieval", "COCO/t2i_r1")]["status"] == "not in this run"
    assert by[("argent_main", "avg16_acc1")]["status"] == "not in this run"
    assert by[("argent_main", "pep_auc")]["protocol"] == "not recorded"
    text = markdown(out)
    assert (
        "| himo_retrieval | Long-CLIP B/16 | Urban1k/i2t_r1 | urban1k | 78.9 | 50 | -28.9 |" in text
    )


def test_beside_published_marks_protocols_and_averages_the_suite():
    from paperlib.data.classification import ZEROSHOT_SUITE

    pep = {"pep": {"kept": None, "negatives": "per-image", "pool": None}}
    rows = [
        {"dataset": "hierarcaps", "metrics": {"pep_auc": 0.9}, "protocol": pep},
        {"dataset": "coco", "metrics": {"image_retrieval_recall@5": 0.5},
         "protocol": {"image_transform": "squeeze", "captions": "all"}},
    ] + [
        {"dataset": name, "metrics": {"mean_per_class_recall": k / 100, "acc1": 0.0},
         "protocol": {"image_transform": "crop", "prompt_set": "meru-hycoclip",
                      "split": "every image" if name == "eurosat" else "test"}}
        for k, name in enumerate(ZEROSHOT_SUITE)
    ]  # fmt: skip
    by = {
        r["published_metric"]: r for r in beside_published(rows, (("argent_main", "ARGENT", "S"),))
    }
    assert by["coco_t2i_r5"]["protocol"] == "as the paper"
    note = by["pep_auc"]["protocol"]
    assert note.startswith("differs:") and "pep.kept=None (paper: 522)" in note
    assert "pep.negatives=per-image (paper: shared)" in note
    assert by["avg16_acc1"]["ours"] == pytest.approx(sum(range(16)) / 16)  # % of k/100
    assert by["avg16_acc1"]["protocol"] == "differs: eurosat: split: every image"
    assert "| differs: pep.kept" in markdown(list(by.values()))
    drawn = {"pep": {"kept": 522, "negatives": "shared", "pool": 100, "pool_ids": False}}
    given = {"pep": {**drawn["pep"], "pool_ids": True}}
    for protocol, expected in ((drawn, "differs: pep.pool_ids=False (paper: True)"),
                               (given, "as the paper")):  # fmt: skip
        result = [{"dataset": "hierarcaps", "metrics": {"pep_auc": 0.9}, "protocol": protocol}]
        (row,) = [r for r in beside_published(result, (("argent_main", "ARGENT", "S"),))
                  if r["published_metric"] == "pep_auc"]  # fmt: skip
        assert row["protocol"] == expected


def test_released_model_names_and_errors():
    assert released_model("openclip:ViT-B-16").architecture == "ViT-B-16"
    assert released_model("hf-hub:org/repo").family == "openclip"
    with pytest.raises(ValueError, match="openclip:<open_clip architecture>"):
        released_model("meru-vit-xl")
    with pytest.raises(FileNotFoundError, match="needs --checkpoint FILE.*meru_vit_b.pth"):
        load_released("meru-vit-b", None)
    with pytest.raises(FileNotFoundError, match="checkpoint not found.*longclip"):
        load_released("longclip-b16", "nowhere/longclip-B.pt")


def test_read_ids_accepts_json_and_lines_and_names_bad_entries(tmp_path):
    (tmp_path / "a.json").write_text("[3, 1, 4]")
    (tmp_path / "b.txt").write_text("# kept rows\n3\n\n1  # second\n")
    assert read_ids(tmp_path / "a.json", "--pep-kept") == (3, 1, 4)
    assert read_ids(tmp_path / "b.txt", "--pep-kept") == (3, 1)
    (tmp_path / "c.txt").write_text("3\n-1\n")
    with pytest.raises(ValueError, match=r"--pep-kept: .*c.txt must list non-negative.*'-1'"):
        read_ids(tmp_path / "c.txt", "--pep-kept")
    (tmp_path / "d.json").write_text("[1, true]")
    with pytest.raises(ValueError, match="non-negative integer"):
        read_ids(tmp_path / "d.json", "--pep-pool")
    with pytest.raises(FileNotFoundError, match="--pep-pool: id file"):
        read_ids(tmp_path / "e.txt", "--pep-pool")


def test_pep_protocol_is_checked():
    with pytest.raises(ValueError, match="negatives must be one of"):
        bm.PEPProtocol(negatives="least-retrieved")
    with pytest.raises(ValueError, match="needs negatives='shared'"):
        bm.PEPProtocol(pool=(1, 2))
    with pytest.raises(ValueError, match="pool_size must be at least 1"):
        bm.PEPProtocol(pool_size=0)


def test_one_command_evaluates_an_open_clip_state_file(tmp_path, capsys):
    """``--model openclip:NAME --checkpoint FILE``: the same numbers as the model in memory."""
    torch.manual_seed(0)
    bundle = create_model("paper-tiny")
    weights = tmp_path / "tiny.pt"
    torch.save(bundle.model.state_dict(), weights)
    out = tmp_path / "out"
    code = evaluate_main(
        [
            "--model",
            "openclip:paper-tiny",
            "--checkpoint",
            str(weights),
            "--benchmarks",
            "world-long",
            "--world-size",
            "24",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    result = read_result(out / "world-long.json")
    assert result["model"] == "openclip:paper-tiny" and result["pretrained"] == str(weights)
    module, preprocess, tokenizer = load_released("openclip:paper-tiny", weights)
    from paperlib.engine.evaluation import Embedder, world_embeddings

    emb = world_embeddings(Embedder(module, preprocess, tokenizer), 24, 12345, 32)
    again = bm.benchmark_metrics(emb, "world-long", bm.Scoring("euclidean"))["world-long"]
    assert result["metrics"] == pytest.approx(again)
    assert not (out / "published.md").exists()  # no published row for an ad-hoc model
    assert json.loads((out / "world-long.json").read_text())["task"] == "zeroshot_retrieval"


def test_one_command_refuses_two_checkpoints_and_none(tmp_path, capsys):
    with pytest.raises(SystemExit):
        evaluate_main(["a", "--checkpoint", "b", "--output", str(tmp_path)])
    assert "give the checkpoint once" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        evaluate_main(["--output", str(tmp_path)])
    assert "a checkpoint is required" in capsys.readouterr().err


def _scores_of(model: str, checkpoint, benchmarks: list[str], size: int, image_size: int):
    """The benchmarks' metrics of a released model loaded and embedded outside the CLI."""
    from paperlib.engine.evaluation import Embedder, world_embeddings, world_texts

    module, preprocess, tokenizer = load_released(model, checkpoint)
    emb = world_embeddings(Embedder(module, preprocess, tokenizer), size, 12345, image_size)
    emb = {**emb, **world_texts(12345, size)}
    curv = module.model.curv.item() if module.geometry == "hyperbolic" else 0.0
    scoring = bm.Scoring(module.geometry, curv)
    return {k: v for b in benchmarks for k, v in bm.benchmark_metrics(emb, b, scoring).items()}


def _run_cli(model: str, checkpoint, out, benchmarks: list[str], size: int) -> None:
    code = evaluate_main(
        [
            "--model",
            model,
            "--checkpoint",
            str(checkpoint),
            "--benchmarks",
            *benchmarks,
            "--world-size",
            str(size),
            "--output",
            str(out),
        ]
    )
    assert code == 0


@pytest.mark.slow
def test_one_command_evaluates_a_long_clip_format_file(tmp_path):
    """A Long-CLIP-layout file (full vocabulary, 248 positions, residual table) through
    ``--model longclip-b16``: the CLI's numbers are the loaded model's, and the published table
    lists Long-CLIP B/16's numbers (none of them run here)."""
    from open_clip.model import CLIP

    torch.manual_seed(0)
    clip = CLIP(
        32,
        vision_cfg={"layers": 1, "width": 64, "head_width": 64, "patch_size": 8, "image_size": 32},
        text_cfg={"context_length": 248, "vocab_size": 49408, "width": 64, "heads": 1, "layers": 1},
        quick_gelu=True,
    )
    state = clip.state_dict()
    state["positional_embedding_res"] = state["positional_embedding"] + 0.1 * torch.randn(248, 64)
    torch.save(state, tmp_path / "longclip-B.pt")
    benchmarks = ["world-long", "world-monotonicity"]
    _run_cli("longclip-b16", tmp_path / "longclip-B.pt", tmp_path / "out", benchmarks, 24)
    expected = _scores_of("longclip-b16", tmp_path / "longclip-B.pt", benchmarks, 24, 32)
    for dataset, metrics in expected.items():
        assert read_result(tmp_path / "out" / f"{dataset}.json")["metrics"] == pytest.approx(
            metrics
        )
    table = (tmp_path / "out" / "published.md").read_text()
    assert "| himo_retrieval | Long-CLIP B/16 | Urban1k/i2t_r1 | urban1k | 78.9 | — | — |" in table


@pytest.mark.slow
def test_one_command_evaluates_a_meru_format_file_with_pep(tmp_path):
    """An official-layout HyCoCLIP file (``to_official_state_dict``) through ``--model
    hycoclip-vit-s``: hyperbolic scores, PEP on the world's chains, the same numbers."""
    from paperlib.models.meru_checkpoint import build_meru_model, to_official_state_dict

    torch.manual_seed(0)
    model = build_meru_model(
        "vit_small_mocov3_patch16_224",
        image_size=32,
        embed_dim=32,
        text_layers=1,
        text_width=64,
        text_heads=1,
    )
    with torch.no_grad():
        model.log_curv.fill_(-0.3)
        model.visual_alpha.fill_(-1.0)
    torch.save({"model": to_official_state_dict(model)}, tmp_path / "hycoclip_vit_s.pth")
    benchmarks = ["world-long", "world-hierarchy"]
    _run_cli("hycoclip-vit-s", tmp_path / "hycoclip_vit_s.pth", tmp_path / "out", benchmarks, 24)
    expected = _scores_of("hycoclip-vit-s", tmp_path / "hycoclip_vit_s.pth", benchmarks, 24, 32)
    hierarchy = read_result(tmp_path / "out" / "world-hierarchy.json")["metrics"]
    assert {"pep_auc", "pep_ap", "pep_auc_finest"} <= set(hierarchy)
    for dataset, metrics in expected.items():
        assert read_result(tmp_path / "out" / f"{dataset}.json")["metrics"] == pytest.approx(
            metrics
        )
    table = (tmp_path / "out" / "published.md").read_text()
    assert "| argent_main | HyCoCLIP S | pep_auc | hierarcaps | 96.8 | — | — |" in table
