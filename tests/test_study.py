"""The study: repository-relative records, matched controls (compared runs differ in exactly
the thing under test), and claims decided from results files (collapsed runs left out)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from paperlib.study import decide, reader, runner
from paperlib.tables.claims import CLAIMS


def test_repo_relative_inside_and_outside(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    monkeypatch.setattr(reader, "REPO_ROOT", repo.resolve())
    assert reader.repo_relative(repo / "runs" / "a" / "last.pt") == "runs/a/last.pt"
    outside = tmp_path / "elsewhere" / "last.pt"
    assert reader.repo_relative(outside) == str(outside)


def test_portable_config_rewrites_run_folder_and_init_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "REPO_ROOT", tmp_path.resolve())
    monkeypatch.setattr(runner, "REPO_ROOT", tmp_path.resolve())
    plan = runner.plan("smoke", ("himo",))
    finetune = next(r for r in plan if r.after is not None)
    config = dict(finetune.config, model={"name": "paper-tiny", "init": str(tmp_path / "p.pt")})
    config["train"] = dict(config["train"], output_dir=str(tmp_path / "runs" / "x"))
    recorded = runner.portable_config(config)
    assert recorded["train"]["output_dir"] == "runs/x" and recorded["model"]["init"] == "p.pt"
    assert config["train"]["output_dir"] == str(tmp_path / "runs" / "x")  # input untouched
    pre = next(r for r in plan if r.after is None)
    assert runner.portable_config(pre.config)["model"]["init"] == "random"


def _differences(a: dict, b: dict) -> set[str]:
    """Dotted keys whose values differ between two configs (output folders left out)."""
    keys = set()
    for section in set(a) | set(b):
        x, y = a.get(section), b.get(section)
        if isinstance(x, dict) and isinstance(y, dict):
            keys |= {f"{section}.{k}" for k in set(x) | set(y) if x.get(k) != y.get(k)}
        elif x != y:
            keys.add(section)
    return keys - {"train.output_dir"}


@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_compared_runs_differ_only_in_the_thing_under_test(scale):
    runs = {(r.variant, r.seed): r for r in runner.plan(scale)}
    from paperlib.engine.config import build_config

    def resolved(variant, seed):  # with each method's paper defaults applied
        return json.loads(json.dumps(build_config(runs[(variant, seed)].config).__dict__,
                                     default=lambda o: o.__dict__))  # fmt: skip

    seed = runner.SCALES[scale].sweep_seeds[0]
    assert _differences(resolved("MoLo", seed), resolved("InfoNCE (λ=0)", seed)) == {"loss.lam"}
    long_clip = _differences(resolved("MoLo", seed), resolved("Long-CLIP", seed))
    assert long_clip <= {"method", "loss.tau", "loss.lam", "loss.pcm_dim", "loss.short_weight"}
    for variant in ("ARGENT, no weights", "ARGENT, weights on all pairs",
                    "ARGENT, no regularizer", "ARGENT, Ent"):  # fmt: skip
        assert len(_differences(resolved("ARGENT", seed), resolved(variant, seed))) == 1, variant
    assert _differences(resolved("ARGENT", seed), resolved("HyCoCLIP", seed)) <= {
        "method", "loss.gamma1", "loss.gamma2", "loss.weights", "loss.regularize",
        "loss.entailment", "loss.adaent_beta", "loss.adaent_placement", "loss.adaent_normalize",
        "loss.detach_weight", "loss.entail_weight",
    }  # fmt: skip
    for run in runs.values():  # every fine-tune starts from its own seed's shared pre-training
        assert run.after in (None, reader.PRETRAIN)


def test_every_claim_compares_variants_the_full_study_runs():
    plan = runner.plan("full")
    seeds = {}
    for run in plan:
        seeds.setdefault((run.study if run.after else "himo", run.variant), set()).add(run.seed)
    for claim in CLAIMS:
        for variant in (claim.variant, claim.baseline):
            have = seeds.get((claim.study, variant), set())
            need = 5 if claim.headline else 3
            assert len(have) >= need, (claim.id, variant, sorted(have))
    assert len(CLAIMS) >= 12


def _fake_run(root, study, variant, seed, items, losses, feature_std=0.2):
    folder = root / "results" / "toy" / study / reader.slug(variant) / f"seed{seed}"
    folder.mkdir(parents=True)
    np.savez(folder / "items.npz", **items)
    (folder / "log.jsonl").write_text("\n".join(
        json.dumps({"step": i + 1, "loss": v, "contrastive": v}) for i, v in enumerate(losses)))
    config = {"method": "hycoclip", "train": {"batch_size": 64}}
    (folder / "run.done").write_text(json.dumps({"run": f"{study}/{variant}/seed{seed}",
        "variant": variant, "study": study, "seed": seed, "config": config,
        "feature_std": feature_std}))  # fmt: skip


def test_decide_gives_verdicts_and_leaves_collapsed_runs_out(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "REPO_ROOT", tmp_path)
    rng = np.random.default_rng(0)
    learned = [3.0 - 0.1 * i for i in range(20)]
    flat = [math.log(64)] * 20
    for seed in range(5):
        good = {"world-zeroshot/L3_correct": (rng.random(500) < 0.6).astype(float),
                "world-short/t2i_hit1": (rng.random(500) < 0.30).astype(float)}  # fmt: skip
        base = {"world-zeroshot/L3_correct": (rng.random(500) < 0.4).astype(float),
                "world-short/t2i_hit1": (rng.random(500) < 0.001).astype(float)}  # fmt: skip
        for extra in ("world-hierarchy/pep_auc_all", "world-hierarchy/pep_auc_finest",
                      "aperture/short_caption_inside_radius", "world-short/i2t_hit1"):  # fmt: skip
            good[extra], base[extra] = rng.random(500), rng.random(500)
        _fake_run(tmp_path, "argent", "ARGENT", seed, good, learned)
        _fake_run(tmp_path, "argent", "HyCoCLIP", seed, base, flat if seed == 4 else learned)
    report = decide.decide("toy")
    by_id = {c["claim"]: c for c in report["claims"]}
    zs = by_id["argent-zs-l3-vs-hycoclip"]
    assert zs["verdict"] == "reproduces" and zs["seeds"] == [0, 1, 2, 3]
    assert zs["runs_total"] == 5 and len(zs["invalid_runs"]) == 1 and "ln B" in zs["invalid_runs"][0]
    assert zs["interval"][0] < zs["effect"] < zs["interval"][1] and zs["interval"][0] > 0
    assert by_id["argent-t2i-vs-hycoclip"]["verdict"] == "untestable"  # baseline at chance
    saved = json.loads((tmp_path / "results" / "toy" / "claims.json").read_text())
    assert [c["claim"] for c in saved["claims"]] == list(by_id)
    assert saved["collapsed_runs"] == ["argent/hycoclip/seed4: " + zs["invalid_runs"][0].split(": ", 1)[1]]
