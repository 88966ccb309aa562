"""The reproduction check still bites: a smoke run re-trained with a real regression (a MoLo
weight of 0.5 instead of 1, HiDe's τ of 0.5 instead of 0.9, the norm regularizer's sign
flipped in the loss code) fails ``paperlib.study.compare``, naming that run's metrics, while the
same run re-trained unchanged passes. The regularizer's regression is re-trained on ARGENT's
smoke run (from random weights, as every ARGENT arm trains)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from paperlib.losses import entailment
from paperlib.study import compare
from paperlib.study.decide import decide
from paperlib.study.paths import REPO_ROOT, results_root_at, slug
from paperlib.study.plan import design
from paperlib.study.run import execution

COMMITTED = REPO_ROOT / "results"
pytestmark = pytest.mark.skipif(
    not (COMMITTED / "smoke" / "variation.json").is_file(),
    reason="needs the committed smoke results and their measured variation",
)


def rerun(tmp_path: Path, monkeypatch, variant: str, change: dict[str, dict]) -> bool:
    """Copy the committed smoke results, re-train ``variant`` (seed 0) with ``change`` applied
    to its config, re-decide, and compare; True when the comparison passes."""
    reproduced = tmp_path / "results"
    shutil.copytree(COMMITTED / "smoke", reproduced / "smoke")
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    searched = (COMMITTED / "smoke" / "recipe.json").is_file()  # the committed runs' recipe
    plan = design.plan("smoke", searched=searched)
    run = next(r for r in plan if r.variant == variant and r.seed == 0)
    config = json.loads(json.dumps(run.config))
    for section, values in change.items():
        config[section].update(values)
    shutil.rmtree(reproduced / "smoke" / run.study / slug(variant) / "seed0")
    with results_root_at(reproduced), execution.study_settings():
        execution.execute(design.Run(**{**run.__dict__, "config": config}), "smoke")
        decide.decide("smoke")
    return compare.compare(COMMITTED / "smoke", reproduced / "smoke", tmp_path / "report", "smoke")


@pytest.mark.slow
def test_an_unchanged_rerun_reproduces(tmp_path, monkeypatch):
    assert rerun(tmp_path, monkeypatch, "MoLo", {})


def _flip_regularizer(monkeypatch) -> None:
    """The bug a sign slip in the regularizer's code would be: ‖x‖² − log‖x‖ negated."""
    original = entailment.norm_regularizer
    monkeypatch.setattr(entailment, "norm_regularizer", lambda *f: -original(*f))


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant, change, patch",
    [
        ("MoLo", {"loss": {"lam": 0.5}}, None),
        ("MoLo", {"loss": {"tau": 0.5}}, None),
        ("ARGENT", {}, _flip_regularizer),
    ],
    ids=["molo-lambda-0.5", "hide-tau-0.5", "regularizer-sign"],
)
def test_a_regression_fails_the_comparison_and_names_its_run(
    tmp_path, monkeypatch, variant, change, patch
):
    if patch is not None:
        patch(monkeypatch)
    assert not rerun(tmp_path, monkeypatch, variant, change)
    report = json.loads((tmp_path / "report.json").read_text())
    failed = {r["file"].rsplit("/", 1)[0] for r in report["rows"] if not r["within"]}
    study = "himo" if variant == "MoLo" else "argent"
    assert f"{study}/{slug(variant)}/seed0" in failed
