#!/usr/bin/env python3
"""Check the reading edition: the citations it rests on, what its pages' outputs show, and
every page in headless Chromium.

- **Citations.** Code, notebooks, presets, tests and docs cite the method pages as
  ``docs/methods/<page>.md#<anchor>`` (notebooks link ``../docs/methods/...``); every cited
  page must exist and every anchor be one of its ``(anchor)=`` targets, the method pages'
  links to each other too, and no file may cite a document outside the project.
- **Links of the README and the project pages.** Every relative link or image of
  ``README.md``, ``docs/*.md`` and ``docs/methods/*.md`` must reach a file from the page's
  folder (a link to a method page's anchor, that anchor), and every project and method page
  must have its page in the built site.
- **Outputs.** No cell output on any page may show a warning (``SomethingWarning:``) or an
  absolute path of the machine that built it (the checkout, the home folder, the Python
  environment, the temporary folder, a ``site-packages`` folder).
- **Pages.** A page fails on: a load error or HTTP error, a console error or uncaught
  exception, a request that failed, an image that did not decode (``naturalWidth == 0``), a
  link to a file or anchor the site lacks, maths left as TeX (``$$``, ``\\(``, ``\\[`` in
  the visible text, or a math element MathJax did not typeset), or a results table (a pandas
  table in a cell's output) wider than the page's text column or taller than two screens.
  One screenshot per page goes to ``build/book-screenshots/``.

    python scripts/check_book.py                     # build/book
    python scripts/check_book.py --site DIR --screenshots DIR

Chromium is Debian's ``chromium`` (installed with apt-get when missing), driven by playwright.
"""

from __future__ import annotations

import argparse
import functools
import html.parser
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = ("chromium", "chromium-browser")
SKIP_DIRS = {"_static", "_sources", "_downloads", "_images", ".doctrees"}
RAW_TEX = re.compile(r"\$\$|\\\(|\\\[|\$[^$\n]*\\[A-Za-z]+[^$\n]*\$")
VIEWPORT = {"width": 1280, "height": 900}
METHODS = REPO / "docs/methods"
#: a citation of a method page: ``docs/methods/<page>.md`` with an optional ``#<anchor>``
CITATION = re.compile(r"(?<![\w/.])(?:\.\./)?docs/methods/([\w-]+)\.md(?:#([\w-]+))?")
SIBLING_LINK = re.compile(r"\]\(([\w-]+)\.md(?:#([\w-]+))?\)")  # a method page's link to another
TARGET = re.compile(r"^\(([\w-]+)\)=[ \t]*$", re.MULTILINE)  # a MyST target: (anchor)=
#: a relative link or image of a Markdown page: ``[text](path#anchor)``, ``src="path"``
RELATIVE_LINK = re.compile(r"(?:\]\(|\bsrc=\")(?![a-z]+:|#|/)([^)\s\"#]+)(?:#([\w-]+))?")
OUTSIDE_DOCUMENTS = ("SPEC §", "SPEC.md")  # the notes the pages were written from: not shipped
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".json", ".cfg", ".ini", ".rst"}
WARNING = re.compile(r"\b[A-Z]\w*Warning\b:?")

# what the page shows, collected in the browser once it has loaded and typeset its maths
PAGE_PROBE = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const skip = new Set(["PRE", "CODE", "SCRIPT", "STYLE", "TEXTAREA", "NOSCRIPT", "MJX-ASSISTIVE-MML"]);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const text = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    let el = node.parentElement, hidden = false;
    for (let up = el; up; up = up.parentElement) if (skip.has(up.tagName)) { hidden = true; break; }
    if (!hidden && el.checkVisibility()) text.push(node.textContent);
  }
  const untypeset = [...document.querySelectorAll("span.math, div.math")]
    .filter(el => !el.querySelector("mjx-container")).map(el => el.textContent.slice(0, 80));
  return {
    images: [...document.images].map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth})),
    links: [...document.querySelectorAll("a[href]")].map(a => a.href),
    ids: [...document.querySelectorAll("[id]")].map(el => el.id)
      .concat([...document.querySelectorAll("a[name]")].map(a => a.name)),
    text: text.join(" "), untypeset,
    tables: [...document.querySelectorAll("table.dataframe")].map(table => {
      const box = table.getBoundingClientRect();
      const column = table.closest("article, main") || document.body;
      return {width: box.width, height: box.height, room: column.clientWidth,
              head: table.innerText.slice(0, 60)};
    }),
  };
}"""
TABLE_SCREENS = 2  # a results table may be at most this many viewport heights tall


# --------------------------------------------------------------------------- citations


def method_anchors(methods: Path = METHODS) -> dict[str, list[str]]:
    """``{page stem: its (anchor)= targets}`` of every method page."""
    return {
        p.stem: TARGET.findall(p.read_text(encoding="utf-8")) for p in sorted(methods.glob("*.md"))
    }


def project_text_files(repo: Path = REPO) -> list[Path]:
    """The repository's text files that git tracks or would track (build outputs left out)."""
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
    )
    if listed.returncode != 0:
        raise FileNotFoundError(f"{repo} is not a git checkout: {listed.stderr.strip()}")
    paths = {repo / line for line in listed.stdout.splitlines()}
    return sorted(p for p in paths if p.suffix in TEXT_SUFFIXES and p.is_file())


def _readable_lines(path: Path) -> list[str]:
    """The lines of a text file as a reader sees them: a JSON file with its escapes decoded
    (``\\u00a7`` is ``§``), re-indented (line numbers then count in that form)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            text = json.dumps(json.loads(text), indent=1, ensure_ascii=False)
        except ValueError:
            pass
    return text.splitlines()


def citation_problems(files: list[Path], methods: Path = METHODS, root: Path = REPO) -> list[str]:
    """Each citation of a method page or anchor that does not exist, each duplicate anchor
    (Sphinx labels are global) and each citation of a document outside the project, as
    ``file:line: problem``."""
    anchors = method_anchors(methods)
    problems = [
        f"{methods / page}.md: anchor {name!r} is defined more than once"
        for page, names in anchors.items()
        for name in sorted({n for n in names if names.count(n) > 1})
    ]
    owners: dict[str, str] = {}
    for page, names in anchors.items():
        for name in set(names):
            if name in owners:
                problems.append(f"anchor {name!r} is defined on {owners[name]} and {page}")
            owners.setdefault(name, page)
    for path in files:
        where = path.relative_to(root) if path.is_relative_to(root) else path
        in_methods = path.parent.resolve() == methods.resolve()
        for number, line in enumerate(_readable_lines(path), 1):
            found = [*CITATION.findall(line), *(SIBLING_LINK.findall(line) if in_methods else [])]
            for page, anchor in found:
                if page not in anchors:
                    problems.append(
                        f"{where}:{number}: cites docs/methods/{page}.md, which does not exist"
                    )
                elif anchor and anchor not in anchors[page]:
                    problems.append(
                        f"{where}:{number}: cites {page}.md#{anchor}, an anchor {page}.md lacks"
                    )
            problems += [
                f"{where}:{number}: cites {text!r}, a document outside the project"
                for text in OUTSIDE_DOCUMENTS
                if text in line and path.name != Path(__file__).name
            ]
            if is_page(path, methods, root):
                problems += page_link_problems(path, line, anchors, methods, f"{where}:{number}")
    return problems


def is_page(path: Path, methods: Path = METHODS, root: Path = REPO) -> bool:
    """Whether ``path`` is the README, a project page (``docs/*.md``) or a method page."""
    folders = {root.resolve(), methods.parent.resolve(), methods.resolve()}
    return path.suffix == ".md" and path.parent.resolve() in folders


def page_link_problems(
    page: Path, line: str, anchors: dict[str, list[str]], methods: Path, where: str
) -> list[str]:
    """Each relative link or image on ``line`` of ``page`` that reaches no file from the
    page's folder, and each link from outside the method pages to a method page's anchor that
    the page lacks (the method pages' own links are :data:`SIBLING_LINK`'s)."""
    problems = []
    for target, anchor in RELATIVE_LINK.findall(line):
        found = page.parent / target
        if not found.exists():
            problems.append(f"{where}: links {target}, which is not there from {page.parent.name}/")
        elif (
            anchor
            and found.suffix == ".md"
            and found.resolve().parent == methods.resolve() != page.parent.resolve()
            and anchor not in anchors.get(found.stem, [])
        ):
            problems.append(f"{where}: links {target}#{anchor}, an anchor {found.name} lacks")
    return problems


def unbuilt_pages(site: Path, methods: Path = METHODS) -> list[str]:
    """Each project page (``docs/*.md``) and method page with no page in the built site."""
    docs = methods.parent.name
    expected = [(f"{p.stem}.html", f"{docs}/{p.name}") for p in sorted(methods.parent.glob("*.md"))]
    expected += [
        (f"methods/{p.stem}.html", f"{docs}/methods/{p.name}") for p in sorted(methods.glob("*.md"))
    ]
    return [
        f"{rel}: not in the site, though {source} is a page"
        for rel, source in expected
        if not (site / rel).is_file()
    ]


# --------------------------------------------------------------------------- cell outputs


class _OutputText(html.parser.HTMLParser):
    """The text inside each ``cell_output`` element of an HTML page (myst-nb's outputs)."""

    def __init__(self) -> None:
        super().__init__()
        self.outputs: list[str] = []
        self._depth = 0  # open elements inside the current output, 0 when outside

    def handle_starttag(self, tag, attrs) -> None:
        if self._depth:
            self._depth += 1
        elif "cell_output" in (dict(attrs).get("class") or "").split():
            self._depth = 1
            self.outputs.append("")

    def handle_endtag(self, tag) -> None:
        if self._depth:
            self._depth -= 1

    def handle_data(self, data) -> None:
        if self._depth:
            self.outputs[-1] += data


def page_outputs(page_html: str) -> list[str]:
    """The text of each cell output of a built page."""
    parser = _OutputText()
    parser.feed(page_html)
    return parser.outputs


def local_roots() -> list[str]:
    """Absolute paths of this machine that a page must not show: the checkout, the home
    folder, the Python environment and the temporary folder, and any home or temporary folder."""
    roots = {str(REPO), str(Path.home()), sys.prefix, sys.base_prefix, tempfile.gettempdir()}
    return sorted(
        {r.rstrip("/") + "/" for r in roots if r not in ("", "/")}
        | {"/home/", "/root/", "/Users/", "/tmp/"}
    )


def output_problems(outputs: list[str], roots: list[str] | None = None) -> list[str]:
    """Warnings and local absolute paths in cell outputs, each with its context."""
    roots = local_roots() if roots is None else roots
    paths = re.compile(
        "(?:"
        + "|".join(re.escape(r) for r in roots)
        + r")[^\s'\"]*|[^\s'\"]*(?:site|dist)-packages[^\s'\"]*"
    )
    problems = []
    for text in outputs:
        for kind, pattern in (("a warning", WARNING), ("a local path", paths)):
            problems += [
                f"output shows {kind}: ...{text[max(m.start() - 40, 0) : m.end() + 40]!r}..."
                for m in pattern.finditer(text)
            ]
    return problems


def site_output_problems(site: Path, roots: list[str] | None = None) -> list[str]:
    """:func:`output_problems` of every page of a built site, prefixed with the page."""
    return [
        f"{rel}: {problem}"
        for rel in site_pages(site)
        for problem in output_problems(
            page_outputs((site / rel).read_text(encoding="utf-8")), roots
        )
    ]


# --------------------------------------------------------------------------- the browser


class ChromiumUnavailable(RuntimeError):
    """Debian's chromium is missing and could not be installed."""


@dataclass
class Report:
    """What the check saw and what failed."""

    pages: int = 0
    images: int = 0
    links: int = 0
    external_links: int = 0
    failures: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.pages} pages, {self.images} images, {self.links} internal links checked "
            f"({self.external_links} external not followed), {len(self.failures)} failures"
        )


def ensure_chromium() -> str:
    """Path of Debian's chromium; installs it with apt-get when missing."""
    for name in CHROMIUM:
        if found := shutil.which(name):
            return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise ChromiumUnavailable(
            "chromium is not installed and apt-get cannot install it here "
            "(needs root): run `apt-get install chromium`"
        )
    print("[check] installing Debian's chromium with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise ChromiumUnavailable(f"`{' '.join(cmd)}` failed: {done.stderr.strip()[-500:]}")
    if found := shutil.which("chromium"):
        return found
    raise ChromiumUnavailable("apt-get installed chromium, but no `chromium` is on PATH")


def launch(playwright, executable: str):
    """Headless Debian chromium under playwright (root needs --no-sandbox)."""
    return playwright.chromium.launch(
        executable_path=executable, headless=True, args=["--no-sandbox", "--disable-gpu"]
    )


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A quiet static server for ``site`` on a free loopback port; returns it and its base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def site_pages(site: Path) -> list[str]:
    """Every HTML page of the site (theme and asset folders left out), relative and sorted."""
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"{site / 'index.html'} does not exist: run `make book` first")
    pages = [p.relative_to(site).as_posix() for p in site.rglob("*.html")]
    return sorted(p for p in pages if not SKIP_DIRS & set(p.split("/")[:-1]))


def visit(page, url: str, shot: Path) -> tuple[dict, list[str]]:
    """Load ``url``; returns what the page shows and the problems seen while loading it."""
    problems: list[str] = []
    page.on("console", lambda m: m.type == "error" and problems.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"uncaught exception: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url} ({r.failure})"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"HTTP {r.status}: {r.url}"))
    try:
        response = page.goto(url, wait_until="load", timeout=60_000)
    except Exception as err:  # playwright's errors share no public base class worth naming
        return {}, [f"did not load: {err}"]
    if response is None or not response.ok:
        problems.append(f"did not load: HTTP {response.status if response else '?'}")
    seen = page.evaluate(PAGE_PROBE)
    page.wait_for_timeout(100)  # late console messages
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    return seen, problems


def page_problems(seen: dict) -> list[str]:
    """Undecoded images, maths left as TeX, and a results table (a pandas table in a cell's
    output) wider than the page's text column or taller than :data:`TABLE_SCREENS` screens."""
    problems = [
        f"image did not load (naturalWidth 0): {img['src']}"
        for img in seen["images"]
        if img["width"] == 0
    ]
    problems += [f"maths not typeset: {text!r}" for text in seen["untypeset"]]
    for table in seen.get("tables", []):
        if table["width"] > table["room"] + 1:
            problems.append(
                f"table wider than the page ({table['width']:.0f} px > "
                f"{table['room']:.0f} px): {table['head']!r}"
            )
        if table["height"] > TABLE_SCREENS * VIEWPORT["height"]:
            problems.append(
                f"table taller than {TABLE_SCREENS} screens ({table['height']:.0f} px): "
                f"{table['head']!r}"
            )
    problems += [
        f"raw TeX in the visible text: ...{seen['text'][max(m.start() - 30, 0) : m.end() + 30]!r}..."
        for m in RAW_TEX.finditer(seen["text"])
    ]
    return problems


def link_problems(site: Path, base: str, seen: dict[str, dict], report: Report) -> None:
    """Every internal link must reach a file of the site and, with a fragment, an anchor on it."""
    for page, info in seen.items():
        for href in info.get("links", []):
            target, fragment = urldefrag(href)
            if not target.startswith(base):
                report.external_links += urlsplit(href).scheme in ("http", "https")
                continue
            report.links += 1
            rel = unquote(urlsplit(target).path)[len(urlsplit(base).path) :] or "index.html"
            path = site / rel
            if path.is_dir():
                path, rel = path / "index.html", f"{rel.rstrip('/')}/index.html".lstrip("/")
            if not path.is_file():
                report.failures.append(f"{page}: broken link to {rel} (no such file)")
            elif fragment and rel in seen and fragment not in seen[rel].get("ids", ()):
                report.failures.append(f"{page}: broken link to {rel}#{fragment} (no such anchor)")


def check_site(site: Path, screenshots: Path, executable: str | None = None) -> Report:
    """Open every page of ``site`` in headless Chromium; the report lists each failure."""
    from playwright.sync_api import sync_playwright

    site, report, seen = Path(site).resolve(), Report(), {}
    pages = site_pages(site)
    for old in Path(screenshots).glob("*.png"):  # a page gone from the site leaves no stale shot
        if not old.name.startswith("lab-"):
            old.unlink()
    executable = executable or ensure_chromium()
    server, base = serve(site)
    try:
        with sync_playwright() as pw:
            browser = launch(pw, executable)
            context = browser.new_context(viewport=VIEWPORT)
            for rel in pages:
                page = context.new_page()
                shot = screenshots / (rel.removesuffix(".html").replace("/", "__") + ".png")
                info, problems = visit(page, base + rel, shot)
                page.close()
                seen[rel] = info
                problems += page_problems(info) if info else []
                report.failures += [f"{rel}: {p}" for p in problems]
                report.images += len(info.get("images", []))
            browser.close()
    finally:
        server.shutdown()
    report.pages = len(pages)
    link_problems(site, base, seen, report)
    report.failures += site_output_problems(site)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--site", type=Path, default=REPO / "build/book")
    parser.add_argument("--screenshots", type=Path, default=REPO / "build/book-screenshots")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        cited = citation_problems(project_text_files())
        report = check_site(args.site, args.screenshots)
    except (FileNotFoundError, ChromiumUnavailable) as err:
        print(f"book-check: {err}", file=sys.stderr)
        return 1
    report.failures[:0] = cited + unbuilt_pages(args.site)
    for failure in report.failures:
        print(f"FAIL {failure}")
    print(
        f"[book-check] {report.summary()}; screenshots in {args.screenshots}; "
        f"{time.perf_counter() - start:.0f} s"
    )
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
