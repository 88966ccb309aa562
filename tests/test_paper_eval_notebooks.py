"""One papermill call per model writes every benchmark of its paper's tables and the
beside-published table, from tiny copies of every benchmark in its published layout."""

from __future__ import annotations

import csv
import json
import re

import pytest

import paperlib.notebooks as notebooks_module
from paperlib.evaluate import run_or_train
from paperlib.notebooks import REPO_ROOT, load_parameters, preset_path
from paperlib.notebooks import main as notebooks_main
from tests.engine_helpers import tiny_config
from tests.suite_fixtures import MD5_CHECKED, put
from tests.test_engine_evaluate_real import write_datasets

pytestmark = pytest.mark.slow

SITE = """
# torchvision's md5 checks of CIFAR, STL-10 and Flowers-102 pass for the tiny copies
import importlib

for name in {names!r}:
    importlib.import_module(name).check_integrity = lambda *args, **kwargs: True
"""


def write_hierarcaps(root):
    rows = []
    for i in range(6):
        put(root / "test_imgs" / f"COCO_val2014_{i + 1:012d}.jpg", i)
        chain = [f"level {k} of scene {i % 3 if k == 0 else i}" for k in range(4)]
        rows.append({"id": str(i), "captions": " => ".join(chain),
                     "image_url": f"http://x/COCO_val2014_{i + 1:012d}.jpg"})  # fmt: skip
    with open(root / "hierarcaps_test.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "captions", "image_url"])
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper_eval")
    roots = write_datasets(root / "data")
    (root / "data" / "hierarcaps").mkdir()
    write_hierarcaps(root / "data" / "hierarcaps")
    roots["hierarcaps"] = root / "data" / "hierarcaps"
    site = root / "site"
    site.mkdir()
    names = {f"torchvision.datasets.{m}" for m in MD5_CHECKED}
    (site / "sitecustomize.py").write_text(SITE.format(names=sorted(names)))
    return root, {k: str(v) for k, v in roots.items()}, site


def _run(preset_notebook, preset, checkpoint, out, roots, site, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", f"{site}:{REPO_ROOT}")
    # the executed copy goes beside the outputs, not into build/executed (the book's source)
    monkeypatch.setattr(notebooks_module, "EXECUTED_DIR", out.parent / "executed")
    params = load_parameters(preset_path(REPO_ROOT / "notebooks" / preset_notebook, preset))
    argv = ["run", f"notebooks/{preset_notebook}", "--preset", preset]
    argv += [
        "-p",
        "checkpoint",
        json.dumps(str(checkpoint)),
        "-p",
        "output_dir",
        json.dumps(str(out)),
    ]
    argv += ["-p", "roots", json.dumps({b: roots[b] for b in params["roots"]})]
    assert notebooks_main(argv) == 0
    assert (out.parent / "executed" / f"{preset_notebook[:-3]}.ipynb").is_file()
    return params


def _published(out) -> list[list[str]]:
    lines = (out / "published.md").read_text().splitlines()[2:]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


def test_eval_argent_preset_writes_table_2(data, tmp_path, monkeypatch):
    from paperlib.engine.loop import train

    root, roots, site = data
    run = train(tiny_config("argent", tmp_path / "argent", train={"steps": 2})).output_dir
    out = tmp_path / "eval"
    params = _run("eval_argent.py", "argent-s-grit", run, out, roots, site, monkeypatch)
    for name in params["benchmarks"]:
        result = json.loads((out / f"{name}.json").read_text())
        assert result["protocol"]["family"] == "meru"
    coco = json.loads((out / "coco.json").read_text())["protocol"]
    assert coco == {"family": "meru", "image_transform": "squeeze", "captions": "all"}
    rows = {r[2]: r for r in _published(out) if r[1] == "ARGENT S"}
    assert set(rows) == {"imagenet_acc1", "avg16_acc1", "coco_t2i_r5", "pep_auc", "pep_ap"}
    for row in rows.values():
        assert re.fullmatch(r"[-+0-9.e]+", row[5]), row  # ours: a number, and Δ beside it
        assert row[6] != "—"
    assert rows["coco_t2i_r5"][7] == "as the paper"
    assert rows["pep_auc"][7].startswith("differs: pep.kept=None (paper: 522)")
    assert "split" in rows["avg16_acc1"][7]  # SUN397, Caltech-101, EuroSAT, RESISC45


def test_eval_himo_preset_writes_tables_1_and_2(data, tmp_path, monkeypatch):
    from paperlib.engine.loop import train

    root, roots, site = data
    run = train(tiny_config("himo", tmp_path / "himo", train={"steps": 2})).output_dir
    out = tmp_path / "eval"
    _run("eval_himo.py", "vit-l14-sharegpt4v-8xh100", run, out, roots, site, monkeypatch)
    rows = _published(out)
    assert rows and all(r[5] != "—" for r in rows)  # every published number has ours
    assert {r[0] for r in rows} == {"himo_retrieval", "himo_monotonicity"}
    coco = json.loads((out / "coco.json").read_text())["protocol"]
    assert coco["image_transform"] == "crop" and coco["captions"] == "first-5"


def test_a_missing_root_is_named_before_anything_is_trained(tmp_path):
    config = tiny_config("argent", tmp_path / "never", train={"steps": 1})
    with pytest.raises(FileNotFoundError, match=r"'cars': root .*nowhere.*stanford_cars/devkit"):
        run_or_train(
            tmp_path / "never",
            tmp_path / "eval",
            train_config=config,
            benchmarks=["world-long", "cars"],
            roots={"cars": tmp_path / "nowhere"},
        )
    assert not (tmp_path / "never").exists()
