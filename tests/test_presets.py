"""Every parameter preset validates; every paper preset's architecture builds and trains a step.

Paper presets point at data and pretrained tags that do not exist here, so the dry run
replaces the data with ``synthetic`` tensors, the init with random weights, and runs one
step at batch 2 on CPU in float32. ViT-L presets (HiMo's ViT-L-14, 428M parameters; ARGENT-L
on HyCoCLIP's ViT-L/16 towers, 367M) only build with random weights and their optimiser (a CPU step at that size is too slow and
too large for CI); the ViT-B/S presets of the same methods take
their step, so every method's code path runs at paper architecture.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from paperlib.engine.config import ConfigError
from paperlib.notebooks import PARAMS_DIR, load_parameters
from paperlib.train import config_from

TRAIN_PRESETS = sorted(p for p in PARAMS_DIR.glob("train_*/*.yaml"))
EVAL_PRESETS = sorted(p for p in PARAMS_DIR.glob("eval_*/*.yaml"))
# config checks without the data: the world, large enough for any preset's batch
AS_WORLD = ["data.dataset=world", "data.size=2000000"]
DRY = [
    "data.dataset=synthetic",
    "data.size=2",
    "data.num_workers=0",
    "model.init=random",
    "train.batch_size=2",
    "train.steps=1",
    "train.precision=fp32",
    "train.device=cpu",
    "train.progress=false",
    "train.resume=false",
]


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def test_there_are_presets_for_both_papers():
    names = {_id(p) for p in TRAIN_PRESETS}
    assert {
        "train_himo/smoke-cpu",
        "train_himo/vit-l14-sharegpt4v-8xh100",
        "train_himo/vit-b16-sharegpt4v-8xh100",
        "train_argent/smoke-cpu",
        "train_argent/argent-s-grit",
        "train_argent/argent-b-grit",
        "train_argent/argent-l-grit",
        "train_argent/cc3m-ent",
        "train_argent/cc3m-noreg",
        "train_argent/cc3m-adaent-all",
        "train_argent/cc3m-adaent-noweights",
        "train_argent/cc3m-full",
    } <= names


@pytest.mark.parametrize("path", TRAIN_PRESETS, ids=_id)
def test_train_preset_validates(path, tmp_path):
    raw = load_parameters(path)
    assert set(raw) <= {"config", "overrides"}, "train notebooks take config and overrides"
    if raw["config"]["data"]["dataset"] in ("sharegpt4v", "webdataset"):
        with pytest.raises(ConfigError, match="^data.root"):  # the data is not here
            config_from(path)
        (tmp_path / "000000.tar").write_bytes(b"")  # a folder of shards, for the webdataset ones
        config = config_from(path, [f"data.root={tmp_path}"])
    else:
        config = config_from(path)
    if "smoke" not in path.stem:
        assert config.train.precision == "bf16" and config.train.batch_size >= 256


def test_paper_hyper_parameters():
    himo = config_from(PARAMS_DIR / "train_himo/vit-l14-sharegpt4v-8xh100.yaml", AS_WORLD)
    assert (himo.model.name, himo.model.init, himo.model.context_length) == (
        "ViT-L-14-quickgelu",
        "openai",
        248,
    )
    assert (himo.optim.lr, himo.optim.weight_decay, himo.optim.warmup_steps) == (1e-6, 0.01, 200)
    assert (himo.train.batch_size, himo.loss.tau, himo.loss.label_smoothing) == (1024, 0.9, 0.1)
    argent = config_from(PARAMS_DIR / "train_argent/argent-b-grit.yaml", AS_WORLD)
    assert (argent.model.name, argent.train.batch_size, argent.train.steps) == (
        "hycoclip-vit-b",
        768,
        500000,
    )
    assert argent.model.alpha_rule == "embed-dim"  # MERU's rule; 512 at every HyCoCLIP size
    assert (argent.data.augment, argent.data.crop_scale, argent.data.box_draw) == (
        "random-resized-crop",
        (0.5, 1.0),
        "per-visit",
    )  # HyCoCLIP's views and boxes
    assert (argent.loss.gamma1, argent.loss.gamma2, argent.loss.weights) == (0.1, 0.1, "intra")
    noreg = config_from(PARAMS_DIR / "train_argent/cc3m-noreg.yaml", AS_WORLD)
    assert noreg.loss.regularize is False and noreg.train.steps * noreg.train.batch_size >= 30e6
    ent = config_from(PARAMS_DIR / "train_argent/cc3m-ent.yaml", AS_WORLD)
    assert ent.loss.entailment == "ent"
    for batch in (256, 512):  # the batch-size ablation keeps the paper's 10 epochs
        ablation = config_from(PARAMS_DIR / f"train_himo/ablation-batch{batch}.yaml", AS_WORLD)
        assert ablation.train.batch_size == batch
        epochs = ablation.train.steps * batch / 1_245_901
        assert 10 <= epochs < 10 + batch / 1_245_901, (batch, epochs)


@pytest.mark.parametrize("path", EVAL_PRESETS, ids=_id)
def test_eval_preset_names_notebook_parameters(path):
    import jupytext

    nb = jupytext.read(PARAMS_DIR.parent / "notebooks" / f"{path.parent.name}.py")
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    declared = {line.split("=")[0].strip() for line in cell.source.splitlines() if "=" in line}
    assert set(load_parameters(path)) <= declared


def _architectures() -> list[Path]:
    """One paper preset per (method, architecture, context length)."""
    seen, out = set(), []
    main_first = sorted(
        TRAIN_PRESETS, key=lambda p: ("ablation" in p.stem or "cc3m" in p.stem, str(p))
    )
    for path in main_first:
        cfg = load_parameters(path)["config"]
        key = (cfg["method"], cfg["model"]["name"], cfg["model"].get("context_length", 77))
        if "smoke" not in path.stem and key not in seen:
            seen.add(key)
            out.append(path)
    return out


def _is_large(path: Path) -> bool:
    name = load_parameters(path)["config"]["model"]["name"]
    return "ViT-L" in name or name == "hycoclip-vit-l"


# parameters of the large towers: open_clip's ViT-L/14; HyCoCLIP's ViT-L/16 + L12 W512 text
# (367,254,020 in HyCoCLIP's own model) + open_clip's unused logit scale
LARGE_PARAMETERS = {"ViT-L-14-quickgelu": (4.2e8, 4.4e8), "hycoclip-vit-l": (367_254_021,) * 2}


def _dry(path: Path, tmp_path: Path):
    return config_from(
        path, [f"data.root={tmp_path}", *DRY, f"train.output_dir={tmp_path / 'run'}"]
    )


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in _architectures() if not _is_large(p)], ids=_id)
def test_paper_architecture_builds_and_takes_one_step(path, tmp_path):
    from paperlib.engine.loop import dry_run

    (values,) = dry_run(_dry(path, tmp_path))
    assert set(values) > {"total"} and all(math.isfinite(v) for v in values.values())


@pytest.mark.slow
@pytest.mark.parametrize("path", [p for p in _architectures() if _is_large(p)], ids=_id)
def test_large_paper_architecture_builds(path, tmp_path):
    from paperlib.engine.loop import build_optimizer
    from paperlib.engine.methods import build_module

    config = _dry(path, tmp_path)
    module, _, tokenizer = build_module(config)
    n_params = sum(p.numel() for p in module.parameters())
    low, high = LARGE_PARAMETERS[config.model.name]
    assert low <= n_params <= high
    optimizer, _ = build_optimizer(module, config)
    trained = sum(p.numel() for g in optimizer.param_groups for p in g["params"])
    assert trained == sum(p.numel() for p in module.parameters() if p.requires_grad)
    assert tokenizer(["a"]).shape[1] == config.model.context_length


def test_openai_initialised_presets_use_quickgelu_in_both_towers():
    import open_clip
    from open_clip.transformer import QuickGELU

    from paperlib.models.clip import create_model

    openai = [p for p in TRAIN_PRESETS if load_parameters(p)["config"]["model"]["init"] == "openai"]
    assert len(openai) >= 9  # every HiMo preset starts from OpenAI's CLIP (an ablation by its base)
    names = {config_from(p, AS_WORLD).model.name for p in openai}
    assert names == {"ViT-B-16-quickgelu", "ViT-L-14-quickgelu"}
    assert all(open_clip.get_model_config(n)["quick_gelu"] for n in names)
    model = create_model("ViT-B-16-quickgelu", None).model  # random weights, the B/16 towers
    for tower in (model.visual, model.transformer):
        assert any(isinstance(m, QuickGELU) for m in tower.modules())
    with pytest.raises(ValueError, match="use model 'ViT-B-16-quickgelu'"):
        create_model("ViT-B-16", "openai")  # refused before any download


PAPER_EVAL_PRESETS = [p for p in EVAL_PRESETS if p.stem != "smoke-cpu"]


@pytest.mark.parametrize("path", PAPER_EVAL_PRESETS, ids=_id)
def test_paper_eval_presets_cover_every_published_number(path):
    """Each paper preset names a root for every real benchmark it runs, and those benchmarks
    give every number of the published rows it compares with (none 'not in this run')."""
    from paperlib.data.classification import ZEROSHOT_SUITE
    from paperlib.engine.benchmarks import BENCHMARKS, REAL_BENCHMARKS, benchmark
    from paperlib.tables.beside_published import (
        PUBLISHED_METRICS,
        SUITE_AVERAGE,
        published_values,
    )

    params = load_parameters(path)
    benchmarks = params["benchmarks"]
    assert set(benchmarks) <= set(BENCHMARKS)
    real = [b for b in benchmarks if b in REAL_BENCHMARKS or b == "hierarcaps"]
    assert set(real) == set(params["roots"])
    written = set()
    for b in benchmarks:  # the datasets each benchmark writes (long sets add -monotonicity)
        written |= set(benchmark(b).tasks)
    if set(ZEROSHOT_SUITE) <= set(benchmarks):
        written.add(SUITE_AVERAGE)
    assert params["published"]
    for table, model, arch in params["published"]:
        for key, _ in published_values(table, model, arch):
            if key[-1] == "avg":
                continue
            target = PUBLISHED_METRICS[(table, key)]
            assert target is not None and target[0] in written, (table, key)
