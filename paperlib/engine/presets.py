"""Parameter presets that inherit another: an ablation states only what differs from its base.

A preset (``params/<notebook>/<name>.yaml``) may name ``base: OTHER``, a preset of the same
folder. It is read as its base's parameters (themselves resolved the same way) with its own
on top: the ``config`` mapping merged key by key, the ``overrides`` list appended to the
base's (so they apply after them), any other parameter replaced. A chain that comes back to a
preset it started from, or a base that is not a preset name of the folder, is a ValueError
naming the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from paperlib.engine.config import deep_merge
from paperlib.untrusted import brief

BASE_KEY = "base"
PRESET_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


def base_path(path: Path, name: Any) -> Path:
    """The file of the preset ``name`` beside ``path``; ValueError for anything but the name of
    an existing preset there."""
    if not isinstance(name, str) or not PRESET_NAME.fullmatch(name):
        raise ValueError(
            f"{path}: {BASE_KEY} must be a preset name of {path.parent}, got {brief(name)}"
        )
    found = path.parent / f"{name}.yaml"
    if not found.is_file():
        presets = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise ValueError(
            f"{path}: {BASE_KEY} {name!r} is not a preset there ({', '.join(presets)})"
        )
    return found


def inherit(
    path: Path, params: dict[str, Any], read: Callable[[Path], dict[str, Any]], seen: tuple = ()
) -> dict[str, Any]:
    """``params`` (read from ``path``) on top of its base's, resolved recursively; ``read``
    reads a preset file as a mapping (without resolving it)."""
    if BASE_KEY not in params:
        return params
    chain = (*seen, Path(path).resolve())
    parent_path = base_path(Path(path), params[BASE_KEY])
    if parent_path.resolve() in chain:
        names = " -> ".join(p.stem for p in (*chain, parent_path))
        raise ValueError(f"{path}: its {BASE_KEY} chain comes back to itself ({names})")
    parent = inherit(parent_path, read(parent_path), read, chain)
    own = {k: v for k, v in params.items() if k != BASE_KEY}
    merged = {**parent, **own}
    if isinstance(parent.get("config"), dict) and isinstance(own.get("config"), dict):
        merged["config"] = deep_merge(parent["config"], own["config"])
    if "overrides" in own:
        merged["overrides"] = [*(parent.get("overrides") or []), *(own["overrides"] or [])]
    return merged
