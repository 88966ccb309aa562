"""The published-numbers file against the tables in SPEC §1.4 and §2.4 (parsed independently)."""

from __future__ import annotations

import re

import pytest

from paperlib.tables import published, published_table
from tests.conftest import SHARED_DATA

SPEC = SHARED_DATA.parent / "SPEC.md"


def _spec_rows(header_start: str) -> list[list[str]]:
    if not SPEC.is_file():
        pytest.skip(f"SPEC not found at {SPEC}")
    lines = SPEC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_retrieval_table_matches_spec():
    rows, source = published_table("himo_retrieval")
    assert "Table" in source
    spec = _spec_rows("| model | Urban1k |")
    assert len(spec) == len(rows)
    names = ["Urban1k", "DOCCI", "Long-DCI", "Flickr30k", "COCO"]
    for cells, row in zip(spec, rows):
        assert cells[0] == f"{row['model']} {row['arch']}"
        for name, cell in zip(names, cells[1:]):
            if cell == "–":
                assert row[name] is None
            else:
                i2t, t2i = map(float, cell.split("/"))
                assert row[name] == {"i2t_r1": i2t, "t2i_r1": t2i}


def test_argent_tables_match_spec():
    rows, _ = published_table("argent_main")
    spec = _spec_rows("| model | IN | avg16 |")
    assert [
        [
            f"{r['model']}-{r['arch']}",
            r["imagenet_acc1"],
            r["avg16_acc1"],
            r["coco_t2i_r5"],
            r["pep_auc"],
            r["pep_ap"],
        ]
        for r in rows
    ] == [[c[0], *map(float, c[1:])] for c in spec]
    text = SPEC.read_text()
    ablation = re.search(r"original Ent ([\d./]+);", text).group(1)
    assert published_table("argent_ablations")[0][0]["cls_acc1"] == float(ablation.split("/")[0])


def test_monotonicity_averages_are_consistent():
    rows, _ = published_table("himo_monotonicity")
    for row in rows:
        for key in ("himo@2", "himo@3"):
            values = [row[key][d] for d in ("Urban1k", "DOCCI", "Long-DCI")]
            assert abs(sum(values) / 3 - row[key]["avg"]) < 0.06, row["model"]


def test_unknown_table_names_the_file():
    with pytest.raises(KeyError, match="published.json"):
        published_table("nope")
    assert all("source" in v for k, v in published().items() if not k.startswith("_"))
