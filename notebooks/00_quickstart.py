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
# # Quickstart: a small CLIP, a few images, a similarity matrix
#
# This notebook shows the three calls the rest of the companion is built on, on the study's
# CLIP before and after its pre-training:
#
# 1. `create_model(name, pretrained, context_length)` — any open_clip architecture, with random
#    weights (`pretrained=None`), an open_clip tag, or a local checkpoint; `context_length=248`
#    gives it Long-CLIP's text positions
#    ([HiMo-CLIP method page, long text](../docs/methods/himo-clip.md#long-text)).
#    `paper-tiny-rn`, the study's model (a ResNet image tower at 32 px and a 2-layer text
#    transformer), runs on a laptop CPU.
# 2. `embed_images` / `embed_texts` — L2-normalised features, batched, without gradients.
# 3. `similarity` — the cosine similarity CLIP uses at inference
#    ([HiMo-CLIP method page, inference](../docs/methods/himo-clip.md#inference)).
#
# The model is built twice: with random weights, and with the weights of a committed
# pre-trained *base* (`results/bases/`, trained by `paperlib.study.run.pretrain` on the world's
# short captions; its training length and plateau check are read below), loaded the way
# every fine-tune of the study loads its starting point (`build_config` and `build_module` with
# `model.init` naming the file). The images and captions come from the companion's **generated world**
# (`paperlib.data.world`): scenes of coloured shapes whose captions are written from the exact
# ground truth, here from the held-out world the study evaluates on, which no training draws.

# %% tags=["parameters"]
model_name = "paper-tiny-rn"  # the study's CLIP; its pre-trained bases are in results/bases/
base = 0  # which committed base to load (0 or 1)
num_samples = 6  # scenes in the strip and in the similarity matrices
num_eval = 200  # held-out scenes over which each image's best caption is counted
seed = 0  # the untrained model's random initialisation

# %%
import json

import pandas as pd
import torch
from IPython.display import display

from paperlib.analysis.readings import quickstart as read
from paperlib.data.world import World
from paperlib.engine.config import build_config
from paperlib.engine.methods import build_module, input_size
from paperlib.figures import sample_strip, save, similarity_heatmaps, use_style
from paperlib.models.clip import create_model, embed_images, embed_texts, similarity
from paperlib.study.paths import repo_relative
from paperlib.study.plan.bases import base_path
from paperlib.study.plan.design import EVAL_SEED
from paperlib.study.plan.plateau import plateau_check

# %%
use_style()
torch.manual_seed(seed)
untrained, preprocess, tokenizer = create_model(model_name, pretrained=None)
weights = base_path(model_name, base)
config = build_config({"method": "clip", "model": {"name": model_name, "init": str(weights)}})
module, _, _ = build_module(config)  # a fine-tune's start: the CLIP is module.clip
models = {"untrained": untrained.eval(), f"base {base}": module.clip.eval()}
image_size = input_size(module)
print(
    f"{model_name}: {sum(p.numel() for p in untrained.parameters()) / 1e6:.2f}M parameters, "
    f"{image_size} px images, text context {tokenizer.context_length} tokens"
)

# %% [markdown]
# The base's record in `results/bases/bases.json` holds its validation curves. The study's
# plateau rule ([verdicts](../docs/methods/conventions.md#verdicts)) says whether a curve had
# stopped improving: it fits a least-squares line to the validation values over the last 40 % of
# the schedule and reads the gain the line implies over the last fifth against the curve's noise
# (the larger of the scatter about the line and each point's binomial noise); a base answers to
# no claim, so its curve is still rising where that gain's 95 % interval lies wholly above 0.

# %%
record = next(
    b
    for b in json.loads((weights.parent / "bases.json").read_text())["bases"]
    if (b["model"], b["base"]) == (model_name, base)
)
checks = {
    metric: plateau_check([(p["step"], p["value"]) for p in curve], record["val_size"], metric)
    for metric, curve in record["validation"].items()
    if metric in record["plateau"]  # the curves a base is checked on
}
read.base_training(base, repo_relative(weights), record["steps"], checks)

# %% [markdown]
# ## A few samples of the world
#
# Each sample has two texts, both written from the scene. The **caption** is a DOCCI-like
# description whose sentences go from general to specific (the main object's super-category and
# the background, its category and sub-category, what that shape looks like, its size, colour
# and pattern, its position, then the other objects). The **short caption** is a COCO-like
# one-liner of its own — the main object's size, colour, pattern and name (named at the scene's
# level: sub-category, category or super-category), the other objects, the background — with a
# cap of `paperlib.data.world.MAX_SHORT_WORDS` words; it is not the caption's first sentence,
# which names only the super-category and the background. The strip shows the scenes at 64 px;
# the models see the same scenes rendered at their own input size.

# %%
scenes = [World(seed=EVAL_SEED, image_size=image_size).sample(i) for i in range(num_eval)]
samples = [World(seed=EVAL_SEED, image_size=64).sample(i) for i in range(num_samples)]
print(f"caption:       {samples[0].caption}\nshort caption: {samples[0].short_caption}")
print(f"its first sentence: {samples[0].caption.split('. ')[0]}.")
_ = save(sample_strip(samples), "quickstart_samples")

# %% [markdown]
# ## Features and their similarity
#
# Each image against each short caption (the texts the bases were trained on), for the untrained
# model and the pre-trained base. Both feature sets are unit vectors, so the similarity of image
# $i$ and caption $j$ is their dot product, $s_{ij} = u_i \cdot t_j$: the cell computes it as a
# matrix product and checks it against `paperlib.models.clip.similarity`. A trained CLIP should
# score each image highest with its own caption, the diagonal; each panel of the figure has its
# own colour scale, and the line under it counts how often the diagonal wins, among the shown
# scenes and among all the held-out ones.

# %%
features = {
    name: (
        embed_images(model, preprocess, [s.image for s in scenes]),  # (N, d) unit rows
        embed_texts(model, tokenizer, [s.short_caption for s in scenes]),
    )
    for name, model in models.items()
}
sims = {name: images @ texts.T for name, (images, texts) in features.items()}  # s_ij = u_i · t_j
assert all(torch.allclose(sims[name], similarity(*pair)) for name, pair in features.items())
own = torch.arange(num_eval)  # image i's own caption is caption i
table = pd.DataFrame(
    {
        name: {
            "shown own": int(
                (sim[:num_samples, :num_samples].argmax(dim=1) == own[:num_samples]).sum()
            ),
            "held-out own": float((sim.argmax(dim=1) == own).float().mean()),
            "min": float(sim.min()),
            "max": float(sim.max()),
        }
        for name, sim in sims.items()
    }
).T
shown = {f"{model_name}, {name}": sim[:num_samples, :num_samples] for name, sim in sims.items()}
_ = save(similarity_heatmaps(shown), "quickstart_similarity")
read.similarity(table, num_samples, num_eval)

# %% [markdown]
# ## Why the untrained model lights up one caption column
#
# If every image feature is nearly one vector $\bar u$, then $s_{ij} \approx \bar u \cdot t_j$
# for every $i$: all rows rank the captions alike, and the caption closest to $\bar u$ wins every
# row, whatever the image. Two numbers test this, for each model: how alike the features of
# different images are (their mean pairwise cosine; the same for the captions shows which tower
# carries a common component), and how many images pick the caption that $\bar u$, the mean
# image feature, picks.


# %%
def mean_pairwise_cosine(x: torch.Tensor) -> float:
    """The mean cosine between the unit rows of ``x``, each row with every other."""
    gram = x @ x.T
    return float((gram.sum() - gram.diagonal().sum()) / (len(x) * (len(x) - 1)))


rows = {}
for name, (images, texts) in features.items():
    column = int((images.mean(dim=0) @ texts.T).argmax())  # the caption the mean image picks
    rows[name] = {
        "image–image cosine": mean_pairwise_cosine(images),
        "caption–caption cosine": mean_pairwise_cosine(texts),
        read.PICKS_MEAN: float((sims[name].argmax(dim=1) == column).float().mean()),
        read.PICKS_OWN: float(table.loc[name, "held-out own"]),
    }
display(pd.DataFrame(rows).T.round(4))
images, texts = (x[:num_samples] for x in features["untrained"])  # the figure's bright column
bright = int((images.mean(dim=0) @ texts.T).argmax())
picked = int((sims["untrained"][:num_samples, :num_samples].argmax(dim=1) == bright).sum())
figure = {"picked": picked, "images": num_samples, "column": bright}
read.common_component(rows["untrained"], rows[f"base {base}"], num_eval, figure)
