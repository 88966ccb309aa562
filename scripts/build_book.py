#!/usr/bin/env python3
"""Build the reading edition: a static site of the notebooks as ``make reproduce`` ran them.

Nothing is executed again. Each executed copy (``build/executed/<notebook>.ipynb``) holds its
figures as the outputs of the cells that draw them (the runner's inline backend), and myst-nb
renders them as they are; a copy whose cells show fewer or more figures than they draw
(:func:`figure_problems`: one executed without the inline backend) is refused. Each copy is
staged under ``build/book-src/`` with what the page needs: where its results came from, its
papermill parameters, and code cells folded.
The method pages (``docs/methods/*.md``, the references the code cites by anchor) are staged
under ``methods/``, and a notebook's links to them (``../docs/methods/<page>.md#<anchor>``)
are pointed there. The project pages (``docs/*.md``: what the README leaves out) are staged
beside the notebooks, with the images they show, so their links to each other and to
``methods/`` hold in the book as in the repository. Sphinx (myst-nb, autodoc, sphinx-codeautolink; ``docs/conf.py``) then
writes ``build/book/``.

    python scripts/build_book.py
    python scripts/build_book.py --only 01_pca_decomposition --modules paperlib.figures
"""

from __future__ import annotations

import argparse
import ast
import copy
import inspect
import json
import pkgutil
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import nbformat
import yaml

REPO = Path(__file__).resolve().parent.parent
READER_HEADING = "## A reader's path through the notebooks"
PARAMETER_TAGS = {"parameters", "injected-parameters"}
#: pyplot's calls that draw a new figure (and the ``paperlib.figures`` ones: :func:`figure_calls`)
PYPLOT_FIGURES = {"figure", "subplots", "subplot_mosaic"}
#: a call under a branch may not run; one in a loop may run any number of times
BRANCHES = (ast.If, ast.IfExp, ast.BoolOp, ast.Match, ast.ExceptHandler)
LOOPS = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
#: a call in a function or class that a cell defines runs only where it is called
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: the method pages in the order of the book's table of contents (``docs/methods/<page>.md``)
METHOD_PAGES = ("himo-clip", "argent", "conventions")
METHOD_LINK = re.compile(r"\]\((?:\.\./)?docs/methods/")
#: the project pages in the order of the book's table of contents (``docs/<page>.md``)
DOC_PAGES = ("study", "reproducibility", "full-scale", "data", "layout", "reading-edition")
#: a Markdown image with a relative path: ``![alt](path)``
DOC_IMAGE = re.compile(r"!\[[^\]]*\]\((?![a-z]+://)([^)\s#]+)\)")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class BookError(Exception):
    """A missing or inconsistent input; the message says what to run."""


def reader_path(readme: Path) -> list[tuple[str, str]]:
    """``(notebook stem, what it shows)`` in the order of the README's reader's path table."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    if READER_HEADING not in lines:
        raise BookError(
            f"{readme} has no '{READER_HEADING}' section: the book's table of "
            "contents is taken from it"
        )
    order = []
    for line in lines[lines.index(READER_HEADING) + 1 :]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2:
            continue
        order += [(stem, cells[1]) for stem in re.findall(r"`([\w-]+)`", cells[0])]
    if not order:
        raise BookError(f"{readme}: the '{READER_HEADING}' section names no notebook")
    return order


def executed_copies(stems: list[str], executed_dir: Path) -> dict[str, Path]:
    """The executed ``.ipynb`` of each notebook; BookError naming the first one missing."""
    paths = {stem: executed_dir / f"{stem}.ipynb" for stem in stems}
    missing = [p for p in paths.values() if not p.is_file()]
    if missing:
        names = ", ".join(p.name for p in missing)
        raise BookError(
            f"{missing[0]} does not exist (missing: {names}). The book shows the "
            "notebooks as `make reproduce` executed them: run `make reproduce` "
            "first, then `make book`."
        )
    return paths


def call_name(call: ast.Call) -> str | None:
    """The name a call calls: ``f`` of ``f(...)`` and of ``x.f(...)``."""
    return getattr(call.func, "attr", getattr(call.func, "id", None))


def figure_calls() -> set[str]:
    """The names of the calls that draw a new figure: pyplot's (:data:`PYPLOT_FIGURES`) and each
    function of ``paperlib.figures`` whose code calls one of them."""
    import paperlib.figures as figures

    functions = {n: f for n, f in vars(figures).items() if inspect.isfunction(f)}
    called = {
        name: {
            call_name(c)
            for c in ast.walk(ast.parse(inspect.getsource(f)))
            if isinstance(c, ast.Call)
        }
        for name, f in functions.items()
    }
    found = set(PYPLOT_FIGURES)
    while grown := {n for n, names in called.items() if names & found} - found:
        found |= grown  # a function drawing its figure with another such function
    return found


def figures_drawn(source: str, calls: set[str]) -> tuple[int, int | None]:
    """(fewest, most) new figures a cell's code draws, counting its calls of ``calls``: one under
    a branch (:data:`BRANCHES`) may not run, one in a loop (:data:`LOOPS`) may run any number of
    times (most: None), one in a function or class the cell defines is not counted."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (a magic): not judged
        return 0, None
    fewest, most = 0, 0
    stack: list[tuple[ast.AST, bool, bool]] = [(tree, False, False)]
    while stack:
        node, branch, loop = stack.pop()
        if isinstance(node, SCOPES):
            continue
        if isinstance(node, ast.Call) and call_name(node) in calls:
            fewest += not (branch or loop)
            most = None if loop or most is None else most + 1
        for field, value in ast.iter_fields(node):
            # an if's test and a for's iterable run once, whatever the branch or the loop does
            once = field in ("test", "iter") and not isinstance(node, ast.While)
            inner_branch = branch or (isinstance(node, BRANCHES) and not once)
            inner_loop = loop or (isinstance(node, LOOPS) and not once)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    stack.append((child, inner_branch, inner_loop))
    return fewest, most


def image_outputs(cell) -> int:
    """How many images a code cell's outputs show."""
    return sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


def figure_problems(nb, calls: set[str]) -> list[str]:
    """A line for each code cell whose image outputs are not the figures it draws
    (:func:`figures_drawn`): fewer (the notebook ran without the inline backend, or a figure
    was closed unshown) or more (a figure shown twice)."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        fewest, most = figures_drawn(cell.source, calls)
        shown = image_outputs(cell)
        if shown < fewest or (most is not None and shown > most):
            most_text = "any number" if most is None else most
            drawn = f"{fewest}" if most == fewest else f"{fewest} to {most_text}"
            problems.append(f"cell {index} draws {drawn} figure(s) and shows {shown}")
    return problems


def default_parameters(nb) -> dict[str, tuple[str, str]]:
    """``name -> (value as written, its comment)`` for each assignment of the parameters cell."""
    import ast
    import io
    import tokenize

    cell = next(
        (c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])), None
    )
    if cell is None:
        return {}
    comments = {
        tok.start[0]: tok.string.lstrip("# ").strip()
        for tok in tokenize.generate_tokens(io.StringIO(cell.source).readline)
        if tok.type == tokenize.COMMENT
    }
    found = {}
    for node in ast.parse(cell.source).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            value = ast.get_source_segment(cell.source, node.value) or ""
            found[node.targets[0].id] = (" ".join(value.split()), comments.get(node.end_lineno, ""))
    return found


def git_commit(repo: Path = REPO) -> str:
    """Short commit of ``repo``, with a note when tracked files differ from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True
        ).stdout.strip()

    commit = git("rev-parse", "--short=10", "HEAD") or "unknown (not a git checkout)"
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"`{commit}`" + (" with uncommitted changes" if dirty else "")


def flatten(value, prefix: str = "") -> dict[str, object]:
    """Nested parameter dicts as dotted keys: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    if not isinstance(value, dict) or not value:
        return {prefix: value}
    out = {}
    for key, item in value.items():
        out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


def preset_name(stem: str, injected: dict, params_dir: Path) -> str | None:
    """The ``params/<stem>/<preset>.yaml`` whose values are exactly the injected ones."""
    for path in sorted((params_dir / stem).glob("*.yaml")):
        if injected and yaml.safe_load(path.read_text()) == injected:
            return path.relative_to(params_dir.parent).as_posix()
    return None


def parameter_rows(nb, injected: dict) -> list[tuple[str, str, str]]:
    """``(name, value, where from)`` for each papermill parameter of the notebook."""
    rows = []
    for name, (value, comment) in default_parameters(nb).items():
        if name not in injected:
            rows.append((name, value, f"default; {comment}" if comment else "default"))
    for name, value in injected.items():
        for key, item in flatten(value, name).items():
            rows.append((key, json.dumps(item, ensure_ascii=False), "injected by papermill"))
    return rows


def study_results(scale_parameter: str) -> tuple[str, str]:
    """What a study-reading notebook read, and with which seeds (from ``study.json``)."""
    from paperlib.study.paths import results_dir
    from paperlib.study.report.decided import available_scale

    scale = available_scale(scale_parameter)
    folder = results_dir(scale)
    where = f"`{folder.relative_to(REPO) if folder.is_relative_to(REPO) else folder}/`"
    study = folder / "study.json"
    if not study.is_file():
        return f"{where} (study scale **{scale}**; it has no study.json)", "not recorded"
    info = json.loads(study.read_text())
    seeds = ", ".join(map(str, info.get("seeds", [])))
    sweep = info.get("sweep_seeds") or []
    if sweep and sweep != info.get("seeds"):
        seeds += f" (ablations and the model-size arm: {', '.join(map(str, sweep))})"
    return f"{where}, study scale **{scale}**, {info.get('runs', '?')} runs", seeds


def results_and_seeds(stem: str, nb, injected: dict, params_dir: Path) -> tuple[str, str]:
    """The page's results line and seeds line."""
    defaults = default_parameters(nb)
    if "scale" in defaults:
        return study_results(injected.get("scale", yaml.safe_load(defaults["scale"][0])))
    values = {k: v for name, value in injected.items() for k, v in flatten(value, name).items()}
    values.update({n: value for n, (value, _) in defaults.items() if n not in injected})
    seeds = ", ".join(f"`{k}` = {v}" for k, v in values.items() if k.rsplit(".", 1)[-1] == "seed")
    preset = preset_name(stem, injected, params_dir)
    what = (
        f"its own run, with the preset `{preset}`" if preset else "its own run (parameters below)"
    )
    return what, seeds or "none set"


def is_stale(nb, source: Path) -> bool:
    """True when ``source`` (the jupytext ``.py``) no longer has the executed cells."""
    import jupytext

    def cells(notebook) -> list[tuple[str, str]]:
        return [
            (c.cell_type, c.source.strip())
            for c in notebook.cells
            if "injected-parameters" not in c.get("metadata", {}).get("tags", [])
        ]

    return not source.is_file() or cells(jupytext.read(source)) != cells(nb)


def table_cell(text: str, code: bool = False) -> str:
    """Text fit for one cell of a Markdown table."""
    text = str(text).replace("|", "\\|").replace("\n", " ")
    if code:
        fence = "``" if "`" in text else "`"
        return f"{fence}{text}{fence}"
    return text


def provenance(stem: str, nb, opts, stale: bool) -> str:
    """The page's 'Built from' box: source, results, seeds, execution, commit, parameters."""
    meta = nb.metadata.get("papermill", {})
    injected = meta.get("parameters") or {}
    results, seeds = results_and_seeds(stem, nb, injected, opts.params)
    ended = (meta.get("end_time") or "?")[:19].replace("T", " ")
    lines = [
        ":::{admonition} Built from",
        ":class: note book-provenance",
        "",
        f"- **Source:** {{download}}`notebooks/{stem}.py <_notebooks/{stem}.py>` "
        f"(executed copy: `{opts.executed_label}/{stem}.ipynb`)",
        f"- **Results:** {results}",
        f"- **Seeds:** {seeds}",
        f"- **Executed:** {ended} UTC by papermill, {meta.get('duration') or 0:.0f} s",
        f"- **Git commit:** {git_commit()} (the checkout this book was built from)",
    ]
    if stale:
        lines.append(
            f"- **Out of date:** `notebooks/{stem}.py` has changed since this run; "
            "run `make reproduce` again"
        )
    lines += ["", "**Papermill parameters**", "", "| parameter | value | from |", "|---|---|---|"]
    for name, value, note in parameter_rows(nb, injected):
        lines.append(
            f"| {table_cell(name, True)} | {table_cell(value, True)} | {table_cell(note)} |"
        )
    return "\n".join(lines + [":::"])


def write_if_changed(path: Path, text: str) -> Path:
    """Write ``text`` unless ``path`` already holds it (keeps Sphinx's rebuilds incremental)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def stage_notebook(stem: str, nb_path: Path, opts) -> tuple[list[Path], list[str]]:
    """Write the page's notebook (and its ``.py`` source) into the staging folder; BookError
    when the copy records a failed run or does not show the figures its cells draw."""
    nb = nbformat.read(nb_path, as_version=4)
    if nb.metadata.get("papermill", {}).get("exception"):
        raise BookError(f"{nb_path} records a failed run; run `make reproduce` again")
    problems = figure_problems(nb, figure_calls())
    if problems:
        raise BookError(
            f"{nb_path}: {'; '.join(problems)}; run `make reproduce` again (its runner draws "
            "each figure inline, as an output of the cell that draws it)"
        )
    source = opts.notebooks / f"{stem}.py"
    stale = is_stale(nb, source)
    staged = page_cells(nb, provenance(stem, nb, opts, stale))
    written = [write_if_changed(opts.src / f"{stem}.ipynb", nbformat.writes(staged))]
    if source.is_file():
        written.append(write_if_changed(opts.src / "_notebooks" / source.name, source.read_text()))
    warnings = [f"notebooks/{stem}.py has changed since {nb_path} was executed"] if stale else []
    return written, warnings


def page_cells(nb, box: str):
    """The page's notebook: the box under the title, code folded (parameters left open), the
    cells' outputs as they ran (figures included), widget outputs and widget state left out (a
    tqdm bar is progress, not content, and drawing one needs scripts from a CDN)."""
    staged = copy.deepcopy(nb)
    staged.metadata.pop("widgets", None)
    cells = []
    for cell in staged.cells:
        cells.append(cell)
        if cell.cell_type != "code":
            cell.source = METHOD_LINK.sub("](methods/", cell.source)
            continue
        cell.outputs = [o for o in cell.outputs if WIDGET_VIEW not in o.get("data", {})]
        tags = cell.metadata.setdefault("tags", [])
        if not PARAMETER_TAGS & set(tags) and "hide-input" not in tags:
            tags.append("hide-input")
    title, _, rest = cells[0].source.partition("\n") if cells else ("", "", "")
    if cells and cells[0].cell_type == "markdown" and title.startswith("# "):
        cells[0].source = title  # the box goes right under the page's title
        cells[1:1] = [nbformat.v4.new_markdown_cell(box)] + (
            [nbformat.v4.new_markdown_cell(rest)] if rest.strip() else []
        )
    else:
        cells.insert(0, nbformat.v4.new_markdown_cell(box))
    staged.cells = cells
    return staged


def module_names(package: str = "paperlib") -> list[str]:
    """Every module of ``package`` (subpackages included, ``__main__`` left out), sorted."""
    import importlib

    root = importlib.import_module(package)
    found = [m.name for m in pkgutil.walk_packages(root.__path__, f"{package}.")]
    return sorted([package] + [n for n in found if not n.endswith(".__main__")])


def write_api_pages(modules: list[str], src: Path) -> list[Path]:
    """One autodoc page per module: ``api/<module>.rst``."""
    written = []
    for name in modules:
        text = f"{name}\n{'=' * len(name)}\n\n.. automodule:: {name}\n   :members:\n   :undoc-members:\n"
        written.append(write_if_changed(src / "api" / f"{name}.rst", text))
    return written


def check_page_list(folder: Path, pages: Sequence[str], what: str, name: str) -> None:
    """BookError naming a page of ``pages`` missing from ``folder`` or a ``.md`` page there that
    the list (``name``) does not hold."""
    found = {p.stem for p in folder.glob("*.md")}
    missing, unlisted = set(pages) - found, found - set(pages)
    if missing or unlisted:
        raise BookError(
            f"{folder}: {what} must be {', '.join(pages)} "
            f"(missing: {sorted(missing) or 'none'}; not in {name}: {sorted(unlisted) or 'none'})"
        )


def stage_method_pages(methods: Path, src: Path) -> list[Path]:
    """Copy the method pages (:data:`METHOD_PAGES`) to ``<src>/methods/``; BookError naming a
    listed page that is missing or a page the list does not name."""
    check_page_list(methods, METHOD_PAGES, "the method pages", "METHOD_PAGES")
    return [
        write_if_changed(src / "methods" / f"{stem}.md", (methods / f"{stem}.md").read_text())
        for stem in METHOD_PAGES
    ]


def stage_doc_pages(docs: Path, src: Path) -> list[Path]:
    """Copy the project pages (:data:`DOC_PAGES`) to ``<src>/``, and each image a page shows
    (``![alt](path)``, relative to ``docs/``) to the same path under ``<src>/``; BookError naming
    a listed page that is missing, a page the list does not name, or an image that is missing."""
    check_page_list(docs, DOC_PAGES, "the project pages", "DOC_PAGES")
    written = []
    for stem in DOC_PAGES:
        text = (docs / f"{stem}.md").read_text(encoding="utf-8")
        written.append(write_if_changed(src / f"{stem}.md", text))
        for image in DOC_IMAGE.findall(text):
            source = docs / image
            if not source.is_file():
                raise BookError(f"{docs / stem}.md shows {image}, which does not exist")
            target = src / image
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.is_file() or target.read_bytes() != source.read_bytes():
                target.write_bytes(source.read_bytes())
    return written


def write_index(entries: list[tuple[str, str]], modules: list[str], src: Path) -> Path:
    """The home page: the reader's path as a table, then the tables of contents (notebooks,
    project pages, method pages, API reference)."""
    rows = "\n".join(f"| [{stem}]({stem}.ipynb) | {text} |" for stem, text in entries)
    pages = "\n".join(stem for stem, _ in entries)
    project = "\n".join(DOC_PAGES)
    methods = "\n".join(f"methods/{stem}" for stem in METHOD_PAGES)
    api = "\n".join(f"api/{name}" for name in modules)
    text = f"""# paperlib — the reading edition

The companion's notebooks as `make reproduce` executed them, with every figure inline, the
parameters papermill ran them with, and each page's sources: the results it read, their seeds,
and the git commit. Code cells are folded (click to unfold); each `paperlib` function they call
links to its module's page. The project pages hold the study's design and claims in full,
reproducibility, full-scale training and evaluation, data layouts and the code's layout. The
method pages state what each paper and its reference code define, in this project's words; the
code and the notebooks cite their sections. Rebuild with `make book` after `make reproduce`.

Built from the checkout at {git_commit()}.

| notebook | what it shows |
|---|---|
{rows}

```{{toctree}}
:caption: The notebooks
:maxdepth: 1

{pages}
```

```{{toctree}}
:caption: The project (what the README leaves out)
:maxdepth: 1

{project}
```

```{{toctree}}
:caption: The methods (what the code cites)
:maxdepth: 1

{methods}
```

```{{toctree}}
:caption: API reference (one page per module)
:maxdepth: 1

{api}
```
"""
    return write_if_changed(src / "index.md", text)


def prune(src: Path, keep: list[Path]) -> None:
    """Remove staged pages of an earlier build that this one did not write."""
    keep_set = {p.resolve() for p in keep}
    for path in src.rglob("*"):
        if (
            path.is_file()
            and path.suffix in {".ipynb", ".md", ".rst", ".py"}
            and path.resolve() not in keep_set
        ):
            path.unlink()


def run_sphinx(opts) -> None:
    """Sphinx's HTML builder over the staging folder, with ``docs/conf.py``; every page is read
    afresh (-E), as Sphinx does not track changes to the configuration's hooks."""
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-b",
        "html",
        "-E",
        "-q",
        "-c",
        str(REPO / "docs"),
        "-d",
        str(opts.doctrees),
        str(opts.src),
        str(opts.out),
    ]
    if subprocess.run(cmd, cwd=REPO).returncode != 0:
        raise BookError(f"sphinx-build failed (see above): {' '.join(cmd)}")


def build(opts) -> tuple[int, int]:
    """Stage every page and run Sphinx; returns (notebook pages, module pages)."""
    entries = reader_path(opts.readme)
    if opts.only:
        entries = [(stem, text) for stem, text in entries if stem in opts.only]
        unknown = set(opts.only) - {stem for stem, _ in entries}
        if unknown:
            raise BookError(
                f"--only {' '.join(sorted(unknown))}: not in the reader's path of {opts.readme}"
            )
    paths = executed_copies([stem for stem, _ in entries], opts.executed)
    written = []
    for stem, path in paths.items():
        files, warnings = stage_notebook(stem, path, opts)
        written += files
        for warning in warnings:
            print(f"[book] warning: {warning}; its page says so", file=sys.stderr)
    modules = opts.modules or module_names()
    written += stage_method_pages(opts.methods, opts.src)
    written += stage_doc_pages(opts.docs, opts.src)
    written += write_api_pages(modules, opts.src)
    written.append(write_index(entries, modules, opts.src))
    prune(opts.src, written)
    run_sphinx(opts)
    return len(entries), len(modules)


def parse_args(argv: list[str] | None):
    from paperlib.notebooks import EXECUTED_DIR

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--executed", type=Path, default=EXECUTED_DIR, help="the executed .ipynb copies"
    )
    parser.add_argument(
        "--notebooks", type=Path, default=REPO / "notebooks", help="the jupytext sources"
    )
    parser.add_argument("--params", type=Path, default=REPO / "params", help="papermill presets")
    parser.add_argument(
        "--methods", type=Path, default=REPO / "docs/methods", help="the method pages (.md)"
    )
    parser.add_argument("--docs", type=Path, default=REPO / "docs", help="the project pages (.md)")
    parser.add_argument(
        "--readme", type=Path, default=REPO / "README.md", help="its reader's path is the ToC"
    )
    parser.add_argument("--only", nargs="*", help="build these notebooks only")
    parser.add_argument("--modules", nargs="*", help="API pages for these modules only")
    parser.add_argument("--src", type=Path, default=REPO / "build/book-src", help="staging folder")
    parser.add_argument("--doctrees", type=Path, default=REPO / "build/book-doctrees")
    parser.add_argument("--out", type=Path, default=REPO / "build/book", help="the site")
    opts = parser.parse_args(argv)
    executed = opts.executed.resolve()
    opts.executed_label = (
        executed.relative_to(REPO).as_posix() if executed.is_relative_to(REPO) else executed
    )
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    start = time.perf_counter()
    try:
        pages, modules = build(opts)
    except BookError as err:
        print(f"book: {err}", file=sys.stderr)
        return 1
    print(
        f"[book] {opts.out / 'index.html'}: {pages} notebook pages, {modules} module pages, "
        f"{time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
