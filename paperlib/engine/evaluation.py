"""Evaluate a checkpoint on the papers' benchmarks; results in CLIP_benchmark's format.

One embedding pass per dataset (every image and text any of its benchmarks needs), cached on
disk under ``cache_dir`` keyed by the checkpoint (SHA-256 of its bytes) and by what the
pass reads: the generated world's seed and sizes, or a real data set's content (every sample's
texts and each image file's path, size and mtime, :func:`content_key`), so an edited caption or
prefix list or a replaced image is embedded again. A cache file that does not load as one is
recomputed. The output folder is checked before anything loads: writable, and every file an
evaluation would replace or merge is one it wrote (``run_folder.check_replaceable``). The
benchmarks themselves (data layout, loader, embedding, metrics, task) are the
records of ``engine.benchmarks.BENCHMARK_REGISTRY``; this module loads the model, runs the
passes, and writes the results (nothing is written until every metric is computed).

What :func:`evaluate` takes: ``world_seed`` should differ from the training world's
``data.seed``; ``world_image_size`` defaults to the model's input size. ``roots``: each real
benchmark's folder (its registry ``layout``); ``limits`` keeps the first N samples of a
benchmark; ``noise_seed`` seeds SSI's noise sentences; ``templates`` are classification prompt
templates (default: see :func:`classification_templates`). A real benchmark's unreadable image
stops the evaluation, naming the file; with ``skip_bad_images`` its samples are left out
instead, and each results file of that benchmark records them (``skipped_images``: count and
the first few paths with reasons).

``retrieval_transform`` (``crop`` | ``squeeze``) and ``captions`` (``first-5`` | ``all``)
default to the model family's reference protocol (:class:`EvalProtocol`: MERU, HyCoCLIP,
ARGENT and MERU's CLIP baselines squeeze and keep every COCO caption; CLIP, Long-CLIP and
HiMo crop and keep five). Each real benchmark's results file records the protocol it ran
(``protocol``), and one evaluated on part of its samples (a limit) records how many of
how many (``subset``); warnings (PEP levels whose scores all tie) go into ``warnings``.
Every results file of a training checkpoint records how far its run got (``training``:
step, steps, status, partial); a run that did not finish (stopped by a signal, or a
periodic checkpoint) is refused unless ``allow_partial``.

``workers`` decode images in DataLoader processes, ``precision`` is the autocast on CUDA
(``engine.precision``), ``progress`` shows a bar per embedding pass (None: on a terminal).
Under ``torchrun`` the passes are shared over the ranks (:class:`Embedder`) and rank 0
writes the results. Benchmark names may be CLIP_benchmark's
(``engine.benchmarks.BENCHMARK_ALIASES``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from PIL import Image
from torch import Tensor
from torch.utils.data import DataLoader, Dataset
from tqdm.auto import tqdm

from paperlib.atomic import atomic_write_text
from paperlib.data.classification import SUITE
from paperlib.data.images import LoadReport, scan_images, squeezed
from paperlib.data.loaders import load_hierarcaps, require_path
from paperlib.data.world import (
    NOISE_SENTENCES,
    World,
    class_names,
    draw_scene,
    scene_chain,
    scene_short_caption,
    world_fingerprint,
    zeroshot_prompts,
)
from paperlib.engine import distributed
from paperlib.engine.benchmarks import (
    BENCHMARK_REGISTRY,
    BENCHMARKS,
    CLASSIFICATION_BENCHMARKS,
    REAL_BENCHMARKS,
    WORLD_BENCHMARKS,
    EmbedOptions,
    EvalProtocol,
    LazyImages,
    PEPProtocol,
    Scoring,
    benchmark_metrics,
    benchmark_warnings,
    canonical_benchmark,
    check_root,
    check_roots,
    load_real,
    reference_templates,
    segment_embeddings,
)
from paperlib.engine.checkpoint import (
    atomic_save,
    load_checkpoint,
    state_dict_mismatch,
    training_progress,
)
from paperlib.engine.config import build_config
from paperlib.engine.distributed import pick_device
from paperlib.engine.methods import build_module, input_size
from paperlib.engine.precision import autocast_context
from paperlib.engine.released import load_released
from paperlib.engine.run_folder import check_replaceable, writable_folder
from paperlib.metrics import monotonicity, results
from paperlib.metrics.scores import NonFiniteError
from paperlib.models.bounds import check_scalars
from paperlib.state_files import file_sha256, unreadable_reason

CACHE_FORMAT = "paperlib-embeddings/1"  # stored in each cache file; others are recomputed

# --------------------------------------------------------------------------- model


def load_trained(checkpoint: str | Path, device: str | torch.device = "cpu"):
    """(module, preprocess, tokenizer, config) from a checkpoint written by ``engine.loop``.

    Only the checkpoint is read: the model is rebuilt from its ``model``/``loss`` sections,
    so the training data may have moved or been deleted (the returned config's ``data``
    section is :func:`evaluation_data_section`, not the training data's)."""
    return _load_trained(checkpoint, device)[:4]


def _load_trained(checkpoint: str | Path, device: str | torch.device = "cpu"):
    """:func:`load_trained` and how far its run got (``checkpoint.training_progress``)."""
    path = Path(checkpoint)
    if path.is_dir():
        path = path / "last.pt"
    state = load_checkpoint(path)
    progress = training_progress(state, path)
    raw = dict(state["config"])
    # the weights, BatchNorm statistics included, come from this file, and evaluation runs in
    # eval mode, where a training run's model.batchnorm has no effect
    raw["model"] = {**raw["model"], "init": "random", "batchnorm": "train"}
    raw["data"] = evaluation_data_section(raw)
    raw["train"] = {**raw.get("train", {}), **NO_VALIDATION}  # its data is not rebuilt either
    config = build_config(raw)
    module, preprocess, tokenizer = build_module(config, device)
    mismatch = state_dict_mismatch(module, state["model"])
    if mismatch:
        raise ValueError(f"{path}: its weights do not fit the model its config builds ({mismatch})")
    # a stored scalar out of its bounds is named here; NaN weights, by the benchmark they spoil
    bounds = module.scalar_bounds(config.optim.clamp_logit_scale)
    check_scalars(state["model"], bounds, str(path))
    module.load_state_dict(state["model"])
    if module.geometry == "hyperbolic":  # the curvature scores use is the one embeddings use
        module.model.clamp_parameters_()
    module.eval()
    return module, preprocess, tokenizer, config, progress


# the train keys of a run's config rebuilt without its data: no held-out validation
NO_VALIDATION = {"val_every": 0, "val_benchmark": None, "val_root": None}


def evaluation_data_section(raw: dict[str, Any]) -> dict[str, Any]:
    """The ``data`` section a trained run's config is rebuilt with for evaluation: synthetic
    stand-in data of one batch (the model does not depend on its training data, whose
    ``data.root`` need not exist any more)."""
    batch = int(raw.get("train", {}).get("batch_size", 1))
    return {"dataset": "synthetic", "size": max(batch, 1)}


def checkpoint_key(checkpoint: str | Path, model: str | None = None) -> str:
    """Cache key of a checkpoint file: hash of its content (SHA-256 of its bytes, so a file
    rewritten in place with the same size and mtime is embedded again) and of the released
    ``model`` name it is read as; a pretrained tag (no file) hashes the tag."""
    path = Path(checkpoint).resolve()
    if path.is_dir():
        path = path / "last.pt"
    if model is not None and not path.is_file():
        return hashlib.sha1(f"{model}:{checkpoint}".encode()).hexdigest()[:16]
    suffix = "" if model is None else f":{model}"
    return hashlib.sha1(f"{file_sha256(path)}{suffix}".encode()).hexdigest()[:16]


def load_model(
    checkpoint: str | Path | None, model: str | None = None, device: str | torch.device = "cpu"
):
    """(module, preprocess, tokenizer, label, progress): a paperlib training checkpoint when
    ``model`` is None (label ``method:model-name``, ``progress`` how far its run got:
    ``checkpoint.training_progress``), else released weights read as ``model``
    (``engine.released``: e.g. ``meru-vit-b``, ``openclip:ViT-B-16-quickgelu``; no
    progress)."""
    if model is None:
        module, preprocess, tokenizer, config, progress = _load_trained(checkpoint, device)
        return module, preprocess, tokenizer, f"{config.method}:{config.model.name}", progress

    module, preprocess, tokenizer = load_released(model, checkpoint, device)
    check_vocabulary(module, tokenizer, f"{checkpoint} (read as {model})")
    return module, preprocess, tokenizer, model, None


def checked_progress(
    progress: dict[str, Any] | None, checkpoint: Any, allow_partial: bool
) -> dict[str, Any]:
    """What every results file records of the training that made ``checkpoint``
    (``training``: its step, steps, status, and ``partial`` for a run that did not finish);
    ValueError naming the checkpoint for a run that did not finish, unless ``allow_partial``."""
    if progress is None:
        return {}
    partial = progress["status"] != "finished"
    if partial and not allow_partial:
        raise ValueError(
            f"{checkpoint}: its run stopped at step {progress['step']} of {progress['steps']} "
            f"(status {progress['status']!r}), so these are not the trained model's weights; "
            "finish the training (run the same train command again), or evaluate them as they "
            "are with --allow-partial (allow_partial=True), which marks every results file"
        )
    if partial:
        print(f"[evaluate] {checkpoint}: a partial run, step {progress['step']} of "
              f"{progress['steps']} ({progress['status']}): results marked partial", flush=True)  # fmt: skip
    return {"training": {**progress, "partial": partial}}


def check_vocabulary(module, tokenizer, source: str) -> None:
    """ValueError naming ``source`` when the tokenizer gives token ids the text tower has no
    embedding for (a file whose vocabulary is smaller than CLIP's BPE, e.g. a reduced test
    checkpoint), rather than an index error deep inside the first text pass."""
    table = getattr(module.clip, "token_embedding", None)
    if not isinstance(table, torch.nn.Embedding):
        return  # a text tower of another kind (hf-hub models) brings its own tokenizer
    highest = int(tokenizer(["a photo of a dog."]).max())
    if highest >= table.num_embeddings:
        raise ValueError(
            f"{source}: its text tower embeds {table.num_embeddings} token ids but the "
            f"tokenizer gives ids up to {highest}; expected a vocabulary of CLIP's BPE tokenizer "
            "(49,408 ids)"
        )


class _Preprocessed(Dataset):
    """``images[i]`` through ``preprocess``: a path decodes here, in a DataLoader worker."""

    def __init__(self, images: Sequence, preprocess: Callable) -> None:
        self.images, self.preprocess = images, preprocess

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> Tensor:
        return self.preprocess(self.images[index])


class Embedder:
    """Batched, no-grad image/text embedding with the trained module.

    The inputs are cut into batches of ``batch_size`` in order; under ``torchrun`` rank r
    embeds batches r, r + world, ... and every rank receives them all, so each batch is
    embedded exactly as one process embeds it and the result is the same tensor in the same
    order (``tests/test_evaluation_scale.py``). Images are decoded and preprocessed by a
    DataLoader with ``workers`` processes; on CUDA the towers run under ``precision``'s
    autocast (``engine.precision``; float32 on the CPU); features come back as float32 on
    the CPU. ``progress`` shows a bar per pass (None: only on a terminal). ``local``: this
    process embeds everything itself (validation on rank 0 while the others train on).
    """

    def __init__(
        self,
        module,
        preprocess,
        tokenizer,
        batch_size: int = 128,
        *,
        workers: int = 0,
        precision: str = "auto",
        progress: bool | None = False,
        local: bool = False,
    ) -> None:
        self.module, self.preprocess, self.tokenizer = module, preprocess, tokenizer
        self.batch_size, self.workers, self.progress = batch_size, workers, progress
        self.device = next(module.parameters()).device
        self.precision, self.local = precision, local

    def _mine(self, count: int) -> list[range]:
        """This rank's batches of ``count`` inputs: every world-th batch from its rank."""
        starts = range(0, count, self.batch_size)
        batches = [range(i, min(i + self.batch_size, count)) for i in starts]
        return batches if self.local else batches[distributed.rank() :: distributed.world_size()]

    def _gathered(self, mine: list[range], embedded: list[Tensor]) -> Tensor:
        """Every rank's batches, in input order."""
        if self.local:
            return torch.cat(embedded)
        parts = distributed.all_gather_objects(list(zip((b.start for b in mine), embedded)))
        ordered = sorted((pair for part in parts for pair in part), key=lambda pair: pair[0])
        return torch.cat([t for _, t in ordered])

    def _bar(self, total: int, what: str):
        disable = None if self.progress is None else not self.progress
        return tqdm(
            total=total,
            desc=f"embed {what}",
            unit="batch",
            disable=True if distributed.rank() else disable,
        )

    @torch.no_grad()
    def texts(self, texts: Sequence[str], what: str = "texts") -> Tensor:
        mine, out = self._mine(len(texts)), []
        with self._bar(len(mine), what) as bar, autocast_context(self.precision, self.device):
            for batch in mine:
                tokens = self.tokenizer([texts[i] for i in batch]).to(self.device)
                out.append(self.module.embed_text(tokens).float().cpu())
                bar.update(1)
        return self._gathered(mine, out)

    @torch.no_grad()
    def images(self, images: Sequence, what: str = "images") -> Tensor:
        mine, out = self._mine(len(images)), []
        loader = DataLoader(
            _Preprocessed(images, self.preprocess),
            batch_sampler=[list(batch) for batch in mine],
            num_workers=self.workers,
            collate_fn=torch.stack,
        )
        with self._bar(len(mine), what) as bar, autocast_context(self.precision, self.device):
            for pixels in loader:
                out.append(self.module.embed_image(pixels.to(self.device)).float().cpu())
                bar.update(1)
        return self._gathered(mine, out)


def _read_cache(path: Path) -> tuple[dict[str, Any] | None, str]:
    """The cache at ``path`` (None when absent or unusable) and why it is unusable."""
    if not path.is_file():
        return None, ""
    try:
        value = torch.load(path, weights_only=True)
        if isinstance(value, dict) and value.get("cache_format") == CACHE_FORMAT:
            return {k: v for k, v in value.items() if k != "cache_format"}, ""
        return None, "not an embedding cache of this version"
    except Exception as err:  # noqa: BLE001 - any unreadable cache is recomputed
        return None, unreadable_reason(err)


def cached(path: Path, compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Load ``path`` if it holds a cache this module wrote, else compute, save atomically and
    return. A file that does not load as one (cut short, corrupted, another format) is named
    on stdout and replaced by a fresh computation. Under torchrun every rank computes when any
    rank lacks the cache (the passes are shared), and rank 0 writes it."""
    value, reason = _read_cache(path)
    if all(distributed.all_gather_objects(value is not None)):
        return value
    if reason and distributed.is_main():
        print(f"[evaluate] cache {path} is unusable ({reason}); recomputing it", flush=True)
    value = compute()
    if distributed.is_main():
        atomic_save({**value, "cache_format": CACHE_FORMAT}, path)
    return value


# --------------------------------------------------------------------------- embedding passes


def world_embeddings(embed: Embedder, size: int, seed: int, image_size: int) -> dict[str, Any]:
    """Every feature the world benchmarks need, in one pass over ``size`` world samples."""

    world = World(seed=seed, image_size=image_size)
    samples = [world.sample(i) for i in range(size)]
    captions = [s.caption for s in samples]
    out: dict[str, Any] = {
        "image": embed.images([s.image for s in samples]),
        "caption": embed.texts(captions),
        "short_caption": embed.texts([s.short_caption for s in samples]),
        "noisy_caption": embed.texts(
            monotonicity.inject_noise(captions, 1, pool=list(NOISE_SENTENCES), seed=seed)
        ),
        "chain": embed.texts([c for s in samples for c in s.chain]).view(size, 4, -1),
        "labels": torch.tensor([s.meta["labels"] for s in samples]),
    }
    out.update(segment_embeddings(embed, captions))
    lengths = [len(s.segments) for s in samples]
    out["segments_all"] = embed.texts([t for s in samples for t in s.segments])
    out["segments_all_lengths"] = torch.tensor(lengths)
    pairs = [p for p in (world.cola_pair(i) for i in range(size)) if p is not None]
    out["cola_image"] = embed.images([s.image for p in pairs for s in p]).view(len(pairs), 2, -1)
    cola_texts = [
        t
        for p in pairs
        for t in (p[0].meta["cola"]["caption"], p[0].meta["cola"]["swapped_caption"])
    ]
    out["cola_text"] = embed.texts(cola_texts).view(len(pairs), 2, -1)
    for level in (1, 2, 3):
        prompts = zeroshot_prompts(level)
        names = class_names(level)
        flat = [p for n in names for p in prompts[n]]
        out[f"prompts_L{level}"] = embed.texts(flat).view(len(names), len(prompts[names[0]]), -1)
    out["empty"] = embed.texts([""])[0]
    out["roots"] = [s.chain[0] for s in samples]
    return out


def world_texts(seed: int, size: int) -> dict[str, list[str]]:
    """The texts of world samples ``0..size-1`` (nothing rendered, each scene drawn once):
    ``short_texts`` (short captions) and ``chain_texts`` (4-level chains, flat)."""

    scenes = [draw_scene(seed, i) for i in range(size)]
    return {
        "short_texts": [scene_short_caption(scene) for scene in scenes],
        "chain_texts": [c for scene in scenes for c in scene_chain(scene)[0]],
    }


def world_short_captions(seed: int, size: int) -> list[str]:
    """The short captions of world samples ``0..size-1`` (:func:`world_texts`)."""
    return world_texts(seed, size)["short_texts"]


def _file_state(path: Any) -> str:
    """A file's resolved path, size and modification time ('missing' for none); an image held
    in memory (a dataset that decodes its own files, e.g. torchvision's) by its pixels."""
    if path is None:
        return "none"
    if isinstance(path, Image.Image):
        pixels = hashlib.sha1(path.tobytes()).hexdigest()
        return f"image:{path.mode}:{path.size}:{pixels}"
    try:
        stat = Path(path).stat()
    except OSError:
        return f"{path}:missing"
    return f"{Path(path).resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def content_key(samples: Sequence, *extra: Any) -> str:
    """Cache key of a data set: every sample's texts (``Sample.texts``: captions, prefixes,
    chains, labels, meta) and the path, size and mtime of each image file it names, with
    ``extra`` (limits, options), hashed. Meta values shared by every sample (ImageNet's class
    names) are serialised once."""
    digest = hashlib.sha1(repr(extra).encode())
    shared: dict[int, str] = {}
    for sample in samples:
        texts = sample.texts()
        meta = texts.pop("meta")
        digest.update(json.dumps(texts, sort_keys=True).encode())
        for key in sorted(meta):
            value = meta[key]
            if id(value) not in shared:
                shared[id(value)] = json.dumps(value, sort_keys=True, default=str)
            digest.update(f"{key}={shared[id(value)]}".encode())
        for image in sample.meta.get("images", [sample.image]):
            digest.update(_file_state(image).encode())
    return digest.hexdigest()[:12]


def hierarcaps_embeddings(embed: Embedder, samples: Sequence) -> dict[str, Any]:
    """Images and 4-level chains of (the kept rows of) the real HierarCaps test set, and the
    chain texts (hierarchical retrieval compares captions as texts)."""
    return {
        "image": embed.images(LazyImages([s.image for s in samples])),
        "chain": embed.texts([c for s in samples for c in s.chain]).view(len(samples), 4, -1),
        "empty": embed.texts([""])[0],
        "roots": [s.chain[0] for s in samples],
        "chain_texts": [c for s in samples for c in s.chain],
    }


def readable_samples(samples: list, benchmark: str) -> tuple[list, list[tuple[str, str]]]:
    """The samples whose every image decodes (``data.images.load_rgb``), and the (path,
    reason) of each image that does not; a ValueError naming the benchmark if none is left."""
    report = LoadReport()
    kept = [s for s in samples if all(scan_images(s.meta.get("images", [s.image]), report))]
    if not kept:
        raise ValueError(
            f"benchmark {benchmark!r}: none of its {len(samples)} samples has "
            f"readable images (e.g. {report.skipped[:2]})"
        )
    return kept, report.skipped


def classification_templates(
    benchmark: str, root: Path, templates: Sequence[str] | None = None
) -> tuple[list[str], str]:
    """Prompt templates (``{}`` = class name) of a classification benchmark and the name of
    the set: ``templates`` ("given"), else ``root/templates.txt`` (one a line), else the
    references' ensemble of that dataset (MERU's and HyCoCLIP's evaluation config)."""
    if templates is not None:
        chosen, label = list(templates), "given"
    elif (root / "templates.txt").is_file():
        text = (root / "templates.txt").read_text(encoding="utf-8")
        chosen, label = [t for t in text.splitlines() if t.strip()], f"{root / 'templates.txt'}"
    else:
        chosen, label = reference_templates(benchmark), REFERENCE_PROMPTS
    bad = [t for t in chosen if "{}" not in t]
    if not chosen or bad:
        raise ValueError(f"{benchmark} prompt templates must each contain '{{}}'; got {bad[:3]}")
    return chosen, label


REFERENCE_PROMPTS = "meru-hycoclip"  # the prompt-set name of the references' ensembles


MAX_WORLD_SIZE = 20_000  # held-out world samples: the world benchmarks score every pair (n²)


def check_sizes(world_size: int, batch_size: int, limits: dict[str, int | None]) -> None:
    """Refuse sizes that would evaluate nothing or something else than asked, or ask for more
    memory than any evaluation needs: the world needs 2 to :data:`MAX_WORLD_SIZE` samples
    (retrieval over one item ranks nothing), a batch at least 1, a limit at least 1 (None keeps
    every sample)."""
    if not 2 <= world_size <= MAX_WORLD_SIZE:
        raise ValueError(
            f"world_size: expected at least 2 held-out samples and at most "
            f"{MAX_WORLD_SIZE:,}, got {world_size}"
        )
    if batch_size < 1:
        raise ValueError(f"batch_size: expected at least 1, got {batch_size}")
    for name, limit in limits.items():
        if limit is not None and limit < 1:
            raise ValueError(
                f"limit of {name!r}: expected at least 1 sample (or no limit), got {limit}"
            )


def evaluate(
    checkpoint: str | Path | None, benchmarks: Sequence[str] = WORLD_BENCHMARKS, *,
    output_dir: str | Path, model: str | None = None, pep: PEPProtocol | None = None,
    world_size: int = 256, world_seed: int = 12345, world_image_size: int | None = None,
    hierarcaps_root: str | Path | None = None, hierarcaps_limit: int | None = None,
    roots: dict[str, str | Path] | None = None, limits: dict[str, int] | None = None,
    noise_seed: int = 0, templates: Sequence[str] | None = None,
    cache_dir: str | Path | None = None, batch_size: int = 128, device: str = "cpu",
    model_label: str | None = None, pretrained_label: str | None = None,
    skip_bad_images: bool = False, retrieval_transform: str | None = None,
    captions: str | None = None, workers: int = 0, precision: str = "auto",
    progress: bool | None = None, allow_partial: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """Evaluate ``checkpoint`` on ``benchmarks``; writes ``<output_dir>/<dataset>.json`` files
    (CLIP_benchmark keys) and ``results.md`` (merged table); returns the result dicts (what
    the options mean and what each file records: the module's docstring).
    ``model_label`` / ``pretrained_label`` fill the files' ``model`` / ``pretrained`` keys
    (defaults: ``method:model-name`` or the released ``model`` name, and the checkpoint path
    as given). ``model`` reads ``checkpoint`` as released weights (``engine.released``;
    a tag or nothing for open_clip/hf-hub models); ``pep`` is HierarCaps' PEP protocol.
    """
    benchmarks = [canonical_benchmark(b) for b in benchmarks]
    roots, limits, hierarcaps_root, hierarcaps_limit = _checked_request(
        benchmarks, roots, limits, hierarcaps_root, hierarcaps_limit, world_size, batch_size
    )
    if distributed.is_main():
        _checked_output(Path(output_dir), benchmarks)
    distributed.barrier()
    output_dir = Path(output_dir)
    device = pick_device(device, option="device (--device)")
    real, skipped, subsets = _real_samples(benchmarks, roots, limits, skip_bad_images)
    EvalProtocol(retrieval_transform or "crop", captions or "first-5")  # names a bad choice
    module, preprocess, tokenizer, label, progress = load_model(checkpoint, model, device)
    training = checked_progress(progress, checkpoint, allow_partial)
    geometry = module.geometry
    curv = module.model.curv.item() if geometry == "hyperbolic" else 0.0
    scoring = Scoring(geometry, curv, pep or PEPProtocol())
    family = model_family(module, model)
    protocol = EvalProtocol.reference(family, retrieval_transform, captions)
    compute = {"workers": workers, "precision": precision, "progress": progress}
    embed = Embedder(module, preprocess, tokenizer, batch_size, **compute)
    cache = Path(cache_dir or output_dir / "cache") / checkpoint_key(checkpoint or model, model)
    size = world_image_size or input_size(module)
    datasets = _generated_and_hierarcaps(
        embed, cache, benchmarks, world_seed, world_size, size, hierarcaps_root, hierarcaps_limit
    )
    if "hierarcaps" in benchmarks:
        subsets.update(hierarcaps_subset(hierarcaps_root, hierarcaps_limit))
    embedders = {"crop": embed, "squeeze": retrieval_embedder(embed, input_size(module))}
    real_options = RealOptions(roots, limits, noise_seed, templates, protocol)
    real_datasets, prompt_sets = _real_datasets(embedders, cache, real, skipped, real_options)
    datasets += real_datasets
    labels = (model_label or label, pretrained_label or str(checkpoint))
    recorded = _protocol_records(datasets, protocol, scoring.pep, prompt_sets, family)
    notes = {b: {"subset": subsets[b]} for b in subsets}
    rows = _result_rows(
        datasets, skipped, f"{checkpoint}", scoring, labels, recorded, notes, training
    )
    _write_results(output_dir, rows)  # every metric first: a failure leaves no partial results
    return rows


def _protocol_records(
    datasets, protocol: EvalProtocol, pep: PEPProtocol, prompt_sets: dict, family: str
) -> dict[str, dict[str, Any]]:
    """The protocol each real benchmark of ``datasets`` ran (:func:`protocol_record`); the
    generated world has no reference protocol."""
    return {
        b: protocol_record(b, protocol, pep, prompt_sets.get(b), family)
        for b, _ in datasets
        if b not in WORLD_BENCHMARKS
    }


def _write_results(output_dir: Path, rows: list[dict[str, Any]]) -> None:
    """Each result's file and ``results.md`` (rank 0; the others wait)."""
    if distributed.is_main():
        for result in rows:
            results.write_result(output_dir / f"{result['dataset']}.json", result)
        atomic_write_text(output_dir / "results.md", markdown_table(output_dir) + "\n")
    distributed.barrier()


def subset_record(kept: int, total: int) -> dict[str, int] | None:
    """``{"samples": kept, "of": total}`` when a limit left samples out, else None."""
    return {"samples": kept, "of": total} if kept < total else None


def hierarcaps_subset(root, limit: int | None) -> dict[str, dict[str, int]]:
    """HierarCaps' ``subset`` record when ``limit`` keeps fewer rows than the test set has."""
    total = len(load_hierarcaps(root, require_images=False))
    record = subset_record(min(limit or total, total), total)
    return {"hierarcaps": record} if record else {}


def is_results_file(path: Path) -> bool:
    """Whether ``path`` is a file an evaluation writes: a CLIP_benchmark results JSON, or a
    markdown table (``results.md``, ``published.md``)."""
    try:
        if path.suffix == ".json":
            results.read_result(path)
            return True
        return path.read_text(encoding="utf-8").startswith("| ")
    except (OSError, ValueError):
        return False


def _checked_output(output_dir: Path, benchmarks: Sequence[str]) -> Path:
    """``output_dir`` created and writable; every file an evaluation would replace there
    (the benchmarks' results, ``results.md``, ``published.md``) or merge into ``results.md``
    (every ``*.json``) must be one an evaluation wrote (:func:`is_results_file`)."""
    option = "output_dir (--output)"
    if output_dir.is_dir():
        written = {f"{d}.json" for b in benchmarks for d in BENCHMARK_REGISTRY[b].tasks}
        names = written | {"results.md", "published.md"}
        targets = sorted({output_dir / n for n in names} | set(output_dir.glob("*.json")))
        check_replaceable(targets, is_results_file, option)
    return writable_folder(output_dir, option, keep=False)


def _checked_request(
    benchmarks, roots, limits, hierarcaps_root, hierarcaps_limit, world_size, batch_size
) -> tuple[dict, dict, Any, int | None]:
    """:func:`evaluate`'s arguments checked before anything loads: known benchmarks, roots
    and limits of real benchmarks only, sizes (``check_sizes``), a HierarCaps folder when
    asked; returns (roots, limits, hierarcaps root, hierarcaps limit)."""
    unknown = [b for b in benchmarks if b not in BENCHMARKS]
    if unknown:
        raise ValueError(f"unknown benchmark {unknown[0]!r}; expected one of {list(BENCHMARKS)}")
    roots = {canonical_benchmark(k): v for k, v in (roots or {}).items()}
    limits = {canonical_benchmark(k): v for k, v in (limits or {}).items()}
    bad = [k for k in (*roots, *limits) if k not in REAL_BENCHMARKS + ("hierarcaps",)]
    if bad:
        raise ValueError(
            f"roots/limits name unknown benchmark {bad[0]!r}; expected one of "
            f"{list(REAL_BENCHMARKS + ('hierarcaps',))}"
        )
    hierarcaps_root = hierarcaps_root or roots.get("hierarcaps")
    hierarcaps_limit = (
        hierarcaps_limit if hierarcaps_limit is not None else limits.get("hierarcaps")
    )
    check_sizes(world_size, batch_size, {**limits, "hierarcaps": hierarcaps_limit})
    if "hierarcaps" in benchmarks and hierarcaps_root is None:
        raise ValueError(
            "benchmark 'hierarcaps' needs hierarcaps_root (the folder of hierarcaps_test.csv)"
        )
    if "hierarcaps" in benchmarks:  # its layout too, before the model loads
        check_root("hierarcaps", hierarcaps_root)
    return roots, limits, hierarcaps_root, hierarcaps_limit


def _real_samples(benchmarks, roots, limits, skip_bad_images: bool) -> tuple[dict, dict, dict]:
    """Each real benchmark's samples, checked and listed before the model loads (every root
    missing named at once, ``check_roots``), the (path, reason) of the images left out
    (``skip_bad_images``; else none), and the ``subset`` record of each that a limit cut."""
    names = [b for b in benchmarks if b in REAL_BENCHMARKS]
    found = check_roots(names, roots)
    real, subsets = {}, {}
    for b in names:
        every = load_real(b, found[b])
        real[b] = every[: limits.get(b)]
        if (subset := subset_record(len(real[b]), len(every))) is not None:
            subsets[b] = subset
    skipped: dict[str, list[tuple[str, str]]] = {b: [] for b in real}
    if skip_bad_images:
        for b in real:
            real[b], skipped[b] = readable_samples(real[b], b)
            if skipped[b] and distributed.is_main():
                print(
                    f"[evaluate] {b}: {len(skipped[b])} unreadable image(s) skipped, e.g. "
                    f"{skipped[b][0][0]}",
                    flush=True,
                )
    return real, skipped, subsets


def _generated_and_hierarcaps(
    embed,
    cache: Path,
    benchmarks,
    world_seed: int,
    world_size: int,
    size: int,
    hierarcaps_root,
    hierarcaps_limit,
) -> list[tuple[str, dict]]:
    """(benchmark, embeddings) of the generated world's benchmarks (one cached pass) and of
    HierarCaps (cache key: its rows' content and image files, and the limit)."""
    datasets: list[tuple[str, dict[str, Any]]] = []
    world_needed = [b for b in benchmarks if b in WORLD_BENCHMARKS]
    if world_needed:
        spec = f"world-{world_seed}-{world_size}-{size}-{world_fingerprint(world_seed, size)}"
        emb = cached(
            cache / f"{spec}.pt", lambda: world_embeddings(embed, world_size, world_seed, size)
        )
        emb = {**emb, **world_texts(world_seed, world_size)}
        datasets += [(b, emb) for b in world_needed]
    if "hierarcaps" in benchmarks:
        require_path(Path(hierarcaps_root) / "hierarcaps_test.csv", "HierarCaps")
        samples = load_hierarcaps(hierarcaps_root)[:hierarcaps_limit]
        spec = f"hierarcaps-{content_key(samples, hierarcaps_limit)}"
        emb = cached(cache / f"{spec}.pt", lambda: hierarcaps_embeddings(embed, samples))
        datasets.append(("hierarcaps", emb))
    return datasets


@dataclass(frozen=True)
class RealOptions:
    """The real benchmarks' request: ``roots``, ``limits``, SSI's ``noise_seed``, prompt
    ``templates`` (None: per benchmark, :func:`classification_templates`) and the
    :class:`EvalProtocol`."""

    roots: dict
    limits: dict
    noise_seed: int
    templates: Sequence[str] | None
    protocol: EvalProtocol


def model_family(module, model: str | None) -> str:
    """``meru`` for MERU-style models (hyperbolic, or MERU's CLIP baselines ``meru-clip-*``),
    whose reference evaluation squeezes retrieval images; ``clip`` otherwise."""
    meru_clip = model is not None and model.startswith("meru-clip")
    return "meru" if module.geometry == "hyperbolic" or meru_clip else "clip"


def retrieval_embedder(embed: Embedder, size: int) -> Embedder:
    """``embed`` with the squeezed ``size`` × ``size`` image transform (MERU, HyCoCLIP)."""
    squeeze = squeezed(embed.preprocess, size)
    return Embedder(embed.module, squeeze, embed.tokenizer, embed.batch_size)


def protocol_record(
    benchmark: str, protocol: EvalProtocol, pep: PEPProtocol, prompts: str | None, family: str
) -> dict[str, Any]:
    """What a results file records of the protocol its benchmark ran: the image transform,
    and where they apply the COCO caption set, the prompt set and split, PEP's kept count,
    negatives and pool."""
    spec = BENCHMARK_REGISTRY[benchmark]
    transform = protocol.retrieval_transform if spec.retrieval else "crop"
    record: dict[str, Any] = {"family": family, "image_transform": transform}
    if benchmark == "coco":
        record["captions"] = protocol.captions
    if benchmark in CLASSIFICATION_BENCHMARKS:
        record["prompt_set"] = prompts
        record["split"] = SUITE[benchmark].split if benchmark in SUITE else "val"
    if benchmark == "hierarcaps":
        record["pep"] = {
            "kept": None if pep.kept is None else len(pep.kept),
            "negatives": pep.negatives,
            "pool": None if pep.negatives != "shared" else len(pep.pool or ()) or pep.pool_size,
            "pool_ids": pep.pool is not None,
        }
    return record


def _real_datasets(
    embedders: dict[str, Embedder], cache: Path, real: dict, skipped: dict, options: RealOptions
) -> tuple[list[tuple[str, dict]], dict[str, str]]:
    """(benchmark, embeddings) of each real benchmark, and the prompt set of each
    classification benchmark; the cache key covers its root, limit, noise seed, prompt
    templates, transform, caption set and the images left out; the samples' content and image
    files (:func:`content_key`), not the root's name, so an edited data set is embedded again."""
    datasets, prompt_sets = [], {}
    protocol = options.protocol
    for benchmark, samples in real.items():
        root = Path(options.roots[benchmark]).expanduser()  # checked by _real_samples
        prompts: list[str] = []
        if benchmark in CLASSIFICATION_BENCHMARKS:
            prompts, prompt_sets[benchmark] = classification_templates(
                benchmark, root, options.templates
            )
        spec_ = BENCHMARK_REGISTRY[benchmark]
        transform = protocol.retrieval_transform if spec_.retrieval else "crop"
        embed_options = EmbedOptions(options.noise_seed, prompts, protocol.captions)
        left_out = [path for path, _ in skipped[benchmark]]
        key = content_key(
            samples, options.limits.get(benchmark), embed_options, transform, left_out
        )
        spec = f"{benchmark}-{key}"
        emb = cached(
            cache / f"{spec}.pt",
            lambda b=benchmark, s=samples, o=embed_options, t=transform: BENCHMARK_REGISTRY[
                b
            ].embed(embedders[t], s, o),
        )
        datasets.append((benchmark, emb))
    return datasets, prompt_sets


def _result_rows(
    datasets,
    skipped: dict,
    checkpoint: str,
    scoring: Scoring,
    labels: tuple[str, str],
    protocols: dict[str, dict[str, Any]],
    notes: dict[str, dict[str, Any]] | None = None,
    common: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The CLIP_benchmark result dicts of every dataset (``labels``: model, pretrained), all
    computed before any is written; a skipped image list goes into its benchmark's results,
    each real benchmark's records its protocol (:func:`protocol_record`), ``notes`` add keys
    per benchmark (``subset``), every one the ``common`` fields (the training's progress), and
    a benchmark's warnings (``Benchmark.warnings``) are recorded (``warnings``) and printed."""
    rows: list[dict[str, Any]] = []
    for benchmark, emb in datasets:
        try:
            computed = benchmark_metrics(emb, benchmark, scoring)
        except NonFiniteError as error:
            raise NonFiniteError(f"benchmark {benchmark!r} of {checkpoint}: {error}") from error
        left_out = skipped.get(benchmark)
        extra = (
            {"skipped_images": {"count": len(left_out), "examples": left_out[:5]}}
            if left_out
            else {}
        )
        if benchmark in protocols:
            extra["protocol"] = protocols[benchmark]
        extra.update((notes or {}).get(benchmark, {}))
        extra.update(common or {})
        tasks = BENCHMARK_REGISTRY[benchmark].tasks
        for dataset, metrics in computed.items():
            warnings = benchmark_warnings(emb, dataset, benchmark, scoring)
            for warning in warnings if distributed.is_main() else ():
                print(f"[evaluate] warning: {dataset}: {warning}", flush=True)
            found = {"warnings": warnings} if warnings else {}
            task = tasks[dataset]
            rows.append(results.make_result(dataset, *labels, task, metrics, **extra, **found))
    return rows


def markdown_table(results_dir: str | Path) -> str:
    """The merged results of a folder (``metrics.results.merge_results``) as a markdown table."""
    rows = results.merge_results(results_dir)
    columns = ["dataset", "model"] + results.metric_columns(rows)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = [
            f"{row[c]:.4g}" if isinstance(row.get(c), float) else str(row.get(c, ""))
            for c in columns
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
