"""An evaluated model's numbers beside the published numbers of the same model.

Each published metric (``tables/published.json``) is mapped once, in :data:`PUBLISHED_METRICS`,
to the (dataset, metric) this project's evaluation writes and the scale between them
(published percentages = ours × 100). The 16-dataset zero-shot average is the mean of the
suite's mean per-class recalls (the references' macro accuracy), present when all 16 were
evaluated. Published metrics with no counterpart here (SSI, whose dataset the paper does not
name) are listed as not evaluated rather than dropped silently.

Each compared row also says whether the protocol its results file records is the paper's
(:data:`PAPER_PROTOCOLS`: retrieval transform, COCO captions, PEP's kept count, negatives
and pool, prompt set, split); a row that ran otherwise is marked with what differs, and a row
whose results file records a ``subset`` (an evaluation limited to part of the data set) is
marked "subset, not comparable" with its size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from paperlib.data.classification import SUITE, ZEROSHOT_SUITE
from paperlib.tables import published_table

_LONG = {"Urban1k": "urban1k", "DOCCI": "docci", "Long-DCI": "long-dci"}
_RETRIEVAL_SETS = {**_LONG, "Flickr30k": "flickr30k", "COCO": "coco"}
_RECALL = {"i2t_r1": "text_retrieval_recall@1", "t2i_r1": "image_retrieval_recall@1"}

SUITE_AVERAGE = "zeroshot-16"  # the mean over data.classification.ZEROSHOT_SUITE

# what each paper's evaluation ran, per dataset (the keys a results file's "protocol" holds)
_MERU_ZEROSHOT = {"image_transform": "crop", "prompt_set": "meru-hycoclip"}
PAPER_PROTOCOLS: dict[str, dict[str, dict[str, Any]]] = {
    "argent_main": {
        "coco": {"image_transform": "squeeze", "captions": "all"},
        # the paper's pool is a chosen list of 100 low-ambiguity captions (``pool_ids``: a
        # pool given by id, as --pep-pool reads it); a pool drawn here is another pool
        "hierarcaps": {"pep": {"kept": 522, "negatives": "shared", "pool": 100, "pool_ids": True}},
        **{name: _MERU_ZEROSHOT for name in ZEROSHOT_SUITE},
    },
    "hycoclip_zeroshot": {"imagenet": _MERU_ZEROSHOT},
    "himo_retrieval": {
        "coco": {"image_transform": "crop", "captions": "first-5"},
        "flickr30k": {"image_transform": "crop"},
    },
}

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
    ("argent_main", ("avg16_acc1",)): (SUITE_AVERAGE, "mean_per_class_recall", 100.0),
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
    recorded = {r["dataset"]: r["protocol"] for r in results if "protocol" in r}
    subsets = {r["dataset"]: r["subset"] for r in results if r.get("subset")}
    suite = [ours.get((name, "mean_per_class_recall")) for name in ZEROSHOT_SUITE]
    if all(v is not None for v in suite):
        ours[(SUITE_AVERAGE, "mean_per_class_recall")] = sum(suite) / len(suite)
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
                    "protocol": ""
                    if mine is None
                    else subset_note(target[0], subsets)
                    + protocol_note(table, target[0], recorded),
                }
            )
    return out


def subset_note(dataset: str, subsets: dict[str, dict[str, int]]) -> str:
    """``subset, not comparable (n of N samples); `` where ``dataset`` (or a member of the
    suite average) was evaluated on part of its samples, else ''."""
    members = ZEROSHOT_SUITE if dataset == SUITE_AVERAGE else (dataset,)
    cut = [(name, subsets[name]) for name in members if name in subsets]
    if not cut:
        return ""
    sizes = ", ".join(
        f"{name + ': ' if dataset == SUITE_AVERAGE else ''}{s['samples']} of {s['of']} samples"
        for name, s in cut
    )
    return f"subset, not comparable ({sizes}); "


def protocol_differences(table: str, dataset: str, recorded: dict[str, Any]) -> list[str]:
    """How the protocol recorded for ``dataset`` differs from the paper's (``key=ours
    (paper: theirs)``; a suite dataset whose split is not the references' says so)."""
    paper = PAPER_PROTOCOLS.get(table, {}).get(dataset, {})
    out = []
    for key, theirs in paper.items():
        mine = recorded.get(key)
        if isinstance(theirs, dict):
            mine = mine or {}
            out += [
                f"{key}.{k}={mine.get(k)} (paper: {v})"
                for k, v in theirs.items()
                if mine.get(k) != v
            ]
        elif mine != theirs:
            out.append(f"{key}={mine} (paper: {theirs})")
    split = str(recorded.get("split", ""))
    if dataset in SUITE and split.startswith("every"):  # no TFDS split in the raw layout
        out.append(f"split: {split}")
    return out


def protocol_note(table: str, dataset: str, recorded: dict[str, dict[str, Any]]) -> str:
    """``as the paper`` or ``differs: ...`` for a compared row (the suite average: each
    member's differences, named by dataset); ``not recorded`` for results files written
    without a protocol."""
    members = ZEROSHOT_SUITE if dataset == SUITE_AVERAGE else (dataset,)
    if any(name not in recorded for name in members):
        return "not recorded"
    notes = []
    for name in members:
        differences = protocol_differences(table, name, recorded.get(name, {}))
        prefix = f"{name}: " if dataset == SUITE_AVERAGE else ""
        notes += [prefix + d for d in differences]
    return "differs: " + "; ".join(notes) if notes else "as the paper"


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`beside_published` as a markdown table (ours − published in Δ)."""
    lines = [
        "| published table | model | metric | dataset | published | ours | Δ | protocol |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours = "—" if r["ours"] is None else f"{r['ours']:.4g}"
        delta = "—" if r["ours"] is None else f"{r['ours'] - r['published']:+.3g}"
        dataset = r["dataset"] or r["status"]
        lines.append(
            f"| {r['table']} | {r['model']} | {r['published_metric']} | {dataset} | "
            f"{r['published']:.4g} | {ours} | {delta} | {r.get('protocol', '')} |"
        )
    return "\n".join(lines)
