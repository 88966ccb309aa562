"""Code versions recorded as training alike (``results/code-versions.json``): the reader refuses
a bad file naming the field, the equivalences join hashes both ways and in chains, the study
keeps a run made by a recorded equivalent (and re-trains one made by other code), ``--status``
says which code made the finished runs, and the smoke-study comparison records an equivalence
only when every run is bit-identical."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from paperlib.environment import environment
from paperlib.provenance import code_hash, read_run_record, run_provenance
from paperlib.study import paths
from paperlib.study.plan import design
from paperlib.study.results import status
from paperlib.study.run import code_versions, equivalence, execution
from paperlib.study.run.code_versions import (
    CodeVersionsError,
    add_equivalence,
    equivalent_hashes,
    read_equivalences,
)
from tests.engine_helpers import tiny_config
from tests.recipe_helpers import toy_repository, write_picks

A, B, C, D, E = (digit * 64 for digit in "abcde")
SAME_SOURCE = {"kind": "same source files", "commit": "0" * 40}


def _entry(old: str, new: str, **evidence) -> dict:
    """An equivalence with the evidence of its kind: the commit and the source's two hashes."""
    hashes = {"source_bytes_hash": old, "code_hash": new}
    return {"from": old, "to": new, "evidence": {**SAME_SOURCE, **hashes, **evidence}}


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def versions_file(tmp_path, monkeypatch) -> Path:
    """The study's ``code-versions.json`` at a path of the test's own (not yet written)."""
    path = tmp_path / "code-versions.json"
    monkeypatch.setattr(code_versions, "CODE_VERSIONS", path)
    return path


def test_equivalences_join_hashes_both_ways_and_in_chains(versions_file):
    assert equivalent_hashes(A) == {A}  # no file: every hash is only itself
    _write(versions_file, {"equivalences": [_entry(A, B), _entry(C, B), _entry(D, E)]})
    assert equivalent_hashes(A) == {A, B, C}
    assert equivalent_hashes(C) == {A, B, C}  # through B, against the direction of A -> B
    assert equivalent_hashes(E) == {D, E}
    assert equivalent_hashes("f" * 64) == {"f" * 64}


def _listing(*entries) -> str:
    return json.dumps({"equivalences": list(entries)})


BAD_FILES = [
    ("[]", "the top level must be an object", "[]"),
    ('{"equivalences": {}}', 'an "equivalences" list', "{'equivalences': {}}"),
    ('{"equivalences": [], "notes": 1}', "keys among", "['notes']"),
    (_listing(3), r"equivalences\[0\] must be an object", "3"),
    (_listing({"to": B, "evidence": {}}), r"equivalences\[0\]\.from", "None"),
    (_listing({"from": A.upper(), "to": B}), r"\[0\]\.from", "'AAAA"),
    (_listing({"from": A, "to": "abc"}), r"\[0\]\.to must be a code hash", "'abc'"),
    (_listing({"from": A, "to": B}), r"\[0\]\.evidence must be", "None"),
    (_listing({"from": A, "to": B, "evidence": {"kind": "hope"}}),
     r"\[0\]\.evidence\.kind must be one of \('same source files'", "'hope'"),
    ('{"equivalences": [], "equivalences": []}', "written twice", "equivalences"),
    ('{"equivalences": [', "not valid JSON", "Expecting"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected", "found"), BAD_FILES)
def test_a_bad_code_versions_file_is_refused_naming_the_field(versions_file, text, expected, found):
    versions_file.write_text(text)
    with pytest.raises(CodeVersionsError) as error:
        read_equivalences()
    message = str(error.value)
    assert message.startswith(f"{versions_file}: ")
    assert re.search(expected, message), message
    assert found in message
    with pytest.raises(ValueError, match="code-versions.json"):
        equivalent_hashes(A)  # the study refuses it too, rather than re-training everything


def test_adding_an_equivalence_checks_it_before_writing(versions_file):
    add_equivalence(_entry(A, B))
    add_equivalence(_entry(B, C, note="kept"))
    written = json.loads(versions_file.read_text())
    assert [(e["from"], e["to"]) for e in written["equivalences"]] == [(A, B), (B, C)]
    assert written["equivalences"][1]["evidence"]["note"] == "kept"
    before = versions_file.read_text()
    with pytest.raises(CodeVersionsError, match=r"equivalences\[2\]\.to"):
        add_equivalence(_entry(C, "d" * 63))
    assert versions_file.read_text() == before


def test_the_committed_runs_were_made_by_this_checkouts_code_or_a_recorded_equivalent():
    """The committed studies count as finished here: every run record's code hash is joined to
    the checkout's by ``results/code-versions.json`` (a change to the training code that is not
    recorded there would re-train them all)."""
    joined = equivalent_hashes(code_hash())
    results = paths.REPO_ROOT / "results"
    for done in [*results.glob("full/**/run.done"), *results.glob("smoke/**/run.done")]:
        assert read_run_record(done)["provenance"]["code_hash"] in joined, done


@pytest.fixture
def planned_run(tmp_path, monkeypatch):
    """A smoke run of the plan (recipe picks written), its base a small file, its folders
    under ``tmp_path``."""
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    write_picks("smoke")
    toy_repository(tmp_path, monkeypatch)
    run = next(r for r in design.plan("smoke") if r.variant == "HyCoCLIP")
    design.run_target(run, "smoke").mkdir(parents=True)
    return run


def _done_by(run, code: str) -> dict:
    """A ``run.done`` of ``run`` as this checkout would write it, but made by ``code``."""
    record = {
        "run": run.name,
        "config": paths.portable_config(run.config),
        "init_sha256": execution.init_checksum(run.config),
        "environment": environment(),
        "provenance": {**run_provenance(), "code_hash": code},
    }
    (design.run_target(run, "smoke") / "run.done").write_text(json.dumps(record))
    return record


def test_a_run_made_by_a_recorded_equivalent_is_finished_and_other_code_is_not(
    planned_run, versions_file
):
    current = code_hash()
    record = _done_by(planned_run, A)
    assert execution.record_differences(record, planned_run) == ["provenance.code_hash"]
    assert not execution.finished(planned_run, "smoke")
    _write(versions_file, {"equivalences": [_entry(A, B), _entry(B, current)]})
    assert execution.record_differences(record, planned_run) == []
    assert execution.finished(planned_run, "smoke")
    unrelated = _done_by(planned_run, C)
    assert execution.record_differences(unrelated, planned_run) == ["provenance.code_hash"]
    assert not execution.finished(planned_run, "smoke")
    counts = status.finished_code_hashes([planned_run], "smoke")
    assert counts == {}
    _done_by(planned_run, A)
    assert status.finished_code_hashes([planned_run], "smoke") == {A: 1}


def test_a_training_by_a_recorded_equivalent_is_continued(tmp_path, versions_file):
    output = tmp_path / "run"
    raw = tiny_config("clip", output)
    output.mkdir()
    (output / "config.json").write_text(json.dumps(raw))
    now = execution.current_code()
    by_a = {**now, "provenance": {"code_hash": A}}
    execution.code_record(output).write_text(json.dumps(by_a))
    assert execution.stale_training(output, raw) == "trained by other code or package versions"
    _write(versions_file, {"equivalences": [_entry(A, code_hash())]})
    assert execution.stale_training(output, raw) is None
    execution.code_record(output).write_text(json.dumps({**now, "provenance": {"code_hash": C}}))
    assert execution.stale_training(output, raw) == "trained by other code or package versions"
    other_packages = {**by_a, "environment": {**now["environment"], "python": "3.0.0"}}
    execution.code_record(output).write_text(json.dumps(other_packages))
    assert execution.stale_training(output, raw) == "trained by other code or package versions"


def test_the_status_line_says_which_code_made_the_finished_runs():
    assert status.code_version_line({}, A) is None
    assert status.code_version_line({A: 5}, A) == (
        f"every finished run was made by this checkout's training code ({A[:12]})"
    )
    assert status.code_version_line({B: 40, A: 2}, A) == (
        f"finished runs: 40 made by {B[:12]}, 2 by this checkout's training code ({A[:12]}); "
        f"results/code-versions.json records {B[:12]} as training alike this checkout's code"
    )


def _fake_study(folder: Path, code: str, commit: str, shift: float = 0.0) -> Path:
    """A smoke study's results under ``folder`` as the study writes them: two runs, one
    evaluated (``items.npz``), with logs that hold timing fields."""
    results = folder / "results" / "smoke"
    for name, items in (("himo/molo/seed0", True), ("recipe/molo-lr1/seed0", False)):
        run = results / name
        run.mkdir(parents=True)
        seconds = len(str(folder))  # another machine time on each side
        log = [{"step": 5, "loss": 1.5 + shift, "samples_per_s": seconds, "cpu_seconds": 2.0 * seconds},
               {"step": 10, "val": {"short_i2t_r1": float("nan")}}]  # fmt: skip
        (run / "log.jsonl").write_text("\n".join(json.dumps(r) for r in log) + "\n")
        if items:
            np.savez_compressed(run / "items.npz", **{"world-short/i2t_hit1": np.ones(4, "f4")})
        record = {"run": name, "config": {}, "init_sha256": None, "environment": {},
                  "feature_std": 0.5, "collapsed": None,
                  "provenance": {"commit": commit, "dirty": False, "code_hash": code}}  # fmt: skip
        (run / "run.done").write_text(json.dumps(record))
    return results


def _fake_revision(monkeypatch, shift: float, expected_studies=equivalence.STUDIES) -> None:
    """``run_smoke_study`` writes fake studies (the revision's carries hash A and, when
    ``shift`` is not 0, another loss) of the ``expected_studies`` it is asked for; ``worktree``
    checks out nothing."""

    def run_smoke_study(tree, folder, label, studies):
        assert studies == tuple(expected_studies)
        if folder.exists():
            shutil.rmtree(folder)
        revision = label != "checkout"
        commit = equivalence._commit("HEAD")
        _fake_study(folder, A if revision else code_hash(), commit, shift if revision else 0.0)
        return 12.0

    monkeypatch.setattr(equivalence, "run_smoke_study", run_smoke_study)
    monkeypatch.setattr(equivalence, "worktree", lambda commit, folder: contextlib.nullcontext())


def test_a_bit_identical_study_records_the_revisions_own_hash(
    tmp_path, monkeypatch, versions_file, capsys
):
    _fake_revision(monkeypatch, shift=0.0)
    assert equivalence.main(["--against", "HEAD", "--folder", str(tmp_path / "eq")]) == 0
    (entry,) = read_equivalences()
    assert (entry["from"], entry["to"]) == (A, code_hash())
    evidence = entry["evidence"]
    assert evidence["kind"] == "bit-identical smoke study"
    assert evidence["revision"] == equivalence._commit("HEAD")
    assert evidence["checkout_commits"] == [evidence["revision"]]
    assert evidence["runs_compared"] == 2 and evidence["torch_cpu_capability"]
    assert evidence["runs"]["recipe/molo-lr1/seed0"]["items"] is None
    assert len(evidence["runs"]["himo/molo/seed0"]["items"]) == 64
    assert "all 2 runs bit-identical" in capsys.readouterr().out
    assert evidence["studies"] == list(equivalence.STUDIES)


def test_studies_named_are_the_ones_run_and_the_evidence_says_so(
    tmp_path, monkeypatch, versions_file
):
    _fake_revision(monkeypatch, shift=0.0, expected_studies=("himo",))
    folder = str(tmp_path / "eq")
    assert equivalence.main(["--against", "HEAD", "--folder", folder, "--studies", "himo"]) == 0
    (entry,) = read_equivalences()
    assert entry["evidence"]["studies"] == ["himo"]
    assert entry["evidence"]["command"].endswith("--studies himo")


def test_a_study_that_differs_records_nothing_and_names_the_run(
    tmp_path, monkeypatch, versions_file, capsys
):
    _fake_revision(monkeypatch, shift=1e-7)
    assert equivalence.main(["--against", "HEAD", "--folder", str(tmp_path / "eq")]) == 1
    assert not versions_file.exists()
    out = capsys.readouterr().out
    assert "himo/molo/seed0 differs: log.jsonl[0]" in out
    assert "2 run(s) differ; nothing recorded" in out


def test_run_differences_name_arrays_log_records_and_run_fields(tmp_path):
    ours = _fake_study(tmp_path / "ours", A, "c") / "himo/molo/seed0"
    theirs = _fake_study(tmp_path / "theirs-longer-name", B, "c") / "himo/molo/seed0"
    assert equivalence.run_differences(ours, theirs) == []  # timings and hashes not compared
    np.savez_compressed(theirs / "items.npz", **{"world-short/i2t_hit1": np.zeros(4, "f4")})
    record = json.loads((theirs / "run.done").read_text())
    (theirs / "run.done").write_text(json.dumps({**record, "feature_std": 0.25}))
    with (theirs / "log.jsonl").open("a") as log:
        log.write(json.dumps({"step": 10, "status": "finished"}) + "\n")
    assert equivalence.run_differences(ours, theirs) == [
        "items.npz:world-short/i2t_hit1",
        "log.jsonl: 2 records against 3",
        "run.done:feature_std",
    ]
