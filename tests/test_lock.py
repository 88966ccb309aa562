"""The environment is the locked one: every installed distribution has the version
``requirements.lock`` pins, the lock pins the torch pair of ``constraints.txt``, and it covers
every dependency ``pyproject.toml`` declares (all extras)."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# what `python -m venv` itself installs, before any lock applies, and the project itself
NOT_LOCKED = {"pip", "setuptools", "wheel", "paperlib"}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path) -> dict[str, str]:
    """``{canonical name: version}`` of a requirements file's ``name==version`` lines."""
    out = {}
    for line in path.read_text().splitlines():
        found = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)", line)
        if found:
            out[canonical(found.group(1))] = found.group(2)
    return out


def test_every_installed_distribution_has_its_locked_version():
    lock = pins(ROOT / "requirements.lock")
    installed = {canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}
    wrong = {
        name: (version, lock.get(name))
        for name, version in installed.items()
        if name not in NOT_LOCKED and lock.get(name) != version
    }
    assert not wrong, f"installed (version, locked version) outside the lock: {wrong}"


def test_the_lock_pins_the_torch_pair_and_every_declared_dependency():
    lock = pins(ROOT / "requirements.lock")
    for name, version in pins(ROOT / "constraints.txt").items():
        assert lock.get(name) == version, name
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        declared += extra
    names = {canonical(re.split(r"[<>=!~ ;\[]", d, maxsplit=1)[0]) for d in declared}
    assert names <= set(lock), f"declared but not locked: {sorted(names - set(lock))}"
