"""``paperlib.untrusted``: YAML whose aliases would expand past the cap (a 392-byte bomb of
nine lists of nine aliases, eight levels deep: 9⁹ strings) or into themselves is refused
before any object is built; ordinary aliases still load; values and errors render short and on one line."""

from __future__ import annotations

import pytest
import torch
import yaml

from paperlib.untrusted import MAX_MESSAGE, YamlError, brief, error_text, load_yaml

BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
    "method: clip\ntrain: [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n"
)


def test_the_alias_bomb_is_refused_by_name():
    assert len(BOMB) == 392
    with pytest.raises(YamlError, match=r"^bomb\.yaml: its aliases expand to more than 100000"):
        load_yaml(BOMB, "bomb.yaml")


def test_the_cap_counts_every_use_of_a_shared_node():
    text = "a: &a [1, 2, 3]\nb: [*a, *a, *a]\n"  # root, 2 keys, a (4), b (1 + 3 x 4)
    assert load_yaml(text, "t", max_nodes=1 + 2 + 4 + 13) == yaml.safe_load(text)
    with pytest.raises(YamlError, match="more than 19 nodes"):
        load_yaml(text, "t", max_nodes=19)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a: &a [*a]", "a recursive alias"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ("a: [1", r"not valid YAML \(while parsing a flow sequence"),
        ("a: *nowhere", "not valid YAML .*undefined alias"),
    ],
)
def test_malformed_yaml_is_named(text, expected):
    with pytest.raises(YamlError, match=rf"^src: {expected}"):
        load_yaml(text, "src")


def test_plain_yaml_loads_as_safe_load_does():
    text = "optim: {lr: 1.0e-5, betas: [0.9, 0.98]}\nx: &x {k: v}\ny: *x\nz: null\n"
    assert load_yaml(text, "t") == yaml.safe_load(text)
    assert load_yaml("", "t") is None
    with pytest.raises(YamlError):
        load_yaml("!!python/object:os.system {}", "t")  # safe_load's refusal, named


def test_brief_bounds_what_it_shows():
    assert brief("short") == "'short'"
    huge = [[list(range(1000))] * 1000] * 1000  # walked lazily: a billion items, never joined
    assert len(brief(huge)) <= 120 and len(brief("x" * 10**6, 50)) <= 50


def test_error_text_is_one_bounded_line_without_a_worker_traceback():
    assert error_text(ValueError("a\n  b")) == "a b"
    assert len(error_text(ValueError("y" * 10**5))) == MAX_MESSAGE

    class Broken(torch.utils.data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, index):
            raise ValueError("data.root: image 7.png is unreadable")

    loader = torch.utils.data.DataLoader(Broken(), num_workers=1)
    with pytest.raises(ValueError) as err:
        next(iter(loader))
    assert "Traceback" in str(err.value)  # torch's wrapper carries the worker's traceback
    assert error_text(err.value) == "ValueError: data.root: image 7.png is unreadable"


@pytest.mark.parametrize(
    "text, key, lines",
    [
        ("method: clip\ntrain: {steps: 2}\nmethod: himo\n", "'method'", "lines 1 and 3"),
        ("train:\n  steps: 2\n  lr: 1\n  steps: 3\n", "'steps'", "lines 2 and 4"),
        ("a: [{x: 1, x: 1}]\n", "'x'", "lines 1 and 1"),
    ],
)
def test_a_repeated_key_is_refused_naming_the_key_its_lines_and_the_source(text, key, lines):
    assert isinstance(yaml.safe_load(text), dict)  # PyYAML alone keeps the last value
    with pytest.raises(YamlError, match=rf"^c\.yaml: the key {key} is written twice \({lines}\)"):
        load_yaml(text, "c.yaml")


def test_keys_that_differ_only_in_type_and_merged_keys_still_load():
    text = "1: int\n'1': str\nbase: &b {lr: 1, wd: 2}\nrun:\n  <<: *b\n  lr: 3\n"
    assert load_yaml(text, "t") == yaml.safe_load(text)
    assert load_yaml(text, "t")["run"] == {"lr": 3, "wd": 2}


def test_every_committed_preset_and_parameters_file_loads():
    from tests.conftest import REPO

    files = sorted((REPO / "params").rglob("*.yaml")) + sorted((REPO / "notebooks").rglob("*.y*ml"))
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load_yaml(text, str(path)) == yaml.safe_load(text), path
