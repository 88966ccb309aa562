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
# # Train HiMo-CLIP
#
# A thin layer over `python -m paperlib.train`: MoLo (global InfoNCE + InfoNCE on HiDe's
# PCA-reconstructed text features, [HiMo-CLIP method page](../docs/methods/himo-clip.md#molo)).
# The `config` parameter is a whole training config (`paperlib.engine.config`); the parameter
# files in `params/train_himo/` hold the CPU smoke preset (the generated world, minutes here)
# and the paper presets (run those with torchrun on GPUs: docs/full-scale.md). A run resumes from
# `<output_dir>/last.pt` when it exists. `report_to` mirrors the log to live views while the
# run trains (`tensorboard`: event files in `<output_dir>/tensorboard`; `wandb`: offline unless
# `WANDB_MODE` says otherwise; both need `pip install -e ".[tracking]"`).

# %% tags=["parameters"]
config = {
    "method": "himo",
    "model": {"name": "paper-tiny"},
    "data": {"dataset": "world", "size": 128},
    "train": {"steps": 10, "batch_size": 32, "log_every": 1, "output_dir": "runs/notebook/himo"},
}
overrides = []
report_to = []  # e.g. ["tensorboard"]; the config's train.report_to when non-empty

# %%
import os

from IPython.display import Markdown, display

from paperlib.figures import loss_sentence, plot_log
from paperlib.notebooks import REPO_ROOT
from paperlib.train import read_log, run_in

if report_to:
    config = {**config, "train": {**config.get("train", {}), "report_to": list(report_to)}}
result = run_in(REPO_ROOT, config, overrides)
print(result.status, "at step", result.step, "->", os.path.relpath(result.checkpoint, REPO_ROOT))

# %% [markdown]
# ## Loss curve
# The total loss and its terms, one point per logged step (`<output_dir>/log.jsonl`).

# %%
fig = plot_log(read_log(result.output_dir), ["global", "comp", "hide_m"])

# %%
log_file = f"{os.path.relpath(result.output_dir, REPO_ROOT)}/log.jsonl"
display(Markdown(loss_sentence(read_log(result.output_dir), log_file)))
