"""pyproject.toml is the single source of dependencies; environment.yml and constraints defer to it."""

from __future__ import annotations

import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from tests.conftest import REPO


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _constraints() -> dict[str, Requirement]:
    reqs = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            req = Requirement(line)
            reqs[req.name.lower()] = req
    return reqs


def _environment() -> dict:
    return yaml.safe_load((REPO / "environment.yml").read_text())


def test_torch_pair_is_pinned_and_admitted_by_pyproject():
    pins = _constraints()
    assert {"torch", "torchvision"} <= set(pins)
    deps = {
        Requirement(d).name.lower(): Requirement(d) for d in _pyproject()["project"]["dependencies"]
    }
    for name, pin in pins.items():
        (version,) = [s.version for s in pin.specifier if s.operator == "=="]
        assert version in deps[name].specifier, (
            f"constraints.txt pins {name}=={version} outside pyproject {deps[name]}"
        )


def test_environment_yml_defers_to_pyproject():
    env = _environment()
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    python = next(d for d in conda if d.startswith("python"))
    version = python.split("=")[-1]
    assert SpecifierSet(_pyproject()["project"]["requires-python"]).contains(version + ".0")
    editable = [p for p in pip if p.startswith("-e")]
    assert editable, "environment.yml must install the package itself from pyproject.toml"
    extras = re.findall(r"\[(.*?)\]", editable[0])[0].split(",")
    assert set(extras) <= set(_pyproject()["project"]["optional-dependencies"])
    assert any("constraints.txt" in p for p in pip), "environment.yml must use constraints.txt"
    assert any("requirements.lock" in p for p in pip), "environment.yml must install the lock"
    # anything listed in both places must agree: conda packages and pip lines versus pyproject
    deps = {
        Requirement(d).name.lower(): Requirement(d) for d in _pyproject()["project"]["dependencies"]
    }
    for entry in conda + [p for p in pip if not p.startswith("-")]:
        name, _, version = entry.partition("=")
        name = name.strip().lower().replace("_", "-")
        if name in deps and version:
            assert deps[name].specifier.contains(version.strip("=")), (
                f"{entry} vs pyproject {deps[name]}"
            )


def test_readme_commands_and_ci_agree():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test" in readme and "make test-all" in readme and "make reproduce" in readme
    assert "\nmake test-all\n" in ci  # CI runs every test, the slow ones included
