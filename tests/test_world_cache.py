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
