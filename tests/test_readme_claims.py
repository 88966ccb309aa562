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
