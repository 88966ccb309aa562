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
# # Evaluate HiMo-CLIP
#
# A thin layer over `python -m paperlib.evaluate`: one embedding pass per dataset (cached),
# every metric of both papers that applies to the model (Euclidean: cosine; hyperbolic:
# `-d_L` and PEP), one CLIP_benchmark-format JSON per dataset and a merged table.
# If `checkpoint` does not exist yet and `train_config` is given, that config is trained first
# (so the smoke preset runs on its own).

# %% tags=["parameters"]
checkpoint = "runs/notebook/himo"
train_config = None
benchmarks = None  # None: every world benchmark (paperlib.engine.evaluation.WORLD_BENCHMARKS)
world_size = 128
hierarcaps_root = None
hierarcaps_limit = None
output_dir = "runs/notebook/himo-eval"

# %%
from IPython.display import Markdown, display

from paperlib.engine.evaluation import markdown_table
from paperlib.evaluate import run_or_train
from paperlib.notebooks import REPO_ROOT

rows = run_or_train(
    checkpoint,
    output_dir,
    train_config=train_config,
    benchmarks=benchmarks,
    hierarcaps_root=hierarcaps_root,
    root=REPO_ROOT,
    world_size=world_size,
    hierarcaps_limit=hierarcaps_limit,
)

# %% [markdown]
# ## Results
# One row per dataset; empty cells are metrics that do not apply to that dataset.

# %%
display(Markdown(markdown_table(REPO_ROOT / output_dir)))
