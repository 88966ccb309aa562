"""Euclidean CLIP on open_clip encoders: factory, checkpoints, Long-CLIP's 248-token text.

- ``create_model`` builds any open_clip architecture by name (the small CPU configs in
  ``paperlib/model_configs`` are registered on import) with random weights, an open_clip
  pretrained tag, or a local checkpoint file (loaded with ``weights_only=True``); or an
  open_clip model from the Hugging Face hub by ``hf-hub:ORG/REPO``.
- ``stretch_positional_embedding`` is Long-CLIP's 77 -> 248 stretch
  (``docs/methods/himo-clip.md#long-text``), *not*
  open_clip's ``resize_text_pos_embed`` (which interpolates every position linearly).
- ``long_text="residual"`` adds Long-CLIP's frozen-base + trainable-residual table:
  positions 0..keep-1 read the frozen stretched table, positions >= keep a trainable copy
  (``positional_embedding_res``), so the first ``keep`` positions stay exactly the base model's.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, NamedTuple

import open_clip
import torch
import torch.nn.functional as F
from open_clip.pretrained import download_pretrained_from_hf, get_pretrained_cfg
from open_clip.transformer import text_global_pool
from torch import Tensor, nn

from paperlib.state_files import load_tensor_file, nonfinite_entry, tensor_state

MODEL_CONFIG_DIR = Path(__file__).resolve().parent.parent / "model_configs"
open_clip.add_model_config(MODEL_CONFIG_DIR)

BASE_CONTEXT_LENGTH = 77
LONG_CONTEXT_LENGTH = 248


class CLIPBundle(NamedTuple):
    """What ``create_model`` returns: the model, its eval image transform, its tokenizer."""

    model: nn.Module
    preprocess: Any
    tokenizer: Any


# --------------------------------------------------------------------------- stretch


def stretch_positional_embedding(table: Tensor, keep: int = 20, factor: int = 4) -> Tensor:
    """Long-CLIP's positional stretch (``docs/methods/himo-clip.md#long-text``), (L, width) ->
    (keep + factor·(L−keep), width).

    Rows ``0..keep-1`` are copied; for ``i`` in ``0..L-keep-2`` and ``j`` in ``0..factor-1``,
    ``new[keep + factor·i + j] = ((factor−j)·p[keep+i] + j·p[keep+i+1]) / factor``; the last
    ``factor`` rows extrapolate ``p[L−1] + j·(p[L−1] − p[L−2]) / factor``.
    With L = 77, keep = 20, factor = 4 this gives 248 rows.
    """
    if table.ndim != 2:
        raise ValueError(f"positional table must be (positions, width); got {tuple(table.shape)}")
    length = table.shape[0]
    if not 0 < keep < length - 1:
        raise ValueError(f"keep must be in 1..{length - 2} for a {length}-row table; got {keep}")
    frac = torch.arange(factor, dtype=table.dtype, device=table.device) / factor  # j / factor
    start, stop = table[keep:-1], table[keep + 1 :]
    interpolated = start[:, None, :] + frac[None, :, None] * (stop - start)[:, None, :]
    last_step = table[-1] - table[-2]
    extrapolated = table[-1][None, :] + frac[:, None] * last_step[None, :]
    return torch.cat([table[:keep], interpolated.reshape(-1, table.shape[1]), extrapolated], dim=0)


def _text_tower(model: nn.Module) -> nn.Module:
    """The module that owns ``positional_embedding`` and the text ``transformer``."""
    owner = model if hasattr(model, "positional_embedding") else getattr(model, "text", None)
    if owner is None or not isinstance(getattr(owner, "positional_embedding", None), Tensor):
        raise TypeError(
            f"{type(model).__name__} has no text positional embedding "
            "(expected an open_clip CLIP or CustomTextCLIP with a transformer text tower)"
        )
    return owner


def _causal_mask(length: int) -> Tensor:
    return torch.full((length, length), float("-inf")).triu_(1)


def _add_positional_residual(tower: nn.Module, keep: int) -> None:
    """Freeze ``tower.positional_embedding`` and route positions >= ``keep`` to a trainable copy.

    Implemented as a forward pre-hook on the text transformer that adds
    ``mask · (res − base)`` to its input, where the input already holds ``tokens + base``.
    """
    base = tower.positional_embedding
    base.requires_grad_(False)
    tower.positional_embedding_res = nn.Parameter(base.detach().clone())
    tower.register_buffer(
        "positional_residual_mask",
        (torch.arange(base.shape[0]) >= keep).float()[:, None],
        persistent=False,
    )

    def add_residual(module: nn.Module, args: tuple, kwargs: dict):
        x, *rest = args
        n = x.shape[-2]
        delta = tower.positional_residual_mask[:n] * (
            tower.positional_embedding_res[:n] - tower.positional_embedding[:n]
        )
        return (x + delta.to(x.dtype), *rest), kwargs

    tower.transformer.register_forward_pre_hook(add_residual, with_kwargs=True)


def add_positional_residual(model: nn.Module, keep: int = 20) -> None:
    """Long-CLIP's frozen-base + trainable-residual split of the text table as it is
    (``docs/methods/himo-clip.md#long-text``).

    For a model already at its final context length (e.g. built at 248 to receive a Long-CLIP
    checkpoint); ``extend_context(mode="residual")`` stretches a 77-token model first.
    """
    _add_positional_residual(_text_tower(model), keep)


def extend_context(
    model: nn.Module, mode: str = "residual", keep: int = 20, factor: int = 4
) -> None:
    """Give a 77-token open_clip model Long-CLIP's 248-token text positions, in place.

    ``mode="stretch"``: stretched table, trainable as a whole. ``mode="residual"``:
    Long-CLIP's frozen stretched table + trainable residual copy
    (``docs/methods/himo-clip.md#long-text``).
    """
    if mode not in ("stretch", "residual"):
        raise ValueError(f"long_text mode must be 'stretch' or 'residual'; got {mode!r}")
    tower = _text_tower(model)
    table = tower.positional_embedding.detach()
    stretched = stretch_positional_embedding(table, keep=keep, factor=factor)
    tower.positional_embedding = nn.Parameter(stretched)
    length = stretched.shape[0]
    for owner in {id(model): model, id(tower): tower}.values():
        if hasattr(owner, "context_length"):
            owner.context_length = length
        if isinstance(getattr(owner, "attn_mask", None), Tensor):
            owner.register_buffer("attn_mask", _causal_mask(length), persistent=False)
    if hasattr(tower, "num_pos"):
        tower.num_pos = length
    if mode == "residual":
        _add_positional_residual(tower, keep)


# --------------------------------------------------------------------------- checkpoints


CHECKPOINT_EXPECTED = (
    "expected a file written by torch.save holding a model state dict of "
    "tensors (read with weights_only=True), or an open_clip pretrained tag"
)


def load_checkpoint_state(path: str | Path) -> dict[str, Tensor]:
    """Read a state dict from a local file with ``weights_only=True`` (``state_files``).

    Accepts a bare state dict or one nested under ``state_dict`` / ``model`` (so a paperlib
    training checkpoint works); strips ``module.`` (DDP) and ``clip.`` (paperlib's Euclidean
    training module) prefixes. Errors name the path and what was expected.
    """
    obj = load_tensor_file(path, CHECKPOINT_EXPECTED)
    return tensor_state(obj, path, CHECKPOINT_EXPECTED, prefixes=("module.", "clip."))


def _checkpoint_context_length(state: dict[str, Tensor]) -> int | None:
    for key in ("positional_embedding", "text.positional_embedding"):
        if key in state:
            return state[key].shape[0]
    return None


def load_state(model: nn.Module, state: dict[str, Tensor], path: str | Path) -> None:
    """Load ``state`` (read from ``path``, named in errors) into ``model`` strictly.

    A 248-token state without a residual table loads into a residual model by initialising
    the residual from the loaded base table (``state`` itself is left unchanged).
    """
    state = dict(state)
    own = model.state_dict()
    for key in [k for k in own if k.endswith("positional_embedding_res") and k not in state]:
        base_key = key.removesuffix("_res")
        if base_key in state:
            state[key] = state[base_key].clone()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    shapes = [k for k in own if k in state and own[k].shape != state[k].shape]
    if missing or unexpected or shapes:
        detail = "; ".join(
            part
            for part in (
                f"missing keys {missing[:5]}" if missing else "",
                f"unexpected keys {unexpected[:5]}" if unexpected else "",
                "shape mismatch "
                + ", ".join(
                    f"{k}: file {tuple(state[k].shape)} vs model {tuple(own[k].shape)}"
                    for k in shapes[:5]
                )
                if shapes
                else "",
            )
            if part
        )
        raise ValueError(f"checkpoint {path} does not fit {type(model).__name__}: {detail}")
    if bad := nonfinite_entry(state):
        raise ValueError(
            f"checkpoint {path}: tensor {bad} holds NaN or inf; expected finite weights "
            "(a model trained into NaN, or a damaged file)"
        )
    model.load_state_dict(state, strict=True)


# --------------------------------------------------------------------------- factory


HF_HUB_PREFIX = "hf-hub:"


def _check_hub_model(name: str, pretrained: object, cache_dir: str | Path | None) -> None:
    """Refuse an ``hf-hub:`` id whose config or weights file cannot be had.

    open_clip itself only warns when the weights are missing and returns a randomly
    initialised model; here that is an error naming the repository and the files expected.
    """

    repo = name.removeprefix(HF_HUB_PREFIX)
    if not repo or pretrained is not None:
        raise ValueError(
            f"{name!r}: an hf-hub model is 'hf-hub:ORG/REPO' and brings its own weights "
            f"(pretrained must be None, got {pretrained!r})"
        )
    for filename, what in (("open_clip_config.json", "config"), (None, "weights")):
        try:
            download_pretrained_from_hf(repo, filename=filename, cache_dir=cache_dir)
        except Exception as err:  # noqa: BLE001 - re-raised naming the repository and the file
            raise FileNotFoundError(
                f"{name}: cannot get its {what} file (expected open_clip_config.json and "
                "open_clip_model.safetensors or open_clip_pytorch_model.bin in the repository "
                f"or, with HF_HUB_OFFLINE=1, in the Hugging Face cache): {err}"
            ) from err


def _check_model_name(name: str, pretrained: object, cache_dir: str | Path | None) -> None:
    if name.startswith(HF_HUB_PREFIX):
        _check_hub_model(name, pretrained, cache_dir)
    elif name not in open_clip.list_models():
        raise ValueError(
            f"unknown model {name!r}: expected an open_clip architecture (e.g. ViT-B-16, "
            f"ViT-L-14), 'hf-hub:ORG/REPO', or one of paperlib's configs in {MODEL_CONFIG_DIR}"
        )


def _is_local_path(pretrained: str) -> bool:
    return Path(pretrained).suffix in {".pt", ".pth", ".bin", ".ckpt"} or "/" in pretrained


def check_activation(name: str, tag: str) -> None:
    """Refuse weights trained with another activation than the architecture's
    (``docs/methods/himo-clip.md#quickgelu``).

    OpenAI's CLIP weights were trained with QuickGELU; open_clip 3.x loads them into a GELU
    model with only a warning, which silently degrades the model. Here that mismatch is an
    error naming the architecture to use (``ViT-B-16-quickgelu`` for ``ViT-B-16`` + openai).
    """

    wants = bool(get_pretrained_cfg(name, tag).get("quick_gelu", False))
    if not wants and name.endswith("-quickgelu"):  # the tag is listed under the base name
        wants = bool(get_pretrained_cfg(name.removesuffix("-quickgelu"), tag).get("quick_gelu"))
    has = bool((open_clip.get_model_config(name) or {}).get("quick_gelu", False))
    if wants != has:
        fix = f"{name}-quickgelu" if wants else name.removesuffix("-quickgelu")
        raise ValueError(
            f"pretrained={tag!r} weights were trained with {'QuickGELU' if wants else 'GELU'} but "
            f"model {name!r} uses {'QuickGELU' if has else 'GELU'}: use model {fix!r}"
        )


def _load_local(
    model: nn.Module,
    pretrained: str | Path | dict[str, Tensor],
    context_length: int,
    long_text: str,
    keep: int,
    source: str | None = None,
) -> None:
    """Load a local file or state dict into ``model``, giving it 248 positions first when the
    weights have them and after loading when only the model asks for them
    (``docs/methods/himo-clip.md#quickgelu``); ``source`` names a given state dict in errors."""
    given = isinstance(pretrained, dict)
    source = source or ("the given state dict" if given else pretrained)
    state = pretrained if given else load_checkpoint_state(pretrained)
    state_length = _checkpoint_context_length(state)
    if state_length == LONG_CONTEXT_LENGTH and context_length != LONG_CONTEXT_LENGTH:
        raise ValueError(
            f"checkpoint {source} has 248 text positions: create it with context_length=248"
        )
    if state_length == LONG_CONTEXT_LENGTH:  # stretch first so the shapes match the file
        extend_context(model, long_text, keep)
    load_state(model, state, source)
    if context_length == LONG_CONTEXT_LENGTH and state_length != LONG_CONTEXT_LENGTH:
        extend_context(model, long_text, keep)


def _open_clip_model(name: str, tag: str | None, hub: dict[str, str]):
    """open_clip's model ``name`` and its image transform, with the weights of the pretrained
    ``tag`` (None: random init) from the Hugging Face cache (``hub``: its folder, if given);
    FileNotFoundError saying how to provide them when they cannot be had."""
    previous = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # open_clip warns loudly about random init
    try:
        model, _, preprocess = open_clip.create_model_and_transforms(name, pretrained=tag, **hub)
    except RuntimeError as err:  # open_clip's "Failed to download weights for tag ..."
        if tag is None:
            raise
        raise FileNotFoundError(
            f"{name} with pretrained tag {tag!r}: its weights cannot be had ({str(err)[:200]}); "
            "offline, put them in the Hugging Face cache first (HF_HOME, HF_HUB_CACHE) or give "
            "the weights file itself (--checkpoint FILE, model.init=FILE)"
        ) from None
    finally:
        logging.getLogger().setLevel(previous)
    return model, preprocess


def create_model(
    name: str = "paper-tiny",
    pretrained: str | Path | dict[str, Tensor] | None = None,
    *,
    context_length: int = BASE_CONTEXT_LENGTH,
    long_text: str = "residual",
    keep: int = 20,
    device: str | torch.device = "cpu",
    cache_dir: str | Path | None = None,
    source: str | None = None,
) -> CLIPBundle:
    """Create an open_clip model by ``name`` with weights from ``pretrained``.

    Args:
        name: any open_clip architecture (``ViT-B-16``, ``ViT-L-14``, ``paper-tiny``...), or
            ``"hf-hub:ORG/REPO"``, an open_clip model on the Hugging Face hub (architecture
            from its ``open_clip_config.json``, weights from its ``open_clip_*`` weights file).
        pretrained: ``None`` (random init; for ``hf-hub:`` the repository's weights), an
            open_clip tag (``"openai"``; needs the hub), a local checkpoint path
            (``weights_only=True``), or an open_clip state dict.
        context_length: 77, or 248 for Long-CLIP text (``docs/methods/himo-clip.md#long-text``).
        long_text: at 248 tokens, ``"residual"`` (Long-CLIP: frozen stretched base +
            trainable residual, default) or ``"stretch"`` (stretched table, all trainable).
        keep: positions kept unchanged by the stretch (Long-CLIP: 20).
        cache_dir: Hugging Face cache for tags and ``hf-hub:`` models (default: the hub's own,
            ``HF_HUB_CACHE`` / ``HF_HOME``).
        source: the file a given state dict was read from, named in errors.
    """
    _check_model_name(name, pretrained, cache_dir)
    hub = {} if cache_dir is None else {"cache_dir": str(cache_dir)}
    if context_length not in (BASE_CONTEXT_LENGTH, LONG_CONTEXT_LENGTH):
        raise ValueError(f"context_length must be 77 or 248; got {context_length}")
    if context_length == LONG_CONTEXT_LENGTH and long_text not in ("stretch", "residual"):
        raise ValueError(
            f"long_text must be 'stretch' or 'residual' at 248 tokens; got {long_text!r}"
        )
    given = isinstance(pretrained, dict)
    local = given or (pretrained is not None and _is_local_path(str(pretrained)))
    tag = None if (pretrained is None or local) else str(pretrained)
    if tag is not None:
        check_activation(name, tag)
    model, preprocess = _open_clip_model(name, tag, hub)
    if local:
        _load_local(model, pretrained, context_length, long_text, keep, source)
    elif context_length == LONG_CONTEXT_LENGTH:
        extend_context(model, long_text, keep)
    tokenizer = open_clip.get_tokenizer(name, context_length=context_length, **hub)
    return CLIPBundle(model.to(device), preprocess, tokenizer)


# --------------------------------------------------------------------------- features


def encode_image(model: nn.Module, images: Tensor) -> Tensor:
    """(batch, 3, H, W) images -> (batch, dim) L2-normalised image features."""
    return F.normalize(model.encode_image(images), dim=-1)


def used_length(tokens: Tensor) -> int:
    """Positions up to the batch's last non-padding token (padding id 0): the columns a causal
    text encoder with end-of-text pooling reads."""
    used = (tokens != 0).any(dim=0).nonzero()
    return int(used[-1]) + 1 if len(used) else 1


def trims_padding(model: nn.Module) -> bool:
    """Whether ``model``'s text features ignore the padding after each text's end token: an
    open_clip ``CLIP`` whose text attention is causal and which pools at the end token."""
    return (
        isinstance(getattr(model, "attn_mask", None), Tensor)
        and getattr(model, "text_pool_type", None) in ("argmax", "eos")
        and all(hasattr(model, name) for name in ("token_embedding", "transformer", "ln_final"))
    )


def text_features(model: nn.Module, tokens: Tensor) -> Tensor:
    """(batch, context) token ids -> (batch, dim) unnormalised text features, reading only
    the batch's :func:`used_length` columns.

    With causal attention a position sees only those before it, and the end-token pooling
    reads the end token, so the padding after it changes nothing: the result is open_clip's
    ``model.encode_text(tokens)`` (the plain formula; compared in
    ``tests/test_text_trim.py``) at a fraction of the cost for texts much shorter than the
    context (the world's long captions fill about 165 of 248 positions). Models outside
    :func:`trims_padding` take the plain path.
    """
    if not trims_padding(model):
        return model.encode_text(tokens)
    n = used_length(tokens)
    tokens = tokens[:, :n]
    cast = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens).to(cast) + model.positional_embedding[:n].to(cast)
    x = model.ln_final(model.transformer(x, attn_mask=model.attn_mask[:n, :n]))
    eos = getattr(model, "text_eos_id", None)
    x = text_global_pool(x, tokens, model.text_pool_type, eos_token_id=eos)
    projection = model.text_projection
    if projection is None:
        return x
    return projection(x) if isinstance(projection, nn.Linear) else x @ projection


def encode_text(model: nn.Module, tokens: Tensor) -> Tensor:
    """(batch, context) token ids -> (batch, dim) L2-normalised text features."""
    return F.normalize(text_features(model, tokens), dim=-1)


def similarity(image_features: Tensor, text_features: Tensor) -> Tensor:
    """Cosine similarity (n_images, n_texts) of L2-normalised features (inference:
    ``docs/methods/himo-clip.md#inference``)."""
    return image_features @ text_features.T


@torch.no_grad()
def embed_texts(model: nn.Module, tokenizer, texts: list[str], batch_size: int = 256) -> Tensor:
    """Tokenise and encode ``texts`` in batches; returns (len(texts), dim) normalised features."""
    device = next(model.parameters()).device
    chunks = [
        encode_text(model, tokenizer(texts[i : i + batch_size]).to(device))
        for i in range(0, len(texts), batch_size)
    ]
    return torch.cat(chunks).cpu()


@torch.no_grad()
def embed_images(model: nn.Module, preprocess, images: list, batch_size: int = 256) -> Tensor:
    """Preprocess PIL images (or take ready tensors) and encode them in batches."""
    device = next(model.parameters()).device
    out = []
    for i in range(0, len(images), batch_size):
        batch = images[i : i + batch_size]
        pixels = torch.stack([im if isinstance(im, Tensor) else preprocess(im) for im in batch])
        out.append(encode_image(model, pixels.to(device)))
    return torch.cat(out).cpu()
