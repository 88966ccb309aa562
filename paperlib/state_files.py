"""Reading torch files of tensors safely: ``weights_only=True`` and errors that name the file;
and the SHA-256 of a file's bytes (:func:`file_sha256`), which names a file's content.

Every checkpoint reader of the package goes through :func:`load_tensor_file` (the raw object)
and, for model weights, :func:`tensor_state` (a flat ``{name: tensor}``). A failure names the
file, says what was found and what was ``expected``; it never passes on torch's advice to load
with ``weights_only=False`` (which would run whatever code the file's pickle holds).
"""

from __future__ import annotations

import hashlib
import pickle
import re
import zipfile
from pathlib import Path
from typing import Any

import torch
from torch import Tensor


def unreadable_reason(err: BaseException) -> str:
    """Why ``torch.load(..., weights_only=True)`` failed, in one line, without torch's advice
    to retry with ``weights_only`` off (which would run whatever code a pickle holds)."""
    text = str(err)
    if isinstance(err, pickle.UnpicklingError):
        found = re.search(r"unsupported GLOBAL ([\w.]+)", text)
        if found:
            return (
                f"it pickles Python objects (global {found.group(1)}), which a weights-only "
                "load refuses: unpickling them can run code"
            )
        found = re.search(r"WeightsUnpickler error:\s*(.+)", text)
        detail = f": {found.group(1).strip()}" if found else ""
        return f"not a torch.save file: its pickle stream is unreadable{detail}"
    if isinstance(err, RuntimeError) and "zip archive" in text:
        return "not a complete torch.save archive (truncated or corrupted)"
    if isinstance(err, EOFError):
        return "the file ends before any data (empty or cut short)"
    detail = f"{type(err).__name__}: {text.splitlines()[0][:200] if text else ''}"
    return detail if isinstance(err, OSError) else f"not a torch.save file ({detail})"


def load_tensor_file(
    path: str | Path, expected: str, map_location: str | torch.device = "cpu"
) -> Any:
    """``torch.load(path, weights_only=True)``; FileNotFoundError or ValueError naming ``path``
    and ``expected`` (what the caller reads the file as) when it is missing or unreadable."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}; {expected}")
    damaged = damaged_record(path)
    if damaged:
        raise ValueError(f"could not read {path} ({damaged}); {expected}")
    try:
        return torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # noqa: BLE001 - every reader failure becomes one named error
        raise ValueError(f"could not read {path} ({unreadable_reason(err)}); {expected}") from None


def damaged_record(path: Path) -> str:
    """Why the zip archive ``torch.save`` wrote at ``path`` does not match the CRC-32 each of
    its records carries (a byte changed since it was written), or '' when it matches or the
    file is no zip archive (an older torch format, left to ``torch.load``)."""
    try:
        if not zipfile.is_zipfile(path):
            return ""
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as err:
        return f"its zip archive is damaged: {type(err).__name__}: {str(err)[:160]}"
    if bad is None:
        return ""
    return f"record {bad!r} does not match the CRC-32 stored when it was written: corrupted"


def tensor_state(
    obj: Any, path: str | Path, expected: str, prefixes: tuple[str, ...] = ("module.",)
) -> dict[str, Tensor]:
    """The ``{name: tensor}`` state in ``obj`` (nested under ``state_dict`` or ``model`` or
    bare), with each of ``prefixes`` that every key carries removed (``module.``: DDP);
    ValueError naming ``path``, what was found and ``expected`` otherwise."""
    for key in ("state_dict", "model"):
        if isinstance(obj, dict) and isinstance(obj.get(key), dict):
            obj = obj[key]
    if not isinstance(obj, dict) or not obj:
        found = "an empty dict" if isinstance(obj, dict) else f"a {type(obj).__name__}"
        raise ValueError(
            f"{path} does not hold a state dict of tensors (found {found}); {expected}"
        )
    odd = next(
        ((k, v) for k, v in obj.items() if not (isinstance(k, str) and isinstance(v, Tensor))), None
    )
    if odd is not None:
        raise ValueError(
            f"{path} does not hold a state dict of tensors (entry {odd[0]!r} is a "
            f"{type(odd[1]).__name__}); {expected}"
        )
    for prefix in prefixes:
        if all(k.startswith(prefix) for k in obj):
            obj = {k.removeprefix(prefix): v for k, v in obj.items()}
    return obj


def nonfinite_entry(state: dict[str, Tensor]) -> str:
    """The first floating-point tensor of ``state`` that holds NaN or inf, as ``'key' (n of
    m values)``; '' when every one is finite."""
    for key, value in state.items():
        if isinstance(value, Tensor) and value.is_floating_point():
            bad = int((~torch.isfinite(value)).sum())
            if bad:
                return f"{key!r} ({bad} of {value.numel()} values)"
    return ""


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
