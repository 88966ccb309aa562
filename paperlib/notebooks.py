"""Run the companion's jupytext notebooks headlessly with papermill.

papermill cannot read a jupytext ``.py`` itself
(``docs/methods/conventions.md#notebooks``): each notebook is read with
``jupytext.read`` and handed to ``papermill.execute_notebook`` as a notebook object.
Parameter files live in ``params/<notebook stem>/<preset>.yaml``.

papermill injects parameters as Python source, so they are checked first
(:func:`check_parameters`): each name must be one the notebook's ``parameters`` cell assigns
(an identifier), each value plain data (text, finite numbers, true/false, null, and lists and
mappings of them), of the kind of its default. Parameter files are read with a cap on YAML
alias expansion (``paperlib.untrusted``).

    python -m paperlib.notebooks run notebooks/train_himo.py --preset smoke-cpu
    python -m paperlib.notebooks reproduce            # every notebook, smoke-cpu presets
"""

from __future__ import annotations

import argparse
import ast
import keyword
import math
import re
import sys
import time
from pathlib import Path
from typing import Any

from paperlib.engine.presets import inherit
from paperlib.untrusted import brief, error_text, load_yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
PARAMS_DIR = REPO_ROOT / "params"
BUILD_DIR = REPO_ROOT / "build"
EXECUTED_DIR = BUILD_DIR / "executed"  # where ``run`` writes each executed ``.ipynb``


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


def check_parameter_types(notebook, parameters: dict, name: str) -> None:
    """ValueError naming the parameter when a value's kind differs from its literal default's
    (a mapping for a mapping, a list for a list, text for text, a number for a number); a
    ``None`` default takes anything."""
    kinds = (
        (dict, "a mapping"),
        (list, "a list"),
        (str, "text"),
        (bool, "true/false"),
        ((int, float), "a number"),
    )
    defaults = declared_parameters(notebook)
    for key, value in parameters.items():
        default = defaults.get(key)
        if default is None or value is None:
            continue
        for kind, label in kinds:
            if isinstance(default, kind) and not isinstance(value, kind):
                raise ValueError(
                    f"{name}: parameter {key!r} must be {label} like its default "
                    f"{default!r}; got {value!r}"
                )
            if isinstance(default, kind):
                break


def run_notebook(
    notebook: Path,
    parameters: dict | None = None,
    output_dir: Path | None = None,
    log_output: bool = False,
) -> Path:
    """Execute ``notebook`` with papermill; returns the executed ``.ipynb`` path."""
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
    papermill.execute_notebook(
        source,
        str(output),
        parameters=parameters or {},
        kernel_name="python3",
        cwd=str(notebook.parent),
        log_output=log_output,
        progress_bar=False,
        # the kernel's own warnings (it runs over local TCP) are noise here; cell errors still fail
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    return output


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
        start = time.perf_counter()
        print(
            f"[reproduce] {nb.name} ({path.relative_to(REPO_ROOT) if params else 'defaults'})",
            flush=True,
        )
        run_notebook(nb, params)
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
    except (FileNotFoundError, ValueError) as err:
        print(f"notebooks: {error_text(err)}", file=sys.stderr)
        return 2


def _command(args: argparse.Namespace) -> int:
    """The chosen sub-command of :func:`main`."""
    if args.command == "run":
        params = {}
        if args.preset:
            params.update(load_parameters(preset_path(args.notebook, args.preset)))
        if args.params:
            params.update(load_parameters(args.params))
        params.update({k: load_yaml(v, f"-p {brief(k, 60)}") for k, v in args.p})
        print(run_notebook(args.notebook, params, log_output=True))
    elif args.command == "reproduce":
        times = reproduce(args.preset, args.only)
        print(f"[reproduce] total {sum(times.values()):.0f} s")
    else:
        for nb in args.notebooks or notebooks():
            print(to_ipynb(nb, BUILD_DIR / "notebooks" / f"{nb.stem}.ipynb"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
