"""Run the companion's jupytext notebooks headlessly with papermill.

papermill cannot read a jupytext ``.py`` itself (SPEC §5): each notebook is read with
``jupytext.read`` and handed to ``papermill.execute_notebook`` as a notebook object.
Parameter files live in ``params/<notebook stem>/<preset>.yaml``.

    python -m paperlib.notebooks run notebooks/train_himo.py --preset smoke-cpu
    python -m paperlib.notebooks reproduce            # every notebook, smoke-cpu presets
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
PARAMS_DIR = REPO_ROOT / "params"
BUILD_DIR = REPO_ROOT / "build"


def notebooks(directory: Path = NOTEBOOK_DIR) -> list[Path]:
    """Every jupytext notebook (``*.py``) in ``directory``, tutorials (``NN_*``) first."""
    found = sorted(directory.glob("*.py"))
    return [p for p in found if p.name[:2].isdigit()] + [p for p in found if not p.name[:2].isdigit()]


def preset_path(notebook: Path, preset: str) -> Path:
    """``params/<notebook stem>/<preset>.yaml``; FileNotFoundError naming the presets there."""
    path = PARAMS_DIR / Path(notebook).stem / f"{preset}.yaml"
    if not path.is_file():
        found = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise FileNotFoundError(f"no preset {preset!r} for {Path(notebook).name}: {path} does not "
                                f"exist; presets there: {', '.join(found) or 'none'}")  # fmt: skip
    return path


def load_parameters(path: Path) -> dict:
    """Read a YAML parameter file; errors name the file and what was expected."""
    if not path.is_file():
        raise FileNotFoundError(f"parameter file not found: {path}")
    params = yaml.safe_load(path.read_text()) or {}
    if not isinstance(params, dict):
        raise ValueError(f"{path}: expected a mapping of notebook parameters, got {type(params).__name__}")
    return params


def to_ipynb(notebook: Path, output: Path) -> Path:
    """Convert a percent-format ``.py`` notebook to ``.ipynb`` (for nbval and Jupyter)."""
    import jupytext

    output.parent.mkdir(parents=True, exist_ok=True)
    jupytext.write(jupytext.read(notebook), output)
    return output


def run(notebook: Path, parameters: dict | None = None, output_dir: Path | None = None,
        log_output: bool = False) -> Path:
    """Execute ``notebook`` with papermill; returns the executed ``.ipynb`` path."""
    import jupytext
    import papermill

    notebook = Path(notebook)
    if not notebook.is_file():
        names = ", ".join(p.name for p in notebooks())
        raise FileNotFoundError(f"notebook not found: {notebook}; the notebooks are {names}")
    output_dir = Path(output_dir or BUILD_DIR / "executed")
    output_dir.mkdir(parents=True, exist_ok=True)
    output = output_dir / f"{notebook.stem}.ipynb"
    papermill.execute_notebook(
        jupytext.read(notebook),
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


def reproduce(preset: str = "smoke-cpu", only: list[str] | None = None) -> dict[str, float]:
    """Run every notebook (tutorials at their defaults, others with ``preset``); wall times."""
    times = {}
    for nb in notebooks():
        if only and nb.stem not in only:
            continue
        path = PARAMS_DIR / nb.stem / f"{preset}.yaml"  # tutorials have none: their defaults
        params = load_parameters(path) if path.is_file() else {}
        start = time.perf_counter()
        print(f"[reproduce] {nb.name} ({path.relative_to(REPO_ROOT) if params else 'defaults'})", flush=True)
        run(nb, params)
        times[nb.stem] = time.perf_counter() - start
        print(f"[reproduce] {nb.name} done in {times[nb.stem]:.0f} s", flush=True)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paperlib.notebooks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run", help="execute one notebook")
    one.add_argument("notebook", type=Path)
    one.add_argument("--preset", help="params/<notebook>/<preset>.yaml")
    one.add_argument("--params", type=Path, help="a YAML parameter file")
    one.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                     help="override one parameter (VALUE parsed as YAML)")
    every = sub.add_parser("reproduce", help="execute every notebook with a preset")
    every.add_argument("--preset", default="smoke-cpu")
    every.add_argument("--only", nargs="*")
    conv = sub.add_parser("convert", help="convert notebooks to .ipynb under build/notebooks")
    conv.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)

    if args.command == "run":
        params = {}
        if args.preset:
            params.update(load_parameters(preset_path(args.notebook, args.preset)))
        if args.params:
            params.update(load_parameters(args.params))
        params.update({k: yaml.safe_load(v) for k, v in args.p})
        print(run(args.notebook, params, log_output=True))
    elif args.command == "reproduce":
        times = reproduce(args.preset, args.only)
        print(f"[reproduce] total {sum(times.values()):.0f} s")
    else:
        for nb in args.notebooks or notebooks():
            print(to_ipynb(nb, BUILD_DIR / "notebooks" / f"{nb.stem}.ipynb"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
