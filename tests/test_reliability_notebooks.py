"""The notebooks entry point (``python -m paperlib.notebooks run``): papermill writes
parameters into the notebook as Python source, so a parameter name must be one the notebook's
parameters cell declares and a value must be plain data; nothing a parameter holds ever runs.
Presets stay inside ``params/``; parameter files are read with the YAML alias cap. Every
refusal exits with code 2 and no traceback."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
import yaml

from paperlib.notebooks import (
    REPO_ROOT,
    check_parameters,
    load_parameters,
    main,
    parameter_names,
)
from tests.test_untrusted import BOMB

HEADER = (
    "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n"
    "#     name: python3\n# ---\n\n"
)
MARKER = "parameter-code-ran"


@pytest.fixture
def notebook(tmp_path) -> Path:
    """A notebook whose parameters cell declares ``steps`` (3) and ``name`` ('a')."""
    path = tmp_path / "tiny_notebook.py"
    path.write_text(
        HEADER + '# %% tags=["parameters"]\nsteps = 3\nname = "a"\n\n# %%\nprint(steps, name)\n'
    )
    return path


def _payload(tmp_path: Path) -> str:
    return f"x = __import__('pathlib').Path({str(tmp_path / MARKER)!r}).write_text('ran')\nx"


def _refused(argv: list[str], capsys, *expected: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and all(e in err for e in expected), err
    return err


def test_a_parameter_name_holding_code_is_refused_and_never_runs(tmp_path, notebook, capsys):
    argv = ["run", str(notebook), "-p", _payload(tmp_path), "1"]
    _refused(argv, capsys, "parameter name", "is not an identifier")
    (tmp_path / "p.yaml").write_text(yaml.safe_dump({_payload(tmp_path): 1}))
    _refused(["run", str(notebook), "--params", str(tmp_path / "p.yaml")], capsys, "identifier")
    assert not (tmp_path / MARKER).exists()


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("import", "4", "parameter name 'import' is not an identifier"),
        ("stpes", "4", "parameter 'stpes' is not one that its parameters cell declares"),
        ("steps", ".nan", "parameter 'steps' must be data"),
        ("steps", ".inf", "not a finite number"),
        ("name", "2024-01-02", "got a date"),
        ("name", "{1: a}", "a mapping key 1 is not text"),
        ("steps", "[1", "-p 'steps': not valid YAML"),
    ],
)
def test_a_parameter_that_is_not_declared_data_is_refused(notebook, capsys, name, value, expected):
    _refused(["run", str(notebook), "-p", name, value], capsys, expected)


def test_a_preset_name_cannot_leave_params(tmp_path, notebook, capsys):
    secret = tmp_path / "secret.yaml"
    secret.write_text("steps: 1\n")
    relative = os.path.relpath(secret, REPO_ROOT / "params" / notebook.stem)[: -len(".yaml")]
    for preset in (relative, str(secret)[: -len(".yaml")], ".hidden"):
        _refused(["run", str(notebook), "--preset", preset], capsys, "--preset", "preset name")


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"steps: [1\n", "not valid YAML"),
        (b"name: caf\xe9\n", "not UTF-8 text (byte 9"),
        (BOMB.replace("method: clip\ntrain:", "steps:").encode(), "aliases expand to more than"),
    ],
    ids=["YAML error", "not UTF-8", "alias bomb"],
)
def test_a_broken_parameter_file_is_named(tmp_path, notebook, capsys, content, expected):
    (tmp_path / "p.yaml").write_bytes(content)
    err = _refused(["run", str(notebook), "--params", str(tmp_path / "p.yaml")], capsys, expected)
    assert str(tmp_path / "p.yaml") in err and len(err) < 1200


def test_declared_data_parameters_run(tmp_path, notebook, capsys, monkeypatch):
    import paperlib.notebooks as notebooks

    monkeypatch.setattr(notebooks, "EXECUTED_DIR", tmp_path / "executed")
    assert main(["run", str(notebook), "-p", "steps", "7", "-p", "name", '"b c"']) == 0
    executed = nbformat.read(tmp_path / "executed" / "tiny_notebook.ipynb", as_version=4)
    outputs = [o.get("text", "") for c in executed.cells for o in c.get("outputs", [])]
    assert "7 b c\n" in outputs


def test_the_shipped_presets_name_declared_parameters_only():
    import jupytext

    for notebook in sorted((REPO_ROOT / "notebooks").glob("*.py")):
        source = jupytext.read(notebook)
        assert parameter_names(source), notebook.name
        for preset in sorted((REPO_ROOT / "params" / notebook.stem).glob("*.yaml")):
            # as the runner hands them over: a preset's base resolved (engine.presets)
            check_parameters(source, load_parameters(preset), preset.name)
