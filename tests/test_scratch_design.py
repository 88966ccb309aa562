"""ARGENT's arms from random weights at one budget: the budget read off constructed curves
(their flat steps worked out by hand from ``study.plan.plateau``'s rule), the full plan's ARGENT
runs against the hyperbolic bases' recipe (``study.plan.bases``) and the budget probe's config,
which variants train from scratch against the planned configs, the regime table parsed back against
the plan, and where a claim's learned curvature ends on fabricated logs."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import defaultdict

import pytest

from paperlib.models.hyperbolic import CURV_RANGE
from paperlib.study import paths
from paperlib.study.decide import regime
from paperlib.study.plan import bases, design, scratch_budget
from paperlib.study.plan.claims import CLAIMS, SMALLER, UNTRAINED
from paperlib.study.plan.scales import ARGENT_ABLATION_ARMS, ARGENT_MAIN_ARMS, SCALES, from_scratch
from tests.test_study import _differences

spec = importlib.util.spec_from_file_location(
    "scratch_budget_probe", paths.REPO_ROOT / "scripts" / "scratch_budget_probe.py"
)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)

# --------------------------------------------------------------------------- the budget

STEPS = range(0, 6401, 400)  # the probe's validated steps: every 400 of 6,400
DELTA = {"m": 0.01}  # δ of the one metric the constructed curves have
ITEMS = 1000  # held-out items behind each point: binomial noise about 0.013 at a rate of 0.5


def _curve(value, steps=STEPS) -> list[tuple[int, float]]:
    return [(s, value(s)) for s in steps]


def _line(s: int) -> float:
    """A steady rise, 0.1 at step 0 to 0.9 at 6,400: its fitted gain over the last fifth of
    ``[0, T]`` is 0.8 / 6400 · 0.2 T ≥ 0.03 from T = 1,200 on, several binomial standard errors
    above 0 and beyond δ = 0.01 at every T: never flat."""
    return 0.1 + 0.8 * s / 6400


def _knee(knee: int):
    """A rise from 0.1 to 0.8 at step ``knee``, flat at 0.8 after it. Read up to T, the fitted
    window holds the points at steps ≥ 0.6 T (at least 3); it is flat once that window has no
    point below the knee. Knee 1,600: at T = 2,000 the window (1,200, 1,600, 2,000) holds
    0.625, 0.8, 0.8, a gain of 400 · 0.175 / 320,000 · 400 = 0.0875, about 8 binomial standard
    errors: rising; at T = 2,400 the window (1,600, 2,000, 2,400) is all 0.8: flat, and flat at
    every later step. Knee 2,000: rising at 2,400 (window 1,600 to 2,400 holds 0.66), flat from
    2,800 on."""
    return lambda s: 0.1 + 0.7 * min(s, knee) / knee


def _dip(s: int) -> float:
    """:func:`_line` with one low point, 0.3 at step 2,800 (the line: 0.45). Read up to 2,800
    the window (2,000, 2,400, 2,800) holds 0.35, 0.4, 0.3: a falling slope, flat. Read up to
    3,200 it adds 0.5: slope 70 / 800,000 per step, a gain of 0.056 against a binomial standard
    error of 0.011: rising again. The curve never stays flat."""
    return 0.3 if s == 2800 else _line(s)


def _flat_steps(result: dict) -> list[int]:
    return [c["step"] for c in result["checks"] if c["flat"]]


def test_the_budget_is_the_first_step_where_a_curve_has_flattened_and_stays_flat():
    flat_from_2400 = scratch_budget.budget({"A": {"m": _curve(_knee(1600))}}, 128, ITEMS, DELTA)
    assert flat_from_2400["steps"] == 2400 and flat_from_2400["samples"] == 2400 * 128
    assert _flat_steps(flat_from_2400) == list(range(2400, 6401, 400))
    flat_from_2800 = scratch_budget.budget({"B": {"m": _curve(_knee(2000))}}, 128, ITEMS, DELTA)
    assert flat_from_2800["steps"] == 2800
    # every arm on every metric: the later of the two arms' first flat steps
    both = {"A": {"m": _curve(_knee(1600))}, "B": {"m": _curve(_knee(2000))}}
    assert scratch_budget.budget(both, 128, ITEMS, DELTA)["steps"] == 2800
    two_metrics = {"A": {"m": _curve(_knee(1600)), "n": _curve(_knee(2000))}}
    found = scratch_budget.budget(two_metrics, 128, ITEMS, {"m": 0.01, "n": 0.01})
    assert found["steps"] == 2800
    first = found["checks"][0]
    assert set(first["curves"]) == {"A/m", "A/n"} and first["flat"] is False
    assert all(set(c) == {"gain", "interval", "reached"} for c in first["curves"].values())


def test_a_steady_rise_never_gives_a_budget():
    rising = scratch_budget.budget({"A": {"m": _curve(_line)}}, 128, ITEMS, DELTA)
    assert rising["steps"] is None and rising["samples"] is None
    assert _flat_steps(rising) == []
    # with a flat arm beside it: still none (every arm must have flattened)
    beside = {"A": {"m": _curve(_line)}, "B": {"m": _curve(lambda s: 0.5)}}
    assert scratch_budget.budget(beside, 128, ITEMS, DELTA)["steps"] is None


def test_a_flat_curve_gives_the_first_step_at_the_fewest_samples():
    """A constant curve is flat at every step: the budget is the first validated step with at
    least ``min_samples`` samples seen, 150,000 / 128 = 1,171.9 → step 1,200 on the 400 grid;
    at batch 64, 2,343.75 → 2,400; at 600,000 samples and batch 128, 4,687.5 → 4,800."""
    flat = {"A": {"m": _curve(lambda s: 0.5)}}
    assert scratch_budget.MIN_SAMPLES == 150_000
    default = scratch_budget.budget(flat, 128, ITEMS, DELTA)
    assert (default["steps"], default["samples"]) == (1200, 153_600)
    assert [c["step"] for c in default["checks"]] == list(range(1200, 6401, 400))
    assert all(c["samples"] == c["step"] * 128 for c in default["checks"])
    assert scratch_budget.budget(flat, 64, ITEMS, DELTA)["steps"] == 2400
    assert scratch_budget.budget(flat, 128, ITEMS, DELTA, min_samples=600_000)["steps"] == 4800
    # exactly at the bound counts: 1,600 × 128 = 204,800
    assert scratch_budget.budget(flat, 128, ITEMS, DELTA, min_samples=204_800)["steps"] == 1600


def test_a_curve_that_dips_once_and_climbs_again_has_not_flattened():
    dipped = scratch_budget.budget({"A": {"m": _curve(_dip)}}, 128, ITEMS, DELTA)
    by_step = {c["step"]: c["flat"] for c in dipped["checks"]}
    assert by_step[2800] is True and by_step[3200] is False  # the dip reads flat, alone
    assert dipped["steps"] is None
    # without the persistence rule the dip's own step would have been the budget
    assert (
        scratch_budget.budget({"A": {"m": _curve(_dip)}}, 128, ITEMS, DELTA, persist=0)["steps"]
        == 2800
    )


def test_a_flat_step_too_near_the_probe_s_end_is_not_a_budget():
    """Cut at 2,800, the knee-1,600 curve is flat at 2,400 and 2,800 only: 2,400 is followed
    by one validated step, not :data:`PERSIST` (2), so there is no budget; asking one later
    step gives 2,400."""
    assert scratch_budget.PERSIST == 2
    short = {"A": {"m": _curve(_knee(1600), range(0, 2801, 400))}}
    assert _flat_steps(scratch_budget.budget(short, 128, ITEMS, DELTA)) == [2400, 2800]
    assert scratch_budget.budget(short, 128, ITEMS, DELTA)["steps"] is None
    assert scratch_budget.budget(short, 128, ITEMS, DELTA, persist=1)["steps"] == 2400
    assert scratch_budget.budget(short, 128, ITEMS, DELTA, persist=2 + 1)["steps"] is None


# --------------------------------------------------------------------------- the plan

# where two configs of the same recipe may differ: how long they train and how often they log,
# checkpoint and validate (on which metrics), and where they keep their files
SCHEDULE = {
    "train.steps", "train.log_every", "train.diag_every", "train.ckpt_every", "train.val_every",
    "train.val_metrics", "data.cache_dir",
}  # fmt: skip
SEED = {"train.seed", "data.seed"}  # the batch order, and the world of the seed's base


def _argent_arms(scale_name: str = "full") -> list[design.Run]:
    return [r for r in design.plan(scale_name, ("argent",), searched=False) if r.stage == ""]


def test_every_argent_arm_trains_from_random_weights_at_one_budget():
    """Every ARGENT arm of the full plan: from random weights (curvature from 1, learned; its
    BatchNorm statistics trained), validated ``scratch_val_points`` times on the learning
    targets' metrics and the parents' shares, its parents counted and evaluated on
    ``argent_eval_size`` test samples (HiMo's runs on the scale's ``eval_size``); one
    (steps, batch) for all, the scale's; the ablations and the size pair at the smaller model;
    each on its ``arm_seeds``; no trend or schedule check of ARGENT's."""
    scale, runs = SCALES["full"], _argent_arms()
    assert {r.variant for r in runs} == set(ARGENT_MAIN_ARMS) | set(ARGENT_ABLATION_ARMS)
    for run in runs:
        model, train = run.config["model"], run.config["train"]
        assert model["init"] == "random", run.name
        assert model.get("batchnorm", "train") == "train"  # no trained statistics to keep
        assert model.get("curv_init", 1.0) == 1.0 and model.get("learn_curv", True)
        # validated scratch_val_points times, on the learning targets and the parents
        assert train["steps"] // train["val_every"] == scale.scratch_val_points
        assert {"zeroshot_L1", "short_i2t_r1", "inside_short", "inside_box_text",
                "inside_box_image"} <= set(train["val_metrics"])  # fmt: skip
        assert run.parents and run.eval_size == scale.argent_eval_size > scale.eval_size
    budgets = {(r.config["train"]["steps"], r.config["train"]["batch_size"]) for r in runs}
    assert budgets == {(scale.scratch_steps, scale.scratch_batch)}
    # the ablations (Table 3) and the size pair at the smaller model, the main arms at the study's
    for run in runs:
        smaller = run.variant in ARGENT_ABLATION_ARMS or run.variant.endswith(SMALLER)
        expected = bases.MODEL_SMALLER if smaller else bases.MODEL
        assert run.config["model"]["name"] == expected, run.name
    assert all(r.variant.startswith(f"ARGENT{SMALLER}, ") for r in runs
               if r.variant in ARGENT_ABLATION_ARMS)  # fmt: skip
    # each on the seeds the scale gives it, and nothing else of ARGENT's is trained
    seeds = defaultdict(set)
    for run in runs:
        seeds[run.variant].add(run.seed)
    assert {v: tuple(sorted(s)) for v, s in seeds.items()} == {v: scale.arm_seeds(v) for v in seeds}
    planned = design.plan("full", searched=False)
    others = [r for r in planned if r.study == "argent"]
    assert {r.stage for r in others} == {"", "references"}  # no trend, no schedule check
    assert {r.eval_size for r in planned if r.study == "himo"} == {0}  # the scale's eval_size


def test_each_argent_run_trains_on_the_world_of_its_seed_s_base(tmp_path):
    """The world a base of the run's model was pre-trained on (``study.plan.bases.base_config``:
    base ``b`` on world seed ``b``, 200,000 scenes with twins, short captions), base
    ``Scale.base_of(seed)``; only where the cache lives differs."""
    scale = SCALES["full"]
    for run in _argent_arms():
        base = bases.base_config(
            run.config["model"]["name"], scale.base_of(run.seed), bases.RECIPES["full"],
            tmp_path, "hyperbolic",
        )  # fmt: skip
        data = {k: v for k, v in run.config["data"].items() if k != "cache_dir"}
        assert data == {k: v for k, v in base["data"].items() if k != "cache_dir"}, run.name
        assert data["seed"] == run.seed % 2 and data["twins"] and data["size"] == 200_000


def test_each_argent_config_is_the_budget_probe_s_but_for_seed_schedule_and_its_own_change(
    tmp_path,
):
    """HyCoCLIP's and ARGENT's arms against the probe's runs of the same objective
    (``scripts/scratch_budget_probe.py``, world 0 seed 0), MERU's against the hyperbolic base's
    own config (MERU's objective, which the probe builds on): the same recipe (optimiser,
    warm-up, weight decay, batch, world, validation size, loss), differing only in the seed,
    the schedule and validation, the model (the smaller one) and an ablation's one change."""
    scale = SCALES["full"]
    reference = {
        "HyCoCLIP": probe.probe_config("HyCoCLIP", tmp_path),
        "ARGENT": probe.probe_config("ARGENT", tmp_path),
        "MERU": bases.base_config(
            bases.MODEL, probe.WORLD, bases.RECIPES["full"], tmp_path, "hyperbolic"
        ),
    }
    assert reference["MERU"]["method"] == "meru" and reference["MERU"]["train"]["seed"] == 0
    changes = {"ARGENT, smaller model, no weights": {"loss.weights"},
               "ARGENT, smaller model, weights on all pairs": {"loss.weights"},
               "ARGENT, smaller model, no regularizer": {"loss.regularize"},
               "ARGENT, smaller model, Ent": {"loss.entailment"}}  # fmt: skip
    for run in _argent_arms():
        objective = run.variant.split(",")[0]
        allowed = SCHEDULE | changes.get(run.variant, set())
        allowed |= {"model.name"} if SMALLER in run.variant else set()
        allowed |= SEED if run.seed != probe.SEED else set()
        found = _differences(run.config, reference[objective])
        assert found <= allowed, (run.name, sorted(found - allowed))
        assert changes.get(run.variant, set()) <= found  # the ablation's change is there
        assert run.config["train"]["seed"] == run.seed
        assert run.config["train"]["steps"] == scale.scratch_steps


def test_the_untrained_argent_reference_is_an_arm_s_start():
    """The untrained model of the ARGENT study: ARGENT's config at 0 steps, evaluated as it
    starts (random weights)."""
    (untrained,) = [
        r for r in design.plan("full", ("argent",), searched=False) if r.variant == UNTRAINED
    ]
    assert untrained.stage == "references" and untrained.config["train"]["steps"] == 0
    assert untrained.config["model"] == {"name": bases.MODEL, "init": "random"}
    assert untrained.config["method"] == "argent"


def test_from_scratch_names_exactly_the_planned_runs_that_train_from_random_weights():
    for scale_name in ("smoke", "full"):
        for run in design.plan(scale_name, searched=False):
            trained_from_random = (
                run.config["model"]["init"] == "random" and run.config["train"]["steps"] > 0
            )
            assert from_scratch(run.variant) is trained_from_random, (scale_name, run.name)
    assert set(ARGENT_MAIN_ARMS) | set(ARGENT_ABLATION_ARMS) == set(design.ARGENT_ARMS)
    for variant in ("MoLo", "pretrain, hyperbolic (short captions)", UNTRAINED,
                    "ARGENT, κ = 0.1", "ARGENT, from scratch", "ARGENT, 2× steps"):  # fmt: skip
        assert not from_scratch(variant), variant
    # every ARGENT claim compares two arms from scratch; no HiMo claim does
    for claim in CLAIMS:
        scratch = (from_scratch(claim.variant), from_scratch(claim.baseline))
        assert scratch == ((True, True) if claim.study == "argent" else (False, False)), claim.id


# --------------------------------------------------------------------------- the regime table

ROW = re.compile(
    r"^\| (?P<study>\w+) \| (?P<arm>[^|]+) \| (?P<model>[\w-]+) \| (?P<start>[^|]+) \| "
    r"(?P<size>[\d,]+) scenes(?P<twins> with twins)? \| (?P<steps>[\d,]+) × (?P<batch>\d+) "
    r"\((?P<samples>[\d,]+)\) \| (?P<count>\d+) \((?P<seeds>[\d, ]+)\) \|$"
)


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.parametrize("scale_name", ["smoke", "full"])
def test_the_regime_table_has_one_row_per_trained_arm_read_from_the_plan(scale_name):
    lines = design.regime_table(scale_name).splitlines()
    assert lines[0].startswith("| study | arm |") and lines[1].startswith("|---")
    arms = defaultdict(list)
    for run in design.plan(scale_name, searched=False):
        if run.stage == "":
            arms[(run.study, run.variant)].append(run)
    rows = {}
    for line in lines[2:]:
        found = ROW.match(line)
        assert found, line
        rows[(found["study"], found["arm"])] = found
    assert set(rows) == set(arms)
    for key, runs in arms.items():
        row = rows[key]
        seeds = sorted(r.seed for r in runs)
        assert int(row["count"]) == len(seeds) and row["seeds"] == ", ".join(map(str, seeds))
        for run in runs:  # every seed of an arm trains in the regime its row states
            config = run.config
            assert row["model"] == config["model"]["name"]
            random = config["model"]["init"] == "random"
            assert row["start"] == ("random weights" if random else "a pre-trained base")
            assert _number(row["size"]) == config["data"]["size"]
            assert bool(row["twins"]) == bool(config["data"].get("twins"))
            steps, batch = config["train"]["steps"], config["train"]["batch_size"]
            assert (_number(row["steps"]), int(row["batch"])) == (steps, batch)
            assert _number(row["samples"]) == steps * batch
        assert (row["start"] == "random weights") is (key[0] == "argent")


# --------------------------------------------------------------------------- curvature


def _curvature_run(root, variant: str, seed: int, ends: list[float], curv_init=None):
    """A run folder of the ARGENT study at the full scale whose log records the curvature
    ``ends`` over training (and a loss record without it), with its ``run.done``."""
    folder = root / "full" / "argent" / paths.slug(variant) / f"seed{seed}"
    folder.mkdir(parents=True)
    records = [{"step": 10 * (i + 1), "loss": 1.0, "curv": c} for i, c in enumerate(ends)]
    records.append({"step": 10 * len(ends) + 5, "loss": 0.9})
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    model = {"name": bases.MODEL, "init": "random"}
    if curv_init is not None:
        model["curv_init"] = curv_init
    config = {"method": "argent", "model": model, "train": {"batch_size": 128, "steps": 100}}
    done = {"run": f"argent/{variant}/seed{seed}", "study": "argent", "variant": variant,
            "seed": seed, "config": config, "feature_std": 0.1}  # fmt: skip
    (folder / "run.done").write_text(json.dumps(done))


def test_a_claim_records_where_its_arms_curvature_ends_and_whether_at_the_lower_clamp(
    tmp_path, monkeypatch
):
    """The last logged curvature of each arm on each seed; the lower clamp is the start over
    ``CURV_RANGE`` (10): 0.1 from MERU's 1, 0.2 from a start at 2; "at the clamp" within a
    thousandth of it, for every run of both arms."""
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    claim = next(c for c in CLAIMS if c.id == "argent-aperture-vs-meru")
    _curvature_run(tmp_path, "ARGENT", 0, [1.0, 0.4, 0.1])
    _curvature_run(tmp_path, "ARGENT", 1, [0.9, 0.10005])
    _curvature_run(tmp_path, "MERU", 0, [0.5, 0.1])
    _curvature_run(tmp_path, "MERU", 1, [0.3, 0.1])
    ends = regime.end_curvatures("full", claim, [0, 1])
    assert ends == {"variant": [0.1, 0.10005], "baseline": [0.1, 0.1], "lower_clamp": 0.1,
                    "at_clamp": True}  # fmt: skip
    assert regime.end_curvatures("full", claim, [0])["variant"] == [0.1]  # the seeds asked
    # one run ending above the clamp (0.1002: beyond a thousandth of 0.1)
    (tmp_path / "full" / "argent" / "meru" / "seed1" / "log.jsonl").write_text(
        json.dumps({"step": 10, "loss": 1.0, "curv": 0.1002}) + "\n"
    )
    assert regime.end_curvatures("full", claim, [0, 1])["at_clamp"] is False


def test_the_lower_clamp_follows_the_variant_s_start_and_a_euclidean_claim_has_none(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    claim = next(c for c in CLAIMS if c.id == "argent-zs-l3-vs-hycoclip")
    _curvature_run(tmp_path, "ARGENT", 0, [2.0, 0.2], curv_init=2.0)
    _curvature_run(tmp_path, "HyCoCLIP", 0, [1.0, 0.5])
    ends = regime.end_curvatures("full", claim, [0])
    assert ends["lower_clamp"] == pytest.approx(2.0 / 10) and ends["at_clamp"] is False
    assert (ends["variant"], ends["baseline"]) == ([0.2], [0.5])
    himo = next(c for c in CLAIMS if c.study == "himo")
    for variant in (himo.variant, himo.baseline):
        folder = tmp_path / "full" / "himo" / paths.slug(variant) / "seed0"
        folder.mkdir(parents=True)
        (folder / "log.jsonl").write_text(json.dumps({"step": 5, "loss": 1.0}) + "\n")
    assert regime.end_curvatures("full", himo, [0]) is None  # no curvature logged: none
    assert CURV_RANGE == 10.0  # the clamp the hand values above read
