"""The zero-shot classification suite of MERU and HyCoCLIP (16 datasets, ARGENT's Table 2).

Each dataset is read from a local root in its own published layout, through torchvision's
dataset class where torchvision reads that layout (``download=False``), else through a
loader here (CUB-200-2011, Caltech-101, NWPU-RESISC45). Every loader returns
:class:`~paperlib.data.sample.Sample` s (image path, or the decoded image for the array
formats of CIFAR and STL-10; ``label``; ``caption`` = class name) with ``meta["class_names"]``.

Class names and prompt templates are the references' (``zeroshot_suite.json``), in the label
order of the references' loaders (TFDS or torchvision); the split is the test split where
the layout names one. Where the references use a TFDS split that the raw layout does not
name (SUN397, Caltech-101, EuroSAT, RESISC45), every image of the root is used and
:data:`SPLITS` says so (each results file records it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from PIL import Image

from paperlib.data.loaders import DatasetFormatError, read_text, record
from paperlib.data.records import Record
from paperlib.data.sample import Sample

SUITE_FILE = Path(__file__).with_name("zeroshot_suite.json")


@cache
def suite_table() -> dict[str, dict[str, list[str]]]:
    """{dataset: {"classes": [...], "templates": [...]}} of the 16 datasets."""
    return json.loads(SUITE_FILE.read_text(encoding="utf-8"))["datasets"]


ZEROSHOT_SUITE = (
    "imagenet", "food101", "cifar10", "cifar100", "cub2011", "sun397", "cars", "aircraft",
    "dtd", "pets", "caltech101", "flowers102", "stl10", "eurosat", "resisc45", "country211",
)  # fmt: skip


def class_names(dataset: str) -> list[str]:
    """The references' class names of ``dataset``, in label order."""
    return list(suite_table()[dataset]["classes"])


def prompt_templates(dataset: str) -> list[str]:
    """The references' prompt ensemble of ``dataset`` (``{}`` = class name)."""
    return list(suite_table()[dataset]["templates"])


# --------------------------------------------------------------------------- torchvision


def _files(ds) -> tuple[list, list[int]]:
    """(image paths, labels) of the file-based torchvision datasets, read without decoding,
    sorted by path (SUN397 lists its files in directory order)."""
    pairs = getattr(ds, "_samples", None) or getattr(ds, "samples", None)  # cars, folders
    for images, labels in (("_image_files", "_labels"), ("_images", "_labels")):
        if pairs is None and hasattr(ds, images) and hasattr(ds, labels):
            pairs = list(zip(getattr(ds, images), getattr(ds, labels)))
    pairs = sorted((str(p), int(y)) for p, y in pairs)
    return [Path(p) for p, _ in pairs], [y for _, y in pairs]


def _arrays(ds) -> tuple[list, list[int]]:
    """(decoded images, labels) of the array datasets (CIFAR: HWC; STL-10: CHW)."""
    data = ds.data if ds.data.shape[-1] == 3 else ds.data.transpose(0, 2, 3, 1)
    labels = getattr(ds, "targets", None)
    labels = ds.labels if labels is None else labels
    return [Image.fromarray(x) for x in data], [int(y) for y in labels]


def _torchvision(name: str, read: Callable = _files, **options: Any) -> Callable[[Path], tuple]:
    def load(root: Path) -> tuple[list, list[int]]:
        import torchvision.datasets as tvd  # deferred: only the datasets asked for

        try:
            ds = getattr(tvd, name)(root=str(root), download=False, **options)
        except RuntimeError as error:  # torchvision's "Dataset not found or corrupted"
            raise DatasetFormatError(f"{name} at {root}: {error}") from None
        return read(ds)

    return load


# --------------------------------------------------------------------------- loaders here


def _cub(root: Path) -> tuple[list, list[int]]:
    """CUB-200-2011 test images: ``images.txt``, ``image_class_labels.txt`` (1-based) and
    ``train_test_split.txt`` (0 = test), images under ``CUB_200_2011/images``."""
    base = root / "CUB_200_2011"

    def table(name: str) -> dict[str, Record]:
        """Each line's id and its record (two fields: the id and one value)."""
        rows = {}
        for number, line in enumerate(read_text(base / name, "CUB").splitlines(), 1):
            if line.strip():
                entry = record(line.split(), "CUB", f"{base / name} line {number}")
                rows[entry.text(0)] = entry
                entry.text(1)
        return rows

    paths, labels, split = (
        table("images.txt"),
        table("image_class_labels.txt"),
        table("train_test_split.txt"),
    )
    test = [i for i in paths if i in split and split[i].field(1) == "0"]
    missing = next((i for i in test if i not in labels), None)
    if missing is not None:
        raise DatasetFormatError(
            f"CUB: {base / 'image_class_labels.txt'} has no label of {missing}"
        )
    images = [paths[i].path(1, base / "images") for i in test]
    return images, [labels[i].integer(1, minimum=1) - 1 for i in test]


def _class_folders(base: Path, key: Callable[[str], Any] = str) -> tuple[list, list[int]]:
    """Every image of ``base/<class>/``; label = the class folder's rank under ``key``."""
    folders = sorted((p for p in base.iterdir() if p.is_dir()), key=lambda p: key(p.name))
    paths, labels = [], []
    for label, folder in enumerate(folders):
        for image in sorted(folder.iterdir()):
            if image.suffix.lower() in (".jpg", ".jpeg", ".png"):
                paths.append(image)
                labels.append(label)
    return paths, labels


def _caltech101(root: Path) -> tuple[list, list[int]]:
    """Caltech-101 as TFDS labels it (the references' loader): 102 classes, background
    included, folders ordered case-insensitively. torchvision drops the background class
    and sorts case-sensitively, so its labels do not match the references' class names."""
    return _class_folders(root / "caltech101" / "101_ObjectCategories", str.lower)


def _resisc45(root: Path) -> tuple[list, list[int]]:
    """NWPU-RESISC45: ``NWPU-RESISC45/<class>/<class>_NNN.jpg``, classes sorted."""
    return _class_folders(root / "NWPU-RESISC45")


@dataclass(frozen=True)
class SuiteDataset:
    """One suite member: its root ``layout`` (``a|b``: either), loader and the split used."""

    name: str
    layout: tuple[str, ...]
    read: Callable[[Path], tuple[list, list[int]]]
    split: str


_ALL = "every image of the root (the references: a TFDS split, {})"

# fmt: off
SUITE: dict[str, SuiteDataset] = {d.name: d for d in (
    SuiteDataset("food101", ("food-101/meta/test.json", "food-101/images"),
                 _torchvision("Food101", split="test"), "test"),
    SuiteDataset("cifar10", ("cifar-10-batches-py/test_batch", "cifar-10-batches-py/batches.meta"),
                 _torchvision("CIFAR10", _arrays, train=False), "test"),
    SuiteDataset("cifar100", ("cifar-100-python/test", "cifar-100-python/meta"),
                 _torchvision("CIFAR100", _arrays, train=False), "test"),
    SuiteDataset("cub2011", ("CUB_200_2011/images.txt", "CUB_200_2011/image_class_labels.txt",
                             "CUB_200_2011/train_test_split.txt", "CUB_200_2011/images"),
                 _cub, "test"),
    SuiteDataset("sun397", ("SUN397/ClassName.txt",), _torchvision("SUN397"),
                 _ALL.format("standard-part1-120k test")),
    SuiteDataset("cars", ("stanford_cars/devkit/cars_meta.mat", "stanford_cars/cars_test",
                          "stanford_cars/cars_test_annos_withlabels.mat"),
                 _torchvision("StanfordCars", split="test"), "test"),
    SuiteDataset("aircraft", ("fgvc-aircraft-2013b/data/variants.txt",
                              "fgvc-aircraft-2013b/data/images_variant_test.txt",
                              "fgvc-aircraft-2013b/data/images"),
                 _torchvision("FGVCAircraft", split="test", annotation_level="variant"), "test"),
    SuiteDataset("dtd", ("dtd/dtd/images", "dtd/dtd/labels/test1.txt"),
                 _torchvision("DTD", split="test", partition=1), "test (partition 1)"),
    SuiteDataset("pets", ("oxford-iiit-pet/images", "oxford-iiit-pet/annotations/test.txt"),
                 _torchvision("OxfordIIITPet", split="test"), "test"),
    SuiteDataset("caltech101", ("caltech101/101_ObjectCategories",), _caltech101,
                 _ALL.format("test")),
    SuiteDataset("flowers102", ("flowers-102/jpg", "flowers-102/imagelabels.mat",
                                "flowers-102/setid.mat"),
                 _torchvision("Flowers102", split="test"), "test"),
    SuiteDataset("stl10", ("stl10_binary/test_X.bin", "stl10_binary/test_y.bin",
                           "stl10_binary/class_names.txt"),
                 _torchvision("STL10", _arrays, split="test"), "test"),
    SuiteDataset("eurosat", ("eurosat/2750",), _torchvision("EuroSAT"),
                 _ALL.format("train[10000:15000]")),
    SuiteDataset("resisc45", ("NWPU-RESISC45",), _resisc45, _ALL.format("train[20%:]")),
    SuiteDataset("country211", ("country211/test",), _torchvision("Country211", split="test"),
                 "test"),
)}
# fmt: on


def load_suite_dataset(name: str, root: str | Path) -> list[Sample]:
    """The test Samples of suite dataset ``name`` under ``root`` (labels checked against the
    references' class count); DatasetFormatError naming the dataset otherwise."""
    spec = SUITE[name]
    images, labels = spec.read(Path(root))
    names = class_names(name)
    bad = sorted({y for y in labels if not 0 <= y < len(names)})
    if bad:
        raise DatasetFormatError(
            f"{name} at {root}: labels {bad[:3]} outside the {len(names)} classes of the "
            "references' class names"
        )
    return [
        Sample(
            id=f"{name}-{i:06d}",
            image=image,
            caption=names[y],
            label=y,
            meta={"class_names": names},
        )
        for i, (image, y) in enumerate(zip(images, labels))
    ]
