"""Load released Long-CLIP checkpoints into paperlib's Euclidean model
(``docs/methods/himo-clip.md#long-text``).

Long-CLIP's released files (``longclip-B.pt``, ``longclip-L.pt``) are ``torch.save`` of the
model's ``state_dict()``: a bare ``{name: tensor}`` mapping with OpenAI CLIP's key names plus
Long-CLIP's 248-token text table. The layout, read from the official ``model/model_longclip.py``:

- ``positional_embedding`` (248, width): the stretched table, frozen in training; positions
  0..19 read it;
- ``positional_embedding_res`` (248, width): its trainable copy; positions >= 20 read it. The two
  0/1 row masks that choose between them are plain attributes, not in the file;
- ``token_embedding.weight`` (vocab, width), ``transformer.resblocks.{i}.*``,
  ``ln_final.{weight,bias}``, ``text_projection`` (width, embed), ``logit_scale``;
- ``visual.conv1.weight`` (width, 3, patch, patch), ``visual.class_embedding``,
  ``visual.positional_embedding`` (grid² + 1, width), ``visual.ln_pre.*``,
  ``visual.transformer.resblocks.{i}.*``, ``visual.ln_post.*``, ``visual.proj`` (width, embed).

Nothing else is recorded: as in the official ``build_model``, the architecture follows from the
shapes (image size = patch · grid, layers = number of residual blocks, heads = width // 64 in
both towers). The activation is QuickGELU (OpenAI CLIP's), images are resized on the short side
(bicubic), centre-cropped and normalised with OpenAI's mean/std, and text is CLIP's BPE at 248
tokens. The official loader casts linear/attention/projection weights to float16 and back to
float32 on CPU; here every tensor is loaded as float32.

HiMo-CLIP's code (github.com/UnicomAI/HiMo-CLIP) writes the same layout: its ``model/himo.py``
and ``model/model_himo.py`` keep Long-CLIP's model, masks and ``build_model`` inference, and its
training saves ``model.module.state_dict()``. Its released files were not inspected here.
"""

from __future__ import annotations

import math
from pathlib import Path

import open_clip
import torch
from open_clip.model import CLIP
from torch import Tensor, nn

from paperlib.models.clip import (
    LONG_CONTEXT_LENGTH,
    CLIPBundle,
    add_positional_residual,
    load_state,
)
from paperlib.state_files import load_tensor_file, tensor_state

__all__ = [
    "EXPECTED",
    "LONGCLIP_KEEP",
    "build_longclip_model",
    "infer_longclip_config",
    "load_longclip_checkpoint",
    "read_longclip_state",
]

LONGCLIP_KEEP = 20  # positions 0..19 read the frozen table, the rest the residual copy
HEAD_WIDTH = 64  # Long-CLIP / OpenAI CLIP: heads = width // 64 in both towers
EXPECTED = (
    "expected a Long-CLIP checkpoint (a .pt state dict with a 248-row positional_embedding "
    "and positional_embedding_res)"
)
_REQUIRED = (
    "positional_embedding",
    "positional_embedding_res",
    "token_embedding.weight",
    "ln_final.weight",
    "text_projection",
    "visual.conv1.weight",
    "visual.class_embedding",
    "visual.positional_embedding",
    "visual.proj",
    "visual.transformer.resblocks.0.mlp.c_fc.weight",
    "transformer.resblocks.0.mlp.c_fc.weight",
)


def _check_layout(state: dict[str, Tensor], path: Path | str) -> None:
    """Raise a ValueError naming ``path`` unless ``state`` has Long-CLIP's key layout."""
    missing = [k for k in _REQUIRED if k not in state]
    if "visual.attnpool.positional_embedding" in state and "visual.proj" not in state:
        raise ValueError(f"{path} has a ResNet image tower, which is not supported; {EXPECTED}")
    if missing:
        rows = state.get("positional_embedding")
        hint = (
            f" (its positional_embedding has {rows.shape[0]} rows and no residual copy: an "
            "OpenAI/open_clip CLIP state dict, which paperlib.models.clip.create_model loads)"
            if isinstance(rows, Tensor) and "positional_embedding_res" not in state
            else ""
        )
        raise ValueError(f"{path} lacks keys {missing[:4]}{hint}; {EXPECTED}")
    base, res = state["positional_embedding"], state["positional_embedding_res"]
    if base.ndim != 2 or base.shape != res.shape or base.shape[0] != LONG_CONTEXT_LENGTH:
        raise ValueError(
            f"{path} has positional_embedding {tuple(base.shape)} and positional_embedding_res "
            f"{tuple(res.shape)}; {EXPECTED}"
        )


def read_longclip_state(path: str | Path) -> dict[str, Tensor]:
    """Read a Long-CLIP checkpoint (``docs/methods/himo-clip.md#long-text``) as a float32 state
    dict, ``weights_only=True``.

    Takes the released form (a bare state dict) or one nested under ``state_dict`` / ``model``,
    with ``module.`` (DDP) or ``clip.`` prefixes removed. Raises FileNotFoundError for a missing
    file and ValueError, naming the file and the expected layout, for anything else.
    """
    path = Path(path)
    obj = tensor_state(
        load_tensor_file(path, EXPECTED), path, EXPECTED, prefixes=("module.", "clip.")
    )
    _check_layout(obj, path)
    return {k: v.float() if v.is_floating_point() else v for k, v in obj.items()}


def _block_count(state: dict[str, Tensor], prefix: str, path: Path | str) -> int:
    """Number of residual blocks ``prefix{i}.*`` (checked to be numbered 0..n-1)."""
    found = {int(k[len(prefix) :].split(".")[0]) for k in state if k.startswith(prefix)}
    if not found or found != set(range(len(found))):
        raise ValueError(f"{path}: blocks under {prefix!r} are {sorted(found)}; {EXPECTED}")
    return len(found)


def _width(state: dict[str, Tensor], key: str, path: Path | str) -> int:
    width = state[key].shape[0]
    if width % HEAD_WIDTH:
        raise ValueError(f"{path}: {key} width {width} is not a multiple of {HEAD_WIDTH}")
    return width


def infer_longclip_config(state: dict[str, Tensor], path: str | Path = "state dict") -> dict:
    """The open_clip model config of a Long-CLIP state dict, from its shapes
    (``docs/methods/himo-clip.md#long-text``).

    The same rules as the official ``build_model``: vision width and patch from
    ``visual.conv1.weight``, image size = patch · sqrt(rows of ``visual.positional_embedding``
    − 1), layers = residual blocks, heads = width // 64, embed dim from ``text_projection``,
    vocabulary from ``token_embedding.weight``; QuickGELU; 248 text positions.
    """
    vision_width = _width(state, "visual.conv1.weight", path)
    patch = state["visual.conv1.weight"].shape[-1]
    grid = math.isqrt(state["visual.positional_embedding"].shape[0] - 1)
    if grid * grid + 1 != state["visual.positional_embedding"].shape[0]:
        raise ValueError(f"{path}: visual.positional_embedding is not grid² + 1 rows; {EXPECTED}")
    text_width = _width(state, "ln_final.weight", path)
    vision_blocks = _block_count(state, "visual.transformer.resblocks.", path)
    text_blocks = _block_count(state, "transformer.resblocks.", path)
    vision_mlp = state["visual.transformer.resblocks.0.mlp.c_fc.weight"].shape[0]
    text_mlp = state["transformer.resblocks.0.mlp.c_fc.weight"].shape[0]
    return {
        "embed_dim": state["text_projection"].shape[1],
        "quick_gelu": True,
        "vision_cfg": {
            "image_size": patch * grid,
            "patch_size": patch,
            "width": vision_width,
            "layers": vision_blocks,
            "head_width": HEAD_WIDTH,
            "mlp_ratio": vision_mlp / vision_width,
        },
        "text_cfg": {
            "context_length": LONG_CONTEXT_LENGTH,
            "vocab_size": state["token_embedding.weight"].shape[0],
            "width": text_width,
            "heads": text_width // HEAD_WIDTH,
            "layers": text_blocks,
            "mlp_ratio": text_mlp / text_width,
        },
    }


def build_longclip_model(config: dict) -> nn.Module:
    """An open_clip ``CLIP`` for ``config`` (from :func:`infer_longclip_config`), random weights.

    Built at 248 text positions with QuickGELU, then given Long-CLIP's frozen-base +
    trainable-residual positional scheme (``docs/methods/himo-clip.md#long-text``): positions
    < 20 read the frozen ``positional_embedding``, positions >= 20 the trainable
    ``positional_embedding_res``.
    """
    model = CLIP(
        embed_dim=config["embed_dim"],
        vision_cfg=dict(config["vision_cfg"]),
        text_cfg=dict(config["text_cfg"]),
        quick_gelu=config.get("quick_gelu", True),
    )
    add_positional_residual(model, keep=LONGCLIP_KEEP)
    return model


def load_longclip_checkpoint(path: str | Path, *, device: str | torch.device = "cpu") -> CLIPBundle:
    """Load a released Long-CLIP checkpoint into an open_clip ``CLIP``
    (``docs/methods/himo-clip.md#long-text``).

    The file is read with ``weights_only=True`` (see :func:`read_longclip_state` for the forms
    accepted and the errors), its architecture inferred from the tensor shapes, and its tensors
    loaded strictly as float32. Returns the model in eval mode, the OpenAI-style eval transform at
    the inferred image size, and CLIP's BPE tokenizer at 248 tokens. The file records neither the
    activation nor the head width: Long-CLIP's (OpenAI CLIP's) QuickGELU and 64-wide heads are
    assumed, so a paperlib checkpoint of another architecture belongs to ``create_model``.
    """
    state = read_longclip_state(path)
    config = infer_longclip_config(state, path)
    model = build_longclip_model(config)
    load_state(model, state, path)
    preprocess = open_clip.image_transform(
        config["vision_cfg"]["image_size"],
        is_train=False,
        mean=open_clip.OPENAI_DATASET_MEAN,
        std=open_clip.OPENAI_DATASET_STD,
        resize_mode="shortest",
        interpolation="bicubic",
    )
    tokenizer = open_clip.SimpleTokenizer(context_length=LONG_CONTEXT_LENGTH)
    return CLIPBundle(model.to(device).eval(), preprocess, tokenizer)
