"""The training world rendered once: images, box crops and texts of a ``WorldDataset`` on disk.

Drawing a world sample (rendering, crops, every text) costs about half a millisecond on one
core, which a small model's training step pays for each of its samples, every epoch, in every
run that trains on that world. :func:`cached_world` renders a world's training items once into
``<cache_dir>/<key>/`` (``images.npy`` and ``boxes.npy``: uint8 ``(n, side, side, 3)``;
``texts.json``: captions, short captions, box phrases, labels) and :class:`CachedWorldDataset`
serves the same items as :class:`~paperlib.data.world.WorldDataset` from memory-mapped arrays:
the transform sees the identical PIL images, so a run trains on exactly the tensors it would
have drawn (``tests/test_world_cache.py``). A cache holds the first ``size`` items of its world;
a run asking for fewer items reads a prefix. The folder appears atomically (rendered under a
temporary name, then renamed; a rendering abandoned by a crash is removed), and concurrent
builders wait on one lock per cache folder. The folder's name carries a fingerprint of what
the world draws, so a change to the world's code renders it anew; ``checksums.json`` holds the
SHA-256 of each file as it was rendered, checked whenever the cache is opened, so an edited or
damaged file (a caption changed by hand, a file cut short) is refused by name rather than
trained on (delete the folder to render it anew).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset

from paperlib.atomic import DiskFullError
from paperlib.data.sample import pil_to_tensor
from paperlib.data.world import WorldDataset, world_fingerprint
from paperlib.state_files import file_sha256

FORMAT = 3  # bump when the cached fields, the world's texts or the folder's files change
TEXT_FIELDS = ("caption", "short_caption", "box_phrase")
TEXT_KEYS = (*TEXT_FIELDS, "label", "labels", "id")  # texts.json: one list each, a row per item
CHECKSUMS = "checksums.json"  # SHA-256 of each file below, written once the rest is rendered
CACHED_FILES = ("images.npy", "boxes.npy", "texts.json")


def _stem(seed: int, image_size: int, twins: bool) -> str:
    """The world's name in a cache folder: what it is drawn from, and what it draws
    (:func:`~paperlib.data.world.world_fingerprint`), so a changed world is rendered anew."""
    fingerprint = world_fingerprint(seed, image_size, twins)
    return (
        f"world-v{FORMAT}-seed{seed}-px{image_size}"
        + ("-twins" if twins else "")
        + f"-{fingerprint}"
    )


def cache_key(seed: int, size: int, image_size: int, twins: bool) -> str:
    """Folder name of a world's cache (everything the rendered items depend on)."""
    return f"{_stem(seed, image_size, twins)}-n{size}"


def _render(folder: Path, world: WorldDataset) -> None:
    """Render every item of ``world`` (untransformed PIL images) into ``folder``."""
    n, side = len(world), world.world.image_size
    images = np.lib.format.open_memmap(folder / "images.npy", "w+", np.uint8, (n, side, side, 3))
    boxes = np.lib.format.open_memmap(folder / "boxes.npy", "w+", np.uint8, (n, side, side, 3))
    texts: dict[str, list[Any]] = {k: [] for k in TEXT_KEYS}
    for i in range(n):
        item = world.raw_item(i)
        images[i], boxes[i] = np.asarray(item["image"]), np.asarray(item["box_image"])
        for key in texts:
            texts[key].append(item[key])
    images.flush(), boxes.flush()
    del images, boxes
    (folder / "texts.json").write_text(json.dumps(texts))
    sums = {name: file_sha256(folder / name) for name in CACHED_FILES}
    (folder / CHECKSUMS).write_text(json.dumps({"format": FORMAT, "sha256": sums}))


def verify_cache(folder: Path) -> None:
    """ValueError naming the file when a file of the cache ``folder`` differs from the
    checksum :func:`_render` recorded (or the record is missing or unreadable)."""
    remedy = f"delete the folder {folder} to render it anew"
    try:
        recorded = json.loads((folder / CHECKSUMS).read_text())["sha256"]
        expected = {name: recorded[name] for name in CACHED_FILES}
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{folder / CHECKSUMS}: expected the checksums of {', '.join(CACHED_FILES)} written "
            f"when the cache was rendered; found none that reads ({type(error).__name__}); "
            f"{remedy}"
        ) from None
    for name, want in expected.items():
        found = file_sha256(folder / name) if (folder / name).is_file() else "no file"
        if found != want:
            raise ValueError(
                f"{folder / name}: its content differs from the checksum recorded when the "
                f"cache was rendered (sha256 {str(want)[:12]}..., found {found[:12]}...): "
                f"edited or damaged since; {remedy}"
            )


def cached_world(cache_dir: str | Path, seed: int, size: int, image_size: int, twins: bool) -> Path:
    """The cache folder of that world, rendered now unless a cache of it with at least
    ``size`` items exists (the largest such cache is returned)."""
    root = Path(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time; released on close or death
        _remove_abandoned(root)
        found = _existing(root, seed, size, image_size, twins)
        if found is not None:
            return found
        folder = root / cache_key(seed, size, image_size, twins)
        check_space(root, size, image_size)
        partial = root / f".{folder.name}.partial-{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        _render(partial, WorldDataset(seed, size, image_size, twins=twins))
        os.replace(partial, folder)
        return folder


def check_space(root: Path, size: int, image_size: int) -> None:
    """:class:`~paperlib.atomic.DiskFullError` naming ``root`` (``data.cache_dir``) when its
    file system has less room than the two arrays of ``size`` items at ``image_size`` px
    take, before any of it is written."""
    needed = 2 * size * image_size * image_size * 3
    free = shutil.disk_usage(root).free
    if free < needed:
        raise DiskFullError(
            errno.ENOSPC,
            f"data.cache_dir {root}: rendering {size:,} world items at {image_size} px takes "
            f"{needed / 1e9:.3g} GB, and its file system has {free / 1e9:.3g} GB free; free "
            "space, choose another data.cache_dir, or a smaller data.size",
        )


def _remove_abandoned(root: Path) -> None:
    """Delete partial renderings whose builder process is gone (a crash mid-render)."""
    for partial in root.glob(".*.partial-*"):
        pid = partial.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(partial, ignore_errors=True)


def _existing(root: Path, seed: int, size: int, image_size: int, twins: bool) -> Path | None:
    """The largest finished cache of the world with at least ``size`` items, or None."""
    stem = _stem(seed, image_size, twins)
    sizes = {
        int(n): folder
        for folder in root.glob(f"{stem}-n*")
        if (n := folder.name.removeprefix(f"{stem}-n")).isdigit() and (folder / CHECKSUMS).is_file()
    }
    fits = [n for n in sizes if n >= size]
    return sizes[max(fits)] if fits else None


LFS_POINTER = b"version https://git-lfs"


def cached_array(path: Path, rows: int, side: int) -> np.ndarray:
    """``path`` memory-mapped: a uint8 ``(rows, side, side, 3)`` array as :func:`_render`
    wrote it, else ValueError naming the file, what was expected and what was found (a
    git-lfs pointer, another file, another shape)."""
    expected = f"expected a uint8 array of shape {(rows, side, side, 3)} (the folder's name)"
    with open(path, "rb") as handle:
        head = handle.read(len(LFS_POINTER))
    if head == LFS_POINTER:
        raise ValueError(
            f"{path} is a git-lfs pointer, not the array (run git lfs pull, or delete the "
            f"folder {path.parent} to render it anew); {expected}"
        )
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        reason = str(err).splitlines()[0][:120] if str(err) else type(err).__name__
        found = "not a .npy file" if "pickle" in str(err) else reason
        raise ValueError(f"{path} is unreadable ({found}); {expected}") from None
    if not isinstance(array, np.ndarray) or array.shape != (rows, side, side, 3):
        found = getattr(array, "shape", type(array).__name__)
        raise ValueError(
            f"{path} holds shape {found}; {expected}; delete the folder to render it anew"
        )
    if array.dtype != np.uint8:
        raise ValueError(f"{path} holds dtype {array.dtype}; {expected}")
    return array


def cached_texts(path: Path, rows: int) -> dict[str, list[Any]]:
    """``texts.json`` as :func:`_render` wrote it: a list of ``rows`` entries under each of
    :data:`TEXT_KEYS`; ValueError naming the file and the key otherwise."""
    try:
        texts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path} is unreadable ({type(error).__name__}: {error})"[:300]) from None
    for key in TEXT_KEYS:
        value = texts.get(key) if isinstance(texts, dict) else None
        if not isinstance(value, list) or len(value) != rows:
            found = f"{len(value)} entries" if isinstance(value, list) else type(value).__name__
            raise ValueError(
                f"{path}: {key!r} must list {rows} entries (one per item); found {found}"
            )
    return texts


class CachedWorldDataset(Dataset):
    """The training items of ``WorldDataset(seed, size, image_size, twins=twins)`` read from
    :func:`cached_world`'s folder (built on first use): ``image`` and ``box_image`` through
    ``transform``, the texts and labels as the world writes them."""

    def __init__(
        self,
        cache_dir: str | Path,
        seed: int,
        size: int,
        image_size: int = 64,
        transform: Callable[[Image.Image], torch.Tensor] | None = None,
        twins: bool = False,
    ) -> None:
        folder = cached_world(cache_dir, seed, size, image_size, twins)
        self.size, self.folder = size, folder
        self.transform = transform or pil_to_tensor
        rows = int(folder.name.rsplit("-n", 1)[-1])
        self.images = cached_array(folder / "images.npy", rows, image_size)
        self.boxes = cached_array(folder / "boxes.npy", rows, image_size)
        verify_cache(folder)
        self.texts = cached_texts(folder / "texts.json", rows)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> dict[str, Any]:
        if not 0 <= index < self.size:
            raise IndexError(f"index {index} out of range for a cached world of size {self.size}")
        item: dict[str, Any] = {k: self.texts[k][index] for k in (*TEXT_FIELDS, "label", "id")}
        item["image"] = self.transform(Image.fromarray(np.array(self.images[index])))
        item["box_image"] = self.transform(Image.fromarray(np.array(self.boxes[index])))
        item["labels"] = torch.tensor(self.texts["labels"][index], dtype=torch.long)
        return item
