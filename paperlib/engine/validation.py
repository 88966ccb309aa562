"""Held-out validation during training: the curve that says whether a run stopped improving.

Every ``train.val_every`` steps (and at step 0) the loop embeds :data:`VALIDATION_SEED`'s world
samples ``0..train.val_size-1`` (rendered once, at the run's image size) and logs one record
``{"step": s, "val": {metric: value}, "val_size": n}`` to ``log.jsonl``. The validation world
is neither a training world (seeds are small integers) nor the test world the study reports
(``EVAL_SEED``), so a plateau is judged on data the final numbers never see.

Metrics (:data:`VALIDATION_METRICS`; geometry-aware scores, ``metrics.scores``):

- ``short_i2t_r1`` / ``long_i2t_r1``: image→text R@1 with the short / long captions (a
  duplicate short caption counts as a hit, as ``world-short`` does);
- ``zeroshot_L1`` / ``zeroshot_L3``: zero-shot accuracy at taxonomy level 1 / 3;
- hyperbolic runs, the parents of the entailment pairs against MERU's aperture radius
  ``2K/√c`` (K = 0.1, the run's curvature; ``docs/methods/argent.md#aperture-failure``):
  ``inside_<kind>``, the share of held-out parents whose space norm lies inside it (where the
  half-aperture is undefined), and ``norm_<kind>``, their mean space norm, for each
  :data:`PARENT_KINDS` kind: ``short`` captions, ``box_text`` phrases and ``box_image`` crops
  (each sample's box as its training item carries it, ``data.world.chosen_box``).

Real data (:func:`real_validation_sets`, :func:`validate_real`): a ShareGPT4V run validates on
its held-out entries (the first ``data.held_out`` of the JSON, at most ``train.val_size``):
long-caption retrieval R@1/5/10 both ways, logged as ``sharegpt4v/<CLIP_benchmark metric>``;
with ``train.val_benchmark`` (and ``train.val_root``) any run also validates on the first
``train.val_size`` samples of that benchmark (``engine.benchmarks``: retrieval, zero-shot,
long-caption), every metric logged as ``<dataset>/<metric>``. Images go through the model's
evaluation transform, decoded by ``data.num_workers`` DataLoader processes; the record is
``{"step": s, "val": {name: value}, "val_samples": {set: n}}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

if TYPE_CHECKING:
    from paperlib.engine.config import Config

from paperlib.data.loaders import load_sharegpt4v
from paperlib.data.world import World, box_crop, chosen_box, class_names, zeroshot_prompts
from paperlib.engine.benchmarks import (
    BENCHMARK_REGISTRY,
    CLASSIFICATION_BENCHMARKS,
    EmbedOptions,
    LazyImages,
    Scoring,
    benchmark_metrics,
    canonical_benchmark,
    check_root,
    load_real,
)
from paperlib.engine.data import sharegpt4v_json
from paperlib.engine.evaluation import Embedder, classification_templates
from paperlib.engine.registry import DATASET_REGISTRY
from paperlib.geometry.lorentz import aperture_radius
from paperlib.metrics import retrieval, zeroshot
from paperlib.metrics.scores import pairwise_scores

VALIDATION_SEED = 20_000
PARENT_KINDS = ("short", "box_text", "box_image")  # the parents of HyCoCLIP's entailment pairs
APERTURE_K = 0.1  # K of MERU's half-aperture, as the losses' ``min_radius`` default
VALIDATION_METRICS = (
    "short_i2t_r1",
    "long_i2t_r1",
    "zeroshot_L1",
    "zeroshot_L3",
    *(f"{stat}_{kind}" for stat in ("inside", "norm") for kind in PARENT_KINDS),
)
BATCH = 256


@dataclass(frozen=True)
class ValidationSet:
    """The validation samples as model inputs: preprocessed images and tokenised texts."""

    images: Tensor
    texts: dict[str, Tensor]  # "short", "long" and "prompts_L1".. (flattened per class)
    short_positive: Tensor  # (n, n) duplicate short captions count as hits
    labels: Tensor  # (n, 3) taxonomy labels
    prompts_per_class: int
    box_images: Tensor | None = None  # (n, 3, H, W) each sample's box crop, where asked


def _prompt_texts(level: int) -> list[str]:
    prompts = zeroshot_prompts(level)
    return [p for name in class_names(level) for p in prompts[name]]


def build_validation_set(
    size: int,
    image_size: int,
    preprocess: Callable,
    tokenizer: Callable,
    metrics: Sequence[str],
    seed: int = VALIDATION_SEED,
) -> ValidationSet:
    """Render and tokenise what ``metrics`` need from ``size`` samples of the world ``seed``."""
    unknown = sorted(set(metrics) - set(VALIDATION_METRICS))
    if unknown:
        raise ValueError(f"train.val_metrics: unknown {unknown}; expected {VALIDATION_METRICS}")
    world = World(seed=seed, image_size=max(32, image_size))
    samples = [world.sample(i) for i in range(size)]
    texts = {"short": tokenizer([s.short_caption for s in samples])}
    if "long_i2t_r1" in metrics:
        texts["long"] = tokenizer([s.caption for s in samples])
    for level in (1, 3):
        if f"zeroshot_L{level}" in metrics:
            texts[f"prompts_L{level}"] = tokenizer(_prompt_texts(level))
    box_images = None
    if any(m.endswith(("_box_text", "_box_image")) for m in metrics):
        boxes = [chosen_box(seed, i, s) for i, s in enumerate(samples)]
        texts["box_text"] = tokenizer([b.phrase for b in boxes])
        box_images = torch.stack([preprocess(box_crop(b, world.image_size)) for b in boxes])
    return ValidationSet(
        images=torch.stack([preprocess(s.image) for s in samples]),
        texts=texts,
        short_positive=retrieval.same_text_positives([s.short_caption for s in samples]),
        labels=torch.tensor([s.meta["labels"] for s in samples]),
        prompts_per_class=len(zeroshot_prompts(1)[class_names(1)[0]]),
        box_images=box_images,
    )


def _batched(encode: Callable[[Tensor], Tensor], inputs: Tensor, device) -> Tensor:
    return torch.cat(
        [
            encode(inputs[i : i + BATCH].to(device)).float().cpu()
            for i in range(0, len(inputs), BATCH)
        ]
    )


@torch.no_grad()
def validate(module: nn.Module, data: ValidationSet, metrics: Sequence[str]) -> dict[str, float]:
    """The ``metrics`` of ``module`` on ``data`` (eval mode inside, the caller's mode after)."""
    was_training, device = module.training, next(module.parameters()).device
    module.eval()
    try:
        geometry = module.geometry
        curv = float(module.model.curv) if geometry == "hyperbolic" else None
        image = _batched(module.embed_image, data.images, device)
        out: dict[str, float] = {}
        for name in metrics:
            out[name] = _metric(name, module, data, image, geometry, curv, device)
    finally:
        module.train(was_training)
    return out


def parent_statistic(norms: Tensor, stat: str, curv: float) -> float:
    """``inside``: the share of ``norms`` below the aperture radius ``2K/√c``; ``norm``: their
    mean."""
    if stat == "inside":
        return float((norms < aperture_radius(curv, APERTURE_K)).double().mean())
    return float(norms.double().mean())


def _parent_metric(name, module, data, geometry, curv, device) -> float:
    """``inside_<kind>`` / ``norm_<kind>`` of the held-out parents of one kind."""
    if geometry != "hyperbolic":
        raise ValueError(f"train.val_metrics: {name} measures a hyperbolic model's parents")
    stat, kind = name.split("_", 1)
    if kind == "box_image":
        features = _batched(module.embed_image, data.box_images, device)
    else:
        features = _batched(module.embed_text, data.texts[kind], device)
    return parent_statistic(features.norm(dim=-1), stat, curv)


def _metric(name, module, data, image, geometry, curv, device) -> float:
    """One validation metric from the image features and the module's text encoder."""
    if name.startswith(("inside_", "norm_")):
        return _parent_metric(name, module, data, geometry, curv, device)
    if name.endswith("_i2t_r1"):
        kind = name.removesuffix("_i2t_r1")
        text = _batched(module.embed_text, data.texts[kind], device)
        positive = data.short_positive if kind == "short" else None
        scores = pairwise_scores(image, text, geometry, curv)
        found = retrieval.retrieval_metrics_from_scores(scores, positive)
        return float(found["text_retrieval_recall@1"])
    level = int(name.removeprefix("zeroshot_L"))
    prompts = _batched(module.embed_text, data.texts[f"prompts_L{level}"], device)
    per_class = prompts.view(-1, data.prompts_per_class, prompts.shape[-1])
    classes = zeroshot.class_embeddings(per_class, geometry, curv)
    scores = zeroshot.zero_shot_scores(image, classes, geometry, curv)
    return zeroshot.zero_shot_metrics(scores, data.labels[:, level - 1])["acc1"]


def validation_records(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The validation records of a training log (those with a ``val`` mapping), by step."""
    return sorted((r for r in records if isinstance(r.get("val"), dict)), key=lambda r: r["step"])


# --------------------------------------------------------------------------- real data

SHAREGPT4V = "sharegpt4v"


@dataclass(frozen=True)
class HeldOut:
    """One real validation set: its ``name`` (``sharegpt4v`` or a benchmark's), its samples,
    and the prompt ``templates`` of a zero-shot benchmark."""

    name: str
    samples: list
    templates: tuple[str, ...] = ()


def real_validation_sets(config: Config) -> list[HeldOut]:
    """The real held-out sets a run validates on (module docstring): ShareGPT4V's held-out
    entries, and ``train.val_benchmark``'s first ``train.val_size`` samples; [] for none."""
    t, d = config.train, config.data
    sets = []
    if d.dataset == SHAREGPT4V and d.held_out:
        entries = load_sharegpt4v(sharegpt4v_json(d), d.root, split="val", val_size=d.held_out)
        sets.append(HeldOut(SHAREGPT4V, entries[: t.val_size]))
    if t.val_benchmark is not None:
        name = canonical_benchmark(t.val_benchmark)
        root = check_root(name, t.val_root)
        templates = ()
        if name in CLASSIFICATION_BENCHMARKS:
            templates = tuple(classification_templates(name, Path(root))[0])
        sets.append(HeldOut(name, load_real(name, root, t.val_size), templates))
    return sets


def _heldout_metrics(embed: Embedder, held: HeldOut, scoring: Scoring) -> dict[str, dict]:
    """{dataset: metrics} of one held-out set (ShareGPT4V: long-caption retrieval)."""
    if held.name != SHAREGPT4V:
        spec = BENCHMARK_REGISTRY[held.name]
        emb = spec.embed(embed, held.samples, EmbedOptions(templates=held.templates))
        return benchmark_metrics(emb, held.name, scoring)
    image = embed.images(LazyImages([s.image for s in held.samples]))
    text = embed.texts([s.caption for s in held.samples])
    scores = pairwise_scores(image, text, scoring.geometry, scoring.curv)
    return {SHAREGPT4V: retrieval.retrieval_metrics_from_scores(scores)}


@torch.no_grad()
def validate_real(
    module: nn.Module,
    preprocess: Callable,
    tokenizer: Callable,
    sets: Sequence[HeldOut],
    *,
    workers: int = 0,
    precision: str = "auto",
) -> dict[str, float]:
    """``<dataset>/<metric>`` of ``module`` on each held-out set (eval mode inside, the
    caller's mode after; one process: the caller's rank)."""
    was_training = module.training
    module.eval()
    try:
        curv = float(module.model.curv) if module.geometry == "hyperbolic" else 0.0
        scoring = Scoring(module.geometry, curv)
        embed = Embedder(
            module, preprocess, tokenizer, BATCH, workers=workers, precision=precision, local=True
        )
        out = {}
        for held in sets:
            for dataset, metrics in _heldout_metrics(embed, held, scoring).items():
                out.update({f"{dataset}/{k}": float(v) for k, v in metrics.items()})
    finally:
        module.train(was_training)
    return out


@dataclass(frozen=True)
class Validation:
    """What a run validates on every ``train.val_every`` steps: the validation world (its
    ``world`` set and ``metrics``), real held-out sets (``real``), and how to embed them."""

    world: ValidationSet | None
    metrics: tuple[str, ...]
    val_size: int
    real: tuple[HeldOut, ...]
    preprocess: Callable
    tokenizer: Callable
    workers: int = 0
    precision: str = "auto"

    def record(self, module: nn.Module, step: int) -> dict[str, Any]:
        """The ``log.jsonl`` record of ``step`` (module docstring)."""
        record: dict[str, Any] = {"step": step}
        if self.world is not None:
            record["val"] = validate(module, self.world, self.metrics)
            record["val_size"] = self.val_size
        if self.real:
            values = validate_real(
                module, self.preprocess, self.tokenizer, self.real,
                workers=self.workers, precision=self.precision,
            )  # fmt: skip
            record["val"] = {**record.get("val", {}), **values}
            record["val_samples"] = {held.name: len(held.samples) for held in self.real}
        return record


def build_validation(
    config: Config, image_size: int, preprocess: Callable, tokenizer: Callable
) -> Validation | None:
    """The run's :class:`Validation` (None when ``train.val_every`` is 0): the validation
    world for a generated training world, the real sets of :func:`real_validation_sets`."""
    t = config.train
    if t.val_every == 0:
        return None
    entry = DATASET_REGISTRY[config.data.dataset]
    world = None
    if entry.validation and entry.generated:
        world = build_validation_set(t.val_size, image_size, preprocess, tokenizer, t.val_metrics)
    real = tuple(real_validation_sets(config))
    return Validation(
        world, t.val_metrics, t.val_size, real, preprocess, tokenizer,
        config.data.num_workers, t.precision,
    )  # fmt: skip
