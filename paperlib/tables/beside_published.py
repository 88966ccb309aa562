"""An evaluated model's numbers beside the published numbers of the same model.

Each published metric (``tables/published.json``) is mapped once, in :data:`PUBLISHED_METRICS`,
to the (dataset, metric) this project's evaluation writes and the scale between them
(published percentages = ours × 100). Published metrics with no counterpart here (the
16-dataset zero-shot average; SSI, whose dataset the paper does not name) are listed as
not evaluated rather than dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from paperlib.tables import published_table

_LONG = {"Urban1k": "urban1k", "DOCCI": "docci", "Long-DCI": "long-dci"}
_RETRIEVAL_SETS = {**_LONG, "Flickr30k": "flickr30k", "COCO": "coco"}
_RECALL = {"i2t_r1": "text_retrieval_recall@1", "t2i_r1": "image_retrieval_recall@1"}

# (table, published key path) -> (our dataset, our metric, scale); None: not evaluated here
PUBLISHED_METRICS: dict[tuple[str, tuple[str, ...]], tuple[str, str, float] | None] = {
    **{
        ("himo_retrieval", (ds, k)): (ours, _RECALL[k], 100.0)
        for ds, ours in _RETRIEVAL_SETS.items()
        for k in _RECALL
    },
    **{
        ("himo_monotonicity", (m, ds)): (f"{ours}-monotonicity", m, 100.0)
        for m in ("himo@2", "himo@3")
        for ds, ours in _LONG.items()
    },
    ("himo_monotonicity", ("himo@K_pearson",)): ("himo-docci", "himo@k_pearson", 1.0),
    ("himo_monotonicity", ("cola_top1",)): ("cola", "cola_accuracy", 100.0),
    ("argent_main", ("imagenet_acc1",)): ("imagenet", "acc1", 100.0),
    ("argent_main", ("avg16_acc1",)): None,
    ("argent_main", ("coco_t2i_r5",)): ("coco", "image_retrieval_recall@5", 100.0),
    ("argent_main", ("pep_auc",)): ("hierarcaps", "pep_auc", 100.0),
    ("argent_main", ("pep_ap",)): ("hierarcaps", "pep_ap", 100.0),
    ("hycoclip_zeroshot", ("imagenet_acc1",)): ("imagenet", "acc1", 100.0),
}


def _leaves(row: dict, prefix: tuple[str, ...] = ()) -> Iterable[tuple[tuple[str, ...], float]]:
    """(key path, number) of every numeric value under a published row (nested dicts)."""
    for key, value in row.items():
        if isinstance(value, dict):
            yield from _leaves(value, (*prefix, key))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield (*prefix, key), float(value)


def published_values(table: str, model: str, arch: str) -> list[tuple[tuple[str, ...], float]]:
    """The numbers of one published row, ``(key path, value)``; KeyError if it is absent."""
    rows, _ = published_table(table)
    for row in rows:
        if row.get("model") == model and row.get("arch", arch) == arch:
            return [(path, v) for path, v in _leaves(row) if path != ("arch",)]
    raise KeyError(f"published table {table!r} has no row model={model!r} arch={arch!r}")


def beside_published(
    results: Sequence[dict[str, Any]], refs: Sequence[tuple[str, str, str]]
) -> list[dict[str, Any]]:
    """One row per published number of ``refs`` ((table, model, arch)): ``ours`` (scaled like
    the published value) from the CLIP_benchmark ``results`` when that dataset was evaluated,
    else None; ``status``: compared | not evaluated here | not in this run."""
    ours = {(r["dataset"], m): v for r in results for m, v in r["metrics"].items()}
    out = []
    for table, model, arch in refs:
        for path, value in published_values(table, model, arch):
            if path[-1] == "avg":
                continue  # an average over datasets, not one number we compute
            target = PUBLISHED_METRICS.get((table, path))
            mine = None if target is None else ours.get(target[:2])
            status = (
                "not evaluated here"
                if target is None
                else "not in this run"
                if mine is None
                else "compared"
            )
            out.append(
                {
                    "table": table,
                    "model": f"{model} {arch}",
                    "published_metric": "/".join(path),
                    "dataset": target[0] if target else "",
                    "metric": target[1] if target else "",
                    "published": value,
                    "ours": None if mine is None else mine * target[2],
                    "status": status,
                }
            )
    return out


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`beside_published` as a markdown table (ours − published in Δ)."""
    lines = [
        "| published table | model | metric | dataset | published | ours | Δ |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours = "—" if r["ours"] is None else f"{r['ours']:.4g}"
        delta = "—" if r["ours"] is None else f"{r['ours'] - r['published']:+.3g}"
        dataset = r["dataset"] or r["status"]
        lines.append(
            f"| {r['table']} | {r['model']} | {r['published_metric']} | {dataset} | "
            f"{r['published']:.4g} | {ours} | {delta} |"
        )
    return "\n".join(lines)
