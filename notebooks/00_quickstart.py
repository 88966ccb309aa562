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
# pre-trained *base* (`results/bases/`, trained by `paperlib.study.pretrain` on the world's
# short captions; its training length and plateau check are printed below), loaded the way
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

import matplotlib.pyplot as plt
import pandas as pd
import torch
from IPython.display import Markdown, display

from paperlib.data.world import MAX_SHORT_WORDS, World
from paperlib.engine.config import build_config
from paperlib.engine.methods import build_module, input_size
from paperlib.figures import sample_strip, save, similarity_heatmaps, use_style
from paperlib.models.clip import create_model, embed_images, embed_texts, similarity
from paperlib.study.pretrain import base_path
from paperlib.study.reader import EVAL_SEED, repo_relative

# %%
use_style()
torch.manual_seed(seed)
untrained, preprocess, tokenizer = create_model(model_name, pretrained=None)
weights = base_path(model_name, base)
config = build_config({"method": "clip", "model": {"name": model_name, "init": str(weights)}})
module, _, _ = build_module(config)  # a fine-tune's start: the CLIP is module.clip
models = {"untrained": untrained.eval(), f"base {base}": module.clip.eval()}
image_size = input_size(module)
assert type(untrained.visual).__name__ == "ModifiedResNet"  # the intro's ResNet image tower
assert len(untrained.transformer.resblocks) == 2  # and its 2-layer text transformer
print(
    f"{model_name}: {sum(p.numel() for p in untrained.parameters()) / 1e6:.2f}M parameters, "
    f"{image_size} px images, text context {tokenizer.context_length} tokens"
)
bases = json.loads((weights.parent / "bases.json").read_text())
record = next(b for b in bases["bases"] if (b["model"], b["base"]) == (model_name, base))
trained_on = bases["config"][f"{model_name}-base{base}"]["data"]["caption"]
assert trained_on == "short_caption"  # the texts the similarity below uses


def plateau_words(check: dict) -> str:
    if check["reached"]:
        return f"{check['metric']} flat (gain {check['gain']:+.3f})"
    return (
        f"{check['metric']} still rising ({check['gain']:+.3f}, at least one standard error "
        f"{check['standard_error']:.3f})"
    )


print(
    f"base {base} ({repo_relative(weights)}): {record['steps']} steps on the world's short "
    "captions; over its last fifth: "
    + ", ".join(plateau_words(check) for check in record["plateau"].values())
)

# %% [markdown]
# ## A few samples of the world
#
# Each sample has two texts, both written from the scene. The **caption** is a DOCCI-like
# description whose sentences go from general to specific (the main object's super-category and
# the background, its category and sub-category, what that shape looks like, its size, colour
# and pattern, its position, then the other objects). The **short caption** is a COCO-like
# one-liner of its own — the main object's size, colour, pattern and name (named at the scene's
# level: sub-category, category or super-category), the other objects, the background — with a
# cap on its words (checked below); it is not the caption's first sentence, which names only the
# super-category and the background. The strip shows the scenes at 64 px; the models see the
# same scenes rendered at their own input size.

# %%
world = World(seed=EVAL_SEED, image_size=image_size)  # what the models see
scenes = [world.sample(i) for i in range(num_eval)]
samples = [World(seed=EVAL_SEED, image_size=64).sample(i) for i in range(num_samples)]
assert [s.id for s in samples] == [s.id for s in scenes[:num_samples]]  # the same scenes
first_sentences = [s.caption.split(". ")[0] + "." for s in scenes]
words = max(len(s.short_caption.split()) for s in scenes)
assert words <= MAX_SHORT_WORDS
assert all(s.short_caption != first for s, first in zip(scenes, first_sentences))
print(f"caption:       {samples[0].caption}\nshort caption: {samples[0].short_caption}")
print(f"its first sentence: {first_sentences[0]}")
_ = save(sample_strip(samples), "quickstart_samples")
display(
    Markdown(
        f"Over the {num_eval} held-out scenes the short captions run to at most {words} words "
        f"(the cap is {MAX_SHORT_WORDS}), and none is its caption's first sentence."
    )
)

# %% [markdown]
# ## Features and their similarity
#
# Each image against each short caption (the texts the bases were trained on), for the untrained
# model and the pre-trained base; each panel has its own colour scale. A trained CLIP should
# score each image highest with its own caption, the diagonal. The line under the figure counts
# how often that happens, among the shown scenes and among all the held-out ones, against
# chance (one over the number of captions).

# %%
features = {
    name: (
        embed_images(model, preprocess, [s.image for s in scenes]),
        embed_texts(model, tokenizer, [s.short_caption for s in scenes]),
    )
    for name, model in models.items()
}
sims = {name: similarity(images, texts) for name, (images, texts) in features.items()}
for images, texts in features.values():  # unit vectors: the dot product is the cosine
    assert torch.allclose(images.norm(dim=-1), torch.ones(num_eval), atol=1e-5)
    assert torch.allclose(texts.norm(dim=-1), torch.ones(num_eval), atol=1e-5)


def own_best(sim: torch.Tensor) -> int:
    """How many images score their own caption highest."""
    return int((sim.argmax(dim=1) == torch.arange(len(sim))).sum())


shown = {f"{model_name}, {name}": sim[:num_samples, :num_samples] for name, sim in sims.items()}
_ = save(similarity_heatmaps(shown), "quickstart_similarity")
plt.show()
display(
    Markdown(
        "; ".join(
            f"{name}: {own_best(sim[:num_samples, :num_samples])} of the {num_samples} shown "
            f"images and {own_best(sim) / num_eval:.1%} of the {num_eval} held-out ones score "
            f"their own caption highest (similarities {float(sim.min()):.3f} to "
            f"{float(sim.max()):.3f})"
            for name, sim in sims.items()
        )
        + f"; chance is 1 in {num_samples} among the shown, {1 / num_eval:.1%} among all."
    )
)

# %% [markdown]
# ## Why the untrained model lights up one caption column
#
# The similarity of image $i$ and caption $j$ is the dot product $s_{ij} = u_i \cdot t_j$ of two
# unit vectors. If every image feature is nearly one vector $\bar u$, then
# $s_{ij} \approx \bar u \cdot t_j$ for every $i$: all rows rank the captions alike, and the
# caption closest to $\bar u$ wins every row, whatever the image. Two numbers test this, for each
# model: how alike the features of different images are (their mean pairwise cosine; the same
# for the captions shows which tower carries a common component), and how many images pick the
# caption that $\bar u$, the mean image feature, picks.


# %%
def mean_pairwise_cosine(x: torch.Tensor) -> float:
    """The mean cosine between the unit rows of ``x``, each row with every other."""
    gram = x @ x.T
    return float((gram.sum() - gram.diagonal().sum()) / (len(x) * (len(x) - 1)))


PICKS = "images picking the mean image's caption"
rows = {}
for name, (images, texts) in features.items():
    column = int((images.mean(dim=0) @ texts.T).argmax())  # the caption the mean image picks
    rows[name] = {
        "image–image cosine": mean_pairwise_cosine(images),
        "caption–caption cosine": mean_pairwise_cosine(texts),
        PICKS: float((sims[name].argmax(dim=1) == column).float().mean()),
        "images picking their own caption": own_best(sims[name]) / num_eval,
    }
table = pd.DataFrame(rows).T
display(table.round(4))
before, after = table.loc["untrained"], table.loc[f"base {base}"]
tower = "image" if before["image–image cosine"] > before["caption–caption cosine"] else "caption"
for key in ("image–image cosine", "caption–caption cosine"):  # pre-training spreads both
    assert after[key] < before[key], (key, before[key], after[key])
images, texts = features["untrained"]  # the figure's bright column, from the mean image alone
bright = int((images[:num_samples].mean(dim=0) @ texts[:num_samples].T).argmax())
picked = sims["untrained"][:num_samples, :num_samples].argmax(dim=1)
display(
    Markdown(
        f"In the untrained model the features of different images have a mean cosine of "
        f"{before['image–image cosine']:.4f} and those of different captions "
        f"{before['caption–caption cosine']:.3f}: the common component sits mostly in the "
        f"{tower} features, so {before[PICKS]:.0%} of the {num_eval} images pick the caption "
        f"the mean image feature picks (in the figure, {int((picked == bright).sum())} of the "
        f"{num_samples} shown images pick caption {bright}, the mean image's pick among them), "
        "whatever the image shows. Pre-training spreads the image features (mean cosine "
        f"{after['image–image cosine']:.3f}) and the captions "
        f"({after['caption–caption cosine']:.3f}), and {after['images picking their own caption']:.1%} "
        "of the images pick their own caption."
    )
)
