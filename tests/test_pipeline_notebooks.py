"""The train/eval notebooks run headlessly with papermill at their smoke-cpu presets."""

from __future__ import annotations

import importlib.util
import json

import pytest

from paperlib.notebooks import NOTEBOOK_DIR, load_parameters, preset_path, run_notebook

pytestmark = pytest.mark.slow


def _params(stem: str) -> dict:
    return load_parameters(preset_path(NOTEBOOK_DIR / f"{stem}.py", "smoke-cpu"))


@pytest.mark.parametrize("paper", ["himo", "argent"])
def test_train_then_eval_notebooks(tmp_path, paper):
    train_params = _params(f"train_{paper}")
    run_dir = tmp_path / "run"
    train_params["config"]["train"]["output_dir"] = str(run_dir)  # absolute: wins over REPO_ROOT
    out = run_notebook(NOTEBOOK_DIR / f"train_{paper}.py", train_params, output_dir=tmp_path / "nb")
    steps = train_params["config"]["train"]["steps"]
    log = [json.loads(x) for x in (run_dir / "log.jsonl").read_text().splitlines()]
    assert log[-1] == {"step": steps, "status": "finished"}
    executed = json.loads(out.read_text())
    assert any(
        o.get("output_type") == "display_data" and "image/png" in o.get("data", {})
        for c in executed["cells"]
        for o in c.get("outputs", [])
    )  # the loss plot

    eval_params = {
        **_params(f"eval_{paper}"),
        "checkpoint": str(run_dir),
        "output_dir": str(tmp_path / "eval"),
        "world_size": 48,
    }
    run_notebook(NOTEBOOK_DIR / f"eval_{paper}.py", eval_params, output_dir=tmp_path / "nb")
    table = (tmp_path / "eval" / "results.md").read_text()
    assert "| world-long |" in table and "| world-monotonicity |" in table
    hierarchy = json.loads((tmp_path / "eval" / "world-hierarchy.json").read_text())["metrics"]
    assert ("pep_auc" in hierarchy) == (paper == "argent")


def test_eval_notebook_trains_when_the_checkpoint_is_missing(tmp_path, capfd):
    params = {
        **_params("eval_himo"),
        "checkpoint": str(tmp_path / "run"),
        "output_dir": str(tmp_path / "eval"),
        "world_size": 32,
    }
    config = load_parameters(preset_path(NOTEBOOK_DIR / "train_himo.py", "smoke-cpu"))["config"]
    params["train_config"] = {**config, "train": {**config["train"], "steps": 3}}
    run_notebook(NOTEBOOK_DIR / "eval_himo.py", params, output_dir=tmp_path / "nb")
    assert (tmp_path / "run" / "last.pt").is_file() and (tmp_path / "eval" / "results.md").is_file()
    assert "without encryption" not in capfd.readouterr().err  # the kernel's transport warning


def test_unknown_presets_and_notebooks_are_named():
    with pytest.raises(
        FileNotFoundError,
        match=r"no preset 'gpu-9000' for train_himo\.py.*"
        r"presets there: .*smoke-cpu",
    ):
        preset_path(NOTEBOOK_DIR / "train_himo.py", "gpu-9000")
    with pytest.raises(
        FileNotFoundError,
        match=r"notebook not found: .*nope\.py; the notebooks "
        r"are 00_quickstart\.py",
    ):
        run_notebook(NOTEBOOK_DIR / "nope.py")


def test_the_runner_command_names_bad_presets_notebooks_and_parameter_kinds(capsys):
    from paperlib.notebooks import main

    assert main(["run", "notebooks/train_himo.py", "--preset", "nope"]) == 2
    assert "no preset 'nope' for train_himo.py" in capsys.readouterr().err
    assert main(["run", "notebooks/no_such.py"]) == 2
    assert "notebook not found: notebooks/no_such.py" in capsys.readouterr().err
    # refused before any kernel starts: 'config' must be a mapping like its default
    assert main(["run", "notebooks/train_himo.py", "-p", "config", '"notadict"']) == 2
    err = capsys.readouterr().err
    assert "train_himo.py: parameter 'config' must be a mapping" in err and "notadict" in err
    assert main(["run", "notebooks/train_himo.py", "-p", "overrides", "3"]) == 2
    assert "parameter 'overrides' must be a list" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("tensorboard") is None, reason="tracking extra")
def test_the_train_notebook_s_report_to_parameter_writes_event_files(tmp_path):
    params = _params("train_himo")
    params["config"]["train"].update(output_dir=str(tmp_path / "run"), steps=2)
    params["report_to"] = ["tensorboard"]
    run_notebook(NOTEBOOK_DIR / "train_himo.py", params, output_dir=tmp_path / "nb")
    assert list((tmp_path / "run" / "tensorboard").glob("events.out.tfevents.*"))
