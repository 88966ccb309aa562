"""The training loop: schedule, precision choice, logs (HiDe m, diagnostics), methods' terms."""

from __future__ import annotations

import json
import math

import pytest
import torch
from PIL import Image

from paperlib.engine.config import load_config
from paperlib.engine.data import build_dataset, build_loader
from paperlib.engine.loop import WarmupCosine, autocast_context, dry_run, train
from paperlib.engine.methods import build_module, input_size
from paperlib.models.hyperbolic import alpha_for_norm
from paperlib.train import main as train_main
from paperlib.train import read_log
from tests.engine_helpers import shards_config, tiny_config


def test_warmup_cosine_closed_form():
    sched = WarmupCosine(warmup=4, total=14, min_ratio=0.1)
    assert [sched(s) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    for s in range(4, 20):
        progress = min(1.0, (s - 4) / 10)
        assert sched(s) == pytest.approx(0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
    assert sched(14) == pytest.approx(0.1) and sched(9) == pytest.approx(0.55)


def test_precision_choice():
    assert isinstance(
        autocast_context("auto", torch.device("cpu")),
        type(autocast_context("fp32", torch.device("cpu"))),
    )
    ctx = autocast_context("bf16", torch.device("cpu"))
    with ctx:
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    with autocast_context("auto", torch.device("cpu")):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32


@pytest.mark.parametrize(
    "method, terms",
    [
        ("clip", {"contrastive"}),
        ("longclip", {"long", "short"}),
        ("himo", {"global", "comp", "hide_m", "hide_explained_variance"}),
        ("meru", {"contrastive", "entailment", "curv"}),
        ("hycoclip", {"contrastive", "entailment", "curv"}),
        ("argent", {"contrastive", "entailment", "regularizer", "curv"}),
    ],
)
def test_every_method_trains_and_logs_its_terms(tmp_path, method, terms):
    result = train(tiny_config(method, tmp_path, train={"steps": 2}))
    log = read_log(tmp_path)
    assert [r["step"] for r in log] == [1, 2] and log == result.history
    assert terms <= set(log[0]) and {"loss", "lr", "logit_scale"} <= set(log[0])
    has_diag = any(k.startswith("diag/") for k in log[1])  # diag_every=2
    assert has_diag == (method in ("meru", "hycoclip", "argent"))
    if method == "himo":
        assert log[0]["loss"] == pytest.approx(log[0]["global"] + log[0]["comp"], rel=1e-6)
        assert 1 <= log[0]["hide_m"] <= 16
    state = torch.load(tmp_path / "last.pt", weights_only=True)
    assert state["step"] == 2 and state["config"]["method"] == method


def test_diagnostics_run_every_diag_every_steps_not_only_on_logging_steps(tmp_path):
    """diag_every=2 with log_every=3: diagnostics at steps 2 and 4 (own records), losses at 3."""
    train(tiny_config("argent", tmp_path, train={"steps": 4, "log_every": 3, "diag_every": 2}))
    log = [r for r in read_log(tmp_path) if "status" not in r]
    with_diag = [r["step"] for r in log if "diag/aperture_radius" in r]
    with_loss = [r["step"] for r in log if "loss" in r]
    assert with_diag == [2, 4] and with_loss == [3, 4]


def test_lr_follows_the_schedule(tmp_path):
    result = train(
        tiny_config("clip", tmp_path, optim={"lr": 1e-3, "warmup_steps": 2}, train={"steps": 4})
    )
    sched = WarmupCosine(2, 4)
    assert [r["lr"] for r in result.history] == pytest.approx([1e-3 * sched(s) for s in range(4)])


def test_himo_logit_scale_reset_and_decayed(tmp_path):
    config = load_config(tiny_config("himo", tmp_path))
    assert config.model.logit_scale_init == pytest.approx(math.log(100))
    from paperlib.engine.loop import build_optimizer
    from paperlib.engine.methods import build_module

    module, _, _ = build_module(config)
    assert module.clip.logit_scale.item() == pytest.approx(math.log(100))
    optimizer, _ = build_optimizer(module, config)
    decayed = [p for g in optimizer.param_groups if g["weight_decay"] > 0 for p in g["params"]]
    assert any(p is module.clip.logit_scale for p in decayed)
    clip = load_config(tiny_config("clip", tmp_path))
    module, _, _ = build_module(clip)
    optimizer, _ = build_optimizer(module, clip)
    decayed = [p for g in optimizer.param_groups if g["weight_decay"] > 0 for p in g["params"]]
    assert not any(p is module.clip.logit_scale for p in decayed)


def test_reference_optimiser_options_decay_everything_and_free_the_logit_scale(tmp_path):
    from paperlib.engine.config import ConfigError
    from paperlib.engine.loop import apply_update, build_optimizer
    from paperlib.engine.methods import build_module

    default = load_config(tiny_config("himo", tmp_path))
    reference = load_config(
        tiny_config("himo", tmp_path, optim={"decay_all": True, "clamp_logit_scale": False})
    )
    for config, all_decayed, clamped in ((default, False, True), (reference, True, False)):
        module, _, _ = build_module(config)
        optimizer, scheduler = build_optimizer(module, config)
        decayed = {
            id(p) for g in optimizer.param_groups if g["weight_decay"] > 0 for p in g["params"]
        }
        biases = [p for n, p in module.clip.named_parameters() if p.ndim == 1 and "bias" in n]
        assert all(id(p) in decayed for p in biases) == all_decayed and biases
        with torch.no_grad():
            module.clip.logit_scale.fill_(5.0)  # above ln 100
        for p in module.parameters():
            p.grad = torch.zeros_like(p)
        apply_update(module, optimizer, scheduler, config)
        expected = math.log(100) if clamped else None
        value = module.clip.logit_scale.item()
        assert value == pytest.approx(expected) if clamped else value > math.log(100)
    with pytest.raises(ConfigError, match="Euclidean methods only"):
        load_config(tiny_config("argent", tmp_path, optim={"decay_all": True}))


def test_dry_run_writes_nothing(tmp_path):
    values = dry_run(load_config(tiny_config("argent", tmp_path / "never")))
    assert set(values[0]) == {"total", "contrastive", "entailment", "regularizer"}
    assert not (tmp_path / "never").exists()


def test_cli_trains_from_a_parameter_file(tmp_path, capsys):
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps(
            {"config": tiny_config("clip", tmp_path / "run"), "overrides": ["train.steps=1"]}
        )
    )
    assert train_main([str(path), "train.log_every=1"]) == 0
    assert "finished at step 1" in capsys.readouterr().out
    assert [r["step"] for r in read_log(tmp_path / "run")] == [1]


def test_trains_from_grit_layout_webdataset_shards(tmp_path):
    raw = shards_config("hycoclip", tmp_path, samples=24, maxcount=12, steps=3, batch_size=8)
    result = train(raw)  # 3 batches of 8 from 24 streamed samples, box crops from the shards
    assert result.step == 3 and all(math.isfinite(r["entailment"]) for r in result.history)


def test_init_from_a_training_checkpoint(tmp_path):
    from paperlib.engine.methods import build_module

    train(tiny_config("clip", tmp_path / "clip", train={"steps": 1}))
    train(tiny_config("meru", tmp_path / "meru", train={"steps": 1}))
    trained = torch.load(tmp_path / "clip" / "last.pt", weights_only=True)["model"]
    # clip -> himo at 248 tokens: encoders loaded, positions stretched (Long-CLIP) after loading
    himo = load_config(
        tiny_config(
            "himo",
            tmp_path / "h",
            model={"init": str(tmp_path / "clip" / "last.pt"), "context_length": 248},
        )
    )
    module, _, _ = build_module(himo)
    for key in ("visual.conv1.weight", "token_embedding.weight", "text_projection"):
        assert torch.equal(module.clip.state_dict()[key], trained[f"clip.{key}"])
    assert torch.equal(
        module.clip.positional_embedding[:20], trained["clip.positional_embedding"][:20]
    )
    # meru -> argent: encoders and the hyperbolic scalars
    meru = torch.load(tmp_path / "meru" / "last.pt", weights_only=True)["model"]
    argent = load_config(
        tiny_config("argent", tmp_path / "a", model={"init": str(tmp_path / "meru" / "last.pt")})
    )
    module, _, _ = build_module(argent)
    state = module.state_dict()
    for key in ("model.log_curv", "model.visual_alpha", "model.clip.visual.conv1.weight"):
        assert torch.equal(state[key], meru[key])


@pytest.mark.parametrize("steps", [0, 2])
def test_feature_norm_alpha_comes_from_the_first_training_batch(tmp_path, steps):
    raw = tiny_config(
        "argent",
        tmp_path / "run",
        model={"name": "paper-tiny-rn", "alpha_rule": "feature-norm", "alpha_norm": 0.7},
        train={"steps": steps},
    )
    train(raw)
    config = load_config(raw)
    torch.manual_seed(config.train.seed)
    module, preprocess, tokenizer = build_module(config)  # the same random start
    dataset = build_dataset(config.data, preprocess, image_size=input_size(module))
    one_step = load_config(raw, ["train.steps=1"])
    loader = build_loader(one_step, dataset, tokenizer, rank=0, world_size=1, start_step=0)
    batch = next(iter(loader))
    module.train()  # a random tower: α is read off the features its first step sees
    with torch.no_grad():
        image = module.clip.encode_image(batch["image"], normalize=False)
        text = module.clip.encode_text(batch["text"], normalize=False)
    scalars = torch.load(tmp_path / "run" / "last.pt", weights_only=True)["model"]
    alphas = {k.split(".")[-1]: v.item() for k, v in scalars.items() if k.endswith("_alpha")}
    if steps == 0:  # nothing trained: exactly the calibrated values
        assert alphas["visual_alpha"] == pytest.approx(alpha_for_norm(image, 0.7), abs=1e-5)
        assert alphas["textual_alpha"] == pytest.approx(alpha_for_norm(text, 0.7), abs=1e-5)
    else:  # two steps at lr 1e-3 move α by at most 2e-3
        assert alphas["visual_alpha"] == pytest.approx(alpha_for_norm(image, 0.7), abs=3e-3)
    assert alphas["visual_alpha"] != pytest.approx(math.log(512**-0.5), abs=0.1)


def test_a_streamed_batch_that_the_ranks_do_not_divide_is_refused(tmp_path):
    from paperlib.data.webdataset import ShardStream
    from paperlib.engine.data import per_rank_batch

    raw = shards_config("hycoclip", tmp_path, samples=12, maxcount=4, steps=1, batch_size=10)
    config = load_config(raw)
    stream = ShardStream(sorted(str(p) for p in (tmp_path / "shards").glob("*.tar")), None)
    with pytest.raises(
        ValueError, match="train.batch_size=10 must be divisible by the world size 4"
    ):
        build_loader(config, stream, lambda texts: texts, rank=0, world_size=4, start_step=0)
    assert per_rank_batch(12, 4) == 3  # what each rank reads when it divides


def test_a_grit_sample_without_a_box_is_refused_by_name():
    from paperlib.data.webdataset import image_bytes, record_to_sample
    from paperlib.engine.data import BoxItems, Collate

    record = {  # GRIT's layout with numparents.txt = 0
        "__key__": "grit-42",
        "child.png": image_bytes(Image.new("RGB", (8, 8))),
        "child.txt": b"a cat on a mat",
        "numparents.txt": b"0",
    }
    sample = record_to_sample(record)
    assert sample is not None and sample.boxes == []
    item = BoxItems(lambda image: image, seed=0)(sample, visit=0)
    assert "box_image" not in item  # a method without box terms trains on it
    with pytest.raises(ValueError, match="sample 'grit-42' has no box"):
        Collate(lambda texts: texts, boxes=True)([item])


def test_feature_norm_alpha_refuses_a_hyperbolic_checkpoints_alpha(tmp_path):
    train(tiny_config("meru", tmp_path / "meru", train={"steps": 1}))
    init = str(tmp_path / "meru" / "last.pt")
    config = load_config(tiny_config("argent", tmp_path / "a", model={"init": init}))
    build_module(config)  # MERU's rule: the checkpoint's α is kept
    refused = load_config(
        tiny_config("argent", tmp_path / "b", model={"init": init, "alpha_rule": "feature-norm"})
    )
    with pytest.raises(ValueError, match="model.alpha_rule: feature-norm would replace the α"):
        build_module(refused)
