"""Robust image loading: every image comes back RGB, or is skipped and counted.

Greyscale, CMYK, palette, 16-bit and alpha images are converted to RGB; unreadable or
truncated files, and images with more pixels than Pillow's decompression-bomb limit
(``PIL.Image.MAX_IMAGE_PIXELS`` × 2: a small file that would decode to gigabytes), are skipped
and recorded in a :class:`LoadReport` with their path and the reason, so a bad file never
crashes a DataLoader worker and never yields a silent wrong sample. An animated image gives its
first frame. The EXIF orientation tag is not applied: the pixels are the stored ones, as
PIL's open + convert in open_clip's and the papers' loaders reads them.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, UnidentifiedImageError
from PIL.Image import DecompressionBombError

ALPHA_MODES = ("RGBA", "LA", "PA", "RGBa", "La")
REASON_LENGTH = 200  # characters of a decoder's message kept as the reason of a skip


@dataclass
class LoadReport:
    """Counts of loaded, converted and skipped images; ``skipped`` holds (path, reason)."""

    loaded: int = 0
    converted: Counter = field(default_factory=Counter)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def num_skipped(self) -> int:
        return len(self.skipped)

    def summary(self) -> str:
        conv = ", ".join(f"{m}: {n}" for m, n in sorted(self.converted.items())) or "none"
        return (
            f"{self.loaded} images loaded, converted to RGB from ({conv}), "
            f"{self.num_skipped} skipped"
        )


def to_rgb(image: Image.Image, background: tuple[int, int, int] = (255, 255, 255)) -> Image.Image:
    """Convert any PIL mode to RGB; transparent pixels are composited onto ``background``.

    The papers never say how alpha is handled; compositing onto white (the ``background``
    parameter) matches what a browser shows and what PIL's RGBA->RGB would lose.
    """
    if image.mode == "RGB":
        return image
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if image.mode in ALPHA_MODES:
        rgba = image.convert("RGBA")
        canvas = Image.new("RGB", rgba.size, background)
        canvas.paste(rgba, mask=rgba.getchannel("A"))
        return canvas
    if image.mode in ("I", "I;16", "I;16B", "I;16L", "F"):
        # 16/32-bit greyscale: rescale to 8 bits by the mode's range instead of clipping.
        scale = 1 / 256 if image.mode.startswith("I;16") else None
        if scale is None:
            extrema = image.getextrema()
            scale = 255.0 / max(float(extrema[1]), 1.0)
        image = image.point(lambda v: v * scale).convert("L")
    return image.convert("RGB")


def load_rgb(
    source: str | Path | bytes,
    report: LoadReport | None = None,
    background: tuple[int, int, int] = (255, 255, 255),
) -> Image.Image | None:
    """Fully decode ``source`` (a path or encoded bytes) to an RGB image, or None if unreadable.

    A truncated file is treated as unreadable (PIL's ``LOAD_TRUNCATED_IMAGES`` is left off,
    so grey fill never passes for image content). Failures are recorded in ``report``.
    """
    name = "<bytes>" if isinstance(source, bytes) else str(source)
    try:
        handle = io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb")
        with handle, Image.open(handle) as image:
            image.load()
            mode = image.mode
            rgb = to_rgb(image, background)
            if rgb is image:
                rgb = image.copy()
    except (
        OSError,
        UnidentifiedImageError,
        ValueError,
        SyntaxError,
        DecompressionBombError,
    ) as err:
        if report is not None:
            report.skipped.append((name, f"{type(err).__name__}: {str(err)[:REASON_LENGTH]}"))
        return None
    if report is not None:
        report.loaded += 1
        if mode != "RGB":
            report.converted[mode] += 1
    return rgb


def scan_images(paths: list[str | Path], report: LoadReport | None = None) -> list[bool]:
    """Decode every path once; True where it loads. Use before training to drop bad files."""
    report = report if report is not None else LoadReport()
    return [load_rgb(p, report) is not None for p in paths]


def with_geometry(preprocess, first, what: str):
    """``preprocess`` (a torchvision ``Compose``) with its ``Resize`` and ``CenterCrop``
    replaced by the transform ``first`` (the rest: tensor conversion, normalisation, kept);
    TypeError naming ``what`` needs it when ``preprocess`` is not a ``Compose``."""
    from torchvision import transforms as T  # deferred: torchvision's import is slow

    if not isinstance(preprocess, T.Compose):
        raise TypeError(
            f"{what} needs a torchvision Compose transform; got {type(preprocess).__name__}"
        )
    rest = [t for t in preprocess.transforms if not isinstance(t, (T.Resize, T.CenterCrop))]
    return T.Compose([first, *rest])


def squeezed(preprocess, size: int):
    """MERU's and HyCoCLIP's retrieval transform: the image squeezed to ``size`` × ``size``
    (bicubic ``Resize((size, size))``, no crop), then ``preprocess``'s tensor steps."""
    from torchvision import transforms as T

    resize = T.Resize((size, size), interpolation=T.InterpolationMode.BICUBIC)
    return with_geometry(preprocess, resize, "the squeeze retrieval transform")
