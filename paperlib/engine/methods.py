"""The training methods: one registry entry each, naming its loss, that loss's config dataclass
and the training module (batch -> features (``forward``) -> loss terms (``compute_loss``)).

This module registers one :class:`~paperlib.engine.registry.Method` per method into
``engine.registry.METHOD_REGISTRY``; adding a method is adding one entry (docs/layout.md, "Adding a
loss, a dataset or a benchmark"). The training config's ``method`` names
the entry and its ``loss`` section is built as the entry's config dataclass.

- ``clip``: global InfoNCE (``losses.contrastive.infonce_loss``).
- ``longclip``: Long-CLIP's method (``losses.longclip.longclip_loss``) with its 248-token
  residual text positions: InfoNCE on long captions plus primary component matching (the
  image batch's first ``loss.pcm_dim`` principal components vs short captions), weighted by
  ``loss.short_weight``; logged as ``long`` and ``short``. ``short_weight=0`` is plain
  InfoNCE on long captions (short captions are then neither tokenised nor encoded).
- ``himo``: MoLo with HiDe (``losses.himo.molo_loss``, ``docs/methods/himo-clip.md#molo``).
- ``meru``, ``hycoclip``, ``argent``: the Lorentz model of ``models.hyperbolic`` and the
  losses of ``losses.entailment`` (``docs/methods/argent.md``).

The split of ``forward`` and ``compute_loss`` lets the loop run ``forward`` under
DDP/autocast and the loss in float32 on the (gathered) features, and lets gradient
accumulation cache features (see ``engine.loop``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from paperlib.engine.registry import METHOD_REGISTRY, Method, register
from paperlib.losses.batch import EuclideanBatch, HyperbolicBatch
from paperlib.losses.contrastive import InfoNCEConfig, infonce_loss
from paperlib.losses.entailment import (
    ARGENTConfig,
    HyCoCLIPConfig,
    LossTerms,
    MERUConfig,
    argent_loss,
    hycoclip_loss,
    meru_loss,
)
from paperlib.losses.himo import MoLoConfig, molo_loss
from paperlib.losses.longclip import LongCLIPConfig, longclip_loss
from paperlib.metrics.diagnostics import aperture_diagnostics
from paperlib.models import LOGIT_SCALE_MAX
from paperlib.models.batchnorm import BatchNormStatistics, batchnorm_layers
from paperlib.models.bounds import check_scalars
from paperlib.models.clip import create_model, encode_image, encode_text
from paperlib.models.hyperbolic import HyperbolicCLIP
from paperlib.models.meru_checkpoint import (
    HYCOCLIP_MODEL_NAMES,
    create_meru_encoders,
    meru_alpha_init,
)
from paperlib.state_files import load_tensor_file, nonfinite_entry

if TYPE_CHECKING:
    from paperlib.engine.config import Config, ModelConfig


@dataclass
class LossResult:
    """``total`` (the loss to minimise), its named ``terms`` and float ``stats`` (e.g. HiDe m)."""

    total: Tensor
    terms: dict[str, Tensor]
    stats: dict[str, float] = field(default_factory=dict)


def _decay_groups(
    named: list[tuple[str, nn.Parameter]], weight_decay: float, decay_names: tuple[str, ...] = ()
) -> list[dict]:
    """AdamW groups: weight decay on matrices (and ``decay_names``), none on gains and biases."""
    decay, no_decay = [], []
    for name, p in named:
        if not p.requires_grad:
            continue
        (decay if p.ndim >= 2 or name in decay_names else no_decay).append(p)
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]


class EuclideanModule(BatchNormStatistics):
    """An open_clip CLIP trained with a Euclidean method's loss (``clip``, ``longclip``,
    ``himo``: :data:`METHOD_REGISTRY`)."""

    geometry = "euclidean"

    def __init__(self, clip: nn.Module, method: str = "clip", loss: Any = None) -> None:
        super().__init__()
        self.clip, self.method = clip, method
        self.loss_cfg = method_spec(method).config() if loss is None else loss

    @property
    def logit_scale(self) -> nn.Parameter:
        return self.clip.logit_scale

    def forward(self, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        """{"image": (batch, dim), "text": (batch, dim)} and, when the batch has short captions
        (``longclip``), "short_text" (encoded with the long ones in one call); L2-normalised."""
        image = encode_image(self.clip, batch["image"])
        if "short_text" not in batch:
            return {"image": image, "text": encode_text(self.clip, batch["text"])}
        n = batch["text"].shape[0]
        texts = encode_text(self.clip, torch.cat([batch["text"], batch["short_text"]]))
        return {"image": image, "text": texts[:n], "short_text": texts[n:]}

    def embed_image(self, images: Tensor) -> Tensor:
        """(batch, 3, H, W) -> (batch, dim) L2-normalised (inference: plain cosine,
        ``docs/methods/himo-clip.md#inference``)."""
        return encode_image(self.clip, images)

    def embed_text(self, tokens: Tensor) -> Tensor:
        return encode_text(self.clip, tokens)

    def loss_batch(self, features: dict[str, Tensor]) -> EuclideanBatch:
        """The loss's view of this batch's features (:class:`~paperlib.losses.batch.EuclideanBatch`)."""
        return EuclideanBatch(
            features["image"], features["text"], self.clip.logit_scale, features.get("short_text")
        )

    def compute_loss(self, features: dict[str, Tensor]) -> LossResult:
        """The method's loss (its :data:`METHOD_REGISTRY` entry) on this batch's features."""
        return method_spec(self.method).loss(self.loss_batch(features), self.loss_cfg)

    def param_groups(
        self, weight_decay: float, decay_logit_scale: bool = False, decay_all: bool = False
    ) -> list[dict]:
        """Decay on matrices (and ``logit_scale`` if asked); ``decay_all``: on every parameter."""
        named = list(self.clip.named_parameters())
        if decay_all:
            names = tuple(name for name, _ in named)
        else:
            names = ("logit_scale",) if decay_logit_scale else ()
        return _decay_groups(named, weight_decay, names)

    @torch.no_grad()
    def after_step(self, clamp_logit_scale: bool = True) -> None:
        """Clamp ``logit_scale`` to [0, ln 100] as open_clip does (unless asked not to)."""
        if clamp_logit_scale:
            self.clip.logit_scale.clamp_(0, LOGIT_SCALE_MAX)

    def scalars(self) -> dict[str, float]:
        return {"logit_scale": self.clip.logit_scale.item()}

    def scalar_bounds(self, clamp_logit_scale: bool = True) -> dict[str, tuple[float, float]]:
        """The bounds :meth:`after_step` keeps each scalar in, by state-dict key (none but
        finiteness for a logit scale the run does not clamp)."""
        low, high = (0.0, LOGIT_SCALE_MAX) if clamp_logit_scale else (-math.inf, math.inf)
        return {"clip.logit_scale": (low, high)}

    def diagnostics(self, features: dict[str, Tensor]) -> dict[str, float]:
        return {}


class HyperbolicModule(BatchNormStatistics):
    """A :class:`~paperlib.models.hyperbolic.HyperbolicCLIP` trained with a hyperbolic method's
    loss (``meru``, ``hycoclip``, ``argent``). Methods with boxes (HyCoCLIP, ARGENT,
    ``docs/methods/argent.md#hycoclip``) add ``box_image`` and ``box_text`` to the batch;
    images and box crops go through the image encoder together (one call), as do the texts."""

    geometry = "hyperbolic"

    def __init__(self, model: HyperbolicCLIP, method: str = "meru", loss: Any = None) -> None:
        super().__init__()
        self.model, self.method = model, method
        self.loss_cfg = method_spec(method).config() if loss is None else loss
        self.boxes = method_spec(method).boxes

    @property
    def clip(self) -> nn.Module:
        return self.model.clip

    @property
    def logit_scale(self) -> nn.Parameter:
        return self.model.logit_scale

    def forward(self, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        """Lorentz space components (batch, dim): image, text (and box_image, box_text)."""
        if not self.boxes:
            return {
                "image": self.model.encode_image(batch["image"]),
                "text": self.model.encode_text(batch["text"]),
            }
        n = batch["image"].shape[0]
        images = self.model.encode_image(torch.cat([batch["image"], batch["box_image"]]))
        texts = self.model.encode_text(torch.cat([batch["text"], batch["box_text"]]))
        return {
            "image": images[:n],
            "text": texts[:n],
            "box_image": images[n:],
            "box_text": texts[n:],
        }

    def embed_image(self, images: Tensor) -> Tensor:
        """(batch, 3, H, W) -> (batch, dim) Lorentz space components."""
        return self.model.encode_image(images)

    def embed_text(self, tokens: Tensor) -> Tensor:
        return self.model.encode_text(tokens)

    def loss_batch(self, features: dict[str, Tensor]) -> HyperbolicBatch:
        """The loss's view of this batch's features (:class:`~paperlib.losses.batch.HyperbolicBatch`)."""
        return HyperbolicBatch(
            features["image"],
            features["text"],
            self.model.curv,
            self.model.logit_scale,
            features.get("box_image"),
            features.get("box_text"),
        )

    def compute_loss(self, features: dict[str, Tensor]) -> LossResult:
        """The method's loss (its :data:`METHOD_REGISTRY` entry) on this batch's features."""
        return method_spec(self.method).loss(self.loss_batch(features), self.loss_cfg)

    def param_groups(
        self, weight_decay: float, decay_logit_scale: bool = False, decay_all: bool = False
    ) -> list[dict]:
        """MERU's groups: no weight decay on logit_scale, α, curvature, gains and biases."""
        if decay_logit_scale or decay_all:
            raise ValueError("the hyperbolic methods keep MERU's weight-decay groups")
        return self.model.param_groups(weight_decay)

    def after_step(self, clamp_logit_scale: bool = True) -> None:
        """MERU's clamps (logit scale, curvature, α): always, as its reference does."""
        self.model.clamp_parameters_()

    def scalar_bounds(self, clamp_logit_scale: bool = True) -> dict[str, tuple[float, float]]:
        """The bounds MERU's clamps keep each scalar in (:meth:`after_step`: always), by
        state-dict key."""
        return {f"model.{key}": bounds for key, bounds in self.model.scalar_bounds().items()}

    def scalars(self) -> dict[str, float]:
        m = self.model
        return {
            "logit_scale": m.logit_scale.item(),
            "curv": m.curv.item(),
            "visual_alpha": m.visual_alpha.item(),
            "textual_alpha": m.textual_alpha.item(),
        }

    def diagnostics(self, features: dict[str, Tensor]) -> dict[str, float]:
        """Aperture-failure statistics of this batch (``metrics.diagnostics``), prefixed ``diag/``."""
        stats = aperture_diagnostics(features, self.model.curv.detach())
        return {f"diag/{k}": v for k, v in stats.items()}


# --------------------------------------------------------------------------- the methods


def infonce_terms(batch: EuclideanBatch, config: InfoNCEConfig) -> LossResult:
    """``clip``: global InfoNCE, logged as ``contrastive``."""
    loss = infonce_loss(batch.image, batch.text, batch.logit_scale, config.label_smoothing)
    return LossResult(loss, {"contrastive": loss})


def longclip_terms(batch: EuclideanBatch, config: LongCLIPConfig) -> LossResult:
    """``longclip``: terms ``long`` and ``short`` (only ``long`` at ``short_weight`` 0)."""
    if config.short_weight == 0.0:
        loss = infonce_loss(batch.image, batch.text, batch.logit_scale, config.label_smoothing)
        return LossResult(loss, {"long": loss})
    if batch.short_text is None:
        raise KeyError("longclip with loss.short_weight > 0 needs short_text in the batch")
    out = longclip_loss(
        batch.image, batch.text, batch.short_text, batch.logit_scale, **dataclasses.asdict(config)
    )
    return LossResult(out.total, {"long": out.long, "short": out.short})


def molo_terms(batch: EuclideanBatch, config: MoLoConfig) -> LossResult:
    """``himo``: MoLo's ``global`` and ``comp`` terms, and HiDe's m and explained variance."""
    out = molo_loss(batch.image, batch.text, batch.logit_scale, **dataclasses.asdict(config))
    return LossResult(
        out.loss,
        {"global": out.global_loss, "comp": out.comp_loss},
        {"hide_m": float(out.m), "hide_explained_variance": out.explained_variance},
    )


def hyperbolic_terms(
    loss: Callable[[HyperbolicBatch, Any], LossTerms],
    logged: tuple[str, ...],
    batch: HyperbolicBatch,
    config: Any,
) -> LossResult:
    """A hyperbolic total loss with the ``logged`` parts of its :class:`LossTerms`."""
    out = loss(batch, config)
    return LossResult(out.total, {name: getattr(out, name) for name in logged})


_CONTRASTIVE_ENTAILMENT = ("contrastive", "entailment")

# one method per entry: name, loss, loss config dataclass, training module
# fmt: off
register(
    METHOD_REGISTRY,
    Method("clip", infonce_terms, InfoNCEConfig, EuclideanModule),
    Method("longclip", longclip_terms, LongCLIPConfig, EuclideanModule,
           short_text=lambda config: config.short_weight > 0),
    Method("himo", molo_terms, MoLoConfig, EuclideanModule),
    Method("meru", functools.partial(hyperbolic_terms, meru_loss, _CONTRASTIVE_ENTAILMENT),
           MERUConfig, HyperbolicModule),
    Method("hycoclip", functools.partial(hyperbolic_terms, hycoclip_loss, _CONTRASTIVE_ENTAILMENT),
           HyCoCLIPConfig, HyperbolicModule, boxes=True),
    Method("argent", functools.partial(hyperbolic_terms, argent_loss,
                                       (*_CONTRASTIVE_ENTAILMENT, "regularizer")),
           ARGENTConfig, HyperbolicModule, boxes=True),
)
# fmt: on
HYPERBOLIC_METHODS = tuple(n for n, m in METHOD_REGISTRY.items() if m.hyperbolic)


def method_spec(name: str) -> Method:
    """The registry entry of method ``name``; KeyError listing the known methods otherwise."""
    if name not in METHOD_REGISTRY:
        raise KeyError(f"unknown method {name!r}; expected one of {list(METHOD_REGISTRY)}")
    return METHOD_REGISTRY[name]


# the hyperbolic scalars a checkpoint holds, by the name ``model.init_scalars`` gives them
SCALAR_PARAMETERS = {
    "curvature": ("model.log_curv",),
    "alpha": ("model.visual_alpha", "model.textual_alpha"),
    "logit_scale": ("model.logit_scale",),
}
HYPERBOLIC_SCALARS = tuple(key for keys in SCALAR_PARAMETERS.values() for key in keys)


def kept_scalars(scalars: dict[str, Tensor], names: tuple[str, ...]) -> dict[str, Tensor]:
    """The checkpoint's scalars a run starts from: those of ``model.init_scalars`` ``names``."""
    keys = {key for name in names for key in SCALAR_PARAMETERS[name]}
    return {key: value for key, value in scalars.items() if key in keys}


INIT_EXPECTED = (
    "expected model.init to be a paperlib training checkpoint (last.pt) or an "
    "open_clip state dict of tensors, read with weights_only=True"
)


def read_init_checkpoint(path: str) -> tuple[dict[str, Tensor], dict[str, Tensor]] | None:
    """For a paperlib training checkpoint (``last.pt``): its open_clip state (the ``clip.`` /
    ``model.clip.`` sub-dict, prefixes removed) and its hyperbolic scalars; else None (an
    open_clip-format file, loaded by ``models.clip.create_model``)."""
    state = load_tensor_file(path, INIT_EXPECTED)
    if not (isinstance(state, dict) and "config" in state and "model" in state):
        return None
    clip_state, scalars = {}, {}
    for key, value in state["model"].items():
        for prefix in ("clip.", "model.clip."):
            if key.startswith(prefix):
                clip_state[key.removeprefix(prefix)] = value
        if key in HYPERBOLIC_SCALARS:
            scalars[key] = value
    return clip_state, scalars


def check_stored_weights(
    module: nn.Module, state: dict[str, Tensor], source: str, clamp_logit_scale: bool = True
) -> None:
    """Weights ``state`` read from ``source`` for ``module``: ValueError naming the file and
    the tensor when one holds NaN or inf; its scalars checked against the bounds the module
    keeps them in (``models.bounds.check_scalars``: out of bounds warned)."""
    if bad := nonfinite_entry(state):
        raise ValueError(
            f"{source}: tensor {bad} holds NaN or inf; expected finite weights (a model "
            "trained into NaN, or a damaged file)"
        )
    check_scalars(state, module.scalar_bounds(clamp_logit_scale), source)


def build_module(config: Config, device: torch.device | str = "cpu"):
    """The method's training module, its image transform and tokenizer.

    ``model.init``: ``random``, an open_clip pretrained tag, an open_clip-format state file,
    or a paperlib training checkpoint (``last.pt`` of any method: its encoders are loaded,
    and MERU/HyCoCLIP/ARGENT's curvature, α and logit scale when both runs are hyperbolic).
    A base that does not fit ``model.name``, holds NaN or inf, or a scalar outside the bounds
    the model keeps it in, is refused (or, out of bounds, warned about) naming the file and
    the key (:func:`check_stored_weights`).
    """
    m = config.model
    pretrained = None if m.init == "random" else m.init
    scalars: dict[str, Tensor] = {}
    source = f"model.init {m.init}"
    if pretrained is not None and Path(pretrained).is_file():
        found = read_init_checkpoint(pretrained)
        if found is not None:
            pretrained, scalars = found  # the run's open_clip state, read once
    try:
        bundle = _encoders(m, pretrained, m.init)
    except ValueError as error:
        if m.init == "random" or not Path(m.init).is_file():
            raise
        expected = "" if "expected" in str(error) else f"; expected the weights of {m.name!r}"
        raise ValueError(f"model.init: {error}{expected}") from None
    if m.grad_checkpointing:  # both towers' blocks recomputed in the backward pass
        bundle.model.set_grad_checkpointing(True)
    if config.hyperbolic:
        module = _hyperbolic_module(config, bundle.model, scalars, source)
    else:
        module = method_spec(config.method).module(bundle.model, config.method, config.loss)
    if m.logit_scale_init is not None:
        with torch.no_grad():
            module.logit_scale.fill_(m.logit_scale_init)
    elif pretrained is not None and not config.hyperbolic:
        bounds = module.scalar_bounds(config.optim.clamp_logit_scale)
        check_scalars(module.state_dict(), bounds, source)
    if m.batchnorm == "frozen" and not batchnorm_layers(module):
        raise ValueError(
            f"model.batchnorm: frozen keeps the BatchNorm statistics of model.init, but "
            f"model.name={m.name!r} has no BatchNorm layer; use batchnorm=train"
        )
    module.batchnorm = m.batchnorm
    return module.to(device), bundle.preprocess, bundle.tokenizer


def _hyperbolic_module(config: Config, encoders, scalars: dict[str, Tensor], source: str):
    """The training module of a hyperbolic method around the open_clip ``encoders``, with the
    scalars of a hyperbolic ``model.init`` checkpoint that ``model.init_scalars`` keeps
    (curvature, α, logit scale: checked against their bounds, :func:`check_stored_weights`)."""
    m = config.model
    width = 512 if m.alpha_rule == "fixed-512" else encoders.text_projection.shape[-1]
    model = HyperbolicCLIP(
        encoders,
        curv_init=m.curv_init,
        learn_curv=m.learn_curv,
        alpha_init=meru_alpha_init(width),
    )
    scalars = kept_scalars(scalars, m.init_scalars)
    if m.alpha_rule == "feature-norm" and any(k.endswith("_alpha") for k in scalars):
        raise ValueError(
            f"model.alpha_rule: feature-norm would replace the α that the hyperbolic "
            f"checkpoint model.init={m.init!r} holds; use alpha_rule=embed-dim (the "
            "checkpoint's α is kept), or leave alpha out of model.init_scalars"
        )
    module = method_spec(config.method).module(model, config.method, config.loss)
    check_stored_weights(module, scalars, source)
    with torch.no_grad():
        for key, value in scalars.items():
            module.get_parameter(key).copy_(value)
    return module


def _encoders(m: ModelConfig, pretrained: str | dict[str, Tensor] | None, source: str):
    """The open_clip encoders of ``model.name`` (an open_clip architecture, or HyCoCLIP's
    towers ``hycoclip-vit-{s,b,l}``) with weights from ``pretrained`` (read from ``source``,
    named in errors)."""
    if m.name in HYCOCLIP_MODEL_NAMES:
        if isinstance(pretrained, str):
            raise ValueError(
                f"model.init: {m.name!r} starts from random weights or a paperlib "
                f"training checkpoint of the same towers; got {pretrained!r}"
            )
        return create_meru_encoders(m.name, pretrained, source)
    return create_model(
        m.name,
        pretrained,
        context_length=m.context_length,
        long_text=m.long_text,
        keep=m.keep,
        source=source,
    )


def input_size(module: nn.Module) -> int:
    """Side of the square images a method module's encoder takes (every module has ``.clip``)."""
    size = getattr(module.clip.visual, "image_size", 224)
    return size[0] if isinstance(size, (tuple, list)) else int(size)
