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
