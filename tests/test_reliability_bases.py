"""A bad base (``model.init``) is refused naming its file and the key, with what was expected:
NaN or inf weights, a tensor of another shape, a missing or an extra key, the weights of another
model size, a NaN or infinite stored curvature; in a paperlib checkpoint or an open_clip state
file alike, through the train command (exit 2, one line, no traceback)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from paperlib.engine import loop
from paperlib.train import main as train_main
from tests.engine_helpers import tiny_config


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """A Euclidean base in open_clip's layout and a hyperbolic paperlib checkpoint (0 steps)."""
    folder = tmp_path_factory.mktemp("bases")
    clip = loop.train(tiny_config("clip", folder / "clip", train={"steps": 0})).output_dir
    state = torch.load(clip / "last.pt", weights_only=True)["model"]
    torch.save({k.removeprefix("clip."): v for k, v in state.items()}, folder / "open_clip.pt")
    meru = loop.train(tiny_config("meru", folder / "meru", train={"steps": 0})).output_dir
    return {"clip": folder / "open_clip.pt", "meru": meru / "last.pt"}


def _edited(bases, tmp_path, method: str, edit) -> str:
    state = torch.load(bases[method], weights_only=True)
    edit(state["model"] if "model" in state else state)
    path = tmp_path / f"{method}-base.pt"
    torch.save(state, path)
    return str(path)


def _refused(tmp_path, capsys, method: str, init: str, *names: str) -> str:
    config = tmp_path / "c.json"
    raw = tiny_config(method, tmp_path / "run", model={"init": init}, train={"steps": 1})
    config.write_text(json.dumps(raw))
    assert train_main([str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "model.init" in err and init in err, err
    for name in names:
        assert name in err, err
    assert not (tmp_path / "run").exists()  # refused before the run folder is claimed
    return err


def _nan(key):
    return lambda s: s[key].fill_(math.nan)


def _reshaped(key):
    return lambda s: s.__setitem__(key, s[key][..., :3].clone())


def _other_width(key):
    return lambda s: s.__setitem__(key, torch.zeros(*(2 * d for d in s[key].shape)))


CASES = [
    ("clip", _nan("text_projection"), ("'text_projection'", "NaN or inf", "finite weights")),
    ("clip", _reshaped("text_projection"), ("text_projection: file", "shape mismatch")),
    ("clip", lambda s: s.pop("ln_final.weight"), ("missing keys ['ln_final.weight']",)),
    ("clip", lambda s: s.__setitem__("extra.w", torch.zeros(2)), ("unexpected keys ['extra.w']",)),
    ("clip", _other_width("positional_embedding"), ("positional_embedding", "'paper-tiny'")),
    ("meru", _nan("model.clip.text_projection"), ("'text_projection'", "NaN or inf")),
    ("meru", _reshaped("model.clip.text_projection"), ("text_projection: file",)),
    ("meru", lambda s: s.pop("model.clip.ln_final.weight"), ("missing keys",)),
    ("meru", _nan("model.log_curv"), ("'model.log_curv'", "NaN or inf")),
    ("meru", lambda s: s["model.log_curv"].fill_(math.inf), ("'model.log_curv'",)),
    ("meru", lambda s: s.__setitem__("model.visual_alpha", torch.zeros(3)),
     ("model.visual_alpha holds shape (3,); expected one value",)),
]  # fmt: skip


@pytest.mark.parametrize(("method", "edit", "names"), CASES)
def test_a_bad_base_is_refused_naming_its_file_and_key(
    bases, tmp_path, capsys, method, edit, names
):
    """The cases: each of these was refused without the file's path, or (NaN weights, a NaN
    curvature) only at the first step, naming features or a curvature."""
    _refused(tmp_path, capsys, method, _edited(bases, tmp_path, method, edit), *names)
