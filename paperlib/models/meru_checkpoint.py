"""MERU / HyCoCLIP architectures and released checkpoints on open_clip + timm
(``docs/methods/argent.md#meru``, ``docs/methods/argent.md#hycoclip``).

The official models (facebookresearch/meru, PalAvik/hycoclip) are a timm ViT (``[cls]`` token
pooling, LayerNorm eps 1e-5, fixed 2-D sin-cos positions) and a CLIP-style causal text
transformer (pre-LN, GELU, ``[EOT]`` = argmax pooling), each followed by a bias-free linear
projection. paperlib expresses them as an open_clip ``CLIP`` whose text tower is open_clip's
own (its residual block is the official one parameter for parameter) and whose vision tower is
:class:`MeruVisionTower`, an open_clip ``TimmModel`` around the timm trunk with a ``proj``
head. The official model normalises pixels inside ``encode_image`` with its ``pixel_mean`` /
``pixel_std`` buffers; here the bundle's ``preprocess`` does it, with the values read from the
file (HyCoCLIP's own class stores mean = std = (0.229, 0.224, 0.225), not ImageNet's mean).

Official state-dict keys (under ``checkpoint["model"]``) and where they go:

===================================  =====================================================
``visual.*`` (timm ViT)              ``clip.visual.trunk.*``
``visual_proj.weight`` (E, Wv)       ``clip.visual.head.proj.weight``
``textual.token_embed.weight``       ``clip.token_embedding.weight``
``textual.posit_embed``              ``clip.positional_embedding``
``textual.resblocks.*``              ``clip.transformer.resblocks.*``
``textual.ln_final.*``               ``clip.ln_final.*``
``textual_proj.weight`` (E, Wt)      ``clip.text_projection`` (Wt, E), the transpose
``textual.attn_mask``                checked to be the causal mask, not stored
``logit_scale``                      ``logit_scale`` (and the unused ``clip.logit_scale``)
``curv`` (holds log c)               ``log_curv``
``visual_alpha``, ``textual_alpha``  the same names
``pixel_mean``, ``pixel_std``        the preprocess ``Normalize``
===================================  =====================================================

A MERU ``CLIPBaseline`` file (``family="clip"``) has the same keys without ``curv`` and the
α's; it loads into the bare ``CLIP`` (``logit_scale`` into ``clip.logit_scale``).

Head counts are not in the weights: :func:`infer_architecture` takes the configs' values by
width (the S tower is MoCo-v3's small ViT, 12 heads where timm's ``vit_small`` has 6) and MERU's
``W/64`` for text. The tokenizer is open_clip's CLIP BPE (same vocabulary, cleaning and
truncation as the official one; only the literal strings ``<|startoftext|>``/``<|endoftext|>``
in a caption are read differently).
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

import timm
import torch
from open_clip.model import CLIP
from open_clip.timm_model import TimmModel
from open_clip.tokenizer import SimpleTokenizer
from timm.models.vision_transformer import VisionTransformer
from torch import Tensor, nn
from torchvision import transforms as T

from paperlib.models.bounds import check_scalars
from paperlib.models.clip import CLIPBundle, load_state
from paperlib.models.hyperbolic import HyperbolicCLIP
from paperlib.state_files import load_tensor_file, tensor_state

__all__ = [
    "HYCOCLIP_ARCHITECTURES",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "MeruArchitecture",
    "MeruVisionTower",
    "HYCOCLIP_MODEL_NAMES",
    "build_meru_clip",
    "build_meru_model",
    "create_meru_encoders",
    "infer_architecture",
    "load_meru_checkpoint",
    "meru_alpha_init",
    "meru_preprocess",
    "sincos_position_embedding",
    "to_official_state_dict",
]

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
FAMILIES = ("meru", "hycoclip", "clip")
HYPERBOLIC_KEYS = ("curv", "visual_alpha", "textual_alpha")
FILE_KEYS = {"log_curv": "curv"}  # HyperbolicCLIP's parameter → the official file's key
_SCALAR_KEYS = (
    "visual_proj.weight",
    "textual_proj.weight",
    "logit_scale",
    "pixel_mean",
    "pixel_std",
)
EXPECTED = (
    "expected a MERU/HyCoCLIP checkpoint (state dict with visual.*, textual.*, visual_proj, "
    "textual_proj, curv, visual_alpha, textual_alpha, logit_scale) and its pixel_mean/pixel_std "
    "buffers"
)
EXPECTED_CLIP = (
    "expected a MERU CLIPBaseline checkpoint (state dict with visual.*, textual.*, visual_proj, "
    "textual_proj, logit_scale) and its pixel_mean/pixel_std buffers"
)


@dataclass(frozen=True)
class MeruArchitecture:
    """Shapes of a MERU-family model (the configs' ``build_timm_vit`` + ``L12_W512`` text)."""

    vision: str  # timm name as in the official configs ("" when inferred from a file)
    vision_width: int
    vision_depth: int
    vision_heads: int
    patch_size: int = 16
    image_size: int = 224
    vision_mlp_ratio: float = 4.0
    embed_dim: int = 512
    text_layers: int = 12
    text_width: int = 512
    text_heads: int = 8
    text_mlp_ratio: float = 4.0
    context_length: int = 77
    vocab_size: int = 49408


#: HyCoCLIP's (and MERU's) ``configs/train_*_vit_{s,b,l}.py``: S is MoCo-v3's small ViT
#: (12 heads instead of timm's 6); text L12 W512 (8 heads), embedding 512 at every size.
HYCOCLIP_ARCHITECTURES: dict[str, MeruArchitecture] = {
    "S": MeruArchitecture("vit_small_mocov3_patch16_224", 384, 12, 12),
    "B": MeruArchitecture("vit_base_patch16_224", 768, 12, 12),
    "L": MeruArchitecture("vit_large_patch16_224", 1024, 24, 16),
}

#: official timm names that timm itself does not register: (timm name, overrides)
_TIMM_VARIANTS = {"vit_small_mocov3_patch16_224": ("vit_small_patch16_224", {"num_heads": 12})}
#: vision heads of the widths the official configs use (heads are not in the weights' shapes)
_VISION_HEADS = {arch.vision_width: arch.vision_heads for arch in HYCOCLIP_ARCHITECTURES.values()}
#: how the official ``build_timm_vit`` calls timm (global_pool="token")
_TRUNK_KWARGS = {
    "num_classes": 0,
    "global_pool": "token",
    "class_token": True,
    "norm_layer": nn.LayerNorm,
}


def meru_alpha_init(embed_dim: int) -> float:
    """MERU's α initialisation ``log(embed_dim^-½)`` (``docs/methods/argent.md#meru``)."""
    return math.log(embed_dim**-0.5)


# --------------------------------------------------------------------------- modules


def sincos_position_embedding(grid: int, width: int) -> Tensor:
    """Fixed 2-D sin-cos table (grid², width) of MoCo-v3 as MERU uses it
    (``docs/methods/argent.md#hycoclip``).

    Patch (row r, column c) gets ``[sin(rω), cos(rω), sin(cω), cos(cω)]`` with
    ``ω_k = 10000^(-k/(width/4))``; the official code labels the row half "w".
    """
    if width % 4:
        raise ValueError(f"sin-cos positions need a width divisible by 4; got {width}")
    quarter = width // 4
    omega = 1.0 / (10000.0 ** (torch.arange(quarter, dtype=torch.float32) / quarter))
    idx = torch.arange(grid, dtype=torch.float32)
    rows = idx.repeat_interleave(grid)[:, None] * omega[None, :]
    cols = idx.repeat(grid)[:, None] * omega[None, :]
    return torch.cat([rows.sin(), rows.cos(), cols.sin(), cols.cos()], dim=1)


def _fix_positions(trunk: nn.Module) -> nn.Module:
    """Write the sin-cos table (zero row for ``[cls]``) into ``pos_embed`` and freeze it."""
    grid_h, grid_w = trunk.patch_embed.grid_size
    if grid_h != grid_w:
        raise ValueError(f"MERU's positions assume a square patch grid; got {grid_h}x{grid_w}")
    table = sincos_position_embedding(grid_h, trunk.embed_dim)
    with torch.no_grad():
        trunk.pos_embed.zero_()
        trunk.pos_embed[0, -table.shape[0] :].copy_(table)
    trunk.pos_embed.requires_grad_(False)
    return trunk


class MeruVisionTower(TimmModel):
    """open_clip's ``TimmModel`` layout (``trunk`` + ``head.proj``) around a prebuilt trunk.

    ``TimmModel.__init__`` would build the trunk from a bare timm name; MERU's trunk needs
    extra timm arguments, so it is built first and adopted here.
    """

    def __init__(self, trunk: nn.Module, embed_dim: int, image_size: int):
        nn.Module.__init__(self)
        self.image_size = (image_size, image_size)
        self.trunk = trunk
        proj = nn.Linear(trunk.embed_dim, embed_dim, bias=False)
        nn.init.normal_(proj.weight, std=trunk.embed_dim**-0.5)  # MERU's visual_proj init
        self.head = nn.Sequential(OrderedDict(drop=nn.Dropout(0.0), proj=proj))


def _timm_trunk(vision: str, image_size: int) -> nn.Module:
    name, overrides = _TIMM_VARIANTS.get(vision, (vision, {}))
    if name not in timm.list_models("vit_*"):
        raise ValueError(
            f"unknown vision tower {vision!r}: expected one of {sorted(HYCOCLIP_ARCHITECTURES)} "
            "or a timm ViT name (vit_*)"
        )
    trunk = timm.create_model(
        name, pretrained=False, img_size=image_size, **overrides, **_TRUNK_KWARGS
    )
    return _fix_positions(trunk)


def _arch_trunk(arch: MeruArchitecture) -> nn.Module:
    trunk = VisionTransformer(
        img_size=arch.image_size,
        patch_size=arch.patch_size,
        embed_dim=arch.vision_width,
        depth=arch.vision_depth,
        num_heads=arch.vision_heads,
        mlp_ratio=arch.vision_mlp_ratio,
        **_TRUNK_KWARGS,
    )
    return _fix_positions(trunk)


def _assemble(trunk: nn.Module, arch: MeruArchitecture) -> CLIP:
    """open_clip CLIP with open_clip's text tower and ``trunk`` as its vision tower."""
    text_cfg = {
        "context_length": arch.context_length,
        "vocab_size": arch.vocab_size,
        "width": arch.text_width,
        "heads": arch.text_heads,
        "layers": arch.text_layers,
        "mlp_ratio": arch.text_mlp_ratio,  # GELU, pre-LN, causal, argmax pooling, no bias
    }
    # open_clip builds a vision tower from a config; a 1-pixel one is built, then replaced
    placeholder = {"layers": 1, "width": 8, "head_width": 8, "patch_size": 1, "image_size": 1}
    clip = CLIP(arch.embed_dim, vision_cfg=placeholder, text_cfg=text_cfg)
    clip.visual = MeruVisionTower(trunk, arch.embed_dim, arch.image_size)
    return clip


def build_meru_clip(
    vision: str,
    *,
    embed_dim: int = 512,
    text_layers: int = 12,
    text_width: int = 512,
    text_heads: int = 8,
    context_length: int = 77,
    vocab_size: int = 49408,
    image_size: int = 224,
) -> CLIP:
    """Random-weight MERU/HyCoCLIP encoders as an open_clip ``CLIP``
    (``docs/methods/argent.md#hycoclip``).

    ``vision``: ``"S"``/``"B"``/``"L"`` (:data:`HYCOCLIP_ARCHITECTURES`) or a timm ViT name
    (``vit_small_mocov3_patch16_224`` included). Wrap with :func:`build_meru_model` or
    ``HyperbolicCLIP(clip, alpha_init=meru_alpha_init(embed_dim))``.
    """
    name = HYCOCLIP_ARCHITECTURES[vision].vision if vision in HYCOCLIP_ARCHITECTURES else vision
    trunk = _timm_trunk(name, image_size)
    arch = MeruArchitecture(
        name,
        trunk.embed_dim,
        len(trunk.blocks),
        trunk.blocks[0].attn.num_heads,
        trunk.patch_embed.patch_size[0],
        image_size,
        embed_dim=embed_dim,
        text_layers=text_layers,
        text_width=text_width,
        text_heads=text_heads,
        context_length=context_length,
        vocab_size=vocab_size,
    )
    return _assemble(trunk, arch)


def build_meru_model(
    vision: str, *, curv_init: float = 1.0, embed_dim: int = 512, **kwargs
) -> HyperbolicCLIP:
    """:func:`build_meru_clip` in a :class:`HyperbolicCLIP` with MERU's α rule
    (``docs/methods/argent.md#meru``)."""
    clip = build_meru_clip(vision, embed_dim=embed_dim, **kwargs)
    return HyperbolicCLIP(clip, curv_init=curv_init, alpha_init=meru_alpha_init(embed_dim))


#: training-config names of the HyCoCLIP/ARGENT towers (``model.name``), size by size
HYCOCLIP_MODEL_NAMES = {f"hycoclip-vit-{size.lower()}": size for size in HYCOCLIP_ARCHITECTURES}


def create_meru_encoders(
    name: str, state: dict[str, Tensor] | None = None, source: str | None = None
) -> CLIPBundle:
    """The encoders of training config ``model.name`` (:data:`HYCOCLIP_MODEL_NAMES`) with random
    weights or a paperlib ``state`` of the same towers (read from ``source``, named in errors);
    HyCoCLIP's evaluation transform (ImageNet normalisation) and the CLIP BPE tokenizer at 77
    tokens (``docs/methods/argent.md#hycoclip``)."""
    if name not in HYCOCLIP_MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}: expected one of {sorted(HYCOCLIP_MODEL_NAMES)}")
    clip = build_meru_clip(HYCOCLIP_MODEL_NAMES[name])
    if state is not None:
        load_state(clip, state, source or f"the init checkpoint of {name}")
    arch = HYCOCLIP_ARCHITECTURES[HYCOCLIP_MODEL_NAMES[name]]
    return CLIPBundle(
        clip, meru_preprocess(arch.image_size), SimpleTokenizer(context_length=arch.context_length)
    )


def meru_preprocess(image_size: int, mean=IMAGENET_MEAN, std=IMAGENET_STD) -> T.Compose:
    """The official evaluation transform (bicubic Resize, CenterCrop, ToTensor) followed by
    the normalisation the official model applies inside ``encode_image``."""
    return T.Compose(
        [
            _to_rgb,
            T.Resize(image_size, interpolation=T.InterpolationMode.BICUBIC),
            T.CenterCrop(image_size),
            T.ToTensor(),
            T.Normalize(mean, std),
        ]
    )


def _to_rgb(image):
    return image.convert("RGB") if getattr(image, "mode", "RGB") != "RGB" else image


# --------------------------------------------------------------------------- reading


def _read_state(path: Path, expected: str) -> dict[str, Tensor]:
    """Tensor-only read (``weights_only=True``) of ``checkpoint["model"]`` or a bare state."""
    return tensor_state(load_tensor_file(path, expected), path, expected)


def _check_layout(state: dict[str, Tensor], family: str, path: Path, expected: str) -> None:
    needed = [
        *_SCALAR_KEYS,
        "textual.token_embed.weight",
        "textual.posit_embed",
        "visual.patch_embed.proj.weight",
        "visual.pos_embed",
    ]
    has_hyperbolic = [k for k in HYPERBOLIC_KEYS if k in state]
    missing = [k for k in needed if k not in state]
    if family != "clip":
        missing += [k for k in HYPERBOLIC_KEYS if k not in state]
    if missing:
        hint = (
            " (a Euclidean CLIPBaseline file? use family='clip')"
            if (family != "clip" and not has_hyperbolic and len(missing) == len(HYPERBOLIC_KEYS))
            else ""
        )
        raise ValueError(f"{path} lacks {missing[:6]}{hint}; {expected}")
    if family == "clip" and has_hyperbolic:
        raise ValueError(
            f"{path} holds {has_hyperbolic}: a hyperbolic checkpoint, load it with "
            "family='meru' or 'hycoclip'"
        )


def _count_blocks(state: dict[str, Tensor], prefix: str) -> int:
    found = {int(m.group(1)) for k in state if (m := re.match(re.escape(prefix) + r"(\d+)\.", k))}
    if found != set(range(len(found))):
        raise ValueError(f"blocks under {prefix!r} are not numbered 0..n-1: {sorted(found)}")
    return len(found)


def infer_architecture(
    state: dict[str, Tensor], *, vision_heads: int | None = None, text_heads: int | None = None
) -> MeruArchitecture:
    """Shapes of an official state dict (``visual.*``, ``textual.*``, projections).

    Head counts are not in the weights: vision heads default to the official configs' value for
    the width (384 → 12, MoCo-v3 small; 768 → 12; 1024 → 16), text heads to MERU's ``W/64``.
    """
    if "visual.cls_token" not in state:
        raise ValueError(
            "the ViT has no [cls] token (global_pool='avg'); only the configs' "
            "token pooling is supported"
        )
    patch_w = state["visual.patch_embed.proj.weight"]
    width, patch = patch_w.shape[0], patch_w.shape[-1]
    positions = state["visual.pos_embed"].shape[1] - 1
    grid = math.isqrt(positions)
    if grid * grid != positions:
        raise ValueError(f"visual.pos_embed has {positions} patch positions: not a square grid")
    heads = vision_heads or _VISION_HEADS.get(width)
    if heads is None:
        raise ValueError(
            f"vision width {width} is not one of the official configs' "
            f"{sorted(_VISION_HEADS)}: pass vision_heads="
        )
    vocab, text_width = state["textual.token_embed.weight"].shape
    if text_heads is None and text_width < 64:
        raise ValueError(f"text width {text_width} < 64 has no W/64 head count: pass text_heads=")
    arch = MeruArchitecture(
        "",
        width,
        _count_blocks(state, "visual.blocks."),
        heads,
        patch,
        grid * patch,
        vision_mlp_ratio=state["visual.blocks.0.mlp.fc1.weight"].shape[0] / width,
        embed_dim=state["visual_proj.weight"].shape[0],
        text_layers=_count_blocks(state, "textual.resblocks."),
        text_width=text_width,
        text_heads=text_heads or text_width // 64,
        text_mlp_ratio=state["textual.resblocks.0.mlp.c_fc.weight"].shape[0] / text_width,
        context_length=state["textual.posit_embed"].shape[0],
        vocab_size=vocab,
    )
    for known in HYCOCLIP_ARCHITECTURES.values():
        if replace(arch, vision=known.vision) == known:
            return known
    return arch


# official prefix -> prefix inside the open_clip CLIP
_RENAMES = (
    ("visual_proj.weight", "visual.head.proj.weight"),
    ("visual.", "visual.trunk."),
    ("textual.token_embed.", "token_embedding."),
    ("textual.posit_embed", "positional_embedding"),
    ("textual.resblocks.", "transformer.resblocks."),
    ("textual.ln_final.", "ln_final."),
)


def _rename(key: str, pairs) -> str | None:
    for old, new in pairs:
        if key == old or (old.endswith(".") and key.startswith(old)):
            return new + key[len(old) :]
    return None


def _causal(length: int) -> Tensor:
    return torch.ones(length, length, dtype=torch.bool).triu(1)


def _to_paperlib(state: dict[str, Tensor], family: str, path: Path, expected: str) -> dict:
    """Official keys → paperlib keys (``HyperbolicCLIP``, or the bare CLIP for ``clip``)."""
    root = "" if family == "clip" else "clip."
    out, unused = {}, []
    for key, value in state.items():
        if key in ("pixel_mean", "pixel_std"):
            continue  # read into the preprocess
        if key == "textual.attn_mask":
            if not torch.equal(value.bool(), _causal(value.shape[0])):
                raise ValueError(f"{path}: textual.attn_mask is not a causal mask; {expected}")
        elif key == "textual_proj.weight":
            out[root + "text_projection"] = value.T.contiguous()
        elif key == "logit_scale":
            out[root + "logit_scale"] = value
            if family != "clip":
                out["logit_scale"] = value.clone()
        elif key == "curv" and family != "clip":
            out["log_curv"] = value  # the official parameter stores log c
        elif key in HYPERBOLIC_KEYS and family != "clip":
            out[key] = value
        elif (renamed := _rename(key, _RENAMES)) is not None:
            out[root + renamed] = value
        else:
            unused.append(key)
    if unused:
        raise ValueError(f"{path}: keys {unused[:5]} have no place in the model; {expected}")
    return out


def to_official_state_dict(
    model: nn.Module, *, pixel_mean=IMAGENET_MEAN, pixel_std=IMAGENET_STD
) -> dict[str, Tensor]:
    """The official layout of a paperlib MERU-family model (``HyperbolicCLIP`` or its CLIP),
    e.g. for the official evaluation scripts; ``pixel_*`` fill the normalisation buffers."""
    hyperbolic = isinstance(model, HyperbolicCLIP)
    clip = model.clip if hyperbolic else model
    inverse = tuple((new, old) for old, new in _RENAMES)
    out = {}
    for key, value in clip.state_dict().items():
        if key == "text_projection":
            out["textual_proj.weight"] = value.T.contiguous()
        elif key != "logit_scale":
            official = _rename(key, inverse)
            if official is None:
                raise ValueError(f"{key} has no counterpart in the official MERU layout")
            out[official] = value.detach().clone()
    out["textual.attn_mask"] = _causal(clip.positional_embedding.shape[0])
    out["logit_scale"] = model.logit_scale.detach().clone()
    out["pixel_mean"] = torch.tensor(pixel_mean).view(-1, 1, 1)
    out["pixel_std"] = torch.tensor(pixel_std).view(-1, 1, 1)
    if hyperbolic:
        out["curv"] = model.log_curv.detach().clone()
        out["visual_alpha"] = model.visual_alpha.detach().clone()
        out["textual_alpha"] = model.textual_alpha.detach().clone()
    return out


def load_meru_checkpoint(
    path: str | Path,
    *,
    family: str = "meru",
    device: str | torch.device = "cpu",
    vision_heads: int | None = None,
    text_heads: int | None = None,
) -> CLIPBundle:
    """A released MERU / HyCoCLIP (or MERU ``CLIPBaseline``) checkpoint → (model, preprocess,
    tokenizer), ``docs/methods/argent.md#meru``, ``docs/methods/argent.md#hycoclip``.

    The file is read with ``weights_only=True`` and loaded strictly; the architecture comes
    from the tensor shapes (:func:`infer_architecture`; ``*_heads`` override the head counts).
    ``family="meru"``/``"hycoclip"`` give a :class:`HyperbolicCLIP` (bounds of ``curv_init``
    1, as in every official config), ``"clip"`` the bare open_clip ``CLIP``. ``preprocess``
    reproduces the official evaluation input, normalised with the file's pixel buffers;
    ``tokenizer`` is open_clip's CLIP BPE tokenizer (the official vocabulary and cleaning).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}; got {family!r}")
    path = Path(path)
    expected = EXPECTED_CLIP if family == "clip" else EXPECTED
    state = _read_state(path, expected)
    _check_layout(state, family, path, expected)
    try:
        arch = infer_architecture(state, vision_heads=vision_heads, text_heads=text_heads)
    except (KeyError, ValueError) as err:
        raise ValueError(f"{path}: {err}; {expected}") from None
    clip = _assemble(_arch_trunk(arch), arch)
    model = (
        clip
        if family == "clip"
        else HyperbolicCLIP(clip, curv_init=1.0, alpha_init=meru_alpha_init(arch.embed_dim))
    )
    mapped = _to_paperlib(state, family, path, expected)
    try:
        load_state(model, mapped, path)
    except ValueError as err:
        raise ValueError(f"{err}; {expected}") from None
    if family != "clip":
        bounds = {FILE_KEYS.get(k, k): v for k, v in model.scalar_bounds().items()}
        check_scalars(state, bounds, str(path))
    mean, std = (tuple(state[k].flatten().tolist()) for k in ("pixel_mean", "pixel_std"))
    preprocess = meru_preprocess(arch.image_size, mean, std)
    tokenizer = SimpleTokenizer(context_length=arch.context_length)
    return CLIPBundle(model.to(device).eval(), preprocess, tokenizer)
