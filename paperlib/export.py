"""Export a trained run's weights for other tools:
``python -m paperlib.export RUN --format open_clip|meru|hycoclip|longclip OUT``.

``RUN`` is a training run folder or its ``last.pt``; only the weights leave, in the target's
own key layout (no optimiser, RNG or config):

- ``open_clip`` (Euclidean runs): the folder ``OUT`` in open_clip's ``local-dir:`` and Hugging
  Face hub layout, ``open_clip_config.json`` (``model_cfg``, ``preprocess_cfg``) and
  ``open_clip_pytorch_model.bin`` (a bare state dict), read by
  ``open_clip.create_model_and_transforms("local-dir:OUT")`` and
  ``open_clip.get_tokenizer("local-dir:OUT")``. Long-CLIP's frozen table and trainable residual
  (``docs/methods/himo-clip.md#long-text``) become one 248-row ``positional_embedding`` holding
  what each position reads, so the plain open_clip model computes the same features.
- ``longclip`` (Euclidean runs at 248 tokens, OpenAI CLIP's towers): the file ``OUT``, a bare
  state dict in Long-CLIP's layout (``positional_embedding`` and ``positional_embedding_res``),
  as Long-CLIP's and HiMo-CLIP's code save and load it (``models/longclip_checkpoint.py``).
- ``meru``, ``hycoclip`` (hyperbolic runs on HyCoCLIP's towers, ``model.name:
  hycoclip-vit-*``): the file ``OUT``, ``{"model": state}`` in the official layout
  (``models/meru_checkpoint.py``; both repositories read the same keys), with the
  normalisation the run trained with in ``pixel_mean`` / ``pixel_std``.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path

import open_clip
import torch
from torch import Tensor, nn

from paperlib.atomic import atomic_write_text
from paperlib.engine.checkpoint import atomic_save
from paperlib.engine.evaluation import load_trained
from paperlib.models.clip import LONG_CONTEXT_LENGTH
from paperlib.models.longclip_checkpoint import HEAD_WIDTH
from paperlib.models.meru_checkpoint import to_official_state_dict
from paperlib.untrusted import error_text

FORMATS = ("open_clip", "meru", "hycoclip", "longclip")
OPENCLIP_WEIGHTS = "open_clip_pytorch_model.bin"
OPENCLIP_CONFIG = "open_clip_config.json"


class ExportError(ValueError):
    """A run that the asked format cannot hold; the message names the run and why."""


def read_positions(clip: nn.Module) -> Tensor:
    """The text positional table each position reads: the residual copy from ``keep`` on
    where the model has Long-CLIP's split, else the table itself."""
    base = clip.positional_embedding.detach()
    residual = getattr(clip, "positional_embedding_res", None)
    if residual is None:
        return base.clone()
    mask = clip.positional_residual_mask.bool().squeeze(-1)
    return torch.where(mask[:, None], residual.detach(), base)


def openclip_state(clip: nn.Module) -> dict[str, Tensor]:
    """open_clip's state dict of ``clip``: its own keys, one positional table
    (:func:`read_positions`)."""
    state = {k: v.detach().clone() for k, v in clip.state_dict().items()}
    state.pop("positional_embedding_res", None)
    state["positional_embedding"] = read_positions(clip)
    return state


def openclip_config(clip: nn.Module, name: str) -> dict:
    """``open_clip_config.json``: the architecture's ``model_cfg`` at the run's context
    length and the model's ``preprocess_cfg``."""
    model_cfg = copy.deepcopy(open_clip.get_model_config(name))
    model_cfg["text_cfg"]["context_length"] = int(clip.positional_embedding.shape[0])
    preprocess = dict(open_clip.get_model_preprocess_cfg(clip))
    return {"model_cfg": model_cfg, "preprocess_cfg": preprocess}


def longclip_state(clip: nn.Module, name: str = "the model") -> dict[str, Tensor]:
    """Long-CLIP's layout of ``clip``; ExportError where Long-CLIP's loader would read another
    model (it assumes 248 positions, QuickGELU and 64-wide heads in both towers)."""
    rows = clip.positional_embedding.shape[0]
    visual = getattr(clip, "visual", None)
    text_heads = clip.transformer.resblocks[0].attn.num_heads if hasattr(clip, "transformer") else 0
    blocks = getattr(getattr(visual, "transformer", None), "resblocks", None)
    problems = [
        f"{rows} text positions (Long-CLIP: {LONG_CONTEXT_LENGTH})" if rows != LONG_CONTEXT_LENGTH else "",
        "no ViT image tower with a proj" if blocks is None or getattr(visual, "proj", None) is None else "",
        "GELU (Long-CLIP: QuickGELU)" if blocks is not None and not _quick_gelu(clip) else "",
        f"text heads of width {clip.transformer.width // max(text_heads, 1)} (Long-CLIP: {HEAD_WIDTH})"
        if text_heads and clip.transformer.width // text_heads != HEAD_WIDTH
        else "",
        "image heads not 64 wide" if blocks is not None and _head_width(blocks) != HEAD_WIDTH else "",
    ]  # fmt: skip
    problems = [p for p in problems if p]
    if problems:
        raise ExportError(
            f"{name} cannot be written in Long-CLIP's layout: {'; '.join(problems)}; export "
            "--format open_clip instead"
        )
    state = {k: v.detach().clone() for k, v in clip.state_dict().items()}
    state.setdefault("positional_embedding_res", state["positional_embedding"].clone())
    return state


def _quick_gelu(clip: nn.Module) -> bool:
    activation = clip.transformer.resblocks[0].mlp.gelu
    return type(activation).__name__ == "QuickGELU"


def _head_width(blocks: nn.Module) -> int:
    attention = blocks[0].attn
    return attention.embed_dim // attention.num_heads


def _normalisation(preprocess) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The mean and std of the run's image transform (its ``Normalize``)."""
    for step in getattr(preprocess, "transforms", []):
        if hasattr(step, "mean") and hasattr(step, "std"):
            return tuple(float(v) for v in step.mean), tuple(float(v) for v in step.std)
    raise ExportError("the run's image transform has no Normalize step to record")


def export_run(run: str | Path, format: str, out: str | Path) -> Path:
    """Write ``run``'s weights to ``out`` in ``format`` (module docstring); returns ``out``."""
    if format not in FORMATS:
        raise ExportError(f"--format: expected one of {list(FORMATS)}, got {format!r}")
    module, preprocess, _, config = load_trained(run)
    label = f"{run} ({config.method}, {config.model.name})"
    hyperbolic = module.geometry == "hyperbolic"
    if hyperbolic != (format in ("meru", "hycoclip")):
        wanted = "meru or hycoclip" if hyperbolic else "open_clip or longclip"
        raise ExportError(f"{label} is a {module.geometry} model: export it as {wanted}")
    out = Path(out)
    if format == "open_clip":
        out.mkdir(parents=True, exist_ok=True)
        atomic_save(openclip_state(module.clip), out / OPENCLIP_WEIGHTS)
        text = json.dumps(openclip_config(module.clip, config.model.name), indent=2)
        atomic_write_text(out / OPENCLIP_CONFIG, text + "\n")
        return out
    if format == "longclip":
        return atomic_save(longclip_state(module.clip, label), out)
    mean, std = _normalisation(preprocess)
    try:
        state = to_official_state_dict(module.model, pixel_mean=mean, pixel_std=std)
    except ValueError as error:
        raise ExportError(
            f"{label}: the official MERU/HyCoCLIP layout holds HyCoCLIP's towers "
            f"(model.name hycoclip-vit-s/b/l) only ({error})"
        ) from None
    return atomic_save({"model": state}, out)


HOW_TO_LOAD = {
    "open_clip": "open_clip.create_model_and_transforms('local-dir:{out}')",
    "longclip": "paperlib.models.longclip_checkpoint.load_longclip_checkpoint('{out}') or "
    "Long-CLIP's longclip.load",
    "meru": "paperlib.models.meru_checkpoint.load_meru_checkpoint('{out}') or MERU's code",
    "hycoclip": "load_meru_checkpoint('{out}', family='hycoclip') or HyCoCLIP's code",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paperlib.export", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("run", type=Path, help="a training run folder or its last.pt")
    parser.add_argument("out", type=Path, help="the folder (open_clip) or file to write")
    parser.add_argument("--format", required=True, choices=FORMATS)
    args = parser.parse_args(argv)
    try:
        written = export_run(args.run, args.format, args.out)
    except (OSError, ValueError) as error:
        print(f"export: {error_text(error)}", file=sys.stderr)
        return 2
    print(
        f"[export] {args.format}: {written}; load with {HOW_TO_LOAD[args.format].format(out=written)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
