"""The reading edition and its browser check.

A tiny site is built from a hand-made executed notebook (one figure as its cell's output, maths,
a paperlib call): the check passes on it and fails once a figure file is gone, a link is broken
or MathJax is missing. Each executed notebook (``make reproduce``'s ``build/executed/``) shows as
many figures, cell by cell, as its code draws; the book refuses a copy that does not. ``make
lab`` is checked to open a tutorial as a notebook. The browser tests need the docs extra (``make
book-check`` installs it) and Debian's chromium (installed when missing).
"""

from __future__ import annotations

import base64
import importlib.util
import io
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from paperlib.notebooks import EXECUTED_DIR

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import build_book  # noqa: E402
import check_book  # noqa: E402

READER_PATH = [
    "00_quickstart",
    "01_pca_decomposition",
    "02_monotonicity",
    "03_aperture_failure",
    "04_horopca_plots",
    "05_main_tables",
    "train_himo",
    "eval_himo",
    "train_argent",
    "eval_argent",
]
TINY_SOURCE = """# %% [markdown]
# # A tiny notebook
# Inline maths $\\tau = 0.9$, and on its own line:
# $$\\hat u = \\sum_{i \\le m} (u \\cdot p_i)\\, p_i$$

# %% tags=["parameters"]
seed = 0  # the world's seed

# %%
import matplotlib.pyplot as plt

from paperlib.figures import save

fig, ax = plt.subplots()
ax.plot([0, 1], [seed, 1])
save(fig, "tiny_figure")
"""
TINY_README = """# tiny

## A reader's path through the notebooks

| notebook | what it shows |
|---|---|
| `tiny` | one figure and some maths |

## Next
"""


def require(*modules: str) -> None:
    """Skip, naming what to install, when the docs tools are missing."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed: `make book-check` installs the docs extra"
        )


@pytest.fixture(scope="module")
def chromium() -> str:
    require("playwright")
    try:
        return check_book.ensure_chromium()
    except check_book.ChromiumUnavailable as err:
        pytest.skip(f"no headless browser for the check: {err}")


def png_output() -> dict:
    """A figure as the inline backend leaves it: a display_data output with its PNG."""
    import matplotlib
    import nbformat

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    png = base64.b64encode(buffer.getvalue()).decode("ascii")
    text = "<Figure size 300x200 with 1 Axes>"
    return nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": text})


def executed_tiny(root: Path) -> Path:
    """``tiny.py`` as papermill leaves it executed: its figure an output of the cell drawing it."""
    import jupytext

    (root / "notebooks").mkdir()
    (root / "notebooks/tiny.py").write_text(TINY_SOURCE)
    nb = jupytext.read(root / "notebooks/tiny.py")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], i
    nb.cells[2].outputs = [png_output()]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    nb.metadata["papermill"] = {
        "parameters": {},
        "duration": 2.0,
        "exception": None,
        "start_time": "2000-01-01T00:00:00.000000",
        "end_time": "2000-01-01T00:00:02.000000",
    }
    (root / "executed").mkdir()
    jupytext.write(nb, root / "executed/tiny.ipynb")
    return root / "executed/tiny.ipynb"


def build_args(root: Path) -> list[str]:
    return [
        "--executed",
        str(root / "executed"),
        "--notebooks",
        str(root / "notebooks"),
        "--params",
        str(root / "params"),
        "--readme",
        str(root / "README.md"),
        "--modules",
        "paperlib.figures",
        "--src",
        str(root / "src"),
        "--doctrees",
        str(root / "doctrees"),
        "--out",
        str(root / "site"),
    ]


@pytest.fixture(scope="module")
def tiny_site(tmp_path_factory) -> Path:
    require("sphinx", "myst_nb", "sphinx_codeautolink", "sphinx_book_theme")
    root = tmp_path_factory.mktemp("book")
    (root / "README.md").write_text(TINY_README)
    executed_tiny(root)
    assert build_book.main(build_args(root)) == 0
    return root / "site"


def copy_site(site: Path, target: Path) -> Path:
    """A copy of the site made of hard links (edit a file only after unlinking it)."""
    shutil.copytree(site, target, copy_function=os.link)
    return target


def rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.unlink()
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def failures_with(tiny_site: Path, tmp_path: Path, chromium: str, old: str, new: str) -> list:
    """The browser check's failures on a copy of the tiny site whose tiny.html has ``old``
    replaced by ``new``."""
    site = copy_site(tiny_site, tmp_path / "site")
    rewrite(site / "tiny.html", old, new)
    return check_book.check_site(site, tmp_path / "shots", chromium).failures


def test_reader_path_is_the_readme_table():
    assert [stem for stem, _ in build_book.reader_path(REPO / "README.md")] == READER_PATH


def test_missing_executed_notebook_says_run_make_reproduce(tmp_path, capsys):
    (tmp_path / "README.md").write_text(TINY_README)
    (tmp_path / "executed").mkdir()
    assert build_book.main(build_args(tmp_path)) == 1
    err = capsys.readouterr().err
    assert "tiny.ipynb does not exist" in err and "make reproduce" in err


@pytest.mark.parametrize(
    ("source", "drawn"),
    [
        ("fig, ax = plt.subplots()\nsave(fig, 'a')\nplt.show()", (1, 1)),
        ("_ = save(sample_strip(samples), 'a')\nread.similarity(table)", (1, 1)),
        ("fig = figures.claims_forest(c)\nfig2 = plt.figure()", (2, 2)),
        ("if curves:\n    fig = figures.validation_curves(curves)\nx = 1", (0, 1)),
        ("fig = plot_log(log) if log else None", (0, 1)),
        ("for name in names:\n    save(plt.subplots()[0], name)", (0, None)),
        ("panels = [metric_panels(p) for p in groups]", (0, None)),
        ("def draw():\n    return plt.subplots()\n\nsave(fig, 'a')", (0, 0)),
        ("if plt.subplots():\n    pass", (1, 1)),  # an if's test always runs
        ("%matplotlib inline", (0, None)),  # IPython syntax: not judged
    ],
)
def test_a_cell_s_figures_are_its_calls_that_draw_one(source, drawn):
    calls = build_book.figure_calls()
    assert {"subplots", "figure", "plot_log", "claims_forest", "sample_strip"} <= calls
    assert not {"save", "use_style", "chance_line", "model_chance_ticks"} & calls
    assert build_book.figures_drawn(source, calls) == drawn


def test_a_copy_that_does_not_show_the_figures_its_cells_draw_is_refused(tmp_path):
    import nbformat

    (tmp_path / "README.md").write_text(TINY_README)
    path = executed_tiny(tmp_path)
    opts = build_book.parse_args(build_args(tmp_path))
    assert build_book.stage_notebook("tiny", path, opts)[1] == []
    nb = nbformat.read(path, as_version=4)
    for shown in ([], [png_output(), png_output()]):  # drawn without the inline backend; twice
        nb.cells[2].outputs = shown
        nbformat.write(nb, path)
        with pytest.raises(build_book.BookError) as refused:
            build_book.stage_notebook("tiny", path, opts)
        assert f"cell 2 draws 1 figure(s) and shows {len(shown)}" in str(refused.value)
        assert "run `make reproduce` again" in str(refused.value)


@pytest.mark.parametrize("stem", READER_PATH)
def test_each_executed_notebook_shows_each_figure_it_draws(stem):
    """After ``make reproduce``: each cell of each executed copy has as many image outputs as
    figures its code draws (a figure under a branch may be drawn or not, one in a loop any
    number of times)."""
    import nbformat

    path = EXECUTED_DIR / f"{stem}.ipynb"
    if not path.is_file():
        pytest.skip(f"no {path.relative_to(REPO)}: `make reproduce` executes the notebooks")
    nb = nbformat.read(path, as_version=4)
    assert not nb.metadata["papermill"]["exception"], f"{path} records a failed run"
    problems = build_book.figure_problems(nb, build_book.figure_calls())
    assert problems == [], f"{path}: run `make reproduce` again"


def test_a_changed_source_marks_the_page_out_of_date(tmp_path):
    import nbformat

    executed_tiny(tmp_path)
    nb = nbformat.read(tmp_path / "executed/tiny.ipynb", as_version=4)
    source = tmp_path / "notebooks/tiny.py"
    assert not build_book.is_stale(nb, source)
    source.write_text(TINY_SOURCE.replace("seed = 0", "seed = 1"))
    assert build_book.is_stale(nb, source)


@pytest.mark.slow
def test_tiny_site_has_what_a_page_needs(tiny_site):
    page = (tiny_site / "tiny.html").read_text(encoding="utf-8")
    assert "Built from" in page and "its own run" in page and "Git commit" in page
    assert re.search(r'href="_downloads/\w+/tiny\.py"', page)  # the source .py is linked
    assert 'href="api/paperlib.figures.html#paperlib.figures.save"' in page  # the call links
    assert "hide-input" in page  # code folded
    assert re.search(r'<img [^>]*src="_images/\w+\.png"', page)  # the cell's figure output
    assert "Papermill parameters" in page and "<code" in page.split("Papermill parameters")[1]
    argent = (tiny_site / "methods/argent.html").read_text(encoding="utf-8")
    assert 'id="adaent"' in argent and 'href="conventions.html#half-aperture"' in argent
    assert 'href="methods/himo-clip.html"' in (tiny_site / "index.html").read_text()
    index = (tiny_site / "index.html").read_text()
    assert all(f'href="{stem}.html"' in index for stem in build_book.DOC_PAGES)
    study = (tiny_site / "study.html").read_text(encoding="utf-8")
    assert 'href="reproducibility.html#other-targets"' in study
    assert check_book.unbuilt_pages(tiny_site) == []


@pytest.mark.slow
def test_check_passes_on_the_tiny_site(tiny_site, chromium, tmp_path):
    report = check_book.check_site(tiny_site, tmp_path / "shots", chromium)
    assert report.failures == []
    assert report.pages >= 4 and report.images >= 1 and report.links > 10
    assert (tmp_path / "shots/tiny.png").stat().st_size > 10_000


@pytest.mark.slow
def test_check_fails_when_a_figure_file_is_removed(tiny_site, chromium, tmp_path):
    site = copy_site(tiny_site, tmp_path / "site")
    for png in (site / "_images").glob("*.png"):
        png.unlink()
    report = check_book.check_site(site, tmp_path / "shots", chromium)
    assert any("tiny.html: image did not load" in f for f in report.failures), report.failures


@pytest.mark.slow
def test_check_fails_on_a_broken_link_or_anchor(tiny_site, chromium, tmp_path):
    links = '<a href="gone.html">x</a> <a href="index.html#nowhere">y</a><h1>'
    failures = failures_with(tiny_site, tmp_path, chromium, "<h1>", links)
    assert any("broken link to gone.html (no such file)" in f for f in failures), failures
    assert any("broken link to index.html#nowhere (no such anchor)" in f for f in failures), (
        failures
    )


@pytest.mark.slow
def test_check_fails_on_untypeset_maths(tiny_site, chromium, tmp_path):
    failures = failures_with(
        tiny_site, tmp_path, chromium, "mathjax/tex-chtml.js", "mathjax/absent.js"
    )
    assert any("tiny.html: raw TeX in the visible text" in f for f in failures), failures


@pytest.mark.slow
def test_check_fails_on_a_results_table_wider_than_the_page_or_taller_than_two_screens(
    tiny_site, chromium, tmp_path
):
    def table(rows: int, cell: str) -> str:
        body = "".join(f"<tr><td>{cell}</td></tr>" for _ in range(rows))
        return f'<table class="dataframe"><tbody>{body}</tbody></table>'

    article = '<article class="bd-article">'  # the page's text column
    fitting = article + table(10, "a short cell")
    assert failures_with(tiny_site, tmp_path / "fits", chromium, article, fitting) == []
    wide = article + table(1, "w" * 400) + table(120, "tall")  # no break in 400 letters
    failures = failures_with(tiny_site, tmp_path / "too-big", chromium, article, wide)
    assert any("tiny.html: table wider than the page" in f for f in failures), failures
    assert any("tiny.html: table taller than 2 screens" in f for f in failures), failures


@pytest.mark.slow
def test_check_fails_on_a_warning_in_an_output(tiny_site, chromium, tmp_path):
    output = '<div class="cell_output"><pre>UserWarning: something</pre></div><h1>'
    failures = failures_with(tiny_site, tmp_path, chromium, "<h1>", output)
    assert any(f.startswith("tiny.html: output shows a warning") for f in failures), failures


@pytest.mark.slow
def test_make_lab_opens_a_tutorial_as_a_notebook(chromium, tmp_path):
    require("jupyterlab")
    import check_lab

    summary = check_lab.check_lab("notebooks/02_monotonicity.py", tmp_path)
    assert "as a notebook" in summary and ".venv" in summary


# ---------------------------------------------------------------- citations and outputs

METHOD_PAGE = """# A method

(first-anchor)=
## First

See [the second](other.md#second-anchor) and [nowhere](other.md#missing-anchor).
"""
OTHER_PAGE = """# Another

(second-anchor)=
## Second
"""


def method_pages(root: Path) -> Path:
    methods = root / "docs" / "methods"
    methods.mkdir(parents=True)
    (methods / "one.md").write_text(METHOD_PAGE)
    (methods / "other.md").write_text(OTHER_PAGE)
    return methods


def test_the_project_s_citations_all_resolve():
    files = check_book.project_text_files(REPO)
    assert any(f.suffix == ".py" and "paperlib" in f.parts for f in files)
    assert check_book.citation_problems(files) == []


def test_a_citation_of_a_missing_anchor_or_page_fails_the_check(tmp_path):
    methods = method_pages(tmp_path)
    cite = "docs/" + "methods"  # spelt in two parts: this file's own lines are checked too
    code = tmp_path / "code.py"
    code.write_text(
        f'"""Cites ``{cite}/one.md#first-anchor`` (fine), and\n'
        f'``{cite}/one.md#gone`` and ``{cite}/absent.md#x`` (broken)."""\n'
        f"# notebooks link [it](../{cite}/other.md#second-anchor)\n"
        "# and " + "SP" + "EC §1.1 is a document outside the project\n"
    )
    problems = check_book.citation_problems([code, *methods.glob("*.md")], methods, tmp_path)
    assert problems == [
        "code.py:2: cites one.md#gone, an anchor one.md lacks",
        f"code.py:2: cites {cite}/absent.md, which does not exist",
        "code.py:4: cites " + repr("SP" + "EC §") + ", a document outside the project",
        f"{cite}/one.md:6: cites other.md#missing-anchor, an anchor other.md lacks",
    ]
    (methods / "other.md").write_text(OTHER_PAGE + "\n(first-anchor)=\n## Again\n")
    again = check_book.citation_problems([], methods, tmp_path)
    assert again == ["anchor 'first-anchor' is defined on one and other"]


SMALL_PAGE = """<html><body><h1>A page</h1><p>C:/not/an/output /tmp/prose-is-fine</p>
<div class="cell docutils container"><div class="cell_output docutils container">
<div class="output stderr"><pre>{stderr}</pre></div>
<div class="output stream"><pre>{stdout}</pre></div></div></div></body></html>
"""


def test_warnings_and_local_paths_in_outputs_fail_the_check(tmp_path):
    roots = ["/work/checkout/", "/root/"]
    clean = SMALL_PAGE.format(stderr="", stdout="results/full/claims.json: 33 claims")
    assert [o.strip() for o in check_book.page_outputs(clean)] == [
        "results/full/claims.json: 33 claims"
    ]
    assert check_book.output_problems(check_book.page_outputs(clean), roots) == []
    bad = SMALL_PAGE.format(
        stderr="/opt/venv/lib/python3.11/site-packages/tqdm/auto.py:21: TqdmWarning: "
        "IProgress not found",
        stdout="saved to /work/checkout/figures/x.png",
    )
    problems = check_book.output_problems(check_book.page_outputs(bad), roots)
    kinds = [p.split(":")[0] for p in problems]
    assert kinds == [
        "output shows a warning",
        "output shows a local path",
        "output shows a local path",
    ]
    assert "site-packages" in problems[1] and "/work/checkout/figures" in problems[2]
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(clean)
    (site / "page.html").write_text(bad)
    found = check_book.site_output_problems(site, roots)
    assert len(found) == 3 and all(f.startswith("page.html: output shows") for f in found)


def test_method_pages_are_staged_and_notebook_links_point_at_them(tmp_path):
    import nbformat

    methods = tmp_path / "methods"
    methods.mkdir()
    for stem in build_book.METHOD_PAGES:
        (methods / f"{stem}.md").write_text(f"# {stem}\n")
    staged = build_book.stage_method_pages(methods, tmp_path / "src")
    assert [p.relative_to(tmp_path / "src").as_posix() for p in staged] == [
        f"methods/{stem}.md" for stem in build_book.METHOD_PAGES
    ]
    (methods / "extra.md").write_text("# extra\n")
    with pytest.raises(build_book.BookError, match="not in METHOD_PAGES: \\['extra'\\]"):
        build_book.stage_method_pages(methods, tmp_path / "src")
    nb = nbformat.v4.new_notebook()
    link = "../docs/" + "methods/argent.md#adaent"
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# T\nSee [AdaEnt]({link})."),
        nbformat.v4.new_code_cell(f"x = 1  # {link}"),
    ]
    bar = nbformat.v4.new_output(
        "display_data", data={build_book.WIDGET_VIEW: {"model_id": "x"}, "text/plain": "HBox()"}
    )
    printed = nbformat.v4.new_output("stream", name="stdout", text="done\n")
    nb.cells[1].outputs = [bar, printed]
    page = build_book.page_cells(nb, "box")
    assert "[AdaEnt](methods/argent.md#adaent)" in page.cells[2].source
    assert page.cells[3].source == nb.cells[1].source  # code is left as written
    assert page.cells[3].outputs == [printed]  # a tqdm widget papermill kept no state of
    # a run that saved its widgets' state: the bar and the state are left out all the same, so
    # the page asks no widget script of a CDN
    state = {
        "application/vnd.jupyter.widget-state+json": {"state": {"x": {"model_name": "HBoxModel"}}}
    }
    nb.metadata["widgets"] = state
    saved = build_book.page_cells(nb, "box")
    assert saved.cells[3].outputs == [printed] and "widgets" not in saved.metadata


def test_project_pages_are_staged_with_the_images_they_show(tmp_path):
    docs = tmp_path / "docs"
    (docs / "shots").mkdir(parents=True)
    (docs / "shots/view.png").write_bytes(b"png")
    for stem in build_book.DOC_PAGES:
        (docs / f"{stem}.md").write_text(f"# {stem}\n")
    first = build_book.DOC_PAGES[0]
    (docs / f"{first}.md").write_text(f"# {first}\n\n![a view](shots/view.png)\n")
    staged = build_book.stage_doc_pages(docs, tmp_path / "src")
    assert [p.relative_to(tmp_path / "src").as_posix() for p in staged] == [
        f"{stem}.md" for stem in build_book.DOC_PAGES
    ]
    assert (tmp_path / "src/shots/view.png").read_bytes() == b"png"
    (docs / "shots/view.png").unlink()
    with pytest.raises(build_book.BookError, match="shows shots/view.png, which does not exist"):
        build_book.stage_doc_pages(docs, tmp_path / "src")
    (docs / f"{first}.md").write_text(f"# {first}\n")
    (docs / "extra.md").write_text("# extra\n")
    with pytest.raises(build_book.BookError, match="not in DOC_PAGES: \\['extra'\\]"):
        build_book.stage_doc_pages(docs, tmp_path / "src")


def test_a_page_s_link_that_reaches_nothing_from_its_folder_fails_the_check(tmp_path):
    methods = method_pages(tmp_path)
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures/plot.png").write_bytes(b"png")
    readme = tmp_path / "README.md"
    readme.write_text(
        '[a page](docs/page.md) <img src="figures/plot.png"> [web](https://example.org)\n'
        '[moved](docs/gone.md) <img src="docs/plot.png">\n'
    )
    page = tmp_path / "docs/page.md"
    cite = "docs/" + "methods"  # spelt in two parts: this file's own lines are checked too
    page.write_text(
        "[first](methods/one.md#first-anchor) [back](#top) ![plot](../figures/plot.png)\n"
        f"[from the root]({cite}/one.md) [no anchor](methods/one.md#gone)\n"
    )
    problems = check_book.citation_problems([readme, page], methods, tmp_path)
    assert problems == [
        "README.md:2: links docs/gone.md, which is not there from " + f"{tmp_path.name}/",
        "README.md:2: links docs/plot.png, which is not there from " + f"{tmp_path.name}/",
        f"docs/page.md:2: links {cite}/one.md, which is not there from docs/",
        "docs/page.md:2: links methods/one.md#gone, an anchor one.md lacks",
    ]


def test_a_project_or_method_page_missing_from_the_site_fails_the_check(tmp_path):
    methods = method_pages(tmp_path)
    (methods.parent / "study.md").write_text("# The study\n")
    site = tmp_path / "site"
    (site / "methods").mkdir(parents=True)
    (site / "methods/one.html").write_text("<html></html>")
    assert check_book.unbuilt_pages(site, methods) == [
        "study.html: not in the site, though docs/study.md is a page",
        "methods/other.html: not in the site, though docs/" + "methods/other.md is a page",
    ]
