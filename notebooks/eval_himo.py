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
benchmarks = [
    "world-long",
    "world-short",
    "world-monotonicity",
    "world-cola",
    "world-zeroshot",
    "world-hierarchy",
]
world_size = 128
hierarcaps_root = None
hierarcaps_limit = None
output_dir = "runs/notebook/himo-eval"

# %%
from IPython.display import Markdown, display

from paperlib.engine.evaluate import markdown_table
from paperlib.evaluate import run
from paperlib.notebooks import REPO_ROOT
from paperlib.train import config_from
from paperlib.train import run as train

checkpoint_path = REPO_ROOT / checkpoint
if not (checkpoint_path / "last.pt").is_file() and not checkpoint_path.is_file():
    if train_config is None:
        raise FileNotFoundError(f"checkpoint {checkpoint_path} not found and no train_config given")
    cfg = config_from(REPO_ROOT / train_config if isinstance(train_config, str) else train_config)
    cfg.train.output_dir = str(checkpoint_path)
    train(cfg)
if hierarcaps_root is not None:
    hierarcaps_root = (REPO_ROOT / hierarcaps_root).expanduser()
    if hierarcaps_root.is_dir():
        benchmarks = [*benchmarks, "hierarcaps"]
    else:
        print(f"HierarCaps not found at {hierarcaps_root}: benchmark 'hierarcaps' skipped")
        hierarcaps_root = None
rows = run(
    checkpoint_path,
    REPO_ROOT / output_dir,
    benchmarks=benchmarks,
    world_size=world_size,
    hierarcaps_root=hierarcaps_root,
    hierarcaps_limit=hierarcaps_limit,
)

# %% [markdown]
# ## Results
# One row per dataset; empty cells are metrics that do not apply to that dataset.

# %%
display(Markdown(markdown_table(REPO_ROOT / output_dir)))
