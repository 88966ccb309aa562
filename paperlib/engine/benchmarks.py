"""The papers' benchmarks, one record each: data layout, loader, embedding pass, metrics, task.

``BENCHMARK_REGISTRY[name]`` is a :class:`Benchmark`; adding a benchmark is adding one entry.
Scores follow the model's geometry (:class:`Scoring`): cosine for Euclidean models
(``docs/methods/himo-clip.md#inference``), ``−d_L`` for hyperbolic ones
(``docs/methods/argent.md#meru``); PEP (an
entailment-cone score, ``docs/methods/argent.md#pep``) only
applies to hyperbolic ones.

Generated world (one shared embedding pass, ``engine.evaluation.world_embeddings``):

- ``world-long`` / ``world-short``: 1:1 retrieval R@1/5/10 with long / short captions;
- ``world-monotonicity``: HiMo@2, HiMo@3, HiMo@K over all cumulative sentence prefixes, SSI
  with one injected noise sentence (lower is better);
- ``world-cola``: COLA-style top-1 accuracy on colour-swapped image pairs;
- ``world-zeroshot``: zero-shot classification per taxonomy level (``world-zeroshot-L1..L3``);
- ``world-hierarchy``: HierarCaps-style d_corr and hierarchical retrieval P/R on the world's
  4-level chains (compared as texts), plus PEP AUC/AP for hyperbolic models.

Real data, each read from a root folder holding ``Benchmark.layout`` (checked before any
embedding; ``a|b`` means either file):

- ``hierarcaps``: the same metrics as ``world-hierarchy`` on the HierarCaps test set; PEP
  follows :class:`PEPProtocol` (kept ids, per-image or one shared negative pool);
- ``urban1k`` / ``docci`` / ``long-dci``: 1:1 long-caption retrieval R@1/5/10
  (``docs/methods/himo-clip.md#himo-evaluation``), and
  ``<name>-monotonicity``: HiMo@2/HiMo@3 on ``cumulative_segments`` cuts, SSI with one noise
  sentence drawn (seeded) from the other captions;
- ``flickr30k`` / ``coco``: 5-captions-per-image retrieval (text t belongs to image t // 5);
- ``himo-docci``: HiMo@K over the given cumulative prefixes (DOCCI test images);
- ``imagenet`` and the other 15 datasets of MERU's and HyCoCLIP's zero-shot suite
  (``data.classification.ZEROSHOT_SUITE``: food101, cifar10, ..., country211): zero-shot
  top-1/top-5 and mean per-class recall (the references' metric: macro accuracy) with the
  references' class names and prompt ensembles;
- ``cola``: COLA multi-object top-1 accuracy (COLA's text-to-image rule).

How the images and captions are prepared follows the model's reference code
(:class:`EvalProtocol`): COCO/Flickr30k retrieval on the model's resize + centre crop
(CLIP, Long-CLIP, HiMo) or on a squeezed ``Resize((224, 224))`` with every caption of an
image (MERU, HyCoCLIP; ARGENT builds on them), every other benchmark on the model's own
transform; each results file records the protocol it ran.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from paperlib.data import loaders
from paperlib.data.classification import (
    SUITE,
    ZEROSHOT_SUITE,
    load_suite_dataset,
    prompt_templates,
)
from paperlib.data.classification import class_names as suite_class_names
from paperlib.data.images import LoadReport
from paperlib.data.sample import resolve_image
from paperlib.metrics import hierarchy, items, monotonicity, results, retrieval, zeroshot
from paperlib.metrics.scores import pairwise_scores

PEP_NEGATIVES = ("per-image", "shared")


@dataclass(frozen=True)
class PEPProtocol:
    """Which pairs PEP scores (``docs/methods/argent.md#pep``; the paper's cleaned list cannot be
    re-made here).

    ``kept``: row ids of the images to keep (the paper keeps 522 of 1,000; default all).
    ``negatives``: ``"per-image"`` (a seeded draw of ``pool_size`` other images per image,
    our default) or ``"shared"`` (one fixed pool for every image, as the paper's 100
    least-retrieved captions: ``pool`` row ids when given, else one seeded draw).
    """

    kept: tuple[int, ...] | None = None
    negatives: str = "per-image"
    pool_size: int = 100
    pool: tuple[int, ...] | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.negatives not in PEP_NEGATIVES:
            raise ValueError(
                f"PEP negatives must be one of {PEP_NEGATIVES}; got {self.negatives!r}"
            )
        if self.pool_size < 1:
            raise ValueError(f"PEP pool_size must be at least 1; got {self.pool_size}")
        if self.pool is not None and self.negatives != "shared":
            raise ValueError("a PEP negative pool (pool ids) needs negatives='shared'")


RETRIEVAL_TRANSFORMS = ("crop", "squeeze")
CAPTION_SETS = ("first-5", "all")
FAMILIES = ("clip", "meru")


@dataclass(frozen=True)
class EvalProtocol:
    """How real images and captions are prepared, as the model family's reference code does.

    ``retrieval_transform`` (COCO, Flickr30k): ``"crop"``, the model's resize + centre crop
    (CLIP's, Long-CLIP's and HiMo's evaluation), or ``"squeeze"``, bicubic
    ``Resize((s, s))`` without a crop (MERU's and HyCoCLIP's retrieval evaluator).
    ``captions`` (COCO): ``"first-5"`` per image (Long-CLIP's, HiMo's) or ``"all"`` (MERU's,
    HyCoCLIP's: every caption of val2017). Zero-shot classification always uses the model's
    own resize + centre crop (both families do).
    """

    retrieval_transform: str = "crop"
    captions: str = "first-5"

    def __post_init__(self) -> None:
        if self.retrieval_transform not in RETRIEVAL_TRANSFORMS:
            raise ValueError(
                f"retrieval_transform must be one of {RETRIEVAL_TRANSFORMS}; "
                f"got {self.retrieval_transform!r}"
            )
        if self.captions not in CAPTION_SETS:
            raise ValueError(f"captions must be one of {CAPTION_SETS}; got {self.captions!r}")

    @classmethod
    def reference(cls, family: str, retrieval_transform=None, captions=None) -> EvalProtocol:
        """The protocol of ``family`` (``clip``: CLIP, Long-CLIP, HiMo; ``meru``: MERU,
        HyCoCLIP, ARGENT and MERU's CLIP baselines), with the choices given overriding it."""
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}; got {family!r}")
        meru = family == "meru"
        return cls(
            retrieval_transform or ("squeeze" if meru else "crop"),
            captions or ("all" if meru else "first-5"),
        )


@dataclass(frozen=True)
class EmbedOptions:
    """What an embedding pass needs besides the samples: SSI's ``noise_seed``, the prompt
    ``templates`` of a classification benchmark and the COCO ``captions`` set."""

    noise_seed: int = 0
    templates: Sequence[str] = ()
    captions: str = "first-5"


@dataclass(frozen=True)
class Scoring:
    """How features are compared: ``geometry`` (euclidean | hyperbolic), curvature ``curv``
    (hyperbolic only) and the PEP protocol of real HierarCaps."""

    geometry: str
    curv: float = 0.0
    pep: PEPProtocol = field(default_factory=PEPProtocol)


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: ``source`` (world | hierarcaps | real); ``tasks`` maps each dataset name it
    writes to its CLIP_benchmark task; ``metrics(emb, name, scoring)`` -> {dataset: metrics};
    real ones add their root ``layout``, ``load(root)`` -> samples and ``embed(embedder,
    samples, options)`` -> features (one pass, :class:`EmbedOptions`); ``retrieval`` marks
    the benchmarks :class:`EvalProtocol`'s retrieval transform applies to."""

    name: str
    source: str
    tasks: dict[str, str]
    metrics: Callable[[dict[str, Any], str, Scoring], dict[str, dict[str, float]]]
    layout: tuple[str, ...] = ()
    load: Callable[[Path], list] | None = None
    embed: Callable[..., dict[str, Any]] | None = None
    nested: str | None = None  # a sub-folder accepted as the root (Urban1k's archive)
    retrieval: bool = False
    # warnings(emb, name, scoring) -> sentences a results file records and the console shows
    warnings: Callable[[dict[str, Any], str, Scoring], list[str]] | None = None


# --------------------------------------------------------------------------- images


class LazyImages(Sequence):
    """Image paths that decode to RGB PIL images only when sliced (one batch at a time)."""

    def __init__(self, paths: Sequence[str | Path]) -> None:
        self.paths = list(paths)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index):

        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        report = LoadReport()
        image = resolve_image(self.paths[index], report)
        if image is None:
            reason = f" ({report.skipped[0][1]})" if report.skipped else ""
            raise FileNotFoundError(f"image {self.paths[index]} is missing or unreadable{reason}")
        return image


# --------------------------------------------------------------------------- embedding passes


def segment_embeddings(embed, captions: Sequence[str]) -> dict[str, Tensor]:
    """HiMo@2/3 inputs: each caption's 2 and 3 cumulative segments (``segments{k}``) and the
    rows of the captions long enough to have them (``segments{k}_rows``;
    ``docs/methods/himo-clip.md#segments``)."""
    out: dict[str, Tensor] = {}
    for k in (2, 3):
        segs = [monotonicity.cumulative_segments(c, k) for c in captions]
        keep = [i for i, seg in enumerate(segs) if seg is not None]
        out[f"segments{k}_rows"] = torch.tensor(keep, dtype=torch.long)
        texts = [t for i in keep for t in segs[i]]
        out[f"segments{k}"] = (
            embed.texts(texts).view(len(keep), k, -1) if keep else torch.zeros(0, k, 1)
        )
    return out


def _embed_long_captions(embed, samples: list, options: EmbedOptions) -> dict[str, Any]:
    captions = [s.caption for s in samples]
    noisy = monotonicity.inject_noise(captions, 1, seed=options.noise_seed)
    out: dict[str, Any] = {
        "image": embed.images(LazyImages([s.image for s in samples])),
        "caption": embed.texts(captions),
        "noisy_caption": embed.texts(noisy),
    }
    out.update(segment_embeddings(embed, captions))
    return out


def _embed_five_captions(embed, samples: list, options: EmbedOptions) -> dict[str, Any]:
    keep = None if options.captions == "all" else 5
    captions = [s.captions[:keep] for s in samples]
    return {
        "image": embed.images(LazyImages([s.image for s in samples])),
        "captions": embed.texts([c for caps in captions for c in caps]),
        "captions_per_image": torch.tensor([len(caps) for caps in captions]),
    }


def _embed_prefixes(embed, samples: list, options: EmbedOptions) -> dict[str, Any]:
    return {
        "image": embed.images(LazyImages([s.image for s in samples])),
        "segments_all": embed.texts([t for s in samples for t in s.segments]),
        "segments_all_lengths": torch.tensor([len(s.segments) for s in samples]),
    }


def _embed_classes(embed, samples: list, options: EmbedOptions) -> dict[str, Any]:
    names, templates = samples[0].meta["class_names"], list(options.templates)
    flat = [t.format(n) for n in names for t in templates]
    return {
        "image": embed.images(LazyImages([s.image for s in samples])),
        "labels": torch.tensor([s.label for s in samples]),
        "prompts": embed.texts(flat).view(len(names), len(templates), -1),
    }


def _embed_cola(embed, samples: list, options: EmbedOptions) -> dict[str, Any]:
    pairs = LazyImages([p for s in samples for p in s.meta["images"]])
    texts = embed.texts([c for s in samples for c in s.captions])
    return {
        "cola_image": embed.images(pairs).view(len(samples), 2, -1),
        "cola_text": texts.view(len(samples), 2, -1),
    }


# --------------------------------------------------------------------------- scores


def _retrieval(s: Scoring, image: Tensor, text: Tensor, positive: Tensor | None = None):
    scores = pairwise_scores(image, text, s.geometry, s.curv)
    return retrieval.retrieval_metrics_from_scores(scores, positive)


def _himo_at_2_3(emb: dict[str, Any], s: Scoring) -> dict[str, float]:
    """HiMo@2 and @3 over the captions with enough sentences (others left out,
    ``docs/methods/himo-clip.md#segments``)."""
    out: dict[str, float] = {}
    for k, name in ((2, results.HIMO_AT_2), (3, results.HIMO_AT_3)):
        if len(emb[f"segments{k}_rows"]):
            out[name] = float(np.mean(items.rise_items(emb, s.geometry, s.curv, k)))
    return out


def _himo_at_k(emb: dict[str, Any], s: Scoring) -> float:
    """HiMo@K over every image with more than one segment."""
    rows = items.segment_score_rows(emb, s.geometry, s.curv)
    return monotonicity.himo_at_k([r for r in rows if len(r) > 1])


def _ssi(emb: dict[str, Any], s: Scoring) -> float:
    """SSI between each image's score with its caption and with the noise-injected caption."""
    return float(np.mean(items.ssi_items(emb, s.geometry, s.curv)))


# --------------------------------------------------------------------------- metrics


def _long_retrieval(emb, name: str, s: Scoring):
    return {name: _retrieval(s, emb["image"], emb["caption"])}


def _short_retrieval(emb, name: str, s: Scoring):
    # short world captions repeat (super-category + background): an identical caption
    # counts as correct, so a tie between duplicates is not scored as a miss
    positive = retrieval.same_text_positives(emb["short_texts"])
    return {name: _retrieval(s, emb["image"], emb["short_caption"], positive)}


def _world_monotonicity(emb, name: str, s: Scoring):
    out = _himo_at_2_3(emb, s)
    out[results.HIMO_AT_K] = _himo_at_k(emb, s)
    out[results.SSI] = _ssi(emb, s)
    return {name: out}


def _cola(emb, name: str, s: Scoring):
    accuracy = float(np.mean(items.cola_items(emb, s.geometry, s.curv)))
    return {name: {results.COLA_ACCURACY: accuracy}}


def _world_zeroshot(emb, name: str, s: Scoring):
    out = {}
    for level in (1, 2, 3):
        classes = zeroshot.class_embeddings(emb[f"prompts_L{level}"], s.geometry, s.curv)
        scores = zeroshot.zero_shot_scores(emb["image"], classes, s.geometry, s.curv)
        labels = emb["labels"][:, level - 1]
        out[f"{name}-L{level}"] = zeroshot.zero_shot_metrics(scores, labels)
    return out


def pep_pairs(roots: Sequence[str], levels: int, protocol: PEPProtocol) -> hierarchy.PEPPairs:
    """The (caption → image) pairs PEP scores under ``protocol`` (its kept rows, negatives)."""
    kept = protocol.kept
    eligible = len(roots) if kept is None else len(kept)
    return hierarchy.build_pep_pairs(
        roots,
        levels,
        kept=kept,
        pool_size=min(protocol.pool_size, eligible - 1),
        seed=protocol.seed,
        negatives=protocol.negatives,
        pool=protocol.pool,
    )


def pep_results(
    image: Tensor, chain: Tensor, roots: Sequence[str], curv: float, protocol: PEPProtocol
) -> dict[str, float]:
    """PEP AUC/AP over every level and per level (``_L1``..), and at the finest level."""
    pairs = pep_pairs(roots, chain.shape[1], protocol)
    out = hierarchy.pep_metrics(image, chain, pairs, curv)
    levels = chain.shape[1]
    for level in range(levels):
        at_level = hierarchy.pep_pairs_at_level(pairs, level)
        metrics = hierarchy.pep_metrics(image, chain, at_level, curv)
        out.update({f"{k}_L{level + 1}": v for k, v in metrics.items()})
    out["pep_auc_finest"] = out[f"pep_auc_L{levels}"]
    out["pep_ap_finest"] = out[f"pep_ap_L{levels}"]
    return out


def pep_ties(
    image: Tensor, chain: Tensor, roots: Sequence[str], curv: float, protocol: PEPProtocol
) -> list[str]:
    """A sentence for each level whose PEP pairs all score the same (every image outside
    every cone scores 0, ``docs/methods/argent.md#pep``): its AUC is 0.5 and its AP the share
    of positives by construction, whatever the model."""
    pairs = pep_pairs(roots, chain.shape[1], protocol)
    out = []
    for level in range(chain.shape[1]):
        at = hierarchy.pep_pairs_at_level(pairs, level)
        parent = chain[torch.as_tensor(at.row), torch.as_tensor(at.level)]
        scores = hierarchy.entailment_score(parent, image[torch.as_tensor(at.image)], curv)
        if bool((scores == scores[0]).all()):
            out.append(
                f"PEP level {level + 1}: all {len(scores)} pairs score {float(scores[0]):.3g} "
                "(no image inside any caption's cone), so pep_auc_L"
                f"{level + 1} = 0.5 and its AP say nothing of the model"
            )
    return out


def kept_rows(emb: dict[str, Any], kept: Sequence[int] | None) -> dict[str, Any]:
    """HierarCaps embeddings restricted to the ``kept`` rows (all rows for None): the images,
    their chains and chain texts, so d_corr and hierarchical P/R score the kept images against
    the kept images' captions only (the paper's cleaned set)."""
    if kept is None:
        return emb
    n = len(emb["roots"])
    bad = [k for k in kept if not 0 <= k < n]
    if bad:
        raise ValueError(f"PEP kept ids {bad[:3]} are outside the {n} HierarCaps rows")
    rows = torch.tensor(list(kept), dtype=torch.long)
    out = {**emb, "image": emb["image"][rows], "chain": emb["chain"][rows]}
    if emb.get("chain_texts") is not None:
        levels = emb["chain"].shape[1]
        texts = emb["chain_texts"]
        out["chain_texts"] = [texts[k * levels + j] for k in kept for j in range(levels)]
    return out


def _hierarchy(emb, name: str, s: Scoring):
    hyperbolic = s.geometry == "hyperbolic"
    protocol = s.pep if name == "hierarcaps" else PEPProtocol()
    kept = kept_rows(emb, protocol.kept)
    out = hierarchy.hierarcaps_metrics(
        kept["image"],
        kept["chain"],
        s.geometry,
        root=None if hyperbolic else emb["empty"],
        curv=s.curv if hyperbolic else None,
        caption_texts=kept.get("chain_texts"),
    )
    if hyperbolic:
        out.update(pep_results(emb["image"], emb["chain"], emb["roots"], s.curv, protocol))
    return {name: out}


def _hierarchy_warnings(emb, name: str, s: Scoring) -> list[str]:
    """PEP levels whose scores all tie (hyperbolic models, :func:`pep_ties`)."""
    if s.geometry != "hyperbolic":
        return []
    protocol = s.pep if name == "hierarcaps" else PEPProtocol()
    return pep_ties(emb["image"], emb["chain"], emb["roots"], s.curv, protocol)


def _long_caption_metrics(emb, name: str, s: Scoring):
    mono = _himo_at_2_3(emb, s)
    mono[results.SSI] = _ssi(emb, s)
    return {name: _retrieval(s, emb["image"], emb["caption"]), f"{name}-monotonicity": mono}


def _five_caption_retrieval(emb, name: str, s: Scoring):
    n = len(emb["image"])
    owner = torch.repeat_interleave(torch.arange(n), emb["captions_per_image"])
    positive = torch.arange(n)[:, None] == owner[None, :]  # text t's image (t // 5)
    return {name: _retrieval(s, emb["image"], emb["captions"], positive)}


def _prefix_monotonicity(emb, name: str, s: Scoring):
    return {name: {results.HIMO_AT_K: _himo_at_k(emb, s)}}


def _classification(emb, name: str, s: Scoring):
    classes = zeroshot.class_embeddings(emb["prompts"], s.geometry, s.curv)
    scores = zeroshot.zero_shot_scores(emb["image"], classes, s.geometry, s.curv)
    return {name: zeroshot.zero_shot_metrics(scores, emb["labels"])}


# --------------------------------------------------------------------------- loaders


def _load_imagenet(root: Path) -> list:
    """ImageNet's ``val/<wnid>/`` images; class names from ``classnames.json|txt`` when the
    root has one, else the references' 1,000 names (sorted-wnid order)."""
    given = [root / f"classnames{e}" for e in (".json", ".txt")]
    names = next((p for p in given if p.is_file()), None)
    if names is None:
        names = suite_class_names("imagenet")
    samples = loaders.load_image_folder(root / "val", names)
    wnids = sorted(p.name for p in (root / "val").iterdir() if p.is_dir())
    class_names = loaders.load_class_names(names, wnids)  # all classes, even past a limit
    for sample in samples:
        sample.meta["class_names"] = class_names
    return samples


COCO_CAPTIONS = "captions_val2017.json"


def _load_coco(root: Path) -> list:
    """COCO val2017 with every caption of an image (at least 5): ``captions_val2017.json`` at
    the root (Long-CLIP's layout) or under ``annotations/`` (COCO's own and MERU's)."""
    flat, nested = root / COCO_CAPTIONS, root / "annotations" / COCO_CAPTIONS
    captions = flat if flat.is_file() else nested
    return loaders.load_coco_captions(captions, root / "val2017", keep_all=True)


# --------------------------------------------------------------------------- the registry

RETRIEVAL, MONOTONICITY = "zeroshot_retrieval", "monotonicity"
COMPOSITION, CLASSIFICATION, HIERARCHY = "composition", "zeroshot_classification", "hierarchy"


def _long(name: str, layout: tuple[str, ...], load, nested: str | None = None) -> Benchmark:
    tasks = {name: RETRIEVAL, f"{name}-monotonicity": MONOTONICITY}
    return Benchmark(
        name, "real", tasks, _long_caption_metrics, layout, load, _embed_long_captions, nested
    )


_ZEROSHOT_TASKS = {f"world-zeroshot-L{k}": CLASSIFICATION for k in (1, 2, 3)}

# one benchmark per entry: name, source, {dataset: task}, metrics, root layout, loader, embedding
# fmt: off
BENCHMARK_REGISTRY: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark("world-long", "world", {"world-long": RETRIEVAL}, _long_retrieval),
    Benchmark("world-short", "world", {"world-short": RETRIEVAL}, _short_retrieval),
    Benchmark("world-monotonicity", "world", {"world-monotonicity": MONOTONICITY},
              _world_monotonicity),
    Benchmark("world-cola", "world", {"world-cola": COMPOSITION}, _cola),
    Benchmark("world-zeroshot", "world", _ZEROSHOT_TASKS, _world_zeroshot),
    Benchmark("world-hierarchy", "world", {"world-hierarchy": HIERARCHY}, _hierarchy,
              warnings=_hierarchy_warnings),
    Benchmark("hierarcaps", "hierarcaps", {"hierarcaps": HIERARCHY}, _hierarchy,
              ("hierarcaps_test.csv",), warnings=_hierarchy_warnings),
    _long("urban1k", ("caption", "image"), loaders.load_urban1k, nested="Urban1k"),
    _long("docci", ("images", "docci_descriptions.jsonlines|test_set.jsonl"), loaders.load_docci),
    _long("long-dci", ("dci_long.csv", "images"),
          lambda r: loaders.load_long_dci(r / "dci_long.csv", r / "images")),
    Benchmark("flickr30k", "real", {"flickr30k": RETRIEVAL}, _five_caption_retrieval,
              ("test_1k.txt", "images"),
              lambda r: loaders.load_flickr30k(r / "test_1k.txt", r / "images"),
              _embed_five_captions, retrieval=True),
    Benchmark("coco", "real", {"coco": RETRIEVAL}, _five_caption_retrieval,
              (f"{COCO_CAPTIONS}|annotations/{COCO_CAPTIONS}", "val2017"), _load_coco,
              _embed_five_captions, retrieval=True),
    Benchmark("himo-docci", "real", {"himo-docci": MONOTONICITY}, _prefix_monotonicity,
              ("himo_docci_data.json", "images"),
              lambda r: loaders.load_himo_docci(r / "himo_docci_data.json", r / "images"),
              _embed_prefixes),
    Benchmark("imagenet", "real", {"imagenet": CLASSIFICATION}, _classification,
              ("val",), _load_imagenet, _embed_classes),
    *(Benchmark(name, "real", {name: CLASSIFICATION}, _classification, SUITE[name].layout,
                partial(load_suite_dataset, name), _embed_classes)
      for name in ZEROSHOT_SUITE if name != "imagenet"),
    Benchmark("cola", "real", {"cola": COMPOSITION}, _cola,
              ("COLA_multiobjects_matching_benchmark.json", "images"),
              lambda r: loaders.load_cola(r / "COLA_multiobjects_matching_benchmark.json",
                                          r / "images"),
              _embed_cola),
)}
# fmt: on

BENCHMARKS = tuple(BENCHMARK_REGISTRY)
WORLD_BENCHMARKS = tuple(n for n, b in BENCHMARK_REGISTRY.items() if b.source == "world")
REAL_BENCHMARKS = tuple(n for n, b in BENCHMARK_REGISTRY.items() if b.source == "real")
LONG_CAPTION_BENCHMARKS = tuple(
    n for n, b in BENCHMARK_REGISTRY.items() if b.embed is _embed_long_captions
)
TASKS = {d: t for b in BENCHMARK_REGISTRY.values() for d, t in b.tasks.items()}
CLASSIFICATION_BENCHMARKS = tuple(
    n for n, b in BENCHMARK_REGISTRY.items() if b.embed is _embed_classes
)


#: CLIP_benchmark's names of this registry's benchmarks (``--dataset``), accepted as aliases;
#: its ``mscoco_captions`` is the Karpathy 5k test split of COCO 2014, ``coco`` here val2017's
BENCHMARK_ALIASES = {
    "imagenet1k": "imagenet",
    "mscoco_captions": "coco",
    "mscoco_captions2017": "coco",
    "fgvc_aircraft": "aircraft",
    "flowers": "flowers102",
    **{f"vtab/{n}": n for n in ("pets", "caltech101", "eurosat", "resisc45", "dtd")},
    "vtab/flowers": "flowers102",
}


def canonical_benchmark(name: str) -> str:
    """The registry name of ``name``: itself, or the benchmark a CLIP_benchmark name means."""
    return BENCHMARK_ALIASES.get(name, name)


def reference_templates(name: str) -> list[str]:
    """The references' prompt ensemble of classification benchmark ``name``."""
    return prompt_templates(name)


def benchmark(name: str) -> Benchmark:
    """The registry entry of ``name``; ValueError listing the known names otherwise."""
    if name not in BENCHMARK_REGISTRY:
        raise ValueError(f"unknown benchmark {name!r}; expected one of {list(BENCHMARKS)}")
    return BENCHMARK_REGISTRY[name]


def benchmark_metrics(emb: dict[str, Any], name: str, scoring: Scoring):
    """{dataset name: metrics} of benchmark ``name`` from its embeddings."""
    return benchmark(name).metrics(emb, name, scoring)


def benchmark_warnings(emb: dict[str, Any], dataset: str, name: str, scoring: Scoring) -> list[str]:
    """The warnings benchmark ``name`` gives of its ``dataset``'s scores (none for most)."""
    spec = benchmark(name)
    return [] if spec.warnings is None else spec.warnings(emb, dataset, scoring)


def _has(root: Path, entry: str) -> bool:
    return any((root / option).exists() for option in entry.split("|"))


def check_root(name: str, root: str | Path | None) -> Path:
    """``root`` as a Path; FileNotFoundError naming the benchmark and its layout when the
    folder or one of its ``layout`` entries is missing."""
    spec = benchmark(canonical_benchmark(name))
    layout = ", ".join(f"<root>/{e.replace('|', ' or ')}" for e in spec.layout)
    if root is None:
        raise FileNotFoundError(
            f"benchmark {name!r} needs roots[{name!r}] (CLI: --root "
            f"{name}=PATH), a folder with {layout}"
        )
    root = Path(root).expanduser()
    if spec.nested and (root / spec.nested).is_dir():
        root = root / spec.nested
    missing = [e.replace("|", " or ") for e in spec.layout if not _has(root, e)]
    if not root.is_dir() or missing:
        what = "does not exist" if not root.is_dir() else f"lacks {', '.join(missing)}"
        raise FileNotFoundError(
            f"benchmark {name!r}: root {root} {what}; expected a folder with {layout}"
        )
    return root


def check_roots(names: Sequence[str], roots: dict[str, Any]) -> dict[str, Path]:
    """Each benchmark's checked root (:func:`check_root`); one FileNotFoundError naming every
    benchmark whose root is missing or incomplete (one alone keeps its full message)."""
    found, problems = {}, []
    for name in names:
        try:
            found[name] = check_root(name, roots.get(name))
        except FileNotFoundError as error:
            problems.append((name, roots.get(name), error))
    if len(problems) == 1:
        raise problems[0][2]
    if problems:
        listed = "; ".join(f"{n} ({root or 'no root given'})" for n, root, _ in problems)
        raise FileNotFoundError(
            f"{len(problems)} benchmark roots are missing or lack their layout: {listed}; "
            "give each with --root NAME=PATH (roots: in a preset), laid out as docs/data.md lists"
        )
    return found


def load_real(name: str, root: Path, limit: int | None = None) -> list:
    """The Samples of a real benchmark from its checked root (first ``limit`` of them)."""
    spec = benchmark(name)
    if spec.load is None:
        raise ValueError(f"benchmark {name!r} has no loader; expected one of {REAL_BENCHMARKS}")
    samples = spec.load(root)
    if not samples:
        raise ValueError(f"benchmark {name!r}: no samples found under {root}")
    return samples[:limit]
