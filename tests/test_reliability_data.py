"""Odd but valid inputs give correct results: 1×1 images in every pixel mode become the right
RGB colour and a finite, constant model input; a HierarCaps limit that would evaluate nothing
is refused by the evaluate command before any model is loaded. Hostile images are skipped and
counted with a bounded reason: a decompression bomb (more pixels than Pillow's limit) and a
truncated file."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from paperlib.data.images import LoadReport, load_rgb
from paperlib.engine.config import load_config
from paperlib.engine.methods import build_module
from paperlib.evaluate import main as evaluate_main
from tests.engine_helpers import tiny_config

ONE_PIXEL = [  # (mode, value, file suffix, RGB after loading)
    ("RGB", (200, 10, 10), "png", (200, 10, 10)),
    ("L", 77, "png", (77, 77, 77)),
    ("LA", (10, 128), "png", (132, 132, 132)),  # half transparent over white
    ("RGBA", (1, 2, 3, 0), "png", (255, 255, 255)),  # fully transparent: the white background
    ("CMYK", (0, 255, 0, 0), "jpg", (255, 0, 255)),
    ("I;16", 40000, "png", (156, 156, 156)),  # 16-bit scaled to 8 (40000 // 256)
    ("1", 1, "png", (255, 255, 255)),
    ("P", 1, "png", (10, 200, 30)),
]


@pytest.fixture(scope="module")
def preprocess(tmp_path_factory):
    config = load_config(tiny_config("clip", tmp_path_factory.mktemp("unused")))
    return build_module(config)[1]


@pytest.mark.parametrize("mode, value, suffix, rgb", ONE_PIXEL, ids=[m[0] for m in ONE_PIXEL])
def test_one_pixel_images_in_every_mode_load_as_their_colour(
    tmp_path, preprocess, mode, value, suffix, rgb
):
    image = Image.new(mode, (1, 1), value)
    if mode == "P":
        image.putpalette([0, 0, 0, 10, 200, 30] + [0] * 762)
    path = tmp_path / f"one.{suffix}"
    image.save(path, **({"quality": 100} if suffix == "jpg" else {}))
    report = LoadReport()
    loaded = load_rgb(path, report)
    assert loaded is not None and loaded.mode == "RGB" and loaded.size == (1, 1)
    assert np.abs(np.asarray(loaded, dtype=int)[0, 0] - rgb).max() <= 1
    assert report.loaded == 1 and report.num_skipped == 0
    pixels = preprocess(loaded)
    assert pixels.shape == (3, 32, 32) and bool(torch.isfinite(pixels).all())
    # resizing one pixel gives a constant image: each channel is the normalised colour
    mean = torch.tensor([0.48145466, 0.4578275, 0.40821073])
    std = torch.tensor([0.26862954, 0.26130258, 0.27577711])
    expected = (torch.tensor(np.asarray(loaded)[0, 0] / 255.0, dtype=torch.float32) - mean) / std
    torch.testing.assert_close(pixels, expected[:, None, None].expand(3, 32, 32), atol=1e-5, rtol=0)


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_the_evaluate_command_refuses_a_hierarcaps_limit_that_keeps_nothing(
    tmp_path, capsys, limit
):
    out = tmp_path / "results"
    argv = [
        str(tmp_path / "no-run"),
        "--output",
        str(out),
        "--benchmarks",
        "hierarcaps",
        "--hierarcaps-root",
        str(tmp_path),
        "--hierarcaps-limit",
        limit,
    ]
    assert evaluate_main(argv) == 2
    err = capsys.readouterr().err
    assert f"limit of 'hierarcaps': expected at least 1 sample (or no limit), got {limit}" in err
    assert not out.exists()  # refused before the checkpoint or any data was read


def test_a_decompression_bomb_is_skipped_with_its_reason(tmp_path, monkeypatch):
    from PIL import Image as PILImage

    monkeypatch.setattr(PILImage, "MAX_IMAGE_PIXELS", 50)  # 12 x 12 = 144 > 2 x 50 pixels
    path = tmp_path / "bomb.png"
    Image.new("RGB", (12, 12), (1, 2, 3)).save(path)
    report = LoadReport()
    assert load_rgb(path, report) is None and report.loaded == 0
    ((name, reason),) = report.skipped
    assert name == str(path) and reason.startswith(
        "DecompressionBombError: Image size (144 pixels)"
    )
    Image.new("RGB", (10, 10), (1, 2, 3)).save(path)  # 100 pixels: within the limit
    assert load_rgb(path, report) is not None


def test_the_reason_of_a_skip_is_bounded(tmp_path):
    from paperlib.data.images import REASON_LENGTH

    path = tmp_path / "cut.png"
    Image.new("RGB", (64, 64), (9, 9, 9)).save(path)
    path.write_bytes(path.read_bytes()[:70])
    report = LoadReport()
    assert load_rgb(path, report) is None
    assert report.skipped[0][0] == str(path) and len(report.skipped[0][1]) <= REASON_LENGTH + 40
