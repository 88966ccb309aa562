"""The common sample structure every loader returns, and a torch Dataset over a list of them.

``Sample`` holds one image with all of its texts
(``docs/methods/conventions.md#dataset-formats``): the long caption, an optional
short caption, cumulative segments (HiMo@K), a general->specific chain (HierarCaps), box
crops with phrases (GRIT), several captions (Flickr30k/COCO), a class label, and ``meta``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from torch.utils.data import Dataset

from paperlib.data.images import LoadReport, load_rgb

ImageLike = Image.Image | str | Path | None


@dataclass
class BoxSample:
    """A box crop (GRIT / HyCoCLIP 'parent' of the full image) with its phrase; box in xyxy px."""

    image: ImageLike
    phrase: str
    box: tuple[float, float, float, float] | None = None


@dataclass
class Sample:
    """One image and its texts; ``image`` is an RGB PIL image or a path loaded lazily."""

    id: str
    image: ImageLike
    caption: str
    short_caption: str | None = None
    segments: list[str] = field(default_factory=list)
    chain: list[str] = field(default_factory=list)
    boxes: list[BoxSample] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    label: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def load_image(self, report: LoadReport | None = None) -> Image.Image | None:
        """The RGB image (decoding a path if needed), or None when unreadable (see report)."""
        return resolve_image(self.image, report)

    def texts(self) -> dict[str, Any]:
        """All text fields and meta as plain JSON-serialisable data (no images)."""
        return {
            "id": self.id,
            "caption": self.caption,
            "short_caption": self.short_caption,
            "segments": list(self.segments),
            "chain": list(self.chain),
            "boxes": [
                {"phrase": b.phrase, "box": None if b.box is None else list(b.box)}
                for b in self.boxes
            ],
            "captions": list(self.captions),
            "label": self.label,
            "meta": self.meta,
        }


def resolve_image(image: ImageLike, report: LoadReport | None = None) -> Image.Image | None:
    """Return an RGB PIL image for a PIL image or a path; None when missing or unreadable."""
    if image is None:
        return None
    if isinstance(image, Image.Image):
        return image if image.mode == "RGB" else image.convert("RGB")
    return load_rgb(image, report)


def pil_to_tensor(image: Image.Image) -> torch.Tensor:
    """Default transform: RGB PIL image -> float tensor (3, H, W) in [0, 1]."""
    array = np.asarray(image, dtype=np.uint8)
    return torch.from_numpy(array.copy()).permute(2, 0, 1).float().div_(255.0)


class SampleDataset(Dataset):
    """Torch Dataset over Samples: dicts with an image tensor and the sample's texts.

    An unreadable image gives ``None`` (recorded in ``self.report`` of that process); use
    :func:`collate_samples`, which drops such items and counts them in ``batch["skipped"]``.
    """

    def __init__(
        self,
        samples: Sequence[Sample],
        transform: Callable[[Image.Image], torch.Tensor] | None = None,
    ) -> None:
        self.samples = samples
        self.transform = transform or pil_to_tensor
        self.report = LoadReport()

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> dict[str, Any] | None:
        sample = self.samples[index]
        image = sample.load_image(self.report)
        if image is None:
            return None
        return sample_to_item(sample, self.transform(image))


def sample_to_item(sample: Sample, image: torch.Tensor) -> dict[str, Any]:
    """The dict form a DataLoader batches: image tensor plus the sample's fields."""
    return {
        "id": sample.id,
        "image": image,
        "caption": sample.caption,
        "short_caption": sample.short_caption or "",
        "segments": list(sample.segments),
        "chain": list(sample.chain),
        "captions": list(sample.captions),
        "label": -1 if sample.label is None else sample.label,
    }


def collate_samples(items: list[dict[str, Any] | None]) -> dict[str, Any]:
    """Batch dict items: stack tensors and ints, keep strings and lists as lists.

    ``None`` items (unreadable images) are dropped; their number is ``batch["skipped"]``.
    """
    kept = [item for item in items if item is not None]
    batch: dict[str, Any] = {"skipped": len(items) - len(kept)}
    if not kept:
        return batch
    for key in kept[0]:
        values = [item[key] for item in kept]
        if isinstance(values[0], torch.Tensor):
            batch[key] = torch.stack(values)
        elif isinstance(values[0], (int, np.integer)) and not isinstance(values[0], bool):
            batch[key] = torch.tensor(values, dtype=torch.long)
        else:
            batch[key] = values
    return batch
