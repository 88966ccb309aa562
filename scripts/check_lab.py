#!/usr/bin/env python3
"""Start ``make lab`` headless and check, in Chromium, that a tutorial opens as a notebook.

Runs ``make lab`` (as root here: JupyterLab needs ``--allow-root``) on a free loopback port with
a token, checks that its python3 kernel is this venv's Python, opens
``/lab/tree/notebooks/02_monotonicity.py`` and asserts that the notebook view (cells), not the
text editor, shows it. Saves a screenshot beside the book's.

    python scripts/check_lab.py [--notebook notebooks/02_monotonicity.py]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_book import VIEWPORT, ChromiumUnavailable, ensure_chromium, launch  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 240  # make lab installs the lab extra first when it is missing


class LabCheckFailed(AssertionError):
    """JupyterLab did not start, or did not show the notebook view."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_lab(port: int, token: str, log: Path) -> subprocess.Popen:
    """``make lab`` without a browser, in its own process group (so it can be stopped whole)."""
    args = f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} --IdentityProvider.token={token}"
    log.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        ["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"],
        cwd=REPO,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_lab(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group this check started, then SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def api(base: str, token: str, path: str) -> dict:
    with urllib.request.urlopen(f"{base}{path}?token={token}", timeout=10) as response:
        return json.load(response)


def wait_for_server(proc: subprocess.Popen, base: str, token: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise LabCheckFailed(
                f"make lab exited with {proc.returncode}; its log: {log}\n{log.read_text()[-2000:]}"
            )
        try:
            api(base, token, "api/status")
            return
        except OSError:
            time.sleep(1)
    raise LabCheckFailed(
        f"JupyterLab did not answer on {base} within {START_TIMEOUT_S} s; log: {log}"
    )


def check_kernel(base: str, token: str) -> str:
    """The default kernel must be python3 running this venv's interpreter."""
    specs = api(base, token, "api/kernelspecs")
    spec = specs["kernelspecs"].get(specs["default"], {}).get("spec", {})
    exe = spec.get("argv", ["?"])[0]
    venv_python = REPO / ".venv" / "bin"
    # jupyter_client runs a spec whose argv[0] is plain "python" with the server's interpreter
    if specs["default"] != "python3" or not (
        exe in ("python", "python3") or Path(exe).parent == venv_python
    ):
        raise LabCheckFailed(
            f"default kernel {specs['default']!r} runs {exe!r}, not {venv_python}/python"
        )
    return spec.get("display_name", "?")


def kernel_commands(root_pid: int) -> list[list[str]]:
    """Command lines of the ipykernel processes descended from ``root_pid`` (Linux /proc)."""
    parents, commands = {}, {}
    for entry in Path("/proc").iterdir():
        try:
            parents[int(entry.name)] = int(
                (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            )
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().decode().split("\0")[:-1]
        except (ValueError, OSError, IndexError):
            continue
    family, grew = {root_pid}, True
    while grew:
        new = {pid for pid, parent in parents.items() if parent in family} - family
        family, grew = family | new, bool(new)
    return [
        commands[pid] for pid in family if "ipykernel_launcher" in " ".join(commands.get(pid, []))
    ]


def check_kernel_process(root_pid: int) -> str:
    """The notebook's kernel, once started, must run the venv's Python."""
    deadline = time.monotonic() + 60
    while not (found := kernel_commands(root_pid)) and time.monotonic() < deadline:
        time.sleep(1)
    venv = (REPO / ".venv").resolve()
    if not found:
        raise LabCheckFailed("opening the notebook started no ipykernel within 60 s")
    if not all(Path(cmd[0]).absolute().is_relative_to(venv) for cmd in found):
        raise LabCheckFailed(f"the kernel does not run the venv's Python: {found[0][0]}")
    return found[0][0]


def check_notebook_view(browser, url: str, shot: Path) -> int:
    """Open ``url``; returns the number of notebook cells shown. Fails if an editor shows it."""
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(url, wait_until="load", timeout=120_000)
    try:
        page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=120_000)
    except Exception as err:  # a timeout: say what was shown instead
        editors = page.locator(".jp-FileEditor").count()
        page.screenshot(path=str(shot))
        raise LabCheckFailed(
            f"no notebook cells at {url} ({editors} text editors open): {err}"
        ) from err
    page.wait_for_timeout(1500)
    cells = page.locator(".jp-NotebookPanel:visible .jp-Cell").count()
    editors = page.locator(".jp-FileEditor:visible").count()
    shot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shot))
    if editors or not cells:
        raise LabCheckFailed(f"{url}: {cells} notebook cells and {editors} text editors shown")
    return cells


def check_lab(notebook: str, screenshots: Path) -> str:
    """Run the whole check; returns a one-line summary."""
    from playwright.sync_api import sync_playwright

    executable = ensure_chromium()
    port, token = free_port(), secrets.token_hex(16)
    base, log = f"http://127.0.0.1:{port}/", screenshots / "lab.log"
    proc = start_lab(port, token, log)
    try:
        wait_for_server(proc, base, token, log)
        kernel = check_kernel(base, token)
        with sync_playwright() as pw:
            browser = launch(pw, executable)
            shot = screenshots / f"lab-{Path(notebook).stem}.png"
            cells = check_notebook_view(browser, f"{base}lab/tree/{notebook}?token={token}", shot)
            python = check_kernel_process(proc.pid)
            browser.close()
    finally:
        stop_lab(proc)
    return (
        f"make lab opened {notebook} as a notebook ({cells} cells); kernel {kernel!r} runs {python}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--notebook", default="notebooks/02_monotonicity.py", help="relative to the repo"
    )
    parser.add_argument("--screenshots", type=Path, default=REPO / "build/book-screenshots")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        summary = check_lab(args.notebook, args.screenshots)
    except (LabCheckFailed, ChromiumUnavailable) as err:
        print(f"FAIL lab: {err}", file=sys.stderr)
        return 1
    print(f"[lab-check] {summary}; {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
