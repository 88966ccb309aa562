"""Bad checkpoints stop a resume by name and are left as they were: truncated, random bytes,
pickle payloads (never run, and no advice to load them with ``weights_only`` off), and weights
of another architecture."""

from __future__ import annotations

import io
import os
import pickle
import re

import pytest
import torch

from paperlib.engine import checkpoint
from paperlib.engine import loop as loop
from tests.engine_helpers import tiny_config

MARKER = "paperlib-reliability-payload-ran"


class Payload:
    """Unpickling this runs a shell command that creates ``MARKER`` in the working folder."""

    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


def _bad_files() -> dict[str, bytes]:
    buffer = io.BytesIO()
    torch.save({"model": Payload(), "step": 1}, buffer)
    saved = io.BytesIO()
    torch.save({"model": {"w": torch.zeros(1000)}, "step": 1}, saved)
    return {
        "torch.save pickle payload": buffer.getvalue(),
        "raw pickle payload": pickle.dumps({"model": Payload()}, protocol=2),
        "random bytes": bytes(range(256)) * 16,
        "truncated": saved.getvalue()[:300],
        "empty": b"",
        "text": b"hello\n",
    }


BAD = _bad_files()
SUGGESTS_UNSAFE_LOAD = re.compile(r"weights_only\W+(set to\W+)?False", re.IGNORECASE)


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_files_are_named_never_run_and_never_advised_to_load_unsafely(
    tmp_path, monkeypatch, kind
):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "last.pt"
    path.write_bytes(BAD[kind])
    with pytest.raises(ValueError) as err:
        checkpoint.load_checkpoint(path)
    message = str(err.value)
    assert message.startswith(f"could not read {path} (")
    assert "expected a training checkpoint written by paperlib's loop" in message
    assert not SUGGESTS_UNSAFE_LOAD.search(message), message
    assert not (tmp_path / MARKER).exists()  # the payload never ran
    if "payload" in kind:
        assert "which a weights-only load refuses" in message or "unreadable" in message


def test_a_pickle_payload_names_the_global_it_would_call(tmp_path):
    path = tmp_path / "last.pt"
    path.write_bytes(BAD["torch.save pickle payload"])
    with pytest.raises(ValueError, match=r"pickles Python objects \(global posix\.system\)"):
        checkpoint.load_checkpoint(path)


def test_resuming_from_a_corrupt_checkpoint_stops_by_name_and_touches_nothing(tmp_path):
    out = tmp_path / "run"
    loop.train(tiny_config("clip", out, train={"steps": 2}))
    (out / "last.pt").write_bytes(BAD["truncated"])
    log_before = (out / "log.jsonl").read_bytes()
    with pytest.raises(ValueError, match=r"could not read .*last\.pt \(not a complete torch\.save"):
        loop.train(tiny_config("clip", out, train={"steps": 4}))
    assert (out / "last.pt").read_bytes() == BAD["truncated"]  # kept for inspection
    assert (out / "log.jsonl").read_bytes() == log_before  # the log is not cut back


def test_weights_of_another_architecture_are_named_before_anything_loads(tmp_path):
    loop.train(tiny_config("clip", tmp_path / "clip", train={"steps": 1}))
    loop.train(tiny_config("meru", tmp_path / "meru", train={"steps": 1}))
    state = torch.load(tmp_path / "clip" / "last.pt", weights_only=True)
    state["model"] = torch.load(tmp_path / "meru" / "last.pt", weights_only=True)["model"]
    torch.save(state, tmp_path / "clip" / "last.pt")
    message = (
        r"clip/last\.pt holds weights of another architecture .*\d+ missing key\(s\): "
        r".*unexpected key\(s\): model\."
    )
    with pytest.raises(ValueError, match=message):
        loop.train(tiny_config("clip", tmp_path / "clip", train={"steps": 2}))


def test_restore_names_shapes_that_differ_and_leaves_the_model_alone():
    model = torch.nn.Linear(2, 3)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    other = torch.nn.Linear(2, 4)
    optimizer = torch.optim.AdamW(model.parameters())
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    state = {
        "model": other.state_dict(),
        "optimizer": optimizer.state_dict(),
        "step": 3,
        "scheduler": scheduler.state_dict(),
        "rng": [checkpoint.rng_state()],
    }
    with pytest.raises(
        ValueError,
        match=r"x\.pt holds weights .*2 shape\(s\) differ: weight "
        r"\(4, 2\) vs \(3, 2\)",
    ):
        checkpoint.restore(
            state, model=model, optimizer=optimizer, scheduler=scheduler, source="x.pt"
        )
    assert all(torch.equal(model.state_dict()[k], v) for k, v in before.items())
    state["model"] = {k: v + 1 for k, v in before.items()}
    assert checkpoint.restore(state, model=model, optimizer=optimizer, scheduler=scheduler) == 3
    assert torch.equal(model.weight, before["weight"] + 1)


def test_the_evaluate_command_names_a_bad_checkpoint_without_torch_advice(tmp_path, capsys):
    from paperlib.evaluate import main as evaluate_main

    bad = tmp_path / "last.pt"
    bad.write_bytes(b"\x80\x04not a torch file at all")
    assert evaluate_main([str(bad), "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"evaluate: could not read {bad}") and "expected a training" in err
    assert "weights_only=False" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
