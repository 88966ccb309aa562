"""Validated configs: method defaults, overrides, and bad configs failing before training."""

from __future__ import annotations

import math

import pytest

from paperlib.engine.config import (
    METHOD_DEFAULTS,
    ConfigError,
    apply_overrides,
    build_config,
    load_config,
    save_config,
    to_dict,
)
from paperlib.engine.registry import METHOD_REGISTRY
from paperlib.losses.entailment import ARGENTConfig, MERUConfig
from paperlib.losses.himo import MoLoConfig
from paperlib.train import main as train_main


def test_paper_defaults_per_method():
    himo = build_config({"method": "himo"})
    assert (himo.optim.lr, himo.optim.weight_decay, himo.optim.betas) == (1e-6, 0.01, (0.9, 0.999))
    assert himo.optim.warmup_steps == 200 and himo.optim.decay_logit_scale
    assert himo.loss.label_smoothing == 0.1 and (himo.loss.tau, himo.loss.lam) == (0.9, 1.0)
    assert himo.model.context_length == 248 and himo.model.long_text == "residual"
    assert math.isclose(himo.model.logit_scale_init, math.log(100))
    meru = build_config({"method": "meru"})
    assert (meru.optim.lr, meru.optim.weight_decay, meru.optim.betas) == (5e-4, 0.2, (0.9, 0.98))
    assert meru.optim.warmup_steps == 4000 and meru.loss.entail_weight == 0.2
    argent = build_config({"method": "argent"})
    assert (argent.loss.gamma1, argent.loss.gamma2) == (0.1, 0.1)
    assert (argent.loss.weights, argent.loss.entailment, argent.loss.regularize) == (
        "intra",
        "adaent",
        True,
    )
    assert argent.hyperbolic and not himo.hyperbolic
    assert set(METHOD_DEFAULTS) == set(METHOD_REGISTRY)
    for name, method in METHOD_REGISTRY.items():  # the loss section is the method's dataclass
        assert type(build_config({"method": name}).loss) is method.config


# the loss section as configs saved it when it was one section for every method
ONE_SECTION = {
    "label_smoothing": 0.0, "tau": 0.9, "lam": 1.0, "scope": "global", "detach": False,
    "renormalize": False, "fixed_m": None, "pcm_dim": 32, "short_weight": 0.5,
    "entail_weight": 0.2, "eta_inter": 0.7, "eta_intra": 1.2, "gamma1": 0.1, "gamma2": 0.1,
    "weights": "none", "regularize": True, "entailment": "adaent", "adaent_beta": 0.1,
    "adaent_placement": "outside", "adaent_normalize": "mean", "detach_weight": True,
}  # fmt: skip


def test_a_saved_one_section_loss_is_read_as_its_method_s_keys():
    argent = build_config({"method": "argent", "loss": ONE_SECTION})
    assert argent.loss == ARGENTConfig(weights="none")
    assert build_config({"method": "meru", "loss": ONE_SECTION}).loss == MERUConfig()
    himo = build_config({"method": "himo", "loss": {**ONE_SECTION, "label_smoothing": 0.1}})
    assert himo.loss == MoLoConfig()


def test_a_key_of_another_method_s_loss_is_named_as_such():
    with pytest.raises(ConfigError, match=r"^loss.tau: expected a key of argent's loss .*of himo"):
        build_config({"method": "argent", "loss": {"tau": 0.8}})
    with pytest.raises(ConfigError, match=r"^loss.eta_inter: .* of hycoclip, argent$"):
        build_config({"method": "meru", "loss": {"eta_inter": 0.5}})


def test_file_then_overrides_win_over_method_defaults(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("method: himo\noptim:\n  lr: 2.0e-6\nloss:\n  tau: 0.8\n")
    config = load_config(path, ["loss.tau=0.85", "optim.betas=[0.8, 0.9]", "loss.fixed_m=3"])
    assert config.optim.lr == 2e-6 and config.loss.tau == 0.85
    assert config.optim.betas == (0.8, 0.9) and config.loss.fixed_m == 3
    assert config.optim.weight_decay == 0.01  # untouched method default


def test_round_trip_through_json(tmp_path):
    config = load_config({"method": "argent"}, ["loss.weights=none", "train.steps=7"])
    again = load_config(save_config(config, tmp_path / "c.json"))
    assert to_dict(again) == to_dict(config)


def test_override_creates_nested_keys_without_touching_input():
    raw = {"method": "clip"}
    out = apply_overrides(raw, ["train.batch_size=8"])
    assert out == {"method": "clip", "train": {"batch_size": 8}} and raw == {"method": "clip"}


@pytest.mark.parametrize(
    "raw, key",
    [
        ({"method": "simclr"}, "method"),
        ({}, "method"),
        ({"method": "himo", "loss": {"taux": 0.9}}, "loss.taux"),
        ({"method": "himo", "optimizer": {}}, "optimizer"),
        ({"method": "himo", "optim": {"lr": "fast"}}, "optim.lr"),
        ({"method": "himo", "train": {"steps": 1.5}}, "train.steps"),
        ({"method": "himo", "loss": {"detach": "yes"}}, "loss.detach"),
        ({"method": "argent", "loss": {"weights": "some"}}, "loss.weights"),
        ({"method": "himo", "optim": {"betas": [0.9]}}, "optim.betas"),
        ({"method": "himo", "loss": {"tau": 1.5}}, "loss.tau"),
        ({"method": "himo", "data": {"dataset": "sharegpt4v"}}, "data.root"),
        (
            {"method": "himo", "data": {"dataset": "webdataset", "root": "/no/such/dir"}},
            "data.root",
        ),
        ({"method": "himo", "model": {"name": "ViT-Q-99"}}, "model.name"),
        ({"method": "himo", "model": {"init": "/no/such/ckpt.pt"}}, "model.init"),
        ({"method": "himo", "model": {"context_length": 100}}, "model.context_length"),
        ({"method": "argent", "model": {"context_length": 248}}, "model.context_length"),
        ({"method": "clip", "train": {"batch_size": 10, "accum_steps": 3}}, "train.accum_steps"),
        ({"method": "clip", "train": {"device": "tpu"}}, "train.device"),
        ({"method": "clip", "loss": "none"}, "loss"),
        ({"method": "argent", "data": {"dataset": "sharegpt4v", "root": "."}}, "data.dataset"),
    ],
)
def test_bad_configs_name_the_key(raw, key):
    with pytest.raises(ConfigError) as err:
        build_config(raw)
    assert str(err.value).startswith(f"{key}:") or str(err.value).startswith(f"{key}[")


def test_bad_override_syntax():
    with pytest.raises(ConfigError, match="key=value"):
        load_config({"method": "clip"}, ["optim.lr"])


def test_cli_rejects_bad_config_before_training(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    out_dir = tmp_path / "run"
    path.write_text(f"method: himo\ntrain:\n  output_dir: {out_dir}\n  stepz: 3\n")
    assert train_main([str(path)]) == 2
    assert "train.stepz" in capsys.readouterr().err
    assert not out_dir.exists()  # nothing was built or written
    assert train_main([str(path), "train.stepz=1", "data.dataset=sharegpt4v"]) == 2


@pytest.mark.parametrize(
    "override, key",
    [
        ("optim.lr=.nan", "optim.lr"),
        ("optim.lr=.inf", "optim.lr"),
        ("optim.eps=-1", "optim.eps"),
        ("optim.lr=0", "optim.lr"),
        ("loss.adaent_beta=.nan", "loss.adaent_beta"),
        ("loss.lam=.nan", "loss.lam"),
        ("optim.betas=[0.9, .nan]", "optim.betas"),
    ],
)
def test_non_finite_and_non_positive_numbers_are_named(override, key):
    from paperlib.engine.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=rf"^{key.replace('.', '[.]')}: expected"):
        load_config({"method": "himo", "model": {"name": "paper-tiny"}}, [override])
