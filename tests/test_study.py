"""The study: repository-relative records, matched controls (compared runs differ in exactly
the thing under test), and claims decided from results files (collapsed runs left out)."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil

import numpy as np
import pytest
from scipy import stats

from paperlib.environment import environment, package_versions
from paperlib.provenance import RunRecordError, run_provenance
from paperlib.study import paths
from paperlib.study.decide import claim_record, decide, premise, seed_pairs, trend_effects
from paperlib.study.decide.verdicts import MEANINGS, VERDICTS
from paperlib.study.plan import bases, claims, design, scales
from paperlib.study.plan.claims import CLAIMS
from paperlib.study.plan.smallest_effect import PublishedEffect, translate
from paperlib.study.report import decided, reproduction
from paperlib.study.results import reader, validity
from paperlib.study.run import execution
from paperlib.train import trained_with_other_config
from tests.engine_helpers import tiny_config
from tests.recipe_helpers import toy_repository, write_picks

COMMITTED_SMOKE = paths.REPO_ROOT / "results" / "smoke"


@pytest.fixture
def picks(tmp_path, monkeypatch):
    """Recipe picks for both scales (the grid's first point for every arm), so they plan."""
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path / "results"))
    for scale_name in scales.SCALES:
        write_picks(scale_name)


def test_repo_relative_inside_and_outside(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    monkeypatch.setattr(paths, "REPO_ROOT", repo.resolve())
    assert paths.repo_relative(repo / "runs" / "a" / "last.pt") == "runs/a/last.pt"
    outside = tmp_path / "elsewhere" / "last.pt"
    assert paths.repo_relative(outside) == str(outside)


@pytest.mark.usefixtures("picks")
def test_portable_config_rewrites_run_folder_init_and_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path.resolve())
    plan = design.plan("smoke", ("himo",))
    finetune = next(r for r in plan if r.variant == "MoLo")
    config = json.loads(json.dumps(finetune.config))
    config["model"]["init"] = str(tmp_path / "results/bases/b.pt")
    config["train"]["output_dir"] = str(tmp_path / "runs" / "x")
    config["data"]["cache_dir"] = str(tmp_path / "runs" / "cache")
    recorded = paths.portable_config(config)
    assert recorded["train"]["output_dir"] == "runs/x"
    assert recorded["model"]["init"] == "results/bases/b.pt"
    assert recorded["data"]["cache_dir"] == "runs/cache"
    assert config["train"]["output_dir"] == str(tmp_path / "runs" / "x")  # input untouched
    untrained = next(r for r in plan if r.variant == claims.UNTRAINED)
    assert paths.portable_config(untrained.config)["model"]["init"] == "random"


def _differences(a: dict, b: dict) -> set[str]:
    """Dotted keys whose values differ between two configs (checkpoint bookkeeping left out)."""
    keys = set()
    for section in set(a) | set(b):
        x, y = a.get(section), b.get(section)
        if isinstance(x, dict) and isinstance(y, dict):
            keys |= {f"{section}.{k}" for k in set(x) | set(y) if x.get(k) != y.get(k)}
        elif x != y:
            keys.add(section)
    return keys - {
        "train.output_dir",
    }  # where checkpoints go, not how it trains


@pytest.mark.usefixtures("picks")
@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_compared_runs_differ_only_in_the_thing_under_test(scale):
    runs = {(r.variant, r.seed): r for r in design.plan(scale)}
    from paperlib.engine.config import build_config

    def resolved(variant, seed):  # with each method's paper defaults applied
        return json.loads(
            json.dumps(
                build_config(runs[(variant, seed)].config).__dict__, default=lambda o: o.__dict__
            )
        )

    seed = scales.SCALES[scale].sweep_seeds[0]
    assert _differences(resolved("MoLo", seed), resolved("InfoNCE (λ=0)", seed)) == {"loss.lam"}
    molo, long_clip = resolved("MoLo", seed), resolved("Long-CLIP", seed)
    # the method and its own loss section (each method's loss dataclass has its own fields):
    # every field the two losses share, and every other section, is the same
    shared = set(molo["loss"]) & set(long_clip["loss"])
    assert (
        "method"
        in _differences(molo, long_clip)
        <= {"method"} | {f"loss.{key}" for key in set(molo["loss"]) ^ set(long_clip["loss"])}
    )
    assert {"short_weight", "pcm_dim"} <= set(long_clip["loss"]) - shared
    assert {"tau", "lam"} <= set(molo["loss"]) - shared
    # ARGENT's arms, all from random weights at one recipe: Table 3's ablations (at the smaller
    # model) each change one thing of ARGENT's at that model; ARGENT and HyCoCLIP differ in
    # their objectives alone, MERU (no boxes) in its objective
    small = f"ARGENT{claims.SMALLER}"
    for change in ("no weights", "weights on all pairs", "no regularizer", "Ent"):
        variant = f"{small}, {change}"
        assert len(_differences(resolved(small, seed), resolved(variant, seed))) == 1, variant
    loss_fields = _differences(resolved("ARGENT", seed), resolved("HyCoCLIP", seed))
    assert "method" in loss_fields
    assert loss_fields <= {
        "method",
        "loss.gamma1",
        "loss.gamma2",
        "loss.weights",
        "loss.regularize",
        "loss.entailment",
        "loss.adaent_beta",
        "loss.adaent_placement",
        "loss.adaent_normalize",
        "loss.detach_weight",
        "loss.entail_weight",
    }
    scratch = {v: resolved(v, seed) for v in ("MERU", "HyCoCLIP", "ARGENT")}
    for variant in ("HyCoCLIP", "ARGENT"):
        own = set(scratch["MERU"]["loss"]) ^ set(scratch[variant]["loss"])  # each loss's fields
        allowed = {"method"} | {f"loss.{key}" for key in own} | loss_fields
        assert _differences(scratch["MERU"], scratch[variant]) <= allowed, variant
    for variant in design.ARGENT_ARMS:  # MERU's initialisation, from random weights
        model = resolved(variant, seed)["model"]
        assert model["init"] == "random" and model["alpha_rule"] == "embed-dim", variant
    batch = _differences(resolved("MoLo, double batch", seed), resolved("MoLo, half batch", seed))
    reporting = {"train.ckpt_every", "train.val_every", "train.diag_every"}  # every fifth
    warmup = {"optim.warmup_steps"}  # the same fraction of each schedule (study.plan.recipe)
    assert (
        {"train.batch_size", "train.steps"}
        <= batch
        <= {"train.batch_size", "train.steps"} | reporting | warmup
    )
    double, half = (
        runs[("MoLo, double batch", seed)].config,
        runs[("MoLo, half batch", seed)].config,
    )
    samples = [c["train"]["steps"] * c["train"]["batch_size"] for c in (double, half)]
    assert samples[0] == samples[1]  # the same samples seen, as the paper keeps its epochs
    scope = ("MoLo, 2 ranks, global HiDe", "MoLo, 2 ranks, HiDe per rank")
    assert _differences(resolved(scope[0], seed), resolved(scope[1], seed)) == {"loss.scope"}
    assert [runs[(v, seed)].nproc for v in scope] == [2, 2]
    scale_ = scales.SCALES[scale]
    for run in runs.values():  # every HiMo run starts from its seed's base of its model, every
        smaller = claims.SMALLER in run.variant  # ARGENT arm from random weights
        model = bases.MODEL_SMALLER if smaller else bases.MODEL
        assert run.config["model"]["name"] == model, run.name
        if run.variant in design.ARGENT_ARMS or run.variant == claims.UNTRAINED:
            assert run.config["model"]["init"] == "random", run.name
        else:
            base = run.seed if design.is_base_reference(run.variant) else scale_.base_of(run.seed)
            geometry = "hyperbolic" if run.study == "argent" else "euclidean"
            expected = paths.repo_relative(bases.base_path(model, base, bases.bases_dir(geometry)))
            assert paths.portable_config(run.config)["model"]["init"] == expected
    # the model-size arm: the same pair at the smaller size (ARGENT's: the model alone differs;
    # the bases as they are: the model and its base)
    for variant in ("HyCoCLIP", "ARGENT"):
        sized = variant + claims.SMALLER
        assert _differences(resolved(variant, seed), resolved(sized, seed)) == {"model.name"}
    for variant in (design.PRETRAIN, design.PRETRAIN_HYPERBOLIC):
        sized = variant + claims.SMALLER
        assert _differences(resolved(variant, seed), resolved(sized, seed)) == {
            "model.name",
            "model.init",
        }
    # no run keeps frozen BatchNorm statistics: HiMo's fine-tunes train theirs, ARGENT's arms
    # have no trained statistics to keep, and the references only evaluate
    for (variant, _), run in runs.items():
        assert run.config["model"].get("batchnorm", "train") == "train", variant
    assert claims.EUCLIDEAN_CLIP == design.PRETRAIN and claims.SMALLER == claims.SMALLER


@pytest.mark.usefixtures("picks")
def test_every_claim_compares_variants_the_full_study_runs():
    plan = design.plan("full")
    seeds = {}
    for run in plan:
        seeds.setdefault((run.study, run.variant), set()).add(run.seed)
    full = scales.SCALES["full"]
    assert len(full.bases) >= 2 and len(full.sweep_seeds) >= len(full.bases)
    # every base's mean effect (the bases-agree check) rests on more than one headline fine-tune
    assert all(sum(full.base_of(s) == b for s in full.seeds) >= 2 for b in full.bases)
    for claim in CLAIMS:
        for variant in (claim.variant, claim.baseline):
            have = seeds.get((claim.study, variant), set())
            need = seed_pairs.expected_seeds(claim, full)
            assert set(need) <= have, (claim.id, variant, sorted(have))
            assert {full.base_of(s) for s in need} == set(full.bases)  # every base fine-tuned
    assert len(CLAIMS) >= 30


def _fake_run(root, study, variant, seed, items, losses, feature_std=0.2, curve=None):
    folder = root / "results" / "smoke" / study / paths.slug(variant) / f"seed{seed}"
    folder.mkdir(parents=True)
    np.savez(folder / "items.npz", **items)
    records = [{"step": i + 1, "loss": v, "contrastive": v} for i, v in enumerate(losses)]
    for step, value in curve or []:
        records.append(
            {"step": step, "val": {"short_i2t_r1": value, "zeroshot_L1": value}, "val_size": 500}
        )
    (folder / "log.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    config = {"method": "hycoclip", "train": {"batch_size": 64}}
    (folder / "run.done").write_text(
        json.dumps(
            {
                "run": f"{study}/{variant}/seed{seed}",
                "variant": variant,
                "study": study,
                "seed": seed,
                "config": config,
                "feature_std": feature_std,
            }
        )
    )


ITEMS = (
    "world-zeroshot/L3_correct",
    "world-short/t2i_hit1",
    "world-short/i2t_hit1",
    "world-hierarchy/pep_auc_all",
    "world-hierarchy/pep_auc_finest",
    "aperture/parents_inside_radius",
    "world-zeroshot/L1_correct",
)


def _toy_study(tmp_path, monkeypatch, seeds=8, collapsed=(), rising=(), short=0.9):
    """ARGENT vs HyCoCLIP on ``seeds`` seeds of a toy scale (2 bases; both arms on every seed;
    every run asked for a plateau):
    ARGENT better on L3; both arms, trained from random weights, at zero-shot L1 0.9 and short
    R@1 ``short`` (the learning targets: 0.6 and 0.8)."""
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path)
    toy = scales.SCALES["full"]
    # ARGENT's runs asked for a plateau too (the full scale asks it of HiMo's alone), so that a
    # rising run is left out
    every = {**toy.__dict__, "seeds": tuple(range(seeds)), "sweep_arm_seeds": {},
             "require_plateau": ("himo", "argent")}  # fmt: skip
    monkeypatch.setitem(scales.SCALES, "smoke", toy.__class__(**every))
    pair = tuple(c for c in CLAIMS if (c.variant, c.baseline) == ("ARGENT", "HyCoCLIP"))
    for module in (decide, claim_record, trend_effects):  # where the decision reads the claims
        monkeypatch.setattr(module, "CLAIMS", pair)
    rng = np.random.default_rng(0)
    learned, flat = [3.0 - 0.1 * i for i in range(20)], [math.log(64)] * 20
    flat_curve = [(0, 0.1), (60, 0.5), (80, 0.5), (100, 0.5)]
    rising_curve = [(0, 0.1), (60, 0.2), (80, 0.35), (100, 0.5)]  # +0.15 a fifth, on a line
    for seed in range(seeds):
        good = {k: rng.random(500) for k in ITEMS}
        base = {k: rng.random(500) for k in ITEMS}
        good["world-zeroshot/L3_correct"] = (rng.random(500) < 0.6).astype(float)
        base["world-zeroshot/L3_correct"] = (rng.random(500) < 0.4).astype(float)
        base["world-short/t2i_hit1"] = (rng.random(500) < 0.001).astype(float)
        for items in (good, base):
            items["world-short/i2t_hit1"] = (rng.random(500) < short).astype(float)
            items["world-zeroshot/L1_correct"] = (rng.random(500) < 0.9).astype(float)
        _fake_run(
            tmp_path,
            "argent",
            "ARGENT",
            seed,
            good,
            learned,
            curve=rising_curve if seed in rising else flat_curve,
        )
        _fake_run(
            tmp_path,
            "argent",
            "HyCoCLIP",
            seed,
            base,
            flat if seed in collapsed else learned,
            curve=flat_curve,
        )
    return toy


def test_decide_gives_verdicts_and_leaves_collapsed_and_unconverged_runs_out(tmp_path, monkeypatch):
    _toy_study(tmp_path, monkeypatch, collapsed=(7,), rising=(6,))
    report = decide.decide("smoke", partial=True)
    by_id = {c["claim"]: c for c in report["claims"]}
    zs = by_id["argent-zs-l3-vs-hycoclip"]
    assert zs["verdict"] == "reproduces" and zs["seeds"] == [0, 1, 2, 3, 4, 5]
    assert zs["runs_total"] == 8 and len(zs["invalid_runs"]) == 2
    assert any("ln B" in r for r in zs["invalid_runs"])
    assert any("still rising" in r for r in zs["invalid_runs"])
    low, high = zs["interval"]
    assert low < zs["effect"] < high and low > 0
    raw = zs["interval_raw"]
    assert low <= raw[0] and high >= raw[1]  # the adjusted interval is never narrower
    assert 0 < zs["p_raw"] <= zs["p_adjusted"] and zs["family_size"] >= 1
    assert set(zs["per_base"]) == {"0", "1"}
    assert all(b["effect"] > 0 and b["seeds"] == 3 for b in zs["per_base"].values())
    # ARGENT's 17: Table 2's 4, the 2 aperture claims, Table 3's 5, the 4 size claims, Table 1's 2
    assert zs["family_size"] == claims.FAMILY_SIZES["ARGENT"] == 4 + 2 + 5 + 4 + 2
    assert zs["seeds_kept"]["pairs"] == 6
    assert zs["measured"]["untrained"] is None or zs["measured"]["untrained"] >= 0
    # δ by hand: ARGENT S 38.8 against HyCoCLIP S 37.3 on ImageNet top-1 (ARGENT Table 2)
    # closes 1.5 of HyCoCLIP's 62.7 points to 100; the toy study has no base and no untrained
    # model, so the reference is the metric's far end, 0, and its headroom the whole range
    share = 1.5 / 62.7
    assert zs["smallest_rule"]["reference_source"] == "the far end of the metric's range"
    assert zs["smallest_rule"]["share"] == pytest.approx(share)
    assert zs["paper_effect_here"] == pytest.approx(share * 1.0)
    assert zs["smallest"] == pytest.approx(min(share / 2, 1 / 3))
    assert zs["paper_effect"] == pytest.approx(0.015)
    assert zs["guard"]["threshold"] == 0.125 and zs["guard"]["failed"] is None
    assert by_id["argent-t2i-vs-hycoclip"]["verdict"] == "untestable"  # baseline at chance
    # counted in, the rising run (seed 6) adds its pair; the collapsed one (seed 7) stays out
    assert zs["without_exclusions"]["seeds"] == [0, 1, 2, 3, 4, 5, 6]
    assert zs["without_exclusions"]["runs_added"] == 1
    # the design note: the planned 4 + 4 seeds at the 3 + 3 valid ones' within-base spread
    note = zs["design_note"]
    assert note["planned_per_base"] == {"0": 4, "1": 4} and note["valid_per_base"] == {
        "0": 3,
        "1": 3,
    }
    per_seed = np.asarray(zs["per_seed"])
    within = sum(((g - g.mean()) ** 2).sum() for g in (per_seed[0::2], per_seed[1::2])) / 4
    assert note["within_variance"] == pytest.approx(within)
    # the claim's level in the error statement: 80 % of 0.05 over the toy's 5 declared claims
    # (ARGENT against HyCoCLIP: Table 2's four and the aperture claim)
    assert len(decide.CLAIMS) == 5 and zs["interval_level"] == pytest.approx(1 - 0.04 / 5)
    level = 0.04 / 5 / 2
    t, z = stats.t.isf(level, 6), stats.norm.isf(level)
    expected = math.sqrt(t * t * within * (1 / 4 + 1 / 4) / 4 + z * z * zs["item_term"])
    assert note["half_width"] == pytest.approx(expected)
    assert note["item_floor"] == pytest.approx(z * math.sqrt(zs["item_term"]))
    # the displayed interval at that level, from the estimate's two variance parts, t with the
    # 3 + 3 valid seeds' 4 within-base degrees of freedom
    assert zs["seed_df"] == 4
    t_valid = stats.t.isf(level, 4)
    shown = math.sqrt(t_valid * t_valid * zs["seed_term"] + z * z * zs["item_term"])
    assert zs["interval"] == pytest.approx([zs["effect"] - shown, zs["effect"] + shown])
    assert saved_statement(tmp_path)["split"][0]["count"] == 5
    saved = json.loads((tmp_path / "results" / "smoke" / "claims.json").read_text())
    assert [c["claim"] for c in saved["claims"]] == list(by_id)
    assert len(saved["excluded_runs"]) == 2 and len(saved["unconverged_runs"]) == 1


def saved_statement(root) -> dict:
    """The error statement of the toy study's written claims.json."""
    return json.loads((root / "results" / "smoke" / "claims.json").read_text())["error_control"]


def test_a_guarded_metric_at_chance_and_a_headline_claim_short_of_seeds_say_so(
    tmp_path, monkeypatch
):
    """A learned model (short R@1 0.9, above its guard) whose PEP AUC sits at chance (0.5)
    reads untestable; a headline claim that keeps 5 of its 8 seed pairs, fewer than the
    study asks (6), says so in its reason."""
    _toy_study(tmp_path, monkeypatch, collapsed=(7,), rising=(5, 6))
    by_id = {c["claim"]: c for c in decide.decide("smoke", partial=True)["claims"]}
    pep = by_id["argent-pep-vs-hycoclip"]
    assert pep["guard"]["failed"] is None and abs(pep["baseline_value"]["mean"] - 0.5) < 0.05
    assert pep["verdict"] == "untestable" and "of chance (0.5)" in pep["reason"]
    zs = by_id["argent-zs-l3-vs-hycoclip"]
    assert zs["seeds_kept"] == {"variant": 6, "baseline": 7, "pairs": 5, "of": 8, "needed": 6,
                                "met": False}  # fmt: skip
    assert "keeps 5 of 8 seed pairs (the study asks at least 6)" in zs["reason"]
    (tmp_path / "six").mkdir()
    _toy_study(tmp_path / "six", monkeypatch, collapsed=(7,), rising=(6,))
    kept = next(c for c in decide.decide("smoke", partial=True)["claims"]
                if c["claim"] == "argent-zs-l3-vs-hycoclip")  # fmt: skip
    assert kept["seeds_kept"]["met"] and "seed pairs" not in kept["reason"]


def test_arms_from_scratch_below_the_learning_targets_did_not_learn_the_world(
    tmp_path, monkeypatch
):
    """Both arms of the toy trained from random weights; at short R@1 0.7 (below its target,
    0.8) every claim between them records both arms' misses, each arm's mean over the valid
    seeds, and those not untestable on other grounds (text→image retrieval and PEP at chance)
    read "did not learn the world at this budget", L3's among them; at 0.9 none does."""
    _toy_study(tmp_path, monkeypatch, seeds=4, short=0.7)
    by_id = {c["claim"]: c for c in decide.decide("smoke", partial=True)["claims"]}
    for claim in by_id.values():
        learned = claim["learned"]
        assert learned["arms"] == ["ARGENT", "HyCoCLIP"] and learned["met"] is False
        assert [m.split(" world-")[0] for m in learned["missed"]] == ["ARGENT", "HyCoCLIP"]
        assert all("world-short/i2t_hit1" in m for m in learned["missed"])
    verdicts = {c["claim"]: c["verdict"] for c in by_id.values() if c["verdict"] != "untestable"}
    assert "argent-zs-l3-vs-hycoclip" in verdicts
    assert set(verdicts.values()) == {"did not learn the world at this budget"}
    zs = by_id["argent-zs-l3-vs-hycoclip"]
    short = {v: np.mean([reader.read_items("smoke", "argent", v, s)["world-short/i2t_hit1"].mean()
                         for s in zs["seeds"]]) for v in ("ARGENT", "HyCoCLIP")}  # fmt: skip
    assert all(0.6 < m < 0.8 for m in short.values())  # about 0.7, below 0.8
    assert zs["learned"]["missed"][0].startswith(
        f"ARGENT world-short/i2t_hit1 {short['ARGENT']:.3f}"
    )
    (tmp_path / "learned").mkdir()
    _toy_study(tmp_path / "learned", monkeypatch, seeds=4)
    for claim in decide.decide("smoke", partial=True)["claims"]:
        assert claim["learned"]["met"], claim["claim"]
        assert claim["verdict"] != "did not learn the world at this budget"


def test_missing_runs_are_an_error_naming_them_unless_partial(tmp_path, monkeypatch):
    _toy_study(tmp_path, monkeypatch, seeds=8)
    shutil.rmtree(tmp_path / "results" / "smoke" / "argent" / "argent" / "seed3")
    with pytest.raises(validity.MissingRunsError, match="argent/argent/seed3"):
        decide.report("smoke")
    partial = decide.report("smoke", partial=True)
    zs = next(c for c in partial["claims"] if c["claim"] == "argent-zs-l3-vs-hycoclip")
    assert zs["partial"] and "argent/argent/seed3" in zs["missing_runs"] and 3 not in zs["seeds"]
    assert partial["partial"]
    for seed in range(8):  # no run of the variant at all: "not run", not "no valid seed"
        shutil.rmtree(tmp_path / "results" / "smoke" / "argent" / "argent" / f"seed{seed}", True)
    zs = next(
        c
        for c in decide.report("smoke", partial=True)["claims"]
        if c["claim"] == "argent-zs-l3-vs-hycoclip"
    )
    assert zs["verdict"] == "not run yet" and zs["reason"].startswith("not run: 8 planned run")


def test_a_broken_run_record_is_a_named_error(tmp_path, monkeypatch):
    _toy_study(tmp_path, monkeypatch, seeds=2)
    bad = tmp_path / "results" / "smoke" / "argent" / "argent" / "seed1" / "run.done"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"seed1/run.done: not a study run record"):
        decide.report("smoke", partial=True)


def _decided(effect, per_base, difference=None, p_raw=1e-6, p_eq=0.5, seed_df=6, **more):
    """A decided ARGENT claim record as :func:`claim_record.decide_claim` leaves it: δ = 0.01, the
    paper's effect here 0.05 (not in the paper's units), every interval ±0.004 about its
    effect, the arms differing on 30 % of the items and the premise held."""
    return {
        "family": "ARGENT", "better": "higher", "smallest": 0.01, "seeds": list(range(8)),
        "smallest_rule": {"translated": 0.05}, "paper_units": False, "paper_effect": None,
        "effect": effect, "interval": [effect - 0.004, effect + 0.004], "p_raw": p_raw,
        "p_equivalence_raw": p_eq, "seed_df": seed_df, "disagreement": {"share": 0.3},
        "premise": {"held": True, "measured": 0.5},
        "per_base": {b: {"effect": e, "seeds": 4, "interval": [e - 0.004, e + 0.004]}
                     for b, e in per_base.items()},
        "base_difference": None if difference is None else {
            "bases": ["0", "1"], "effect": sum(difference) / 2, "interval": list(difference)},
        **more,
    }  # fmt: skip


def test_the_family_counts_every_declared_claim_and_each_label_reads_the_interval():
    """Holm runs over all 17 declared ARGENT claims (those not given count as p = 1) and is
    reported beside the labels; a claim without an interval enters with p = 1; the labels read
    the intervals: the bases split only where their difference's interval lies beyond ±δ, the
    arms are near-copies below 2 % of items apart, a premise that fails is not decided."""
    small = _decided(0.002, {"0": 0.002, "1": 0.002}, (-0.004, 0.004), p_raw=0.01, p_eq=1e-6)
    split = _decided(0.03, {"0": 0.09, "1": -0.03}, (0.10, 0.14))
    agree = _decided(0.05, {"0": 0.06, "1": 0.04}, (-0.005, 0.045))  # differs, not beyond δ
    weak = _decided(0.05, {"0": 0.05}, p_raw=1e-9, seed_df=0)
    copies = _decided(0.05, {"0": 0.05, "1": 0.05}, (-0.01, 0.01), disagreement={"share": 0.015})
    premise = {"held": False, "measured": 95.7, "paper": 35.0, "reason": "no room"}
    failing = _decided(-0.03, {"0": -0.03, "1": -0.03}, (-0.01, 0.01), premise=premise)
    out = decide.adjust_family([small, split, agree, weak, copies, failing])
    assert all(r["family_size"] == 17 for r in out)
    small, split, agree, weak, copies, failing = out
    # Holm over 17 by hand: four p = 1e-6 lead (17e-6 each), then 0.01 at rank 5 (13 × 0.01)
    assert small["p_adjusted"] == pytest.approx(0.13)
    assert split["p_adjusted"] == pytest.approx(17e-6) == failing["p_adjusted"]
    assert small["p_equivalence_adjusted"] == pytest.approx(17 * 1e-6)
    assert small["verdict"] == "negligible"  # [−0.002, +0.006] inside ±0.01
    assert split["verdict"] == "differs between the two bases"
    # base 0's [+0.086, +0.094] beyond +δ; base 1's [−0.034, −0.026] beyond −δ
    assert split["verdict_per_base"] == {"0": "reproduces", "1": "contradicts"}
    assert (
        "base 0's effect less base 1's is +0.12 [+0.1, +0.14], beyond ±δ = ±0.01"
        in (split["reason"])
    )
    assert agree["verdict"] == "reproduces" and agree["verdict_per_base"] is None
    assert weak["verdict"] == "underpowered" and weak["p_adjusted"] == 1.0
    assert copies["verdict"] == "the arms are near-copies" and "1.50%" in copies["reason"]
    assert failing["verdict"] == "premise fails here"
    assert failing["reason"].startswith(
        "premise fails here (95.7 here vs 35 in the paper): no room"
    )
    assert "[-0.034, -0.026] lies beyond −δ" in failing["reason"]  # what the interval shows
    with pytest.raises(ValueError, match="one declared family"):
        decide.adjust_family([small, {**split, "family": "HiMo-CLIP"}])


def test_train_distributed_runs_two_ranks_and_names_a_failed_run(tmp_path):
    config = tiny_config(
        "himo", tmp_path / "ddp", train={"steps": 2, "batch_size": 8}, data={"twins": True}
    )
    execution.train_distributed(config, 2, "himo/probe/seed0")
    log = [json.loads(x) for x in (tmp_path / "ddp" / "log.jsonl").read_text().splitlines()]
    assert log[-1] == {"step": 2, "status": "finished"}
    assert all(r["cpu_seconds"] > 0 for r in log if "loss" in r)
    broken = tiny_config(
        "himo", tmp_path / "broken", train={"steps": 2, "batch_size": 6}, data={"twins": True}
    )  # 3 per rank cannot hold twin pairs
    with pytest.raises(RuntimeError, match=r"himo/broken/seed0: torchrun on 2 processes failed"):
        execution.train_distributed(broken, 2, "himo/broken/seed0")


@pytest.mark.usefixtures("picks")
def test_a_finished_run_is_skipped_and_a_changed_config_or_base_runs_again(tmp_path, monkeypatch):
    bases = toy_repository(tmp_path, monkeypatch)
    run = next(r for r in design.plan("smoke") if r.variant == "MoLo")  # from its base
    target = design.run_target(run, "smoke")
    target.mkdir(parents=True)
    record = _current_record(run)
    (target / "run.done").write_text(json.dumps(record))
    assert execution.finished(run, "smoke")
    monkeypatch.setattr(execution, "train_run", lambda config: pytest.fail("trained again"))
    assert execution.execute(run, "smoke") == record  # skipped: nothing trains
    (bases / f"{design.MODEL}-base0.pt").write_bytes(b"other weights")  # MoLo's: Euclidean
    assert not execution.finished(run, "smoke")  # another base: the fine-tune must run again
    changed = json.loads(json.dumps(run.config))
    changed["optim"]["lr"] = 0.123
    (target / "run.done").write_text(
        json.dumps({**record, "config": paths.portable_config(changed)})
    )
    assert not execution.finished(run, "smoke")
    recorded = json.loads((target / "run.done").read_text())
    assert execution.record_differences(recorded, run) == ["config.optim.lr", "init_sha256"]
    (bases / f"{design.MODEL}-base0.pt").unlink()
    with pytest.raises(FileNotFoundError, match="make pretrain"):
        execution.init_checksum(run.config)


def _current_record(run) -> dict:
    """A ``run.done`` record of ``run`` as this checkout would write it (no timings)."""
    return {
        "run": run.name,
        "config": paths.portable_config(run.config),
        "init_sha256": execution.init_checksum(run.config),
        "environment": environment(),
        "provenance": run_provenance(),
    }


def _planned_run(tmp_path, monkeypatch, variant: str = "HyCoCLIP"):
    """A smoke run of the plan, its base a small file, folders under ``tmp_path``."""
    toy_repository(tmp_path, monkeypatch)
    run = next(r for r in design.plan("smoke") if r.variant == variant)
    design.run_target(run, "smoke").mkdir(parents=True)
    return run


@pytest.mark.usefixtures("picks")
def test_a_code_or_package_change_runs_a_finished_run_again_and_says_why(
    tmp_path, monkeypatch, capsys
):
    run = _planned_run(tmp_path, monkeypatch)
    record = _current_record(run)
    record["environment"].update(platform="elsewhere", torch_cpu_capability="NONE", torch_threads=9)
    done = design.run_target(run, "smoke") / "run.done"
    done.write_text(json.dumps(record))
    assert execution.finished(run, "smoke")  # platform, kernels and threads are not compared
    real_hash, real_versions = execution.code_hash(), package_versions()
    monkeypatch.setattr(execution, "code_hash", lambda: "0" * 64)
    assert not execution.finished(run, "smoke")
    assert execution.record_differences(record, run) == ["provenance.code_hash"]

    class Trained(Exception):
        pass

    def train_run(config):
        raise Trained

    monkeypatch.setattr(execution, "train_run", train_run)
    with pytest.raises(Trained):
        execution.execute(run, "smoke")
    assert f"{run.name}: run.done differs in provenance.code_hash" in capsys.readouterr().out
    monkeypatch.setattr(execution, "code_hash", lambda: real_hash)
    assert execution.finished(run, "smoke")
    older = {**real_versions, "numpy": "1.0.0"}
    monkeypatch.setattr(execution, "package_versions", lambda: older)
    assert not execution.finished(run, "smoke")
    assert execution.record_differences(record, run) == ["environment.packages.numpy"]
    monkeypatch.setattr(execution, "package_versions", lambda: real_versions)
    monkeypatch.setattr(execution.platform, "python_version", lambda: "3.0.0")
    assert execution.record_differences(record, run) == ["environment.python"]


@pytest.mark.usefixtures("picks")
def test_a_record_without_provenance_is_not_finished(tmp_path, monkeypatch):
    run = _planned_run(tmp_path, monkeypatch)
    committed = COMMITTED_SMOKE / "argent/hycoclip/seed0/run.done"
    old = json.loads(committed.read_text())
    record = {**_current_record(run), "environment": old["environment"]}
    record.pop("provenance")
    (design.run_target(run, "smoke") / "run.done").write_text(json.dumps(record))
    assert not execution.finished(run, "smoke")
    assert execution.record_differences(record, run) == ["provenance"]


@pytest.mark.usefixtures("picks")
def test_an_unreadable_run_record_is_a_named_error(tmp_path, monkeypatch):
    run = _planned_run(tmp_path, monkeypatch)
    done = design.run_target(run, "smoke") / "run.done"
    done.write_text("{half")
    with pytest.raises(RunRecordError, match=r"hycoclip/seed0/run.done: not a study run record"):
        execution.finished(run, "smoke")
    record = _current_record(run)
    del record["init_sha256"]
    done.write_text(json.dumps(record))
    with pytest.raises(RunRecordError, match=r"run.done: .*missing init_sha256"):
        execution.execute(run, "smoke")


def test_only_a_training_that_finished_counts_as_trained_to_end(tmp_path):
    assert not execution.trained_to_end(tmp_path)
    (tmp_path / "last.pt").write_bytes(b"checkpoint")
    records = [{"step": 5, "loss": 1.0}, {"step": 7, "status": "interrupted"}]
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    assert not execution.trained_to_end(tmp_path)  # an interrupted run keeps its last.pt too
    records += [{"step": 10, "loss": 0.5}, {"step": 10, "status": "finished"}]
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    assert execution.trained_to_end(tmp_path)


def test_compare_refuses_a_claims_file_its_results_do_not_decide(tmp_path, monkeypatch):

    _toy_study(tmp_path, monkeypatch, seeds=4)
    monkeypatch.setattr(reproduction, "CLAIMS", decide.CLAIMS)  # the toy's declared claims
    decide.decide("smoke", partial=True)
    committed = tmp_path / "results" / "smoke"
    reproduction.check_decided(committed, "smoke", "committed")  # as decided: accepted
    claims_file = committed / "claims.json"
    good = claims_file.read_text()
    tampered = json.loads(good)
    tampered["claims"][0]["effect"] = 123.0
    claims_file.write_text(json.dumps(tampered))
    with pytest.raises(reproduction.CompareInputError, match="records effect 123.0"):
        reproduction.check_decided(committed, "smoke", "committed")
    claims_file.write_text(json.dumps({**tampered, "claims": []}))  # every claim removed
    with pytest.raises(reproduction.CompareInputError, match="lists claims"):
        reproduction.check_decided(committed, "smoke", "committed")
    claims_file.write_text(good)
    (committed / "argent" / "argent" / "seed1" / "run.done").write_text("{half")
    with pytest.raises(reproduction.CompareInputError, match="cannot be decided.*run.done"):
        reproduction.check_decided(committed, "smoke", "committed")


def test_a_half_written_items_file_is_a_named_error(tmp_path, monkeypatch):
    _toy_study(tmp_path, monkeypatch, seeds=2)
    items = tmp_path / "results" / "smoke" / "argent" / "argent" / "seed0" / "items.npz"
    items.write_bytes(items.read_bytes()[:100])
    with pytest.raises(ValueError, match=r"seed0/items.npz: unreadable per-item values"):
        decide.report("smoke", partial=True)


@pytest.mark.usefixtures("picks")
def test_the_schedule_check_compares_a_run_with_its_twice_longer_self(tmp_path, monkeypatch):
    """A HiMo headline fine-tune (MoLo, seed 0, its short R@1 ending at 0.5 at step 100)
    against its twice-longer self (0.56 at step 200); the full plan's schedule check holds
    every HiMo headline arm at twice its steps, and none of ARGENT's arms (trained from random
    weights at one budget, read off its own probe)."""
    toy = _toy_study(tmp_path, monkeypatch, seeds=2)
    monkeypatch.setitem(scales.SCALES, "smoke", dataclasses.replace(toy, schedule_check=True))
    items = {k: np.zeros(500) for k in ITEMS}
    _fake_run(tmp_path, "himo", "MoLo", 0, items, [1.0] * 20,
              curve=[(0, 0.1), (60, 0.5), (80, 0.5), (100, 0.5)])  # fmt: skip
    _fake_run(tmp_path, "himo", "MoLo" + claims.LONGER, 0, items, [1.0] * 20,
              curve=[(0, 0.1), (160, 0.52), (200, 0.56)])  # fmt: skip
    checks = decide.report("smoke", partial=True)["schedule_checks"]
    (check,) = [c for c in checks if c["metric"] == "short_i2t_r1"]
    assert (check["study"], check["variant"], check["steps"]) == ("himo", "MoLo", [100, 200])
    assert check["values"] == [0.5, 0.56] and check["gain"] == pytest.approx(0.06)
    # the curve's own 500 validation items
    assert check["standard_error"] == pytest.approx(math.sqrt(0.56 * 0.44 / 500))
    assert not check["within_noise"]  # 0.06 > 0.022: the longer schedule helped
    full = dataclasses.replace(scales.SCALES["full"], schedule_check=True)
    monkeypatch.setitem(scales.SCALES, "full", full)
    plan = design.plan("full")
    longer = [r for r in plan if r.variant.endswith(claims.LONGER)]
    assert {r.variant.removesuffix(claims.LONGER) for r in longer} == set(
        claims.HEADLINE_ARMS["himo"]
    )
    for run in longer:
        own = next(
            r
            for r in plan
            if (r.variant, r.seed) == (run.variant.removesuffix(claims.LONGER), run.seed)
        )
        assert run.config["train"]["steps"] == 2 * own.config["train"]["steps"]
        assert _differences(run.config, json.loads(json.dumps(own.config))) <= {
            "train.steps", "train.ckpt_every", "train.val_every", "train.diag_every",
        "optim.warmup_steps",  # the recipe's warm-up is a share of the steps
        }  # fmt: skip


def test_a_training_of_another_config_is_set_aside_not_reused(tmp_path):
    output = tmp_path / "run"
    raw = tiny_config("clip", output)
    output.mkdir()
    saved = json.loads(json.dumps(raw))
    (output / "config.json").write_text(json.dumps(saved))
    assert not trained_with_other_config(output, raw)
    saved["train"].update(steps=40, val_size=7)  # a resume may change these
    saved["model"].pop("alpha_norm", None)  # a key added since stands for its default
    (output / "config.json").write_text(json.dumps(saved))
    assert not trained_with_other_config(output, raw)
    assert trained_with_other_config(output, {**raw, "model": {**raw["model"], "alpha_norm": 2}})
    saved["optim"]["lr"] = 0.5
    (output / "config.json").write_text(json.dumps(saved))
    assert trained_with_other_config(output, raw)
    (output / "config.json").write_text("{not json")
    assert trained_with_other_config(output, raw)  # unreadable today: not this run's
    (tmp_path / "run.stale1").mkdir()
    moved = execution.set_aside(output)
    assert moved == tmp_path / "run.stale2" and (moved / "config.json").is_file()
    assert not output.exists()
    assert not trained_with_other_config(output, raw)  # nothing left to compare


def test_a_training_from_other_initial_weights_is_stale(tmp_path):
    base = tmp_path / "base.pt"
    base.write_bytes(b"weights")
    output = tmp_path / "run"
    raw = tiny_config("clip", output, model={"init": str(base)})
    output.mkdir()
    (output / "config.json").write_text(json.dumps(raw))
    execution.init_record(output).write_text(execution.init_checksum(raw))
    assert execution.stale_training(output, raw) == "trained by other code or package versions"
    execution.code_record(output).write_text(json.dumps(execution.current_code()))
    assert execution.stale_training(output, raw) is None
    base.write_bytes(b"rebuilt weights")  # the same path, another base
    assert execution.stale_training(output, raw) == "trained from other initial weights"
    assert execution.stale_training(tmp_path / "never", raw) is None


def test_a_training_by_other_code_is_stale(tmp_path, monkeypatch):
    output = tmp_path / "run"
    raw = tiny_config("clip", output)
    output.mkdir()
    (output / "config.json").write_text(json.dumps(raw))
    execution.code_record(output).write_text(json.dumps(execution.current_code()))
    assert execution.stale_training(output, raw) is None
    monkeypatch.setattr(execution, "code_hash", lambda: "0" * 64)
    assert execution.stale_training(output, raw) == "trained by other code or package versions"
    execution.code_record(output).write_text("{half")  # unreadable: not known to be this code
    monkeypatch.undo()
    assert execution.stale_training(output, raw) == "trained by other code or package versions"


def test_claim_panels_show_each_claimed_item_of_the_variants_with_valid_seeds():
    claims_file = decided.load_claims("smoke")
    variants = {"MoLo": "MoLo", "InfoNCE (λ=0)": "InfoNCE", "no such variant": "nothing"}
    panels = decided.claim_panels("smoke", "himo", claims_file["claims"], variants)
    items = [c["item"] for c in claims_file["claims"] if c["study"] == "himo"]
    assert [c["item"] for c, _ in panels] == list(dict.fromkeys(items))
    for claim, values in panels:
        assert set(values) == {"MoLo", "InfoNCE"}  # a variant without runs is left out
        assert values["MoLo"] == decided.item_value("smoke", "himo", "MoLo", claim["item"])
    assert reader.has_finished_runs("smoke", "himo", "MoLo")
    assert not reader.has_finished_runs("smoke", "himo", "no such variant")
    # the aperture share from every ARGENT arm with a valid seed (each counts its parents,
    # ``design.Run.parents``; the bases as they are do not), each shown variant's value the
    # claims' estimator's
    argent = {v: v for v in (*reader.ARGENT_COLORS, design.PRETRAIN_HYPERBOLIC)}
    shown = decided.claim_panels("smoke", "argent", claims_file["claims"], argent)
    panels = {c["item"]: values for c, values in shown}
    aperture = panels["aperture/parents_inside_radius"]
    arms = {v for v in reader.ARGENT_COLORS if decided.valid_seeds("smoke", "argent", v)}
    assert set(aperture) == arms and {"MERU", "HyCoCLIP", "ARGENT"} <= arms
    assert design.PRETRAIN_HYPERBOLIC not in aperture
    assert design.PRETRAIN_HYPERBOLIC in panels["world-hierarchy/pep_auc_all"]
    for variant, value in aperture.items():
        assert value == decided.item_value(
            "smoke", "argent", variant, "aperture/parents_inside_radius"
        )


def test_every_verdict_label_comes_from_a_constructed_claim():
    """One constructed record per label, all through the family's adjustment: the labels the
    rule can give are exactly :data:`VERDICTS`. Every interval is ±0.004 about its effect,
    δ = 0.01 and the paper's effect here 0.05 (:func:`_decided`)."""
    own_units = {"paper_units": True}
    unresolvable = {"item_floor": 0.012, "delta": 0.01, "half_width": 0.015,
                    "reason": "the item floor ±0.012 is at least δ = 0.01"}  # fmt: skip
    cases = {
        "reproduces": _decided(0.05, {"0": 0.06, "1": 0.04}),  # [+0.046, +0.054] beyond +δ
        # [+0.026, +0.034] beyond +δ, below the paper's 0.05 in its own units
        "reproduces, below the published effect": _decided(0.03, {"0": 0.03}, **own_units),
        # [+0.006, +0.014]: above 0, below 0.05, not beyond +δ nor inside ±δ
        "reproduces in sign, below the published effect": _decided(0.01, {"0": 0.01}, **own_units),
        "contradicts": _decided(-0.05, {"0": -0.05, "1": -0.05}),  # [−0.054, −0.046]
        "negligible": _decided(0.001, {"0": 0.001, "1": 0.001}),  # [−0.003, +0.005]
        "negligible, with the paper's sign": _decided(0.005, {"0": 0.005}),  # [+0.001, +0.009]
        "negligible, with the other sign": _decided(-0.005, {"0": -0.005}),  # [−0.009, −0.001]
        "inconclusive": _decided(0.01, {"0": 0.01}),  # other units: no size to read below
        "underpowered": _decided(0.05, {"0": 0.05, "1": 0.05}, seed_df=1),
        "unresolvable at this test set": _decided(0.01, {"0": 0.01}, design_note=unresolvable),
        "untestable": _decided(0.05, {"0": 0.05}, untestable="a model did not learn"),
        "premise fails here": _decided(
            0.05, {"0": 0.05}, premise={"held": False, "measured": 0.99, "reason": "no room"}
        ),
        "differs between the two bases": _decided(0.03, {"0": 0.09, "1": -0.03}, (0.1, 0.14)),
        "did not learn the world at this budget": _decided(
            0.05, {"0": 0.05}, learned={"met": False, "missed": ["X L1 0.5 < 0.6"]}
        ),
        "the arms are near-copies": _decided(0.05, {"0": 0.05}, disagreement={"share": 0.01}),
        "not run yet": _decided(0.05, {"0": 0.05}, not_run="not run: 8 planned run(s)"),
    }  # fmt: skip
    out = decide.adjust_family(list(cases.values()))
    assert [r["verdict"] for r in out] == list(cases)
    assert set(cases) == set(VERDICTS)
    assert set(MEANINGS) == set(VERDICTS)  # the README's legend has a line for each


def test_a_claim_declared_without_what_its_verdict_needs_is_refused_by_name():
    good = claims.CLAIMS[0]
    claims.validate_claims([good])
    for bad, words in (
        (dataclasses.replace(good, family=""), "family"),
        (dataclasses.replace(good, looks=0), "looks 0 is not a positive count"),
        (dataclasses.replace(good, premise=None), "premise: none declared"),
        (dataclasses.replace(good, metric=dataclasses.replace(good.metric, units="")), "units"),
        (
            dataclasses.replace(good, metric=dataclasses.replace(good.metric, better="up")),
            "better 'up' is not 'higher' or 'lower'",
        ),
    ):
        with pytest.raises(claims.ClaimDeclarationError, match=f"claim {good.id!r}: .*{words}"):
            claims.validate_claims([bad])
    with pytest.raises(claims.ClaimDeclarationError, match="more than once"):
        claims.validate_claims([good, good])
    assert claims.FAMILY_SIZES == {"HiMo-CLIP": 17, "ARGENT": 17}


def _translation(effect: float, level: float, best: float, reference: float, study_best: float):
    """The δ rule's reading of a published ``effect`` over a baseline at ``level`` (``best`` in
    the paper's units), carried onto a study reference at ``reference``."""
    published = PublishedEffect(effect, level, best, "a table")
    return translate(published, reference, "the bases", study_best, "the paper's effect")


def test_an_aperture_claim_without_the_premise_says_so(monkeypatch):
    """ARGENT's aperture claims need a baseline whose parents fall inside 2K/√c, at the end or
    during training, for at least δ of them: one below reads the premise failed, with the
    closest a training caption came or how far inside its parents got."""
    claim = next(c for c in CLAIMS if c.id == "argent-aperture-vs-hycoclip")
    # 1 of 50 points to the best: a share 0.02 of the whole range, δ = 0.01 (half of it)
    translation = _translation(1.0, 50.0, 100.0, 0.0, 1.0)
    assert translation.delta == pytest.approx(0.01)
    monkeypatch.setattr(premise, "closest_to_radius", lambda *args: 0.0591)
    monkeypatch.setattr(premise, "parents_over_training", lambda *args: None)  # no validation
    record = premise.premise_record("full", claim, [0, 1], 0.0005, translation)
    assert (record["kind"], record["paper"], record["threshold"]) == ("parents inside", "inside",
                                                                      translation.delta)  # fmt: skip
    assert record["held"] is False and record["measured"] == 0.0005
    assert record["reason"] == (
        "the baseline leaves 0.05% of the held-out parents inside 2K/√c at the end; the closest "
        "training caption ends +0.059 from it"
    )
    reached = premise.premise_record("full", claim, [0, 1], 0.7, translation)
    assert reached["held"] is True and reached["reason"] is None
    # with the parents validated over training: never inside reads so, with the lowest norms
    history = {"share": 0.004, "kind": "box_text", "step": 120, "seed": 1,
               "lowest_norms": {"short": 0.9, "box_text": 0.41}}  # fmt: skip
    monkeypatch.setattr(premise, "parents_over_training", lambda *args: history)
    record = premise.premise_record("full", claim, [0, 1], 0.0005, translation)
    assert record["measured"] == 0.004 and record["held"] is False  # 0.4 % < δ = 1 %
    assert record["reason"].endswith("over training at most 0.40% of one kind (box_text, step "
                                     "120), the lowest mean norms short 0.9, box_text 0.41")  # fmt: skip
    history["share"] = 0.0
    record = premise.premise_record("full", claim, [0, 1], 0.0005, translation)
    assert record["reason"].endswith("over training no parent of any kind inside after the first "
                                     "update, the lowest mean norms short 0.9, box_text 0.41")  # fmt: skip
    history["share"] = 0.4  # inside during training: the premise holds, the verdict reads the end
    record = premise.premise_record("full", claim, [0, 1], 0.0005, translation)
    assert record["held"] is True and (record["during"], record["at_end"]) == (0.4, 0.0005)


def test_a_room_premise_asks_the_baseline_to_leave_the_paper_s_effect_on_this_scale():
    """HyCoCLIP's PEP: the paper's 2.5 of its 3.2 points to 100 (ARGENT Table 2), carried onto
    bases at 0.9 of a best 1: T = 0.1 × 2.5 / 3.2 = 0.078; a baseline at 0.95 leaves 0.05,
    less than T, one at 0.9 leaves 0.1. SSI (lower is better): the paper's 6.82 of Long-CLIP's
    11.4, onto a reference at 4 of a best 0: T = 4 × 6.82 / 11.4 = 2.39."""
    pep = next(c for c in CLAIMS if c.id == "argent-pep-vs-hycoclip")
    translation = _translation(2.5, 96.8, 100.0, 0.9, 1.0)
    assert translation.translated == pytest.approx(0.1 * 2.5 / 3.2)
    failed = premise.premise_record("full", pep, [0, 1], 0.95, translation)
    assert (failed["kind"], failed["paper"], failed["measured"]) == ("room", 96.8, 0.95)
    assert failed["held"] is False and failed["threshold"] == pytest.approx(0.078125)
    assert failed["reason"] == (
        "the baseline at 0.95 here (96.8 in the paper) leaves 0.05 to the best value, less than "
        "the paper's effect on this scale (0.0781)"
    )
    held = premise.premise_record("full", pep, [0, 1], 0.9, translation)
    assert held["held"] is True and held["reason"] is None
    ssi = next(c for c in CLAIMS if c.id == "himo-ssi-vs-longclip")
    translation = _translation(6.82, 11.4, 0.0, 4.0, 0.0)
    assert translation.translated == pytest.approx(4 * 6.82 / 11.4)
    assert premise.premise_record("full", ssi, [0, 1], 2.0, translation)["held"] is False
    assert premise.premise_record("full", ssi, [0, 1], 3.0, translation)["held"] is True
    lead = next(c for c in CLAIMS if c.id == "himo-h3-vs-infonce")  # no level the paper prints
    record = premise.premise_record("full", lead, [0, 1], 99.0, _translation(4.5, 93.4, 100.0,
                                                                             60.0, 100.0))  # fmt: skip
    assert record["paper"] is None and "(no level printed by the paper)" in record["reason"]


def test_the_parents_over_training_start_after_the_first_update(tmp_path, monkeypatch):
    """The premise reads what training does: the step-0 validation (the initialisation, every
    box crop inside the radius from scratch) does not count; the largest share after it, and
    each kind's lowest mean norm, do."""
    monkeypatch.setattr(premise, "results_dir", lambda scale: tmp_path)
    claim = next(c for c in CLAIMS if c.id == "argent-aperture-vs-meru")
    folder = tmp_path / "argent" / paths.slug(claim.baseline) / "seed1"
    folder.mkdir(parents=True)
    val = [
        {"inside_short": 0.0, "norm_short": 0.05, "inside_box_image": 1.0, "norm_box_image": 0.03},
        {"inside_short": 0.0, "norm_short": 0.9, "inside_box_image": 0.0, "norm_box_image": 4.0},
        {"inside_short": 0.25, "norm_short": 0.7, "inside_box_image": 0.0, "norm_box_image": 3.0},
    ]
    records = [{"step": step, "val": v} for step, v in zip((0, 40, 80), val)]
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    history = premise.parents_over_training("full", claim, [1])
    assert history == {"share": 0.25, "kind": "short", "step": 80, "seed": 1,
                       "lowest_norms": {"short": 0.7, "box_image": 3.0}}  # fmt: skip
    (folder / "log.jsonl").write_text(json.dumps(records[0]) + "\n")  # only the initialisation
    assert premise.parents_over_training("full", claim, [1]) is None


def test_the_closest_caption_is_the_baseline_s_at_its_last_diagnostics(tmp_path, monkeypatch):
    monkeypatch.setattr(premise, "results_dir", lambda scale: tmp_path)
    claim = next(c for c in CLAIMS if c.id == "argent-aperture-vs-hycoclip")
    for variant, norm in ((claim.variant, 0.25), (claim.baseline, 0.3)):  # the variant's is not
        folder = tmp_path / "argent" / paths.slug(variant) / "seed0"
        folder.mkdir(parents=True)
        records = [
            {"step": 0, "diag/text/norm_min": 0.1, "diag/aperture_radius": 0.2},
            {"step": 60, "diag/text/norm_min": norm, "diag/aperture_radius": 0.2},
        ]
        (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert premise.closest_to_radius("full", claim, [0]) == pytest.approx(0.1)
    assert premise.closest_to_radius("full", claim, [5]) is None


def test_a_tutorial_reads_the_full_scale_only_where_its_study_finished(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERLIB_RESULTS", str(tmp_path))
    assert decided.available_scale() == "smoke"  # no full study at all
    (tmp_path / "full").mkdir()
    claims_file = tmp_path / "full" / "claims.json"
    rows = [{"study": "himo", "partial": False}, {"study": "argent", "partial": True}]
    claims_file.write_text(json.dumps({"claims": rows}))
    assert decided.available_scale(study="himo") == "full"
    assert decided.available_scale(study="argent") == "smoke"  # stopped early: missing runs
    assert decided.available_scale() == "full" and decided.available_scale("smoke") == "smoke"
    rows[1]["partial"] = False
    claims_file.write_text(json.dumps({"claims": rows}))
    assert decided.available_scale(study="argent") == "full"
    with pytest.raises(ValueError, match="unknown study scale"):
        decided.available_scale("medium")


def test_the_first_step_inside_reads_the_seed_mean_after_the_first_update():
    """A naive reading by hand: seeds (0.0, 0.2) at step 40 average 0.1 < 0.12; at step 80
    (0.1, 0.3) average 0.2 ≥ 0.12; step 0 (every parent inside at initialisation) is skipped;
    a variant whose mean never reaches δ reads None."""

    def curve(variant, values, metric="inside_box_text"):
        return {"variant": variant, "metric": metric,
                "points": [{"step": 40 * i, "value": v} for i, v in enumerate(values)]}  # fmt: skip

    curves = [
        curve("HyCoCLIP", [1.0, 0.0, 0.1, 0.5]),
        curve("HyCoCLIP", [1.0, 0.2, 0.3, 0.5]),
        curve("ARGENT", [1.0, 0.0, 0.0, 0.11]),
        curve("ARGENT", [1.0, 0.0, 0.0, 0.12], metric="inside_short"),
    ]
    first = premise.first_step_inside(curves, 0.12)
    assert first == {
        ("HyCoCLIP", "inside_box_text"): 80,
        ("ARGENT", "inside_box_text"): None,
        ("ARGENT", "inside_short"): 120,
    }
