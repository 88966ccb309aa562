"""Which code made a run: the training code's hash follows exactly the files that train and
evaluate a run and what they do (not their comments, layout or docstrings), the commit and
modified state come from git, and run records are read with named errors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from paperlib import provenance
from paperlib.provenance import (
    PACKAGE_ROOT,
    RunRecordError,
    code_hash,
    code_versions,
    normalised_json,
    normalised_python,
    run_provenance,
    source_bytes_hash,
    training_code_files,
)
from tests.test_import_layers import MODULES, all_imports


def _package_copy(tmp_path: Path) -> Path:
    root = tmp_path / "paperlib"
    shutil.copytree(PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_the_code_hash_follows_the_training_code_only(tmp_path):
    root = _package_copy(tmp_path)
    before = code_hash(root)
    assert before == code_hash(PACKAGE_ROOT)  # the paths hashed are relative to the package
    loop = root / "engine" / "loop.py"
    original = loop.read_text()
    loop.write_text(
        original.replace("return (step + 1) / self.warmup", "return step / self.warmup")
    )
    assert code_hash(root) != before
    loop.write_text(original)
    assert code_hash(root) == before
    config = root / "model_configs" / "paper-tiny.json"
    config.write_text(config.read_text().replace('"embed_dim": 64', '"embed_dim": 65'))
    assert code_hash(root) != before
    shutil.copy(PACKAGE_ROOT / "model_configs" / "paper-tiny.json", root / "model_configs")
    for reader in (
        "study/decide/decide.py",
        "study/plan/claims.py",
        "figures/common.py",
        "study/plan/design.py",
    ):
        _append(root / reader, "\nREAD_ONLY = 1\n")
    (root / "engine" / "notes.txt").write_text("not code")
    assert code_hash(root) == before
    (root / "engine" / "extra.py").write_text("X = 1\n")
    assert code_hash(root) != before


def _replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1))


def test_a_docstring_edit_keeps_the_code_hash_and_an_arithmetic_edit_changes_it(tmp_path):
    root = _package_copy(tmp_path)
    before, bytes_before = code_hash(root), source_bytes_hash(root)
    loop = root / "engine" / "loop.py"
    _replace_once(loop, '"""LR factor:', '"""The learning-rate factor, reworded:')
    _replace_once(loop, '"""What :func:`train` returns', '"""What :func:`train` hands back')
    assert code_hash(root) == before
    assert source_bytes_hash(root) != bytes_before  # the bytes hash the older records used
    _replace_once(loop, "return (step + 1) / self.warmup", "return (step - 1) / self.warmup")
    assert code_hash(root) != before


def test_comments_and_layout_keep_the_code_hash_and_a_json_value_changes_it(tmp_path):
    root = _package_copy(tmp_path)
    before = code_hash(root)
    loop = root / "engine" / "loop.py"
    _replace_once(loop, "# what a resumed run may change", "# what a resumed run can change")
    _append(loop, "\n\n# a closing comment\n")
    _replace_once(loop, "return (step + 1) / self.warmup", "return ( step+1 )/self.warmup  # s")
    config = root / "model_configs" / "paper-tiny.json"
    config.write_text(json.dumps(dict(reversed(json.loads(config.read_text()).items()))))
    assert code_hash(root) == before
    config.write_text(config.read_text().replace('"embed_dim": 64', '"embed_dim": 64.5'))
    assert code_hash(root) != before


def test_the_normalised_source_drops_docstrings_and_comments_only():
    plain = "import math\n\n\nclass A:\n    def f(self, a, b):\n        return a + b\n"
    documented = (
        '"""A module."""\n# a comment\nimport math  # why\n\n\nclass A:\n    """A class."""\n\n'
        '    def f(self, a, b):\n        """Add."""\n        return a + b  # the sum\n'
    )
    assert normalised_python(documented) == normalised_python(plain)
    assert normalised_python(plain.replace("a + b", "a - b")) != normalised_python(plain)
    labelled = plain.replace("return a + b", 'label = "sum"\n        return a + b')
    assert normalised_python(labelled) != normalised_python(plain)
    assert normalised_python(labelled.replace('"sum"', '"total"')) != normalised_python(labelled)
    only_doc = 'def f():\n    """Nothing."""\n'
    assert normalised_python(only_doc) == normalised_python("def f():\n    pass\n")
    assert "Nothing" not in normalised_python(only_doc)
    assert normalised_json('{"b": 1, "a": [1, 2]}') == normalised_json('{"a":[1,2],"b":1}')
    assert normalised_json('{"a": 1}') != normalised_json('{"a": 1.0}')


def test_a_training_file_that_does_not_parse_is_named(tmp_path):
    root = _package_copy(tmp_path)
    (root / "engine" / "broken.py").write_text("def f(:\n")
    with pytest.raises(SyntaxError, match="broken.py"):
        code_hash(root)
    (root / "engine" / "broken.py").unlink()
    (root / "model_configs" / "broken.json").write_text("{")
    with pytest.raises(ValueError, match=r"broken.json: not valid JSON"):
        code_hash(root)


def test_the_hash_tells_a_renamed_file_from_the_same_bytes(tmp_path):
    root = _package_copy(tmp_path)
    before = code_hash(root)
    (root / "engine" / "loop.py").rename(root / "engine" / "loop2.py")
    assert code_hash(root) != before


def _import_closure(*modules: str) -> set[str]:
    """Every paperlib module importing ``modules`` loads: their imports, transitively, and the
    packages above each."""
    seen: set[str] = set()
    todo = list(modules)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [n for n, _ in all_imports(MODULES[module]) if n in MODULES]
    return seen


def test_the_training_code_is_what_training_and_evaluation_import():
    hashed = {p.relative_to(PACKAGE_ROOT.parent).with_suffix("").as_posix() for p in
              training_code_files()}  # fmt: skip
    loaded = _import_closure("paperlib.train", "paperlib.evaluate")
    presenting = {m for m in loaded if m.startswith("paperlib.tables")}  # formats a table
    assert presenting == {"paperlib.tables", "paperlib.tables.beside_published"}
    for module in loaded - presenting:
        path = MODULES[module].relative_to(PACKAGE_ROOT.parent).with_suffix("").as_posix()
        assert path in hashed, module
    assert "paperlib/study/run/exports" in hashed  # evaluates a run, writes its per-item values
    for reads_results in (
        "study/decide",
        "study/plan",
        "study/results",
        "study/report",
        "figures",
        "notebooks",
    ):
        assert f"paperlib/{reads_results}" not in hashed


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_the_provenance_names_the_commit_and_modified_tracked_files(tmp_path):
    root = _package_copy(tmp_path / "repo")
    outside = run_provenance(root)  # tmp_path lies in no checkout
    assert outside == {"commit": None, "dirty": False, "code_hash": code_hash(root)}
    _git(tmp_path / "repo", "init", "-q")
    _git(tmp_path / "repo", "add", "-A")
    _git(tmp_path / "repo", "commit", "-q", "-m", "code")
    clean = run_provenance(root)
    assert clean["commit"] == _git(tmp_path / "repo", "rev-parse", "HEAD")
    assert clean["dirty"] is False
    (root / "untracked.py").write_text("")
    assert run_provenance(root)["dirty"] is False  # untracked files are not modifications
    _append(root / "train.py", "\n")
    modified = run_provenance(root)
    assert modified["dirty"] is True and modified["commit"] == clean["commit"]
    assert modified["code_hash"] == clean["code_hash"]  # a blank line trains the same
    _append(root / "train.py", "TRAINED = True\n")
    assert run_provenance(root)["code_hash"] != clean["code_hash"]


def _record(tmp_path: Path, name: str, **fields) -> Path:
    record = {"run": name, "config": {}, "init_sha256": None, "environment": {}, **fields}
    path = tmp_path / name / "run.done"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    return path


def test_code_versions_of_run_records(tmp_path):
    made = {"commit": None, "dirty": False}
    a = _record(tmp_path, "a", provenance={**made, "code_hash": "1" * 64})
    b = _record(tmp_path, "b", provenance={**made, "code_hash": "2" * 64})
    again = _record(tmp_path, "c", provenance={**made, "code_hash": "1" * 64})
    old = _record(tmp_path, "old")  # written before runs recorded their provenance
    assert code_versions([a, again]) == {"1" * 64}
    assert code_versions([a, b, again, old]) == {"1" * 64, "2" * 64, None}
    assert code_versions([]) == set()


def test_a_bad_run_record_is_an_error_naming_the_file(tmp_path):
    half = tmp_path / "half" / "run.done"
    half.parent.mkdir()
    half.write_text('{"run": ')
    with pytest.raises(RunRecordError, match=r"half/run.done: not a study run record \(JSON"):
        code_versions([half])
    lacking = _record(tmp_path, "lacking", provenance={"commit": None, "dirty": False})
    with pytest.raises(RunRecordError, match=r"lacking/run.done: .*missing provenance.code_hash"):
        code_versions([lacking])
    no_config = tmp_path / "no-config" / "run.done"
    no_config.parent.mkdir()
    no_config.write_text(json.dumps({"run": "x", "init_sha256": None, "environment": {}}))
    with pytest.raises(RunRecordError, match=r"no-config/run.done: .*missing config"):
        provenance.read_run_record(no_config)
    with pytest.raises(RunRecordError, match="absent/run.done"):
        provenance.read_run_record(tmp_path / "absent" / "run.done")
