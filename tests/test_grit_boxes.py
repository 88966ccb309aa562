"""GRIT's released annotations (img2dataset shards) become HyCoCLIP's box-crop layout: each
kept box's crop shows what the fabricated image holds there, phrases are the caption's spans,
small and repeated boxes are dropped, box-less samples left out and counted; CC3M's grounding
joins by url; the converted shards train ARGENT."""

from __future__ import annotations

import json

import numpy as np
import pytest

from paperlib.data.grit_boxes import BoxRule, convert, grounded_boxes, main, square_crop
from paperlib.data.webdataset import read_shards
from paperlib.engine.loop import train
from tests.engine_helpers import tiny_config
from tests.real_formats import GRIT_SIZE, grit_annotation_shards, grit_sample


def _pixel(image, x: float, y: float) -> np.ndarray:
    return np.asarray(image, dtype=int)[int(y), int(x)]


def _check_converted(out, count: int) -> list:
    samples = list(read_shards(sorted(str(p) for p in out.glob("*.tar"))))
    expected = [i for i in range(count) if i % 4 != 3]
    assert [int(s.id) for s in samples] == expected
    for sample in samples:
        text, boxes = grit_sample(int(sample.id))
        kept = [b for b in boxes if b.kept]
        assert sample.caption == text
        assert [b.phrase for b in sample.boxes] == [b.phrase for b in kept]
        for box, truth in zip(sample.boxes, kept):
            crop = box.image
            assert crop.size == (224, 224)
            # the crop's centre shows the block's colour; its short side is padded with black
            assert np.abs(_pixel(crop, 112, 112) - truth.colour).max() <= 12
            width, height = GRIT_SIZE
            x1, y1, x2, y2 = truth.box
            wide = (x2 - x1) * width > (y2 - y1) * height
            assert _pixel(crop, *((112, 2) if wide else (2, 112))).max() <= 12
            assert box.box == pytest.approx((x1 * width, y1 * height, x2 * width, y2 * height))
    return samples


def test_grit_annotations_become_box_crops_with_their_phrases(tmp_path):
    grit_annotation_shards(tmp_path / "grit-raw", 8)
    summary = convert(tmp_path / "grit-raw", tmp_path / "grit", progress=False)
    _check_converted(tmp_path / "grit", 8)
    assert (summary.read, summary.written, summary.without_box, summary.boxes) == (8, 6, 2, 12)
    # per written sample: the dot and the repeated referring expression; per left-out one: the
    # dot twice (its noun chunk and its referring expression)
    assert summary.dropped_boxes == 6 * 2 + 2 * 2
    assert json.loads((tmp_path / "grit" / "conversion.json").read_text())["written"] == 6


def test_cc3m_grounding_joins_its_shards_by_url(tmp_path):
    lines = grit_annotation_shards(tmp_path / "cc3m-raw", 8, inline=False)
    (tmp_path / "grounding.jsonl").write_text(lines)
    code = main([str(tmp_path / "cc3m-raw"), str(tmp_path / "cc3m"),
                 "--annotations", str(tmp_path / "grounding.jsonl")])  # fmt: skip
    assert code == 0
    _check_converted(tmp_path / "cc3m", 8)
    bare = convert(tmp_path / "cc3m-raw", tmp_path / "no-boxes", progress=False)
    assert bare.written == 0 and bare.without_box == 8  # CC3M alone has no boxes


def test_the_box_rule_and_the_square_crop_by_hand():
    meta = {"noun_chunks": [[0, 5, 0.0, 0.0, 0.5, 0.5, 0.9], [6, 9, 0.0, 0.0, 0.1, 0.1, 0.9]],
            "ref_exps": [[0, 9, 0.0, 0.0, 1.0, 1.0, 0.1]]}  # fmt: skip
    boxes, dropped = grounded_boxes(meta, "green cat", (100, 40), BoxRule(500, 0.5), "here")
    assert boxes == [("green", (0.0, 0.0, 50.0, 20.0))] and dropped == 2  # small; low score
    from PIL import Image

    image = Image.new("RGB", (100, 40), (200, 0, 0))
    crop = square_crop(image, (0.0, 0.0, 50.0, 20.0), 50)
    pixels = np.asarray(crop)
    assert pixels[25, 25].tolist() == [200, 0, 0] and pixels[2, 25].tolist() == [0, 0, 0]


def test_bad_sources_are_named_not_traced(tmp_path, capsys):
    assert main([str(tmp_path / "nope"), str(tmp_path / "out")]) == 2
    assert "nope" in capsys.readouterr().err
    grit_annotation_shards(tmp_path / "raw", 2)
    assert main([str(tmp_path / "raw"), str(tmp_path / "out"), "--annotations", "x.jsonl"]) == 2
    assert "--annotations: x.jsonl does not exist" in capsys.readouterr().err


def test_the_converted_shards_train_argent(tmp_path):
    grit_annotation_shards(tmp_path / "grit-raw", 8)
    convert(tmp_path / "grit-raw", tmp_path / "grit", progress=False)
    data = {"dataset": "webdataset", "root": str(tmp_path / "grit"), "shuffle_buffer": 4}
    result = train(
        tiny_config("argent", tmp_path / "run", data=data, train={"steps": 2, "batch_size": 4})
    )
    assert result.status == "finished" and result.step == 2
