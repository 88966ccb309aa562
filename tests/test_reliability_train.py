"""The train entry point (``loop.train`` and ``python -m paperlib.train``) on inputs the first
pass did not try: a finished run extended to more steps trains them on the longer schedule; a
folder holding files training did not write is refused and left as it was; unreadable training
images (ShareGPT4V files, shard records) keep every batch full and are counted in the log;
malformed GRIT records and shards stop by name, from the command line with exit code 2."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
import torch
from PIL import Image

from paperlib.data.records import DatasetFormatError
from paperlib.data.sample import SampleDataset
from paperlib.engine import loop
from paperlib.engine.config import ConfigError
from paperlib.engine.data import ReadableSamples
from paperlib.engine.run_folder import MARKER, claim_run_folder, is_run_file
from paperlib.train import main as train_main
from tests.engine_helpers import final_weights, tiny_config, write_records


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


# --------------------------------------------------------------------------- extended runs


def test_extending_a_finished_run_trains_the_new_steps_on_the_new_schedule(tmp_path):
    out, straight = tmp_path / "run", tmp_path / "straight"
    loop.train(tiny_config("clip", out, train={"steps": 2}))
    before = final_weights(out)
    result = loop.train(tiny_config("clip", out, train={"steps": 4}))
    assert (result.status, result.step) == ("finished", 4)
    # the reference: the rates of an uninterrupted 4-step run, and the schedule's formula
    reference = loop.train(tiny_config("clip", straight, train={"steps": 4})).history
    schedule = loop.WarmupCosine(2, 4)
    lrs = {r["step"]: r["lr"] for r in _records(out) if "loss" in r}
    for step in (3, 4):
        assert lrs[step] == pytest.approx(reference[step - 1]["lr"], rel=1e-12)
        assert lrs[step] == pytest.approx(1e-3 * schedule(step - 1), rel=1e-12) and lrs[step] > 0
    after = final_weights(out)
    assert any(not torch.equal(before[k], after[k]) for k in before)  # steps 3-4 trained


def test_a_plain_resume_keeps_the_exact_learning_rate(tmp_path):
    optimizer = torch.optim.AdamW(torch.nn.Linear(2, 2).parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, loop.WarmupCosine(2, 10))
    for _ in range(4):
        optimizer.step()
        scheduler.step()
    saved = [g["lr"] for g in optimizer.param_groups]
    loop.follow_schedule(optimizer, scheduler)
    assert [g["lr"] for g in optimizer.param_groups] == saved  # bit for bit


# --------------------------------------------------------------------------- run folders

USER_FILES = {
    "someone's config, log and temporary file": {
        "config.json": '{"mine": true}\n',
        "log.jsonl": '{"note": "my own log"}\n',
        ".notes.tmp": "draft\n",
    },
    "a notes file": {"notes.txt": "keep me\n"},
    "only a log.jsonl": {"log.jsonl": "not a training log\n"},
    "a sub-folder": {"data/keep.txt": "x\n"},
}


@pytest.mark.parametrize("files", USER_FILES.values(), ids=USER_FILES)
def test_a_folder_of_files_training_did_not_write_is_refused_and_left_alone(tmp_path, files):
    out = tmp_path / "run"
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    with pytest.raises(ConfigError, match=rf"train\.output_dir: {out} holds files a training"):
        loop.train(tiny_config("clip", out))
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # no lock, no mark
    assert all((out / name).read_text() == text for name, text in files.items())


def test_the_train_command_refuses_a_folder_of_user_files_with_exit_2(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    (tmp_path / "c.json").write_text(json.dumps(tiny_config("clip", out)))
    assert train_main([str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "holds files a training run did not write ('notes.txt')" in err
    assert "Traceback" not in err and sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_run_folder_is_marked_and_resumes_with_or_without_the_mark(tmp_path):
    out = tmp_path / "run"
    loop.train(
        tiny_config("clip", out, train={"steps": 1, "ckpt_every": 1, "keep_checkpoints": True})
    )
    assert (out / MARKER).is_file()
    assert all(is_run_file(p.name) for p in out.iterdir())
    (out / MARKER).unlink()  # a run made before the mark existed: its checkpoint vouches
    result = loop.train(tiny_config("clip", out, train={"steps": 2}))
    assert (result.status, result.step) == ("finished", 2) and (out / MARKER).is_file()


def test_the_names_a_run_folder_may_hold():
    for name in ("last.pt", "step40.pt", "log.jsonl", "config.json", "launch.json", ".lock"):
        assert is_run_file(name) and is_run_file(f".{name}.a1b2c3.tmp") == (name != ".lock")
    for name in ("notes.txt", ".notes.tmp", "last.pt.bak", "step.pt", "stepX.pt", ".x.tmp"):
        assert not is_run_file(name), name


def test_an_empty_folder_is_claimed_and_a_file_is_refused(tmp_path):
    claim_run_folder(tmp_path / "new")
    assert [p.name for p in (tmp_path / "new").iterdir()] == [MARKER]
    claim_run_folder(tmp_path / "new")  # again: the mark is the run's own
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match=r"train\.output_dir: cannot write to .*f \(File exists"):
        claim_run_folder(tmp_path / "f")


# --------------------------------------------------------------------------- unreadable images


def _png(colour, size=32) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _sharegpt4v(root: Path, n: int, bad: set[int]) -> Path:
    root.mkdir(parents=True)
    items = []
    for i in range(n):
        (root / f"{i}.png").write_bytes(b"not a png" if i in bad else _png((i, 90, 200)))
        caption = f"A picture number {i}. It is blue."
        items.append({"image": f"{i}.png", "conversations": [{"value": "q"}, {"value": caption}]})
    (root / "share.json").write_text(json.dumps(items))
    return root


def test_unreadable_sharegpt4v_images_keep_the_batch_full_and_are_counted(tmp_path):
    # items 1000.. are the train split: 16 of them, one batch visiting each once, 3 unreadable
    root = _sharegpt4v(tmp_path / "data", 1016, bad={1000, 1005, 1006})
    raw = tiny_config("clip", tmp_path / "run", data={"dataset": "sharegpt4v", "root": str(root)})
    raw["train"]["steps"] = 1
    result = loop.train(raw)
    records = _records(tmp_path / "run")
    # 1000 and 1005 are each passed over once, 1005 again on the way from 1006 to 1007
    assert result.skipped_images == 4 and records[0]["skipped_images"] == 4
    assert records[-1] == {"step": 1, "status": "finished", "skipped_images": 4}


def test_a_replaced_sample_is_the_next_readable_one(tmp_path):
    from paperlib.data.loaders import load_sharegpt4v

    root = _sharegpt4v(tmp_path / "data", 6, bad={1, 2, 5})
    samples = ReadableSamples(SampleDataset(load_sharegpt4v(root / "share.json", root)))
    got = [(samples[i]["caption"].split()[3], samples[i]["skipped_images"]) for i in range(6)]
    assert got == [("0.", 0), ("3.", 2), ("3.", 1), ("3.", 0), ("4.", 0), ("0.", 1)]


def test_only_unreadable_images_stop_by_name(tmp_path):
    from paperlib.data.loaders import load_sharegpt4v

    root = _sharegpt4v(tmp_path / "data", 3, bad={0, 1, 2})
    samples = ReadableSamples(SampleDataset(load_sharegpt4v(root / "share.json", root)), 2)
    with pytest.raises(ValueError, match=r"data\.root: 2 samples in a row from index 0 .*1\.png"):
        samples[0]


def _grit(i: int, child: bytes | None = None, parents: bytes = b"1") -> dict:
    return {
        "__key__": f"s{i:04d}",
        "child.png": _png((i * 7 % 255, 20, 90)) if child is None else child,
        "child.txt": f"a scene number {i}".encode(),
        "numparents.txt": parents,
        "parent000.png": _png((90, i * 5 % 255, 20)),
        "parent000.txt": b"a part",
    }


def _shard_config(tmp_path: Path) -> dict:
    """Hycoclip on the shards of ``tmp_path/shards`` in file order (no shuffle), one step."""
    data = {"dataset": "webdataset", "root": str(tmp_path / "shards")}
    data.update(shard_shuffle=False, shuffle_buffer=0)
    raw = tiny_config("hycoclip", tmp_path / "run", data=data)
    raw["train"]["steps"] = 1
    return raw


def test_unreadable_shard_images_are_passed_over_and_counted(tmp_path):
    records = [_grit(i, child=b"broken" if i in (0, 4, 9) else None) for i in range(19)]
    write_records(tmp_path / "shards" / "s-000000.tar", records)
    result = loop.train(_shard_config(tmp_path))
    assert result.step == 1 and result.skipped_images == 3  # 16 readable records: one batch
    assert _records(tmp_path / "run")[-1]["skipped_images"] == 3


MALFORMED = {
    "negative parent count": (lambda r: r.update({"numparents.txt": b"-2"}), "numparents"),
    "parent count in words": (lambda r: r.update({"numparents.txt": b"two"}), "numparents"),
    "no caption": (lambda r: r.pop("child.txt"), "child.txt"),
    "caption not UTF-8": (lambda r: r.update({"child.txt": b"caf\xe9"}), "child.txt"),
    "more parents than present": (lambda r: r.update({"numparents.txt": b"2"}), "parent001"),
}


@pytest.mark.parametrize("change, key", MALFORMED.values(), ids=MALFORMED)
def test_a_malformed_grit_record_stops_training_by_name(tmp_path, change, key):
    records = [_grit(i) for i in range(16)]
    change(records[3])
    write_records(tmp_path / "shards" / "s-000000.tar", records)
    with pytest.raises(DatasetFormatError, match=rf"s-000000\.tar: record 's0003'.*{key}"):
        loop.train(_shard_config(tmp_path))
    assert not (tmp_path / "run" / "last.pt").exists()


@pytest.mark.parametrize("cut", [None, 3], ids=["random bytes", "cut short"])
def test_the_train_command_names_a_shard_that_is_not_a_tar_file(tmp_path, capsys, cut):
    shard = tmp_path / "shards" / "s-000000.tar"
    if cut is None:
        shard.parent.mkdir()
        shard.write_bytes(bytes(range(256)) * 12)
    else:
        data = write_records(shard, [_grit(i) for i in range(40)]).read_bytes()
        shard.write_bytes(data[: len(data) // cut])
    (tmp_path / "c.json").write_text(json.dumps(_shard_config(tmp_path)))
    assert train_main([str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert f"{shard} cannot be read as a tar file" in err and "Traceback" not in err


def test_the_train_command_names_a_sharegpt4v_root_without_its_file(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    data = {"dataset": "sharegpt4v", "root": str(tmp_path / "data")}
    (tmp_path / "c.json").write_text(json.dumps(tiny_config("clip", tmp_path / "run", data=data)))
    assert train_main([str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert f"data.root: {tmp_path / 'data'} holds no .json file" in err
    assert "Traceback" not in err


def test_a_resumed_run_continues_the_count(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in (
                {"step": 1, "loss": 1.0, "skipped_images": 2},
                {"step": 2, "loss": 1.0, "skipped_images": 5},
                {"step": 3, "loss": 1.0, "skipped_images": 9},
            )
        )
    )
    assert loop.logged_value(log, 2, "skipped_images") == 5
    assert loop.logged_value(log, 0, "skipped_images") == 0
    assert math.isclose(loop.logged_value(log, 3, "skipped_images"), 9)
