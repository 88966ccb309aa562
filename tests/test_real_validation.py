"""Validation on real data while training: ShareGPT4V's held-out entries and a benchmark root
at ``train.val_every``, logged in ``log.jsonl`` (and so in TensorBoard / W&B) with the values
the final model gives on the same samples; ``val_every`` with nothing to validate on is
refused."""

from __future__ import annotations

import pytest
import torch
from PIL import Image

from paperlib.data.loaders import load_sharegpt4v
from paperlib.engine.benchmarks import load_real
from paperlib.engine.config import ConfigError, load_config
from paperlib.engine.evaluation import load_trained
from paperlib.engine.loop import train
from paperlib.engine.reporting import record_scalars
from paperlib.metrics.retrieval import retrieval_metrics_from_scores
from paperlib.train import read_validation
from tests.engine_helpers import tiny_config
from tests.real_formats import coco_val2017, openclip_shards, sharegpt4v_linked


def _naive_i2t_r1(image: torch.Tensor, text: torch.Tensor) -> float:
    """Image→text R@1 by a loop: the own caption strictly above every other one."""
    scores = image @ text.T
    hits = [
        all(scores[i, i] > scores[i, j] for j in range(len(text)) if j != i)
        for i in range(len(image))
    ]
    return sum(hits) / len(hits)


def test_sharegpt4v_runs_validate_on_their_held_out_entries(tmp_path):
    json_path = sharegpt4v_linked(tmp_path / "sg", 14, tmp_path / "kept" / "coco")
    data = {"dataset": "sharegpt4v", "root": str(json_path.parent), "held_out": 6}
    train_section = {"steps": 2, "batch_size": 4, "val_every": 1, "val_size": 5}
    train(tiny_config("himo", tmp_path / "run", data=data, train=train_section))
    records = read_validation(tmp_path / "run")
    assert [r["step"] for r in records] == [0, 1, 2]
    assert all(r["val_samples"] == {"sharegpt4v": 5} for r in records)
    last = records[-1]["val"]
    assert set(last) >= {
        "sharegpt4v/text_retrieval_recall@1",
        "sharegpt4v/image_retrieval_recall@1",
    }
    module, preprocess, tokenizer, _ = load_trained(tmp_path / "run")
    held = load_sharegpt4v(json_path, json_path.parent, split="val", val_size=6)[:5]
    with torch.no_grad():
        image = module.embed_image(
            torch.stack([preprocess(Image.open(s.image).convert("RGB")) for s in held])
        )
        text = module.embed_text(tokenizer([s.caption for s in held]))
    assert last["sharegpt4v/text_retrieval_recall@1"] == pytest.approx(_naive_i2t_r1(image, text))
    assert (
        record_scalars(records[-1])["val/sharegpt4v/text_retrieval_recall@1"]
        == last["sharegpt4v/text_retrieval_recall@1"]
    )  # what TensorBoard and W&B receive


def test_a_benchmark_root_validates_a_shard_run(tmp_path):
    openclip_shards(tmp_path / "shards", 8)
    coco_val2017(tmp_path / "coco", 6)
    data = {"dataset": "webdataset", "root": str(tmp_path / "shards"), "shuffle_buffer": 4}
    train_section = {
        "steps": 2, "batch_size": 4, "val_every": 2, "val_size": 4,
        "val_benchmark": "mscoco_captions", "val_root": str(tmp_path / "coco"),
    }  # fmt: skip
    train(tiny_config("clip", tmp_path / "run", data=data, train=train_section))
    records = read_validation(tmp_path / "run")
    assert [r["step"] for r in records] == [0, 2] and records[0]["val_samples"] == {"coco": 4}
    values = records[-1]["val"]
    module, preprocess, tokenizer, _ = load_trained(tmp_path / "run")

    samples = load_real("coco", tmp_path / "coco", 4)
    with torch.no_grad():
        image = module.embed_image(
            torch.stack([preprocess(Image.open(s.image).convert("RGB")) for s in samples])
        )
        text = module.embed_text(tokenizer([c for s in samples for c in s.captions[:5]]))
    owner = torch.arange(4).repeat_interleave(5)
    expected = retrieval_metrics_from_scores(
        image @ text.T, owner[None, :] == torch.arange(4)[:, None]
    )
    assert values["coco/image_retrieval_recall@1"] == pytest.approx(
        expected["image_retrieval_recall@1"]
    )
    assert values["coco/text_retrieval_recall@5"] == pytest.approx(
        expected["text_retrieval_recall@5"]
    )


def test_val_every_with_nothing_to_validate_on_is_refused(tmp_path):
    openclip_shards(tmp_path / "shards", 4)
    data = {"dataset": "webdataset", "root": str(tmp_path / "shards")}
    with pytest.raises(
        ConfigError,
        match="train.val_every: data.dataset='webdataset' has no held-out set.*val_benchmark",
    ):
        load_config(tiny_config("clip", tmp_path / "r", data=data, train={"val_every": 5}))
    sg = {"dataset": "sharegpt4v", "root": str(tmp_path), "held_out": 0}
    (tmp_path / "s.json").write_text("[]")
    with pytest.raises(ConfigError, match="train.val_every"):
        load_config(tiny_config("himo", tmp_path / "r", data=sg, train={"val_every": 5}))
    with pytest.raises(ConfigError, match="train.val_benchmark: .* set train.val_every"):
        load_config(
            tiny_config(
                "clip",
                tmp_path / "r",
                data=data,
                train={"val_benchmark": "coco", "val_root": str(tmp_path)},
            )
        )
    with pytest.raises(ConfigError, match="train.val_root: benchmark 'coco': root .* lacks"):
        load_config(
            tiny_config(
                "clip",
                tmp_path / "r",
                data=data,
                train={"val_every": 5, "val_benchmark": "coco", "val_root": str(tmp_path)},
            )
        )
    with pytest.raises(ConfigError, match="train.val_benchmark: expected one of"):
        load_config(
            tiny_config(
                "clip",
                tmp_path / "r",
                data=data,
                train={"val_every": 5, "val_benchmark": "hierarcaps"},
            )
        )
