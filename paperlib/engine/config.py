"""Validated training configs: dataclasses built from YAML/JSON files and ``key=value`` overrides.

A config has a ``method`` and five sections (``model``, ``data``, ``loss``, ``optim``,
``train``). The ``loss`` section is the method's own config dataclass (its entry of
``engine.registry.METHOD_REGISTRY``, e.g. :class:`~paperlib.losses.himo.MoLoConfig`, whose
defaults are the paper's); ``data.dataset`` names an entry of
``engine.registry.DATASET_REGISTRY``. Values are merged in this order: dataclass defaults, the
method's paper settings of the other sections (:data:`METHOD_DEFAULTS`;
``docs/methods/himo-clip.md#himo-training``, ``docs/methods/argent.md#meru``), the file, then
dotted overrides such as ``optim.lr=1e-5`` (values parsed as YAML). Every problem (unknown
method, unknown key, wrong type, bad choice, missing data root) raises :class:`ConfigError`
naming the dotted key, before anything is built.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import textwrap
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import open_clip

import paperlib.models.clip  # noqa: F401  (registers paperlib's small model configs)
from paperlib.atomic import atomic_write_text
from paperlib.engine.benchmarks import REAL_BENCHMARKS, canonical_benchmark, check_root
from paperlib.engine.registry import DATASET_REGISTRY, METHOD_REGISTRY
from paperlib.engine.reporting import check_report_to
from paperlib.geometry.lorentz import MAX_SINH_ARG
from paperlib.models import LOGIT_SCALE_MAX
from paperlib.models.batchnorm import BatchNormMode
from paperlib.models.meru_checkpoint import HYCOCLIP_MODEL_NAMES
from paperlib.untrusted import YamlError, brief, load_yaml, unique_keys

# the scalars a hyperbolic checkpoint holds beside its encoders (``model.init_scalars``)
INIT_SCALARS = ("curvature", "alpha", "logit_scale")


class ConfigError(ValueError):
    """A config problem; the message starts with the dotted key at fault."""


@dataclass
class ModelConfig:
    """The network. ``init``: ``random``, an open_clip pretrained tag, or a local checkpoint."""

    name: str = "paper-tiny"
    init: str = "random"
    context_length: int = 77
    long_text: Literal["stretch", "residual"] = "residual"
    keep: int = 20
    logit_scale_init: float | None = None  # HiMo, Long-CLIP reset it to ln 100; None keeps it
    curv_init: float = 1.0  # hyperbolic methods (docs/methods/argent.md#meru)
    learn_curv: bool = True
    # hyperbolic methods: α init = log(embed_dim^-½) (MERU's rule, "embed-dim"), log(512^-½)
    # whatever the width ("fixed-512"), or, at step 0, log(alpha_norm / mean‖f‖) of the first
    # training batch's unnormalised features, per tower ("feature-norm": for a Euclidean base
    # whose features are far longer than MERU's rule assumes; docs/methods/argent.md)
    alpha_rule: Literal["embed-dim", "fixed-512", "feature-norm"] = "embed-dim"
    alpha_norm: float = 1.0
    # hyperbolic methods from a hyperbolic checkpoint: which of its scalars the run starts from
    # (the rest start as a from-scratch run's: curv_init, the α rule, MERU's logit scale); all
    # by default, as a fine-tune continues its base. A run at another fixed curvature takes
    # the encoders alone (docs/methods/argent.md#starting-from-a-hyperbolic-base)
    init_scalars: tuple[str, ...] = INIT_SCALARS
    # BatchNorm's running statistics while training: "train" updates them (PyTorch's default);
    # "frozen" keeps model.init's in eval mode, the affine weights still trained, so a fine-tune
    # whose batches mix images and box crops keeps the base's statistics
    # (models.batchnorm, docs/methods/argent.md#box-crop-norms)
    batchnorm: BatchNormMode = "train"
    # recompute each transformer block's activations in the backward pass (open_clip's
    # set_grad_checkpointing): less memory, the same gradients, about a third more compute
    grad_checkpointing: bool = False


@dataclass
class DataConfig:
    """Training data: ``dataset`` names an entry of ``engine.registry.DATASET_REGISTRY`` (``world``:
    the generated world; ``synthetic``: random tensors, for dry runs; ``sharegpt4v``;
    ``webdataset``: shards in HyCoCLIP's GRIT layout or open_clip's, ``data.root`` a folder of
    ``*.tar`` or a shard list as webdataset spells it)."""

    dataset: str = "world"
    root: str | None = None
    size: int = 512  # samples of the world / synthetic set (ignored for real data)
    image_size: int = 32  # world rendering size
    seed: int = 0
    caption: Literal["caption", "short_caption"] = "caption"
    # Long-CLIP's short text: "first-sentence" of the long caption (both papers train on
    # ShareGPT4V, which has no short captions; the reference's loader), or the dataset's own
    # "short_caption" where it has one ("dataset"; the world's short captions are then training
    # text, not only a test set; docs/methods/himo-clip.md#long-clip-short-text)
    short_text: Literal["first-sentence", "dataset"] = "first-sentence"
    num_workers: int = 0
    # world only: every sample shares its batch with its counterfactual twin (another main shape)
    twins: bool = False
    # real images (sharegpt4v, webdataset; the world and synthetic data ignore it):
    # "random-resized-crop" trains on RandomResizedCrop(size, scale=crop_scale) views (HyCoCLIP:
    # scale (0.5, 1)); "none" on the evaluation transform (Long-CLIP's and HiMo's fine-tuning)
    augment: Literal["none", "random-resized-crop"] = "none"
    crop_scale: tuple[float, float] = (0.5, 1.0)
    # webdataset (GRIT) boxes: "per-visit" draws a new box of a sample each pass over the
    # shards (HyCoCLIP), "fixed" the same box every pass; both seeded by (data.seed, sample id)
    box_draw: Literal["per-visit", "fixed"] = "per-visit"
    # world only: a folder for the rendered training world (``data.world_cache``), shared by
    # every run that trains on the same world; None renders each sample when it is drawn
    cache_dir: str | None = None
    # webdataset: each pass permutes the shard list (seeded by train.seed and the pass) and
    # serves records through a shuffle buffer of this many records (HyCoCLIP: 4000; <= 1
    # reads in order)
    shard_shuffle: bool = True
    shuffle_buffer: int = 4000
    # sharegpt4v: the caption JSON under data.root (None: the folder's only *.json file)
    json_file: str | None = None
    # sharegpt4v: the first entries of the JSON held out for validation (Long-CLIP's and HiMo's
    # 1,000), never trained on; 0 trains on every entry
    held_out: int = 1000


@dataclass
class OptimConfig:
    """AdamW with linear warm-up then cosine decay to ``min_lr_ratio · lr``."""

    lr: float = 5e-4
    weight_decay: float = 0.2
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-8
    warmup_steps: int = 0
    min_lr_ratio: float = 0.0
    max_grad_norm: float | None = None
    decay_logit_scale: bool = False  # HiMo's, Long-CLIP's references decay logit_scale
    # Euclidean methods: weight decay on gains and biases too (HiMo's reference optimiser)
    decay_all: bool = False
    # Euclidean methods: clamp logit_scale to [0, ln 100] after each step (open_clip); HiMo's
    # reference resets it to ln 100 and leaves it free
    clamp_logit_scale: bool = True


@dataclass
class TrainConfig:
    """The loop. ``batch_size`` is global (all ranks, all accumulation steps together)."""

    steps: int = 100
    batch_size: int = 32
    accum_steps: int = 1
    # bf16 autocast (H100/A100), fp16 autocast with a GradScaler (MERU's and HyCoCLIP's
    # references, any CUDA GPU), fp32; "auto" is bf16 on CUDA and fp32 on CPU
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    device: str = "auto"
    seed: int = 0
    log_every: int = 10
    diag_every: int = 50
    ckpt_every: int = 100
    keep_checkpoints: bool = False  # also keep each periodic checkpoint as step<N>.pt
    output_dir: str = "runs/default"
    resume: bool = True
    progress: bool = True
    find_unused_parameters: bool = False
    # held-out validation (``engine.validation``): every ``val_every`` steps (0: never) on
    # ``val_size`` samples: of the validation world (logging ``val_metrics``), of ShareGPT4V's
    # held-out entries, and of ``val_benchmark``
    val_every: int = 0
    val_size: int = 500
    val_metrics: tuple[str, ...] = ("short_i2t_r1",)
    # held-out validation on real data (engine.validation): a benchmark of
    # engine.benchmarks.BENCHMARK_REGISTRY (retrieval or zero-shot) read from val_root, its
    # first val_size samples; a ShareGPT4V run also validates on its held-out entries
    val_benchmark: str | None = None
    val_root: str | None = None
    # live views of the run beside log.jsonl (engine.reporting): "tensorboard", "wandb"
    report_to: tuple[str, ...] = ()


@dataclass
class Config:
    """A whole run: ``method`` plus its sections."""

    method: str
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    loss: Any = None  # the method's loss config dataclass; None: its defaults
    optim: OptimConfig = field(default_factory=OptimConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        if self.loss is None:
            self.loss = METHOD_REGISTRY[self.method].config()

    @property
    def hyperbolic(self) -> bool:
        return METHOD_REGISTRY[self.method].hyperbolic


#: the sections of every config; ``loss`` is built as the method's own dataclass
SECTIONS: dict[str, type | None] = {
    "model": ModelConfig,
    "data": DataConfig,
    "loss": None,
    "optim": OptimConfig,
    "train": TrainConfig,
}
#: the loss keys of configs saved when ``loss`` was one section for every method (training
#: checkpoints and config.json files of that time hold them all); such a section is read as
#: the keys of its method's loss config
ONE_LOSS_SECTION_KEYS = (
    "label_smoothing", "tau", "lam", "scope", "detach", "renormalize", "fixed_m", "pcm_dim",
    "short_weight", "entail_weight", "eta_inter", "eta_intra", "gamma1", "gamma2", "weights",
    "regularize", "entailment", "adaent_beta", "adaent_placement", "adaent_normalize",
    "detach_weight",
)  # fmt: skip

_MERU_OPTIM = {"lr": 5e-4, "weight_decay": 0.2, "betas": (0.9, 0.98), "warmup_steps": 4000}

# Long-CLIP's and HiMo's fine-tuning of a converged CLIP on long captions
# (docs/methods/himo-clip.md#himo-training)
_LONG_TEXT_MODEL = {
    "context_length": 248,
    "long_text": "residual",
    "logit_scale_init": LOGIT_SCALE_MAX,
}
_LONG_TEXT_OPTIM = {
    "lr": 1e-6,
    "weight_decay": 0.01,
    "betas": (0.9, 0.999),
    "warmup_steps": 200,
    "decay_logit_scale": True,
}

# the papers' settings of the model and optimiser sections, by method (a method without an
# entry keeps the dataclass defaults); each loss config dataclass holds its paper's values
METHOD_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    # Global InfoNCE only, open_clip/MERU's CLIP baseline optimiser.
    "clip": {"optim": dict(_MERU_OPTIM)},
    # Long-CLIP: 248-token residual positions and Long-CLIP's training script: logit scale
    # reset to ln 100, AdamW decaying it too (loss: losses.longclip.LongCLIPConfig).
    "longclip": {"model": dict(_LONG_TEXT_MODEL), "optim": dict(_LONG_TEXT_OPTIM)},
    # HiMo-CLIP (docs/methods/himo-clip.md#himo-training).
    "himo": {"model": dict(_LONG_TEXT_MODEL), "optim": dict(_LONG_TEXT_OPTIM)},
    # MERU (docs/methods/argent.md#meru); HyCoCLIP and ARGENT inherit MERU's optimiser.
    "meru": {"optim": dict(_MERU_OPTIM)},
    "hycoclip": {"optim": dict(_MERU_OPTIM)},
    "argent": {"optim": dict(_MERU_OPTIM)},
}


# --------------------------------------------------------------------------- raw dicts


def read_file(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON config file into a dict (errors name the file; YAML aliases are
    capped, ``paperlib.untrusted.load_yaml``)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {err.start}: {err.reason}); expected a YAML or "
            "JSON config"
        ) from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read ({err.strerror})") from None
    try:
        if path.suffix == ".json":
            raw = json.loads(text, object_pairs_hook=unique_keys(str(path)))
        else:
            raw = load_yaml(text, str(path)) or {}
    except YamlError as err:
        raise ConfigError(str(err)) from None
    except (json.JSONDecodeError, RecursionError) as err:
        raise ConfigError(f"{path}: not valid JSON ({str(err)[:200]})") from None
    except ValueError as err:  # a repeated key, named by unique_keys
        raise ConfigError(str(err)) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
    return raw


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Return a copy of ``raw`` with ``section.key=value`` overrides (value parsed as YAML)."""
    out = copy.deepcopy(raw)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"override {brief(item)}: expected key=value, e.g. optim.lr=1e-5")
        try:
            value = load_yaml(text, f"{key}: the value {brief(text, 60)}") if text else None
        except YamlError as err:
            raise ConfigError(str(err)) from None
        node = out
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"{key}: {part!r} is a value, not a section")
            node = child
        node[parts[-1]] = value
    return out


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, merging nested dicts."""
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


# --------------------------------------------------------------------------- type checks


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _coerce(value: Any, hint: Any, key: str) -> Any:
    """Check ``value`` against the type ``hint``; ints pass as floats, lists as tuples."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(value, option, key)
            except ConfigError:
                pass
        raise ConfigError(f"{key}: expected {_type_name(hint)}, got {brief(value)}")
    if origin is Literal:
        choices = typing.get_args(hint)
        if value not in choices:
            raise ConfigError(f"{key}: expected one of {list(choices)}, got {brief(value)}")
        return value
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]: any length
            if not isinstance(value, (list, tuple)):
                raise ConfigError(f"{key}: expected a list, got {value!r}")
            args = (args[0],) * len(value)
        if not isinstance(value, (list, tuple)) or len(value) != len(args):
            raise ConfigError(f"{key}: expected a list of {len(args)} values, got {brief(value)}")
        return tuple(_coerce(v, a, f"{key}[{i}]") for i, (v, a) in enumerate(zip(value, args)))
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {brief(value)}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected an integer, got {brief(value)}")
        return value
    if hint is float:
        if isinstance(value, str):  # PyYAML reads 1e-5 (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {brief(value)}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {brief(value)}")
        return value
    raise TypeError(f"{key}: unsupported config type {hint}")  # a bug in this module


def _build_section(cls: type, raw: Any, section: str) -> Any:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{section}: expected a mapping of keys, got {brief(raw)}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(raw) - set(names))
    if unknown:
        raise ConfigError(
            f"{section}.{unknown[0]}: unknown key; {section} accepts {', '.join(names)}"
        )
    values = {k: _coerce(v, hints[k], f"{section}.{k}") for k, v in raw.items()}
    try:
        return cls(**values)
    except ValueError as err:  # a loss config's own check; its message starts with the field
        raise ConfigError(f"{section}.{err}") from err


def _loss_section(method: str, raw: Any) -> Any:
    """The raw ``loss`` section of ``method``: a key of another method's loss config is named
    as such; a section in the one-section layout (:data:`ONE_LOSS_SECTION_KEYS`) is read as
    its method's keys."""
    if not isinstance(raw, dict):
        return raw
    fields = [f.name for f in dataclasses.fields(METHOD_REGISTRY[method].config)]
    if set(ONE_LOSS_SECTION_KEYS) <= set(raw):
        return {k: v for k, v in raw.items() if k in fields}
    for key in sorted(set(raw) - set(fields)):
        owners = [
            name
            for name, other in METHOD_REGISTRY.items()
            if key in {f.name for f in dataclasses.fields(other.config)}
        ]
        if owners:
            raise ConfigError(
                f"loss.{key}: expected a key of {method}'s loss ({', '.join(fields)}); "
                f"{key} is an option of {', '.join(owners)}"
            )
    return raw


# --------------------------------------------------------------------------- semantics


def _check_positive(value: float | int, key: str, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise ConfigError(f"{key}: expected {'>= 0' if allow_zero else '> 0'}, got {value}")


SEED_RANGE = (0, 2**32 - 1)  # what numpy's and torch's generators all accept
# upper bounds of the sizes a config asks for, each far above any run of the study or papers
MAX_GENERATED_SIZE = 10_000_000  # data.size of a generated set: its sampler permutes them all
MAX_VAL_SIZE = 20_000  # train.val_size: held in memory, scored against each other (n² pairs)
MAX_SHUFFLE_BUFFER = 1_000_000  # data.shuffle_buffer: decoded records held per reader
# a contrastive loss needs a gap between its logits to learn from; below this widest reachable
# gap (in nats) the softmax stays within 10 % of uniform, whatever the weights
MIN_LOGIT_GAP = 0.1
MIN_CURVATURE = 1e-30  # float32 keeps c, √c and 1/c finite and normal above it


def _check_range(value: float | int, key: str, low: float, high: float) -> None:
    if not low <= value <= high:
        raise ConfigError(f"{key}: expected {low}..{high}, got {value}")


def check_finite_numbers(config: Config) -> None:
    """Every number of every section is finite (NaN or inf would only fail deep inside AdamW
    or a loss); raises ConfigError naming the key."""
    for section in SECTIONS:
        for key, value in vars(getattr(config, section)).items():
            values = value if isinstance(value, (tuple, list)) else (value,)
            if any(isinstance(v, float) and not math.isfinite(v) for v in values):
                raise ConfigError(f"{section}.{key}: expected a finite number, got {value}")


def validate(config: Config) -> Config:
    """Semantic checks that need more than a type; raises ConfigError naming the key."""
    check_finite_numbers(config)
    _validate_model(config)
    _validate_data(config)
    _validate_optim(config)
    _validate_train(config.train)
    _check_validation(config)
    _check_inputs_outside_output(config)
    d, t = config.data, config.train
    if DATASET_REGISTRY[d.dataset].generated and d.size < t.batch_size:
        raise ConfigError(
            f"data.size={d.size} is smaller than train.batch_size={t.batch_size} "
            f"(a {d.dataset} set must hold at least one batch)"
        )
    return config


def _validate_model(config: Config) -> None:
    m = config.model
    if m.context_length not in (77, 248):
        raise ConfigError(f"model.context_length: expected 77 or 248, got {m.context_length}")
    if m.name not in open_clip.list_models() and m.name not in HYCOCLIP_MODEL_NAMES:
        raise ConfigError(
            f"model.name: unknown architecture {brief(m.name)}; expected an open_clip model name "
            f"(e.g. ViT-B-16, ViT-L-14, paper-tiny) or one of {sorted(HYCOCLIP_MODEL_NAMES)}"
        )
    if m.name in HYCOCLIP_MODEL_NAMES and not config.hyperbolic:
        raise ConfigError(
            f"model.name: {m.name!r} is HyCoCLIP's tower pair; it trains with the "
            "hyperbolic methods (meru, hycoclip, argent)"
        )
    looks_like_path = "/" in m.init or Path(m.init).suffix in {".pt", ".pth", ".bin", ".ckpt"}
    if looks_like_path and not Path(m.init).is_file():
        raise ConfigError(f"model.init: checkpoint file not found: {m.init}")
    if config.hyperbolic and m.context_length != 77:
        raise ConfigError(
            "model.context_length: the hyperbolic methods use 77 tokens "
            "(docs/methods/argent.md#argent-training)"
        )
    _check_positive(m.curv_init, "model.curv_init")
    if config.hyperbolic:
        _check_curvature(m)
    _check_positive(m.alpha_norm, "model.alpha_norm")
    unknown = sorted(set(m.init_scalars) - set(INIT_SCALARS))
    if unknown:
        raise ConfigError(
            f"model.init_scalars: unknown scalar(s) {unknown}; expected a subset of "
            f"{list(INIT_SCALARS)}"
        )
    if m.batchnorm == "frozen" and m.init == "random":
        raise ConfigError(
            "model.batchnorm: frozen keeps a checkpoint's BatchNorm statistics; model.init is "
            "random, whose statistics were never trained (use batchnorm=train)"
        )
    _check_long_text(m)


def widest_logit_gap(curv: float) -> float:
    """The widest gap between two logits a hyperbolic model at curvature ``curv`` can reach:
    two points at opposite ends of the exp map's clamp (each ``asinh(2¹⁵)/√c`` from the
    origin), at the logit scale's cap of 100."""
    return 2.0 * MAX_SINH_ARG / math.sqrt(curv) * math.exp(LOGIT_SCALE_MAX)


def _check_curvature(m: ModelConfig) -> None:
    """Refuse a curvature a run cannot learn at: one float32 cannot hold (``c / 10`` below
    :data:`MIN_CURVATURE` when learned), or so large that even the lowest curvature the run
    may reach (``c / 10`` when learned, ``c`` when fixed) leaves every logit within
    :data:`MIN_LOGIT_GAP` of the others (the loss stays at ln B)."""
    lowest = m.curv_init / 10 if m.learn_curv else m.curv_init
    if lowest < MIN_CURVATURE:
        raise ConfigError(
            f"model.curv_init: {m.curv_init:g} lets the curvature reach {lowest:g}, below "
            f"{MIN_CURVATURE:g}, where float32 loses c, √c and 1/c; expected a larger curvature "
            "(MERU: 1.0)"
        )
    gap = widest_logit_gap(lowest)
    if gap < MIN_LOGIT_GAP:
        largest = (2.0 * MAX_SINH_ARG * math.exp(LOGIT_SCALE_MAX) / MIN_LOGIT_GAP) ** 2
        largest *= 10 if m.learn_curv else 1
        raise ConfigError(
            f"model.curv_init: at curvature {m.curv_init:g} no two logits can differ by more "
            f"than {gap:.3g} (points at the exp map's clamp, logit scale 100), so the logits "
            f"stay uniform and the loss at ln B: nothing to learn; expected at most "
            f"{largest:.3g} (MERU: 1.0)"
        )


def _check_long_text(m: ModelConfig) -> None:
    """Long-CLIP's stretch of 77 positions to 248 keeps the first ``keep`` rows and
    interpolates the rest 4×: 4·77 − 3·keep rows, so 248 tokens need ``keep`` = 20; the logit
    scale starts inside the range open_clip clamps it to, [0, ln 100]."""
    _check_range(m.keep, "model.keep", 1, 75)
    if m.context_length == 248 and 4 * 77 - 3 * m.keep != 248:
        raise ConfigError(
            f"model.keep: 248 text positions are 20 kept and 57 stretched 4x (4*77 - 3*keep "
            f"= 248); keep={m.keep} gives {4 * 77 - 3 * m.keep}"
        )
    if m.logit_scale_init is not None:
        _check_range(m.logit_scale_init, "model.logit_scale_init", 0.0, LOGIT_SCALE_MAX)


def _validate_data(config: Config) -> None:
    d = config.data
    if d.dataset not in DATASET_REGISTRY:
        raise ConfigError(
            f"data.dataset: unknown dataset {d.dataset!r}; expected one of {list(DATASET_REGISTRY)}"
        )
    dataset = DATASET_REGISTRY[d.dataset]
    if dataset.root:
        _check_root(d.dataset, d.root, dataset.locate)
    if METHOD_REGISTRY[config.method].boxes and not dataset.boxes:
        with_boxes = [name for name, entry in DATASET_REGISTRY.items() if entry.boxes]
        raise ConfigError(
            f"data.dataset: {config.method} needs box crops and phrases ({', '.join(with_boxes)}"
            f"; webdataset: GRIT-layout shards); {d.dataset} has none"
        )
    _check_positive(d.size, "data.size")
    if dataset.generated:
        _check_range(d.size, "data.size", 1, MAX_GENERATED_SIZE)
    _check_range(d.shuffle_buffer, "data.shuffle_buffer", 0, MAX_SHUFFLE_BUFFER)
    _check_range(d.seed, "data.seed", *SEED_RANGE)
    if d.twins and d.dataset != "world":
        raise ConfigError(f"data.twins: only the world has counterfactual twins, not {d.dataset!r}")
    if not 32 <= d.image_size <= 224:
        raise ConfigError(f"data.image_size: expected 32..224, got {d.image_size}")
    _check_positive(d.num_workers, "data.num_workers", allow_zero=True)
    _check_positive(d.held_out, "data.held_out", allow_zero=True)
    low, high = d.crop_scale
    if not 0.0 < low <= high <= 1.0:
        raise ConfigError(
            f"data.crop_scale: expected 0 < low <= high <= 1, got {list(d.crop_scale)}"
        )


def _check_root(dataset: str, root: str | None, locate: Any) -> None:
    """``data.root`` is given and found: a path that exists, or what the dataset's ``locate``
    accepts (a webdataset shard list); ConfigError naming what is missing."""
    if not root:
        raise ConfigError(f"data.root: required for data.dataset={dataset!r} (a local path)")
    if locate is None:
        if not Path(root).exists():
            raise ConfigError(f"data.root: path does not exist: {root}")
        return
    try:
        locate(root)
    except (FileNotFoundError, ValueError) as error:
        raise ConfigError(f"data.root: {error}") from None


def _check_validation(config: Config) -> None:
    """``train.val_every`` has something to validate on: the world's validation world,
    ShareGPT4V's held-out entries (``data.held_out`` > 0) or ``train.val_benchmark`` read from
    ``train.val_root`` (its layout checked); a benchmark without ``val_every`` is refused too."""
    t, d = config.train, config.data
    if t.val_benchmark is not None:
        if t.val_every == 0:
            raise ConfigError(
                f"train.val_benchmark: {t.val_benchmark} is validated every train.val_every "
                "steps; set train.val_every (e.g. 500)"
            )
        _check_val_benchmark(t.val_benchmark, t.val_root)
        return
    if t.val_root is not None:
        raise ConfigError("train.val_root: set train.val_benchmark, the benchmark it holds")
    own = DATASET_REGISTRY[d.dataset].validation and (d.dataset != "sharegpt4v" or d.held_out)
    if t.val_every and not own:
        raise ConfigError(
            f"train.val_every: data.dataset={d.dataset!r} has no held-out set here; set "
            "train.val_benchmark and train.val_root (a retrieval or zero-shot benchmark, e.g. "
            "coco, flickr30k, imagenet), or train.val_every=0"
        )


def _check_val_benchmark(name: str, root: str | None) -> None:
    """A real benchmark (its name or CLIP_benchmark's) whose root holds its layout."""
    if canonical_benchmark(name) not in REAL_BENCHMARKS:
        raise ConfigError(
            f"train.val_benchmark: expected one of {list(REAL_BENCHMARKS)} (or CLIP_benchmark's "
            f"name of one), got {brief(name)}"
        )
    try:
        check_root(canonical_benchmark(name), root)
    except FileNotFoundError as error:
        raise ConfigError(f"train.val_root: {error}") from None


def _validate_optim(config: Config) -> None:
    o = config.optim
    _check_positive(o.eps, "optim.eps")
    _check_positive(o.lr, "optim.lr")
    if config.hyperbolic and (o.decay_all or o.decay_logit_scale or not o.clamp_logit_scale):
        raise ConfigError(
            "optim.decay_all / decay_logit_scale / clamp_logit_scale: Euclidean "
            "methods only (the hyperbolic methods keep MERU's groups and clamps)"
        )
    _check_positive(o.weight_decay, "optim.weight_decay", allow_zero=True)
    for i, beta in enumerate(o.betas):
        if not 0.0 <= beta < 1.0:
            raise ConfigError(f"optim.betas[{i}]: expected [0, 1), got {beta}")
    _check_positive(o.warmup_steps, "optim.warmup_steps", allow_zero=True)
    if not 0.0 <= o.min_lr_ratio <= 1.0:
        raise ConfigError(f"optim.min_lr_ratio: expected [0, 1], got {o.min_lr_ratio}")
    if o.max_grad_norm is not None:
        _check_positive(o.max_grad_norm, "optim.max_grad_norm")


def _check_inputs_outside_output(config: Config) -> None:
    """No input of training is ``train.output_dir`` or a file in it (training replaces its
    checkpoints and log there): ``model.init``, ``data.root``, ``data.cache_dir``."""
    out = Path(config.train.output_dir).resolve()
    inputs = {
        "model.init": config.model.init if Path(config.model.init).is_file() else None,
        "data.root": config.data.root,
        "data.cache_dir": config.data.cache_dir,
    }
    for key, value in inputs.items():
        if value and (out == (path := Path(value).resolve()) or out == path.parent):
            raise ConfigError(
                f"{key}: {brief(value)} is train.output_dir or lies in it, which training "
                "writes into; choose another train.output_dir"
            )


def _validate_train(t: TrainConfig) -> None:
    # steps = 0 writes the initial weights as last.pt (an untrained start, to evaluate)
    _check_positive(t.steps, "train.steps", allow_zero=True)
    _check_positive(t.val_every, "train.val_every", allow_zero=True)
    for key in ("batch_size", "accum_steps", "log_every", "diag_every", "ckpt_every", "val_size"):
        _check_positive(getattr(t, key), f"train.{key}")
    _check_range(t.seed, "train.seed", *SEED_RANGE)
    if t.batch_size < 2:
        raise ConfigError(
            f"train.batch_size: expected at least 2, got {t.batch_size} (every loss contrasts "
            "a pair with the batch's other pairs: over one pair it is constant, nothing to learn)"
        )
    _check_range(t.val_size, "train.val_size", 1, MAX_VAL_SIZE)
    if t.batch_size % t.accum_steps:
        raise ConfigError(
            f"train.accum_steps: {t.accum_steps} does not divide train.batch_size={t.batch_size}"
        )
    if t.device != "auto" and t.device.split(":")[0] not in ("cpu", "cuda"):
        raise ConfigError(
            f"train.device: expected auto, cpu, cuda or cuda:N, got {brief(t.device)}"
        )
    try:
        check_report_to(t.report_to)
    except ValueError as error:
        raise ConfigError(str(error)) from error


# --------------------------------------------------------------------------- public API


def build_config(raw: dict[str, Any]) -> Config:
    """A validated :class:`Config` from a raw dict (method defaults applied underneath)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"config: expected a mapping, got {type(raw).__name__}")
    method = raw.get("method")
    methods = list(METHOD_REGISTRY)
    if method is None:
        raise ConfigError(f"method: missing; expected one of {methods}")
    if method not in METHOD_REGISTRY:
        raise ConfigError(f"method: unknown method {brief(method)}; expected one of {methods}")
    unknown = sorted(set(raw) - {"method", *SECTIONS})
    if unknown:
        raise ConfigError(
            f"{unknown[0]}: unknown key; a config has method and sections {', '.join(SECTIONS)}"
        )
    top = {k: v for k, v in raw.items() if k != "method"}
    merged = deep_merge(METHOD_DEFAULTS.get(method, {}), top)
    sections = {
        name: _build_section(
            cls or METHOD_REGISTRY[method].config,
            _loss_section(method, merged.get(name)) if cls is None else merged.get(name),
            name,
        )
        for name, cls in SECTIONS.items()
    }
    return validate(Config(method=method, **sections))


def load_config(
    source: str | Path | dict[str, Any], overrides: list[str] | tuple[str, ...] = ()
) -> Config:
    """Load a YAML/JSON file (or a dict) and apply ``key=value`` overrides; validated."""
    raw = dict(source) if isinstance(source, dict) else read_file(source)
    return build_config(apply_overrides(raw, list(overrides)))


def _default_text(value: Any) -> str:
    return json.dumps(list(value) if isinstance(value, tuple) else value)


def config_keys() -> str:
    """Every key a config accepts, one section a paragraph (``key=default``), the ``loss``
    section per method: the key listing of ``python -m paperlib.train --help``."""
    sections = [("method", [f"one of {', '.join(METHOD_REGISTRY)}"])]
    for name, cls in SECTIONS.items():
        owners = [(f"loss ({m})", e.config) for m, e in METHOD_REGISTRY.items()]
        for title, kind in owners if cls is None else [(name, cls)]:
            defaults = kind()
            pairs = [
                f"{f.name}={_default_text(getattr(defaults, f.name))}"
                for f in dataclasses.fields(kind)
            ]
            sections.append((title, pairs))
    return "\n".join(
        textwrap.fill(", ".join(pairs), 96, initial_indent=f"{title}: ", subsequent_indent="    ")
        for title, pairs in sections
    )


def to_dict(config: Config) -> dict[str, Any]:
    """Plain JSON-serialisable dict (tuples become lists); ``build_config`` inverts it."""
    return json.loads(json.dumps(dataclasses.asdict(config)))


def save_config(config: Config, path: str | Path) -> Path:
    """Write the resolved config as JSON (readable by :func:`load_config`)."""
    return atomic_write_text(path, json.dumps(to_dict(config), indent=2) + "\n")
