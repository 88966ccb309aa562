"""The README's summary of the committed study is the table of ``results/full/claims.json``."""

from __future__ import annotations

from paperlib.study.decide import summary_table
from paperlib.study.reader import REPO_ROOT, load_claims


def test_readme_summarises_the_committed_claims():
    readme = (REPO_ROOT / "README.md").read_text()
    table = summary_table(load_claims("full"))
    assert table in readme, (
        "README's claims table is stale: paste `python -m paperlib.study --scale full --summary`"
    )


def test_the_readme_says_what_the_committed_runs_are():
    """The paragraph above the table states the committed runs' regime, provenance and the HiMo
    claims' reading: each statement is checked against claims.json (a new study rewrites both
    the paragraph and this test)."""
    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    decided = load_claims("full")
    assert "by code that recorded no provenance" in readme
    assert [v["code_hash"] for v in decided["code_versions"]] == [None]
    himo = [c for c in decided["claims"] if c["paper"] == "HiMo-CLIP"]
    assert '"untestable: the base is forgotten"' in readme
    assert all(
        c["verdict"] == "untestable" and "the base is forgotten" in c["reason"] for c in himo
    )
    assert "at lr 5e-4 with 10 warm-up steps" in readme
    assert {(c["regime"]["lr"], c["regime"]["warmup_steps"]) for c in himo} == {(5e-4, 10)}
    assert "keep about a fifth of the bases' short I2T R@1" in readme
    shares = [c["retention"]["variant"]["world-short/i2t_hit1"] for c in himo]
    assert all(0.15 <= share <= 0.25 for share in shares), shares


def test_the_readme_s_study_cost_is_what_the_runs_in_progress_recorded():
    """The `make study` paragraph's figures: the recipe stage's core-seconds, runs and mean run
    from its ``run.done`` records under ``results/in-progress/full``, and the hours the planned
    study runs take at that mean on two workers (a new full study rewrites both)."""
    import json
    import re

    from paperlib.study.design import plan
    from paperlib.study.reader import results_root_at
    from paperlib.study.status import record_seconds

    readme = " ".join((REPO_ROOT / "README.md").read_text().split())
    found = re.search(
        r"the recipe stage took ([\d,]+) core-seconds for its (\d+) runs \((\d+) s a run.*?"
        r"training the study's (\d+) runs takes about ([\d.]+) hours more",
        readme,
    )
    assert found, "README's make study paragraph no longer states the recipe stage's cost"
    root = REPO_ROOT / "results" / "in-progress"
    records = sorted((root / "full" / "recipe").glob("*/*/run.done"))
    seconds = [record_seconds(json.loads(done.read_text())) for done in records]
    mean = sum(seconds) / len(seconds)
    assert found.group(1) == f"{sum(seconds):,.0f}" and int(found.group(2)) == len(seconds)
    assert int(found.group(3)) == round(mean)
    with results_root_at(root):
        runs = plan("full")
    assert int(found.group(4)) == len(runs)
    assert float(found.group(5)) == round(len(runs) * mean / 2 / 3600, 1)
    picks = json.loads((root / "full" / "recipe.json").read_text())["arms"]
    assert "lr 3e-5 with 25 % warm-up for the three HiMo arms" in readme
    assert "1e-4 with 5 % for HyCoCLIP and ARGENT" in readme
    chosen = {arm: (e["pick"]["lr"], e["pick"]["warmup"]) for arm, e in picks.items()}
    assert chosen == {"MoLo": (3e-5, 0.25), "InfoNCE (λ=0)": (3e-5, 0.25),
                      "Long-CLIP": (3e-5, 0.25), "HyCoCLIP": (1e-4, 0.05),
                      "ARGENT": (1e-4, 0.05)}  # fmt: skip
    assert all(e["pick"]["retained"] and e["pick"]["at_grid_edge"] is None for e in picks.values())
