"""The study: repository-relative records, matched controls (compared runs differ in exactly
the thing under test), and claims decided from results files (collapsed runs left out)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from paperlib.study import decide, reader, runner
from paperlib.tables import claims
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
        "train.keep_checkpoints",
    }  # where checkpoints go, not how it trains


@pytest.mark.parametrize("scale", ["smoke", "full"])
def test_compared_runs_differ_only_in_the_thing_under_test(scale):
    runs = {(r.variant, r.seed): r for r in runner.plan(scale)}
    from paperlib.engine.config import build_config

    def resolved(variant, seed):  # with each method's paper defaults applied
        return json.loads(
            json.dumps(
                build_config(runs[(variant, seed)].config).__dict__, default=lambda o: o.__dict__
            )
        )

    seed = runner.SCALES[scale].sweep_seeds[0]
    assert _differences(resolved("MoLo", seed), resolved("InfoNCE (λ=0)", seed)) == {"loss.lam"}
    long_clip = _differences(resolved("MoLo", seed), resolved("Long-CLIP", seed))
    assert long_clip <= {"method", "loss.tau", "loss.lam", "loss.pcm_dim", "loss.short_weight"}
    for variant in (
        "ARGENT, no weights",
        "ARGENT, weights on all pairs",
        "ARGENT, no regularizer",
        "ARGENT, Ent",
    ):
        assert len(_differences(resolved("ARGENT", seed), resolved(variant, seed))) == 1, variant
    assert _differences(resolved("ARGENT", seed), resolved("HyCoCLIP", seed)) <= {
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
    batch = _differences(resolved("MoLo, double batch", seed), resolved("MoLo, half batch", seed))
    assert (
        {"train.batch_size", "train.steps"}
        <= batch
        <= {"train.batch_size", "train.steps", "train.ckpt_every"}
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
    for run in runs.values():  # every fine-tune starts from its own seed's shared pre-training
        assert run.after in (None, reader.PRETRAIN, reader.PRETRAIN + reader.SMALLER)
        smaller = run.variant.endswith(reader.SMALLER)
        assert run.config["model"]["name"] == (runner.MODEL_SMALLER if smaller else runner.MODEL)
        assert (run.after == reader.PRETRAIN + reader.SMALLER) == (
            smaller and run.after is not None
        )
    # the model-size arm: the same pair at the smaller size; only the model differs
    for variant in ("HyCoCLIP", "ARGENT", reader.PRETRAIN):
        sized = variant + reader.SMALLER
        assert _differences(resolved(variant, seed), resolved(sized, seed)) == {"model.name"}
    assert claims.EUCLIDEAN_CLIP == reader.PRETRAIN and claims.SMALLER == reader.SMALLER


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
    (folder / "log.jsonl").write_text(
        "\n".join(
            json.dumps({"step": i + 1, "loss": v, "contrastive": v}) for i, v in enumerate(losses)
        )
    )
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


def test_decide_gives_verdicts_and_leaves_collapsed_runs_out(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "REPO_ROOT", tmp_path)
    rng = np.random.default_rng(0)
    learned = [3.0 - 0.1 * i for i in range(20)]
    flat = [math.log(64)] * 20
    for seed in range(5):
        good = {
            "world-zeroshot/L3_correct": (rng.random(500) < 0.6).astype(float),
            "world-short/t2i_hit1": (rng.random(500) < 0.30).astype(float),
        }
        base = {
            "world-zeroshot/L3_correct": (rng.random(500) < 0.4).astype(float),
            "world-short/t2i_hit1": (rng.random(500) < 0.001).astype(float),
        }
        for extra in (
            "world-hierarchy/pep_auc_all",
            "world-hierarchy/pep_auc_finest",
            "aperture/short_caption_inside_radius",
            "world-short/i2t_hit1",
        ):
            good[extra], base[extra] = rng.random(500), rng.random(500)
        _fake_run(tmp_path, "argent", "ARGENT", seed, good, learned)
        _fake_run(tmp_path, "argent", "HyCoCLIP", seed, base, flat if seed == 4 else learned)
    report = decide.decide("toy")
    by_id = {c["claim"]: c for c in report["claims"]}
    zs = by_id["argent-zs-l3-vs-hycoclip"]
    assert zs["verdict"] == "reproduces" and zs["seeds"] == [0, 1, 2, 3]
    assert (
        zs["runs_total"] == 5 and len(zs["invalid_runs"]) == 1 and "ln B" in zs["invalid_runs"][0]
    )
    assert zs["interval"][0] < zs["effect"] < zs["interval"][1] and zs["interval"][0] > 0
    assert by_id["argent-t2i-vs-hycoclip"]["verdict"] == "untestable"  # baseline at chance
    saved = json.loads((tmp_path / "results" / "toy" / "claims.json").read_text())
    assert [c["claim"] for c in saved["claims"]] == list(by_id)
    assert saved["collapsed_runs"] == [
        "argent/hycoclip/seed4: " + zs["invalid_runs"][0].split(": ", 1)[1]
    ]


@pytest.mark.slow
@pytest.mark.distributed
def test_train_distributed_runs_two_ranks_and_names_a_failed_run(tmp_path):
    from tests.engine_helpers import tiny_config

    config = tiny_config(
        "himo", tmp_path / "ddp", train={"steps": 2, "batch_size": 8}, data={"twins": True}
    )
    runner.train_distributed(config, 2, "himo/probe/seed0")
    log = [json.loads(x) for x in (tmp_path / "ddp" / "log.jsonl").read_text().splitlines()]
    assert log[-1] == {"step": 2, "status": "finished"}
    assert all(r["cpu_seconds"] > 0 for r in log if "loss" in r)
    broken = tiny_config(
        "himo", tmp_path / "broken", train={"steps": 2, "batch_size": 6}, data={"twins": True}
    )  # 3 per rank cannot hold twin pairs
    with pytest.raises(RuntimeError, match=r"himo/broken/seed0: torchrun on 2 processes failed"):
        runner.train_distributed(broken, 2, "himo/broken/seed0")


def test_kept_snapshots_and_their_cpu_seconds_make_a_curve(tmp_path):
    from paperlib.study import curves
    from paperlib.train import read_log, train_run
    from tests.engine_helpers import tiny_config

    config = tiny_config(
        "clip", tmp_path / "run", train={"steps": 4, "ckpt_every": 2, "keep_checkpoints": True}
    )
    train_run(config)
    log = read_log(tmp_path / "run")
    points = curves.snapshot_steps(log, tmp_path / "run")
    assert points == [(2, tmp_path / "run" / "step2.pt"), (4, tmp_path / "run" / "last.pt")]
    seconds = [curves.cpu_seconds_at(log, step) for step, _ in points]
    assert 0 < seconds[0] < seconds[1]
    with pytest.raises(ValueError, match="no cpu_seconds at step 3"):
        curves.cpu_seconds_at([r for r in log if r["step"] != 3], 3)
    config["data"]["twins"] = True
    rejected = curves.rejected_config(config, "short captions, no twins", tmp_path)
    assert rejected["data"]["twins"] is False and rejected["train"]["keep_checkpoints"]
    assert config["data"]["twins"] is True  # the base config is left as it was


def _mark_finished(run, scale, config=None):
    target = runner.run_target(run, scale)
    target.mkdir(parents=True, exist_ok=True)
    config = runner.portable_config(config or run.config)
    (target / "run.done").write_text(json.dumps({"run": run.name, "config": config}))


def _finished_study(tmp_path, monkeypatch, scale):
    """The plan of ``scale`` in a repository under ``tmp_path``, every run marked finished."""
    monkeypatch.setattr(reader, "REPO_ROOT", tmp_path.resolve())
    monkeypatch.setattr(runner, "REPO_ROOT", tmp_path.resolve())
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))
    runs = runner.plan(scale)
    for run in runs:
        _mark_finished(run, scale)
    return runs


def test_a_finished_run_is_skipped_without_its_checkpoint_unless_a_later_run_needs_it(
    tmp_path, monkeypatch
):
    runs = _finished_study(tmp_path, monkeypatch, "full")
    assert all(runner.finished(r, "full") for r in runs)
    curve_runs = {(r.variant, r.seed) for r in runs if r.config["train"].get("keep_checkpoints")}
    assert curve_runs and {seed for _, seed in curve_runs} == {0}
    # the curves read the snapshots of their runs, so those and what they start from are needed
    assert runner.checkpoints_needed(runs, "full") == curve_runs | {(reader.PRETRAIN, 0)}
    # a changed config is not finished: the run trains again, from its seed's pre-training
    hycoclip = next(r for r in runs if r.variant == "HyCoCLIP" and r.seed == 3)
    changed = json.loads(json.dumps(hycoclip.config))
    changed["optim"] = dict(changed.get("optim", {}), lr=0.123)
    _mark_finished(hycoclip, "full", changed)
    assert not runner.finished(hycoclip, "full")
    assert (reader.PRETRAIN, 3) in runner.checkpoints_needed(runs, "full")
    (runner.run_target(hycoclip, "full") / "run.done").unlink()
    assert (reader.PRETRAIN, 3) in runner.checkpoints_needed(runs, "full")
    # skipped without training: no checkpoint exists and none is written
    meru = next(r for r in runs if r.variant == "MERU")
    path = runner.execute(
        meru, "full", {(reader.PRETRAIN, 0): tmp_path / "absent.pt"}, need_checkpoint=False
    )
    assert path.name == "last.pt" and not path.exists()


def test_a_run_trained_again_unmarks_the_runs_that_start_from_it(tmp_path, monkeypatch):
    runs = _finished_study(tmp_path, monkeypatch, "smoke")
    pretrain = next(r for r in runs if r.variant == reader.PRETRAIN)
    dependents = tuple(r for r in runs if r.after == reader.PRETRAIN)
    others = [r for r in runs if r.after not in (None, reader.PRETRAIN)]
    assert dependents and others  # the smaller model's fine-tunes start elsewhere
    for run in dependents:
        runner.Path(run.config["train"]["output_dir"]).mkdir(parents=True)

    def stop(config):
        raise RuntimeError("stopped before training")

    monkeypatch.setattr(runner, "train_run", stop)
    with pytest.raises(RuntimeError, match="stopped"):  # its checkpoint is needed and absent
        runner.execute(pretrain, "smoke", {}, need_checkpoint=True, dependents=dependents)
    assert not any(runner.finished(r, "smoke") for r in dependents)
    assert not any(runner.Path(r.config["train"]["output_dir"]).exists() for r in dependents)
    assert all(runner.finished(r, "smoke") for r in [pretrain, *others])


def test_only_a_training_that_finished_counts_as_trained_to_end(tmp_path):
    assert not runner.trained_to_end(tmp_path)
    (tmp_path / "last.pt").write_bytes(b"checkpoint")
    records = [{"step": 5, "loss": 1.0}, {"step": 7, "status": "interrupted"}]
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    assert not runner.trained_to_end(tmp_path)  # an interrupted run keeps its last.pt too
    records += [{"step": 10, "loss": 0.5}, {"step": 10, "status": "finished"}]
    (tmp_path / "log.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    assert runner.trained_to_end(tmp_path)
