"""The package's layer order holds: no upward or sideways import, no import cycle (the
annotations' imports included), and imports inside functions only where a slow or optional
third-party module would otherwise load on import, each listed with its reason (docs/layout.md,
Layout)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "paperlib"

#: low → high; a module imports from its own package or from a lower layer only
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "atomic",
        "exit_status",
        "state_files",
        "segments",
        "collectives",
        "environment",
        "provenance",
        "untrusted",
        "processes",
    ),
    ("tensor_checks",),
    ("geometry",),
    ("data",),
    ("models",),
    ("losses",),
    ("metrics",),
    ("engine",),
    ("analysis", "tables", "derivations"),
    ("train", "export"),
    ("evaluate",),
    ("study",),
    ("figures",),
    ("notebooks",),
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}

#: every import inside a function, and why it waits there: a third-party module that is slow
#: to import or missing from some installs, loaded only by the code that needs it
DEFERRED = {
    (
        "paperlib.analysis.hyperbolic",
        "umap",
    ): "umap-learn compiles with numba when imported (≈ 20 s)",
    ("paperlib.collectives", "torch.distributed.nn.functional"): (
        "absent from torch builds without distributed support; needed only under a process group"
    ),
    ("paperlib.data.classification", "torchvision.datasets"): (
        "torchvision (≈ 1.5 s) for the zero-shot suite only; the data layer loads without it"
    ),
    ("paperlib.data.images", "torchvision"): (
        "torchvision (≈ 1.5 s) only where a model's transform is rebuilt"
    ),
    ("paperlib.engine.reporting", "torch.utils.tensorboard"): (
        "the tracking extra's tensorboard, only for a run that reports to it"
    ),
    ("paperlib.engine.reporting", "wandb"): "the tracking extra, only for a run that reports to it",
    ("paperlib.notebooks", "jupytext"): "only the commands that convert a notebook",
    ("paperlib.notebooks", "papermill"): "only the command that executes a notebook",
    ("paperlib.study.run.executors", "ray"): "the cluster extra, only for --executor ray",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _typing_only(tree: ast.Module) -> set[int]:
    """Nodes under a module-level ``if TYPE_CHECKING:`` (read by type checkers, never run)."""
    return {
        id(n)
        for stmt in tree.body
        if isinstance(stmt, ast.If) and getattr(stmt.test, "id", None) == "TYPE_CHECKING"
        for n in ast.walk(stmt)
    }


def all_imports(path: Path) -> list[tuple[str, str]]:
    """(imported module, where) of every import in ``path``; where is ``"top"``, ``"function"``
    or ``"typing"`` (under ``if TYPE_CHECKING:``). A paperlib ``from a import b`` names the
    module ``a.b`` when it is one, else ``a``."""
    tree = ast.parse(path.read_text())
    local = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
    }
    typing_only = _typing_only(tree)
    found = []
    for node in ast.walk(tree):
        where = "function" if id(node) in local else "typing" if id(node) in typing_only else "top"
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            names = [
                n
                for n in names
                if (PACKAGE.parent / n.replace(".", "/")).exists()
                or (PACKAGE.parent / (n.replace(".", "/") + ".py")).exists()
            ]
            found += [(n, where) for n in names[-1:] or [node.module]]
        elif isinstance(node, ast.Import):
            found += [(a.name, where) for a in node.names]
    return found


def imports(path: Path) -> list[tuple[str, bool]]:
    """(imported paperlib module, inside a function?) of every paperlib import in ``path``."""
    return [
        (name, where == "function")
        for name, where in all_imports(path)
        if name.split(".")[0] == "paperlib"
    ]


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
    deferred = [n for n, where in all_imports(MODULES[module]) if where == "function"]
    unexplained = [n for n in deferred if (module, n) not in DEFERRED]
    assert not unexplained, f"{module} imports {unexplained} inside a function"


def test_every_deferred_import_is_still_there():
    present = {
        (module, name)
        for module, path in MODULES.items()
        for name, where in all_imports(path)
        if where == "function"
    }
    assert set(DEFERRED) <= present, sorted(set(DEFERRED) - present)


#: the study's stages in order: a stage imports from its own package or an earlier stage; the
#: study's modules that belong to no stage sit below every stage (``paths``) or above them all
STAGES = ("plan", "run", "results", "decide", "report")
BELOW_STAGES = ("paths",)


def study_rank(module: str) -> int | None:
    """The rank of a ``paperlib.study`` module: -1 below the stages, a stage's index, or
    ``len(STAGES)`` for the modules that run the stages (the command, the summary); None
    outside the study."""
    parts = module.split(".")
    if parts[:2] != ["paperlib", "study"] or len(parts) < 3:
        return None
    if parts[2] in BELOW_STAGES:
        return -1
    return STAGES.index(parts[2]) if parts[2] in STAGES else len(STAGES)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if study_rank(m) is not None))
def test_the_study_s_imports_run_one_way_along_its_stages(module):
    backward = [
        name
        for name, _ in imports(MODULES[module])
        if study_rank(name) is not None and study_rank(name) > study_rank(module)
    ]
    assert not backward, f"{module} imports from a later stage: {backward}"


def test_the_study_s_top_holds_only_what_belongs_to_no_stage():
    """Every module of the study sits in a stage package but the command, the summary, the
    comparison's command and the paths; the stages rank in order between the paths and the
    command."""
    top = sorted(
        m.split(".")[2] for m in MODULES if m.startswith("paperlib.study.") and m.count(".") == 2
    )
    assert top == sorted([*STAGES, "__main__", "cli", "compare", "paths", "summary"])
    ranks = [study_rank(f"paperlib.study.{p}.x") for p in ("paths", *STAGES, "cli")]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> the modules it imports) as a path that
    returns to its start, or None when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*trail, node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*trail, node])):
                return cycle
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module, [])):
            return cycle
    return None


def test_no_import_cycle():
    """No cycle among paperlib's modules, counting what runs on import and the annotations'
    imports under ``TYPE_CHECKING`` (function bodies aside: they only defer the heavy
    third-party imports of :data:`DEFERRED`)."""
    graph = {
        m: {n for n, where in all_imports(p) if where != "function" and n in MODULES and n != m}
        for m, p in MODULES.items()
    }
    cycle = import_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_sees_a_cycle_of_typing_imports(tmp_path):
    """Three modules where two import each other only for annotations: a cycle."""
    (tmp_path / "a.py").write_text("from paperlib.engine import registry\n")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import paperlib.engine.c\n"
    )
    graph = {
        "paperlib.engine.a": {n for n, _ in all_imports(tmp_path / "a.py")},
        "paperlib.engine.b": {n for n, _ in all_imports(tmp_path / "b.py")},
        "paperlib.engine.c": {"paperlib.engine.b"},
    }
    assert graph["paperlib.engine.a"] == {"paperlib.engine.registry"}
    assert import_cycle(graph) == ["paperlib.engine.b", "paperlib.engine.c", "paperlib.engine.b"]
    graph["paperlib.engine.c"] = {"paperlib.engine.a"}
    assert import_cycle(graph) is None


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    """The rule fails where it should: a geometry module importing the engine."""
    fake = tmp_path / "paperlib" / "geometry" / "bad.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(
        "from typing import TYPE_CHECKING\n\nfrom paperlib.engine import config\n\n"
        "if TYPE_CHECKING:\n    import paperlib.data\n\n"
        "def f():\n    import paperlib.study\n    import json\n"
    )
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "paperlib", raising=False)
    found = imports(fake)
    assert ("paperlib.study", True) in found
    assert any(layer(n) == "engine" and not inner for n, inner in found)
    assert RANK[layer("paperlib.engine.config")] > RANK["geometry"]
    where = dict(all_imports(fake))
    assert where["json"] == "function" and where["paperlib.data"] == "typing"
