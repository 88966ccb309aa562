"""Results of other code are not decided as this code's: ``--decide-only``, ``--summary`` and
``study.compare`` refuse runs trained by code that is neither the checkout's nor recorded alike,
naming the hashes (``--status`` already counted them unfinished); an equivalence in
``code-versions.json`` must carry the evidence its kind rests on, checked when it is read."""

from __future__ import annotations

import json
import shutil

import pytest

from paperlib.provenance import code_hash
from paperlib.study import compare, paths
from paperlib.study.cli import main as study_main
from paperlib.study.plan import design
from paperlib.study.run import code_versions
from paperlib.study.run.code_versions import CodeVersionsError, read_equivalences
from tests.recipe_helpers import toy_repository, write_picks
from tests.test_code_versions import A, B, _done_by, _entry

OTHER = "e" * 64  # a training-code hash nothing records


@pytest.fixture
def versions_file(tmp_path, monkeypatch):
    path = tmp_path / "code-versions.json"
    monkeypatch.setattr(code_versions, "CODE_VERSIONS", path)
    return path


@pytest.fixture
def finished_runs(tmp_path, monkeypatch, versions_file):
    """Two planned smoke runs with a ``run.done`` each, made by this checkout's code."""
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    write_picks("smoke")
    toy_repository(tmp_path, monkeypatch)
    runs = [r for r in design.plan("smoke", searched=False) if r.variant in ("HyCoCLIP", "MERU")]
    for run in runs[:2]:
        design.run_target(run, "smoke").mkdir(parents=True)
        _done_by(run, code_hash())
    return runs[:2]


def test_decide_only_refuses_runs_trained_by_other_code_and_names_them(
    finished_runs, monkeypatch, capsys
):
    """The case: one statement of training code changed, the committed runs re-decided as
    this code's with exit 0 (only claims.json's joins_checkout said otherwise)."""
    decided = []
    monkeypatch.setattr("paperlib.study.cli.summarise", lambda *a: decided.append(a))
    assert study_main(["--scale", "smoke", "--decide-only"]) == 0  # this code's runs: decided
    _done_by(finished_runs[1], OTHER)
    assert study_main(["--scale", "smoke", "--decide-only"]) == 2
    err = capsys.readouterr().err
    assert "1 of its 2 runs were trained by other code" in err and OTHER[:12] in err
    assert "code-versions.json" in err and "paperlib.study.run.equivalence" in err
    assert len(decided) == 1  # nothing decided from the mixed runs


def test_a_recorded_equivalence_with_its_evidence_lets_the_runs_count(
    finished_runs, versions_file, monkeypatch
):
    monkeypatch.setattr("paperlib.study.cli.summarise", lambda *a: None)
    _done_by(finished_runs[0], OTHER)
    versions_file.write_text(json.dumps({"equivalences": [_entry(OTHER, code_hash())]}))
    assert study_main(["--scale", "smoke", "--decide-only"]) == 0


def test_summary_refuses_claims_decided_from_other_code(
    tmp_path, monkeypatch, capsys, versions_file
):
    claims = tmp_path / "results" / "smoke" / "claims.json"
    claims.parent.mkdir(parents=True)
    decided = json.loads((paths.REPO_ROOT / "results" / "smoke" / "claims.json").read_text())
    versions = [{"code_hash": OTHER, "commits": [], "runs": 5, "joins_checkout": True}]
    claims.write_text(json.dumps({**decided, "code_versions": versions}))
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    assert study_main(["--scale", "smoke", "--summary"]) == 2  # its joins_checkout is not trusted
    err = capsys.readouterr().err
    assert "claims.json: 5 of its 5 runs were trained by other code" in err


def test_compare_refuses_runs_of_other_code_on_either_side(tmp_path, capsys, versions_file):
    from tests.test_compare import BASE, _results

    committed = _results(tmp_path / "committed" / "smoke", BASE)
    _results(tmp_path / "again" / "smoke", BASE)
    done = tmp_path / "again" / "smoke" / "himo" / "molo" / "seed0" / "run.done"
    record = {"run": "x", "config": {}, "init_sha256": None, "environment": {},
              "provenance": {"commit": None, "dirty": False, "code_hash": OTHER}}  # fmt: skip
    done.write_text(json.dumps(record))
    argv = ["--reproduced", str(tmp_path / "again"), "--committed", str(committed.parent)]
    assert compare.main(argv) == 2  # a refusal, not "did not reproduce"
    err = capsys.readouterr().err
    assert "again/smoke: 1 of its 1 runs were trained by other code" in err
    assert not (tmp_path / "again" / "smoke-comparison.md").exists()


@pytest.mark.parametrize(
    ("evidence", "field"),
    [
        ({"kind": "same source files"}, r"\[0\]\.evidence\.commit must be present"),
        ({"kind": "same source files", "commit": "0" * 40}, r"evidence\.source_bytes_hash"),
        ({"kind": "same source files", "commit": "0" * 40, "source_bytes_hash": B,
          "code_hash": B}, r"evidence\.source_bytes_hash must be the pair's 'from' hash"),
        ({"kind": "same source files", "commit": "HEAD", "source_bytes_hash": A,
          "code_hash": B}, r"evidence\.commit must be a commit id"),
        ({"kind": "bit-identical smoke study", "revision": "1" * 40, "runs_compared": 0,
          "runs": {}}, r"evidence\.runs must be an object of the runs compared"),
        ({"kind": "bit-identical smoke study", "revision": "1" * 40, "runs_compared": 2,
          "runs": {"himo/molo/seed0": {"items": None, "log": A}}},
         r"evidence\.runs_compared must be the number of runs listed \(1\)"),
        ({"kind": "bit-identical smoke study", "revision": "1" * 40, "runs_compared": 1,
          "runs": {"himo/molo/seed0": {"items": None, "log": "abc"}}},
         r"runs\.himo/molo/seed0\.log must be a code hash"),
    ],
)  # fmt: skip
def test_an_equivalence_without_the_evidence_of_its_kind_is_refused(versions_file, evidence, field):
    """The case: ``{"kind": "same source files"}`` alone made runs of other code finished."""
    entry = {"from": A, "to": B, "evidence": evidence}
    versions_file.write_text(json.dumps({"equivalences": [entry]}))
    with pytest.raises(CodeVersionsError, match=field) as error:
        read_equivalences()
    assert str(error.value).startswith(f"{versions_file}: ")


def test_the_committed_code_versions_file_carries_its_evidence(tmp_path):
    committed = paths.REPO_ROOT / "results" / "code-versions.json"
    copy = shutil.copy(committed, tmp_path / "code-versions.json")
    assert len(read_equivalences(copy)) >= 1
