"""Training batches: datasets by name, a resumable global-batch sampler, tokenising collate.

This module registers one :class:`~paperlib.engine.registry.TrainingDataset` per dataset
into ``engine.registry.DATASET_REGISTRY`` (how to build it from the ``data`` config section,
and what it needs and carries); ``data.dataset`` names the entry, and adding a training
dataset is adding one entry.

The sampler makes global batch ``s`` a pure function of ``(seed, s)``: epoch ``e = s //
steps_per_epoch`` shuffles with ``torch.Generator().manual_seed(seed + e)``, and rank ``r``
takes the ``r``-th contiguous slice of the global batch. So the gathered batch under DDP is
exactly the single-process batch (same order), and the data position saved in a checkpoint
is just the step. Webdataset shards stream through
:class:`~paperlib.data.webdataset.ShardStream` (seeded shard shuffle and sample buffer,
HyCoCLIP's sizes), which a resume positions from the step without decoding what it skips.

Unreadable images never shrink a batch: a map-style set (ShareGPT4V) takes the next readable
sample in its place (:class:`ReadableSamples`), a stream of shards the next record (the
stream counts what it dropped on the next item); either way each batch carries how many it
passed over (``skipped_images``), which :class:`CountingLoader` takes out of the batch and adds
up for the training log.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset, IterableDataset, Sampler
from torchvision import transforms as T

from paperlib.data.images import with_geometry
from paperlib.data.loaders import load_sharegpt4v
from paperlib.data.sample import Sample, SampleDataset, collate_samples, sample_to_item
from paperlib.data.webdataset import ShardStream, record_to_sample, shard_urls
from paperlib.data.world import WorldDataset
from paperlib.data.world_cache import CachedWorldDataset
from paperlib.engine.methods import method_spec
from paperlib.engine.registry import DATASET_REGISTRY, TrainingDataset, register
from paperlib.untrusted import brief

if TYPE_CHECKING:  # annotations only: the config module reads this registry
    from paperlib.engine.config import Config, DataConfig

SYNTHETIC_WORDS = ("red", "blue", "small", "large", "circle", "square", "left", "right", "dog")


def per_rank_batch(global_batch: int, world_size: int) -> int:
    """``train.batch_size`` / world size, refused unless it divides (no row is dropped)."""
    if global_batch % world_size:
        raise ValueError(
            f"train.batch_size={global_batch} must be divisible by the world size {world_size}"
        )
    return global_batch // world_size


class GlobalBatchSampler(Sampler[list[int]]):
    """Yields this rank's index slice of global batches ``start_step, start_step + 1, ...``."""

    def __init__(
        self,
        num_samples: int,
        global_batch: int,
        *,
        rank: int = 0,
        world_size: int = 1,
        seed: int = 0,
        start_step: int = 0,
        num_steps: int | None = None,
        group: int = 1,
    ) -> None:
        if per_rank_batch(global_batch, world_size) % group:
            raise ValueError(
                f"the per-rank batch train.batch_size / world size = {global_batch // world_size} "
                f"must be divisible by the sample group size {group} (data.twins keeps pairs)"
            )
        if num_samples < global_batch:
            raise ValueError(
                f"data.size={num_samples} is smaller than train.batch_size={global_batch}"
            )
        self.num_samples, self.global_batch = num_samples, global_batch
        self.rank, self.world_size, self.seed = rank, world_size, seed
        self.start_step, self.num_steps, self.group = start_step, num_steps, group
        self.steps_per_epoch = num_samples // global_batch
        self.local_batch = global_batch // world_size
        self._epoch_order: tuple[int, torch.Tensor] | None = None  # (epoch, its permutation)

    def global_indices(self, step: int) -> list[int]:
        """All ranks' indices of global batch ``step`` (drop-last epochs). With ``group`` g > 1
        the shuffle permutes blocks of g consecutive indices and a batch holds whole blocks."""
        epoch, within = divmod(step, self.steps_per_epoch)
        g = self.group
        if self._epoch_order is None or self._epoch_order[0] != epoch:  # one shuffle an epoch
            generator = torch.Generator().manual_seed(self.seed + epoch)
            blocks = torch.randperm(self.num_samples // g, generator=generator)
            order = (blocks[:, None] * g + torch.arange(g)).flatten()
            self._epoch_order = (epoch, order)
        order = self._epoch_order[1]
        start = within * self.global_batch
        return order[start : start + self.global_batch].tolist()

    def __iter__(self) -> Iterator[list[int]]:
        step = self.start_step
        end = None if self.num_steps is None else self.start_step + self.num_steps
        while end is None or step < end:
            idx = self.global_indices(step)
            lo = self.rank * self.local_batch
            yield idx[lo : lo + self.local_batch]
            step += 1

    def __len__(self) -> int:
        if self.num_steps is None:
            raise TypeError("an unbounded GlobalBatchSampler has no length")
        return self.num_steps


class SyntheticDataset(Dataset):
    """Random images (3, size, size) and short random captions; for dry runs of presets."""

    def __init__(self, size: int, image_size: int, seed: int = 0) -> None:
        self.size, self.image_size, self.seed = size, image_size, seed

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> dict[str, Any]:
        gen = torch.Generator().manual_seed(self.seed * 1_000_003 + index)
        words = torch.randint(len(SYNTHETIC_WORDS), (6,), generator=gen).tolist()
        caption = " ".join(SYNTHETIC_WORDS[w] for w in words)
        shape = (3, self.image_size, self.image_size)
        return {
            "image": torch.randn(shape, generator=gen),
            "caption": caption,
            "short_caption": caption.split()[0],
            "box_image": torch.randn(shape, generator=gen),
            "box_phrase": " ".join(caption.split()[:2]),
        }


def augmented(preprocess: Callable, data: DataConfig, image_size: int) -> Callable:
    """The training transform: ``preprocess`` itself (``data.augment="none"``), or its resize
    and centre crop replaced by ``RandomResizedCrop(image_size, scale=data.crop_scale)``
    (bicubic; HyCoCLIP's augmentation, ``docs/methods/argent.md#hycoclip``), the rest (tensor,
    normalisation) kept."""
    if data.augment == "none":
        return preprocess
    crop = T.RandomResizedCrop(
        image_size, scale=tuple(data.crop_scale), interpolation=T.InterpolationMode.BICUBIC
    )
    return with_geometry(preprocess, crop, f"data.augment={data.augment!r}")


class BoxItems:
    """GRIT samples as training items: image, caption and one of the sample's boxes
    (``docs/methods/argent.md#hycoclip``);
    the image and the box crop each go through ``transform`` (HyCoCLIP's mapper does the same).

    ``draw="per-visit"``: the box is drawn from (seed, sample id, pass over the shards), so
    each pass sees a new one (HyCoCLIP); ``"fixed"``: from (seed, sample id), every pass the
    same. The pass is given with each sample (``visit``; :class:`ShardStream` counts them). A
    sample without boxes (open_clip's layout, or ``numparents.txt`` 0) gives an item without
    them, which only a method without box terms trains on (:class:`Collate` refuses it for the
    others, naming it: the whole image in a box's place would make the box terms score the
    image against itself).
    """

    def __init__(self, transform: Callable, *, seed: int, draw: str = "per-visit") -> None:
        if draw not in ("per-visit", "fixed"):
            raise ValueError(f"data.box_draw: expected 'per-visit' or 'fixed', got {draw!r}")
        self.transform = transform
        self.seed, self.draw, self.visit = seed, draw, 0

    def choice(self, sample_id: str, num_boxes: int, visit: int | None = None) -> int:
        """Index of the box drawn for ``sample_id`` in pass ``visit`` (default :attr:`visit`)."""
        key = [self.seed, zlib.crc32(sample_id.encode())]
        if self.draw == "per-visit":
            key.append(self.visit if visit is None else visit)
        return int(np.random.default_rng(key).integers(num_boxes))

    def __call__(self, sample: Sample, visit: int | None = None) -> dict[str, Any]:
        item = sample_to_item(sample, self.transform(sample.load_image()))
        if not sample.boxes:
            return item
        box = sample.boxes[self.choice(sample.id, len(sample.boxes), visit)]
        crop = (
            box.image
            if isinstance(box.image, Image.Image)
            else Image.open(box.image).convert("RGB")
        )
        item["box_image"], item["box_phrase"] = self.transform(crop), box.phrase
        return item


class ReadableSamples(Dataset):
    """A :class:`~paperlib.data.sample.SampleDataset` whose unreadable images are replaced by
    the next readable sample (index order, wrapping), so a batch keeps its size and every rank
    its shapes; each item records how many samples it passed over (``skipped_images``). More
    than ``max_tries`` unreadable samples in a row stop with an error naming the last one."""

    def __init__(self, samples: SampleDataset, max_tries: int = 100) -> None:
        self.samples, self.max_tries = samples, max_tries

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> dict[str, Any]:
        for offset in range(min(self.max_tries, len(self.samples))):
            item = self.samples[(index + offset) % len(self.samples)]
            if item is not None:
                item["skipped_images"] = offset
                return item
        path, reason = self.samples.report.skipped[-1]
        raise ValueError(
            f"data.root: {self.max_tries} samples in a row from index {index} have unreadable "
            f"images (the last: {path}: {reason}); expected readable image files"
        )


def _world(data: DataConfig, transform: Callable, image_size: int) -> Dataset:
    """The generated world, rendered once into ``data.cache_dir`` when it is set
    (:class:`~paperlib.data.world_cache.CachedWorldDataset`), else as each sample is drawn."""
    if data.cache_dir is not None:
        return CachedWorldDataset(
            data.cache_dir, data.seed, data.size, data.image_size, transform, twins=data.twins
        )
    return WorldDataset(
        seed=data.seed,
        size=data.size,
        image_size=data.image_size,
        transform=transform,
        twins=data.twins,
    )


def _synthetic(data: DataConfig, transform: Callable, image_size: int):
    return SyntheticDataset(data.size, image_size, data.seed)


def _sharegpt4v(data: DataConfig, transform: Callable, image_size: int):
    samples = load_sharegpt4v(
        sharegpt4v_json(data), data.root, split="train", val_size=data.held_out
    )
    return ReadableSamples(SampleDataset(samples, augmented(transform, data, image_size)))


def _webdataset(data: DataConfig, transform: Callable, image_size: int):
    items = BoxItems(augmented(transform, data, image_size), seed=data.seed, draw=data.box_draw)
    return ShardStream(
        shard_urls(data.root),
        DecodeBoxes(items),
        seed=data.seed,
        shard_shuffle=data.shard_shuffle,
        buffer=data.shuffle_buffer,
    )


# one dataset per entry: name, builder, whether it reads data.root, has boxes, is generated,
# has a held-out validation set of its own
register(
    DATASET_REGISTRY,
    TrainingDataset("world", _world, boxes=True, generated=True, validation=True),
    TrainingDataset("synthetic", _synthetic, boxes=True, generated=True),
    TrainingDataset("sharegpt4v", _sharegpt4v, root=True, validation=True),
    TrainingDataset("webdataset", _webdataset, root=True, boxes=True, locate=shard_urls),
)


def build_dataset(
    data: DataConfig, transform: Callable, *, image_size: int, world_size: int = 1
) -> Dataset | IterableDataset:
    """The training dataset named by ``data.dataset`` (:data:`DATASET_REGISTRY`); real images
    and box crops go through :func:`augmented`."""
    if data.dataset not in DATASET_REGISTRY:
        raise ValueError(
            f"data.dataset: unknown dataset {data.dataset!r}; expected one of "
            f"{list(DATASET_REGISTRY)}"
        )
    return DATASET_REGISTRY[data.dataset].build(data, transform, image_size)


def sharegpt4v_json(data: DataConfig) -> Path:
    """The ShareGPT4V caption file: ``data.json_file`` (under ``data.root`` when relative),
    else the root's only ``*.json``; FileNotFoundError naming what was found otherwise."""
    root = Path(data.root)
    if data.json_file is not None:
        path = root / data.json_file
        if not path.is_file():
            raise FileNotFoundError(f"data.json_file: {path} does not exist")
        return path
    found = sorted(root.glob("*.json"))
    if len(found) != 1:
        what = "no .json file" if not found else f"{len(found)} .json files ({found[0].name}, ...)"
        raise FileNotFoundError(
            f"data.root: {root} holds {what}; set data.json_file to the ShareGPT4V caption "
            "file (e.g. share-captioner_coco_lcs_sam_1246k_1107.json)"
        )
    return found[0]


class DecodeBoxes:
    """A raw GRIT record of pass ``visit`` -> a training item (:class:`BoxItems`); None when
    an image does not decode. A class, so DataLoader workers can pickle it."""

    def __init__(self, items: BoxItems) -> None:
        self.items = items

    def __call__(self, record: dict[str, Any], visit: int) -> dict[str, Any] | None:
        sample = record_to_sample(record)
        return None if sample is None else self.items(sample, visit)


def longclip_short_caption(caption: str) -> str:
    """Long-CLIP's short caption of a long one: its first sentence, the text before the first
    ". " once newlines are spaces (the reference's ShareGPT4V loader; no final period)."""
    return caption.replace("\n", " ").split(". ")[0]


def short_captions(batch: dict[str, Any], source: str = "first-sentence") -> list[str]:
    """Long-CLIP's short text of each item (``data.short_text``): :func:`longclip_short_caption`
    of its ``caption`` ("first-sentence"), or its own ``short_caption`` where it has one and
    the first sentence where it has none ("dataset")."""
    if source not in ("first-sentence", "dataset"):
        raise ValueError(f"data.short_text must be 'first-sentence' or 'dataset'; got {source!r}")
    firsts = [longclip_short_caption(c) for c in batch["caption"]]
    if source == "first-sentence":
        return firsts
    shorts = batch.get("short_caption") or [""] * len(firsts)
    return [s or first for s, first in zip(shorts, firsts)]


def check_boxes(items: list[dict[str, Any] | None]) -> None:
    """ValueError naming the first item without a box crop and phrase (a method with box terms
    was given samples without boxes: open_clip-layout shards, or ``numparents.txt`` 0)."""
    bare = next((i for i in items if i is not None and "box_image" not in i), None)
    if bare is not None:
        raise ValueError(
            f"data.root: sample {brief(bare.get('id'), 60)} has no box (open_clip layout, or "
            "numparents.txt 0); hycoclip and argent train on box crops and phrases: give shards "
            "in HyCoCLIP's GRIT layout (python -m paperlib.data.grit_boxes makes them)"
        )


class Collate:
    """Batch items and tokenise: ``image``, ``text``, (with boxes) ``box_image``, ``box_text``,
    and (with ``short_text``, Long-CLIP) ``short_text`` from :func:`short_captions` (of
    ``short_source``); when
    unreadable images were passed over, their number (``skipped_images``)."""

    def __init__(
        self,
        tokenizer: Callable,
        caption: str = "caption",
        boxes: bool = False,
        short_text: bool = False,
        short_source: str = "first-sentence",
    ) -> None:
        self.tokenizer, self.caption, self.boxes = tokenizer, caption, boxes
        self.short_text, self.short_source = short_text, short_source

    def __call__(self, items: list[dict[str, Any] | None]) -> dict[str, torch.Tensor]:
        passed_over = sum(int(i.pop("skipped_images", 0)) for i in items if i is not None)
        if self.boxes:
            check_boxes(items)
        batch = collate_samples(items)
        skipped = batch["skipped"] + passed_over
        out = {"image": batch["image"], "text": self.tokenizer(batch[self.caption])}
        if skipped:  # taken out again by CountingLoader before the model sees the batch
            out["skipped_images"] = torch.tensor(skipped)
        if self.boxes:
            out["box_image"] = batch["box_image"]
            out["box_text"] = self.tokenizer(batch["box_phrase"])
        if self.short_text:
            out["short_text"] = self.tokenizer(short_captions(batch, self.short_source))
        return out


def build_loader(
    config: Config,
    dataset: Dataset | IterableDataset,
    tokenizer: Callable,
    *,
    rank: int,
    world_size: int,
    start_step: int,
) -> DataLoader:
    """This rank's local batches from ``start_step`` to ``train.steps``: a DataLoader through
    a :class:`CountingLoader`."""
    t = config.train
    method = method_spec(config.method)
    collate = Collate(
        tokenizer,
        config.data.caption,
        boxes=method.boxes,
        short_text=method.short_text(config.loss),  # Long-CLIP's PCM term
        short_source=config.data.short_text,
    )
    common = {"collate_fn": collate, "num_workers": config.data.num_workers}
    if isinstance(dataset, ShardStream):
        local = per_rank_batch(t.batch_size, world_size)
        dataset.place(rank=rank, world_size=world_size, batches=start_step, local_batch=local)
        loader = DataLoader(dataset, batch_size=local, drop_last=True, **common)
        return CountingLoader(loader, steps=max(0, t.steps - start_step))
    if config.data.dataset == "sharegpt4v" and len(dataset) < t.batch_size:
        raise ValueError(
            f"data.root: {sharegpt4v_json(config.data)} leaves {len(dataset)} training entries "
            f"once its first {config.data.held_out:,} are held out for validation "
            f"(data.held_out), fewer than train.batch_size={t.batch_size}"
        )
    sampler = GlobalBatchSampler(
        len(dataset),
        t.batch_size,
        rank=rank,
        world_size=world_size,
        seed=t.seed,
        start_step=start_step,
        num_steps=max(0, t.steps - start_step),
        group=2 if config.data.twins else 1,
    )
    return CountingLoader(DataLoader(dataset, batch_sampler=sampler, **common), steps=len(sampler))


class CountingLoader:
    """The first ``steps`` batches of ``loader`` (all without a limit), without their
    ``skipped_images`` count (the model never sees it); ``total`` adds the counts up (start it
    at a resumed run's logged total). Past the last batch nothing more is read from
    ``loader``, so no batch that will not train is counted."""

    def __init__(
        self, loader: Iterable[dict[str, torch.Tensor]], total: int = 0, steps: int | None = None
    ) -> None:
        self.loader, self.total, self.steps = loader, total, steps

    def __getattr__(self, name: str) -> Any:  # the DataLoader's own (collate_fn, sampler, ...)
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        if self.steps == 0:
            return
        for produced, batch in enumerate(self.loader, 1):
            skipped = batch.pop("skipped_images", None)
            if skipped is not None and int(skipped):
                if self.total == 0:
                    print("[train] unreadable images are skipped and counted (skipped_images)")
                self.total += int(skipped)
            yield batch
            if self.steps is not None and produced >= self.steps:
                return
