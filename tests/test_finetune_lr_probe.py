"""The learning-rate probe below the first recipe grid: its runs are the study's headline
fine-tunes with only the learning rate changed, its summary reads the log as a naive recount
does, and its committed record, with the recipe's, says what the method page reads from them."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from paperlib.engine.validation import validation_records
from paperlib.study import design, recipe
from paperlib.study.reader import REPO_ROOT, run_folder
from paperlib.train import log_records

spec = importlib.util.spec_from_file_location(
    "finetune_lr_probe", REPO_ROOT / "scripts" / "finetune_lr_probe.py"
)
probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(probe)


def _differences(a: dict, b: dict, prefix: str = "") -> set[str]:
    """The dotted keys where two nested configs differ."""
    keys = set(a) | set(b)
    out = set()
    for k in keys:
        x, y = a.get(k), b.get(k)
        if isinstance(x, dict) and isinstance(y, dict):
            out |= _differences(x, y, f"{prefix}{k}.")
        elif x != y:
            out.add(f"{prefix}{k}")
    return out


@pytest.mark.parametrize("arm", probe.ARMS)
def test_a_probe_run_is_the_study_s_fine_tune_at_another_learning_rate(arm, tmp_path):
    study = next(r for r in design.plan("full", ("argent",)) if r.variant == arm and r.seed == 1)
    other = next(lr for lr in (1e-6, 3e-6) if lr != study.config["optim"]["lr"])
    config = probe.probe_config(arm, 1, other, "full", root=tmp_path)
    assert _differences(config, study.config) == {"optim.lr", "train.output_dir"}
    assert config["optim"]["lr"] == other
    assert config["train"]["val_metrics"] == list(probe.METRICS)  # the study's, L3 included
    assert config["train"]["output_dir"].startswith(str(tmp_path))


def test_the_summary_recounts_the_log():
    rng = np.random.default_rng(0)
    records = [{"step": 0, "val": {m: 0.5 for m in probe.METRICS}}]
    losses = rng.random((23, 2))
    for i, (c, e) in enumerate(losses, start=1):
        records.append({"step": 5 * i, "contrastive": c, "entailment": e, "loss": c + e})
        if i % 10 == 0:
            records.append({"step": 5 * i, "val": {m: 0.5 - 0.01 * i for m in probe.METRICS}})
    out = probe.summarise(records)
    fifth = len(losses) // 5  # 4 of 23 records
    for j, term in enumerate(probe.TERMS):
        assert out["terms"][term]["first_fifth"] == pytest.approx(losses[:fifth, j].mean())
        assert out["terms"][term]["last_fifth"] == pytest.approx(losses[-fifth:, j].mean())
    assert [c["step"] for c in out["curve"]] == [0, 50, 100]
    assert out["retention"]["zeroshot_L1"] == pytest.approx((0.5 - 0.2) / 0.5)
    with pytest.raises(ValueError, match="contrastive: 3 training records"):
        probe.fifths(records[:4], "contrastive")


def _runs() -> dict[tuple[str, int, float], dict]:
    record = json.loads(probe.PROBE.read_text())
    assert record["scale"] == "full" and record["metrics"] == list(probe.METRICS)
    return {(r["arm"], r["seed"], r["lr"]): r for r in record["runs"]}


def _point_log(point: dict) -> list[dict]:
    """A recipe point's training log, as committed."""
    return log_records(REPO_ROOT / point["folder"] / "log.jsonl")


def _last_over_start(records: list[dict], metric: str) -> float:
    """A log's last validation value of ``metric`` over its step-0 value."""
    curve = validation_records(records)
    return curve[-1]["val"][metric] / curve[0]["val"][metric]


def _recipe() -> dict:
    return json.loads((REPO_ROOT / "results" / "full" / "recipe.json").read_text())["arms"]


def test_the_committed_record_at_the_recipe_s_pick_is_the_study_s_runs():
    """The probe's runs at the study's picked learning rate (the probe keeps the warm-up the
    study picks) are the study's seed 0 and 1 runs: the same validation curve and test
    accuracies; the base's accuracies are the study's base reference."""
    runs, picks = _runs(), _recipe()
    assert {lr for _, _, lr in runs} == {1e-6, 3e-6, 1e-5} and {s for _, s, _ in runs} == {0, 1}
    chosen = picks["HyCoCLIP"]["pick"]
    assert picks["ARGENT"]["pick"] == chosen and chosen["warmup"] == 0.25  # the probe's warm-up
    at_pick = {key: run for key, run in runs.items() if key[2] == chosen["lr"]}
    assert len(at_pick) == 4  # both arms, seeds 0 and 1
    for (arm, seed, _), run in at_pick.items():
        folder = run_folder("full", "argent", arm, seed)
        curve = [{"step": r["step"], **r["val"]}
                 for r in validation_records(log_records(folder / "log.jsonl"))]  # fmt: skip
        assert run["curve"] == curve, (arm, seed)
        for level in probe.LEVELS:
            study = json.loads((folder / f"world-zeroshot-{level}.json").read_text())
            assert run["test"]["last"][level] == pytest.approx(study["metrics"]["acc1"], abs=1e-6)
        assert run["test"]["start"] == probe.base_test_accuracy(seed, "full")


def test_the_committed_record_reads_as_the_method_page_says():
    """docs/methods/argent.md#box-crop-norms, "The hyperbolic arms' recipe", and the study
    page's recipe paragraph."""
    record, picks = json.loads(probe.PROBE.read_text()), _recipe()
    # the first grid, the HiMo arms', picked its lowest rate by the HiMo rule: so it still does
    # on the hyperbolic grid's points it shares
    assert record["grid"] == [1e-5, 3e-5, 1e-4, 3e-4] == list(design.SCALES["full"].recipe_lrs)
    for arm in probe.ARMS:
        rule = recipe.SEARCHED_ARMS[arm]
        first = recipe.Rule(rule.study, rule.primary)  # the HiMo arms' guard, threshold and pick
        shared = [p for p in picks[arm]["points"] if p["lr"] in record["grid"]]
        rescored = [{**p, **recipe.score_point(_point_log(p), first)} for p in shared]
        assert recipe.pick(rescored, first)["lr"] == 1e-5 == min(record["grid"])
        assert picks[arm]["rule"]["threshold"] == 0.9 and picks[arm]["rule"]["most_training"]
        assert picks[arm]["rule"]["guard"] == ["short_i2t_r1", "zeroshot_L1"]
    assert design.SCALES["full"].recipe_grid("argent")[0] == (1e-6, 3e-6, 1e-5, 3e-5)
    runs = _runs()
    for arm in probe.ARMS:  # at 1e-6, base 0 keeps 0.87 of its validation L3, 0.99 of its test L3
        run = runs[arm, 0, 1e-6]
        assert round(run["retention"]["zeroshot_L3"], 2) == 0.87
        assert (round(run["start"]["zeroshot_L3"], 3), round(run["last"]["zeroshot_L3"], 3)) == (
            0.254, 0.222)  # fmt: skip
        assert run["test"]["retention"]["L3"] >= 0.99
    # a guard on validation L3 would ask for no training: no recipe point keeps 0.9 of it
    l3_kept = [_last_over_start(_point_log(p), "zeroshot_L3")
               for arm in probe.ARMS for p in picks[arm]["points"]]  # fmt: skip
    assert len(l3_kept) == 16 and max(l3_kept) < 0.9
    # one point for both: alone, HyCoCLIP would train more than ARGENT and keep less
    alone = {arm: recipe.pick(picks[arm]["points"], recipe.SEARCHED_ARMS[arm])["lr"]
             for arm in probe.ARMS}  # fmt: skip
    assert alone == {"HyCoCLIP": 1e-5, "ARGENT": 3e-6}
    assert picks["HyCoCLIP"]["pick"]["lr"] == picks["ARGENT"]["pick"]["lr"] == 3e-6
    lrs = sorted({lr for _, _, lr in runs})
    for arm in probe.ARMS:
        for seed in (0, 1):
            line = [runs[arm, seed, lr] for lr in lrs]
            l1 = [r["test"]["last"]["L1"] for r in line]
            # every rate ends below the base's test L1, the smallest rate highest
            assert all(v < line[0]["test"]["start"]["L1"] for v in l1)
            assert l1 == sorted(l1, reverse=True) and len(set(l1)) == len(l1)
            # the contrastive term falls further the larger the rate ...
            drops = [r["terms"]["contrastive"]["first_fifth"] - r["terms"]["contrastive"]["last_fifth"]
                     for r in line]  # fmt: skip
            assert 0 < drops[0] < drops[1] < drops[2]
            # ... while the entailment term rises at every rate above the smallest
            for r in line[1:]:
                assert (
                    r["terms"]["entailment"]["last_fifth"] > r["terms"]["entailment"]["first_fifth"]
                )
    kept = [min(r["test"]["retention"].values()) for (_, _, lr), r in runs.items() if lr <= 3e-6]
    assert min(kept) >= 0.9  # every run at 3e-6 and below keeps 0.9 of its base's L1 and L3
    assert any(min(runs[a, 0, 1e-5]["test"]["retention"].values()) < 0.9 for a in probe.ARMS)
    for seed in (0, 1):  # at 1e-6 the two objectives agree within 2 of the 1,000 test items
        for level in probe.LEVELS:
            pair = [runs[a, seed, 1e-6]["test"]["last"][level] for a in probe.ARMS]
            assert abs(pair[0] - pair[1]) <= 0.002 + 1e-6  # float32 accuracies
    # from base 1, an L3 of 0.3 is out of reach: the base misses it and no run passes it
    from_base_1 = [r for (_, seed, _), r in runs.items() if seed == 1]
    assert from_base_1[0]["test"]["start"]["L3"] < 0.3
    assert max(r["test"]["last"]["L3"] for r in from_base_1) < 0.3
