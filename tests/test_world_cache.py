"""The rendered-once training world serves exactly the items the world draws."""

from __future__ import annotations

import torch

from paperlib.data.world import WorldDataset
from paperlib.data.world_cache import CachedWorldDataset, cached_world


def _same(a: dict, b: dict) -> None:
    for key in ("caption", "short_caption", "box_phrase", "label", "id"):
        assert a[key] == b[key], key
    for key in ("image", "box_image", "labels"):
        assert torch.equal(a[key], b[key]), key


def test_cached_items_equal_drawn_items(tmp_path):
    for twins in (False, True):
        drawn = WorldDataset(seed=3, size=40, image_size=32, twins=twins)
        cached = CachedWorldDataset(tmp_path, seed=3, size=40, image_size=32, twins=twins)
        for i in (0, 1, 17, 39):
            _same(drawn[i], cached[i])


def test_a_larger_cache_serves_a_prefix_and_is_built_once(tmp_path):
    big = cached_world(tmp_path, seed=1, size=30, image_size=32, twins=False)
    again = cached_world(tmp_path, seed=1, size=12, image_size=32, twins=False)
    assert again == big
    small = CachedWorldDataset(tmp_path, seed=1, size=12, image_size=32)
    assert len(small) == 12 and small.folder == big
    _same(small[11], WorldDataset(seed=1, size=12, image_size=32)[11])
    other = cached_world(tmp_path, seed=1, size=12, image_size=32, twins=True)
    assert other != big  # twins are another world
    assert not list(tmp_path.glob(".*partial*"))


def test_a_changed_world_is_rendered_anew_and_abandoned_renderings_go(tmp_path, monkeypatch):
    from paperlib.data import world_cache

    first = cached_world(tmp_path, seed=2, size=8, image_size=32, twins=False)
    monkeypatch.setattr(world_cache, "world_fingerprint", lambda *a, **k: "changedworld")
    second = cached_world(tmp_path, seed=2, size=8, image_size=32, twins=False)
    assert second != first and second.name.endswith("changedworld-n8")
    abandoned = tmp_path / ".world-x.partial-999999999"  # no such process
    abandoned.mkdir()
    cached_world(tmp_path, seed=2, size=8, image_size=32, twins=False)
    assert not abandoned.exists()
