"""The package's layer order holds: no upward or sideways import, no import cycle, and imports
inside functions only where a heavy dependency would otherwise load on import (README, Layout)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "paperlib"

#: low → high; a module imports from its own package or from a lower layer only
LAYERS: tuple[tuple[str, ...], ...] = (
    ("atomic", "state_files", "segments", "collectives", "environment", "untrusted"),
    ("geometry",),
    ("data",),
    ("models",),
    ("losses",),
    ("metrics",),
    ("engine",),
    ("analysis", "tables", "derivations"),
    ("figures", "train"),
    ("evaluate",),
    ("study",),
    ("notebooks",),
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}

#: function-local paperlib imports that defer a heavy third-party import (and why)
DEFERRED = {
    ("paperlib.engine.config", "paperlib.models.clip"): "open_clip's model registry",
    ("paperlib.engine.config", "paperlib.models.meru_checkpoint"): "timm, only for its names",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, bool]]:
    """(imported paperlib module, inside a function?) of every import in ``path``."""
    tree = ast.parse(path.read_text())
    local = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            names = [
                n
                for n in names
                if (PACKAGE.parent / n.replace(".", "/")).exists()
                or (PACKAGE.parent / (n.replace(".", "/") + ".py")).exists()
            ]
            found += [(n, id(node) in local) for n in names[-1:] or [node.module]]
        elif isinstance(node, ast.Import):
            found += [(a.name, id(node) in local) for a in node.names]
    return [(name, inner) for name, inner in found if name.split(".")[0] == "paperlib"]


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "paperlib"


def test_every_package_part_has_a_layer():
    assert {layer(m) for m in MODULES} - {"paperlib"} <= set(RANK)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down_the_layers(module):
    upward = []
    for name, _ in imports(MODULES[module]):
        mine, theirs = layer(module), layer(name)
        if theirs == "paperlib" or mine == theirs or mine == "paperlib":
            continue
        if RANK[theirs] >= RANK[mine]:
            upward.append(name)
    assert not upward, f"{module} imports from its own or a higher layer: {upward}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_inside_functions_only_defer_heavy_dependencies(module):
    deferred = [n for n, inner in imports(MODULES[module]) if inner]
    unexplained = [n for n in deferred if (module, n) not in DEFERRED]
    assert not unexplained, f"{module} imports {unexplained} inside a function"


def test_no_import_cycle():
    graph = {
        m: {n for n, inner in imports(p) if not inner and n in MODULES and n != m}
        for m, p in MODULES.items()
    }
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*trail, node, nxt]))
            if nxt not in state:
                visit(nxt, [*trail, node])
        state[node] = 2

    for module in graph:
        if module not in state:
            visit(module, [])


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """The rule fails where it should: a geometry module importing the engine."""
    fake = tmp_path / "paperlib" / "geometry" / "bad.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from paperlib.engine import config\n\ndef f():\n    import paperlib.study\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "paperlib", raising=False)
    found = imports(fake)
    assert ("paperlib.study", True) in found
    assert any(layer(n) == "engine" and not inner for n, inner in found)
    assert RANK[layer("paperlib.engine.config")] > RANK["geometry"]
