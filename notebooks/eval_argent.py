# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Evaluate ARGENT
#
# A thin layer over `python -m paperlib.evaluate`: one embedding pass per dataset (cached),
# every metric of both papers that applies to the model (Euclidean: cosine; hyperbolic:
# `-d_L` and PEP), one CLIP_benchmark-format JSON per dataset and a merged table.
# If `checkpoint` does not exist yet and `train_config` is given, that config is trained first
# (so the smoke preset runs on its own). The paper presets name the paper's benchmarks and
# their folders (`roots`, checked with the layout expected before any model is built) and
# the published rows to compare with: `published.md` sets each number beside the paper's,
# with Δ and a mark where the protocol that ran differs from the paper's.

# %% tags=["parameters"]
checkpoint = "runs/notebook/argent"
train_config = None
model = None  # read `checkpoint` as a released model (e.g. hycoclip-vit-s); None: a training run
benchmarks = None  # None: every world benchmark (paperlib.engine.evaluation.WORLD_BENCHMARKS)
roots = {}  # benchmark -> folder (the layouts of paperlib.engine.benchmarks.BENCHMARK_REGISTRY)
pep = {}  # PEP on HierarCaps: kept, negatives, pool, pool_size (paperlib.evaluate.pep_protocol)
published = []  # [table, model, arch] rows of paperlib/tables/published.json to set beside
retrieval_transform = None  # None: the model family's reference (crop or squeeze)
world_size = 128
hierarcaps_root = None
hierarcaps_limit = None
limits = {}  # benchmark -> first N samples
output_dir = "runs/notebook/argent-eval"

# %%
from IPython.display import Markdown, display

from paperlib.engine.evaluation import markdown_table
from paperlib.evaluate import run_or_train
from paperlib.notebooks import REPO_ROOT, optional_folder

rows = run_or_train(
    checkpoint,
    output_dir,
    train_config=train_config,
    benchmarks=benchmarks,
    hierarcaps_root=optional_folder(hierarcaps_root, "HierarCaps"),
    roots=roots,
    pep=pep,
    published=published,
    model=model,
    root=REPO_ROOT,
    world_size=world_size,
    hierarcaps_limit=hierarcaps_limit,
    limits=limits,
    retrieval_transform=retrieval_transform,
)

# %% [markdown]
# ## Results
# One row per dataset; empty cells are metrics that do not apply to that dataset.

# %%
display(Markdown(markdown_table(REPO_ROOT / output_dir)))
evaluated = sorted(p.stem for p in (REPO_ROOT / output_dir).glob("*.json") if p.stem != "published")
display(Markdown(f"{len(evaluated)} benchmark(s) evaluated: {', '.join(evaluated)}."))

# %% [markdown]
# ## Beside the published numbers
# Written when `published` names rows (or `model` is a released model with published numbers).

# %%
beside = REPO_ROOT / output_dir / "published.md"
if beside.is_file():
    display(Markdown(beside.read_text()))
display(Markdown(
    "The table above sets these results beside the published rows."
    if beside.is_file() else "No published rows were named, so no comparison was written."
))  # fmt: skip
