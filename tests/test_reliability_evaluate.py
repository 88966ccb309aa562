"""The evaluate entry point (``engine.evaluation.evaluate`` and ``python -m paperlib.evaluate``)
on inputs the first pass did not try: the embedding cache follows the data it was computed
from (a prefix list, a HierarCaps row, an image file), a corrupt or foreign cache file is
recomputed; an output folder that cannot be written, or that holds files an evaluation did not
write, is refused before anything loads and left as it was; an architecture without weights,
a decompression bomb and an unknown device are refused by name, from the command line with
exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from PIL import Image

from paperlib.engine import evaluation as ev
from paperlib.engine import loop
from paperlib.engine.config import ConfigError
from paperlib.evaluate import main as evaluate_main
from paperlib.metrics.results import read_result
from tests.engine_helpers import tiny_config

SENTENCES = ["A red square is on the left.", "A blue circle is under it.", "Grass is behind."]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("trained") / "run"
    loop.train(tiny_config("clip", out, train={"steps": 1}))
    return out


def _image(path: Path, colour, size: int = 8) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (size, size), colour).save(path)


def _himo_docci(root: Path, n: int = 6) -> Path:
    rows = []
    for i in range(n):
        _image(root / "images" / f"test_{i:05d}.jpg", (40 * i, 90, 160))
        prefixes = [" ".join([f"Scene {i}.", *SENTENCES[:k]]) for k in range(4)]
        rows.append(
            {"img_path": f"test_{i:05d}.jpg", "caption": prefixes, "raw_caption": prefixes[-1]}
        )
    (root / "himo_docci_data.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _urban1k(root: Path, n: int = 6) -> Path:
    for i in range(n):
        _image(root / "image" / f"{i}.jpg", (40 * i, 20, 200))
        (root / "caption").mkdir(parents=True, exist_ok=True)
        (root / "caption" / f"{i}.txt").write_text(" ".join(SENTENCES) + f" Number {i}.\n")
    return root


def _metrics(out: Path, dataset: str) -> dict:
    return read_result(out / f"{dataset}.json")["metrics"]


def _evaluate(run: Path, out: Path, benchmark: str, root: Path, **options):
    return ev.evaluate(run, [benchmark], output_dir=out, roots={benchmark: root}, **options)


# --------------------------------------------------------------------------- the cache


def test_the_cache_follows_an_edited_prefix_list(run, tmp_path):
    root = _himo_docci(tmp_path / "data")
    _evaluate(run, tmp_path / "out", "himo-docci", root)
    rows = [json.loads(line) for line in (root / "himo_docci_data.json").read_text().splitlines()]
    for row in rows:  # still cumulative, but two of the four prefixes gone: other scores
        row["caption"] = [row["caption"][0], row["caption"][-1]]
    (root / "himo_docci_data.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _evaluate(run, tmp_path / "out", "himo-docci", root)
    _evaluate(run, tmp_path / "fresh", "himo-docci", root)
    assert _metrics(tmp_path / "out", "himo-docci") == _metrics(tmp_path / "fresh", "himo-docci")
    assert len(list((tmp_path / "out" / "cache").rglob("himo-docci-*.pt"))) == 2


def test_the_cache_follows_a_replaced_image(run, tmp_path):
    root = _urban1k(tmp_path / "data")
    _evaluate(run, tmp_path / "out", "urban1k", root)
    for i in range(6):
        _image(root / "image" / f"{i}.jpg", (255 - 40 * i, 200, 10 * i), size=16)
    _evaluate(run, tmp_path / "out", "urban1k", root)
    _evaluate(run, tmp_path / "fresh", "urban1k", root)
    assert _metrics(tmp_path / "out", "urban1k") == _metrics(tmp_path / "fresh", "urban1k")
    assert len(list((tmp_path / "out" / "cache").rglob("urban1k-*.pt"))) == 2


def test_the_cache_follows_an_edited_hierarcaps_row(run, tmp_path):
    root = tmp_path / "hc"
    rows = []
    for i in range(6):
        _image(root / "test_imgs" / f"COCO_val2014_{i + 1:012d}.jpg", (40 * i, 10, 10))
        chain = f"a thing => a red thing {i} => a red thing on grass {i} => a red ball {i}"
        rows.append(f"{i},{chain},http://x/COCO_val2014_{i + 1:012d}.jpg")
    csv = root / "hierarcaps_test.csv"
    csv.write_text("id,captions,image_url\n" + "\n".join(rows) + "\n")
    options = {"hierarcaps_root": root}
    ev.evaluate(run, ["hierarcaps"], output_dir=tmp_path / "out", **options)
    csv.write_text(csv.read_text().replace("a thing =>", "an object =>"))
    ev.evaluate(run, ["hierarcaps"], output_dir=tmp_path / "out", **options)
    ev.evaluate(run, ["hierarcaps"], output_dir=tmp_path / "fresh", **options)
    assert _metrics(tmp_path / "out", "hierarcaps") == _metrics(tmp_path / "fresh", "hierarcaps")


@pytest.mark.parametrize("damage", ["cut short", "another format", "not a dict"])
def test_an_unusable_cache_file_is_named_and_recomputed(run, tmp_path, capsys, damage):
    root = _urban1k(tmp_path / "data")
    _evaluate(run, tmp_path / "out", "urban1k", root)
    expected = _metrics(tmp_path / "out", "urban1k")
    (cached,) = (tmp_path / "out" / "cache").rglob("urban1k-*.pt")
    if damage == "cut short":
        cached.write_bytes(cached.read_bytes()[:100])
    else:
        torch.save({"image": torch.zeros(2, 3)} if damage == "another format" else [1], cached)
    capsys.readouterr()
    _evaluate(run, tmp_path / "out", "urban1k", root)
    assert f"cache {cached} is unusable" in capsys.readouterr().out
    assert _metrics(tmp_path / "out", "urban1k") == expected
    assert ev.CACHE_FORMAT == torch.load(cached, weights_only=True)["cache_format"]  # rewritten


# --------------------------------------------------------------------------- the output folder


@pytest.mark.parametrize("layout", ["a file", "under a file"])
def test_an_output_that_cannot_hold_results_is_named_before_the_model_loads(
    run, tmp_path, capsys, monkeypatch, layout
):
    monkeypatch.setattr(ev, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    (tmp_path / "out").write_text("the user's file\n")
    target = tmp_path / "out" if layout == "a file" else tmp_path / "out" / "results"
    assert evaluate_main([str(run), "--output", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evaluate: output_dir (--output): cannot write to {target}")
    assert "Traceback" not in err and (tmp_path / "out").read_text() == "the user's file\n"


USERS = {
    "world-long.json": "my notes, not results\n",
    "notes.json": '{"mine": 1}\n',
    "results.md": "# My results\n\nwritten by hand\n",
}


@pytest.mark.parametrize("name", sorted(USERS))
def test_files_an_evaluation_did_not_write_are_refused_and_kept(run, tmp_path, capsys, name):
    out = tmp_path / "out"
    out.mkdir()
    (out / name).write_text(USERS[name])
    argv = [str(run), "--output", str(out), "--benchmarks", "world-long", "--world-size", "8"]
    assert evaluate_main(argv) == 2
    err = capsys.readouterr().err
    assert f"holds {name}, which an evaluation did not write" in err and "Traceback" not in err
    assert [p.name for p in out.iterdir()] == [name] and (out / name).read_text() == USERS[name]


def test_an_evaluation_replaces_its_own_results(run, tmp_path):
    out = tmp_path / "out"
    for _ in range(2):  # the second run finds its own files (and its cache) and replaces them
        rows = ev.evaluate(run, ["world-long"], output_dir=out, world_size=8)
    assert rows[0]["metrics"] == _metrics(out, "world-long")
    with pytest.raises(ConfigError, match=r"holds world-short\.json, which an evaluation"):
        (out / "world-short.json").write_text("{}")
        ev.evaluate(run, ["world-short"], output_dir=out, world_size=8)


# --------------------------------------------------------------------------- refusals


def test_an_open_clip_architecture_without_weights_is_refused(tmp_path, capsys):
    argv = ["--model", "openclip:paper-tiny", "--output", str(tmp_path / "out")]
    assert evaluate_main([*argv, "--benchmarks", "world-long", "--world-size", "8"]) == 2
    err = capsys.readouterr().err
    assert "names an architecture, not weights: give --pretrained TAG" in err
    assert "--checkpoint FILE" in err and "Traceback" not in err
    assert not list((tmp_path / "out").glob("*.json"))


def test_a_decompression_bomb_is_named_or_counted_as_skipped(run, tmp_path, capsys, monkeypatch):
    # 40 x 40 = 1600 pixels > 2 x 600 (the model's 32 x 32 input stays below the limit)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 600)
    root = _urban1k(tmp_path / "data")
    _image(root / "image" / "2.jpg", (1, 2, 3), size=40)
    argv = [str(run), "--benchmarks", "urban1k", "--root", f"urban1k={root}"]
    assert evaluate_main([*argv, "--output", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert f"image {root / 'image' / '2.jpg'} is missing or unreadable" in err
    assert "DecompressionBombError" in err and "Traceback" not in err
    assert evaluate_main([*argv, "--output", str(tmp_path / "b"), "--skip-bad-images"]) == 0
    skipped = read_result(tmp_path / "b" / "urban1k.json")["skipped_images"]
    assert skipped["count"] == 1 and skipped["examples"][0][0] == str(root / "image" / "2.jpg")


def test_an_unknown_device_is_named(run, tmp_path, capsys):
    argv = [str(run), "--output", str(tmp_path / "o"), "--device", "tpu:7"]
    assert evaluate_main(argv) == 2
    err = capsys.readouterr().err
    assert "device (--device)='tpu:7' is not a device" in err and "Traceback" not in err


def test_a_hierarcaps_folder_without_its_layout_is_refused_before_the_model_loads(
    run, tmp_path, monkeypatch
):
    empty = tmp_path / "hierarcaps"
    empty.mkdir()
    monkeypatch.setattr(ev, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    with pytest.raises(FileNotFoundError, match=r"benchmark 'hierarcaps': root .* lacks"):
        ev.evaluate(run / "last.pt", output_dir=tmp_path / "out", benchmarks=["hierarcaps"],
                    hierarcaps_root=empty)  # fmt: skip
