"""Real-dataset benchmarks of the evaluation entry point on tiny fixtures in each published
format: numbers equal a direct computation from freshly embedded features; missing roots fail
before anything is embedded."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from PIL import Image
from scipy.stats import pearsonr

from paperlib.engine import benchmarks as bm
from paperlib.engine import evaluation as ev
from paperlib.engine.loop import train
from paperlib.evaluate import main as evaluate_main
from paperlib.geometry.lorentz import exp_map0, log_map0, pairwise_dist
from paperlib.metrics.results import read_result
from tests.engine_helpers import tiny_config
from tests.suite_fixtures import accept_tiny_copies, write_suite  # noqa: F401  (fixture)
from tests.test_loaders import put_image, write_jsonl

N_IMAGES = 12
WORDS = ["red", "blue", "green", "small", "large", "round", "square", "shiny", "dark", "soft"]


def colour(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randrange(256), rng.randrange(256), rng.randrange(256))


def long_caption(rng: random.Random, i: int) -> str:
    """3-5 sentences, so HiMo@2 and HiMo@3 cuts exist for most captions."""
    n = rng.randint(3, 5)
    return " ".join(
        f"Scene {i} has a {rng.choice(WORDS)} {rng.choice(WORDS)} thing." for _ in range(n)
    )


def write_datasets(root):
    """One tiny folder per real benchmark, in the layout ``bm.BENCHMARK_REGISTRY`` names."""
    rng = random.Random(0)
    roots = {b: root / b for b in ev.REAL_BENCHMARKS}
    for i in range(N_IMAGES):  # Urban1k
        put_image(roots["urban1k"] / "image" / f"{i}.jpg", colour(rng))
        (roots["urban1k"] / "caption").mkdir(parents=True, exist_ok=True)
        (roots["urban1k"] / "caption" / f"{i}.txt").write_text(long_caption(rng, i) + "\n")
    docci = [
        {
            "example_id": f"test_{i}",
            "split": "test",
            "image_file": f"test_{i:05d}.jpg",
            "description": long_caption(rng, i),
        }
        for i in range(N_IMAGES)
    ]
    for item in docci:
        put_image(roots["docci"] / "images" / item["image_file"], colour(rng))
        put_image(roots["himo-docci"] / "images" / item["image_file"], colour(rng))
    write_jsonl(roots["docci"] / "docci_descriptions.jsonlines", docci)
    rows = ["filepath\ttitle"]
    for i in range(N_IMAGES):  # Long-DCI
        put_image(roots["long-dci"] / "images" / f"sa_{i}.jpg", colour(rng))
        rows.append(f"sa_{i}.jpg\t{long_caption(rng, i)}")
    (roots["long-dci"] / "dci_long.csv").write_text("\n".join(rows) + "\n")
    lines = []
    for i in range(N_IMAGES):  # Flickr30k
        put_image(roots["flickr30k"] / "images" / f"{100 + i}.jpg", colour(rng))
        lines += [f"{100 + i}.jpg#{k}\ta {rng.choice(WORDS)} photo {i} {k}" for k in range(5)]
    (roots["flickr30k"] / "test_1k.txt").write_text("\n".join(lines) + "\n")
    coco = {
        "images": [{"id": 7 * i, "file_name": f"{7 * i:012d}.jpg"} for i in range(N_IMAGES)],
        "annotations": [
            {"image_id": 7 * i, "caption": f"{rng.choice(WORDS)} picture {i}.{k}"}
            for k in range(6)
            for i in range(N_IMAGES)
        ],
    }
    for image in coco["images"]:
        put_image(roots["coco"] / "val2017" / image["file_name"], colour(rng))
    (roots["coco"] / "captions_val2017.json").write_text(json.dumps(coco))
    write_jsonl(
        roots["himo-docci"] / "himo_docci_data.json",
        [
            {
                "img_path": item["image_file"],
                "raw_caption": item["description"],
                "caption": [" ".join(item["description"].split(". ")[: j + 1]) for j in range(3)],
            }
            for item in docci
        ],
    )
    names = {"n01": "tench", "n02": "goldfish", "n03": "great white shark"}
    for wnid in names:  # ImageNet
        for k in range(4):
            put_image(roots["imagenet"] / "val" / wnid / f"ILSVRC_{k}.JPEG", colour(rng))
    (roots["imagenet"] / "classnames.json").write_text(json.dumps(names))
    queries = [
        [
            f"https://x/vg/{2 * q}.jpg",
            f"a {WORDS[q]} cube and a {WORDS[q + 1]} ball",
            f"https://x/vg/{2 * q + 1}.jpg",
            f"a {WORDS[q + 1]} cube and a {WORDS[q]} ball",
        ]
        for q in range(6)
    ]
    for q in range(12):
        put_image(roots["cola"] / "images" / f"{q}.jpg", colour(rng))
    (roots["cola"] / "COLA_multiobjects_matching_benchmark.json").write_text(json.dumps(queries))
    suite = write_suite(root / "suite")  # the zero-shot suite's other 15 datasets
    roots.update({name: path for name, path in suite.items() if name != "imagenet"})
    return roots


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    torch.manual_seed(0)
    root = tmp_path_factory.mktemp("eval_real")
    runs = {
        m: train(tiny_config(m, root / m, train={"steps": 2})).output_dir
        for m in ("clip", "argent")
    }
    return runs, write_datasets(root / "data")


def naive_recall(scores: np.ndarray, owner: list[int], k: int) -> tuple[float, float]:
    """(T2I, I2T) R@k by loops; ``owner[t]`` = image of text t; ties count against."""
    n_img, n_txt = scores.shape
    t2i = [
        sum(scores[j, t] >= scores[owner[t], t] for j in range(n_img) if j != owner[t]) < k
        for t in range(n_txt)
    ]
    i2t = []
    for i in range(n_img):
        best = max(scores[i, t] for t in range(n_txt) if owner[t] == i)
        i2t.append(sum(scores[i, t] >= best for t in range(n_txt) if owner[t] != i) < k)
    return float(np.mean(t2i)), float(np.mean(i2t))


def scores_of(geometry: str, curv: float, image, text) -> np.ndarray:
    if geometry == "euclidean":
        image = image / image.norm(dim=-1, keepdim=True)
        text = text / text.norm(dim=-1, keepdim=True)
        return (image @ text.T).double().numpy()
    return (-pairwise_dist(image, text, curv)).double().numpy()


@pytest.mark.slow
@pytest.mark.parametrize("method", ["clip", "argent"])
def test_real_benchmarks_match_direct_computation(setup, tmp_path, method, accept_tiny_copies):  # noqa: F811
    runs, roots = setup
    out = tmp_path / "results"
    rows = ev.evaluate(
        runs[method], ev.REAL_BENCHMARKS, output_dir=out, roots=roots, limits={"docci": 10}
    )
    by_name = {r["dataset"]: r for r in rows}
    assert set(by_name) == set(ev.REAL_BENCHMARKS) | {
        f"{b}-monotonicity" for b in bm.LONG_CAPTION_BENCHMARKS
    }
    for name, row in by_name.items():
        assert read_result(out / f"{name}.json")["task"] == row["task"] == bm.TASKS[name]
    assert len(list((out / "cache").rglob("*.pt"))) == len(ev.REAL_BENCHMARKS)

    module, preprocess, tokenizer, _ = ev.load_trained(runs[method])
    geometry = module.geometry
    curv = module.model.curv.item() if geometry == "hyperbolic" else 0.0
    embed = ev.Embedder(module, preprocess, tokenizer)

    def images(paths):
        return embed.images([Image.open(p).convert("RGB") for p in paths])

    # 1:1 long-caption retrieval (Urban1k, sorted by id as the loader reads it)
    ids = sorted(range(N_IMAGES), key=str)
    img = images([roots["urban1k"] / "image" / f"{i}.jpg" for i in ids])
    caps = [(roots["urban1k"] / "caption" / f"{i}.txt").read_text().splitlines()[0] for i in ids]
    scores = scores_of(geometry, curv, img, embed.texts(caps))
    for k in (1, 5, 10):
        t2i, i2t = naive_recall(scores, list(range(N_IMAGES)), k)
        assert by_name["urban1k"]["metrics"][f"image_retrieval_recall@{k}"] == pytest.approx(t2i)
        assert by_name["urban1k"]["metrics"][f"text_retrieval_recall@{k}"] == pytest.approx(i2t)
    mono = by_name["urban1k-monotonicity"]["metrics"]
    assert 0 <= mono["himo@2"] <= 100 and mono["ssi"] > 0

    # 5 captions per image (Flickr30k): text t belongs to image t // 5
    lines = (roots["flickr30k"] / "test_1k.txt").read_text().splitlines()
    img = images([roots["flickr30k"] / "images" / f"{100 + i}.jpg" for i in range(N_IMAGES)])
    txt = embed.texts([line.split("\t")[1] for line in lines])
    scores = scores_of(geometry, curv, img, txt)
    for k in (1, 5, 10):
        t2i, i2t = naive_recall(scores, [t // 5 for t in range(5 * N_IMAGES)], k)
        assert by_name["flickr30k"]["metrics"][f"image_retrieval_recall@{k}"] == pytest.approx(t2i)
        assert by_name["flickr30k"]["metrics"][f"text_retrieval_recall@{k}"] == pytest.approx(i2t)

    # zero-shot ImageNet: prompts averaged (tangent space for hyperbolic models), argmax
    names = ["tench", "goldfish", "great white shark"]
    templates, prompt_set = ev.classification_templates("imagenet", roots["imagenet"])
    assert prompt_set == ev.REFERENCE_PROMPTS and len(templates) == 7  # MERU's ImageNet set
    assert by_name["imagenet"]["protocol"]["prompt_set"] == ev.REFERENCE_PROMPTS
    prompts = embed.texts([t.format(n) for n in names for t in templates]).view(
        3, len(templates), -1
    )
    if geometry == "euclidean":
        classes = (prompts / prompts.norm(dim=-1, keepdim=True)).mean(1)
    else:
        classes = exp_map0(log_map0(prompts, curv).mean(1), curv)
    paths = [
        roots["imagenet"] / "val" / w / f"ILSVRC_{k}.JPEG"
        for w in ("n01", "n02", "n03")
        for k in range(4)
    ]
    scores = scores_of(geometry, curv, images(paths), classes)
    labels = np.repeat(np.arange(3), 4)
    pred = scores.argmax(1)
    zs = by_name["imagenet"]["metrics"]
    assert zs["acc1"] == pytest.approx(float(np.mean(pred == labels)))
    recalls = [np.mean(pred[labels == c] == c) for c in range(3)]
    assert zs["mean_per_class_recall"] == pytest.approx(float(np.mean(recalls)))
    assert zs["acc5"] == 1.0  # 3 classes: top-5 always holds the label

    # HiMo-Docci: mean Pearson of the K prefix scores against 1..K
    items = [
        json.loads(x)
        for x in (roots["himo-docci"] / "himo_docci_data.json").read_text().splitlines()
    ]
    img = images([roots["himo-docci"] / "images" / x["img_path"] for x in items])
    rhos = []
    for i, x in enumerate(items):
        seg = scores_of(geometry, curv, img[i : i + 1], embed.texts(x["caption"]))[0]
        rhos.append(pearsonr(np.arange(len(seg)), seg).statistic)
    assert by_name["himo-docci"]["metrics"]["himo@k_pearson"] == pytest.approx(
        np.mean(rhos), abs=1e-5
    )

    # COLA: caption c must pick image c over the other image, for both captions
    queries = json.loads((roots["cola"] / "COLA_multiobjects_matching_benchmark.json").read_text())
    correct = []
    for q in queries:
        pair = images([roots["cola"] / "images" / u.rsplit("/", 1)[1] for u in q[0::2]])
        s = scores_of(geometry, curv, pair, embed.texts(q[1::2]))
        correct.append(s[0, 0] > s[1, 0] and s[1, 1] > s[0, 1])
    assert by_name["cola"]["metrics"]["cola_accuracy"] == pytest.approx(float(np.mean(correct)))
    assert "| coco |" in (out / "results.md").read_text()


def test_missing_root_fails_before_embedding(setup, tmp_path):
    _, roots = setup
    missing_checkpoint = tmp_path / "no-run"  # never reached: the roots are checked first
    with pytest.raises(FileNotFoundError, match=r"'urban1k' needs roots\['urban1k'\].*caption"):
        ev.evaluate(missing_checkpoint, ["urban1k"], output_dir=tmp_path / "o")
    with pytest.raises(FileNotFoundError, match=r"'coco': root .*nowhere does not exist.*val2017"):
        ev.evaluate(
            missing_checkpoint,
            ["coco"],
            output_dir=tmp_path / "o",
            roots={"coco": tmp_path / "nowhere"},
        )
    with pytest.raises(
        FileNotFoundError,
        match=r"'imagenet': root .* lacks val; expected a folder with <root>/val",
    ):
        ev.evaluate(
            missing_checkpoint,
            ["imagenet"],
            output_dir=tmp_path / "o",
            roots={"imagenet": roots["urban1k"]},
        )
    assert not (tmp_path / "o").exists()


def test_cli_root_option(setup, tmp_path, capsys):
    runs, roots = setup
    out = tmp_path / "cli"
    argv = [
        str(runs["clip"]),
        "--output",
        str(out),
        "--benchmarks",
        "cola",
        "imagenet",
        "--root",
        f"cola={roots['cola']}",
        "--root",
        f"imagenet={roots['imagenet']}",
        "--limit",
        "imagenet=6",
    ]
    assert evaluate_main(argv) == 0
    assert "| cola |" in capsys.readouterr().out
    assert read_result(out / "imagenet.json")["task"] == "zeroshot_classification"
    assert evaluate_main([str(runs["clip"]), "--output", str(out), "--benchmarks", "coco"]) == 2
    assert "'coco' needs roots['coco'] (CLI: --root coco=PATH)" in capsys.readouterr().err
    assert evaluate_main([str(runs["clip"]), "--output", str(out), "--root", "coco"]) == 2
    assert "--root expects NAME=VALUE" in capsys.readouterr().err


def test_unreadable_images_stop_by_name_or_are_skipped_and_counted(setup, tmp_path):
    import shutil

    runs, roots = setup
    broken, reduced = tmp_path / "broken", tmp_path / "reduced"
    shutil.copytree(roots["urban1k"], broken)
    shutil.copytree(roots["urban1k"], reduced)
    (broken / "image" / "3.jpg").write_bytes(b"not a jpeg")
    (reduced / "image" / "3.jpg").unlink()
    (reduced / "caption" / "3.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"image .*3\.jpg is missing or unreadable"):
        ev.evaluate(runs["clip"], ["urban1k"], output_dir=tmp_path / "a", roots={"urban1k": broken})
    skipped = ev.evaluate(
        runs["clip"],
        ["urban1k"],
        output_dir=tmp_path / "b",
        roots={"urban1k": broken},
        skip_bad_images=True,
    )
    expected = ev.evaluate(
        runs["clip"], ["urban1k"], output_dir=tmp_path / "c", roots={"urban1k": reduced}
    )
    assert [r["metrics"] for r in skipped] == [r["metrics"] for r in expected]
    record = read_result(tmp_path / "b" / f"{skipped[0]['dataset']}.json")["skipped_images"]
    assert record["count"] == 1 and record["examples"][0][0].endswith("3.jpg")
    assert "skipped_images" not in read_result(tmp_path / "c" / f"{expected[0]['dataset']}.json")
