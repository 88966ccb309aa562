"""One bounds check per model scalar wherever a checkpoint or base is read: a stored curvature,
α or logit scale outside what the model clamps it to is named (file, key, value, bounds) when
training starts from it, resumes from it or evaluates it, and evaluation scores with the
clamped curvature its embeddings use; a non-finite one is refused by name. Configs that cannot
learn (a contrastive batch below 2, a curvature whose logits stay uniform) are refused before
the run folder is claimed."""

from __future__ import annotations

import math

import pytest
import torch

from paperlib.engine import evaluation, loop
from paperlib.engine.config import ConfigError, load_config, widest_logit_gap
from paperlib.models.bounds import ScalarBoundsWarning
from tests.engine_helpers import tiny_config

LOG_CURV_HIGH = math.log(10.0)  # log(10·c0) at MERU's c0 = 1


@pytest.fixture(scope="module")
def meru_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("meru")
    return loop.train(tiny_config("meru", folder / "run", train={"steps": 2})).output_dir


def _with_log_curv(run, tmp_path, value: float, name: str):
    state = torch.load(run / "last.pt", weights_only=True)
    state["model"]["model.log_curv"].fill_(value)
    folder = tmp_path / name
    folder.mkdir()
    torch.save(state, folder / "last.pt")
    return folder


def test_a_base_curvature_out_of_bounds_is_named_when_training_starts(meru_run, tmp_path):
    base = _with_log_curv(meru_run, tmp_path, 20.0, "base") / "last.pt"
    raw = tiny_config("meru", tmp_path / "run", model={"init": str(base)}, train={"steps": 1})
    with pytest.warns(ScalarBoundsWarning) as caught:
        loop.train(raw)
    (message,) = [str(w.message) for w in caught]
    assert f"model.init {base}: model.log_curv (log c) = 20" in message
    assert "lies outside [-2.30259, 2.30259]" in message and "clamps it to 2.30259" in message


def test_evaluation_names_an_out_of_bounds_curvature_and_scores_at_the_clamp(meru_run, tmp_path):
    """The case: training and evaluation used a stored curvature far outside its bounds at the
    clamp without a word (the released-checkpoint loader warned)."""
    far = _with_log_curv(meru_run, tmp_path, 20.0, "far")
    at_bound = _with_log_curv(meru_run, tmp_path, LOG_CURV_HIGH, "at-bound")
    benchmarks = ["world-hierarchy", "world-long"]
    with pytest.warns(ScalarBoundsWarning, match=r"far/last\.pt: model\.log_curv \(log c\) = 20"):
        rows = evaluation.evaluate(far, benchmarks, output_dir=tmp_path / "a", world_size=12)
    expected = evaluation.evaluate(at_bound, benchmarks, output_dir=tmp_path / "b", world_size=12)
    assert [r["metrics"] for r in rows] == [r["metrics"] for r in expected]


def test_evaluation_refuses_an_infinite_curvature_by_file_and_key(meru_run, tmp_path):
    """The case: an infinite stored curvature ended in a raw ZeroDivisionError in hierarchical
    retrieval."""
    bad = _with_log_curv(meru_run, tmp_path, math.inf, "inf")
    with pytest.raises(
        ValueError, match=r"inf/last\.pt: model\.log_curv \(log c\) = inf; expected"
    ):
        evaluation.evaluate(bad, ["world-hierarchy"], output_dir=tmp_path / "out", world_size=12)


def test_a_resumed_checkpoint_s_scalars_are_checked_too(tmp_path):
    raw = tiny_config("meru", tmp_path / "run", train={"steps": 2})
    loop.train(raw)
    state = torch.load(tmp_path / "run" / "last.pt", weights_only=True)
    state["model"]["model.textual_alpha"].fill_(3.0)  # α ≤ 0 is the bound
    torch.save(state, tmp_path / "run" / "last.pt")
    with pytest.warns(
        ScalarBoundsWarning, match=r"model\.textual_alpha = 3 lies outside \[-inf, 0\]"
    ):
        loop.train(tiny_config("meru", tmp_path / "run", train={"steps": 3}))


@pytest.mark.parametrize("method", ["himo", "clip", "argent"])
def test_a_batch_of_one_is_refused_before_the_folder_is_claimed(tmp_path, method):
    """The case: ``train.batch_size=1`` trained HiMo at a loss of exactly 0 and exited 0."""
    raw = tiny_config(method, tmp_path / "run", train={"batch_size": 1})
    with pytest.raises(ConfigError, match=r"train\.batch_size: expected at least 2, got 1"):
        loop.train(raw)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ({"curv_init": 1e30}, r"model\.curv_init: at curvature 1e\+30 no two logits can differ"),
        ({"curv_init": 1e9, "learn_curv": False}, r"no two logits can differ by more than 0\.07"),
        ({"curv_init": 1e-30}, r"model\.curv_init: 1e-30 lets the curvature reach 1e-31"),
    ],
)
def test_a_curvature_whose_logits_stay_uniform_is_refused(tmp_path, model, message):
    """The case: ``model.curv_init=1e30`` trained with uniform logits (loss ln B), exit 0."""
    raw = tiny_config("meru", tmp_path / "run", model=model)
    with pytest.raises(ConfigError, match=message):
        loop.train(raw)
    assert not (tmp_path / "run").exists()


def test_curvatures_that_can_learn_are_kept():
    for curv, learn in ((1.0, True), (0.1, False), (1e6, True), (1e-20, True), (4e8, False)):
        raw = tiny_config("meru", "/tmp/unused", model={"curv_init": curv, "learn_curv": learn})
        assert load_config(raw).model.curv_init == curv
    assert widest_logit_gap(1.0) == pytest.approx(2 * math.asinh(2.0**15) * 100)
    assert widest_logit_gap(4e8) > 0.1 > widest_logit_gap(5e8)
