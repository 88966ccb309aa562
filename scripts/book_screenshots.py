#!/usr/bin/env python3
"""Screenshots of chosen pages of the built reading edition, for its page (docs/reading-edition.md).

Each shot is one 1280×900 view of a page, scrolled to an anchor when one is given, written as
a palette PNG (kept under 400 KB).

    python scripts/book_screenshots.py                       # the reading-edition page's two shots
    python scripts/book_screenshots.py --page 02_monotonicity.html --out docs/screenshots
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from check_book import VIEWPORT, ChromiumUnavailable, ensure_chromium, launch, serve

REPO = Path(__file__).resolve().parent.parent
README_SHOTS = ["01_pca_decomposition.html", "05_main_tables.html#himo-clip-this-project-cpu-scale"]
MAX_BYTES = 400_000


def shoot(site: Path, pages: list[str], out: Path) -> list[Path]:
    """One palette PNG per ``page[#anchor]``; returns the files written."""
    from PIL import Image
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    server, base = serve(site)
    written = []
    try:
        with sync_playwright() as pw:
            browser = launch(pw, ensure_chromium())
            page = browser.new_page(viewport=VIEWPORT)
            for target in pages:
                name, _, anchor = target.partition("#")
                page.goto(base + name, wait_until="load")
                page.evaluate("async () => { if (window.MathJax) await MathJax.startup.promise; }")
                if anchor:
                    page.locator(f"[id='{anchor}']").first.scroll_into_view_if_needed()
                    page.evaluate("window.scrollBy(0, -70)")  # below the sticky header
                path = out / f"book-{Path(name).stem}.png"
                page.screenshot(path=str(path))
                Image.open(path).convert("RGB").quantize(colors=128).save(path, optimize=True)
                if path.stat().st_size > MAX_BYTES:
                    raise RuntimeError(f"{path} is {path.stat().st_size} bytes, over {MAX_BYTES}")
                written.append(path)
            browser.close()
    finally:
        server.shutdown()
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--site", type=Path, default=REPO / "build/book")
    parser.add_argument(
        "--page", nargs="*", default=README_SHOTS, help="page.html or page.html#anchor"
    )
    parser.add_argument("--out", type=Path, default=REPO / "docs/screenshots")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        print(
            f"screenshots: {args.site / 'index.html'} does not exist: run `make book` first",
            file=sys.stderr,
        )
        return 1
    try:
        for path in shoot(args.site, args.page, args.out):
            print(f"[screenshots] {path} ({path.stat().st_size // 1000} KB)")
    except ChromiumUnavailable as err:
        print(f"screenshots: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
