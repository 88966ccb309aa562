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
# PCA-reconstructed text features, SPEC §1.1).
# The `config` parameter is a whole training config (`paperlib.engine.config`); the parameter
# files in `params/train_himo/` hold the CPU smoke preset (the generated world, minutes here)
# and the paper presets (run those with torchrun on GPUs, see the README). A run resumes from
# `<output_dir>/last.pt` when it exists.

# %% tags=["parameters"]
config = {
    "method": "himo",
    "model": {"name": "paper-tiny"},
    "data": {"dataset": "world", "size": 128},
    "train": {"steps": 10, "batch_size": 32, "log_every": 1, "output_dir": "runs/notebook/himo"},
}
overrides = []

# %%
import matplotlib.pyplot as plt

from paperlib.notebooks import REPO_ROOT
from paperlib.train import read_log, run

config = {**config, "train": {**config.get("train", {})}}
config["train"]["output_dir"] = str(
    REPO_ROOT / config["train"].get("output_dir", "runs/notebook/himo")
)
result = run(config, overrides)
print(result.status, "at step", result.step, "->", result.checkpoint)

# %% [markdown]
# ## Loss curve
# The total loss and its terms, one point per logged step (`<output_dir>/log.jsonl`).

# %%
log = read_log(result.output_dir)
plots = [k for k in ("global", "comp", "hide_m") if k in log[0]]
fig, axes = plt.subplots(1, 1 + len(plots), figsize=(4 * (1 + len(plots)), 3))
steps = [r["step"] for r in log]
for ax, key in zip(axes, ["loss", *plots]):
    ax.plot(steps, [r[key] for r in log])
    ax.set(title=key, xlabel="step")
fig.tight_layout()
