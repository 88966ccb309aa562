"""Bad configs stop before anything is built or written, naming the key: non-finite numbers
on the command line (with and without ``--dry-run``), values out of their range, a data set
smaller than a batch, a resume that changes the loss, an output folder that cannot be written;
config files and overrides that are not UTF-8 or not YAML, or that hold an alias bomb, are
named with a bounded message."""

from __future__ import annotations

import json

import pytest

from paperlib.engine import loop
from paperlib.engine.config import ConfigError
from paperlib.train import main as train_main
from tests.engine_helpers import tiny_config
from tests.test_untrusted import BOMB

BAD_OVERRIDES = [
    ("optim.lr=.nan", "optim.lr"),
    ("optim.lr=.inf", "optim.lr"),
    ("optim.lr=-.inf", "optim.lr"),
    ("optim.eps=-1e-8", "optim.eps"),
    ("loss.adaent_beta=.nan", "loss.adaent_beta"),
    ("loss.lam=.nan", "loss.lam"),
    ("loss.lam=-1", "loss.lam"),
]


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("override, key", BAD_OVERRIDES)
def test_the_train_command_names_bad_numbers_and_writes_nothing(
    tmp_path, capsys, override, key, dry_run
):
    out = tmp_path / "run"
    (tmp_path / "c.json").write_text(json.dumps(tiny_config("himo", out)))
    argv = [str(tmp_path / "c.json"), override, *(["--dry-run"] if dry_run else [])]
    assert train_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"config error: {key}: expected") and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("size", [1, 15])
def test_a_data_set_smaller_than_one_batch_is_named(tmp_path, size):
    config = tiny_config("clip", tmp_path / "run", data={"size": size})
    message = rf"data\.size={size} is smaller than train\.batch_size=16"
    with pytest.raises(ValueError, match=message):
        loop.train(config)
    with pytest.raises(ValueError, match=rf"data\.size={size} is smaller than train\.batch_size"):
        loop.dry_run(loop.load_config(config))
    assert not (tmp_path / "run" / "last.pt").exists()
    assert not (tmp_path / "run" / "log.jsonl").exists()


@pytest.mark.parametrize(
    "section, values",
    [
        ("loss", {"label_smoothing": 0.2}),
        ("loss", {"lam": 0.5}),
        ("data", {"seed": 7}),
        ("optim", {"lr": 2e-3}),
        ("train", {"batch_size": 8}),
    ],
)
def test_resume_refuses_a_changed_loss_data_or_optimiser_and_keeps_the_run(
    tmp_path, section, values
):
    out = tmp_path / "run"
    loop.train(tiny_config("himo", out, train={"steps": 1}))
    before = {name: (out / name).read_bytes() for name in ("last.pt", "log.jsonl")}
    changed = tiny_config("himo", out, train={"steps": 2})
    changed.setdefault(section, {}).update(values)
    key = f"{section}.{next(iter(values))}"
    with pytest.raises(ConfigError, match=rf"holds a run whose config differs in {key}"):
        loop.train(changed)
    assert {name: (out / name).read_bytes() for name in before} == before


def test_an_unwritable_output_folder_is_found_before_the_model_is_built(tmp_path, monkeypatch):
    def must_not_build(*args, **kwargs):
        raise AssertionError("the model was built before the output folder was checked")

    monkeypatch.setattr(loop, "build_module", must_not_build)
    (tmp_path / "file").write_text("a file where a folder should be")
    for out in (tmp_path / "file" / "run", tmp_path / "file"):
        with pytest.raises(ConfigError, match=rf"train\.output_dir: cannot write to {out}"):
            loop.train(tiny_config("clip", out))


def test_a_diverging_himo_run_stops_by_name_not_with_a_linalg_error(tmp_path, capsys):
    from paperlib.engine.loop import NonFiniteLossError

    config = tiny_config("himo", tmp_path / "run", optim={"lr": 1e2}, train={"steps": 8})
    with pytest.raises(NonFiniteLossError, match=r"not finite at step \d+") as err:
        loop.train(config)
    assert "LinAlgError" not in type(err.value).__name__
    assert not (tmp_path / "run" / "last.pt").exists()  # no checkpoint of diverged weights
    config["train"]["output_dir"] = str(tmp_path / "cli")
    (tmp_path / "c.json").write_text(json.dumps(config))
    assert train_main([str(tmp_path / "c.json")]) == 3
    err_text = capsys.readouterr().err
    assert err_text.startswith("training stopped: ") and "Traceback" not in err_text


def test_the_train_command_names_refusals_without_a_traceback(tmp_path, capsys):
    """A used folder with ``train.resume=false``, a resume with another config, and a data set
    smaller than a batch: exit code 2 and one line naming the cause."""
    out = tmp_path / "run"
    loop.train(tiny_config("clip", out, train={"steps": 1}))
    cases = {
        "used": (tiny_config("clip", out, train={"steps": 1, "resume": False}), "already holds"),
        "changed": (tiny_config("clip", out, optim={"lr": 2e-3}), "config differs in optim.lr"),
        "small": (tiny_config("clip", tmp_path / "s", data={"size": 8}), "data.size=8 is smaller"),
    }
    for name, (config, expected) in cases.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(config))
        assert train_main([str(tmp_path / f"{name}.json")]) == 2, name
        err = capsys.readouterr().err
        assert expected in err and "Traceback" not in err, (name, err)


OUT_OF_RANGE = [
    (["train.seed=-1"], "train.seed: expected 0..4294967295, got -1"),
    (["data.seed=4294967296"], "data.seed: expected 0..4294967295"),
    (["model.keep=0"], "model.keep: expected 1..75, got 0"),
    (["model.keep=500"], "model.keep: expected 1..75, got 500"),
    (["model.context_length=248", "model.keep=10"], "model.keep: 248 text positions are 20"),
    (["model.logit_scale_init=-3"], "model.logit_scale_init: expected 0.0..4.60517"),
    (["model.logit_scale_init=50"], "model.logit_scale_init: expected 0.0..4.60517"),
]


@pytest.mark.parametrize("overrides, message", OUT_OF_RANGE)
def test_values_out_of_their_range_are_named(tmp_path, capsys, overrides, message):
    out = tmp_path / "run"
    (tmp_path / "c.json").write_text(json.dumps(tiny_config("clip", out)))
    assert train_main([str(tmp_path / "c.json"), *overrides]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"config error: {message}") and not out.exists()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"method: clip\n# caf\xe9\n", "not UTF-8 text (byte 18"),
        (b"method: clip\ntrain: {steps: [2\n", "not valid YAML (while parsing"),
        (BOMB.encode(), "its aliases expand to more than 100000 nodes"),
        (b"a: &a [*a]\n", "a recursive alias"),
        (b"method: clip\ntrain: {steps: 2}\nmethod: himo\n", "the key 'method' is written twice"),
    ],
    ids=["not UTF-8", "YAML error", "alias bomb", "recursive alias", "repeated key"],
)
def test_a_config_file_that_does_not_read_is_named_briefly(tmp_path, capsys, content, message):
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    assert train_main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"config error: {path}: {message}") and len(err) < 1200


@pytest.mark.parametrize(
    "override, message",
    [
        ("optim.lr=[1e-3", "optim.lr: the value '[1e-3': not valid YAML"),
        ("loss={" + BOMB.replace("\n", ", ")[:-2] + "}", "its aliases expand to more than"),
        ("model.name=" + "x" * 5000, "model.name: unknown architecture 'xxx"),
    ],
    ids=["YAML error", "alias bomb", "huge value"],
)
def test_an_override_that_does_not_read_is_named_briefly(tmp_path, capsys, override, message):
    (tmp_path / "c.json").write_text(json.dumps(tiny_config("clip", tmp_path / "run")))
    assert train_main([str(tmp_path / "c.json"), override]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"config error: {override.split('=')[0]}") and message in err
    assert len(err) < 1200 and "Traceback" not in err


def test_a_json_config_that_repeats_a_key_is_named_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run"
    text = json.dumps(tiny_config("clip", out))
    path = tmp_path / "c.json"
    path.write_text(text[:-1] + ', "method": "himo"}')
    assert json.loads(path.read_text())["method"] == "himo"  # json alone keeps the last value
    assert train_main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"config error: {path}: the key 'method' is written twice")
    assert not out.exists()


def test_a_parameter_file_whose_overrides_are_not_a_list_is_named(tmp_path, capsys):
    raw = {"config": tiny_config("clip", tmp_path / "run"), "overrides": "optim.lr=1"}
    (tmp_path / "p.json").write_text(json.dumps(raw))
    assert train_main([str(tmp_path / "p.json")]) == 2
    assert capsys.readouterr().err.startswith("config error: overrides: expected a list of")
