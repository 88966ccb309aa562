"""The new user's path of docs/full-scale.md runs top to bottom on data fabricated in each real
format: open_clip's shards train HiMo with validation on COCO, the run is exported and open_clip
loads it with the run's features, GRIT's annotations are converted and train ARGENT, ShareGPT4V
with a symbolically linked image folder trains and validates on its held-out entries."""

from __future__ import annotations

import json
import re
import shlex

import pytest
import torch
import torch.nn.functional as F

from paperlib import evaluate, export, train
from paperlib.data import grit_boxes
from paperlib.engine.evaluation import load_trained
from paperlib.train import read_validation, trained_to_end
from tests.engine_helpers import REPO
from tests.real_formats import (
    coco_val2017,
    grit_annotation_shards,
    openclip_shards,
    sharegpt4v_linked,
)

MARKER = "<!-- the new user's path: tests/test_full_scale_path.py runs the next bash and python blocks -->"
COMMANDS = {
    "paperlib.train": train.main,
    "paperlib.export": export.main,
    "paperlib.evaluate": evaluate.main,
    "paperlib.data.grit_boxes": grit_boxes.main,
}


def path_blocks() -> tuple[list[list[str]], str]:
    """The commands of the path's bash block (continuations joined, comments left out) and its
    python block."""
    text = (REPO / "docs" / "full-scale.md").read_text()
    after = text[text.index(MARKER) :]
    bash = re.search(r"```bash\n(.*?)```", after, re.S).group(1)
    python = re.search(r"```python\n(.*?)```", after, re.S).group(1)
    lines = [
        line
        for line in bash.replace("\\\n", " ").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return [shlex.split(line) for line in lines], python


def fabricate(root) -> None:
    """The data the path names, in each format as researchers have it."""
    openclip_shards(root / "data" / "laion", 16, per_shard=8)
    coco_val2017(root / "data" / "coco", 8)
    grit_annotation_shards(root / "data" / "grit-img2dataset", 16)
    sharegpt4v_linked(root / "data" / "sharegpt4v", 24, root / "elsewhere" / "coco")
    (root / "params").symlink_to(REPO / "params", target_is_directory=True)


def test_the_new_users_path_runs_as_documented(tmp_path, monkeypatch):
    fabricate(tmp_path)
    monkeypatch.chdir(tmp_path)
    commands, python = path_blocks()
    assert [c[:3] for c in commands][:2] == [
        ["python", "-m", "paperlib.train"],
        ["python", "-m", "paperlib.export"],
    ]
    for command in commands:
        assert command[:2] == ["python", "-m"], command
        assert COMMANDS[command[2]](command[3:]) == 0, command
    for run in ("himo-laion", "argent-grit", "himo-sharegpt4v"):
        assert trained_to_end(tmp_path / "runs" / run), run
    laion = read_validation(tmp_path / "runs" / "himo-laion")
    assert [r["step"] for r in laion] == [0, 2, 4] and laion[-1]["val_samples"] == {"coco": 8}
    assert "coco/text_retrieval_recall@1" in laion[-1]["val"]
    sharegpt4v = read_validation(tmp_path / "runs" / "himo-sharegpt4v")
    assert "sharegpt4v/image_retrieval_recall@1" in sharegpt4v[-1]["val"]
    evaluated = json.loads((tmp_path / "out" / "himo-laion-eval" / "coco.json").read_text())
    assert evaluated["dataset"] == "coco" and "image_retrieval_recall@1" in evaluated["metrics"]
    namespace: dict = {}
    exec(compile(python, "docs/full-scale.md", "exec"), namespace)  # noqa: S102 - the docs' own block
    module, _, tokenizer, _ = load_trained(tmp_path / "runs" / "himo-laion")
    with torch.no_grad():
        ours = module.embed_text(tokenizer(["a bright green scene"]))
    torch.testing.assert_close(F.normalize(namespace["text"], dim=-1), ours, atol=1e-5, rtol=0)


@pytest.mark.parametrize("module", sorted(COMMANDS))
def test_every_command_of_the_path_names_a_missing_input_without_a_traceback(
    module, tmp_path, capsys
):
    args = {
        "paperlib.train": [
            str(REPO / "params/train_himo/smoke-cpu.yaml"),
            "data.dataset=webdataset",
            f"data.root={tmp_path}/none/{{0..1}}.tar",
        ],
        "paperlib.export": [
            str(tmp_path / "no-run"),
            "--format",
            "open_clip",
            str(tmp_path / "out"),
        ],
        "paperlib.evaluate": [
            str(tmp_path / "no-run"),
            "--output",
            str(tmp_path / "out"),
            "--benchmarks",
            "coco",
            "--root",
            f"coco={tmp_path}/no-coco",
        ],
        "paperlib.data.grit_boxes": [str(tmp_path / "no-shards"), str(tmp_path / "out")],
    }[module]
    assert COMMANDS[module](args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and str(tmp_path) in err
