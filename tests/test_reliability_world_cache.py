"""The rendered world cache is checked against what was rendered, not trusted as it lies on
disk: each of its files carries a checksum, and an edited, cut short or missing one is refused
naming the file (delete the folder to render it anew); a cache that would not fit its file
system is refused before it is written."""

from __future__ import annotations

import json
from collections import namedtuple

import pytest

from paperlib.atomic import DiskFullError
from paperlib.data import world_cache
from paperlib.data.world import WorldDataset
from paperlib.data.world_cache import CachedWorldDataset, cached_world
from paperlib.engine import loop
from tests.engine_helpers import tiny_config

WORLD = {"seed": 1, "size": 8, "image_size": 32}


@pytest.fixture
def folder(tmp_path):
    return cached_world(tmp_path, twins=False, **WORLD)


def _open(tmp_path):
    return CachedWorldDataset(tmp_path, **WORLD)


def test_an_edited_caption_is_refused_not_trained_on(tmp_path, folder):
    """The case: captions edited in texts.json were trained on silently."""
    texts = json.loads((folder / "texts.json").read_text())
    texts["caption"][3] = "a caption nobody rendered"
    (folder / "texts.json").write_text(json.dumps(texts))
    with pytest.raises(ValueError, match=r"texts\.json: its content differs from the checksum"):
        _open(tmp_path)
    data = {"size": 8, "seed": 1, "cache_dir": str(tmp_path)}
    raw = tiny_config("clip", tmp_path / "run", data=data, train={"batch_size": 4})
    with pytest.raises(ValueError, match=rf"{folder}.*delete the folder"):
        loop.train(raw)


@pytest.mark.parametrize("name", ["texts.json", "images.npy", "boxes.npy"])
def test_a_file_cut_short_is_named(tmp_path, folder, name):
    """The case: a truncated texts.json gave an unnamed JSON error or an IndexError."""
    data = (folder / name).read_bytes()
    (folder / name).write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=rf"{name}"):
        _open(tmp_path)


def test_a_missing_or_unreadable_checksum_record_is_named(tmp_path, folder):
    (folder / "checksums.json").write_text("{half")
    with pytest.raises(ValueError, match=r"checksums\.json: expected the checksums"):
        _open(tmp_path)


def test_a_cache_rendered_before_checksums_is_rendered_anew(tmp_path, monkeypatch):
    monkeypatch.setattr(world_cache, "FORMAT", 2)
    old = cached_world(tmp_path, twins=False, **WORLD)
    (old / "checksums.json").unlink()  # as the code before checksums wrote it
    monkeypatch.undo()
    served = _open(tmp_path)
    assert served.folder != old and (served.folder / "checksums.json").is_file()
    assert served[5]["caption"] == WorldDataset(WORLD["seed"], 8, 32)[5]["caption"]


def test_a_cache_too_large_for_its_file_system_is_refused_before_writing(tmp_path, monkeypatch):
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(world_cache.shutil, "disk_usage", lambda path: Usage(10, 10, 1000))
    with pytest.raises(DiskFullError, match=r"data\.cache_dir .*takes [\d.e-]+ GB, and .* free"):
        cached_world(tmp_path, twins=False, **WORLD)
    assert not [p for p in tmp_path.iterdir() if p.name != ".lock"]
