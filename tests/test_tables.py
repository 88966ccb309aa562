"""The published-numbers file against the tables of the method pages (docs/methods/himo-clip.md
and docs/methods/argent.md, #himo-published and #argent-published), parsed independently."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paperlib.study.plan.claims import CLAIMS
from paperlib.tables import published, published_table

METHODS = Path(__file__).resolve().parent.parent / "docs" / "methods"


def _page_rows(page: str, header_start: str) -> list[list[str]]:
    """The body rows of the Markdown table of ``page`` whose header starts with ``header_start``."""
    lines = (METHODS / page).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_retrieval_table_matches_the_method_page():
    rows, source = published_table("himo_retrieval")
    assert "Table" in source
    spec = _page_rows("himo-clip.md", "| model | Urban1k |")
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


def test_argent_tables_match_the_method_page():
    rows, _ = published_table("argent_main")
    page = _page_rows("argent.md", "| model | ImageNet | avg16 |")
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
    ] == [[c[0], *map(float, c[1:])] for c in page]
    ablations, _ = published_table("argent_ablations")
    page = _page_rows("argent.md", "| configuration | Cls |")
    assert [[r["cls_acc1"], r["r5"], r["pep_auc"], r["pep_ap"]] for r in ablations] == [
        [float(v) for v in c[1:]] for c in page
    ]


def test_monotonicity_table_matches_the_method_page():
    rows, _ = published_table("himo_monotonicity")
    page = {c[0]: c[1:] for c in _page_rows("himo-clip.md", "| model | HiMo@2 |")}
    assert len(page) == len(rows)
    for row in rows:
        cells = page[row["model"]]
        for key, cell in zip(("himo@2", "himo@3"), cells):
            values, avg = cell.split(" → ")
            assert [row[key][d] for d in ("Urban1k", "DOCCI", "Long-DCI")] == [
                float(v) for v in values.split("/")
            ]
            assert row[key]["avg"] == float(avg)
        assert row["himo@K_pearson"] == float(cells[2].replace("−", "-"))
        assert row["cola_top1"] == float(cells[3])


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


def test_each_paper_effect_names_the_one_table_and_the_rows_it_is_read_from():
    tables = published()
    for claim in CLAIMS:
        effect = claim.paper_effect
        if effect is None:
            continue
        row = effect.row()
        where = tables[effect.table]["where"]
        assert row.startswith(f"{where}: "), (claim.id, row)
        numbered = re.search(r"Table \d", where)
        assert numbered is None or numbered.group() in tables[effect.table]["source"], where
        for select in (effect.variant, effect.baseline or {}):
            assert " ".join(select.values()) in row, (claim.id, select, row)
    by_id = {c.id: c.paper_effect.row() for c in CLAIMS if c.paper_effect is not None}
    assert by_id["argent-pep-vs-hycoclip"] == "ARGENT Table 2: ARGENT S − HyCoCLIP S"
    assert by_id["argent-pep-vs-ent"].startswith("ARGENT Table 3: ")
    assert by_id["himo-h2-vs-longclip"].startswith("HiMo Table 2: ")
    assert by_id["himo-long-i2t-vs-longclip"].startswith("HiMo Table 1: ")
