"""The pre-trained bases: a tiny pre-training exports float16 open_clip weights that a
fine-tune starts from exactly, with its curves and plateau checks in bases.json; another scale
never writes over the committed bases."""

from __future__ import annotations

import json

import pytest
import torch

from paperlib.engine.config import build_config
from paperlib.engine.methods import build_module, read_init_checkpoint
from paperlib.study import pretrain, reader


@pytest.mark.slow
def test_a_tiny_pretraining_exports_bases_a_fine_tune_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr(
        pretrain, "bases_dir", lambda: pytest.fail("smoke bases over the committed")
    )
    out = pretrain.pretrain("smoke", workers=1)
    assert out == tmp_path / "runs" / "pretrain-smoke" / "bases"
    summary = json.loads((out / "bases.json").read_text())
    assert len(summary["bases"]) == len(pretrain.BASES) * 2
    entry = summary["bases"][0]
    assert set(entry["plateau"]) == set(pretrain.PLATEAU_METRICS)
    assert [p["step"] for p in entry["validation"]["zeroshot_L1"]] == [0, 4, 8]
    weights = out / f"{entry['model']}-base{entry['base']}.pt"
    saved = torch.load(weights, weights_only=True)
    trained, _ = read_init_checkpoint(
        str(tmp_path / "runs" / "pretrain-smoke" / f"{entry['model']}-base0" / "last.pt")
    )
    assert set(saved) == set(trained)
    for key, value in saved.items():  # float16 of every floating tensor, the rest as it was
        expected = trained[key].half() if trained[key].is_floating_point() else trained[key]
        assert torch.equal(value, expected), key
    config = build_config(
        {"method": "clip", "model": {"name": entry["model"], "init": str(weights)}}
    )
    module, _, _ = build_module(config)
    for key, value in module.clip.state_dict().items():  # the fine-tune's start is the base
        assert torch.equal(value, saved[key].to(value.dtype)), key
    assert entry["weights"] == reader.repo_relative(weights)
