"""Tiny copies of the 16 zero-shot datasets in their published on-disk layouts (made here,
never committed): each ``write_<name>(root)`` returns the class index of every image in the
order the dataset's loader reads them, so a test can check labels independently."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

COLOURS = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (200, 200, 30)]


def put(path: Path, k: int, size=(8, 6)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, COLOURS[k % len(COLOURS)]).save(path)


def write_imagenet(root: Path) -> list[int]:
    for label, wnid in enumerate(("n01440764", "n01443537")):
        for k in range(2):
            put(root / "val" / wnid / f"ILSVRC2012_val_{label}{k}.JPEG", label)
    return [0, 0, 1, 1]


def write_food101(root: Path) -> list[int]:
    base = root / "food-101"
    meta = {"apple_pie": ["apple_pie/11", "apple_pie/12"], "baby_back_ribs": ["baby_back_ribs/21"]}
    for k, files in enumerate(meta.values()):
        for f in files:
            put(base / "images" / f"{f}.jpg", k)
    (base / "meta").mkdir(parents=True)
    (base / "meta" / "test.json").write_text(json.dumps(meta))
    return [0, 0, 1]


def _cifar(root: Path, folder: str, test: str, meta: str, labels_key: str, names_key: str):
    base = root / folder
    base.mkdir(parents=True)
    labels = [1, 0, 2]
    data = np.stack([np.full((3, 32, 32), 40 * (y + 1), np.uint8).reshape(-1) for y in labels])
    with open(base / test, "wb") as f:
        pickle.dump({"data": data, labels_key: labels}, f)
    with open(base / meta, "wb") as f:
        pickle.dump({names_key: ["a", "b", "c"]}, f)
    return labels


def write_cifar10(root: Path) -> list[int]:
    return _cifar(
        root, "cifar-10-batches-py", "test_batch", "batches.meta", "labels", "label_names"
    )


def write_cifar100(root: Path) -> list[int]:
    return _cifar(root, "cifar-100-python", "test", "meta", "fine_labels", "fine_label_names")


def write_cub2011(root: Path) -> list[int]:
    base = root / "CUB_200_2011"
    rows = [  # id, path, class (1-based), is_training
        (1, "001.Black_footed_Albatross/a_1.jpg", 1, 1),
        (2, "001.Black_footed_Albatross/a_2.jpg", 1, 0),
        (3, "002.Laysan_Albatross/b_1.jpg", 2, 0),
    ]
    for _, path, cls, _ in rows:
        put(base / "images" / path, cls)
    (base / "images.txt").write_text("".join(f"{i} {p}\n" for i, p, _, _ in rows))
    (base / "image_class_labels.txt").write_text("".join(f"{i} {c}\n" for i, _, c, _ in rows))
    (base / "train_test_split.txt").write_text("".join(f"{i} {t}\n" for i, _, _, t in rows))
    (base / "classes.txt").write_text("1 001.Black_footed_Albatross\n2 002.Laysan_Albatross\n")
    return [0, 1]  # the test images only


def write_sun397(root: Path) -> list[int]:
    base = root / "SUN397"
    put(base / "a" / "abbey" / "sun_aaa.jpg", 0)
    put(base / "a" / "airplane_cabin" / "sun_bbb.jpg", 1)
    base.joinpath("ClassName.txt").write_text("/a/abbey\n/a/airplane_cabin\n")
    return [0, 1]


def write_cars(root: Path) -> list[int]:
    from scipy.io import savemat

    base = root / "stanford_cars"
    (base / "devkit").mkdir(parents=True)
    names = np.array(["AM General Hummer SUV 2000", "Acura RL Sedan 2012"], dtype=object)
    savemat(base / "devkit" / "cars_meta.mat", {"class_names": names.reshape(1, -1)})
    annotations = np.array(
        [("00002.jpg", 1), ("00001.jpg", 2)], dtype=[("fname", "O"), ("class", "O")]
    )
    savemat(base / "cars_test_annos_withlabels.mat", {"annotations": annotations.reshape(1, -1)})
    for k, name in enumerate(("00001.jpg", "00002.jpg")):
        put(base / "cars_test" / name, k)
    return [1, 0]


def write_aircraft(root: Path) -> list[int]:
    data = root / "fgvc-aircraft-2013b" / "data"
    data.mkdir(parents=True)
    (data / "variants.txt").write_text("707-320\n727-200\n737-200\n")
    (data / "images_variant_test.txt").write_text("0000002 707-320\n0000001 727-200\n")
    for k, name in enumerate(("0000001", "0000002")):
        put(data / "images" / f"{name}.jpg", k)
    return [1, 0]


def write_dtd(root: Path) -> list[int]:
    data = root / "dtd" / "dtd"
    files = ["blotchy/blotchy_0002.jpg", "banded/banded_0001.jpg", "banded/banded_0003.jpg"]
    for k, f in enumerate(files):
        put(data / "images" / f, k)
    (data / "labels").mkdir(parents=True)
    (data / "labels" / "test1.txt").write_text("\n".join(files) + "\n")
    return [0, 0, 1]  # read sorted by path


def write_pets(root: Path) -> list[int]:
    base = root / "oxford-iiit-pet"
    rows = [("Abyssinian_1", 1), ("Abyssinian_3", 1), ("american_bulldog_2", 2)]
    for name, label in rows:
        put(base / "images" / f"{name}.jpg", label)
    (base / "annotations").mkdir(parents=True)
    (base / "annotations" / "test.txt").write_text(
        "".join(f"{n} {y} {1 + (y > 1)} 1\n" for n, y in rows)
    )
    return [0, 0, 1]


def write_caltech101(root: Path) -> list[int]:
    base = root / "caltech101" / "101_ObjectCategories"
    # case-insensitive order, background included (TFDS, the references' loader):
    # accordion 0, airplanes 1, anchor 2, ant 3, BACKGROUND_Google 4
    for k, folder in enumerate(("BACKGROUND_Google", "accordion", "airplanes", "anchor", "ant")):
        put(base / folder / "image_0001.jpg", k)
    return [0, 1, 2, 3, 4]


def write_flowers102(root: Path) -> list[int]:
    from scipy.io import savemat

    base = root / "flowers-102"
    labels = [1, 2, 1, 2]  # 1-based, image_00001..4
    for i, y in enumerate(labels, 1):
        put(base / "jpg" / f"image_{i:05d}.jpg", y)
    savemat(base / "imagelabels.mat", {"labels": np.array([labels])})
    savemat(base / "setid.mat", {"trnid": np.array([[1]]), "valid": np.array([[2]]),
                                 "tstid": np.array([[3, 4]])})  # fmt: skip
    return [0, 1]


def write_stl10(root: Path) -> list[int]:
    base = root / "stl10_binary"
    base.mkdir(parents=True)
    labels = np.array([3, 1], np.uint8)  # 1-based
    images = np.stack([np.full((3, 96, 96), 50 * y, np.uint8) for y in labels])
    images.transpose(0, 1, 3, 2).tofile(base / "test_X.bin")
    labels.tofile(base / "test_y.bin")
    (base / "class_names.txt").write_text("airplane\nbird\ncar\n")
    return [2, 0]


def write_eurosat(root: Path) -> list[int]:
    base = root / "eurosat" / "2750"
    for k, cls in enumerate(("AnnualCrop", "Forest")):
        put(base / cls / f"{cls}_1.jpg", k)
    return [0, 1]


def write_resisc45(root: Path) -> list[int]:
    base = root / "NWPU-RESISC45"
    for k, cls in enumerate(("airplane", "airport")):
        for i in (1, 2):
            put(base / cls / f"{cls}_{i:03d}.jpg", k)
    return [0, 0, 1, 1]


def write_country211(root: Path) -> list[int]:
    base = root / "country211" / "test"
    for k, code in enumerate(("AD", "AE")):
        put(base / code / f"{k}.jpg", k)
    return [0, 1]


WRITERS = {
    name.removeprefix("write_"): fn for name, fn in dict(globals()).items()
    if name.startswith("write_")
}  # fmt: skip

# torchvision checks these formats' files against the published md5 sums, which a tiny copy
# cannot match; the layout is read as published
MD5_CHECKED = ("cifar", "stl10", "flowers102")


@pytest.fixture
def accept_tiny_copies(monkeypatch):
    """torchvision's md5 checks of CIFAR, STL-10 and Flowers-102 files pass for the copies."""
    import importlib

    for module in MD5_CHECKED:
        mod = importlib.import_module(f"torchvision.datasets.{module}")
        monkeypatch.setattr(mod, "check_integrity", lambda *args, **kwargs: True)


def write_suite(root: Path) -> dict[str, Path]:
    """Every suite dataset under ``root/<name>``; {name: root}."""
    roots = {}
    for name, write in WRITERS.items():
        roots[name] = root / name
        roots[name].mkdir(parents=True, exist_ok=True)
        write(roots[name])
    return roots
