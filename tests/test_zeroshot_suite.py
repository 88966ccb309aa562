"""MERU's and HyCoCLIP's 16-dataset zero-shot suite: each dataset read from a tiny copy in its
published layout, with the references' class names and prompts."""

from __future__ import annotations

import pytest

from paperlib.data.classification import (
    SUITE,
    ZEROSHOT_SUITE,
    class_names,
    load_suite_dataset,
    prompt_templates,
)
from paperlib.engine import benchmarks as bm
from tests.suite_fixtures import WRITERS, accept_tiny_copies  # noqa: F401  (fixture)

CLASS_COUNTS = {  # the references' NUM_CLASSES
    "imagenet": 1000, "food101": 101, "cifar10": 10, "cifar100": 100, "cub2011": 200,
    "sun397": 397, "cars": 196, "aircraft": 100, "dtd": 47, "pets": 37, "caltech101": 102,
    "flowers102": 102, "stl10": 10, "eurosat": 10, "resisc45": 45, "country211": 211,
}  # fmt: skip


def test_the_suite_is_the_references_sixteen_with_their_names_and_prompts():
    assert len(ZEROSHOT_SUITE) == 16 and set(ZEROSHOT_SUITE) == set(CLASS_COUNTS)
    for name in ZEROSHOT_SUITE:
        assert len(class_names(name)) == CLASS_COUNTS[name]
        assert prompt_templates(name) and all("{}" in t for t in prompt_templates(name))
        assert name in bm.BENCHMARK_REGISTRY and name in bm.CLASSIFICATION_BENCHMARKS
    assert prompt_templates("pets") == ["a photo of a {}, a type of pet."]
    assert len(prompt_templates("imagenet")) == 7 and len(prompt_templates("cifar10")) == 18
    assert class_names("caltech101")[4] == "background"


@pytest.mark.parametrize("name", [n for n in ZEROSHOT_SUITE if n != "imagenet"])
def test_each_dataset_reads_its_published_layout(tmp_path, name, accept_tiny_copies):  # noqa: F811
    expected = WRITERS[name](tmp_path)
    root = bm.check_root(name, tmp_path)
    samples = load_suite_dataset(name, root)
    assert [s.label for s in samples] == expected
    names = class_names(name)
    assert [s.caption for s in samples] == [names[y] for y in expected]
    assert all(s.meta["class_names"] == names for s in samples)
    first = samples[0].image
    image = first if hasattr(first, "size") else __import__("PIL.Image").Image.open(first)
    assert image.size[0] > 0
    assert SUITE[name].split


def test_a_missing_root_names_its_layout(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"'cars'.*stanford_cars/devkit/cars_meta\.mat"):
        bm.check_root("cars", tmp_path)
