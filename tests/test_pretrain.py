"""The pre-trained bases: a tiny pre-training exports float16 open_clip weights that a
fine-tune starts from exactly, with its curves and plateau checks in bases.json; another scale
never writes over the committed bases."""

from __future__ import annotations

import json

import pytest
import torch

from paperlib.engine.config import build_config
from paperlib.engine.methods import build_module, read_init_checkpoint
from paperlib.study import paths
from paperlib.study.plan import bases
from paperlib.study.run import pretrain


@pytest.mark.slow
def test_a_tiny_pretraining_exports_bases_a_fine_tune_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr(
        pretrain, "bases_dir", lambda: pytest.fail("smoke bases over the committed")
    )
    out = pretrain.pretrain("smoke", workers=1)
    assert out == tmp_path / "runs" / "pretrain-smoke" / "bases"
    summary = json.loads((out / "bases.json").read_text())
    assert len(summary["bases"]) == len(bases.BASES) * 2
    entry = summary["bases"][0]
    assert set(entry["plateau"]) == set(bases.PLATEAU_METRICS)
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
    assert entry["weights"] == paths.repo_relative(weights)


@pytest.mark.slow
def test_hyperbolic_bases_carry_their_geometry_into_a_fine_tune(tmp_path, monkeypatch):
    """A MERU base keeps its curvature, α and logit scale beside its float16 encoders, in its
    own folder, and an ARGENT fine-tune that names it starts from all of them."""
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    out = pretrain.pretrain("smoke", workers=1, geometry="hyperbolic")
    assert out == tmp_path / "runs" / "pretrain-smoke" / "bases-hyperbolic"
    summary = json.loads((out / "bases.json").read_text())
    assert summary["geometry"] == "hyperbolic"
    assert {c["method"] for c in summary["config"].values()} == {"meru"}
    entry = summary["bases"][0]
    weights = out / f"{entry['model']}-base{entry['base']}.pt"
    run = tmp_path / "runs" / "pretrain-smoke" / f"{entry['model']}-meru-base0" / "last.pt"
    trained, scalars = read_init_checkpoint(str(run))
    saved, saved_scalars = read_init_checkpoint(str(weights))
    assert set(scalars) == {"model.log_curv", "model.visual_alpha", "model.textual_alpha",
                            "model.logit_scale"}  # fmt: skip
    assert set(saved) == set(trained)
    for key, value in saved.items():
        assert value.dtype == torch.float16 or not trained[key].is_floating_point(), key
        assert torch.equal(value.float(), trained[key].half().float()), key
    for key, value in scalars.items():  # full precision: the curvature is not rounded
        assert torch.equal(saved_scalars[key], value), key
    recorded = torch.load(weights, weights_only=True)["config"]
    assert recorded == {"method": "meru", "model": {"name": entry["model"]}}  # no local paths
    config = build_config(
        {"method": "argent", "model": {"name": entry["model"], "init": str(weights)}}
    )
    module, _, _ = build_module(config)
    for key, value in scalars.items():
        assert torch.equal(module.get_parameter(key).detach(), value), key
    for key, value in module.model.clip.state_dict().items():
        assert torch.equal(value, saved[key].to(value.dtype)), key
    # a Euclidean base is trained with another method, into another folder
    euclidean = bases.base_config(entry["model"], 0, bases.RECIPES["smoke"], tmp_path)
    assert euclidean["method"] == "clip" and euclidean["train"]["output_dir"] != str(run.parent)


def test_the_committed_hyperbolic_bases_are_what_their_record_says():
    """Each committed hyperbolic base is the file bases.json checks, a MERU model with its
    curvature, trained by the Euclidean bases' recipe, with its curve and plateau check."""
    import hashlib

    folder = bases.bases_dir("hyperbolic")
    if not (folder / "bases.json").is_file():
        pytest.skip("no hyperbolic bases committed")
    summary = json.loads((folder / "bases.json").read_text())
    euclidean = json.loads((bases.bases_dir() / "bases.json").read_text())
    assert summary["geometry"] == "hyperbolic" and summary["recipe"] == euclidean["recipe"]
    expected = {(m, b) for m in (bases.MODEL, bases.MODEL_SMALLER) for b in bases.BASES}
    assert {(e["model"], e["base"]) for e in summary["bases"]} == expected
    for entry in summary["bases"]:
        weights = paths.REPO_ROOT / entry["weights"]
        assert hashlib.sha256(weights.read_bytes()).hexdigest() == entry["sha256"]
        _, scalars = read_init_checkpoint(str(weights))
        assert scalars["model.log_curv"].exp().item() > 0 and "model.visual_alpha" in scalars
        assert entry["steps"] == summary["recipe"]["steps"] and entry["cpu_seconds"] > 0
        assert set(entry["plateau"]) == set(bases.PLATEAU_METRICS)


def test_a_fine_tune_takes_the_checkpoint_scalars_it_names():
    """``model.init_scalars`` picks which of a hyperbolic base's scalars a run starts from; the
    others start where a from-scratch run's do, and the encoders are the base's either way."""
    weights = bases.base_path(bases.MODEL_SMALLER, 0, bases.bases_dir("hyperbolic"))
    saved, saved_scalars = read_init_checkpoint(str(weights))
    fresh = build_module(build_config({"method": "argent", "model": {"name": bases.MODEL_SMALLER}}))
    fresh_scalars = {k: fresh[0].get_parameter(k).detach() for k in saved_scalars}
    for names, kept in (
        (["curvature", "alpha", "logit_scale"], set(saved_scalars)),
        (["logit_scale"], {"model.logit_scale"}),
        ([], set()),
    ):
        model = {"name": bases.MODEL_SMALLER, "init": str(weights), "init_scalars": names}
        module, _, _ = build_module(build_config({"method": "argent", "model": model}))
        for key, value in saved_scalars.items():
            expected = value if key in kept else fresh_scalars[key]
            assert torch.equal(module.get_parameter(key).detach(), expected), (names, key)
        for key, value in module.model.clip.state_dict().items():
            assert torch.equal(value, saved[key].to(value.dtype)), key
    assert not torch.equal(saved_scalars["model.log_curv"], fresh_scalars["model.log_curv"])
    fixed = {"name": bases.MODEL_SMALLER, "init": str(weights), "init_scalars": [],
             "curv_init": 0.1, "learn_curv": False}  # fmt: skip
    module, _, _ = build_module(build_config({"method": "argent", "model": fixed}))
    assert module.model.curv.item() == pytest.approx(0.1)
    with pytest.raises(ValueError, match="model.init_scalars: unknown scalar"):
        build_config({"method": "argent", "model": {"init_scalars": ["curv"]}})
    with pytest.raises(ValueError, match="leave alpha out of model.init_scalars"):
        model = {"name": bases.MODEL_SMALLER, "init": str(weights), "alpha_rule": "feature-norm"}
        build_module(build_config({"method": "argent", "model": model}))
