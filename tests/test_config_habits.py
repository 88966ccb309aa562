"""The habits of the field's tools: ``--print-config`` prints the resolved config as YAML,
``--help`` lists every key, presets inherit a base and state only what differs, and
``model.grad_checkpointing`` recomputes the blocks with the same gradients."""

from __future__ import annotations

import dataclasses

import open_clip.transformer
import pytest
import torch
import yaml

from paperlib.engine.config import SECTIONS, ConfigError, build_config, load_config, to_dict
from paperlib.engine.methods import build_module
from paperlib.engine.registry import METHOD_REGISTRY
from paperlib.notebooks import PARAMS_DIR, load_parameters
from paperlib.train import config_from, main

ABLATIONS = sorted((PARAMS_DIR / "train_himo").glob("ablation-*.yaml")) + sorted(
    p for p in (PARAMS_DIR / "train_argent").glob("cc3m-*.yaml") if p.stem != "cc3m-full"
)


def test_print_config_is_the_resolved_config_as_yaml(capsys):
    preset = PARAMS_DIR / "train_himo" / "ablation-tau0.8.yaml"
    overrides = ["data.dataset=synthetic", "data.size=2048", "train.steps=3"]
    assert main([str(preset), "--print-config", *overrides]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    expected = to_dict(config_from(preset, overrides))
    assert printed == expected and printed["loss"]["tau"] == 0.8 and printed["train"]["steps"] == 3
    assert to_dict(build_config(printed)) == expected  # the printed YAML trains the same run


def test_help_lists_every_key_of_every_section(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for name, cls in SECTIONS.items():
        classes = [m.config for m in METHOD_REGISTRY.values()] if cls is None else [cls]
        for kind in classes:
            for field in dataclasses.fields(kind):
                assert f"{field.name}=" in text, (name, field.name)
    assert "loss (himo): label_smoothing=0.1, tau=0.9" in text


@pytest.mark.parametrize("path", ABLATIONS, ids=lambda p: p.stem)
def test_ablation_presets_state_only_what_differs_from_their_base(path):
    own = yaml.safe_load(path.read_text())
    assert set(own) == {"base", "overrides"}  # no copy of the base's config
    base = PARAMS_DIR / path.parent.name / f"{own['base']}.yaml"
    world = ["data.dataset=world", "data.size=2000000"]
    resolved = to_dict(config_from(path, world))
    by_hand = load_config(to_dict(config_from(base, world)), own["overrides"])
    assert resolved == to_dict(by_hand)
    params = load_parameters(path)  # what the notebook runner hands the train notebook
    assert params["overrides"][-len(own["overrides"]) :] == own["overrides"] and "config" in params


def test_a_base_that_is_not_a_preset_or_comes_back_is_named(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b\noverrides: []\n")
    (tmp_path / "b.yaml").write_text("base: a\noverrides: []\n")
    (tmp_path / "c.yaml").write_text("base: ../a\n")
    with pytest.raises(ConfigError, match=r"chain comes back to itself \(a -> b -> a\)"):
        config_from(tmp_path / "a.yaml")
    with pytest.raises(ValueError, match="base must be a preset name"):
        load_parameters(tmp_path / "c.yaml")


def _gradients(checkpointing: bool, monkeypatch) -> tuple[dict, int]:
    calls = []
    original = open_clip.transformer.checkpoint

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(open_clip.transformer, "checkpoint", counted)
    torch.manual_seed(0)
    config = load_config({"method": "himo", "model": {"name": "paper-tiny", "context_length": 248,
                          "grad_checkpointing": checkpointing}})  # fmt: skip
    module, _, tokenizer = build_module(config)
    module.train()
    generator = torch.Generator().manual_seed(1)
    texts = ["a red square. a blue circle.", "two dogs", "a cat on a mat", "x y z"]
    batch = {"image": torch.randn(4, 3, 32, 32, generator=generator), "text": tokenizer(texts)}
    out = module.compute_loss({k: v.float() for k, v in module(batch).items()})
    out.total.backward()
    grads = {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}
    return grads, len(calls)


def test_gradient_checkpointing_gives_the_same_gradients(monkeypatch):
    plain, none = _gradients(False, monkeypatch)
    checkpointed, calls = _gradients(True, monkeypatch)
    assert none == 0 and calls == 4  # two blocks in each tower, each recomputed
    assert plain.keys() == checkpointed.keys() and len(plain) > 20
    assert all(torch.equal(plain[k], checkpointed[k]) for k in plain)
