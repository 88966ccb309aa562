"""Released models of both papers' tables, read into paperlib's evaluation modules.

``RELEASED_MODELS`` names each public checkpoint family once: the format its file is in
(``longclip``: Long-CLIP's ``.pt``; ``meru`` / ``hycoclip``: their repositories' state
dicts, ``meru-clip`` the Euclidean CLIP baselines of MERU's model zoo; ``openclip``: an open_clip architecture with a pretrained tag or file), and the rows
of ``tables/published.json`` that report it. Besides the registry names, ``openclip:NAME``
(any open_clip architecture, weights from a tag or a local file) and ``hf-hub:ORG/REPO``
(an open_clip model on the Hugging Face hub) are accepted.

The loaded model is wrapped in the training modules of ``engine.methods`` (``embed_image``,
``embed_text``, ``geometry``), so every benchmark scores it exactly as a trained run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from paperlib.engine.methods import EuclideanModule, HyperbolicModule
from paperlib.models.clip import create_model
from paperlib.models.longclip_checkpoint import load_longclip_checkpoint
from paperlib.models.meru_checkpoint import load_meru_checkpoint


@dataclass(frozen=True)
class ReleasedModel:
    """One released model: ``family`` (its file format), ``published`` rows
    ((table, model, arch) in ``tables/published.json``), the open_clip ``architecture`` and
    default ``tag`` of the ``openclip`` family, and where the weights are released."""

    name: str
    family: str
    published: tuple[tuple[str, str, str], ...] = ()
    architecture: str | None = None
    tag: str | None = None
    weights: str = ""


def _hycoclip_rows(model: str, arch: str) -> tuple[tuple[str, str, str], ...]:
    rows = [("hycoclip_zeroshot", model, arch)] if arch in ("S", "B") else []
    if model == "HyCoCLIP":
        rows.append(("argent_main", model, arch))
    return tuple(rows)


_HIMO_ROWS = ("himo_retrieval", "himo_monotonicity")

# one released model per entry: name, family, published rows, open_clip name and tag, weights
# fmt: off
RELEASED_MODELS: dict[str, ReleasedModel] = {m.name: m for m in (
    ReleasedModel("clip-vit-b16", "openclip", (("himo_retrieval", "CLIP", "B/16"),),
                  "ViT-B-16-quickgelu", "openai", "open_clip tag 'openai'"),
    ReleasedModel("clip-vit-l14", "openclip", tuple((t, "CLIP", "L/14") for t in _HIMO_ROWS),
                  "ViT-L-14-quickgelu", "openai", "open_clip tag 'openai'"),
    ReleasedModel("longclip-b16", "longclip", (("himo_retrieval", "Long-CLIP", "B/16"),),
                  weights="Long-CLIP's README: longclip-B.pt"),
    ReleasedModel("longclip-l14", "longclip", tuple((t, "Long-CLIP", "L/14") for t in _HIMO_ROWS),
                  weights="Long-CLIP's README: longclip-L.pt"),
    ReleasedModel("himo-b16", "longclip", (("himo_retrieval", "HiMo", "B/16"),),
                  weights="HiMo-CLIP's release, in Long-CLIP's format"),
    ReleasedModel("himo-l14", "longclip", tuple((t, "HiMo", "L/14") for t in _HIMO_ROWS),
                  weights="HiMo-CLIP's release, in Long-CLIP's format"),
    *(ReleasedModel(f"meru-vit-{a.lower()}", "meru", _hycoclip_rows("MERU", a),
                    weights=f"MERU's model zoo: meru_vit_{a.lower()}.pth") for a in "SBL"),
    *(ReleasedModel(f"meru-clip-vit-{a.lower()}", "meru-clip", _hycoclip_rows("CLIP", a),
                    weights=f"MERU's model zoo: clip_vit_{a.lower()}.pth") for a in "SBL"),
    *(ReleasedModel(f"hycoclip-vit-{a.lower()}", "hycoclip", _hycoclip_rows("HyCoCLIP", a),
                    weights=f"HyCoCLIP's model zoo: hycoclip_vit_{a.lower()}.pth") for a in "SBL"),
)}
# fmt: on


def released_model(name: str) -> ReleasedModel:
    """The registry entry of ``name``, or an ``openclip:NAME`` / ``hf-hub:ID`` entry;
    ValueError listing the accepted forms otherwise."""
    if name in RELEASED_MODELS:
        return RELEASED_MODELS[name]
    if name.startswith("openclip:") and name.removeprefix("openclip:"):
        return ReleasedModel(name, "openclip", architecture=name.removeprefix("openclip:"))
    if name.startswith("hf-hub:") and name.removeprefix("hf-hub:"):
        return ReleasedModel(name, "openclip", architecture=name)
    raise ValueError(
        f"unknown model {name!r}: expected one of {sorted(RELEASED_MODELS)}, "
        "'openclip:<open_clip architecture>' or 'hf-hub:<org>/<repo>'"
    )


def _need_file(entry: ReleasedModel, checkpoint: str | Path | None) -> Path:
    if checkpoint is None:
        raise FileNotFoundError(
            f"model {entry.name!r} needs --checkpoint FILE (a {entry.family} checkpoint; "
            f"released as {entry.weights or 'its repository documents'})"
        )
    path = Path(checkpoint).expanduser()
    if not path.is_file():
        raise FileNotFoundError(
            f"checkpoint not found: {path} (model {entry.name!r} reads a "
            f"{entry.family} checkpoint file)"
        )
    return path


def load_released(name: str, checkpoint: str | Path | None, device: str | torch.device = "cpu"):
    """(module, preprocess, tokenizer) of released model ``name`` with weights ``checkpoint``
    (a file; for the ``openclip`` family also a pretrained tag, or nothing for its default
    tag or an ``hf-hub:`` model), in eval mode on ``device``."""
    entry = released_model(name)
    if entry.family == "openclip":
        pretrained = checkpoint if checkpoint is not None else entry.tag
        hub = entry.architecture.startswith("hf-hub:")
        if hub:
            pretrained = None  # the hub repository holds the weights
        elif pretrained is None:
            raise ValueError(
                f"model {name!r} names an architecture, not weights: give --pretrained TAG (an "
                "open_clip pretrained tag, e.g. openai) or --checkpoint FILE; without either it "
                "would score a randomly initialised model"
            )
        bundle = create_model(entry.architecture, pretrained)
        module = EuclideanModule(bundle.model, "clip")
        preprocess, tokenizer = bundle.preprocess, bundle.tokenizer
    elif entry.family == "longclip":
        path = _need_file(entry, checkpoint)

        bundle = load_longclip_checkpoint(path)
        module = EuclideanModule(bundle.model, "clip")
        preprocess, tokenizer = bundle.preprocess, bundle.tokenizer
    else:
        path = _need_file(entry, checkpoint)

        family = "clip" if entry.family == "meru-clip" else entry.family
        model, preprocess, tokenizer = load_meru_checkpoint(path, family=family)
        module = (
            EuclideanModule(model, "clip") if family == "clip" else HyperbolicModule(model, family)
        )
    return module.to(device).eval(), preprocess, tokenizer
