"""Evaluate a training checkpoint on the papers' benchmarks; results in CLIP_benchmark's format.

One embedding pass per dataset (every image and text any of its benchmarks needs), cached on
disk under ``cache_dir`` keyed by the checkpoint (resolved path, size, mtime) and the dataset
spec. Scores follow the model's geometry: cosine for Euclidean models (SPEC §1.1), ``−d_L``
for hyperbolic ones (SPEC §2.2); PEP (an entailment-cone score) only applies to hyperbolic ones.

Benchmarks (``BENCHMARKS``):

- ``world-long`` / ``world-short``: 1:1 retrieval R@1/5/10 with the generated world's long /
  short captions (task ``zeroshot_retrieval``);
- ``world-monotonicity``: HiMo@2, HiMo@3 (``metrics.monotonicity`` cuts), HiMo@K over all
  cumulative sentence prefixes, SSI with one injected noise sentence (lower is better);
- ``world-cola``: COLA-style top-1 accuracy on colour-swapped image pairs;
- ``world-zeroshot``: zero-shot classification per taxonomy level (``world-zeroshot-L1..L3``);
- ``world-hierarchy``: HierarCaps-style d_corr and hierarchical retrieval P/R on the world's
  4-level chains (predictions compared with the chain as texts, HierarCaps' rule: a caption
  string shared by several chains is a hit for each), plus PEP AUC/AP for hyperbolic models;
- ``hierarcaps``: the same on the real HierarCaps test set (needs its root).

Real benchmarks (``REAL_BENCHMARKS``), each read from ``roots[name]`` in the layout of
``ROOT_LAYOUTS`` (checked before any embedding):

- ``urban1k`` / ``docci`` / ``long-dci``: 1:1 long-caption retrieval R@1/5/10 (SPEC §1.3), and
  ``<name>-monotonicity``: HiMo@2/HiMo@3 on ``cumulative_segments`` cuts, SSI with one noise
  sentence drawn (seeded) from the other captions;
- ``flickr30k`` / ``coco``: 5-captions-per-image retrieval (text t belongs to image t // 5);
- ``himo-docci``: HiMo@K over the given cumulative prefixes (DOCCI test images);
- ``imagenet``: zero-shot top-1/top-5 with class names and prompt templates;
- ``cola``: COLA multi-object top-1 accuracy (COLA's text-to-image rule).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from paperlib.data.loaders import require_path
from paperlib.engine.config import build_config
from paperlib.engine.methods import build_module, input_size
from paperlib.metrics import hierarchy, items, monotonicity, results, retrieval, zeroshot
from paperlib.metrics.scores import NonFiniteError, pairwise_scores

WORLD_BENCHMARKS = (
    "world-long",
    "world-short",
    "world-monotonicity",
    "world-cola",
    "world-zeroshot",
    "world-hierarchy",
)
LONG_CAPTION_BENCHMARKS = ("urban1k", "docci", "long-dci")
REAL_BENCHMARKS = LONG_CAPTION_BENCHMARKS + ("flickr30k", "coco", "himo-docci", "imagenet", "cola")
BENCHMARKS = WORLD_BENCHMARKS + ("hierarcaps",) + REAL_BENCHMARKS

# Files each real benchmark's root must hold (our choice where the papers name no layout).
ROOT_LAYOUTS: dict[str, tuple[str, ...]] = {
    "urban1k": ("caption", "image"),  # <id>.txt and <id>.jpg (root/Urban1k/ also accepted)
    "docci": ("images",),  # + docci_descriptions.jsonlines or test_set.jsonl
    "long-dci": ("dci_long.csv", "images"),  # filepath column relative to root/images
    "flickr30k": ("test_1k.txt", "images"),  # Karpathy 1k test, 'name.jpg#k<TAB>caption'
    "coco": ("captions_val2017.json", "val2017"),
    "himo-docci": ("himo_docci_data.json", "images"),  # images = the DOCCI test images
    "imagenet": ("val", "classnames"),  # val/<wnid>/*.JPEG; classnames.json or .txt
    "cola": ("COLA_multiobjects_matching_benchmark.json", "images"),
}


# --------------------------------------------------------------------------- model


def load_trained(checkpoint: str | Path, device: str | torch.device = "cpu"):
    """(module, preprocess, tokenizer, config) from a checkpoint written by ``engine.train``."""
    path = Path(checkpoint)
    if path.is_dir():
        path = path / "last.pt"
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path} (expected a last.pt from training)")
    state = torch.load(path, map_location="cpu", weights_only=True)
    if "config" not in state or "model" not in state:
        raise ValueError(f"{path} is not a paperlib training checkpoint (no 'config'/'model')")
    raw = dict(state["config"])
    raw["model"] = {**raw["model"], "init": "random"}  # the weights come from this file
    config = build_config(raw)
    module, preprocess, tokenizer = build_module(config, device)
    module.load_state_dict(state["model"])
    module.eval()
    return module, preprocess, tokenizer, config


def _stat_key(path: Path, suffix: str, digits: int) -> str:
    """A hash of a file's resolved path, size and modification time, and ``suffix``."""
    stat = path.stat()
    text = f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}{suffix}"
    return hashlib.sha1(text.encode()).hexdigest()[:digits]


def checkpoint_key(checkpoint: str | Path) -> str:
    """Cache key of a checkpoint file: hash of its resolved path, size and mtime."""
    path = Path(checkpoint).resolve()
    if path.is_dir():
        path = path / "last.pt"
    return _stat_key(path, "", 16)


class Embedder:
    """Batched, no-grad image/text embedding with the trained module."""

    def __init__(self, module, preprocess, tokenizer, batch_size: int = 128) -> None:
        self.module, self.preprocess, self.tokenizer = module, preprocess, tokenizer
        self.batch_size = batch_size
        self.device = next(module.parameters()).device

    @torch.no_grad()
    def texts(self, texts: Sequence[str]) -> Tensor:
        out = [
            self.module.embed_text(
                self.tokenizer(list(texts[i : i + self.batch_size])).to(self.device)
            )
            for i in range(0, len(texts), self.batch_size)
        ]
        return torch.cat(out).float().cpu()

    @torch.no_grad()
    def images(self, images: Sequence) -> Tensor:
        out = []
        for i in range(0, len(images), self.batch_size):
            pixels = torch.stack([self.preprocess(im) for im in images[i : i + self.batch_size]])
            out.append(self.module.embed_image(pixels.to(self.device)))
        return torch.cat(out).float().cpu()


def cached(path: Path, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Load ``path`` if present, else compute, save atomically and return."""
    if path.is_file():
        return torch.load(path, weights_only=True)
    value = compute()
    from paperlib.engine.checkpoint import atomic_save

    atomic_save(value, path)
    return value


# --------------------------------------------------------------------------- embedding passes


def segment_embeddings(embed: Embedder, captions: Sequence[str]) -> dict[str, Tensor]:
    """HiMo@2/3 inputs: each caption's 2 and 3 cumulative segments (``segments{k}``) and the
    rows of the captions long enough to have them (``segments{k}_rows``; SPEC §1.3)."""
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


def world_embeddings(embed: Embedder, size: int, seed: int, image_size: int) -> dict[str, Any]:
    """Every feature the world benchmarks need, in one pass over ``size`` world samples."""
    from paperlib.data.world import NOISE_SENTENCES, World, class_names, zeroshot_prompts

    world = World(seed=seed, image_size=image_size)
    samples = [world.sample(i) for i in range(size)]
    captions = [s.caption for s in samples]
    out: dict[str, Any] = {
        "image": embed.images([s.image for s in samples]),
        "caption": embed.texts(captions),
        "short_caption": embed.texts([s.short_caption for s in samples]),
        "noisy_caption": embed.texts(
            monotonicity.inject_noise(captions, 1, pool=list(NOISE_SENTENCES), seed=seed)
        ),
        "chain": embed.texts([c for s in samples for c in s.chain]).view(size, 4, -1),
        "labels": torch.tensor([s.meta["labels"] for s in samples]),
    }
    out.update(segment_embeddings(embed, captions))
    lengths = [len(s.segments) for s in samples]
    out["segments_all"] = embed.texts([t for s in samples for t in s.segments])
    out["segments_all_lengths"] = torch.tensor(lengths)
    pairs = [p for p in (world.cola_pair(i) for i in range(size)) if p is not None]
    out["cola_image"] = embed.images([s.image for p in pairs for s in p]).view(len(pairs), 2, -1)
    cola_texts = [
        t
        for p in pairs
        for t in (p[0].meta["cola"]["caption"], p[0].meta["cola"]["swapped_caption"])
    ]
    out["cola_text"] = embed.texts(cola_texts).view(len(pairs), 2, -1)
    for level in (1, 2, 3):
        prompts = zeroshot_prompts(level)
        names = class_names(level)
        flat = [p for n in names for p in prompts[n]]
        out[f"prompts_L{level}"] = embed.texts(flat).view(len(names), len(prompts[names[0]]), -1)
    out["empty"] = embed.texts([""])[0]
    out["roots"] = [s.chain[0] for s in samples]
    return out


def world_texts(seed: int, size: int) -> dict[str, list[str]]:
    """The texts of world samples ``0..size-1`` (nothing rendered, each scene drawn once):
    ``short_texts`` (short captions) and ``chain_texts`` (4-level chains, flat)."""
    from paperlib.data.world import draw_scene, scene_chain, scene_short_caption

    scenes = [draw_scene(seed, i) for i in range(size)]
    return {"short_texts": [scene_short_caption(scene) for scene in scenes],
            "chain_texts": [c for scene in scenes for c in scene_chain(scene)[0]]}  # fmt: skip


def world_short_captions(seed: int, size: int) -> list[str]:
    """The short captions of world samples ``0..size-1`` (:func:`world_texts`)."""
    return world_texts(seed, size)["short_texts"]


def file_key(path: Path, *extra: Any) -> str:
    """A cache key of a data file: its resolved path, size and modification time, and
    ``extra`` (limits, options), hashed; a different or changed file gets another key."""
    return _stat_key(path, f":{extra}", 12)


def hierarcaps_embeddings(embed: Embedder, root: str | Path, limit: int | None) -> dict[str, Any]:
    """Images and 4-level chains of the real HierarCaps test set (first ``limit`` rows), and
    the chain texts (hierarchical retrieval compares captions as texts)."""
    from paperlib.data.loaders import load_hierarcaps

    samples = load_hierarcaps(root)[:limit]
    return {
        "image": embed.images(LazyImages([s.image for s in samples])),
        "chain": embed.texts([c for s in samples for c in s.chain]).view(len(samples), 4, -1),
        "empty": embed.texts([""])[0],
        "roots": [s.chain[0] for s in samples],
        "chain_texts": [c for s in samples for c in s.chain],
    }


# --------------------------------------------------------------------------- real datasets


class LazyImages(Sequence):
    """Image paths that decode to RGB PIL images only when sliced (one batch at a time)."""

    def __init__(self, paths: Sequence[str | Path]) -> None:
        self.paths = list(paths)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index):
        from paperlib.data.sample import resolve_image

        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        image = resolve_image(self.paths[index])
        if image is None:
            raise FileNotFoundError(f"image {self.paths[index]} is missing or unreadable")
        return image


def readable_samples(samples: list, benchmark: str) -> tuple[list, list[tuple[str, str]]]:
    """The samples whose every image decodes (``data.images.load_rgb``), and the (path,
    reason) of each image that does not; a ValueError naming the benchmark if none is left."""
    from paperlib.data.images import LoadReport, load_rgb

    report = LoadReport()
    kept = [s for s in samples
            if all([load_rgb(p, report) is not None for p in s.meta.get("images", [s.image])])]  # fmt: skip
    if not kept:
        raise ValueError(f"benchmark {benchmark!r}: none of its {len(samples)} samples has "
                         f"readable images (e.g. {report.skipped[:2]})")  # fmt: skip
    return kept, report.skipped


def _has(root: Path, entry: str) -> bool:
    if entry == "classnames":
        return any((root / f"classnames{ext}").is_file() for ext in (".json", ".txt"))
    return (root / entry).exists()


def check_root(benchmark: str, root: str | Path | None) -> Path:
    """``root`` as a Path; FileNotFoundError naming the benchmark and its layout when the
    folder or one of ``ROOT_LAYOUTS[benchmark]`` is missing."""
    layout = ", ".join(
        f"<root>/{e}" + (".json or .txt" if e == "classnames" else "")
        for e in ROOT_LAYOUTS[benchmark]
    )
    if root is None:
        raise FileNotFoundError(
            f"benchmark {benchmark!r} needs roots[{benchmark!r}] (CLI: --root "
            f"{benchmark}=PATH), a folder with {layout}"
        )
    root = Path(root).expanduser()
    if benchmark == "urban1k" and (root / "Urban1k").is_dir():
        root = root / "Urban1k"
    missing = [e for e in ROOT_LAYOUTS[benchmark] if not _has(root, e)]
    if benchmark == "docci" and not any(
        (root / f).is_file() for f in ("docci_descriptions.jsonlines", "test_set.jsonl")
    ):
        missing.append("docci_descriptions.jsonlines or test_set.jsonl")
    if not root.is_dir() or missing:
        what = "does not exist" if not root.is_dir() else f"lacks {', '.join(missing)}"
        raise FileNotFoundError(
            f"benchmark {benchmark!r}: root {root} {what}; expected a folder with {layout}"
        )
    return root


def load_real(benchmark: str, root: Path, limit: int | None = None) -> list:
    """The Samples of a real benchmark from its checked root (first ``limit`` of them)."""
    from paperlib.data import loaders

    if benchmark == "urban1k":
        samples = loaders.load_urban1k(root)
    elif benchmark == "docci":
        samples = loaders.load_docci(root)
    elif benchmark == "long-dci":
        samples = loaders.load_long_dci(root / "dci_long.csv", root / "images")
    elif benchmark == "flickr30k":
        samples = loaders.load_flickr30k(root / "test_1k.txt", root / "images")
    elif benchmark == "coco":
        samples = loaders.load_coco_captions(root / "captions_val2017.json", root / "val2017")
    elif benchmark == "himo-docci":
        samples = loaders.load_himo_docci(root / "himo_docci_data.json", root / "images")
    elif benchmark == "imagenet":
        names = next(
            root / f"classnames{e}"
            for e in (".json", ".txt")
            if (root / f"classnames{e}").is_file()
        )
        samples = loaders.load_image_folder(root / "val", names)
        wnids = sorted(p.name for p in (root / "val").iterdir() if p.is_dir())
        class_names = loaders.load_class_names(names, wnids)  # all classes, even past a limit
        for sample in samples:
            sample.meta["class_names"] = class_names
    elif benchmark == "cola":
        samples = loaders.load_cola(root / "COLA_multiobjects_matching_benchmark.json",
                                    root / "images")  # fmt: skip
    else:
        raise ValueError(f"unknown real benchmark {benchmark!r}; expected one of {REAL_BENCHMARKS}")
    if not samples:
        raise ValueError(f"benchmark {benchmark!r}: no samples found under {root}")
    return samples[:limit]


def imagenet_templates(root: Path, templates: Sequence[str] | None = None) -> list[str]:
    """Prompt templates (``{}`` = class name): ``templates``, else ``root/templates.txt`` (one
    a line), else the generic templates of the generated world (our default; the papers use
    CLIP's 80 ImageNet templates, which the user supplies as templates.txt)."""
    from paperlib.data.world import PROMPT_TEMPLATES

    if templates is None:
        path = root / "templates.txt"
        templates = (
            [t for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]
            if path.is_file()
            else list(PROMPT_TEMPLATES)
        )
    bad = [t for t in templates if "{}" not in t]
    if not templates or bad:
        raise ValueError(f"imagenet prompt templates must each contain '{{}}'; got {bad[:3]}")
    return list(templates)


def real_embeddings(
    embed: Embedder,
    benchmark: str,
    samples: list,
    *,
    noise_seed: int = 0,
    templates: Sequence[str] = (),
) -> dict[str, Any]:
    """Every feature one real benchmark needs, in one pass over its samples."""
    images = LazyImages([s.image for s in samples])
    if benchmark in LONG_CAPTION_BENCHMARKS:
        captions = [s.caption for s in samples]
        out: dict[str, Any] = {
            "image": embed.images(images),
            "caption": embed.texts(captions),
            "noisy_caption": embed.texts(monotonicity.inject_noise(captions, 1, seed=noise_seed)),
        }
        out.update(segment_embeddings(embed, captions))
        return out
    if benchmark in ("flickr30k", "coco"):
        return {
            "image": embed.images(images),
            "captions": embed.texts([c for s in samples for c in s.captions]),
            "captions_per_image": torch.tensor([len(s.captions) for s in samples]),
        }
    if benchmark == "himo-docci":
        return {
            "image": embed.images(images),
            "segments_all": embed.texts([t for s in samples for t in s.segments]),
            "segments_all_lengths": torch.tensor([len(s.segments) for s in samples]),
        }
    if benchmark == "imagenet":
        names = samples[0].meta["class_names"]
        flat = [t.format(n) for n in names for t in templates]
        return {
            "image": embed.images(images),
            "labels": torch.tensor([s.label for s in samples]),
            "prompts": embed.texts(flat).view(len(names), len(templates), -1),
        }
    if benchmark == "cola":
        pairs = LazyImages([p for s in samples for p in s.meta["images"]])
        return {
            "cola_image": embed.images(pairs).view(len(samples), 2, -1),
            "cola_text": embed.texts([c for s in samples for c in s.captions]).view(
                len(samples), 2, -1
            ),
        }
    raise ValueError(f"unknown real benchmark {benchmark!r}; expected one of {REAL_BENCHMARKS}")


def real_metrics(
    emb: dict[str, Any], benchmark: str, geometry: str, curv: float
) -> dict[str, dict[str, float]]:
    """{dataset name: metrics} for one real benchmark from its cached embeddings."""
    if benchmark in LONG_CAPTION_BENCHMARKS:
        image = emb["image"]
        mono = _himo_at_2_3(emb, geometry, curv)
        mono[results.SSI] = _ssi(emb, geometry, curv)
        return {
            benchmark: _retrieval(geometry, curv, image, emb["caption"]),
            f"{benchmark}-monotonicity": mono,
        }
    if benchmark in ("flickr30k", "coco"):
        owner = torch.repeat_interleave(
            torch.arange(len(emb["image"])), emb["captions_per_image"]
        )  # text t's image (t // 5 for 5 captions each)
        positive = torch.arange(len(emb["image"]))[:, None] == owner[None, :]
        return {benchmark: _retrieval(geometry, curv, emb["image"], emb["captions"], positive)}
    if benchmark == "himo-docci":
        return {benchmark: {results.HIMO_AT_K: _himo_at_k(emb, geometry, curv)}}
    if benchmark == "imagenet":
        classes = zeroshot.class_embeddings(emb["prompts"], geometry, curv)
        scores = zeroshot.zero_shot_scores(emb["image"], classes, geometry, curv)
        return {benchmark: zeroshot.zero_shot_metrics(scores, emb["labels"])}
    if benchmark == "cola":
        return {benchmark: {results.COLA_ACCURACY: _cola_accuracy(emb, geometry, curv)}}
    raise ValueError(f"unknown real benchmark {benchmark!r}; expected one of {REAL_BENCHMARKS}")


# --------------------------------------------------------------------------- scores & metrics


def _retrieval(
    geometry: str, curv: float, image: Tensor, text: Tensor, positive: Tensor | None = None
) -> dict[str, float]:
    return retrieval.retrieval_metrics_from_scores(
        pairwise_scores(image, text, geometry, curv), positive
    )


def _himo_at_2_3(emb: dict[str, Any], geometry: str, curv: float) -> dict[str, float]:
    """HiMo@2 and @3 over the captions with enough sentences (others left out, SPEC §1.3)."""
    out: dict[str, float] = {}
    for k, name in ((2, results.HIMO_AT_2), (3, results.HIMO_AT_3)):
        if len(emb[f"segments{k}_rows"]):
            out[name] = float(np.mean(items.rise_items(emb, geometry, curv, k)))
    return out


def _himo_at_k(emb: dict[str, Any], geometry: str, curv: float) -> float:
    """HiMo@K over every image with more than one segment."""
    rows = items.segment_score_rows(emb, geometry, curv)
    return monotonicity.himo_at_k([r for r in rows if len(r) > 1])


def _ssi(emb: dict[str, Any], geometry: str, curv: float) -> float:
    """SSI between each image's score with its caption and with the noise-injected caption."""
    return float(np.mean(items.ssi_items(emb, geometry, curv)))


def _cola_accuracy(emb: dict[str, Any], geometry: str, curv: float) -> float:
    """COLA accuracy of the (pair, 2 images, 2 captions) features."""
    return float(np.mean(items.cola_items(emb, geometry, curv)))


def world_metrics(
    emb: dict[str, Any], benchmark: str, geometry: str, curv: float
) -> dict[str, dict[str, float]]:
    """{dataset name: metrics} for one world benchmark from its cached embeddings."""
    image = emb["image"]
    if benchmark == "world-long":
        return {benchmark: _retrieval(geometry, curv, image, emb["caption"])}
    if benchmark == "world-short":
        # short world captions repeat (super-category + background): an identical caption
        # counts as correct, so a tie between duplicates is not scored as a miss
        positive = retrieval.same_text_positives(emb["short_texts"])
        return {benchmark: _retrieval(geometry, curv, image, emb["short_caption"], positive)}
    if benchmark == "world-monotonicity":
        out = _himo_at_2_3(emb, geometry, curv)
        out[results.HIMO_AT_K] = _himo_at_k(emb, geometry, curv)
        out[results.SSI] = _ssi(emb, geometry, curv)
        return {benchmark: out}
    if benchmark == "world-cola":
        return {benchmark: {results.COLA_ACCURACY: _cola_accuracy(emb, geometry, curv)}}
    if benchmark == "world-zeroshot":
        out = {}
        for level in (1, 2, 3):
            classes = zeroshot.class_embeddings(emb[f"prompts_L{level}"], geometry, curv)
            scores = zeroshot.zero_shot_scores(image, classes, geometry, curv)
            out[f"{benchmark}-L{level}"] = zeroshot.zero_shot_metrics(
                scores, emb["labels"][:, level - 1]
            )
        return out
    if benchmark in ("world-hierarchy", "hierarcaps"):
        root = emb["empty"] if geometry == "euclidean" else None
        out = hierarchy.hierarcaps_metrics(image, emb["chain"], geometry, root=root,
                                           curv=curv if geometry == "hyperbolic" else None,
                                           caption_texts=emb.get("chain_texts"))  # fmt: skip
        if geometry == "hyperbolic":
            pool = min(100, len(emb["roots"]) - 1)
            pairs = hierarchy.build_pep_pairs(emb["roots"], 4, pool_size=pool)
            out.update(hierarchy.pep_metrics(image, emb["chain"], pairs, curv))
            levels = emb["chain"].shape[1]
            for level in range(levels):
                at_level = hierarchy.pep_pairs_at_level(pairs, level)
                metrics = hierarchy.pep_metrics(image, emb["chain"], at_level, curv)
                out.update({f"{k}_L{level + 1}": v for k, v in metrics.items()})
            out["pep_auc_finest"], out["pep_ap_finest"] = (
                out[f"pep_auc_L{levels}"],
                out[f"pep_ap_L{levels}"],
            )
        return {benchmark: out}
    raise ValueError(f"unknown benchmark {benchmark!r}; expected one of {list(BENCHMARKS)}")


TASKS = {
    "world-long": "zeroshot_retrieval",
    "world-short": "zeroshot_retrieval",
    "world-monotonicity": "monotonicity",
    "world-cola": "composition",
    "world-zeroshot": "zeroshot_classification",
    "world-hierarchy": "hierarchy",
    "hierarcaps": "hierarchy",
    **{b: "zeroshot_retrieval" for b in LONG_CAPTION_BENCHMARKS + ("flickr30k", "coco")},
    **{f"{b}-monotonicity": "monotonicity" for b in LONG_CAPTION_BENCHMARKS},
    "himo-docci": "monotonicity",
    "imagenet": "zeroshot_classification",
    "cola": "composition",
}


def check_sizes(world_size: int, batch_size: int, limits: dict[str, int | None]) -> None:
    """Refuse sizes that would evaluate nothing or something else than asked: the world needs
    at least 2 samples (retrieval over one item ranks nothing), a batch at least 1, a limit at
    least 1 (None keeps every sample)."""
    if world_size < 2:
        raise ValueError(f"world_size: expected at least 2 held-out samples, got {world_size}")
    if batch_size < 1:
        raise ValueError(f"batch_size: expected at least 1, got {batch_size}")
    for name, limit in limits.items():
        if limit is not None and limit < 1:
            raise ValueError(f"limit of {name!r}: expected at least 1 sample (or no limit), got {limit}")


def evaluate(
    checkpoint: str | Path,
    benchmarks: Sequence[str] = WORLD_BENCHMARKS,
    *,
    output_dir: str | Path,
    world_size: int = 256,
    world_seed: int = 12345,
    world_image_size: int | None = None,
    hierarcaps_root: str | Path | None = None,
    hierarcaps_limit: int | None = None,
    roots: dict[str, str | Path] | None = None,
    limits: dict[str, int] | None = None,
    noise_seed: int = 0,
    templates: Sequence[str] | None = None,
    cache_dir: str | Path | None = None,
    batch_size: int = 128,
    device: str = "cpu",
    model_label: str | None = None,
    pretrained_label: str | None = None,
    skip_bad_images: bool = False,
) -> list[dict[str, Any]]:
    """Evaluate ``checkpoint`` on ``benchmarks``; writes ``<output_dir>/<dataset>.json`` files
    (CLIP_benchmark keys) and ``results.md`` (merged table); returns the result dicts.
    ``model_label`` / ``pretrained_label`` fill the files' ``model`` / ``pretrained`` keys
    (defaults: ``method:model-name`` and the checkpoint path as given).

    ``world_seed`` should differ from the training world's ``data.seed`` (held-out scenes);
    ``world_image_size`` defaults to the model's input size. ``roots`` maps each real benchmark
    (and optionally ``hierarcaps``) to its folder (``ROOT_LAYOUTS``); ``limits`` keeps the first
    N samples of a benchmark; ``noise_seed`` seeds SSI's noise sentences; ``templates`` are
    ImageNet's prompt templates (default: see :func:`imagenet_templates`). A real benchmark's
    unreadable image stops the evaluation, naming the file; with ``skip_bad_images`` its
    samples are left out instead, and each results file of that benchmark records them
    (``skipped_images``: count and the first few paths with reasons).
    """
    roots, limits, hierarcaps_root, hierarcaps_limit = _checked_request(
        benchmarks, roots, limits, hierarcaps_root, hierarcaps_limit, world_size, batch_size
    )
    real, skipped = _real_samples(benchmarks, roots, limits, skip_bad_images)
    module, preprocess, tokenizer, config = load_trained(checkpoint, device)
    geometry = module.geometry
    curv = module.model.curv.item() if geometry == "hyperbolic" else 0.0
    embed = Embedder(module, preprocess, tokenizer, batch_size)
    output_dir = Path(output_dir)
    cache = Path(cache_dir or output_dir / "cache") / checkpoint_key(checkpoint)
    size = world_image_size or input_size(module)
    datasets = _generated_and_hierarcaps(embed, cache, benchmarks, world_seed, world_size, size,
                                         hierarcaps_root, hierarcaps_limit)  # fmt: skip
    datasets += _real_datasets(embed, cache, real, skipped, roots, limits, noise_seed, templates)
    labels = (model_label or f"{config.method}:{config.model.name}", pretrained_label or str(checkpoint))
    rows = _result_rows(datasets, skipped, f"{checkpoint}", geometry, curv, labels)
    for result in rows:  # every metric first: a failure leaves no partial results
        results.write_result(output_dir / f"{result['dataset']}.json", result)
    (output_dir / "results.md").write_text(markdown_table(output_dir) + "\n")
    return rows


def _checked_request(benchmarks, roots, limits, hierarcaps_root, hierarcaps_limit, world_size,
                     batch_size) -> tuple[dict, dict, Any, int | None]:  # fmt: skip
    """:func:`evaluate`'s arguments checked before anything loads: known benchmarks, roots
    and limits of real benchmarks only, sizes (``check_sizes``), a HierarCaps folder when
    asked; returns (roots, limits, hierarcaps root, hierarcaps limit)."""
    unknown = [b for b in benchmarks if b not in BENCHMARKS]
    if unknown:
        raise ValueError(f"unknown benchmark {unknown[0]!r}; expected one of {list(BENCHMARKS)}")
    roots, limits = dict(roots or {}), dict(limits or {})
    bad = [k for k in (*roots, *limits) if k not in REAL_BENCHMARKS + ("hierarcaps",)]
    if bad:
        raise ValueError(
            f"roots/limits name unknown benchmark {bad[0]!r}; expected one of "
            f"{list(REAL_BENCHMARKS + ('hierarcaps',))}"
        )
    hierarcaps_root = hierarcaps_root or roots.get("hierarcaps")
    hierarcaps_limit = hierarcaps_limit if hierarcaps_limit is not None else limits.get("hierarcaps")
    check_sizes(world_size, batch_size, {**limits, "hierarcaps": hierarcaps_limit})
    if "hierarcaps" in benchmarks and hierarcaps_root is None:
        raise ValueError(
            "benchmark 'hierarcaps' needs hierarcaps_root (the folder of hierarcaps_test.csv)"
        )
    return roots, limits, hierarcaps_root, hierarcaps_limit


def _real_samples(benchmarks, roots, limits, skip_bad_images: bool) -> tuple[dict, dict]:
    """Each real benchmark's samples, checked and listed before the model loads, and the
    (path, reason) of the images left out (``skip_bad_images``; else none)."""
    real = {
        b: load_real(b, check_root(b, roots.get(b)), limits.get(b))
        for b in benchmarks
        if b in REAL_BENCHMARKS
    }
    skipped: dict[str, list[tuple[str, str]]] = {b: [] for b in real}
    if skip_bad_images:
        for b in real:
            real[b], skipped[b] = readable_samples(real[b], b)
            if skipped[b]:
                print(f"[evaluate] {b}: {len(skipped[b])} unreadable image(s) skipped, e.g. "
                      f"{skipped[b][0][0]}", flush=True)  # fmt: skip
    return real, skipped


def _generated_and_hierarcaps(embed, cache: Path, benchmarks, world_seed: int, world_size: int,
                              size: int, hierarcaps_root, hierarcaps_limit) -> list[tuple[str, dict]]:  # fmt: skip
    """(benchmark, embeddings) of the generated world's benchmarks (one cached pass) and of
    HierarCaps (cache key: the CSV's path, size, mtime and the limit)."""
    datasets: list[tuple[str, dict[str, Any]]] = []
    world_needed = [b for b in benchmarks if b in WORLD_BENCHMARKS]
    if world_needed:
        spec = f"world-{world_seed}-{world_size}-{size}"
        emb = cached(
            cache / f"{spec}.pt", lambda: world_embeddings(embed, world_size, world_seed, size)
        )
        emb = {**emb, **world_texts(world_seed, world_size)}
        datasets += [(b, emb) for b in world_needed]
    if "hierarcaps" in benchmarks:
        csv_file = require_path(Path(hierarcaps_root) / "hierarcaps_test.csv", "HierarCaps")
        spec = f"hierarcaps-{file_key(csv_file, hierarcaps_limit)}"
        emb = cached(
            cache / f"{spec}.pt",
            lambda: hierarcaps_embeddings(embed, hierarcaps_root, hierarcaps_limit),
        )
        datasets.append(("hierarcaps", emb))
    return datasets


def _real_datasets(embed, cache: Path, real: dict, skipped: dict, roots: dict, limits: dict,
                   noise_seed: int, templates) -> list[tuple[str, dict]]:  # fmt: skip
    """(benchmark, embeddings) of each real benchmark; the cache key covers its root, limit,
    noise seed, prompt templates and the images left out."""
    datasets = []
    for benchmark, samples in real.items():
        prompts = (
            imagenet_templates(Path(roots[benchmark]), templates) if benchmark == "imagenet" else []
        )
        key = (f"{Path(roots[benchmark]).resolve()}:{limits.get(benchmark)}:{noise_seed}:"
               f"{prompts}:{[path for path, _ in skipped[benchmark]]}")  # fmt: skip
        spec = f"{benchmark}-{hashlib.sha1(key.encode()).hexdigest()[:12]}"
        emb = cached(
            cache / f"{spec}.pt",
            lambda b=benchmark, s=samples, p=prompts: real_embeddings(
                embed, b, s, noise_seed=noise_seed, templates=p
            ),
        )
        datasets.append((benchmark, emb))
    return datasets


def _result_rows(datasets, skipped: dict, checkpoint: str, geometry: str, curv: float,
                 labels: tuple[str, str]) -> list[dict[str, Any]]:  # fmt: skip
    """The CLIP_benchmark result dicts of every dataset (``labels``: model, pretrained), all
    computed before any is written; a skipped image list goes into its benchmark's results."""
    rows: list[dict[str, Any]] = []
    for benchmark, emb in datasets:
        metric_fn = real_metrics if benchmark in REAL_BENCHMARKS else world_metrics
        try:
            computed = metric_fn(emb, benchmark, geometry, curv)
        except NonFiniteError as error:
            raise NonFiniteError(f"benchmark {benchmark!r} of {checkpoint}: {error}") from error
        left_out = skipped.get(benchmark)
        extra = {"skipped_images": {"count": len(left_out), "examples": left_out[:5]}} if left_out else {}
        for dataset, metrics in computed.items():
            task = TASKS.get(dataset, TASKS[benchmark])
            rows.append(results.make_result(dataset, *labels, task, metrics, **extra))
    return rows


def markdown_table(results_dir: str | Path) -> str:
    """The merged results of a folder (``metrics.results.merge_results``) as a markdown table."""
    rows = results.merge_results(results_dir)
    columns = ["dataset", "model"] + results.metric_columns(rows)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [
            f"{row[c]:.4g}" if isinstance(row.get(c), float) else str(row.get(c, ""))
            for c in columns
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
