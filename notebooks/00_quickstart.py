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
# 3. `similarity` — the cosine similarity CLIP uses at inference (SPEC §1.1).
#
# The images and captions come from the companion's **generated world** (`paperlib.data.world`):
# scenes of coloured shapes whose captions are written from the exact ground truth.

# %% tags=["parameters"]
model_name = "paper-tiny"
pretrained = None  # an open_clip tag or a local checkpoint path; None = random weights
context_length = 248  # Long-CLIP's stretched text positions (SPEC §1.2); 77 for plain CLIP
num_samples = 6
seed = 0

# %%
import textwrap

import matplotlib.pyplot as plt
import torch

from paperlib.data.world import World
from paperlib.figures import save, use_style
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
# Each sample has a long description (sentences ordered general → specific) and a short
# caption (its first sentence).

# %%
world = World(seed=seed, image_size=64)
samples = [world.sample(i) for i in range(num_samples)]
fig, axes = plt.subplots(1, num_samples, figsize=(2 * num_samples, 2.4))
for ax, sample in zip(axes, samples):
    ax.imshow(sample.image)
    ax.set_title("\n".join(textwrap.wrap(sample.short_caption, 20)), fontsize=7)
    ax.axis("off")
save(fig, "quickstart_samples")
print(samples[0].caption)

# %% [markdown]
# ## Features and their similarity
# With random weights the matrix is close to uniform; after training, the diagonal (each image
# with its own caption) should dominate — see the training notebooks.

# %%
image_features = embed_images(model, preprocess, [s.image for s in samples])
text_features = embed_texts(model, tokenizer, [s.caption for s in samples])
sim = similarity(image_features, text_features)
assert torch.allclose(image_features.norm(dim=-1), torch.ones(num_samples), atol=1e-5)

fig, ax = plt.subplots(figsize=(4.2, 3.6))
im = ax.imshow(sim.numpy(), cmap="viridis")
ax.set_xlabel("caption index")
ax.set_ylabel("image index")
ax.set_title(f"cosine similarity ({model_name}, untrained)")
fig.colorbar(im, ax=ax, label="cosine similarity")
save(fig, "quickstart_similarity")
