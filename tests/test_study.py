"""The study's records: paths stored relative to the repository, so results read the same
wherever it is cloned."""

from __future__ import annotations

from paperlib import study


def test_repo_relative_inside_and_outside(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    monkeypatch.setattr(study, "REPO_ROOT", repo.resolve())
    assert study.repo_relative(repo / "runs" / "a" / "last.pt") == "runs/a/last.pt"
    outside = tmp_path / "elsewhere" / "last.pt"
    assert study.repo_relative(outside) == str(outside)


def test_portable_config_rewrites_run_folder_and_init_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(study, "REPO_ROOT", tmp_path.resolve())
    plan = study.plan("smoke", ("himo",))
    finetune = next(r for r in plan if r.after is not None)
    config = dict(finetune.config, model={"name": "paper-tiny", "init": str(tmp_path / "p.pt")})
    config["train"] = dict(config["train"], output_dir=str(tmp_path / "runs" / "x"))
    recorded = study._portable_config(config)
    assert recorded["train"]["output_dir"] == "runs/x" and recorded["model"]["init"] == "p.pt"
    assert config["train"]["output_dir"] == str(tmp_path / "runs" / "x")  # input untouched
    pre = next(r for r in plan if r.after is None)
    assert study._portable_config(pre.config)["model"]["init"] == "random"
