"""Planning study runs in tests: a ``recipe.json`` written by hand (a scale that searches its
recipe), and a temporary repository root with one fake base checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

from paperlib.study import paths
from paperlib.study.plan import bases, design, recipe
from paperlib.study.plan.scales import SCALES


def write_picks(scale_name: str, picks: dict[str, tuple[float, float]] | None = None) -> Path:
    """``results/<scale>/recipe.json`` picking ``picks[arm]`` = (lr, warm-up fraction) for the
    arms given, their study's grid's first point for the others (none where the study has no
    grid); returns its path."""
    scale = SCALES[scale_name]
    arms, grid = {}, {}
    for arm, rule in recipe.SEARCHED_ARMS.items():
        lrs, warmups = scale.recipe_grid(rule.study)
        grid[rule.study] = {"lrs": list(lrs), "warmups": list(warmups)}
        if not (lrs and warmups):
            continue
        lr, warmup = (picks or {}).get(arm, (lrs[0], warmups[0]))
        chosen = {"lr": lr, "warmup": warmup, "warmup_steps": None, "retained": True}
        arms[arm] = {"study": rule.study, "rule": recipe.rule_record(rule),
                     "pick": {**chosen, "reason": "written by a test"}}  # fmt: skip
    path = recipe.recipe_path(scale_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"scale": scale_name, "grid": grid, "arms": arms}))
    return path


def toy_repository(tmp_path: Path, monkeypatch) -> Path:
    """Point the study at ``tmp_path`` as its repository (runs under ``tmp_path/runs``) with a
    fake base 0 of the study's model in each geometry; returns the Euclidean bases folder."""
    monkeypatch.setattr(paths, "REPO_ROOT", tmp_path.resolve())
    monkeypatch.setenv("PAPERLIB_RUNS", str(tmp_path / "runs"))

    def bases_dir(geometry: str = "euclidean") -> Path:
        return tmp_path / "results" / bases.GEOMETRIES[geometry].folder

    monkeypatch.setattr(design, "bases_dir", bases_dir)
    for geometry in bases.GEOMETRIES:
        bases_dir(geometry).mkdir(parents=True, exist_ok=True)
        (bases_dir(geometry) / f"{bases.MODEL}-base0.pt").write_bytes(b"weights")
    return bases_dir()
