"""Red-team replay: malformed and hostile inputs through every entry point, made fresh each run.

Each case builds its inputs in a new temporary folder, runs one entry point (a command-line
``main`` in this process, or a library function) and is judged by one rule into one of:

- ``named error``: refused with a message that names the bad file, field, key or parameter
  (the case lists the words it must hold); a command exits 2 (3 or 4 for a stopped training)
  and prints no traceback; messages stay under ``MAX_MESSAGE`` characters;
- ``correct``: a valid (if odd) input gives the right result, checked against a reference;
- ``traceback``: an exception that the project did not raise (a library's, or one the
  commands do not catch) reaches the caller;
- ``unnamed error``: refused, but the message does not name the input or is unbounded;
- ``silent wrong``: no error, and the result is wrong (or an error was due and none came);
- ``data lost``: a file the user owned was changed or removed;
- ``code executed``: code from a parameter ran, or a path outside a dataset's root was read.

    python scripts/red_team.py            # every case, then the table of outcomes
    python scripts/red_team.py -k loaders # the cases whose name holds "loaders"

It imports only the project's entry points, so the same script replays an older checkout
(``PYTHONPATH=<checkout> python scripts/red_team.py``). Exit status 1 when any case ends in
traceback, unnamed error, silent wrong, data lost or code executed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests import engine_helpers  # noqa: E402  (the repository's own test helpers)

NAMED, CORRECT, TRACEBACK = "named error", "correct", "uncaught traceback"
UNNAMED, SILENT, LOST, EXECUTED = (
    "error that does not name the bad input",
    "silent wrong result",
    "data lost",
    "code executed or file escaped",
)
OUTCOMES = (NAMED, CORRECT, TRACEBACK, UNNAMED, SILENT, LOST, EXECUTED)
BAD = (TRACEBACK, UNNAMED, SILENT, LOST, EXECUTED)
MAX_MESSAGE = 2000  # characters: a refusal longer than this is not a usable message
PACKAGE = str(REPO / "paperlib")
NAMED_TYPES = (ValueError, OSError, RuntimeError, FloatingPointError)


@dataclass
class Result:
    outcome: str
    detail: str = ""


CASES: list[tuple[str, Callable[[Path], Result]]] = []


def case(name: str):
    """Register ``fn(tmp) -> Result`` as case ``name`` (``entry point/what``)."""

    def register(fn):
        CASES.append((name, fn))
        return fn

    return register


# --------------------------------------------------------------------------- judging


def _raised_in_project(err: BaseException) -> bool:
    frames = traceback.extract_tb(err.__traceback__)
    return bool(frames) and frames[-1].filename.startswith(PACKAGE)


def judge_message(text: str, names: tuple[str, ...], shown: str) -> Result:
    """A refusal's text: named when it is bounded and holds each of ``names``."""
    if len(text) > MAX_MESSAGE:
        return Result(UNNAMED, f"message of {len(text)} characters")
    missing = [n for n in names if n.lower() not in text.lower()]
    if missing:
        return Result(UNNAMED, f"does not name {missing}: {shown}")
    return Result(NAMED, shown)


def judge_error(err: BaseException, names: tuple[str, ...]) -> Result:
    """An exception from a library call: named, unnamed, or a traceback (not the project's)."""
    message = str(err)
    first = message.splitlines()[0][:160] if message else type(err).__name__
    if not isinstance(err, NAMED_TYPES) or not _raised_in_project(err):
        return Result(TRACEBACK, f"{type(err).__name__}: {first}")
    return judge_message(message, names, first)


def expect_error(fn: Callable[[], object], *names: str) -> Result:
    """``fn`` must refuse, naming each of ``names``."""
    try:
        value = fn()
    except Exception as err:  # noqa: BLE001 - judging every failure is the point
        return judge_error(err, names)
    return Result(SILENT, f"no error; returned {str(value)[:120]}")


def expect(fn: Callable[[], object], correct: Callable[[object], bool], *names: str) -> Result:
    """``fn`` may refuse by name, or must return a value ``correct`` accepts."""
    try:
        value = fn()
    except Exception as err:  # noqa: BLE001
        return judge_error(err, names)
    return Result(CORRECT) if correct(value) else Result(SILENT, f"returned {str(value)[:160]}")


def run_main(main, argv: list[str]) -> tuple[int | None, str, BaseException | None]:
    """A command's ``main(argv)`` in this process: (exit code, stdout + stderr, escaped error)."""
    out = io.StringIO()
    code, error = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 2
        except BaseException as err:  # noqa: BLE001
            error = err
            traceback.print_exc(file=out)
    return code, out.getvalue(), error


def judge_exit(
    code: int | None,
    text: str,
    *names: str,
    correct: Callable[[], bool] | None = None,
    error: BaseException | None = None,
) -> Result:
    """A command's exit ``code`` and output ``text`` (an ``error`` it raised): exit 2 (3, 4: a
    stopped training) naming ``names`` with no traceback; or, when ``correct`` is given, exit 0
    with ``correct()`` true."""
    tail = text.strip().splitlines()[-1][:160] if text.strip() else ""
    if error is not None or "Traceback (most recent call last)" in text:
        return Result(TRACEBACK, tail)
    if code == 0:
        if correct is not None and correct():
            return Result(CORRECT)
        return Result(SILENT, f"exit 0: {tail}")
    if code not in (2, 3, 4):
        return Result(UNNAMED, f"exit {code}: {tail}")
    return judge_message(text, names, tail)


def expect_cli(
    main, argv: list[str], *names: str, correct: Callable[[], bool] | None = None
) -> Result:
    """A command run in this process, judged by :func:`judge_exit`."""
    code, text, error = run_main(main, argv)
    return judge_exit(code, text, *names, correct=correct, error=error)


@contextlib.contextmanager
def guarded(*paths: Path):
    """Yield a list; when a guarded file changed or vanished, ``LOST`` is appended to it."""
    before = {p: p.read_bytes() for p in paths}
    verdict: list[Result] = []
    try:
        yield verdict
    finally:
        changed = [
            p.name for p, data in before.items() if not p.is_file() or p.read_bytes() != data
        ]
        if changed:
            verdict.append(Result(LOST, f"changed or removed: {changed}"))


def worst(result: Result, verdict: list[Result]) -> Result:
    return verdict[0] if verdict else result


# --------------------------------------------------------------------------- inputs


def tiny_config(out: Path, method: str = "clip", **sections) -> dict:
    """The test suite's tiny config (``tests.engine_helpers``), at 2 steps on 32 samples."""
    sections = {
        **sections,
        "data": {"size": 32, **sections.get("data", {})},
        "train": {"steps": 2, "diag_every": 1000, **sections.get("train", {})},
    }
    return engine_helpers.tiny_config(method, out, **sections)


def write_config(tmp: Path, raw: dict, name: str = "c.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(raw))
    return path


def image(path: Path, colour=(200, 30, 30), size=(8, 8)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)
    return path


_MODEL: dict[str, Path] = {}
_SCRATCH: list[
    Path
] = []  # the replay's shared folder (runs and files made once), removed at the end


def scratch(prefix: str) -> Path:
    """A new folder inside the replay's shared folder, which :func:`run_cases` removes."""
    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="red-team-shared-")))
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_SCRATCH[0]))


def trained_run(method: str = "clip") -> Path:
    """One tiny trained run per method for the evaluation cases (made once per replay)."""
    if method not in _MODEL:
        from paperlib.engine import loop

        out = scratch(f"{method}-") / "run"
        loop.train(tiny_config(out, method, train={"steps": 1}))
        _MODEL[method] = out
    return _MODEL[method]


SENTENCES = [
    "A red square sits on the left.",
    "A blue circle is under it.",
    "The background is a green field.",
    "A small dog stands at the right.",
]


def himo_docci(root: Path, n: int = 6, rows=None) -> Path:
    """A HiMo-Docci root (JSON lines + images) of ``n`` images with 4 cumulative prefixes."""
    rows = rows or [
        {
            "img_path": f"test_{i:05d}.jpg",
            "caption": [" ".join([f"Scene {i}.", *SENTENCES[:k]]) for k in range(4)],
            "raw_caption": " ".join([f"Scene {i}.", *SENTENCES[:3]]),
        }
        for i in range(n)
    ]
    for i, row in enumerate(rows):
        if isinstance(row, dict) and isinstance(row.get("img_path"), str):
            target = root / "images" / row["img_path"]
            if root in target.resolve().parents:
                image(target, (30 * i % 255, 90, 160))
    (root / "images").mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in rows]
    (root / "himo_docci_data.json").write_text("\n".join(lines) + "\n")
    return root


def urban1k(root: Path, n: int = 6, caption=None) -> Path:
    for i in range(n):
        image(root / "image" / f"{i}.jpg", (40 * i % 255, 20, 200))
        text = caption(i) if caption else " ".join(SENTENCES) + f" Number {i}."
        (root / "caption").mkdir(parents=True, exist_ok=True)
        (root / "caption" / f"{i}.txt").write_text(text + "\n")
    return root


def evaluate_argv(root: Path, out: Path, benchmark: str, *extra: str) -> list[str]:
    return [
        str(trained_run()),
        "--output",
        str(out),
        "--benchmarks",
        benchmark,
        "--root",
        f"{benchmark}={root}",
        *extra,
    ]


def evaluate_main():
    from paperlib.evaluate import main

    return main


def train_main():
    from paperlib.train import main

    return main


def read_metric(out: Path, dataset: str, metric: str) -> float:
    return json.loads((out / f"{dataset}.json").read_text())["metrics"][metric]


# --------------------------------------------------------------------------- train


@case("train/extend a finished run: the new steps train")
def _(tmp):
    from paperlib.engine import loop

    out = tmp / "run"
    loop.train(tiny_config(out, train={"steps": 3}))
    before = torch.load(out / "last.pt", weights_only=True)["model"]
    result = loop.train(tiny_config(out, train={"steps": 5}))
    after = torch.load(out / "last.pt", weights_only=True)["model"]
    lrs = [r["lr"] for r in result.history]
    moved = any(not torch.equal(before[k], after[k]) for k in before)
    ok = result.step == 5 and len(lrs) == 2 and min(lrs) > 0 and moved
    return Result(CORRECT) if ok else Result(SILENT, f"lr of steps 4-5: {lrs}, moved={moved}")


@case("train/reused folder with the user's config.json, log.jsonl, .notes.tmp")
def _(tmp):
    from paperlib.engine import loop

    out = tmp / "run"
    out.mkdir()
    files = [out / "config.json", out / "log.jsonl", out / ".notes.tmp"]
    for f in files:
        f.write_text(f"the user's own {f.name}\n")
    with guarded(*files) as verdict:
        result = expect_error(lambda: loop.train(tiny_config(out)), str(out))
    return worst(result, verdict)


@case("train/reused folder with the user's notes.txt")
def _(tmp):
    out = tmp / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    with guarded(out / "notes.txt") as verdict:
        result = expect_cli(
            train_main(), [str(write_config(tmp, tiny_config(out)))], "notes.txt", str(out)
        )
    return worst(result, verdict)


@case("train/output_dir is a file")
def _(tmp):
    (tmp / "file").write_text("x")
    raw = tiny_config(tmp / "file")
    with guarded(tmp / "file") as verdict:
        result = expect_cli(train_main(), [str(write_config(tmp, raw))], "train.output_dir")
    return worst(result, verdict)


@case("train/config file is not UTF-8")
def _(tmp):
    path = tmp / "c.yaml"
    path.write_bytes(b"method: clip\ntrain: {steps: 2}\n# \xff\xfe caf\xe9\n")
    return expect_cli(train_main(), [str(path)], str(path))


@case("train/config file is a folder")
def _(tmp):
    (tmp / "c.yaml").mkdir()
    return expect_cli(train_main(), [str(tmp / "c.yaml")], "c.yaml")


@case("train/config file with a YAML syntax error")
def _(tmp):
    path = tmp / "c.yaml"
    path.write_text("method: clip\ntrain: {steps: [2\n")
    return expect_cli(train_main(), [str(path)], str(path))


@case("train/config file with method written twice")
def _(tmp):
    path = tmp / "c.yaml"
    raw = tiny_config(tmp / "run")
    text = yaml.safe_dump({**raw, "method": "clip"}, sort_keys=False)
    path.write_text(text + "method: himo\n")  # the key again, after the whole config
    return expect_cli(train_main(), [str(path)], str(path), "method", "twice")


@case("train/JSON config file with method written twice")
def _(tmp):
    path = write_config(tmp, tiny_config(tmp / "run"))
    path.write_text(path.read_text()[:-1] + ', "method": "himo"}')
    return expect_cli(train_main(), [str(path)], str(path), "method", "twice")


@case("train/config file with a key written twice inside a section")
def _(tmp):
    path = tmp / "c.yaml"
    raw = tiny_config(tmp / "run")
    train = yaml.safe_dump({"train": raw.pop("train")}, sort_keys=False)
    path.write_text(yaml.safe_dump(raw, sort_keys=False) + train + "  steps: 3\n")
    return expect_cli(train_main(), [str(path)], str(path), "steps", "twice")


def alias_bomb(levels: int = 8, width: int = 9) -> str:
    """YAML of a few hundred bytes whose aliases expand to ``width ** (levels + 1)`` strings:
    list k holds ``width`` aliases of list k - 1 (the classic anchor bomb)."""
    names = [chr(ord("a") + k) for k in range(levels)]
    lines = [f"{names[0]}: &{names[0]} [{', '.join(['x'] * width)}]"]
    lines += [f"{n}: &{n} [{', '.join([f'*{p}'] * width)}]" for p, n in zip(names, names[1:])]
    return (
        "\n".join([*lines, "method: clip", f"train: [{', '.join([f'*{names[-1]}'] * width)}]"])
        + "\n"
    )


BOMB = alias_bomb()


def inline_bomb(levels: int = 8, width: int = 9) -> str:
    """The same bomb as one YAML flow value (anchors defined inline), for a key the config
    knows: ``[&a [x, ...], &b [*a, ...], ..., [*h, ...]]``."""
    names = [chr(ord("a") + k) for k in range(levels)]
    parts = [f"&{names[0]} [{', '.join(['x'] * width)}]"]
    parts += [f"&{n} [{', '.join([f'*{p}'] * width)}]" for p, n in zip(names, names[1:])]
    return f"[{', '.join([*parts, '[' + ', '.join([f'*{names[-1]}'] * width) + ']'])}]"


def bounded_subprocess(code: str, *args: str, seconds: float = 120, memory_gb: float = 6.0):
    """Run ``code`` in a fresh interpreter with a memory cap and a time limit:
    (exit code or None when killed, output, seconds)."""
    limit = int(memory_gb * 2**30)
    prelude = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", prelude + code, *args],
            capture_output=True,
            text=True,
            timeout=seconds,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return None, "timed out", time.perf_counter() - start
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - start


def cli_in_subprocess(module: str, argv: list[str], *names: str, seconds: float = 120) -> Result:
    code = f"import sys; from {module} import main; sys.exit(main(sys.argv[1:]))"
    rc, text, elapsed = bounded_subprocess(code, *argv, seconds=seconds)
    tail = text.strip().splitlines()[-1][:160] if text.strip() else ""
    if rc is None or "MemoryError" in text:
        return Result(TRACEBACK, f"exhausted the machine after {elapsed:.0f} s ({tail})")
    if "Traceback (most recent call last)" in text:
        return Result(TRACEBACK, tail)
    if rc == 0:
        return Result(SILENT, f"exit 0: {tail}")
    if rc != 2:
        return Result(UNNAMED, f"exit {rc}: {tail}")
    return judge_message(text, names, f"{tail} ({elapsed:.1f} s)")


@case("train/YAML anchor bomb (392 bytes) in the config file")
def _(tmp):
    path = tmp / "bomb.yaml"
    path.write_text(BOMB)
    return cli_in_subprocess("paperlib.train", [str(path)], str(path), "alias")


@case("train/YAML anchor bomb as the value of train.steps in the config file")
def _(tmp):
    path = tmp / "bomb.yaml"
    path.write_text(f"method: clip\ntrain: {{steps: {inline_bomb()}}}\n")
    return cli_in_subprocess("paperlib.train", [str(path)], str(path), "alias")


@case("train/YAML anchor bomb in an override value")
def _(tmp):
    path = write_config(tmp, tiny_config(tmp / "run"))
    argv = [str(path), f"train.steps={inline_bomb()}"]
    return cli_in_subprocess("paperlib.train", argv, "train.steps", "alias")


def _overrides(tmp: Path, method: str, overrides: list[str], *names: str) -> Result:
    """The train command on a tiny ``method`` config with ``overrides``, refusing by name."""
    path = write_config(tmp, tiny_config(tmp / "run", method))
    return expect_cli(train_main(), [str(path), *overrides], *names)


OVERRIDES = {  # case: (method, overrides, what the refusal names)
    "override whose value is a YAML error": ("clip", ["optim.lr=[1e-3"], "optim.lr"),
    "override of a value as a section": ("clip", ["optim.lr.x=1"], "optim.lr"),
    "override without a key": ("clip", ["=3"], "=3"),
    "override value mapping with a key written twice": (
        "clip",
        ["optim.betas={a: 1, a: 2}"],
        "optim.betas",
    ),
    "train.steps given as a string": ("clip", ["train.steps='10'"], "train.steps"),
    **{
        f"config value out of range: {key}={value}": ("clip", [f"{key}={value}"], key)
        for key, value in [
            ("train.seed", -1),
            ("data.seed", -5),
            ("model.keep", 0),
            ("model.keep", 500),
            ("model.logit_scale_init", -3.0),
            ("model.logit_scale_init", 50.0),
            ("data.num_workers", -1),
            ("loss.fixed_m", 0),
            ("optim.warmup_steps", -2),
            ("train.log_every", 0),
            ("data.image_size", 10**5),
            ("loss.eta_inter", -0.5),
            ("model.curv_init", 0.0),
        ]
    },
    "config value out of range: model.keep=10 at 248 tokens": (
        "longclip",
        ["model.keep=10", "model.context_length=248"],
        "model.keep",
    ),
    **{
        f"sibling: {key}={value[:20]}": (
            "argent" if "weights" in key else "clip",
            [f"{key}={value}"],
            key,
        )
        for key, value in [
            ("data.crop_scale", "[0.9, 0.1]"),
            ("optim.betas", "[1.5, 0.9]"),
            ("train.device", "tpu"),
            ("model.name", "x" * 5000),
            ("loss.weights", "everything"),
        ]
    },
}
for _name, (_method, _list, _named) in OVERRIDES.items():
    case(f"train/{_name}")(lambda tmp, m=_method, o=_list, n=_named: _overrides(tmp, m, o, n))


@case("train/sharegpt4v root without a JSON file")
def _(tmp):
    (tmp / "data").mkdir()
    raw = tiny_config(tmp / "run", data={"dataset": "sharegpt4v", "root": str(tmp / "data")})
    return expect_cli(train_main(), [str(write_config(tmp, raw))], "data.root")


def sharegpt4v(root: Path, n: int = 20, bad: tuple[int, ...] = ()) -> Path:
    items = []
    for i in range(n):
        name = f"img{i}.png"
        if i in bad:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(b"not an image")
        else:
            image(root / name, (10 * i, 100, 50), (32, 32))
        items.append(
            {
                "id": str(i),
                "image": name,
                "conversations": [{"value": "q"}, {"value": f"A long caption {i}. Two."}],
            }
        )
    (root / "share.json").write_text(json.dumps(items))
    return root


@case("train/sharegpt4v with unreadable images: counted in the log")
def _(tmp):
    from paperlib.engine import loop

    # the train split is items 1000..1015: one batch of 16 visits each once, 3 unreadable
    root = sharegpt4v(tmp / "data", n=1016, bad=(1000, 1005, 1010))
    raw = tiny_config(tmp / "run", data={"dataset": "sharegpt4v", "root": str(root)})
    raw["train"]["steps"] = 1

    def counted(result) -> bool:
        text = (tmp / "run" / "log.jsonl").read_text()
        return '"skipped_images": 3' in text

    return expect(lambda: loop.train(raw), counted, "image")


def shards_in_order(tmp: Path) -> dict:
    """The data section of training on ``tmp/shards`` in file order (no shuffling)."""
    return {
        "dataset": "webdataset",
        "root": str(tmp / "shards"),
        "shard_shuffle": False,
        "shuffle_buffer": 0,
    }


def png_bytes(colour=(10, 200, 30), size=(32, 32)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def grit_record(i: int, parents: str = "1", child: bytes | None = None) -> dict:
    record = {
        "__key__": f"s{i:04d}",
        "child.png": png_bytes((i * 7 % 255, 20, 90)) if child is None else child,
        "child.txt": f"a scene number {i}".encode(),
        "numparents.txt": parents.encode(),
    }
    for k in range(max(0, int(parents)) if parents.lstrip("-").isdigit() else 0):
        record[f"parent{k:03d}.png"] = png_bytes((90, i * 5 % 255, 20))
        record[f"parent{k:03d}.txt"] = f"part {k}".encode()
    return record


def shard_run(tmp: Path, records: list[dict], steps: int = 1):
    from paperlib.engine import loop

    engine_helpers.write_records(tmp / "shards" / "s-000000.tar", records)
    raw = tiny_config(tmp / "run", "hycoclip", data=shards_in_order(tmp))
    raw["train"]["steps"] = steps
    return lambda: loop.train(raw)


@case("shards/unreadable images: counted in the log")
def _(tmp):
    records = [grit_record(i, child=b"broken" if i < 3 else None) for i in range(19)]
    train = shard_run(tmp, records)

    def counted(result) -> bool:
        return '"skipped_images": 3' in (tmp / "run" / "log.jsonl").read_text()

    return expect(train, counted, "image")


@case("shards/negative parent count")
def _(tmp):
    records = [grit_record(i) for i in range(16)]
    records[3]["numparents.txt"] = b"-2"
    return expect_error(shard_run(tmp, records), "numparents", "s0003")


@case("shards/parent count that is not a number")
def _(tmp):
    records = [grit_record(i) for i in range(16)]
    records[3]["numparents.txt"] = b"two"
    return expect_error(shard_run(tmp, records), "numparents", "s0003")


@case("shards/record without child.txt")
def _(tmp):
    records = [grit_record(i) for i in range(16)]
    del records[2]["child.txt"]
    engine_helpers.write_records(tmp / "shards" / "s-000000.tar", records)
    return expect_cli(
        train_main(), [str(write_config(tmp, _shard_config(tmp)))], "child.txt", "s0002"
    )


def _shard_config(tmp: Path) -> dict:
    raw = tiny_config(tmp / "run", "hycoclip", data=shards_in_order(tmp))
    raw["train"]["steps"] = 1
    return raw


@case("shards/corrupt tar")
def _(tmp):
    (tmp / "shards").mkdir()
    (tmp / "shards" / "s-000000.tar").write_bytes(os.urandom(3000))
    return expect_cli(train_main(), [str(write_config(tmp, _shard_config(tmp)))], "s-000000.tar")


@case("shards/tar cut short")
def _(tmp):
    records = [grit_record(i) for i in range(40)]
    path = engine_helpers.write_records(tmp / "shards" / "s-000000.tar", records)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    return expect_cli(train_main(), [str(write_config(tmp, _shard_config(tmp)))], "s-000000.tar")


@case("shards/caption that is not UTF-8")
def _(tmp):
    records = [grit_record(i) for i in range(16)]
    records[1]["child.txt"] = b"caf\xe9"
    train = shard_run(tmp, records)
    return expect_error(train, "child.txt", "s0001")


# --------------------------------------------------------------------------- evaluate


@case("evaluate/cache follows the dataset: himo-docci prefixes edited")
def _(tmp):
    root = himo_docci(tmp / "data")
    out = tmp / "out"
    main = evaluate_main()
    code, text, _ = run_main(main, evaluate_argv(root, out, "himo-docci"))
    if code != 0:
        return Result(TRACEBACK, text.strip().splitlines()[-1])
    rows = [json.loads(x) for x in (root / "himo_docci_data.json").read_text().splitlines()]
    for row in rows:  # keep the first and last prefixes only: still cumulative, other scores
        row["caption"] = [row["caption"][0], row["caption"][-1]]
    (root / "himo_docci_data.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run_main(main, evaluate_argv(root, out, "himo-docci"))
    run_main(main, evaluate_argv(root, tmp / "fresh", "himo-docci"))
    again = read_metric(out, "himo-docci", "himo@k_pearson")
    fresh = read_metric(tmp / "fresh", "himo-docci", "himo@k_pearson")
    return Result(CORRECT) if again == fresh else Result(SILENT, f"cached {again} vs fresh {fresh}")


@case("evaluate/reversed himo-docci prefixes")
def _(tmp):
    root = himo_docci(tmp / "data")
    rows = [json.loads(x) for x in (root / "himo_docci_data.json").read_text().splitlines()]
    for row in rows:
        row["caption"] = row["caption"][::-1]
    (root / "himo_docci_data.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = tmp / "out"

    def sign_flipped() -> bool:  # accepted: then the score must be the negated fresh one
        return read_metric(out, "himo-docci", "himo@k_pearson") < 0

    return expect_cli(
        evaluate_main(), evaluate_argv(root, out, "himo-docci"), "caption", correct=sign_flipped
    )


@case("evaluate/cache follows an image file")
def _(tmp):
    root = urban1k(tmp / "data")
    out = tmp / "out"
    main = evaluate_main()
    run_main(main, evaluate_argv(root, out, "urban1k"))
    for i in range(6):
        image(root / "image" / f"{i}.jpg", (255 - 40 * i % 255, 200, 10 * i), (16, 16))
    run_main(main, evaluate_argv(root, out, "urban1k"))
    run_main(main, evaluate_argv(root, tmp / "fresh", "urban1k"))
    a = json.loads((out / "urban1k-monotonicity.json").read_text())["metrics"]
    b = json.loads((tmp / "fresh" / "urban1k-monotonicity.json").read_text())["metrics"]
    return Result(CORRECT) if a == b else Result(SILENT, f"cached {a} vs fresh {b}")


def _damaged_cache(tmp: Path, damage: Callable[[Path], object]) -> Result:
    """Evaluate urban1k, ``damage`` each cache file, evaluate again: named or the same."""
    root = urban1k(tmp / "data")
    out = tmp / "out"
    main = evaluate_main()
    run_main(main, evaluate_argv(root, out, "urban1k"))
    expected = (out / "urban1k.json").read_text()
    for cached in (out / "cache").rglob("*.pt"):
        damage(cached)

    def same() -> bool:
        return (out / "urban1k.json").read_text() == expected

    return expect_cli(main, evaluate_argv(root, out, "urban1k"), "cache", correct=same)


case("evaluate/corrupt cache file")(
    lambda tmp: _damaged_cache(tmp, lambda f: f.write_bytes(f.read_bytes()[:100]))
)
case("evaluate/cache file of another shape")(
    lambda tmp: _damaged_cache(tmp, lambda f: torch.save({"image": torch.zeros(2, 3)}, f))
)


@case("evaluate/--output is a file")
def _(tmp):
    (tmp / "out").write_text("mine")
    with guarded(tmp / "out") as verdict:
        result = expect_cli(
            evaluate_main(), [str(trained_run()), "--output", str(tmp / "out")], "--output"
        )
    return worst(result, verdict)


@case("evaluate/--output inside a file")
def _(tmp):
    (tmp / "out").write_text("mine")
    argv = [str(trained_run()), "--output", str(tmp / "out" / "results")]
    return expect_cli(evaluate_main(), argv, "--output")


@case("evaluate/--output not writable")
def _(tmp):
    target = Path("/proc/red-team-results")  # a folder no one may create
    return expect_cli(evaluate_main(), [str(trained_run()), "--output", str(target)], "--output")


def world_long_argv(out: Path) -> list[str]:
    """Evaluate the tiny run on 8 world samples into ``out``."""
    argv = [str(trained_run()), "--output", str(out), "--benchmarks", "world-long"]
    return [*argv, "--world-size", "8"]


def user_file_in_output(tmp: Path, name: str, text: str) -> Result:
    """Evaluate into a folder holding the user's ``name``: refused by name, the file kept."""
    out = tmp / "out"
    out.mkdir()
    (out / name).write_text(text)
    with guarded(out / name) as verdict:
        result = expect_cli(evaluate_main(), world_long_argv(out), name)
    return worst(result, verdict)


@case("evaluate/--output holds the user's world-long.json")
def _(tmp):
    return user_file_in_output(tmp, "world-long.json", "my notes, not results\n")


@case("evaluate/--model openclip:NAME without weights")
def _(tmp):
    argv = ["--model", "openclip:paper-tiny", *world_long_argv(tmp / "out")[1:]]
    return expect_cli(evaluate_main(), argv, "--pretrained", "--checkpoint")


@case("evaluate/run folder without last.pt")
def _(tmp):
    (tmp / "run").mkdir()
    return expect_cli(evaluate_main(), [str(tmp / "run"), "--output", str(tmp / "o")], "last.pt")


@case("evaluate/--root that is a file")
def _(tmp):
    (tmp / "f").write_text("x")
    argv = evaluate_argv(tmp / "f", tmp / "out", "urban1k")
    return expect_cli(evaluate_main(), argv, "urban1k")


@case("evaluate/--limit that is not a number")
def _(tmp):
    argv = evaluate_argv(urban1k(tmp / "d"), tmp / "out", "urban1k", "--limit", "urban1k=ten")
    return expect_cli(evaluate_main(), argv, "--limit")


@case("evaluate/--pep-kept file of words")
def _(tmp):
    (tmp / "ids").write_text("one\ntwo\n")
    argv = [str(trained_run()), "--output", str(tmp / "o"), "--pep-kept", str(tmp / "ids")]
    return expect_cli(evaluate_main(), argv, "--pep-kept")


@case("evaluate/--pep-pool-size 0")
def _(tmp):
    argv = [str(trained_run()), "--output", str(tmp / "o"), "--pep-pool-size", "0"]
    return expect_cli(evaluate_main(), argv, "pool_size")


_BOMB: dict[int, Path] = {}


def bomb_copy(path: Path, side: int = 20000) -> Path:
    """:func:`bomb_png` made once per replay, copied to ``path``."""
    if side not in _BOMB:
        _BOMB[side] = bomb_png(scratch("bomb-") / "bomb.png", side)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_BOMB[side], path)
    return path


def bomb_png(path: Path, side: int = 20000) -> Path:
    """A ``side`` x ``side`` greyscale PNG of one colour (a few hundred kB on disk), written
    row by row so that making it never holds the pixels."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    packer, row, parts = zlib.compressobj(9), b"\x00" * (side + 1), []
    for _ in range(side):
        parts.append(packer.compress(row))
    parts.append(packer.flush())
    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", b"".join(parts))
        + chunk(b"IEND", b"")
    )
    return path


@case("evaluate/decompression bomb image")
def _(tmp):
    root = urban1k(tmp / "data")
    bomb_copy(root / "image" / "2.jpg")
    return expect_cli(evaluate_main(), evaluate_argv(root, tmp / "out", "urban1k"), "2.jpg")


@case("evaluate/decompression bomb image with --skip-bad-images")
def _(tmp):
    root = urban1k(tmp / "data")
    bomb_copy(root / "image" / "2.jpg")
    out = tmp / "out"

    def counted() -> bool:
        skipped = json.loads((out / "urban1k.json").read_text()).get("skipped_images", {})
        return skipped.get("count") == 1

    argv = evaluate_argv(root, out, "urban1k", "--skip-bad-images")
    return expect_cli(evaluate_main(), argv, "2.jpg", correct=counted)


@case("evaluate/unreadable image without --skip-bad-images")
def _(tmp):
    root = urban1k(tmp / "data")
    (root / "image" / "3.jpg").write_bytes(b"not a jpeg")
    return expect_cli(evaluate_main(), evaluate_argv(root, tmp / "out", "urban1k"), "3.jpg")


@case("evaluate/--world-size 1")
def _(tmp):
    argv = [str(trained_run()), "--output", str(tmp / "o"), "--world-size", "1"]
    return expect_cli(evaluate_main(), argv, "world_size")


@case("evaluate/--batch-size -4")
def _(tmp):
    argv = [str(trained_run()), "--output", str(tmp / "o"), "--batch-size", "-4"]
    return expect_cli(evaluate_main(), argv, "batch_size")


@case("evaluate/--device that does not exist")
def _(tmp):
    argv = [
        str(trained_run()),
        "--output",
        str(tmp / "o"),
        "--device",
        "tpu:7",
        "--world-size",
        "8",
    ]
    return expect_cli(evaluate_main(), argv, "--device")


@case("evaluate/imagenet templates without {}")
def _(tmp):
    root = tmp / "imagenet"
    for wnid in ("n01", "n02"):
        image(root / "val" / wnid / "a.png")
    (root / "classnames.json").write_text(json.dumps({"n01": "cat", "n02": "dog"}))
    (root / "templates.txt").write_text("a photo\n")
    return expect_cli(evaluate_main(), evaluate_argv(root, tmp / "out", "imagenet"), "templates")


# --------------------------------------------------------------------------- loaders


def loaders():
    from paperlib.data import loaders

    return loaders


def escaped(samples, root: Path) -> list[str]:
    """Image paths of ``samples`` outside ``root`` (after resolving)."""
    root = root.resolve()
    paths = []
    for s in samples:
        for p in s.meta.get("images", [s.image]):
            if p is not None and root not in Path(p).resolve().parents:
                paths.append(str(p))
    return paths


def expect_inside(fn: Callable[[], list], root: Path, *names: str) -> Result:
    try:
        samples = fn()
    except Exception as err:  # noqa: BLE001
        return judge_error(err, names)
    outside = escaped(samples, root)
    if outside:
        return Result(EXECUTED, f"reads {outside[:2]}")
    return Result(SILENT, "no error")


def _outside_image(tmp: Path) -> Path:
    return image(tmp / "secret" / "x.png")


def _write(name: str, text: Callable[[str], str]) -> Callable[[Path, str], object]:
    return lambda root, path: (root / name).write_text(text(path))


FIVE_CAPTIONS = [{"image_id": 1, "caption": f"cap {k}"} for k in range(5)]
# dataset: (write its file naming an image path, load it, the images' folder, the field named)
ESCAPES = {
    "HiMo-Docci": (
        _write(
            "h.json",
            lambda p: (
                json.dumps(
                    {"img_path": p, "caption": ["A b.", "A b. C."], "raw_caption": "A b. C."}
                )
                + "\n"
            ),
        ),
        lambda root: loaders().load_himo_docci(root / "h.json", root / "images"),
        "images",
        "img_path",
    ),
    "ShareGPT4V": (
        _write(
            "s.json",
            lambda p: json.dumps(
                [{"image": p, "conversations": [{"value": "q"}, {"value": "A cat."}]}]
            ),
        ),
        lambda root: loaders().load_sharegpt4v(root / "s.json", root),
        ".",
        "image",
    ),
    "COCO": (
        _write(
            "c.json",
            lambda p: json.dumps(
                {"images": [{"id": 1, "file_name": p}], "annotations": FIVE_CAPTIONS}
            ),
        ),
        lambda root: loaders().load_coco_captions(root / "c.json", root),
        ".",
        "file_name",
    ),
    "Flickr30k": (
        _write("t.txt", lambda p: "".join(f"{p}#{k}\tcaption {k}\n" for k in range(5))),
        lambda root: loaders().load_flickr30k(root / "t.txt", root),
        ".",
        "t.txt",
    ),
    "Long-DCI": (
        _write("d.csv", lambda p: f"filepath\ttitle\n{p}\tA long caption.\n"),
        lambda root: loaders().load_long_dci(root / "d.csv", root),
        ".",
        "filepath",
    ),
    "DOCCI": (
        _write(
            "docci_descriptions.jsonlines",
            lambda p: (
                json.dumps({"image_file": p, "description": "A cat.", "split": "test"}) + "\n"
            ),
        ),
        lambda root: loaders().load_docci(root),
        "images",
        "image_file",
    ),
}


def _escape(tmp: Path, kind: str, write, load, base: str, field: str) -> Result:
    """A record naming an image outside the root (``../`` or absolute) that exists."""
    root = tmp / "root"
    (root / base).mkdir(parents=True, exist_ok=True)
    outside = _outside_image(tmp)
    write(root, str(outside) if kind == "absolute" else os.path.relpath(outside, root / base))
    return expect_inside(lambda: load(root), (root / base).resolve(), field)


for _kind in ("../", "absolute"):
    for _dataset, _how in ESCAPES.items():
        case(f"loaders/{_dataset} {_kind} image path")(
            lambda tmp, k=_kind, h=_how: _escape(tmp, k, *h)
        )


@case("loaders/COLA image URL ending in ..")
def _(tmp):
    root = tmp / "root"
    root.mkdir()
    _outside_image(tmp)
    (root / "c.json").write_text(json.dumps([["http://x/..", "a", "http://x/b.png", "b"]]))
    fn = lambda: loaders().load_cola(root / "c.json", root / "images", require_images=False)  # noqa: E731
    return expect_inside(fn, root / "images", "c.json")


def _loader_error(fn, *names):
    return lambda tmp: expect_error(lambda: fn(tmp), *names)


def _long_dci(tmp: Path, text: str):
    root = tmp / "root"
    image(root / "a.png")
    (root / "d.csv").write_text(text)
    return loaders().load_long_dci(root / "d.csv", root)


def _coco(tmp: Path, data):
    root = tmp / "root"
    image(root / "a.png")
    (root / "c.json").write_text(json.dumps(data))
    return loaders().load_coco_captions(root / "c.json", root)


def _share(tmp: Path, items, split: str = "all"):
    root = tmp / "root"
    image(root / "a.png")
    (root / "s.json").write_text(json.dumps(items))
    return loaders().load_sharegpt4v(root / "s.json", root, split=split)


def _himo(tmp: Path, rows):
    root = tmp / "root"
    image(root / "images" / "a.png")
    (root / "h.json").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return loaders().load_himo_docci(root / "h.json", root / "images")


def _docci(tmp: Path, rows):
    root = tmp / "root"
    image(root / "images" / "a.png")
    (root / "test_set.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return loaders().load_docci(root)


def _flickr(tmp: Path, text: str):
    root = tmp / "root"
    image(root / "a.png")
    (root / "t.txt").write_text(text)
    return loaders().load_flickr30k(root / "t.txt", root)


def _hierarcaps(tmp: Path, text: str):
    root = tmp / "root"
    image(root / "test_imgs" / "COCO_val2014_000000000001.jpg")
    (root / "hierarcaps_test.csv").write_text(text)
    return loaders().load_hierarcaps(root)


def _cub(tmp: Path, line: str, table: str = "images.txt"):
    """A CUB-200-2011 root (the suite's fixture) whose ``table`` has ``line`` as its 2nd line."""
    from paperlib.data.classification import load_suite_dataset
    from tests.suite_fixtures import write_cub2011

    write_cub2011(tmp)
    path = tmp / "CUB_200_2011" / table
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], line, *lines[2:]]) + "\n")
    image(tmp / "secret.jpg")
    return load_suite_dataset("cub2011", tmp)


def _urban(tmp: Path, files: dict[str, bytes]):
    root = tmp / "root"
    for stem, data in files.items():
        image(root / "image" / f"{stem}.jpg")
        (root / "caption").mkdir(parents=True, exist_ok=True)
        (root / "caption" / f"{stem}.txt").write_bytes(data)
    return loaders().load_urban1k(root)


FIVE = [{"image_id": 1, "caption": f"cap {k}"} for k in range(5)]
TURNS = [{"value": "q"}, {"value": "A cat."}]
URL = "http://x/COCO_val2014_000000000001.jpg"
LOADER_CASES = {
    "Long-DCI short row": (lambda t: _long_dci(t, "filepath\ttitle\na.png\n"), ("d.csv", "title")),
    "Long-DCI empty title": (lambda t: _long_dci(t, "filepath\ttitle\na.png\t \n"), ("title",)),
    "Long-DCI missing column": (
        lambda t: _long_dci(t, "path\ttitle\na.png\tA cat.\n"),
        ("filepath",),
    ),
    "Long-DCI duplicate ids": (
        lambda t: _long_dci(t, "filepath\ttitle\na.png\tA cat.\na.png\tA dog.\n"),
        ("a",),
    ),
    "COCO caption is a number": (
        lambda t: _coco(
            t,
            {
                "images": [{"id": 1, "file_name": "a.png"}],
                "annotations": [*FIVE[:4], {"image_id": 1, "caption": 7}],
            },
        ),
        ("caption",),
    ),
    "COCO file_name is null": (
        lambda t: _coco(t, {"images": [{"id": 1, "file_name": None}], "annotations": FIVE}),
        ("file_name",),
    ),
    "COCO images is a mapping": (
        lambda t: _coco(t, {"images": {"id": 1}, "annotations": FIVE}),
        ("images",),
    ),
    "COCO top level is a list": (lambda t: _coco(t, [1, 2]), ("c.json",)),
    "COCO duplicate image ids": (
        lambda t: _coco(t, {"images": [{"id": 1, "file_name": "a.png"}] * 2, "annotations": FIVE}),
        ("1",),
    ),
    "COCO annotation that is a string": (
        lambda t: _coco(t, {"images": [{"id": 1, "file_name": "a.png"}], "annotations": ["x"]}),
        ("annotation",),
    ),
    "ShareGPT4V caption is a number": (
        lambda t: _share(t, [{"image": "a.png", "conversations": [{"value": "q"}, {"value": 3}]}]),
        ("value",),
    ),
    "ShareGPT4V image is null": (
        lambda t: _share(t, [{"image": None, "conversations": TURNS}]),
        ("image",),
    ),
    "ShareGPT4V top level is a mapping": (lambda t: _share(t, {"image": "a.png"}), ("s.json",)),
    "ShareGPT4V item is a string": (lambda t: _share(t, ["a.png"]), ("item 0",)),
    "ShareGPT4V empty caption": (
        lambda t: _share(
            t, [{"image": "a.png", "conversations": [{"value": "q"}, {"value": "  "}]}]
        ),
        ("value",),
    ),
    "ShareGPT4V duplicate ids in the val split": (
        lambda t: _share(t, [{"id": "7", "image": "a.png", "conversations": TURNS}] * 2, "val"),
        ("7",),
    ),
    "HiMo-Docci prefixes not cumulative": (
        lambda t: _himo(
            t, [{"img_path": "a.png", "caption": ["A b. C d.", "A b."], "raw_caption": "A b. C d."}]
        ),
        ("caption",),
    ),
    "HiMo-Docci prefix is empty text": (
        lambda t: _himo(t, [{"img_path": "a.png", "caption": ["", "A b."], "raw_caption": "A b."}]),
        ("caption",),
    ),
    "HiMo-Docci raw_caption is null": (
        lambda t: _himo(
            t, [{"img_path": "a.png", "caption": ["A b.", "A b. C."], "raw_caption": None}]
        ),
        ("raw_caption",),
    ),
    "HiMo-Docci img_path is a number": (
        lambda t: _himo(t, [{"img_path": 5, "caption": ["A b.", "A b. C."], "raw_caption": "x"}]),
        ("img_path",),
    ),
    "HiMo-Docci line is a list": (lambda t: _himo(t, [["a.png"]]), ("line 1",)),
    "HiMo-Docci duplicate images": (
        lambda t: _himo(
            t, [{"img_path": "a.png", "caption": ["A b.", "A b. C."], "raw_caption": "x"}] * 2
        ),
        ("a",),
    ),
    "DOCCI description is null": (
        lambda t: _docci(t, [{"image_file": "a.png", "description": None}]),
        ("description",),
    ),
    "DOCCI line is a number": (lambda t: _docci(t, [3]), ("line 1",)),
    "Flickr30k empty caption": (
        lambda t: _flickr(t, "".join(f"a.png#{k}\t{'x' if k else ' '}\n" for k in range(5))),
        ("t.txt",),
    ),
    "HierarCaps short row": (
        lambda t: _hierarcaps(t, "id,captions,image_url\n1,a => b => c => d\n"),
        ("image_url",),
    ),
    "HierarCaps empty level": (
        lambda t: _hierarcaps(t, f"id,captions,image_url\n1,a =>  => c => d,{URL}\n"),
        ("levels",),
    ),
    "Urban1k caption not UTF-8": (lambda t: _urban(t, {"0": b"caf\xe9 au lait\n"}), ("0.txt",)),
    "Urban1k blank caption": (lambda t: _urban(t, {"0": b"   \n"}), ("0.txt",)),
}
for _name, (_fn, _names) in LOADER_CASES.items():
    case(f"loaders/{_name}")(_loader_error(_fn, *_names))


# --------------------------------------------------------------------------- notebooks


def notebooks_main():
    from paperlib.notebooks import main

    return main


MARKER = "red-team-code-ran"


def _payload(tmp: Path) -> str:
    return f"x = __import__('pathlib').Path({str(tmp / MARKER)!r}).write_text('ran')\nx"


def _fake_notebook(tmp: Path) -> Path:
    """A notebook whose parameters cell declares ``steps`` and ``name``."""
    path = tmp / "red_team_nb.py"
    header = (
        "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n"
        "#     language: python\n#     name: python3\n# ---\n\n"
    )
    path.write_text(
        header + "# %% tags=[\"parameters\"]\nsteps = 3\nname = 'a'\n\n# %%\nprint(steps, name)\n"
    )
    return path


def _notebook_case(tmp: Path, argv: list[str], *names: str) -> Result:
    result = expect_cli(notebooks_main(), argv, *names)
    if (tmp / MARKER).exists():
        return Result(EXECUTED, "a parameter ran as code")
    return result


@case("notebooks/-p name holding code")
def _(tmp):
    nb = _fake_notebook(tmp)
    argv = ["run", str(nb), "-p", _payload(tmp), "1"]
    return _notebook_case(tmp, argv, "parameter")


@case("notebooks/parameters file key holding code")
def _(tmp):
    nb = _fake_notebook(tmp)
    (tmp / "p.yaml").write_text(yaml.safe_dump({_payload(tmp): 1}))
    return _notebook_case(tmp, ["run", str(nb), "--params", str(tmp / "p.yaml")], "parameter")


def _params_file(tmp: Path, content: bytes, *names: str) -> Result:
    """Run the fake notebook with ``--params`` a file of ``content``."""
    (tmp / "p.yaml").write_bytes(content)
    argv = ["run", str(_fake_notebook(tmp)), "--params", str(tmp / "p.yaml")]
    return _notebook_case(tmp, argv, *names)


def _p_option(tmp: Path, name: str, value: str, *names: str) -> Result:
    """Run the fake notebook with ``-p name value``."""
    return _notebook_case(tmp, ["run", str(_fake_notebook(tmp)), "-p", name, value], *names)


for _name, (_content, _names) in {
    "parameters file value of a Python type": (b"name: 2024-01-02\n", ("name",)),
    "parameters file that is not a mapping": (b"- 1\n- 2\n", ("p.yaml",)),
    "parameters file with a YAML error": (b"steps: [1\n", ("p.yaml",)),
    "parameters file not UTF-8": (b"name: caf\xe9\n", ("p.yaml",)),
    "parameters file with a key written twice": (
        b"steps: 1\nname: b\nsteps: 2\n",
        ("p.yaml", "steps"),
    ),
    "parameters file with a repeated key in a nested value": (
        b"steps: 1\nname: {a: 1, a: 2}\n",
        ("p.yaml", "'a'"),
    ),
}.items():
    case(f"notebooks/{_name}")(lambda tmp, c=_content, n=_names: _params_file(tmp, c, *n))

for _name, (_args, _names) in {
    "-p value that is not finite": (("steps", ".nan"), ("steps",)),
    "-p name the notebook does not declare": (("stpes", "4"), ("stpes",)),
    "-p keyword as a name": (("import", "4"), ("import",)),
    "-p value with a YAML error": (("steps", "[1"), ("steps",)),
    "-p value mapping with a key written twice": (("name", "{a: 1, a: 2}"), ("name", "'a'")),
}.items():
    case(f"notebooks/{_name}")(lambda tmp, a=_args, n=_names: _p_option(tmp, *a, *n))


@case("notebooks/--preset that leaves params/")
def _(tmp):
    secret = tmp / "secret.yaml"
    secret.write_text("steps: 1\n")
    rel = os.path.relpath(secret, REPO / "params" / "red_team_nb")
    nb = _fake_notebook(tmp)
    return _notebook_case(tmp, ["run", str(nb), "--preset", rel[: -len(".yaml")]], "--preset")


@case("notebooks/parameters file anchor bomb")
def _(tmp):
    nb = _fake_notebook(tmp)
    (tmp / "p.yaml").write_text(BOMB.replace("method: clip\ntrain:", "steps:"))
    argv = ["run", str(nb), "--params", str(tmp / "p.yaml")]
    return cli_in_subprocess("paperlib.notebooks", argv, "p.yaml", "alias")


# --------------------------------------------------------------------------- images


def images():
    from paperlib.data import images

    return images


@case("images/decompression bomb through load_rgb")
def _(tmp):
    path = bomb_copy(tmp / "bomb.png")
    report = images().LoadReport()

    def skipped(value) -> bool:
        return value is None and report.num_skipped == 1 and "pixels" in report.skipped[0][1]

    return expect(lambda: images().load_rgb(path, report), skipped, "bomb.png")


@case("images/error text of a truncated image is bounded")
def _(tmp):
    path = image(tmp / "a.png", size=(64, 64))
    path.write_bytes(path.read_bytes()[:60])
    report = images().LoadReport()
    images().load_rgb(path, report)
    reason = report.skipped[0][1] if report.skipped else ""
    return Result(CORRECT) if 0 < len(reason) < 500 else Result(SILENT, f"reason {reason[:80]!r}")


# --------------------------------------------------------------------------- metrics


def metric(module: str):
    import importlib

    return importlib.import_module(f"paperlib.metrics.{module}")


def _unit(n: int, d: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.nn.functional.normalize(torch.randn(n, d, generator=g), dim=-1)


METRIC_CASES = {
    "zero-shot label >= n_classes": (
        lambda: metric("zeroshot").zero_shot_metrics(torch.randn(4, 3), torch.tensor([0, 1, 2, 3])),
        ("labels",),
    ),
    "zero-shot negative label": (
        lambda: metric("zeroshot").zero_shot_metrics(
            torch.randn(4, 3), torch.tensor([0, 1, -1, 2])
        ),
        ("labels",),
    ),
    "zero-shot float labels": (
        lambda: metric("zeroshot").zero_shot_metrics(
            torch.randn(4, 3), torch.tensor([0.5, 1, 2, 0])
        ),
        ("labels",),
    ),
    "HiMo@2 of NaN scores": (
        lambda: metric("monotonicity").strict_monotone_accuracy(
            torch.tensor([[0.1, float("nan")], [0.1, 0.2]])
        ),
        ("scores",),
    ),
    "HiMo@K of inf scores": (
        lambda: metric("monotonicity").himo_at_k(
            torch.tensor([[0.1, float("inf"), 0.3], [0.1, 0.2, 0.3]])
        ),
        ("scores",),
    ),
    "SSI of NaN scores": (
        lambda: metric("monotonicity").semantic_stability_index(
            torch.tensor([0.5, float("nan")]), torch.tensor([0.4, 0.3])
        ),
        ("scores",),
    ),
    "tensor curvature 0": (
        lambda: metric("scores").pairwise_scores(
            _unit(3, 4) * 0.3, _unit(3, 4) * 0.3, "hyperbolic", torch.tensor(0.0)
        ),
        ("curv",),
    ),
    "tensor curvature -1": (
        lambda: metric("zeroshot").class_embeddings(
            torch.randn(2, 3, 4) * 0.2, "hyperbolic", torch.tensor(-1.0)
        ),
        ("curv",),
    ),
    "NaN tensor curvature": (
        lambda: metric("hierarchy").caption_radii(
            torch.randn(2, 4, 4), "hyperbolic", curv=torch.tensor(float("nan"))
        ),
        ("curv",),
    ),
    "geometry name typo": (
        lambda: metric("scores").pairwise_scores(_unit(3, 4), _unit(3, 4), "euclidian", 1.0),
        ("geometry",),
    ),
    "geometry typo in paired scores": (
        lambda: metric("scores").paired_scores("Euclidean", None, _unit(3, 4), _unit(3, 4)),
        ("geometry",),
    ),
    "score dimension mismatch": (
        lambda: metric("scores").pairwise_scores(_unit(3, 4), _unit(3, 5), "euclidean"),
        ("dim",),
    ),
    "retrieval dimension mismatch": (
        lambda: metric("retrieval").retrieval_metrics(_unit(3, 4), _unit(3, 6)),
        ("dim",),
    ),
    "retrieval chunk_size=0": (
        lambda: metric("retrieval").retrieval_ranks(_unit(3, 4), _unit(3, 4), chunk_size=0),
        ("chunk_size",),
    ),
    "retrieval of NumPy arrays": (
        lambda: metric("retrieval").retrieval_metrics(np.eye(3), np.eye(3)),
        ("tensor",),
    ),
    "pairwise scores of NumPy arrays": (
        lambda: metric("scores").pairwise_scores(np.eye(3), np.eye(3), "euclidean"),
        ("tensor",),
    ),
    "zero-shot scores as a NumPy array": (
        lambda: metric("zeroshot").zero_shot_metrics(np.eye(3), torch.arange(3)),
        ("tensor",),
    ),
    "COLA of NumPy arrays": (
        lambda: metric("composition").cola_accuracy(np.ones((2, 2, 4)), np.ones((2, 2, 4))),
        ("tensor",),
    ),
    "COLA shapes that differ": (
        lambda: metric("composition").cola_accuracy(torch.randn(2, 2, 4), torch.randn(3, 2, 4)),
        ("text_features",),
    ),
    "retrieval ks of 0": (
        lambda: metric("retrieval").retrieval_metrics(_unit(3, 4), _unit(3, 4), ks=(0,)),
        ("k",),
    ),
    "segment scores dimension mismatch": (
        lambda: metric("monotonicity").segment_scores(_unit(2, 4), [_unit(3, 5), _unit(3, 5)]),
        ("dim",),
    ),
    "HierarCaps chain of 2 dims": (
        lambda: metric("hierarchy").hierarcaps_metrics(
            _unit(3, 4), _unit(3, 4), "euclidean", root=torch.zeros(4)
        ),
        ("caption_features",),
    ),
    "d_corr of a chain with one level": (
        lambda: metric("hierarchy").d_corr(torch.rand(3, 1)),
        ("levels",),
    ),
}


def _metric_case(fn, names):
    return lambda tmp: expect_error(fn, *names)


for _name, (_fn, _names) in METRIC_CASES.items():
    case(f"metrics/{_name}")(_metric_case(_fn, _names))


@case("metrics/HiMo@2 of equal scores")
def _(tmp):
    scores = torch.tensor([[0.2, 0.2], [0.1, 0.3]])
    return expect(
        lambda: metric("monotonicity").strict_monotone_accuracy(scores), lambda v: v == 0.5
    )


@case("metrics/zero-shot of one class")
def _(tmp):
    zs = metric("zeroshot")
    return expect(
        lambda: zs.zero_shot_metrics(torch.randn(3, 1), torch.zeros(3)), lambda v: v["acc1"] == 1.0
    )


@case("metrics/float curvature 0")
def _(tmp):
    return expect_error(
        lambda: metric("scores").pairwise_scores(_unit(3, 4), _unit(3, 4), "hyperbolic", 0.0),
        "curv",
    )


# --------------------------------------------------------------------------- tensors


def lib(module: str):
    import importlib

    return importlib.import_module(f"paperlib.{module}")


SCALE = torch.tensor(2.3)


def _space(n: int, d: int = 8, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    return 0.4 * _unit(n, d, seed).to(dtype)


def _hyperbolic(image, text, boxes: bool = False):
    batch = lib("losses.batch").HyperbolicBatch
    return batch(image, text, 1.0, SCALE, *((image, text) if boxes else ()))


#: loss: (the loss of (image, text), the name its refusals give the first argument)
TENSOR_LOSSES = {
    "infonce_loss": (lambda a, b: lib("losses.contrastive").infonce_loss(a, b, SCALE), "image"),
    "molo_loss": (lambda a, b: lib("losses.himo").molo_loss(a, b, SCALE).loss, "features"),
    "longclip_loss": (
        lambda a, b: lib("losses.longclip").longclip_loss(a, b, b, SCALE, pcm_dim=2).total,
        "image",
    ),
    "meru_loss": (
        lambda a, b: lib("losses.entailment").meru_loss(_hyperbolic(a, b)).total,
        "image",
    ),
    "argent_loss": (
        lambda a, b: lib("losses.entailment").argent_loss(_hyperbolic(a, b, True)).total,
        "image",
    ),
    "entailment_loss": (
        lambda a, b: lib("losses.entailment").entailment_loss(a, b, 1.0),
        "parent",
    ),
    "pairwise_scores": (
        lambda a, b: metric("scores").pairwise_scores(a, b, "hyperbolic", 1.0),
        "features",
    ),
}


def _nan_space() -> torch.Tensor:
    x = _space(4)
    x[1, 2] = float("nan")
    return x


HOSTILE = {  # what: (image, text, the words the refusal holds besides the argument)
    "empty batch": (lambda: (_space(0), _space(0)), ("non-empty",)),
    "1-D vector": (lambda: (_space(1)[0], _space(1)[0]), ("(batch, dim)",)),
    "integer features": (lambda: (_space(4).long(), _space(4).long()), ("floating",)),
    "float32 and float64": (lambda: (_space(4), _space(4).double()), ("dtype",)),
    "CPU and meta devices": (lambda: (_space(4), _space(4).to("meta")), ("device",)),
    "other feature dims": (lambda: (_space(4), _space(4, 6)), ("shape",)),
    "NaN in the image features": (lambda: (_nan_space(), _space(4, seed=1)), ("NaN",)),
}


def _tensor_case(loss: str, what: str) -> Callable[[Path], Result]:
    fn, named = TENSOR_LOSSES[loss]
    make, words = HOSTILE[what]
    if loss == "pairwise_scores" and what == "empty batch":  # an empty score matrix is right
        return lambda tmp: expect(lambda: fn(*make()), lambda v: tuple(v.shape) == (0, 0))
    return lambda tmp: expect_error(lambda: fn(*make()), named, *words)


for _loss in TENSOR_LOSSES:
    for _what in HOSTILE:
        case(f"tensors/{_loss} with {_what}")(_tensor_case(_loss, _what))


def _in_precision(loss: str, dtype: torch.dtype, tolerance: float) -> Callable[[Path], Result]:
    fn, _ = TENSOR_LOSSES[loss]
    a, b = _space(6, seed=2).double(), _space(6, seed=3).double()

    def close(value) -> bool:
        return abs(float(value) - float(fn(a, b))) <= tolerance * max(1.0, abs(float(fn(a, b))))

    return lambda tmp: expect(lambda: fn(a.to(dtype), b.to(dtype)), close, loss)


for _loss in ("infonce_loss", "molo_loss", "meru_loss", "argent_loss"):
    for _dtype, _tol in ((torch.float16, 2e-2), (torch.bfloat16, 6e-2)):
        case(f"tensors/{_loss} in {str(_dtype)[6:]} is its float64 value")(
            _in_precision(_loss, _dtype, _tol)
        )


def _gradient_finite(fn, *inputs) -> Result:
    """``fn(*inputs)`` backward: a finite value and finite gradients (or a named refusal)."""
    leaves = [x.clone().requires_grad_() for x in inputs]
    try:
        value = fn(*leaves)
        value.backward()
    except Exception as err:  # noqa: BLE001
        return judge_error(err, ())
    bad = [i for i, x in enumerate(leaves) if not bool(torch.isfinite(x.grad).all())]
    if not bool(torch.isfinite(value)) or bad:
        return Result(SILENT, f"value {float(value)}, non-finite gradient of inputs {bad}")
    return Result(CORRECT)


_SAME_TEXT = _unit(1, 8, 9).expand(5, 8).contiguous()
for _name, (_fn, _inputs) in {
    "MoLo with every text identical": (
        lambda a, b: lib("losses.himo").molo_loss(a, b, SCALE).loss,
        lambda: (_unit(5, 8, 8), _SAME_TEXT),
    ),
    "HiDe with every text identical": (
        lambda b: lib("losses.himo").hide(b).features.sum(),
        lambda: (_SAME_TEXT,),
    ),
    "exp_map0 at the origin": (
        lambda v: lib("geometry.lorentz").exp_map0(v, 1.0).sum(),
        lambda: (torch.zeros(3, 4),),
    ),
    "log_map0 at the origin": (
        lambda v: lib("geometry.lorentz").log_map0(v, 1.0).sum(),
        lambda: (torch.zeros(3, 4),),
    ),
    "exp_map0 at norm 1e6": (
        lambda v: lib("geometry.lorentz").exp_map0(v, 1.0).sum(),
        lambda: (torch.full((2, 4), 5e5),),
    ),
    "entailment at zero-norm points": (
        lambda a, b: lib("losses.entailment").entailment_loss(a, b, 1.0),
        lambda: (torch.zeros(3, 4), torch.zeros(3, 4)),
    ),
    "AdaEnt at a zero-norm parent": (
        lambda a, b: lib("losses.entailment").adaent_loss(a, b, 1.0),
        lambda: (torch.zeros(3, 4), _space(3, 4)),
    ),
}.items():
    case(f"tensors/gradient of {_name}")(lambda tmp, f=_fn, i=_inputs: _gradient_finite(f, *i()))


@case("tensors/infonce_loss of one pair is 0")
def _(tmp):
    fn, _ = TENSOR_LOSSES["infonce_loss"]
    return expect(lambda: fn(_unit(1, 8, 1), _unit(1, 8, 2)), lambda v: float(v) == 0.0, "image")


@case("tensors/molo_loss of transposed and expanded views is the contiguous value")
def _(tmp):
    fn, _ = TENSOR_LOSSES["molo_loss"]
    strided, expanded = _unit(8, 5, 3).T, _unit(1, 8, 4).expand(5, 8)
    expected = float(fn(strided.contiguous(), expanded.contiguous()))
    return expect(lambda: fn(strided, expanded), lambda v: abs(float(v) - expected) < 1e-5)


# --------------------------------------------------------------------------- benchmarks


@case("benchmarks/bench_engine.py at a tiny size")
def _(tmp):
    script = str(REPO / "benchmarks" / "bench_engine.py")
    argv = ["--steps", "10", "--batch", "16", "--repeats", "2", "--methods", "clip"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for extra in (["--eval-size", "16"], []):  # an older script has no --eval-size
        proc = subprocess.run(
            [sys.executable, script, *argv, *extra], capture_output=True, text=True, env=env
        )
        if proc.returncode == 0:
            return Result(CORRECT)
        if "unrecognized arguments: --eval-size" not in proc.stderr:
            break
    return Result(TRACEBACK, (proc.stderr.strip().splitlines() or [""])[-1][:160])


# --------------------------------------------------------------------------- siblings


@case("train/parameter file whose overrides is a string")
def _(tmp):
    path = tmp / "p.yaml"
    path.write_text(yaml.safe_dump({"config": tiny_config(tmp / "run"), "overrides": "optim.lr=1"}))
    return expect_cli(train_main(), [str(path)], "overrides")


@case("train/JSON config nested 100000 deep")
def _(tmp):
    path = tmp / "c.json"
    path.write_text("[" * 100000 + "]" * 100000)
    return expect_cli(train_main(), [str(path)], "c.json")


@case("train/model.init that is not a checkpoint")
def _(tmp):
    (tmp / "w.pt").write_bytes(os.urandom(500))
    path = write_config(tmp, tiny_config(tmp / "run", model={"init": str(tmp / "w.pt")}))
    return expect_cli(train_main(), [str(path)], "w.pt")


@case("train/webdataset root without shards")
def _(tmp):
    (tmp / "shards").mkdir()
    return expect_cli(train_main(), [str(write_config(tmp, _shard_config(tmp)))], "shards")


@case("train/a run extended, then extended again")
def _(tmp):
    from paperlib.engine import loop

    out = tmp / "run"
    for steps in (1, 2, 3):  # no warm-up: every step past the first is on the cosine
        result = loop.train(tiny_config(out, optim={"warmup_steps": 0}, train={"steps": steps}))
    lrs = [json.loads(x)["lr"] for x in (out / "log.jsonl").read_text().splitlines() if '"lr"' in x]
    ok = result.step == 3 and len(lrs) == 3 and all(lr > 0 for lr in lrs[1:])
    return Result(CORRECT) if ok else Result(SILENT, f"lrs {lrs}")


# --------------------------------------------------------------------------- interrupt, resume, folders


@contextlib.contextmanager
def _signal_after_step(at: int, signum: int):
    """While active, this process receives ``signum`` right after the update of step ``at``."""
    from paperlib.engine import loop

    real, calls = loop.apply_update, {"n": 0}

    def update(*args, **kwargs):
        lr = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == at:
            os.kill(os.getpid(), signum)
        return lr

    loop.apply_update = update
    try:
        yield
    finally:
        loop.apply_update = real


def _interrupted_then_resumed(tmp: Path, signum: int) -> Result:
    """A 6-step run stopped by ``signum`` at a seeded random step, then resumed: its losses
    and final weights must be those of the uninterrupted run."""
    from paperlib.engine import loop

    steps = 6
    at = 1 + int(np.random.default_rng(int(signum)).integers(steps - 1))
    reference = loop.train(tiny_config(tmp / "ref", train={"steps": steps}))
    with _signal_after_step(at, signum):
        stopped = loop.train(tiny_config(tmp / "cut", train={"steps": steps}))
    if (stopped.status, stopped.step) != ("interrupted", at):
        return Result(SILENT, f"not stopped at step {at}: {stopped.status} {stopped.step}")
    resumed = loop.train(tiny_config(tmp / "cut", train={"steps": steps}))
    want = {r["step"]: r["loss"] for r in reference.history}
    got = {r["step"]: r["loss"] for r in stopped.history + resumed.history}
    a = torch.load(tmp / "ref" / "last.pt", weights_only=True)["model"]
    b = torch.load(tmp / "cut" / "last.pt", weights_only=True)["model"]
    close = all(
        torch.allclose(a[k], b[k], rtol=1e-4, atol=1e-6) for k in a if a[k].is_floating_point()
    )
    same = got.keys() == want.keys() and all(
        abs(got[k] - want[k]) <= 1e-5 * abs(want[k]) for k in got
    )
    return Result(CORRECT) if same and close else Result(SILENT, f"losses {got} vs {want}")


case("train/SIGINT at a random step, then resume: the uninterrupted run")(
    lambda tmp: _interrupted_then_resumed(tmp, signal.SIGINT)
)
case("train/SIGTERM at a random step, then resume: the uninterrupted run")(
    lambda tmp: _interrupted_then_resumed(tmp, signal.SIGTERM)
)


@case("train/resume with a changed optim.lr and data.seed")
def _(tmp):
    from paperlib.engine import loop

    out = tmp / "run"
    loop.train(tiny_config(out, train={"steps": 1}))
    changed = tiny_config(out, train={"steps": 2}, optim={"lr": 0.5}, data={"seed": 3})
    with guarded(out / "last.pt", out / "log.jsonl", out / "config.json") as verdict:
        result = expect_cli(
            train_main(), [str(write_config(tmp, changed))], "optim.lr", "data.seed"
        )
    return worst(result, verdict)


@case("train/a second run on a folder a live run holds")
def _(tmp):
    import fcntl

    from paperlib.engine import loop

    out = tmp / "run"
    loop.train(tiny_config(out, train={"steps": 1}))
    with open(out / ".lock", "a+") as held:  # the first run, still holding its folder
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.seek(0)
        held.truncate()
        held.write("4242\n")
        held.flush()
        with guarded(out / "last.pt", out / "log.jsonl", out / "config.json") as verdict:
            argv = [str(write_config(tmp, tiny_config(out, train={"steps": 2})))]
            result = expect_cli(train_main(), argv, "in use", "4242")
    return worst(result, verdict)


@case("train/the lock a dead process left is taken over")
def _(tmp):
    from paperlib.engine import loop

    out = tmp / "run"
    loop.train(tiny_config(out, train={"steps": 1}))
    (out / ".lock").write_text("999999999\n")  # no such process: nothing holds its flock
    fn = lambda: loop.train(tiny_config(out, train={"steps": 2}))  # noqa: E731
    return expect(fn, lambda r: r.step == 2 and (out / ".lock").read_text() == f"{os.getpid()}\n")


ODD_FOLDER = "a folder with spaces/ünï cødé 日本"


@case("train/output_dir with spaces and non-ASCII characters")
def _(tmp):
    out = tmp / ODD_FOLDER
    argv = [str(write_config(tmp, tiny_config(out)))]
    return expect_cli(train_main(), argv, correct=lambda: (out / "last.pt").is_file())


@case("train/output_dir that is a read-only folder")
def _(tmp):
    argv = [str(write_config(tmp, tiny_config(Path("/proc/self"))))]
    return expect_cli(train_main(), argv, "train.output_dir", "/proc/self")


@case("evaluate/--output with spaces and non-ASCII characters")
def _(tmp):
    out = tmp / ODD_FOLDER

    def written() -> bool:
        return json.loads((out / "world-long.json").read_text())["metrics"] != {}

    return expect_cli(evaluate_main(), world_long_argv(out), correct=written)


@case("evaluate/--output that is a read-only folder")
def _(tmp):
    argv = [str(trained_run()), "--output", "/proc/self"]
    return expect_cli(evaluate_main(), argv, "--output", "/proc/self")


@case("evaluate/cache follows an edited HierarCaps row")
def _(tmp):
    root = tmp / "hc"
    for i in range(6):
        image(root / "test_imgs" / f"COCO_val2014_{i + 1:012d}.jpg", (40 * i, 10, 10))
    rows = [
        f"{i},a thing => a red thing {i} => a red thing on grass {i} => a red ball on green "
        f"grass {i},http://x/COCO_val2014_{i + 1:012d}.jpg"
        for i in range(6)
    ]
    (root / "hierarcaps_test.csv").write_text("id,captions,image_url\n" + "\n".join(rows) + "\n")
    argv = lambda out: [  # noqa: E731
        str(trained_run()),
        "--output",
        str(out),
        "--benchmarks",
        "hierarcaps",
        "--hierarcaps-root",
        str(root),
    ]
    main = evaluate_main()
    run_main(main, argv(tmp / "out"))
    text = (root / "hierarcaps_test.csv").read_text().replace("a thing =>", "an object =>")
    (root / "hierarcaps_test.csv").write_text(text)
    run_main(main, argv(tmp / "out"))
    run_main(main, argv(tmp / "fresh"))
    a = json.loads((tmp / "out" / "hierarcaps.json").read_text())["metrics"]
    b = json.loads((tmp / "fresh" / "hierarcaps.json").read_text())["metrics"]
    return Result(CORRECT) if a == b else Result(SILENT, f"cached {a} vs fresh {b}")


@case("evaluate/--output holding a JSON file of the user's")
def _(tmp):
    return user_file_in_output(tmp, "notes.json", '{"mine": 1}\n')


@case("evaluate/--output holding the user's results.md")
def _(tmp):
    return user_file_in_output(tmp, "results.md", "# My results\n\nwritten by hand\n")


@case("evaluate/evaluating again into its own folder")
def _(tmp):
    argv = world_long_argv(tmp / "o")
    main = evaluate_main()
    first = run_main(main, argv)[0]
    expected = (tmp / "o" / "world-long.json").read_text() if first == 0 else None
    return expect_cli(
        main, argv, correct=lambda: (tmp / "o" / "world-long.json").read_text() == expected
    )


@case("evaluate/--model longclip-l14 with a folder as --checkpoint")
def _(tmp):
    argv = ["--model", "longclip-l14", "--checkpoint", str(tmp), "--output", str(tmp / "o")]
    return expect_cli(evaluate_main(), argv, str(tmp))


@case("evaluate/--pep-pool file of negative ids")
def _(tmp):
    (tmp / "ids").write_text("[-1, 2]")
    argv = [
        str(trained_run()),
        "--output",
        str(tmp / "o"),
        "--pep-negatives",
        "shared",
        "--pep-pool",
        str(tmp / "ids"),
    ]
    return expect_cli(evaluate_main(), argv, "--pep-pool")


@case("evaluate/himo-docci image missing")
def _(tmp):
    root = himo_docci(tmp / "data")
    (root / "images" / "test_00002.jpg").unlink()
    return expect_cli(
        evaluate_main(), evaluate_argv(root, tmp / "out", "himo-docci"), "test_00002.jpg"
    )


for _name, (_fn, _names) in {
    "COLA top level is a mapping": (
        lambda t: (t / "c.json").write_text("{}") and loaders().load_cola(t / "c.json", t),
        ("c.json",),
    ),
    "Urban1k without caption files": (
        lambda t: (t / "caption").mkdir() or loaders().load_urban1k(t, require_images=False),
        ("caption",),
    ),
    "ImageNet names fewer than folders": (
        lambda t: (
            [image(t / "val" / w / "a.png") for w in ("n1", "n2")]
            and loaders().load_image_folder(t / "val", ["cat"])
        ),
        ("class",),
    ),
    "HierarCaps duplicate ids": (
        lambda t: _hierarcaps(
            t, f"id,captions,image_url\n1,a => b => c => d,{URL}\n1,a => b => c => e,{URL}\n"
        ),
        ("1",),
    ),
    "HiMo-Docci NUL byte in a path": (
        lambda t: _himo(
            t, [{"img_path": "a\x00.png", "caption": ["A b.", "A b. C."], "raw_caption": "x"}]
        ),
        ("img_path",),
    ),
    "DOCCI duplicate example ids": (
        lambda t: _docci(t, [{"image_file": "a.png", "description": "A.", "example_id": "e1"}] * 2),
        ("e1",),
    ),
    "CUB image path outside its root": (lambda t: _cub(t, "2 ../../secret.jpg"), ("images.txt",)),
    "CUB label that is not a number": (
        lambda t: _cub(t, "2 one", "image_class_labels.txt"),
        ("image_class_labels.txt",),
    ),
    "Flickr30k repeated caption number": (
        lambda t: _flickr(t, "".join(f"a.png#{min(k, 3)}\tcap {k}\n" for k in range(5))),
        ("#3",),
    ),
}.items():
    case(f"loaders/{_name}")(_loader_error(_fn, *_names))


for _name, (_fn, _names) in {
    "HiMo@K of one segment": (
        lambda: metric("monotonicity").himo_at_k(torch.tensor([[0.3], [0.2]])),
        ("scores",),
    ),
    "SSI with a zero clean score": (
        lambda: metric("monotonicity").semantic_stability_index(
            torch.tensor([0.0, 0.5]), torch.tensor([0.1, 0.4])
        ),
        ("clean_scores",),
    ),
    "COLA protocol typo": (
        lambda: metric("composition").cola_accuracy(
            torch.randn(2, 2, 4), torch.randn(2, 2, 4), "text2image"
        ),
        ("protocol",),
    ),
    "retrieval text_to_image past the images": (
        lambda: metric("retrieval").retrieval_ranks(
            _unit(2, 4), _unit(3, 4), torch.tensor([0, 1, 2])
        ),
        ("text_to_image",),
    ),
    "zero-shot labels of another length": (
        lambda: metric("zeroshot").zero_shot_metrics(torch.randn(4, 3), torch.tensor([0, 1])),
        ("labels",),
    ),
    "hyperbolic scores without curv": (
        lambda: metric("scores").paired_scores("hyperbolic", None, _unit(3, 4), _unit(3, 4)),
        ("curv",),
    ),
    "exp_map0 with a NaN float curvature": (
        lambda: __import__("paperlib.geometry.lorentz", fromlist=["x"]).exp_map0(
            torch.randn(2, 3), float("nan")
        ),
        ("curv",),
    ),
}.items():
    case(f"metrics/{_name}")(_metric_case(_fn, _names))


@case("images/truncated PNG is skipped with its reason")
def _(tmp):
    path = image(tmp / "a.png", size=(64, 64))
    path.write_bytes(path.read_bytes()[:80])
    report = images().LoadReport()
    value = images().load_rgb(path, report)
    ok = value is None and report.num_skipped == 1 and report.skipped[0][0] == str(path)
    return Result(CORRECT) if ok else Result(SILENT, f"{value}, {report.skipped}")


# --------------------------------------------------------------------------- files


def _bytes_loader(kind: str, data: bytes):
    """The loader ``kind`` on a dataset (one image, ``a.png``) whose text file holds ``data``."""
    if kind == "Urban1k":
        return lambda t: _urban(t, {"0": data})
    name, load = {
        "ShareGPT4V": ("s.json", lambda r: loaders().load_sharegpt4v(r / "s.json", r)),
        "Long-DCI": ("d.csv", lambda r: loaders().load_long_dci(r / "d.csv", r)),
    }[kind]

    def run(tmp: Path):
        root = tmp / "root"
        image(root / "a.png")
        (root / name).write_bytes(data)
        return load(root)

    return run


SHARE_ITEM = json.dumps([{"image": "a.png", "conversations": TURNS}])
DCI_TEXT = "filepath\ttitle\na.png\tA cat.\n"
for _name, (_kind, _data, _names) in {
    "Urban1k caption in UTF-16": ("Urban1k", "A cat.\n".encode("utf-16"), ("0.txt", "UTF-16")),
    "ShareGPT4V file in UTF-16": ("ShareGPT4V", SHARE_ITEM.encode("utf-16"), ("s.json", "UTF-16")),
    "ShareGPT4V file in Latin-1": (
        "ShareGPT4V",
        SHARE_ITEM.replace("cat", "caf\u00e9").encode("latin-1"),
        ("s.json", "UTF-8"),
    ),
    "Long-DCI file in UTF-16": ("Long-DCI", DCI_TEXT.encode("utf-16"), ("d.csv", "UTF-16")),
    "Long-DCI title of 200 000 characters": (
        "Long-DCI",
        b"filepath\ttitle\na.png\t" + b"x" * 200_000 + b"\n",
        ("d.csv", "field"),
    ),
}.items():
    case(f"loaders/{_name}")(_loader_error(_bytes_loader(_kind, _data), *_names))

for _name, (_kind, _data, _caption) in {
    "Urban1k caption with a UTF-8 byte-order mark": ("Urban1k", b"\xef\xbb\xbfA cat.\n", "A cat."),
    "Urban1k caption in CRLF": ("Urban1k", b"A cat.\r\nmore\r\n", "A cat."),
    "Urban1k caption of 10 MB": ("Urban1k", b"y" * 10**7 + b"\n", "y" * 10**7),
    "ShareGPT4V file with a UTF-8 byte-order mark": (
        "ShareGPT4V",
        b"\xef\xbb\xbf" + SHARE_ITEM.encode(),
        "A cat.",
    ),
    "Long-DCI file with a byte-order mark and CRLF": (
        "Long-DCI",
        b"\xef\xbb\xbf" + DCI_TEXT.replace("\n", "\r\n").encode(),
        "A cat.",
    ),
}.items():
    case(f"loaders/{_name}")(
        lambda tmp, k=_kind, d=_data, c=_caption: expect(
            lambda: _bytes_loader(k, d)(tmp), lambda v: [s.caption for s in v] == [c]
        )
    )


@case("loaders/Urban1k caption file that is a folder")
def _(tmp):
    root = urban1k(tmp / "d", n=2)
    (root / "caption" / "1.txt").unlink()
    (root / "caption" / "1.txt").mkdir()
    return expect_error(lambda: loaders().load_urban1k(root), "1.txt", "folder")


@case("loaders/ShareGPT4V JSON path that is a folder")
def _(tmp):
    (tmp / "s.json").mkdir()
    return expect_error(lambda: loaders().load_sharegpt4v(tmp / "s.json", tmp), "s.json", "folder")


def _linked(tmp: Path, load, field: str) -> Result:
    """An image inside the root that is a symbolic link to a file outside it: the user's own
    layout, followed (the file names a path inside the root; a ``..`` is refused elsewhere)."""
    root = tmp / "root"
    outside = _outside_image(tmp)
    (root / "images").mkdir(parents=True)
    for base in (root, root / "images"):
        (base / "a.png").symlink_to(outside)
    try:
        samples = load(root)
    except Exception as err:  # noqa: BLE001
        return judge_error(err, (field,))
    read = [Path(p).resolve() for s in samples for p in s.meta.get("images", [s.image])]
    if read == [outside.resolve()] and all(root in Path(s.image).parents for s in samples):
        return Result(CORRECT, "the link inside the root is followed")
    return Result(SILENT, f"reads {read[:2]}")


for _dataset, (_load, _field) in {
    "ShareGPT4V": (
        lambda r: (
            (r / "s.json").write_text(SHARE_ITEM) and loaders().load_sharegpt4v(r / "s.json", r)
        ),
        "image",
    ),
    "HiMo-Docci": (
        lambda r: (
            (r / "h.json").write_text(
                json.dumps(
                    {"img_path": "a.png", "caption": ["A b.", "A b. C."], "raw_caption": "x"}
                )
            )
            and loaders().load_himo_docci(r / "h.json", r / "images")
        ),
        "img_path",
    ),
    "Long-DCI": (
        lambda r: (r / "d.csv").write_text(DCI_TEXT) and loaders().load_long_dci(r / "d.csv", r),
        "filepath",
    ),
}.items():
    case(f"loaders/{_dataset} image that is a symlink inside the root, to a file outside")(
        lambda tmp, ld=_load, f=_field: _linked(tmp, ld, f)
    )


def _decoded(path: Path, expected) -> Result:
    """load_rgb of ``path``: RGB pixels equal to ``expected`` (an (h, w, 3) array)."""
    report = images().LoadReport()
    out = images().load_rgb(path, report)
    if out is None:
        return Result(SILENT, f"skipped: {report.skipped}")
    got = np.asarray(out, dtype=np.int64)
    ok = out.mode == "RGB" and got.shape == expected.shape and np.abs(got - expected).max() <= 2
    return Result(CORRECT) if ok else Result(SILENT, f"{out.mode} {got.shape} {got[0, 0]}")


def _animated(path: Path) -> Path:
    frames = [Image.new("RGB", (4, 4), c) for c in ((250, 0, 0), (0, 0, 250))]
    frames[0].save(path, save_all=True, append_images=frames[1:])
    return path


def _exif_rotated(path: Path) -> Path:
    stored = Image.new("RGB", (6, 2), (0, 0, 0))
    stored.paste((255, 255, 255), (0, 0, 3, 2))
    exif = Image.Exif()
    exif[0x0112] = 6
    stored.save(path, exif=exif)
    return path


def _saved(path: Path, image: Image.Image, **options) -> Path:
    image.save(path, **options)
    return path


def _stored_exif() -> np.ndarray:
    pixels = np.zeros((2, 6, 3), dtype=np.int64)
    pixels[:, :3] = 255
    return pixels


for _name, (_make, _expected) in {
    "1x1 image": (
        lambda t: _saved(t / "a.png", Image.new("RGB", (1, 1), (1, 2, 3))),
        np.array([[[1, 2, 3]]]),
    ),
    "CMYK JPEG": (
        lambda t: _saved(t / "a.jpg", Image.new("CMYK", (3, 2), (0, 255, 255, 0)), quality=100),
        np.full((2, 3, 3), (255, 0, 0)),
    ),
    "palette PNG": (
        lambda t: _saved(t / "a.png", Image.new("RGB", (3, 3), (10, 200, 30)).quantize(4)),
        np.full((3, 3, 3), (10, 200, 30)),
    ),
    "16-bit greyscale PNG": (
        lambda t: _saved(t / "a.png", Image.fromarray(np.full((2, 3), 40000, dtype=np.uint16))),
        np.full((2, 3, 3), 40000 // 256),
    ),
    "animated GIF: its first frame": (
        lambda t: _animated(t / "a.gif"),
        np.full((4, 4, 3), (250, 0, 0)),
    ),
    "EXIF-rotated image: its stored pixels": (lambda t: _exif_rotated(t / "e.png"), None),
}.items():
    case(f"images/{_name}")(
        lambda tmp, m=_make, e=_expected: _decoded(m(tmp), _stored_exif() if e is None else e)
    )


def _skipped(path: Path) -> Result:
    report = images().LoadReport()
    out = images().load_rgb(path, report)
    named = report.num_skipped == 1 and report.skipped[0][0] == str(path)
    return Result(CORRECT) if out is None and named else Result(SILENT, f"{out}, {report.skipped}")


@case("images/zero-byte file is skipped with its path")
def _(tmp):
    (tmp / "z.png").write_bytes(b"")
    return _skipped(tmp / "z.png")


@case("images/a folder named like an image is skipped with its path")
def _(tmp):
    (tmp / "d.png").mkdir()
    return _skipped(tmp / "d.png")


def _tar_members(path: Path, members: list[tuple[str, bytes]]) -> Path:
    """The tar file ``path`` of ``members`` (name, data), named as given."""
    import tarfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _grit_members(key: str, caption: bytes = b"a scene") -> list[tuple[str, bytes]]:
    """The tar members of a complete GRIT record (a box included) under ``key``."""
    record = {**grit_record(99), "child.txt": caption}
    return [(f"{key}.{name}", data) for name, data in record.items() if name != "__key__"]


def _shard_members_run(tmp: Path, members, *names: str) -> Result:
    """Train on one shard of 16 good records with ``members`` after the third; refused naming
    ``names``."""
    good = [(f"{r['__key__']}.{k}", v) for r in map(grit_record, range(16)) for k, v in r.items()]
    good = [m for m in good if not m[0].endswith("__key__")]
    at = 3 * len(good) // 16
    _tar_members(tmp / "shards" / "s-000000.tar", good[:at] + members + good[at:])
    argv = [str(write_config(tmp, _shard_config(tmp)))]
    return expect_cli(train_main(), argv, "s-000000.tar", *names)


for _name, (_members, _names) in {
    "a key written twice in one shard": (_grit_members("s0001", b"again"), ("s0001", "twice")),
    "a member name with ../": (_grit_members("../../outside/s0099"), ("leave the shard",)),
    "an absolute member name": (_grit_members("/etc/s0099"), ("leave the shard",)),
    "a member repeated inside one record": (
        _grit_members("s0099") + [("s0099.child.txt", b"b")],
        ("duplicate",),
    ),
}.items():
    case(f"shards/{_name}")(lambda tmp, m=_members, n=_names: _shard_members_run(tmp, m, *n))


# --------------------------------------------------------------------------- study (results)


def _study_copy(tmp: Path) -> Path:
    target = tmp / "results" / "smoke"
    shutil.copytree(REPO / "results" / "smoke", target)
    os.environ["PAPERLIB_RESULTS"] = str(tmp / "results")
    return target


def study_main():
    from paperlib.study.cli import main

    return main


@contextlib.contextmanager
def _results_env():
    before = os.environ.get("PAPERLIB_RESULTS")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PAPERLIB_RESULTS", None)
        else:
            os.environ["PAPERLIB_RESULTS"] = before


@case("study/--decide-only with a variant's seed0 deleted")
def _(tmp):
    with _results_env():
        results = _study_copy(tmp)
        shutil.rmtree(results / "himo" / "molo" / "seed0")
        return expect_cli(study_main(), ["--scale", "smoke", "--decide-only"], "molo", "seed0")


@case("study/--decide-only with a half-written items.npz")
def _(tmp):
    with _results_env():
        results = _study_copy(tmp)
        items = results / "himo" / "molo" / "seed0" / "items.npz"
        items.write_bytes(items.read_bytes()[:200])
        return expect_cli(study_main(), ["--scale", "smoke", "--decide-only"], "items.npz")


@case("study/--decide-only with a run.done that is not JSON")
def _(tmp):
    with _results_env():
        results = _study_copy(tmp)
        (results / "himo" / "molo" / "seed0" / "run.done").write_text("{half")
        return expect_cli(study_main(), ["--scale", "smoke", "--decide-only"], "run.done")


@case("study/compare with claims.json effects set to 123")
def _(tmp):
    from paperlib.study.compare import main

    with _results_env():
        results = _study_copy(tmp)
        claims = json.loads((results / "claims.json").read_text())
        for claim in claims["claims"]:
            if "effect" in claim:
                claim["effect"] = 123
        (results / "claims.json").write_text(json.dumps(claims))
        code, text, error = run_main(
            main, ["--scale", "smoke", "--reproduced", str(tmp / "results")]
        )
        if error is not None or "Traceback" in text:
            return Result(TRACEBACK, text.strip().splitlines()[-1][:160])
        return Result(NAMED) if code != 0 and "effect" in text else Result(SILENT, f"exit {code}")


@case("study/compare on a results file that is not JSON")
def _(tmp):
    from paperlib.study.compare import main

    with _results_env():
        results = _study_copy(tmp)
        (results / "himo" / "molo" / "seed0" / "world-long.json").write_text("[1,")
        argv = ["--scale", "smoke", "--reproduced", str(tmp / "results")]
        return expect_cli(main, argv, "world-long.json")


def _molo(results: Path) -> Path:
    return results / "himo" / "molo" / "seed0"


def _edit_json(path: Path, edit: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _decide_only(tmp: Path, change: Callable[[Path], object], *names: str) -> Result:
    """``--decide-only`` on a fresh smoke copy changed by ``change(results/smoke)``."""
    with _results_env():
        results = _study_copy(tmp)
        change(results)
        return expect_cli(study_main(), ["--scale", "smoke", "--decide-only"], *names)


def _unplanned_seed(results: Path) -> None:
    for variant in ("molo", "infonce-lam-0"):
        seed1 = results / "himo" / variant / "seed1"
        shutil.copytree(results / "himo" / variant / "seed0", seed1)
        _edit_json(seed1 / "run.done", lambda d: d.update(seed=1))
    items = results / "himo" / "molo" / "seed1" / "items.npz"
    with np.load(items) as data:
        values = {k: data[k] for k in data.files}
    values["world-long/i2t_hit1"] = np.ones_like(values["world-long/i2t_hit1"])
    np.savez(items, **values)


@case("study/files: --decide-only with an unplanned seed1 copied from seed0")
def _(tmp):
    return _decide_only(tmp, _unplanned_seed, "seed1", "plan")


@case("study/files: --decide-only on a trained run without its log.jsonl")
def _(tmp):
    return _decide_only(tmp, lambda r: (_molo(r) / "log.jsonl").unlink(), "molo", "log.jsonl")


def _drop_item(results: Path) -> None:
    items = _molo(results) / "items.npz"
    with np.load(items) as data:
        values = {k: data[k] for k in data.files if k != "world-long/i2t_hit1"}
    np.savez(items, **values)


@case("study/files: --decide-only with an item missing from items.npz")
def _(tmp):
    return _decide_only(tmp, _drop_item, "items.npz", "world-long/i2t_hit1")


@case("study/files: --decide-only on a run.done with an unknown method")
def _(tmp):
    def change(results):
        _edit_json(_molo(results) / "run.done", lambda d: d["config"].update(method="nope"))

    return _decide_only(tmp, change, "run.done", "method", "nope")


@case("study/files: --decide-only on a run.done without feature_std")
def _(tmp):
    def change(results):
        _edit_json(_molo(results) / "run.done", lambda d: d.pop("feature_std"))

    return _decide_only(tmp, change, "run.done", "feature_std")


@case("study/files: --decide-only with claims.json a folder of the user's")
def _(tmp):
    with _results_env():
        results = _study_copy(tmp)
        (results / "claims.json").unlink()
        (results / "claims.json").mkdir()
        notes = results / "claims.json" / "notes.txt"
        notes.write_text("mine\n")
        with guarded(notes) as verdict:
            result = expect_cli(study_main(), ["--scale", "smoke", "--decide-only"], "claims.json")
        return worst(result, verdict)


def _compare_copy(tmp: Path, change: Callable[[Path], object], *names: str) -> Result:
    """``compare`` of a fresh smoke copy changed by ``change(results/smoke)`` against the
    committed results."""
    from paperlib.study.compare import main

    with _results_env():
        results = _study_copy(tmp)
        change(results)
        argv = ["--scale", "smoke", "--reproduced", str(tmp / "results")]
        return expect_cli(main, argv, *names)


@case('study/files: compare on a re-run metric written as "abc"')
def _(tmp):
    def change(results):
        def edit(d):
            d["metrics"]["image_retrieval_recall@1"] = "abc"

        _edit_json(_molo(results) / "world-long.json", edit)

    return _compare_copy(tmp, change, "world-long.json", "image_retrieval_recall@1")


@case("study/files: compare on a claims.json effect written as a string")
def _(tmp):
    def change(results):
        def edit(d):
            first = next(c for c in d["claims"] if c.get("effect") is not None)
            first["effect"] = str(first["effect"])

        _edit_json(results / "claims.json", edit)

    return _compare_copy(tmp, change, "claims.json", "effect")


def _summary(tmp: Path, edit: Callable[[dict], object], *names: str) -> Result:
    with _results_env():
        results = _study_copy(tmp)
        _edit_json(results / "claims.json", edit)
        return expect_cli(study_main(), ["--scale", "smoke", "--summary"], *names)


@case("study/files: --summary on a claims.json claim without verdict")
def _(tmp):
    return _summary(tmp, lambda d: d["claims"][0].pop("verdict"), "claims.json", "verdict")


@case("study/files: --summary on a claims.json with claims null")
def _(tmp):
    return _summary(tmp, lambda d: d.update(claims=None), "claims.json", "claims")


@case("study/files: --summary on a claims.json with claims []")
def _(tmp):
    return _summary(tmp, lambda d: d.update(claims=[]), "claims.json", "claims")


@case("study/files: --status on a run.done whose config is []")
def _(tmp):
    with _results_env():
        results = _study_copy(tmp)
        _edit_json(_molo(results) / "run.done", lambda d: d.update(config=[]))
        return expect_cli(study_main(), ["--scale", "smoke", "--status"], "run.done", "config")


@case("study/files: compare --report onto the re-run's claims.json")
def _(tmp):
    from paperlib.study.compare import main

    with _results_env():
        results = _study_copy(tmp)
        argv = ["--scale", "smoke", "--reproduced", str(tmp / "results")]
        with guarded(results / "claims.json") as verdict:
            result = expect_cli(main, [*argv, "--report", str(results / "claims")], "claims")
        return worst(result, verdict)


@case("study/files: compare --report inside the committed results/")
def _(tmp):
    from paperlib.study.compare import main

    report = REPO / "results" / "smoke" / f"red-team-report-{os.getpid()}"
    written = [report.with_suffix(".md"), report.with_suffix(".json")]
    with _results_env():
        _study_copy(tmp)
        argv = ["--scale", "smoke", "--reproduced", str(tmp / "results")]
        try:
            result = expect_cli(main, [*argv, "--report", str(report)], "results")
            if any(p.exists() for p in written):
                result = Result(LOST, "wrote a report into the committed results/")
        finally:
            for path in written:
                path.unlink(missing_ok=True)
        return result


# --------------------------------------------------------------------------- checkpoints, storage, world cache (inputs)


def resumable_run(tmp: Path, **changes) -> tuple[Path, Path]:
    """A copy of the tiny 1-step run with ``changes`` made to its ``last.pt``, and a config
    resuming it to 3 steps (the run's folder, the config file)."""
    out = tmp / "run"
    shutil.copytree(trained_run(), out)
    state = torch.load(out / "last.pt", weights_only=True)
    state.update(changes)
    torch.save(state, out / "last.pt")
    return out, write_config(tmp, tiny_config(out, train={"steps": 3}))


def flip_float_signs(path: Path, count: int = 60) -> None:
    """Flip the sign bit of ``count`` float32 entries of the largest tensor record of a torch
    zip archive, keeping its size and mtime."""
    with zipfile.ZipFile(path) as archive:
        info = max(
            (i for i in archive.infolist() if "/data/" in i.filename), key=lambda i: i.file_size
        )
    data = bytearray(path.read_bytes())
    head = info.header_offset
    start = head + 30 + int.from_bytes(data[head + 26 : head + 28], "little")
    start += int.from_bytes(data[head + 28 : head + 30], "little")
    for entry in range(count):
        data[start + 4 * entry + 3] ^= 0x80
    stat = path.stat()
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def limited_train(config: Path, limit_kib: int) -> tuple[int, str]:
    """``python -m paperlib.train config`` under ``ulimit -f`` (SIGXFSZ ignored by bash's
    child, so a write past the limit fails with EFBIG): (exit code, stderr)."""
    code = (
        "import signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "from paperlib.train import main; sys.exit(main([sys.argv[1]]))"
    )
    script = f'ulimit -f {limit_kib}; exec {sys.executable} -c "$0" "$1"'
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        ["bash", "-c", script, code, str(config)], capture_output=True, text=True, env=env
    )
    return proc.returncode, proc.stderr


def world_cache_run(tmp: Path, damage) -> Result:
    """Train on a world cache that ``damage(folder)`` changed (after a first run built it):
    refused naming the file."""
    from paperlib.engine import loop

    cache = {"cache_dir": str(tmp / "cache")}
    loop.train(tiny_config(tmp / "first", data=cache, train={"steps": 1}))
    names = {damage(folder) for folder in (tmp / "cache").glob("world-*")}
    raw = tiny_config(tmp / "run", data=cache)
    return expect_cli(train_main(), [str(write_config(tmp, raw))], *names)


# --------------------------------------------------------------------------- checkpoints, storage, world cache


@case("train/resume from a checkpoint whose step is -5")
def _(tmp):
    out, config = resumable_run(tmp, step=-5)
    with guarded(out / "log.jsonl") as verdict:
        result = expect_cli(train_main(), [str(config)], "last.pt", "step")
    return worst(result, verdict)


@case("train/resume from a checkpoint whose step is the string '2'")
def _(tmp):
    out, config = resumable_run(tmp, step="2")
    return expect_cli(train_main(), [str(config)], "last.pt", "step")


@case("train/resume from a checkpoint whose step is 2.5")
def _(tmp):
    out, config = resumable_run(tmp, step=2.5)
    return expect_cli(train_main(), [str(config)], "last.pt", "step")


@case("train/resume from a checkpoint whose step is 1,000,000 of 3")
def _(tmp):
    out, config = resumable_run(tmp, step=1_000_000)
    with guarded(out / "last.pt") as verdict:
        result = expect_cli(train_main(), [str(config)], "last.pt", "step")
    return worst(result, verdict)


@case("evaluate/last.pt whose model tensors are int64")
def _(tmp):
    state = torch.load(trained_run() / "last.pt", weights_only=True)
    out, _ = resumable_run(tmp, model={k: v.long() for k, v in state["model"].items()})
    argv = [str(out), "--output", str(tmp / "o"), "--benchmarks", "world-long"]
    return expect_cli(evaluate_main(), [*argv, "--world-size", "8"], "last.pt", "int64")


@case("evaluate/last.pt with 60 sign bits flipped, same size and mtime, same output")
def _(tmp):
    out, _ = resumable_run(tmp)
    argv = [str(out), "--output", str(tmp / "o"), "--benchmarks", "world-long"]
    argv += ["--world-size", "8"]
    code, text, _ = run_main(evaluate_main(), argv)
    if code != 0:
        return Result(TRACEBACK, f"first evaluation failed: {text[-160:]}")
    before = (tmp / "o" / "world-long.json").read_text()
    flip_float_signs(out / "last.pt")
    code, text, error = run_main(evaluate_main(), argv)
    if code == 0 and error is None:
        after = (tmp / "o" / "world-long.json").read_text()
        return Result(SILENT, "the old weights' metrics") if after == before else Result(CORRECT)
    return expect_cli(evaluate_main(), argv, "last.pt", "corrupt")


@case("checkpoint/a same-size byte flip in last.pt loads")
def _(tmp):
    from paperlib.engine.checkpoint import load_checkpoint

    out, _ = resumable_run(tmp)
    flip_float_signs(out / "last.pt", count=1)
    return expect_error(lambda: load_checkpoint(out / "last.pt"), "last.pt", "corrupt")


@case("train/a file-size limit (ulimit -f) at the checkpoint")
def _(tmp):
    out, config = resumable_run(tmp)
    with guarded(out / "last.pt") as verdict:
        code, text = limited_train(config, 2048)
        result = judge_exit(code, text, "last.pt", "EFBIG")
        if result.outcome == NAMED and code != 4:
            result = Result(UNNAMED, f"exit {code}, not the storage exit 4")
    return worst(result, verdict)


@case("atomic_write/replacing a 0644 claims.json under umask 022")
def _(tmp):
    from paperlib.atomic import atomic_write_text

    path = tmp / "claims.json"
    path.write_text("{}")
    path.chmod(0o644)
    previous = os.umask(0o022)
    try:
        atomic_write_text(path, '{"a": 1}')
        new = atomic_write_text(tmp / "new.json", "{}")
    finally:
        os.umask(previous)
    modes = (path.stat().st_mode & 0o777, new.stat().st_mode & 0o777)
    return Result(CORRECT) if modes == (0o644, 0o644) else Result(SILENT, f"modes {modes}")


@case("train/world cache whose images.npy has fewer rows than its name")
def _(tmp):
    def damage(folder: Path) -> str:
        np.save(folder / "images.npy", np.load(folder / "images.npy")[:5])
        return "images.npy"

    return world_cache_run(tmp, damage)


@case("train/world cache whose images.npy is a git-lfs pointer")
def _(tmp):
    def damage(folder: Path) -> str:
        pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n"
        (folder / "images.npy").write_text(pointer)
        return "images.npy"

    return world_cache_run(tmp, damage)


@case("train/model.init is the last.pt of train.output_dir")
def _(tmp):
    out, _ = resumable_run(tmp)
    raw = tiny_config(out, model={"init": str(out / "last.pt")}, train={"resume": False})
    with guarded(out / "last.pt") as verdict:
        result = expect_cli(train_main(), [str(write_config(tmp, raw))], "model.init")
    return worst(result, verdict)


@case("train/data.cache_dir is train.output_dir")
def _(tmp):
    raw = tiny_config(tmp / "run", data={"cache_dir": str(tmp / "run")})
    return expect_cli(train_main(), [str(write_config(tmp, raw))], "data.cache_dir")


@case("evaluate/--output is the run folder of the checkpoint")
def _(tmp):
    out, _ = resumable_run(tmp)
    argv = [str(out), "--output", str(out), "--benchmarks", "world-long", "--world-size", "8"]
    with guarded(out / "last.pt", out / "config.json") as verdict:
        result = expect_cli(evaluate_main(), argv, "--output")
    return worst(result, verdict)


# --------------------------------------------------------------------------- pre-emption,
# bounds, storage, tracking, code versions, notebooks, metrics, limits


def _stopped_by_sigterm(tmp: Path) -> tuple[int | None, str, Path]:
    """``python -m paperlib.train`` (in this process) sent SIGTERM during its second step."""
    from paperlib.engine import loop

    real, calls = loop.apply_update, {"n": 0}

    def update(*args, **kwargs):
        lr = real(*args, **kwargs)
        calls["n"] += 1
        if calls["n"] == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return lr

    loop.apply_update = update
    try:
        raw = tiny_config(tmp / "run", train={"steps": 6})
        code, text, _ = run_main(train_main(), [str(write_config(tmp, raw))])
    finally:
        loop.apply_update = real
    return code, text, tmp / "run"


@case("train/SIGTERM mid-run: a distinct exit status, the step and status in last.pt")
def _(tmp):
    code, _, run = _stopped_by_sigterm(tmp)
    state = torch.load(run / "last.pt", weights_only=True)
    found = (code, state.get("step"), state.get("status"))
    return Result(CORRECT) if found == (75, 2, "interrupted") else Result(SILENT, f"{found}")


@case("evaluate/a run stopped by SIGTERM, without --allow-partial")
def _(tmp):
    _, _, run = _stopped_by_sigterm(tmp)
    argv = [str(run), "--output", str(tmp / "out"), "--benchmarks", "world-long"]
    return expect_cli(
        evaluate_main(), [*argv, "--world-size", "8"], "step 2 of 6", "--allow-partial"
    )


for _name, (_sections, _names) in {
    "train.batch_size=1 for HiMo (a loss of exactly 0)": (
        {"train": {"batch_size": 1}},
        ("train.batch_size",),
    ),
    "model.curv_init=1e30 (uniform logits)": ({"model": {"curv_init": 1e30}}, ("model.curv_init",)),
    "data.size=10**9": ({"data": {"size": 10**9}}, ("data.size",)),
    "train.val_size=10**7": ({"train": {"val_size": 10**7}}, ("train.val_size",)),
}.items():
    case(f"train/{_name}")(
        lambda tmp, s=_sections, n=_names: expect_cli(
            train_main(),
            [
                str(
                    write_config(
                        tmp, tiny_config(tmp / "run", "himo" if "batch" in n[0] else "meru", **s)
                    )
                )
            ],
            *n,
        )
    )


@case("train/a hyperbolic base whose stored curvature is NaN")
def _(tmp):
    from paperlib.engine import loop

    base = loop.train(tiny_config(tmp / "base", "meru", train={"steps": 0})).checkpoint
    state = torch.load(base, weights_only=True)
    state["model"]["model.log_curv"].fill_(float("nan"))
    torch.save(state, base)
    raw = tiny_config(tmp / "run", "meru", model={"init": str(base)})
    return expect_cli(train_main(), [str(write_config(tmp, raw))], str(base), "model.log_curv")


@case("train/a full disk inside the checkpoint serializer, free space left")
def _(tmp):
    from paperlib import atomic

    real = atomic.os.fsync

    def full(fd):
        if ".last.pt." in os.readlink(f"/proc/self/fd/{fd}"):
            try:
                raise OSError(28, "No space left on device")
            except OSError:
                raise RuntimeError("[enforce fail at inline_container.cc] unexpected pos") from None
        real(fd)

    atomic.os.fsync = full
    try:
        return expect_cli(
            train_main(), [str(write_config(tmp, tiny_config(tmp / "run")))], "last.pt", "disk full"
        )
    finally:
        atomic.os.fsync = real


@case("train/an edited caption in the rendered world cache")
def _(tmp):
    from paperlib.data.world_cache import cached_world

    folder = cached_world(tmp / "cache", seed=0, size=32, image_size=32, twins=False)
    texts = json.loads((folder / "texts.json").read_text())
    texts["caption"][0] = "edited by hand"
    (folder / "texts.json").write_text(json.dumps(texts))
    raw = tiny_config(tmp / "run", data={"cache_dir": str(tmp / "cache")})
    return expect_cli(train_main(), [str(write_config(tmp, raw))], "texts.json", "checksum")


@case("train/a reporting backend that fails mid-run")
def _(tmp):
    import warnings

    from paperlib.engine import loop, reporting

    class Failing:
        name = "tensorboard"

        def __init__(self, *args):
            pass

        def scalars(self, step, values):
            raise OSError(28, "No space left on device")

        def close(self):
            pass

    before = reporting.REPORTERS["tensorboard"]
    reporting.REPORTERS["tensorboard"] = (Failing, "json")
    try:
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            result = loop.train(tiny_config(tmp / "run", train={"report_to": ["tensorboard"]}))
    finally:
        reporting.REPORTERS["tensorboard"] = before
    return Result(CORRECT) if result.status == "finished" else Result(SILENT, result.status)


@case("study/--summary of claims decided by other code")
def _(tmp):
    with _results_env():
        results = _study_copy(tmp)
        _edit_json(
            results / "claims.json",
            lambda d: d.update(
                code_versions=[
                    {"code_hash": "e" * 64, "commits": [], "runs": 37, "joins_checkout": True}
                ]
            ),
        )
        return expect_cli(
            study_main(), ["--scale", "smoke", "--summary"], "eeeeeeeeeeee", "other code"
        )


@case("study/code-versions.json whose evidence is its kind alone")
def _(tmp):
    from paperlib.study.run.code_versions import read_equivalences

    entry = {"from": "a" * 64, "to": "b" * 64, "evidence": {"kind": "same source files"}}
    (tmp / "cv.json").write_text(json.dumps({"equivalences": [entry]}))
    return expect_error(lambda: read_equivalences(tmp / "cv.json"), "cv.json", "evidence.commit")


@case("study/--executor ray --address where nothing answers")
def _(tmp):
    import importlib.util
    import socket

    if importlib.util.find_spec("ray") is None:
        return Result(CORRECT, "ray not installed: refused by name elsewhere")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    with _results_env():
        _study_copy(tmp)
        argv = ["--scale", "smoke", "--executor", "ray", "--address", address]
        return expect_cli(study_main(), argv, "--address", address)


def _raising_notebook(tmp: Path) -> Path:
    path = _fake_notebook(tmp)
    path.write_text(path.read_text().replace("print(steps, name)", "print(1 / (steps - 3))"))
    return path


@case("notebooks/a cell that raises")
def _(tmp):
    argv = ["run", str(_raising_notebook(tmp)), "-p", "steps", "3"]
    return _notebook_case(tmp, argv, "red_team_nb.py", "cell", "ZeroDivisionError")


@case("notebooks/-p true for a number")
def _(tmp):
    return _notebook_case(tmp, ["run", str(_fake_notebook(tmp)), "-p", "steps", "true"], "steps")


@case("notebooks/parameters file pointing a path outside the repository")
def _(tmp):
    from paperlib.notebooks import confine_paths

    return expect_error(
        lambda: confine_paths({"output_dir": "/etc/red-team"}, "p.yaml"), "output_dir", "p.yaml"
    )


for _name, (_call, _names) in {
    "hierarchical retrieval of NaN similarities": (
        lambda: __import__("paperlib.metrics.hierarchy", fromlist=["x"]).hierarchical_retrieval(
            torch.full((2, 8), float("nan")), torch.rand(8), 4
        ),
        ("similarity",),
    ),
    "aperture diagnostics of an empty batch": (
        lambda: __import__("paperlib.metrics.diagnostics", fromlist=["x"]).aperture_diagnostics(
            {"image": torch.zeros(0, 4)}, 1.0
        ),
        ("image",),
    ),
    "d_corr of radii tied in every image": (
        lambda: __import__("paperlib.metrics.hierarchy", fromlist=["x"]).d_corr(torch.ones(3, 4)),
        ("tied",),
    ),
    "COLA accuracy of no query": (
        lambda: __import__("paperlib.metrics.composition", fromlist=["x"]).cola_accuracy(
            torch.zeros(0, 2, 4), torch.zeros(0, 2, 4)
        ),
        ("image_features",),
    ),
}.items():
    case(f"metrics/{_name}")(lambda tmp, c=_call, n=_names: expect_error(c, *n))


# --------------------------------------------------------------------------- driver


def run_cases(pattern: str | None) -> list[tuple[str, Result]]:
    """Every case whose name holds ``pattern`` (all with None), each in a new folder; the
    folders and the replay's shared files are removed afterwards."""
    try:
        return _replay(pattern)
    finally:
        for folder in _SCRATCH:
            shutil.rmtree(folder, ignore_errors=True)
        _SCRATCH.clear()
        _MODEL.clear()
        _BOMB.clear()


def _replay(pattern: str | None) -> list[tuple[str, Result]]:
    outcomes = []
    for name, fn in CASES:
        if pattern and pattern not in name:
            continue
        with tempfile.TemporaryDirectory(prefix="red-team-") as tmp:
            start = time.perf_counter()
            try:
                result = fn(Path(tmp))
            except Exception as err:  # noqa: BLE001 - a case's own set-up failing is a traceback
                result = Result(TRACEBACK, f"{type(err).__name__}: {str(err)[:160]}")
            elapsed = time.perf_counter() - start
        outcomes.append((name, result))
        print(f"{result.outcome:40} {elapsed:5.1f}s  {name}  {result.detail[:150]}", flush=True)
    return outcomes


def table(outcomes: list[tuple[str, Result]]) -> str:
    counts = Counter(r.outcome for _, r in outcomes)
    entries = sorted({n.split("/")[0] for n, _ in outcomes})
    lines = ["| outcome | count |", "|---|---|"]
    lines += [f"| {o} | {counts[o]} |" for o in OUTCOMES]
    lines.append(f"| total | {len(outcomes)} |")
    lines += ["", "| entry point | " + " | ".join(o.split(" ")[0] for o in OUTCOMES) + " |"]
    lines.append("|---" * (len(OUTCOMES) + 1) + "|")
    for entry in entries:
        c = Counter(r.outcome for n, r in outcomes if n.split("/")[0] == entry)
        lines.append(f"| {entry} | " + " | ".join(str(c[o]) for o in OUTCOMES) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="pattern", help="only the cases whose name holds this")
    args = parser.parse_args(argv)
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    outcomes = run_cases(args.pattern)
    print()
    print(table(outcomes))
    for name, result in outcomes:
        if result.outcome in BAD:
            print(f"- {result.outcome}: {name}: {result.detail[:200]}")
    return 1 if any(r.outcome in BAD for _, r in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
