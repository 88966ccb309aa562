"""The recipe stage: scoring grid points on hand-made validation logs, the arm -> recipe mapping
(HiMo's fine-tunes search; ARGENT's arms, from random weights, train at the hyperbolic bases'
recipe and search nothing), the picks reaching the planned configs, and recipe runs trained but
never evaluated."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from paperlib.study import cli, paths
from paperlib.study.plan import design, recipe, scales
from paperlib.study.plan.bases import RECIPES
from paperlib.study.plan.claims import HEADLINE_ARMS, LONGER
from paperlib.study.plan.scales import SCALES
from paperlib.study.results import validity
from paperlib.study.run import execution, parallel
from tests.recipe_helpers import toy_repository, write_picks


def _log(start: dict, last: dict, steps: int = 20) -> list[dict]:
    """A training log: loss records, validation at step 0 and at ``steps``, a middle one."""
    middle = {k: (start[k] + last[k]) / 2 for k in start}
    return [
        {"step": 0, "val": start, "val_size": 100},
        {"step": 5, "loss": 2.0},
        {"step": steps // 2, "val": middle, "val_size": 100},
        {"step": steps, "val": last, "val_size": 100},
        {"step": steps, "status": "finished"},
    ]


BASE = {"long_i2t_r1": 0.10, "short_i2t_r1": 0.90, "zeroshot_L1": 0.50, "zeroshot_L3": 0.30}
HIMO = recipe.SEARCHED_ARMS["MoLo"]  # the best long R@1 keeping 0.8 of short R@1 and L1
# the most-training rule (``recipe.Rule.most_training``): the largest learning rate keeping 0.9
# of the base's R@1 and L1, for arms whose primary metric only falls as they train more (a
# fine-tune from a base that already knows it); no arm of the study's design has one
HYPERBOLIC = recipe.Rule("argent", "zeroshot_L1", threshold=0.9, most_training=True)


def _point(lr, warmup, last, rule=HIMO):
    """A grid point scored from a log that starts at :data:`BASE` and ends at ``last``."""
    scored = recipe.score_point(_log(BASE, {**BASE, **last}), rule)
    return {"lr": lr, "warmup": warmup, "warmup_steps": round(20 * warmup), **scored}


def test_a_point_is_scored_by_its_last_record_against_step_0():
    scored = recipe.score_point(_log(BASE, {**BASE, "short_i2t_r1": 0.45}), HIMO)
    assert scored["start"] == {m: BASE[m] for m in ("long_i2t_r1", "short_i2t_r1", "zeroshot_L1")}
    assert scored["last_step"] == 20
    assert scored["retention"] == pytest.approx({"short_i2t_r1": 0.5, "zeroshot_L1": 1.0})
    assert not scored["retained"] and scored["score"] == 0.10
    kept = recipe.score_point(_log(BASE, {**BASE, "short_i2t_r1": 0.72}), HIMO)
    assert kept["retained"] and kept["retention"]["short_i2t_r1"] == pytest.approx(0.8)
    assert recipe.retention(0.0, 0.3) == 1.0  # a base at 0 has nothing to lose
    assert recipe.retention(0.9, float("nan")) == 0.0  # a diverged run kept nothing
    with pytest.raises(ValueError, match="no step-0 validation record"):
        recipe.score_point(_log(BASE, BASE)[1:], HIMO)
    with pytest.raises(ValueError, match=r"lack \['zeroshot_L1'\]"):
        short = {"long_i2t_r1": 0.1, "short_i2t_r1": 0.9}
        recipe.score_point(_log(short, short), HIMO)


def test_a_higher_scoring_point_that_forgets_loses_to_a_retained_one():
    retained = _point(1e-4, 0.05, {"long_i2t_r1": 0.40, "zeroshot_L1": 0.45})
    forgets = _point(3e-4, 0.05, {"long_i2t_r1": 0.60, "short_i2t_r1": 0.20})
    weaker = _point(3e-5, 0.25, {"long_i2t_r1": 0.30})
    chosen = recipe.pick([forgets, retained, weaker], HIMO)
    assert (chosen["lr"], chosen["warmup"], chosen["retained"]) == (1e-4, 0.05, True)
    assert chosen["warmup_steps"] == 1
    assert "0.4" in chosen["reason"] and "2 of 3 points" in chosen["reason"]


def test_a_tie_goes_to_the_smaller_learning_rate():
    same = {"long_i2t_r1": 0.40}
    points = [_point(3e-4, 0.05, same), _point(3e-5, 0.25, same), _point(1e-4, 0.05, same)]
    assert recipe.pick(points, HIMO)["lr"] == 3e-5


def test_a_pick_at_the_grid_s_edge_says_so():
    points = [_point(3e-5, 0.05, {"long_i2t_r1": 0.5}), _point(1e-4, 0.05, {"long_i2t_r1": 0.4}),
              _point(3e-4, 0.05, {"long_i2t_r1": 0.3})]  # fmt: skip
    chosen = recipe.pick(points, HIMO)
    assert chosen["at_grid_edge"] == "lowest" and "grid's lowest learning rate" in chosen["reason"]
    points[2] = _point(3e-4, 0.05, {"long_i2t_r1": 0.6})
    assert recipe.pick(points, HIMO)["at_grid_edge"] == "highest"
    points[1] = _point(1e-4, 0.05, {"long_i2t_r1": 0.7})
    middle = recipe.pick(points, HIMO)
    assert middle["at_grid_edge"] is None and "edge" not in middle["reason"]
    assert recipe.grid_edge(1e-4, [1e-4, 1e-4]) is None  # one learning rate: no edge


def test_with_no_point_retained_the_most_retaining_is_picked_and_marked():
    points = [
        _point(3e-4, 0.05, {"long_i2t_r1": 0.6, "short_i2t_r1": 0.18}),  # keeps 0.2
        _point(1e-4, 0.05, {"long_i2t_r1": 0.5, "zeroshot_L1": 0.35}),  # keeps 0.7
        _point(3e-5, 0.05, {"long_i2t_r1": 0.4, "short_i2t_r1": 0.54}),  # keeps 0.6
    ]
    chosen = recipe.pick(points, HIMO)
    assert chosen["lr"] == 1e-4 and chosen["retained"] is False
    assert chosen["reason"].startswith("no point keeps ≥ 0.8") and "0.7" in chosen["reason"]


def test_the_most_training_rule_takes_the_largest_rate_every_arm_keeps():
    """A most-training rule over two arms: 0.85 of the base's L1 is not kept at 0.9 (zero-shot L3 is
    read, not guarded); of the retained points the largest learning rate wins over a better
    primary metric at a smaller one, and arms sharing the rule take the largest rate both keep,
    at the warm-up with the better mean primary."""

    def line(l1_at_1e5):
        return [
            _point(1e-6, 0.05, {"zeroshot_L1": 0.50}, HYPERBOLIC),  # keeps all: best L1
            _point(3e-6, 0.05, {"zeroshot_L1": 0.46, "zeroshot_L3": 0.15}, HYPERBOLIC),  # 0.92
            _point(3e-6, 0.25, {"zeroshot_L1": 0.47}, HYPERBOLIC),  # ... and a better L1
            _point(1e-5, 0.05, {"zeroshot_L1": l1_at_1e5}, HYPERBOLIC),
        ]

    argent, hycoclip = line(0.425), line(0.46)  # at 1e-5: 0.85 and 0.92 of the base's L1
    assert [p["retained"] for p in argent] == [True, True, True, False]
    assert set(argent[1]["retention"]) == {"short_i2t_r1", "zeroshot_L1"}  # L3 at half: kept
    chosen = recipe.pick(argent, HYPERBOLIC)
    assert (chosen["lr"], chosen["warmup"], chosen["at_grid_edge"]) == (3e-6, 0.25, None)
    assert chosen["reason"].startswith("the largest learning rate of the 3 of 4 points")
    assert "≥ 0.9 of the base's short_i2t_r1 and zeroshot_L1" in chosen["reason"]
    assert recipe.pick(hycoclip, HYPERBOLIC)["lr"] == 1e-5  # alone, it would train more
    assert recipe.pick(argent, HIMO)["lr"] == 1e-6  # the best-primary rule: the smallest rate
    joint = recipe.joint_points({"HyCoCLIP": hycoclip, "ARGENT": argent})
    assert [p["retained"] for p in joint] == [True, True, True, False]
    assert joint[2]["score"] == pytest.approx(0.47)
    assert joint[3]["retention"]["ARGENT: zeroshot_L1"] == pytest.approx(0.85)
    assert (recipe.pick(joint, HYPERBOLIC)["lr"], recipe.pick(joint, HYPERBOLIC)["warmup"]) == (
        3e-6, 0.25)  # fmt: skip
    with pytest.raises(ValueError, match="the same grid points"):
        recipe.joint_points({"HyCoCLIP": hycoclip, "ARGENT": argent[:3]})
    assert not any(rule.most_training for rule in recipe.SEARCHED_ARMS.values())


def _fine_tunes(scale_name: str) -> list[design.Run]:
    """The planned fine-tunes: HiMo's trained runs (not the references, not ARGENT's arms, which
    train from random weights)."""
    return [r for r in design.plan(scale_name) if r.stage != "references" and r.study == "himo"]


@pytest.mark.parametrize("scale_name", ["smoke", "full"])
def test_every_planned_fine_tune_arm_has_a_recipe(scale_name, tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    write_picks(scale_name)
    headline = {("himo", v) for v in HEADLINE_ARMS["himo"]}  # ARGENT's arms search nothing
    assert {(rule.study, arm) for arm, rule in recipe.SEARCHED_ARMS.items()} == headline
    argent = {r.variant for r in design.plan(scale_name) if r.study == "argent"}
    assert not argent & (set(recipe.SEARCHED_ARMS) | set(recipe.RECIPE_OF))
    assert set(recipe.RECIPE_OF.values()) <= set(recipe.SEARCHED_ARMS)
    planned = _fine_tunes(scale_name)
    arms = {r.variant.removesuffix(LONGER): r.study for r in planned if r.stage != "trend"}
    for run in (r for r in planned if r.stage == "trend"):  # a trend point: its arm's recipe
        assert design.trend_arm(run.variant) in recipe.SEARCHED_ARMS, run.variant
    for arm, study in arms.items():
        searched = recipe.RECIPE_OF.get(arm, arm)
        assert recipe.SEARCHED_ARMS[searched].study == study, arm
    if scale_name == "full":  # every declared arm is planned: no stale entry
        assert set(recipe.RECIPE_OF) | set(recipe.SEARCHED_ARMS) == set(arms)


def test_the_picks_reach_the_configs_of_an_arm_and_of_the_arms_that_vary_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    picks = {"MoLo": (3e-4, 0.25), "Long-CLIP": (1e-4, 0.05)}
    write_picks("full", picks)
    runs = {(r.variant, r.seed): r for r in _fine_tunes("full")}
    expected = {  # arm -> (lr, warm-up steps): the fraction of each arm's own schedule
        "MoLo": (3e-4, 100),  # 400 steps
        "MoLo, half batch": (3e-4, 200),  # 800 steps, the same samples seen
        "MoLo, double batch": (3e-4, 50),  # 200 steps
        "MoLo, 2 ranks, HiDe per rank": (3e-4, 100),
        "Long-CLIP": (1e-4, 20),
        "InfoNCE (λ=0)": (1e-5, 20),  # not given: the grid's first point, 0.05 of 400
    }
    for arm, (lr, warmup) in expected.items():
        for seed in (0, 2):
            optim = runs[(arm, seed)].config["optim"]
            assert (optim["lr"], optim["warmup_steps"]) == (lr, warmup), (arm, seed)
    # ARGENT's arms: the hyperbolic bases' own recipe (study.plan.bases), whatever the picks,
    # their configs the same as without any pick
    bases = RECIPES["full"]
    unsearched = {r.name: r.config for r in design.plan("full", searched=False)}
    for run in (r for r in design.plan("full") if r.study == "argent" and r.stage == ""):
        optim = run.config["optim"]
        assert (optim["lr"], optim["warmup_steps"], optim["weight_decay"]) == (
            bases.lr, bases.warmup, bases.weight_decay)  # fmt: skip
        assert run.config == unsearched[run.name]
    scale = scales.SCALES["full"]
    references = [r for r in design.plan("full") if r.stage == "references"]
    # the bases as they are (no optimiser), HiMo's untrained model, ARGENT's
    lrs = {r.config["optim"].get("lr") for r in references}
    assert lrs == {None, scale.finetune_lr, scale.scratch_lr}


def test_plan_without_recipe_picks_is_a_named_error_and_an_empty_grid_needs_none(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    with pytest.raises(recipe.RecipeMissingError, match=r"smoke/recipe.json: .*recipe stage first"):
        design.plan("smoke")
    assert len(design.plan("smoke", searched=False)) > 0  # reading results needs no picks
    path = write_picks("smoke")
    saved = json.loads(path.read_text())
    path.write_text(json.dumps({**saved, "grid": {"lrs": [1.0], "warmups": [0.5]}}))
    with pytest.raises(recipe.RecipeMissingError, match=r"grid .*the scale's is"):
        design.plan("smoke")
    fixed = dataclasses.replace(SCALES["smoke"], recipe_lrs=(), recipe_warmups=())
    monkeypatch.setitem(SCALES, "smoke", fixed)
    molo = next(r for r in design.plan("smoke") if r.variant == "MoLo")
    assert (molo.config["optim"]["lr"], molo.config["optim"]["warmup_steps"]) == (5e-4, 10)
    assert design.recipe_plan("smoke") == []


def test_a_pick_made_under_another_rule_is_not_served(tmp_path, monkeypatch):
    """A ``recipe.json`` entry whose recorded rule is not the arm's rule now (here: MoLo's
    threshold changed after its pick) is a missing pick, named, for the arm and the arms that
    take its recipe; the other arms' picks still plan."""
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    path = write_picks("full", {"MoLo": (3e-5, 0.25)})
    assert recipe.load_picks("full")["MoLo"]["lr"] == 3e-5
    saved = json.loads(path.read_text())
    saved["arms"]["MoLo"]["rule"]["threshold"] = 0.9
    path.write_text(json.dumps(saved))
    assert "MoLo" not in recipe.load_picks("full") and "Long-CLIP" in recipe.load_picks("full")
    with pytest.raises(recipe.RecipeMissingError, match=r"no pick for 'MoLo' under its rule"):
        design.plan("full")
    assert len(design.plan("full", ("argent",))) > 0  # ARGENT's arms need no pick


@pytest.mark.parametrize("scale_name", ["smoke", "full"])
def test_the_recipe_stage_plans_himo_s_arms_only(scale_name, tmp_path, monkeypatch):
    """ARGENT's grid is empty at every scale, whatever HiMo's: the recipe plan holds HiMo's
    three searched arms at each point of their grid, seed 0, and nothing of ARGENT's; with
    HiMo's grid emptied too, nothing is searched and MoLo keeps the scale's fixed learning rate
    and the design's warm-up."""
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    scale = SCALES[scale_name]
    assert scale.recipe_grid("argent") == ((), ()) and recipe.grid(scale, "argent") == []
    points = recipe.grid(scale, "himo")
    assert points == [(lr, wu) for lr in scale.recipe_lrs for wu in scale.recipe_warmups]
    searches = design.recipe_plan(scale_name)
    assert {(r.study, r.variant) for r in searches} == {("himo", v) for v in HEADLINE_ARMS["himo"]}
    assert len(searches) == 3 * len(points) and {r.seed for r in searches} == {0}
    assert design.recipe_plan(scale_name, ("argent",)) == []
    fixed = dataclasses.replace(scale, recipe_lrs=(), recipe_warmups=())
    monkeypatch.setitem(SCALES, scale_name, fixed)
    assert design.recipe_plan(scale_name) == []
    runs = {r.variant: r for r in design.plan(scale_name) if r.seed == 0}  # no picks needed
    optim = runs["MoLo"].config["optim"]
    assert (optim["lr"], optim["warmup_steps"]) == (scale.finetune_lr, 10)
    assert runs["ARGENT"].config["optim"]["lr"] == scale.scratch_lr


def _stub_training(config):
    """Training replaced by its log: at lr 5e-4 the long R@1 rises most but short R@1 falls to
    half the base's; at 1e-4 it rises less and keeps everything."""
    output = Path(config["train"]["output_dir"])
    output.mkdir(parents=True, exist_ok=True)
    fast = config["optim"]["lr"] == 5e-4
    last = (
        {**BASE, "long_i2t_r1": 0.5, "short_i2t_r1": 0.45} if fast else {**BASE, "long_i2t_r1": 0.3}
    )
    records = _log(BASE, last, config["train"]["steps"])
    (output / "log.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (output / "last.pt").write_bytes(b"checkpoint")
    return SimpleNamespace(status="finished", step=config["train"]["steps"])


def test_recipe_runs_train_without_evaluation_and_their_picks_plan_the_study(tmp_path, monkeypatch):
    toy_repository(tmp_path, monkeypatch)
    monkeypatch.setattr(execution, "train_run", _stub_training)
    monkeypatch.setattr(execution, "evaluate_into", lambda *a: pytest.fail("evaluated"))
    searches = design.recipe_plan("smoke")
    assert len(searches) == 3 * 2 and len({r.name for r in searches}) == 6  # HiMo's arms
    assert all(r.stage == "recipe" and not r.evaluate and r.seed == 0 for r in searches)

    def execute_all(runs, scale_name, workers, threads=1):  # the recipe runs, in this process
        return {r.stage: float(bool(execution.execute(r, scale_name))) for r in runs
                if r.stage == "recipe"}  # fmt: skip

    monkeypatch.setattr(parallel, "execute_all", execute_all)
    planned, stages = parallel.run_study("smoke")
    assert stages == {"recipe": 1.0}  # the recipe stage's runs, timed; the planned ones train later
    point = tmp_path / "results" / "smoke" / "recipe" / "molo" / "lr0p0005-wu0p05"
    done = json.loads((point / "run.done").read_text())
    assert done["evaluated"] is False and done["feature_std"] is None and done["provenance"]
    assert not list(point.glob("*.npz")) and (point / "log.jsonl").is_file()
    assert all(execution.finished(r, "smoke") for r in searches)  # resumed: skipped
    saved = json.loads((tmp_path / "results" / "smoke" / "recipe.json").read_text())
    assert saved["grid"] == {"himo": {"lrs": [5e-4, 1e-4], "warmups": [0.05]}}  # HiMo alone
    assert set(saved["arms"]) == set(recipe.SEARCHED_ARMS)
    for arm, entry in saved["arms"].items():
        fast, slow = entry["points"]
        assert (fast["lr"], fast["retained"], fast["score"]) == (5e-4, False, 0.5)
        assert fast["retention"]["short_i2t_r1"] == pytest.approx(0.5)
        assert slow["retained"] and slow["provenance"]["code_hash"] and slow["warmup_steps"] == 1
        assert entry["pick"]["lr"] == 1e-4 and entry["pick"]["retained"], arm
    molo = next(r for r in planned if r.variant == "MoLo")
    assert (molo.config["optim"]["lr"], molo.config["optim"]["warmup_steps"]) == (1e-4, 1)
    # a study run for ARGENT alone searches nothing and leaves HiMo's picks
    parallel.run_study("smoke", ("argent",))
    again = json.loads((tmp_path / "results" / "smoke" / "recipe.json").read_text())
    assert list(again["arms"]) == list(recipe.SEARCHED_ARMS) and again == saved


def test_decide_only_reads_finished_results_without_recipe_picks(tmp_path, monkeypatch):
    committed = paths.REPO_ROOT / "results" / "smoke"
    shutil.copytree(committed, tmp_path / "smoke")
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    recipe.recipe_path("smoke").unlink(missing_ok=True)  # as results made before the stage
    assert cli.main(["--scale", "smoke", "--decide-only"]) == 0
    study = json.loads((tmp_path / "smoke" / "study.json").read_text())
    assert study["runs"] == len(design.plan("smoke", searched=False))
    done = list((tmp_path / "smoke").glob("*/*/seed*/run.done"))
    assert study["runs_finished"] == len(done) > 0


def test_a_run_of_an_earlier_recipe_is_left_out_of_the_decided_runs(tmp_path, monkeypatch, capsys):
    """A committed smoke run whose record says it trained at another learning rate than its
    arm's pick now is not a finished run (named); the same results without ``recipe.json``
    hold no run to a recipe."""

    shutil.copytree(paths.REPO_ROOT / "results" / "smoke", tmp_path / "smoke")
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    every = {r["run"] for r in validity.finished_runs("smoke")}
    done = tmp_path / "smoke" / "himo" / "molo-half-batch" / "seed0" / "run.done"
    record = json.loads(done.read_text())
    assert record["run"] in every
    record["config"]["optim"]["lr"] *= 10  # as a run of an earlier pick
    done.write_text(json.dumps(record))
    kept = {r["run"] for r in validity.finished_runs("smoke")}
    assert every - kept == {record["run"]}
    assert f"{record['run']}: trained at lr" in capsys.readouterr().out
    picked = validity.picked_optim("smoke")[done.parent]
    assert validity.off_recipe(record, picked).endswith(f"the recipe picks lr {picked['lr']}, "
                                                          f"{picked['warmup_steps']}")  # fmt: skip
    recipe.recipe_path("smoke").unlink()
    assert validity.picked_optim("smoke") is None
    assert {r["run"] for r in validity.finished_runs("smoke")} == every
