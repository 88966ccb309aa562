"""Evaluation that scales and never compares the wrong thing: images decoded by DataLoader
workers give the embeddings the one-process loop gives, bit for bit and in order; two torchrun
processes (gloo) score exactly as one; every pass shows progress; a subset is recorded and
marked not comparable beside the paper; PEP levels whose scores all tie are warned of; every
missing root of a preset is named at once; CLIP_benchmark's names are accepted; an offline
model and a reduced-vocabulary checkpoint end in one line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
from PIL import Image

from paperlib.engine import distributed
from paperlib.engine.benchmarks import LazyImages, PEPProtocol, Scoring, pep_ties
from paperlib.engine.evaluation import Embedder, _result_rows, evaluate, load_trained
from paperlib.engine.loop import train
from paperlib.evaluate import check_real_roots, main, write_beside_published
from paperlib.geometry.lorentz import exp_map0
from paperlib.metrics.results import read_result
from paperlib.notebooks import PARAMS_DIR, load_parameters
from tests.engine_helpers import REPO, tiny_config
from tests.real_formats import coco_val2017


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    torch.manual_seed(0)
    made = {
        m: train(tiny_config(m, root / m, train={"steps": 1, "batch_size": 8})).output_dir
        for m in ("clip", "argent")
    }
    return made, coco_val2017(root / "coco", 6)


def _one_batch_at_a_time(module, preprocess, images, batch: int) -> torch.Tensor:
    """The embedding loop as one process ran it: preprocess a batch in the loop, stack, embed."""
    out = []
    with torch.no_grad():
        for i in range(0, len(images), batch):
            pixels = torch.stack([preprocess(im) for im in images[i : i + batch]])
            out.append(module.embed_image(pixels).float())
    return torch.cat(out)


def test_dataloader_workers_give_the_same_embeddings_in_the_same_order(runs, tmp_path):
    module, preprocess, tokenizer, _ = load_trained(runs[0]["clip"])
    for i in range(11):
        Image.new("RGB", (20 + i, 30 - i), (20 * i, 255 - 20 * i, 90)).save(tmp_path / f"{i}.png")
    images = LazyImages([tmp_path / f"{i}.png" for i in range(11)])
    reference = _one_batch_at_a_time(module, preprocess, images, 4)
    for workers in (0, 2):
        embed = Embedder(module, preprocess, tokenizer, 4, workers=workers)
        assert torch.equal(embed.images(images), reference)
    texts = [f"caption {i} of a scene" for i in range(9)]
    with torch.no_grad():
        plain = torch.cat([module.embed_text(tokenizer(texts[i : i + 4])) for i in range(0, 9, 4)])
    assert torch.equal(Embedder(module, preprocess, tokenizer, 4).texts(texts), plain)


def test_every_pass_shows_its_progress(runs, capsys):
    module, preprocess, tokenizer, _ = load_trained(runs[0]["clip"])
    Embedder(module, preprocess, tokenizer, 2, progress=True).texts(["a", "b", "c"], "captions")
    assert "embed captions" in capsys.readouterr().err


def _evaluate_command(run, out, coco, nproc: int) -> subprocess.CompletedProcess:
    launcher = ["-m", "torch.distributed.run", "--nproc_per_node", str(nproc), "--master_addr",
                "127.0.0.1", "--master_port", str(distributed.free_port())]  # fmt: skip
    command = [sys.executable, *(launcher if nproc > 1 else []), "-m", "paperlib.evaluate", str(run),
               "--output", str(out), "--benchmarks", "world-long", "world-hierarchy", "coco",
               "--root", f"coco={coco}", "--world-size", "24", "--batch-size", "5",
               "--num-workers", "1", "--no-progress"]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.distributed
def test_two_torchrun_processes_score_exactly_as_one(runs, tmp_path):
    run, coco = runs[0]["argent"], runs[1]
    for nproc in (1, 2):
        done = _evaluate_command(run, tmp_path / f"p{nproc}", coco, nproc)
        assert done.returncode == 0, done.stderr[-3000:]
    for name in ("world-long", "world-hierarchy", "coco"):
        one, two = (read_result(tmp_path / f"p{n}" / f"{name}.json") for n in (1, 2))
        assert one["metrics"] == two["metrics"] and one["metrics"]
    caches = [sorted((tmp_path / f"p{n}" / "cache").rglob("*.pt")) for n in (1, 2)]
    assert [p.name for p in caches[0]] == [p.name for p in caches[1]] and caches[0]
    for a, b in zip(*caches):
        first, second = torch.load(a, weights_only=True), torch.load(b, weights_only=True)
        tensors = [k for k, v in first.items() if isinstance(v, torch.Tensor)]
        assert tensors and all(torch.equal(first[k], second[k]) for k in tensors)


def test_a_subset_is_recorded_and_marked_not_comparable(runs, tmp_path):
    run, coco = runs[0]["argent"], runs[1]
    rows = evaluate(run, ["coco", "world-long"], output_dir=tmp_path / "out", roots={"coco": coco},
                    limits={"coco": 4}, world_size=8)  # fmt: skip
    assert read_result(tmp_path / "out" / "coco.json")["subset"] == {"samples": 4, "of": 6}
    assert "subset" not in read_result(tmp_path / "out" / "world-long.json")
    text = write_beside_published(tmp_path / "out", [("argent_main", "ARGENT", "B")], rows)
    (coco_row,) = [line for line in text.splitlines() if "coco_t2i_r5" in line]
    assert "subset, not comparable (4 of 6 samples)" in coco_row
    full = evaluate(
        run, ["coco"], output_dir=tmp_path / "full", roots={"coco": coco}, limits={"coco": 6}
    )
    assert "subset" not in full[0]  # a limit that keeps every sample is no subset


@pytest.mark.skipif(
    not (REPO.parent / "shared/data/hierarcaps/hierarcaps_test.csv").is_file(),
    reason="no HierarCaps copy",
)
def test_a_hierarcaps_limit_is_recorded_on_the_real_test_set(runs, tmp_path):
    root = REPO.parent / "shared" / "data" / "hierarcaps"
    code = main([str(runs[0]["argent"]), "--output", str(tmp_path / "out"), "--benchmarks", "hierarcaps",
                 "--hierarcaps-root", str(root), "--hierarcaps-limit", "40", "--num-workers", "0"])  # fmt: skip
    assert code == 0
    assert read_result(tmp_path / "out" / "hierarcaps.json")["subset"] == {
        "samples": 40,
        "of": 1000,
    }


def _outside_every_cone(
    n: int, levels: int, curv: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Captions far out along +x (farther at each finer level) and images far out along −x:
    every exterior angle is near π, so every entailment score is exactly 0."""
    direction = torch.zeros(8)
    direction[0] = 1.0
    norms = 3.0 + 0.5 * torch.arange(levels, dtype=torch.float32)
    chain = exp_map0(direction * norms[None, :, None] * torch.ones(n, levels, 1), curv)
    image = exp_map0(-direction.repeat(n, 1) * 3.0, curv)
    return image, chain


def test_pep_warns_of_levels_whose_scores_all_tie(capsys):
    image, chain = _outside_every_cone(12, 4)
    roots = [f"root {i % 5}" for i in range(12)]
    warnings = pep_ties(image, chain, roots, 1.0, PEPProtocol(pool_size=5))
    assert (
        len(warnings) == 4
        and warnings[0].startswith("PEP level 1: all")
        and "score 0" in warnings[0]
    )
    inside = exp_map0(torch.randn(12, 8), 1.0)
    assert (
        pep_ties(
            inside, exp_map0(torch.randn(12, 4, 8) * 0.1, 1.0), roots, 1.0, PEPProtocol(pool_size=5)
        )
        == []
    )
    emb = {"image": image, "chain": chain, "roots": roots, "empty": torch.zeros(8),
           "chain_texts": [f"{r} {j}" for r in roots for j in range(4)]}  # fmt: skip
    (row,) = _result_rows(
        [("world-hierarchy", emb)], {}, "ckpt", Scoring("hyperbolic", 1.0), ("m", "p"), {}
    )
    assert row["metrics"]["pep_auc_L2"] == 0.5 and len(row["warnings"]) == 4
    assert "[evaluate] warning: world-hierarchy: PEP level 3: all" in capsys.readouterr().out


def test_every_missing_root_of_a_paper_preset_is_named_at_once():
    preset = load_parameters(PARAMS_DIR / "eval_argent" / "argent-b-grit.yaml")
    with pytest.raises(FileNotFoundError) as error:
        check_real_roots(preset["benchmarks"], preset["roots"])
    message = str(error.value)
    assert message.startswith(f"{len(preset['roots'])} benchmark roots are missing")
    assert all(f"{name} ({root})" in message for name, root in preset["roots"].items())
    with pytest.raises(
        FileNotFoundError,
        match=r"benchmark 'coco': root /nowhere does not exist; expected a folder with",
    ):
        check_real_roots(["coco", "world-long"], {"coco": "/nowhere"})


def test_clip_benchmark_names_are_accepted(runs, tmp_path, capsys):
    code = main([str(runs[0]["clip"]), "--output", str(tmp_path / "out"), "--dataset", "mscoco_captions",
                 "--root", f"mscoco_captions={runs[1]}", "--batch_size", "4", "--num_workers", "0"])  # fmt: skip
    assert code == 0
    assert read_result(tmp_path / "out" / "coco.json")["dataset"] == "coco"


def test_an_offline_tag_and_a_reduced_vocabulary_end_in_one_line(tmp_path):
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(tmp_path / "hf"),
        "PYTHONPATH": str(REPO),
    }
    commands = {
        "cannot be had": ["--model", "clip-vit-b16"],
        "tokenizer gives ids up to 49407": [
            "--model", "longclip-b16", "--checkpoint", str(REPO / "tests/fixtures/released/longclip-tiny.pt")],
    }  # fmt: skip
    for expected, args in commands.items():
        command = [sys.executable, "-m", "paperlib.evaluate", *args, "--output", str(tmp_path / "out"),
                   "--benchmarks", "world-long", "--world-size", "4"]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        (line,) = [x for x in done.stderr.splitlines() if x.startswith("evaluate:")]
        assert expected in line
