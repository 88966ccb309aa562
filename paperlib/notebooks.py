"""Run the companion's jupytext notebooks headlessly with papermill.

papermill cannot read a jupytext ``.py`` itself
(``docs/methods/conventions.md#notebooks``): each notebook is read with
``jupytext.read`` and handed to ``papermill.execute_notebook`` as a notebook object.
Parameter files live in ``params/<notebook stem>/<preset>.yaml``.

papermill injects parameters as Python source, so they are checked first
(:func:`check_parameters`): each name must be one the notebook's ``parameters`` cell assigns
(an identifier), each value plain data (text, finite numbers, true/false, null, and lists and
mappings of them), of the exact kind of its default (a number is not true/false, a whole number
default takes no fraction). Parameter files are read with a cap on YAML alias expansion
(``paperlib.untrusted``), and the paths they name (:data:`PATH_PARAMETERS`) must lie in the
repository or a configured root (:func:`confine_paths`); a path given with ``-p`` on the
command line is used as given.

A run holds its executed copy (``<output folder>/<notebook>.ipynb``) for itself: a second run
that would write the same copy is refused while the first holds it. An error inside the
notebook is reported on one line naming the notebook, the cell and the error
(:class:`NotebookFailedError`), the executed copy kept with its traceback. The command shows
papermill's progress over the cells.

    python -m paperlib.notebooks run notebooks/train_himo.py --preset smoke-cpu
    python -m paperlib.notebooks reproduce            # every notebook, smoke-cpu presets
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import fcntl
import keyword
import math
import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from paperlib import exit_status
from paperlib.engine.presets import inherit
from paperlib.untrusted import brief, error_text, load_yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
PARAMS_DIR = REPO_ROOT / "params"
BUILD_DIR = REPO_ROOT / "build"
EXECUTED_DIR = BUILD_DIR / "executed"  # where ``run`` writes each executed ``.ipynb``
# parameters that name a file or folder the notebooks read or write (relative to the
# repository root): each a path, or (roots, pep) a mapping holding paths under these keys
PATH_PARAMETERS = ("checkpoint", "train_config", "output_dir", "hierarcaps_root")
PATH_MAPPINGS = {"roots": None, "pep": ("kept", "pool")}  # None: every value
CONFIG_PATHS = ("train.output_dir", "model.init", "data.root", "data.cache_dir")
# environment variables naming the other folders a parameter file may point into
ROOT_VARIABLES = ("PAPERLIB_DATA_ROOTS", "PAPERLIB_RUNS", "PAPERLIB_RESULTS")


class NotebookFailedError(RuntimeError):
    """A cell of a notebook raised; the message names the notebook, the cell, the error and
    the executed copy that keeps its traceback."""


def notebooks(directory: Path = NOTEBOOK_DIR) -> list[Path]:
    """Every jupytext notebook (``*.py``) in ``directory``, tutorials (``NN_*``) first."""
    found = sorted(directory.glob("*.py"))
    return [p for p in found if p.name[:2].isdigit()] + [
        p for p in found if not p.name[:2].isdigit()
    ]


def preset_path(notebook: Path, preset: str) -> Path:
    """``params/<notebook stem>/<preset>.yaml``; FileNotFoundError naming the presets there,
    ValueError for a preset that is not a plain name (a path would leave ``params/``)."""
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*", preset):
        raise ValueError(
            f"--preset {brief(preset, 80)}: expected a preset name, the stem of a file in "
            f"params/{Path(notebook).stem}/ (e.g. smoke-cpu); use --params for another file"
        )
    path = PARAMS_DIR / Path(notebook).stem / f"{preset}.yaml"
    if not path.is_file():
        found = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise FileNotFoundError(
            f"no preset {preset!r} for {Path(notebook).name}: {path} does not "
            f"exist; presets there: {', '.join(found) or 'none'}"
        )
    return path


def load_parameters(path: Path) -> dict:
    """Read a YAML parameter file; errors name the file and what was expected."""
    if not path.is_file():
        raise FileNotFoundError(f"parameter file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text (byte {err.start}: {err.reason})") from None
    params = load_yaml(text, str(path)) or {}
    if not isinstance(params, dict):
        raise ValueError(
            f"{path}: expected a mapping of notebook parameters, got {type(params).__name__}"
        )
    return inherit(path, params, load_parameters)  # a preset's base: engine.presets


def to_ipynb(notebook: Path, output: Path) -> Path:
    """Convert a percent-format ``.py`` notebook to ``.ipynb`` (for nbval and Jupyter)."""
    import jupytext

    output.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(jupytext.read(notebook), output)
    return output


def declared_parameters(notebook) -> dict[str, object]:
    """``{name: default}`` of the literal defaults in a notebook's ``parameters`` cell."""
    cells = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    defaults: dict[str, object] = {}
    for cell in cells:
        for node in ast.parse(cell.source).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                try:
                    defaults[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    continue  # not a literal: nothing to check against
    return defaults


def parameter_names(notebook) -> set[str]:
    """The names the notebook's ``parameters`` cell assigns (papermill's parameters)."""
    cells = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    names: set[str] = set()
    for cell in cells:
        for node in ast.parse(cell.source).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            targets = [node.target] if isinstance(node, ast.AnnAssign) else targets
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _not_data(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` is not plain data papermill writes as a literal (None when it is)."""
    if depth > 20:
        return "nested more than 20 levels deep"
    if value is None or isinstance(value, (bool, int, str)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"got {value}, not a finite number"
    if isinstance(value, list):
        return next((p for p in (_not_data(v, depth + 1) for v in value) if p), None)
    if isinstance(value, dict):
        key = next((k for k in value if not isinstance(k, str)), None)
        if key is not None:
            return f"a mapping key {brief(key)} is not text"
        return next((p for p in (_not_data(v, depth + 1) for v in value.values()) if p), None)
    return f"got a {type(value).__name__} ({brief(value, 60)})"


def check_parameters(notebook, parameters: dict, name: str) -> None:
    """ValueError naming the parameter unless papermill can inject it as data: a name the
    ``parameters`` cell assigns (so an identifier, never code), a value of plain data (module
    docstring), of the kind of its literal default (:func:`check_parameter_types`)."""
    declared = parameter_names(notebook)
    for key, value in parameters.items():
        if not isinstance(key, str) or not key.isidentifier() or keyword.iskeyword(key):
            raise ValueError(
                f"{name}: parameter name {brief(key, 80)} is not an identifier; expected one of "
                f"{sorted(declared)}"
            )
        if key not in declared:
            raise ValueError(
                f"{name}: parameter {key!r} is not one that its parameters cell declares; expected "
                f"one of {sorted(declared)}"
            )
        problem = _not_data(value)
        if problem:
            raise ValueError(
                f"{name}: parameter {key!r} must be data (text, finite numbers, true/false, "
                f"null, lists and mappings of them); {problem}"
            )
    check_parameter_types(notebook, parameters, name)


def _kind(value: Any) -> str:
    """The kind a parameter value is checked as: a mapping, a list, text, true/false, a whole
    number or a number (a bool is no number, in YAML as in the notebooks' arithmetic)."""
    kinds = ((dict, "a mapping"), (list, "a list"), (str, "text"), (bool, "true/false"))
    for kind, label in kinds:
        if isinstance(value, kind):
            return label
    return "a whole number" if isinstance(value, int) else "a number"


def check_parameter_types(notebook, parameters: dict, name: str) -> None:
    """ValueError naming the parameter when a value's kind differs from its literal default's
    (:func:`_kind`; a whole number passes where the default is a number, not the other way
    round); a ``None`` default takes anything."""
    defaults = declared_parameters(notebook)
    for key, value in parameters.items():
        default = defaults.get(key)
        if default is None or value is None:
            continue
        wanted, found = _kind(default), _kind(value)
        if wanted != found and not (wanted == "a number" and found == "a whole number"):
            raise ValueError(
                f"{name}: parameter {key!r} must be {wanted} like its default "
                f"{default!r}; got {brief(value, 80)} ({found})"
            )


def _config_paths(config: Any, label: str) -> Iterator[tuple[str, str]]:
    """The paths of a training config mapping (:data:`CONFIG_PATHS`), ``model.init`` where it
    names a file (not an open_clip tag or ``random``)."""
    if not isinstance(config, dict):
        return
    for key in CONFIG_PATHS:
        section, field = key.split(".")
        part = config.get(section)
        value = part.get(field) if isinstance(part, dict) else None
        if isinstance(value, str) and (key != "model.init" or _names_a_file(value)):
            yield f"{label}.{key}", value


def _names_a_file(init: str) -> bool:
    return "/" in init or Path(init).suffix in {".pt", ".pth", ".bin", ".ckpt"}


def parameter_paths(parameters: dict) -> Iterator[tuple[str, str]]:
    """(where, path) of every path among notebook ``parameters``: :data:`PATH_PARAMETERS`,
    the values of :data:`PATH_MAPPINGS`, a ``config`` mapping's and an ``overrides`` list's
    :data:`CONFIG_PATHS`."""
    for key in PATH_PARAMETERS:
        if isinstance(parameters.get(key), str):
            yield key, parameters[key]
    for key, fields in PATH_MAPPINGS.items():
        mapping = parameters.get(key)
        if isinstance(mapping, dict):
            for field, value in mapping.items():
                if isinstance(value, str) and (fields is None or field in fields):
                    yield f"{key}.{field}", value
    yield from _config_paths(parameters.get("config"), "config")
    overrides = parameters.get("overrides")
    for i, item in enumerate(overrides if isinstance(overrides, list) else []):
        key, _, value = str(item).partition("=")
        if key.strip() in CONFIG_PATHS and (key.strip() != "model.init" or _names_a_file(value)):
            yield f"overrides[{i}] {key.strip()}", value


def allowed_roots() -> list[Path]:
    """The folders a parameter file's paths may lie in: the repository, and those named by
    :data:`ROOT_VARIABLES` (``PAPERLIB_DATA_ROOTS``: data folders, separated by
    ``os.pathsep``; ``PAPERLIB_RUNS``, ``PAPERLIB_RESULTS``: the study's outputs)."""
    named = [
        part
        for variable in ROOT_VARIABLES
        for part in os.environ.get(variable, "").split(os.pathsep)
        if part.strip()
    ]
    return [REPO_ROOT.resolve(), *((REPO_ROOT / p).expanduser().resolve() for p in named)]


def confine_paths(parameters: dict, source: str) -> None:
    """ValueError naming ``source`` and the parameter when a path of ``parameters``
    (:func:`parameter_paths`, relative to the repository root as the notebooks read them)
    lies outside :func:`allowed_roots`; a ``..`` or a link that leaves them counts as outside."""
    roots = allowed_roots()
    for where, value in parameter_paths(parameters):
        path = (REPO_ROOT / value).expanduser().resolve()
        if not any(path == root or root in path.parents for root in roots):
            raise ValueError(
                f"{source}: parameter {where} = {brief(value, 80)} lies outside the repository "
                f"and the folders of {', '.join(ROOT_VARIABLES)}; a parameter file may point "
                "only there: give the path on the command line (-p), or add its folder to "
                "PAPERLIB_DATA_ROOTS"
            )


def require_range(name: str, value: Any, low: float = 0.0, high: float = math.inf) -> None:
    """In a notebook, after its parameters: ValueError naming the parameter unless ``value``
    (a number, or a list of numbers) lies strictly between ``low`` and ``high``."""
    values = value if isinstance(value, list) else [value]
    for item in values:
        number = isinstance(item, (int, float)) and not isinstance(item, bool)
        if not (number and math.isfinite(item) and low < item < high):
            raise ValueError(
                f"parameter {name}: expected numbers in ({low:g}, {high:g}); got {brief(value, 80)}"
            )


def run_notebook(
    notebook: Path,
    parameters: dict | None = None,
    output_dir: Path | None = None,
    log_output: bool = False,
    progress: bool = False,
) -> Path:
    """Execute ``notebook`` with papermill (``progress``: its progress bar over the cells);
    returns the executed ``.ipynb`` path. A cell that raises is a
    :class:`NotebookFailedError` (module docstring); a copy another run is writing is refused."""
    import jupytext
    import papermill

    notebook = Path(notebook)
    if not notebook.is_file():
        names = ", ".join(p.name for p in notebooks())
        raise FileNotFoundError(f"notebook not found: {notebook}; the notebooks are {names}")
    source = jupytext.read(notebook)
    check_parameters(source, parameters or {}, notebook.name)
    output_dir = Path(output_dir or EXECUTED_DIR)
    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / f"{notebook.stem}.ipynb"
    with held(output, notebook.name):
        try:
            papermill.execute_notebook(
                source,
                str(output),
                parameters=parameters or {},
                kernel_name="python3",
                cwd=str(notebook.parent),
                log_output=log_output,
                progress_bar=progress,
                # the kernel's own warnings (it runs over local TCP) are noise here; cell
                # errors still fail
                extra_arguments=["--IPKernelApp.log_level=ERROR"],
            )
        except papermill.PapermillExecutionError as error:
            raise NotebookFailedError(_failure(notebook, error, output)) from None
    return output


def _failure(notebook: Path, error, output: Path) -> str:
    """One line: the notebook, the cell (its execution count and first line), the error."""
    lines = [line.strip() for line in str(error.source).splitlines() if line.strip()]
    first = brief(lines[0], 70) if lines else "an empty cell"
    value = " ".join(str(error.evalue).split())
    value = value if len(value) <= 400 else f"{value[:397]}..."
    return (
        f"{notebook.name}: cell In [{error.exec_count}] ({first}) raised {error.ename}: "
        f"{value}; the executed copy with its traceback: {output}"
    )


@contextlib.contextmanager
def held(output: Path, name: str) -> Iterator[None]:
    """Hold ``output`` (an executed copy) for one run: a lock beside it that the kernel
    releases if the run dies; ValueError naming the copy and the holder's pid when another
    run holds it."""
    with open(output.parent / f".{output.name}.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read(40).strip() or "another process"
            raise ValueError(
                f"{name}: its executed copy {output} is being written by another run (process "
                f"{holder}); wait for it, or give this run another output folder"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield


def optional_folder(folder: str | None, what: str) -> str | None:
    """``folder`` (relative to the repository root) where it exists, else None with a line naming
    it as it was given, never as a local absolute path (an optional data set a clone may lack)."""
    if folder is None:
        return None
    if (REPO_ROOT / folder).expanduser().is_dir():
        return folder
    print(f"{what} not found at {folder} (from the repository root): skipped")
    return None


def reproduce(preset: str = "smoke-cpu", only: list[str] | None = None) -> dict[str, float]:
    """Run every notebook (tutorials at their defaults, others with ``preset``); wall times."""
    times = {}
    for nb in notebooks():
        if only and nb.stem not in only:
            continue
        path = PARAMS_DIR / nb.stem / f"{preset}.yaml"  # tutorials have none: their defaults
        params = load_parameters(path) if path.is_file() else {}
        confine_paths(params, str(path))
        start = time.perf_counter()
        print(
            f"[reproduce] {nb.name} ({path.relative_to(REPO_ROOT) if params else 'defaults'})",
            flush=True,
        )
        run_notebook(nb, params, progress=True)
        times[nb.stem] = time.perf_counter() - start
        print(f"[reproduce] {nb.name} done in {times[nb.stem]:.0f} s", flush=True)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m paperlib.notebooks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run", help="execute one notebook")
    one.add_argument("notebook", type=Path)
    one.add_argument("--preset", help="params/<notebook>/<preset>.yaml")
    one.add_argument("--params", type=Path, help="a YAML parameter file")
    one.add_argument(
        "-p",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="override one parameter (VALUE parsed as YAML)",
    )
    every = sub.add_parser("reproduce", help="execute every notebook with a preset")
    every.add_argument("--preset", default="smoke-cpu")
    every.add_argument("--only", nargs="*")
    conv = sub.add_parser("convert", help="convert notebooks to .ipynb under build/notebooks")
    conv.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    try:
        return _command(args)
    except (OSError, ValueError, NotebookFailedError) as err:
        print(f"notebooks: {error_text(err)}", file=sys.stderr)
        return exit_status.REFUSED


def _command(args: argparse.Namespace) -> int:
    """The chosen sub-command of :func:`main`."""
    if args.command == "run":
        params: dict[str, Any] = {}
        files = [preset_path(args.notebook, args.preset)] if args.preset else []
        files += [args.params] if args.params else []
        given = {k: load_yaml(v, f"-p {brief(k, 60)}") for k, v in args.p}
        for path in files:
            read = load_parameters(path)
            confine_paths({k: v for k, v in read.items() if k not in given}, str(path))
            params.update(read)
        params.update(given)
        print(run_notebook(args.notebook, params, log_output=True, progress=True))
    elif args.command == "reproduce":
        times = reproduce(args.preset, args.only)
        print(f"[reproduce] total {sum(times.values()):.0f} s")
    else:
        for nb in args.notebooks or notebooks():
            print(to_ipynb(nb, BUILD_DIR / "notebooks" / f"{nb.stem}.ipynb"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
