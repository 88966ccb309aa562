"""Robust image loading: odd modes become RGB, broken files are skipped and counted."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image
from torch.utils.data import DataLoader

from paperlib.data.images import LoadReport, load_rgb, scan_images, to_rgb
from paperlib.data.sample import Sample, SampleDataset, collate_samples


@pytest.fixture
def images(tmp_path):
    rng = np.random.default_rng(0)
    grey = rng.integers(0, 256, (8, 10), dtype=np.uint8)
    rgba = rng.integers(0, 256, (8, 10, 4), dtype=np.uint8)
    paths = {}
    paths["grey"] = tmp_path / "grey.png"
    Image.fromarray(grey, "L").save(paths["grey"])
    paths["rgba"] = tmp_path / "rgba.png"
    Image.fromarray(rgba, "RGBA").save(paths["rgba"])
    paths["cmyk"] = tmp_path / "cmyk.jpg"
    Image.new("CMYK", (8, 8), (255, 0, 0, 0)).save(paths["cmyk"], quality=100)
    palette = Image.new("P", (6, 6), 1)
    palette.putpalette([0, 0, 0, 10, 200, 30] + [0] * 762)
    paths["palette"] = tmp_path / "palette.png"
    palette.save(paths["palette"])
    paths["deep"] = tmp_path / "deep.png"
    Image.fromarray(np.full((4, 4), 40000, dtype=np.uint16)).save(paths["deep"])
    good = tmp_path / "good.jpg"
    Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(good, quality=90)
    paths["good"] = good
    paths["truncated"] = tmp_path / "truncated.jpg"
    paths["truncated"].write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    paths["garbage"] = tmp_path / "garbage.jpg"
    paths["garbage"].write_bytes(b"this is not an image at all")
    paths["missing"] = tmp_path / "missing.jpg"
    return paths, grey, rgba


def test_odd_modes_become_correct_rgb(images):
    paths, grey, rgba = images
    report = LoadReport()
    out = {k: load_rgb(paths[k], report) for k in ("grey", "rgba", "cmyk", "palette", "deep")}
    assert all(im is not None and im.mode == "RGB" for im in out.values())
    assert np.array_equal(np.asarray(out["grey"]), np.repeat(grey[:, :, None], 3, axis=2))
    alpha = rgba[:, :, 3:].astype(float) / 255
    expected = rgba[:, :, :3] * alpha + 255 * (1 - alpha)
    assert np.abs(np.asarray(out["rgba"], dtype=float) - expected).max() <= 1.0
    assert np.abs(np.asarray(out["cmyk"], dtype=int) - [0, 255, 255]).max() <= 3
    assert (np.asarray(out["palette"]) == [10, 200, 30]).all()
    assert (np.asarray(out["deep"]) == 40000 // 256).all()
    assert report.loaded == 5 and report.num_skipped == 0
    assert dict(report.converted) == {"L": 1, "RGBA": 1, "CMYK": 1, "P": 1, "I;16": 1}


def test_rgba_composited_on_chosen_background():
    image = Image.new("RGBA", (2, 2), (255, 0, 0, 0))
    assert np.asarray(to_rgb(image, background=(0, 0, 255))).tolist() == [[[0, 0, 255]] * 2] * 2


def test_broken_files_are_skipped_with_reasons(images):
    paths, _, _ = images
    report = LoadReport()
    ok = scan_images([paths[k] for k in ("good", "truncated", "garbage", "missing")], report)
    assert ok == [True, False, False, False]
    assert report.loaded == 1 and report.num_skipped == 3
    skipped = dict(report.skipped)
    assert "truncated" in skipped[str(paths["truncated"])]
    assert str(paths["missing"]) in skipped and "1 images loaded" in report.summary()


def test_dataloader_workers_skip_bad_images_and_count_them(images):
    paths, _, _ = images
    keys = ["good", "garbage", "grey", "truncated", "rgba", "palette"]
    samples = [Sample(id=k, image=paths[k], caption=f"caption {k}") for k in keys]
    dataset = SampleDataset(samples, transform=lambda im: torch.zeros(3, 4, 4))
    loader = DataLoader(dataset, batch_size=3, num_workers=2, collate_fn=collate_samples)
    batches = list(loader)
    assert sum(b["skipped"] for b in batches) == 2
    assert sorted(i for b in batches for i in b.get("id", [])) == sorted(
        ["good", "grey", "rgba", "palette"]
    )
    assert dataset[1] is None and dataset.report.num_skipped == 1
