"""Output folders of every kind: a path with spaces and non-ASCII characters trains and
evaluates to the results of a plain path; a folder that is a file, lies under a file, or cannot
be written (a read-only system folder, which not even root may write) is refused by name
before anything is built, and the user's file is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from paperlib.engine import loop
from paperlib.evaluate import main as evaluate_main
from paperlib.train import main as train_main
from tests.engine_helpers import final_weights, tiny_config

ODD = "run dir with spaces/ünï cødé 日本"
READ_ONLY = Path("/proc/self")  # exists, is a folder, and refuses new files to every user


def _config(tmp_path: Path, out: Path) -> Path:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(tiny_config("clip", out, data={"size": 32}, train={"steps": 2})))
    return path


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plain") / "run"
    loop.train(tiny_config("clip", out, data={"size": 32}, train={"steps": 2}))
    return out


def test_a_path_with_spaces_and_non_ascii_characters_trains_and_evaluates_as_a_plain_one(
    tmp_path, plain, capsys
):
    out = tmp_path / ODD
    assert train_main([str(_config(tmp_path, out))]) == 0
    assert f"checkpoint {out / 'last.pt'}" in capsys.readouterr().out
    odd, same = final_weights(out), final_weights(plain)
    assert odd.keys() == same.keys() and all(torch.equal(odd[k], same[k]) for k in odd)
    results = {}
    for name, run in (("odd", out), ("plain", plain)):
        folder = tmp_path / f"résultats {name} ✓"
        argv = [str(run), "--output", str(folder), "--benchmarks", "world-long"]
        assert evaluate_main([*argv, "--world-size", "8"]) == 0
        results[name] = json.loads((folder / "world-long.json").read_text())["metrics"]
    assert results["odd"] == results["plain"] and results["odd"]


@pytest.mark.parametrize("layout", ["a file", "under a file", "read-only"])
def test_a_training_output_folder_that_cannot_hold_a_run_is_named(tmp_path, capsys, layout):
    (tmp_path / "f").write_text("the user's file\n")
    out = {"a file": tmp_path / "f", "under a file": tmp_path / "f" / "run"}.get(layout, READ_ONLY)
    assert train_main([str(_config(tmp_path, out))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("training refused: train.output_dir: ") and str(out) in err
    assert "Traceback" not in err and (tmp_path / "f").read_text() == "the user's file\n"


def test_an_evaluation_output_that_cannot_be_written_is_named(plain, capsys):
    assert evaluate_main([str(plain), "--output", str(READ_ONLY)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evaluate: output_dir (--output): cannot write to {READ_ONLY}")
