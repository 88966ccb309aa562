"""The notebook runner: an error inside a notebook is one line naming the notebook, the cell and
the error (the executed copy kept); parameter kinds are exact; a parameter file's paths stay in
the repository and the configured roots (a path given with ``-p`` is used as given); a run holds
its executed copy; the command shows papermill's progress; notebook 03 checks its derivation at
any valid curvature and names an invalid one."""

from __future__ import annotations

import fcntl

import jupytext
import nbformat
import pytest
import yaml

import paperlib.notebooks as notebooks
from paperlib.notebooks import NOTEBOOK_DIR, REPO_ROOT, check_parameters, confine_paths, main
from tests.test_reliability_notebooks import HEADER

SOURCE = (
    HEADER + '# %% tags=["parameters"]\nsteps = 3\nrate = 0.5\noutput_dir = "runs/x"\n'
    'roots = {}\nconfig = {"train": {"output_dir": "runs/y"}}\noverrides = []\n\n'
    "# %%\nprint('rate', rate)\n\n# %%\nassert steps < 5, f'steps is {steps}, expected < 5'\n"
)


@pytest.fixture
def notebook(tmp_path, monkeypatch):
    monkeypatch.setattr(notebooks, "EXECUTED_DIR", tmp_path / "executed")
    path = tmp_path / "tiny_notebook.py"
    path.write_text(SOURCE)
    return path


def test_an_error_in_a_cell_is_one_line_naming_notebook_cell_and_error(notebook, tmp_path, capsys):
    """The case: any error inside a notebook reached the user as a raw papermill traceback."""
    assert main(["run", str(notebook), "-p", "steps", "9"]) == 2
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("notebooks: ")]
    copy = tmp_path / "executed" / "tiny_notebook.ipynb"
    assert line == (
        "notebooks: tiny_notebook.py: cell In [4] (\"assert steps < 5, f'steps is {steps}, "
        "expected < 5'\") raised AssertionError: steps is 9, expected < 5; the executed copy "
        f"with its traceback: {copy}"
    )
    assert "Traceback" not in err and "Executing" in err  # papermill's progress bar
    executed = nbformat.read(copy, as_version=4)
    assert any(
        o.get("ename") == "AssertionError" for c in executed.cells for o in c.get("outputs", [])
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("steps", True, "parameter 'steps' must be a whole number like its default 3; got True"),
        ("steps", 2.5, "parameter 'steps' must be a whole number like its default 3; got 2.5"),
        ("rate", False, "parameter 'rate' must be a number like its default 0.5; got False"),
    ],
)
def test_parameter_kinds_are_exact(notebook, name, value, message):
    """The case: a boolean passed the number check."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_parameters(jupytext.read(notebook), {name: value}, "tiny_notebook.py")
    check_parameters(jupytext.read(notebook), {"rate": 2, "steps": 4}, "tiny_notebook.py")


@pytest.mark.parametrize(
    ("parameters", "where"),
    [
        ({"output_dir": "/etc/paperlib"}, "output_dir = '/etc/paperlib'"),
        ({"output_dir": "runs/../../outside"}, "output_dir = 'runs/../../outside'"),
        ({"roots": {"coco": "/data/coco"}}, "roots.coco"),
        ({"config": {"train": {"output_dir": "/root/run"}}}, "config.train.output_dir"),
        ({"config": {"model": {"init": "/root/base.pt"}}}, "config.model.init"),
        ({"overrides": ["data.cache_dir=/var/tmp/cache"]}, "overrides[0] data.cache_dir"),
    ],
)
def test_a_parameter_file_s_paths_stay_in_the_repository(
    notebook, tmp_path, capsys, monkeypatch, parameters, where
):
    """The case: notebook path parameters read and wrote anywhere."""
    monkeypatch.delenv("PAPERLIB_DATA_ROOTS", raising=False)
    for variable in ("PAPERLIB_RUNS", "PAPERLIB_RESULTS"):
        monkeypatch.delenv(variable, raising=False)
    params = tmp_path / "p.yaml"
    params.write_text(yaml.safe_dump(parameters))
    assert main(["run", str(notebook), "--params", str(params)]) == 2
    err = capsys.readouterr().err
    assert f"{params}: parameter {where}" in err and "lies outside the repository" in err
    assert not (tmp_path / "executed").exists()  # refused before anything ran


def test_paths_given_on_the_command_line_or_under_a_configured_root_are_used(tmp_path, monkeypatch):
    confine_paths({"config": {"model": {"init": "openai"}}, "output_dir": "runs/n"}, "preset")
    monkeypatch.setenv("PAPERLIB_DATA_ROOTS", f"{tmp_path}:/data")
    confine_paths({"roots": {"coco": "/data/coco"}, "hierarcaps_root": str(tmp_path / "h")}, "p")
    monkeypatch.setenv("PAPERLIB_DATA_ROOTS", "")
    with pytest.raises(ValueError, match="hierarcaps_root"):
        confine_paths({"hierarcaps_root": str(tmp_path / "h")}, "p")
    link = REPO_ROOT / "build" / f"escape-{tmp_path.name}"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(tmp_path)
    try:  # a link inside the repository that leads out of it is outside
        with pytest.raises(ValueError, match="lies outside"):
            confine_paths({"output_dir": str(link.relative_to(REPO_ROOT) / "x")}, "p")
    finally:
        link.unlink()


def test_a_copy_another_run_is_writing_is_refused(notebook, tmp_path, capsys):
    """The case: two runs of one notebook wrote the same executed copy; the first run's output
    was lost while its printed path showed the second's."""
    executed = tmp_path / "executed"
    executed.mkdir()
    with open(executed / ".tiny_notebook.ipynb.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        held.write("4242\n")
        held.flush()
        assert main(["run", str(notebook)]) == 2
    err = capsys.readouterr().err
    assert "tiny_notebook.ipynb is being written by another run (process 4242)" in err
    assert not (executed / "tiny_notebook.ipynb").exists()
    assert main(["run", str(notebook)]) == 0  # released: runs


@pytest.mark.slow
def test_notebook_03_checks_its_derivation_at_another_curvature_and_names_a_bad_one(
    tmp_path, monkeypatch, capsys
):
    """The cases: ``03 -p curv 2.0`` failed an assert that held at c = 1 only, and
    ``-p curv -1.0`` ended in ``math domain error``."""
    monkeypatch.setenv("PAPERLIB_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))  # the kernel imports this checkout
    monkeypatch.setattr(notebooks, "EXECUTED_DIR", tmp_path / "executed")
    path = str(NOTEBOOK_DIR / "03_aperture_failure.py")
    assert main(["run", path, "-p", "curv", "2.0"]) == 0
    assert main(["run", path, "-p", "curv", "-1.0"]) == 2
    err = capsys.readouterr().err
    assert "03_aperture_failure.py: cell In [" in err
    assert "raised ValueError: parameter curv: expected numbers in (0, inf); got -1.0" in err
