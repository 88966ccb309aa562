"""Evaluation protocols as the references run them: the retrieval transform and COCO caption
set per model family, PEP's kept rows restricting every HierarCaps metric."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms as T

from paperlib.data.images import squeezed
from paperlib.engine import benchmarks as bm
from paperlib.engine import evaluation as ev
from paperlib.engine.loop import train
from paperlib.metrics import hierarchy
from tests.engine_helpers import tiny_config


def test_family_defaults_and_choices():
    assert bm.EvalProtocol.reference("meru") == bm.EvalProtocol("squeeze", "all")
    assert bm.EvalProtocol.reference("clip") == bm.EvalProtocol("crop", "first-5")
    assert bm.EvalProtocol.reference("meru", "crop").retrieval_transform == "crop"
    with pytest.raises(ValueError, match="retrieval_transform must be one of"):
        bm.EvalProtocol("stretch")
    with pytest.raises(ValueError, match="family must be one of"):
        bm.EvalProtocol.reference("siglip")


def test_squeeze_resizes_without_cropping():
    crop = T.Compose([T.Resize(16), T.CenterCrop(16), T.ToTensor()])
    image = Image.new("RGB", (64, 16), (0, 0, 0))
    image.paste((255, 255, 255), (0, 0, 8, 16))  # a white band at the left edge
    assert crop(image)[0, 8, 0] == 0  # the centre crop cuts the band away
    squeezed_image = squeezed(crop, 16)(image)
    assert squeezed_image.shape == (3, 16, 16) and squeezed_image[0, 8, 0] > 0.9


def _coco(root, n=5, per_image=6):
    rng = np.random.default_rng(0)
    images = [{"id": i + 1, "file_name": f"{i + 1:012d}.jpg"} for i in range(n)]
    for image in images:
        (root / "val2017").mkdir(parents=True, exist_ok=True)
        pixels = rng.integers(0, 255, (12, 30, 3), dtype=np.uint8)  # wide: crop ≠ squeeze
        Image.fromarray(pixels).save(root / "val2017" / image["file_name"])
    annotations = [
        {"image_id": i + 1, "caption": f"picture {i} caption {k}"}
        for i in range(n)
        for k in range(per_image)
    ]
    (root / "annotations").mkdir()
    (root / "annotations" / "captions_val2017.json").write_text(
        json.dumps({"images": images, "annotations": annotations})
    )
    return images, annotations


@pytest.mark.parametrize("transform, captions", [("crop", "first-5"), ("squeeze", "all")])
def test_coco_follows_the_transform_and_caption_set(tmp_path, transform, captions):
    images, annotations = _coco(tmp_path / "coco")
    run = train(tiny_config("clip", tmp_path / "run", train={"steps": 1})).output_dir
    (row,) = ev.evaluate(
        run,
        ["coco"],
        output_dir=tmp_path / "out",
        roots={"coco": tmp_path / "coco"},
        retrieval_transform=transform,
        captions=captions,
    )
    assert row["protocol"] == {"family": "clip", "image_transform": transform, "captions": captions}
    module, preprocess, tokenizer, _ = ev.load_trained(run)
    prep = preprocess if transform == "crop" else squeezed(preprocess, 32)
    with torch.no_grad():
        pixels = torch.stack(
            [prep(Image.open(tmp_path / "coco" / "val2017" / i["file_name"])) for i in images]
        )
        img = torch.nn.functional.normalize(module.embed_image(pixels), dim=-1)
        keep = 5 if captions == "first-5" else 6
        texts = [a for a in annotations if int(a["caption"].split()[-1]) < keep]
        texts.sort(key=lambda a: a["image_id"])
        txt = torch.nn.functional.normalize(
            module.embed_text(tokenizer([a["caption"] for a in texts])), dim=-1
        )
    owner = torch.tensor([a["image_id"] - 1 for a in texts])
    scores = txt @ img.T
    rank = (scores > scores[torch.arange(len(texts)), owner][:, None]).sum(1)
    assert row["metrics"]["image_retrieval_recall@1"] == pytest.approx(
        float((rank < 1).float().mean())
    )


def test_kept_rows_restrict_dcorr_and_hierarchical_retrieval():
    torch.manual_seed(0)
    n, levels, dim = 8, 4, 6
    emb = {
        "image": torch.randn(n, dim),
        "chain": torch.randn(n, levels, dim),
        "empty": torch.randn(dim),
        "roots": [f"root {i % 3}" for i in range(n)],
        "chain_texts": [f"text {i}.{j}" for i in range(n) for j in range(levels)],
    }
    kept = (1, 4, 6)
    scoring = bm.Scoring("euclidean", 0.0, bm.PEPProtocol(kept=kept))
    got = bm.benchmark_metrics(emb, "hierarcaps", scoring)["hierarcaps"]
    rows = list(kept)
    expected = hierarchy.hierarcaps_metrics(
        emb["image"][rows],
        emb["chain"][rows],
        "euclidean",
        root=emb["empty"],
        caption_texts=[f"text {i}.{j}" for i in rows for j in range(levels)],
    )
    assert got == pytest.approx(expected)
    every = bm.benchmark_metrics(emb, "hierarcaps", bm.Scoring("euclidean"))["hierarcaps"]
    assert every != pytest.approx(expected)
    with pytest.raises(ValueError, match="kept ids \\[9\\] are outside the 8"):
        bm.kept_rows(emb, (9,))


def test_protocol_record_names_pep_and_prompts():
    pep = bm.PEPProtocol(kept=(0, 1), negatives="shared", pool_size=50)
    record = ev.protocol_record("hierarcaps", bm.EvalProtocol(), pep, None, "meru")
    assert record["pep"] == {"kept": 2, "negatives": "shared", "pool": 50, "pool_ids": False}
    zs = ev.protocol_record("sun397", bm.EvalProtocol(), pep, ev.REFERENCE_PROMPTS, "clip")
    assert zs["prompt_set"] == "meru-hycoclip" and zs["split"].startswith("every image")
    assert zs["image_transform"] == "crop"
