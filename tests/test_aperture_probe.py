"""The aperture probe: its runs are the study's aperture arm with only the start norm (and,
before training, the steps) changed, and its record counts the held-out captions inside."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from paperlib.study import design, premise
from paperlib.study.reader import REPO_ROOT, load_claims
from tests.test_study import _differences

spec = importlib.util.spec_from_file_location(
    "aperture_probe", REPO_ROOT / "scripts" / "aperture_probe.py"
)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def test_the_probe_runs_are_the_aperture_arm_with_another_start_norm():
    arm = {r.variant: r for r in design.plan("full", searched=False) if r.seed == 0}
    trained = {r.variant: r for r in probe.probe_runs(0.5, train=True)}
    assert set(trained) == {f"{v}, alpha-norm-0.5" for v in probe.ARMS}
    for variant in probe.ARMS:
        run = trained[f"{variant}, alpha-norm-0.5"]
        assert run.config["model"]["alpha_norm"] == 0.5
        assert _differences(run.config, arm[variant].config) == {"model.alpha_norm"}
    start = probe.probe_runs(0.25, train=False)
    assert all(r.config["train"]["steps"] == 0 for r in start)
    assert len({r.config["train"]["output_dir"] for r in [*start, *trained.values()]}) == 6


def test_the_probe_record_counts_captions_inside_and_reads_the_diagnostics():
    items = {probe.ITEM: np.array([1.0, 0.0, 1.0, 0.0])}
    log = [
        {"step": 0, "loss": 1.0},
        {"step": 60, "diag/text/frac_inside_radius": 0.25, "diag/text/norm_min": 0.5,
         "diag/aperture_radius": 0.63},
    ]  # fmt: skip
    record = probe.probe_record(items, log, "argent/MERU/seed0")
    assert (record["held_out_captions_inside"], record["held_out_captions"]) == (2, 4)
    assert record["held_out_inside"] == 0.5
    assert record["training_batches"] == [
        {"step": 60, "inside": 0.25, "norm_min": 0.5, "radius": 0.63}
    ]


def test_the_committed_record_was_made_by_the_study_code_and_supports_the_arm_start_norm():
    """The record lives outside the folder a study rewrites, names the training code that made
    it (one the committed full study was trained by), and at the aperture arm's start norm a trained baseline
    keeps more captions inside the radius than the aperture claims' smallest effect."""
    record = json.loads(premise.APERTURE_PROBE.read_text())
    study = load_claims("full")
    assert record["made_at"]["code_hash"] in {v["code_hash"] for v in study["code_versions"]}
    for run in record["runs"]:
        assert run["held_out_inside"] == pytest.approx(
            run["held_out_captions_inside"] / run["held_out_captions"]
        )
    (smallest,) = {
        c["smallest"] for c in study["claims"] if c["variant"] == f"ARGENT{design.APERTURE}"
    }
    baselines = premise.probe_baselines(record["runs"])
    assert len([r for r in baselines if r["alpha_norm"] == design.APERTURE_ALPHA_NORM]) == 2
    assert design.APERTURE_ALPHA_NORM in premise.start_norms_reached(record["runs"], smallest)
