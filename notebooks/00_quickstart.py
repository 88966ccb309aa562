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
# This notebook shows the three calls the rest of the companion is built on:
#
# 1. `create_model(name, pretrained, context_length)` — any open_clip architecture, with random
#    weights (`pretrained=None`), an open_clip tag, or a local checkpoint. `paper-tiny` is a
#    3.4M-parameter CLIP (ViT with 2 layers of width 64 at 32 px) that runs on a laptop CPU.
# 2. `embed_images` / `embed_texts` — L2-normalised features, batched, without gradients.
# 3. `similarity` — the cosine similarity CLIP uses at inference
#    ([HiMo-CLIP method page, inference](../docs/methods/himo-clip.md#inference)).
#
# The images and captions come from the companion's **generated world** (`paperlib.data.world`):
# scenes of coloured shapes whose captions are written from the exact ground truth.

# %% tags=["parameters"]
model_name = "paper-tiny"
pretrained = None  # an open_clip tag or a local checkpoint path; None = random weights
context_length = 248  # Long-CLIP's positions (docs/methods/himo-clip.md#long-text); 77: CLIP's
num_samples = 6
seed = 0

# %%
import torch

from paperlib.data.world import MAX_SHORT_WORDS, World
from paperlib.figures import sample_strip, save, similarity_heatmap, use_style
from paperlib.models.clip import create_model, embed_images, embed_texts, similarity

use_style()
torch.manual_seed(seed)
model, preprocess, tokenizer = create_model(model_name, pretrained, context_length=context_length)
model.eval()
print(
    f"{model_name}: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters, "
    f"text context {tokenizer.context_length} tokens"
)

# %% [markdown]
# ## A few samples of the world
#
# Each sample has two texts, both written from the scene. The **caption** is a DOCCI-like
# description whose sentences go from general to specific (the main object's super-category and
# the background, its category and sub-category, what that shape looks like, its size, colour
# and pattern, its position, then the other objects). The **short caption** is a COCO-like
# one-liner of its own — the main object's size, colour, pattern and name (named at the scene's
# level: sub-category, category or super-category), the other objects, the background — at
# most 20 words; it is not the caption's first sentence, which names only the super-category and
# the background.

# %%
world = World(seed=seed, image_size=64)
samples = [world.sample(i) for i in range(num_samples)]
first_sentences = [s.caption.split(". ")[0] + "." for s in samples]
assert all(len(s.short_caption.split()) <= MAX_SHORT_WORDS for s in samples)
assert all(s.short_caption != first for s, first in zip(samples, first_sentences))
print(f"caption:       {samples[0].caption}\nshort caption: {samples[0].short_caption}")
print(f"its first sentence: {first_sentences[0]}")
_ = save(sample_strip(samples), "quickstart_samples")

# %% [markdown]
# ## Features and their similarity
#
# Each image against each caption. After training the diagonal (each image with its own
# caption) should dominate — see the training notebooks; the line under the matrix counts how
# often it does here.

# %%
image_features = embed_images(model, preprocess, [s.image for s in samples])
text_features = embed_texts(model, tokenizer, [s.caption for s in samples])
sim = similarity(image_features, text_features)
assert torch.allclose(image_features.norm(dim=-1), torch.ones(num_samples), atol=1e-5)
own_best = int((sim.argmax(dim=1) == torch.arange(num_samples)).sum())
print(
    f"{own_best} of {num_samples} images score their own caption highest "
    f"(chance: 1 in {num_samples} each); similarities span {float(sim.min()):.3f} to "
    f"{float(sim.max()):.3f}"
)
trained = "untrained" if pretrained is None else pretrained
figure = similarity_heatmap(sim, f"cosine similarity ({model_name}, {trained})")
_ = save(figure, "quickstart_similarity")
