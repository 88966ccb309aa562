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
# # Looking at hyperbolic embeddings: HoroPCA, tangent PCA and UMAP in the Poincaré disc
#
# A hyperbolic CLIP (MERU, HyCoCLIP, ARGENT) should lay its embeddings out as a hierarchy:
# generic concepts near the origin, specific ones farther out, each image beyond the captions
# that describe it. The held-out world of this project comes with the hierarchy written down:
# every image has a 4-level caption chain, general → specific
# (*"a round shape"* → *"an ellipse"* → *"a black wide ellipse"* → the full scene), and box crops
# of its objects. This notebook projects the trained embeddings to two dimensions and asks
# whether the levels separate.
#
# **The disc.** The models store the space part $x\in\mathbb R^{d}$ of a point on the hyperboloid
# of curvature $-c$, $x_t = \sqrt{1/c + \lVert x\rVert^2}$. The Poincaré ball of curvature $-1$
# is reached by $u = \sqrt c\,(x_t, x)$, $p = u_{space}/(1 + u_{time})$ (SPEC §2.1), and distances
# scale as $d_P = \sqrt c\,d_L$. The boundary circle is at infinite distance.
#
# **Three ways down to two dimensions** (SPEC §2.6):
#
# * **tangent PCA** — map to the tangent space at the origin, $v = \log_0(x)$, run PCA there,
#   map back with $\exp_0$. Cheap, but distances far from the origin are distorted by the map.
# * **HoroPCA** (Chami et al., 2021) — centre the data at its Fréchet mean by an isometry, pick
#   $k$ ideal points $p_i$ on the sphere at infinity, and project every point onto the geodesic
#   plane through the origin and the $p_i$ *along horospheres*, keeping its Busemann coordinates
#   $B_{p_i}(x) = \log(x_t - x\cdot p_i)$ (unit curvature); the ideal points maximise the
#   projected variance. This project's implementation solves the projection in closed form
#   (`paperlib.geometry.horopca`).
# * **UMAP** with `output_metric="hyperboloid"` — a neighbour-graph embedding whose output lives
#   on the hyperboloid; its input here is the matrix of hyperbolic distances. It keeps
#   neighbourhoods, not distances, and its overall scale is arbitrary.
#
# Each view's **distortion** (the HoroPCA paper's measure) is the mean relative error over all
# pairs, $\frac{1}{|P|}\sum_{i<j} |d'_{ij} - d_{ij}|/d_{ij}$ with $d = \sqrt c\,d_L$ in the model
# and $d'$ in the disc; 0 is perfect. Because UMAP's scale is arbitrary we also print the
# distortion at the best uniform rescaling of $d'$.

# %% tags=["parameters"]
scale = "auto"  # "full" when its results exist, else "smoke"
variants = ["ARGENT", "HyCoCLIP", "MERU"]  # hyperbolic runs with embeddings (seed 0)
max_points = 600  # subsample (seeded) above this many distinct points, to bound UMAP's time
n_neighbors = 15  # UMAP
seed = 0

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from scipy.stats import kendalltau

from paperlib.analysis.hyperbolic import (
    BOX_KIND_NAMES,
    LEVEL_NAMES,
    crop_weights,
    disc_views,
    draw_disc,
    hierarchy_points,
    inset_bounds,
    norm_groups,
)
from paperlib.figures import save, use_style
from paperlib.geometry.lorentz import aperture_radius
from paperlib.study.reader import available_scale, load_embeddings

use_style()
torch.manual_seed(seed)
scale = available_scale(scale)
embeddings = {v: load_embeddings(scale, "argent", v) for v in variants}
for v, emb in embeddings.items():
    print(
        f"{v:16s} curvature c = {float(emb['curv']):.3f}; {len(emb['image'])} images, "
        f"{len(emb['box_image'])} box crops"
    )
print(f"study scale: {scale}; embeddings of the seed-0 runs (every figure below shows seed 0 only)")

# %% [markdown]
# ## The points
#
# For each model: the distinct captions of the four chain levels and the images. General levels
# repeat across images (there are only a handful of distinct level-1 captions), and a repeated
# point would be a zero distance in the distortion, so each distinct point is kept once.

# %%
generator = torch.Generator().manual_seed(seed)
points = {}
for v, emb in embeddings.items():
    x, level = hierarchy_points(emb)
    if len(x) > max_points:
        keep = torch.randperm(len(x), generator=generator)[:max_points].sort().values
        x, level = x[keep], level[keep]
    points[v] = (x, level)
pd.DataFrame(
    {v: np.bincount(level.numpy(), minlength=len(LEVEL_NAMES)) for v, (_, level) in points.items()},
    index=list(LEVEL_NAMES),
)

# %% [markdown]
# ## Three views of each model
#
# Both PCAs centre the data (HoroPCA at the Fréchet mean, tangent PCA at the mean tangent
# vector), so **the centre of the disc is not the model's origin**. The origin $O$ is projected
# with the data and drawn as a black cross: distance from the cross, not from the centre, is
# what encodes genericity. Where the data fill only the middle of the disc, the panel zooms in
# (axes in Poincaré coordinates) and an inset shows the whole unit disc with the zoomed window.
# The first UMAP call compiles numba code (≈ 20–30 s).

# %%
views = {
    v: disc_views(x, float(embeddings[v]["curv"]), n_neighbors=n_neighbors, seed=seed)
    for v, (x, _) in points.items()
}
methods = list(next(iter(views.values())))

fig, axes = plt.subplots(
    len(variants), len(methods), figsize=(4.3 * len(methods), 4.4 * len(variants))
)
axes = np.atleast_2d(axes)
for row, v in enumerate(variants):
    _, level = points[v]
    for col, method in enumerate(methods):
        ax, view = axes[row, col], views[v][method]
        extent = max(float(view.poincare.abs().max()), float(view.origin.abs().max()))
        limit = min(1.05, 1.15 * extent)  # zoom on the data; the inset shows the whole disc
        draw_disc(ax, view, level, limit=limit)
        if limit < 0.7:
            inset = ax.inset_axes(inset_bounds(view, limit, size=0.3))
            draw_disc(inset, view, level, sizes=(4, 3, 2, 1, 1), origin_size=4)
            inset.add_patch(
                plt.Rectangle((-limit, -limit), 2 * limit, 2 * limit, fill=False, lw=0.8)
            )
            inset.set_axis_off()
        ax.set_title(
            f"{v} — {method}\ndistortion {view.distortion:.3f}"
            + (f" ({view.scaled_distortion:.3f} rescaled)" if method == "UMAP" else ""),
            fontsize=10,
        )
        ax.set_xlabel("Poincaré coordinate 1")
        ax.set_ylabel("Poincaré coordinate 2")
fig.tight_layout()
handles, labels = axes[0, 0].get_legend_handles_labels()
order = [*reversed(range(len(LEVEL_NAMES))), len(LEVEL_NAMES)]  # general → specific, then O
fig.legend(
    [handles[i] for i in order],
    [labels[i] for i in order],
    loc="upper center",
    ncol=3,
    bbox_to_anchor=(0.5, 0.0),
    markerscale=1.5,
)
save(fig, "horopca_disc_views")
plt.show()

# %%
pd.DataFrame(
    {
        (v, m): {
            "distortion": views[v][m].distortion,
            "distortion at best scale": views[v][m].scaled_distortion,
        }
        for v in variants
        for m in methods
    }
).T.round(3)

# %% [markdown]
# How to read the grid. On the PCA views, the levels should form rings or a gradient away from
# the cross (generic captions near $O$, images outermost); on UMAP, clusters show which points
# are neighbours, but radial position means little. Compare the distortions along a row, with
# one caveat: HoroPCA maximises the variance of the horospherical projections about the Fréchet
# mean (SPEC §2.6), not the agreement of pairwise distances, so nothing guarantees it a lower
# distortion than tangent PCA; the line printed below says which view keeps the distances better
# on these embeddings. UMAP's distortion before rescaling mostly measures its arbitrary scale;
# the rescaled column measures the shape of its layout.

# %%
for v in variants:
    horo, tangent = views[v]["HoroPCA"].distortion, views[v]["tangent PCA"].distortion
    better = "HoroPCA" if horo < tangent else "tangent PCA"
    print(
        f"{v:10s} distortion HoroPCA {horo:.3f}, tangent PCA {tangent:.3f}: {better} keeps the distances better"
    )
#
# ## Norms per hierarchy level, and crops vs full images
#
# The projection loses information; the norms do not. Below, the norm of the space part of
# every distinct caption at each chain level, of the images, and of the box crops, split by
# kind: **object crops** (one object of the scene) and **near-full crops** (almost the whole
# image). The dotted line is the undefined-aperture radius $2K/\sqrt c$ of notebook 03, the
# dashed line ARGENT's regularizer optimum $1/\sqrt2$.

# %%
groups = {v: norm_groups(emb) for v, emb in embeddings.items()}
names = list(groups[variants[0]])
palette = [*plt.cm.viridis(np.linspace(0.0, 0.85, 4)), "C3", "C1", "C2"]  # as in the discs
fig, axes = plt.subplots(1, len(variants), figsize=(5.2 * len(variants), 4.4), sharey=True)
for ax, v in zip(np.atleast_1d(axes), variants):
    data = [groups[v][name].numpy() for name in names]
    ax.boxplot(data, showfliers=False, widths=0.6, medianprops={"color": "k"})
    for i, values in enumerate(data, start=1):
        jitter = np.random.default_rng(seed).uniform(-0.18, 0.18, len(values))
        ax.scatter(i + jitter, values, s=4, alpha=0.4, color=palette[i - 1])
    ax.axhline(
        aperture_radius(float(embeddings[v]["curv"])),
        color="k",
        ls=":",
        label=r"radius $2K/\sqrt{c}$",
    )
    ax.axhline(
        2**-0.5, color="k", ls="--", lw=0.8, label=r"$1/\sqrt{2}$ (ARGENT's $\mathcal{L}_{Reg}$)"
    )
    ax.set_xticks(
        range(1, len(names) + 1),
        [n.replace(" (", "\n(") for n in names],
        rotation=35,
        ha="right",
        fontsize=8,
    )
    ax.set_title(v)
np.atleast_1d(axes)[0].set_ylabel(r"norm of the space part $\|x\|$")
np.atleast_1d(axes)[0].legend(fontsize=8, loc="upper left")
fig.suptitle(f"embedding norms per level and box kind ({scale} scale, held-out world)")
fig.tight_layout()
save(fig, "horopca_norms")
plt.show()

# %%
pd.DataFrame(
    {
        v: {name: f"{g.mean():.3f} ± {g.std():.3f} (n={len(g)})" for name, g in groups[v].items()}
        for v in variants
    }
)

# %% [markdown]
# ## The case ARGENT's intra weight is about
#
# HyCoCLIP asks each box crop to entail its full image with the same force whatever the crop.
# A near-full crop shows almost the same pixels as the image, so the encoder places it almost on
# top of the image; an entailment cone between two nearly identical points is ill-posed (the
# exterior angle of a child next to its parent is arbitrary). ARGENT scales the intra-modality
# loss by $h = 1 - e^{-d_L(\text{crop}, \text{image})}$, so near-duplicates contribute little.
# Below: the distance from each crop to its own image and the resulting weight, per box kind,
# as cumulative distributions (solid: object crops, dashed: near-full crops). Only ARGENT trains
# with $h$; for MERU and HyCoCLIP it shows what the weight would be on their embeddings.

# %%
weights = {v: crop_weights(emb) for v, emb in embeddings.items()}
fig, axes = plt.subplots(1, 2, figsize=(11, 3.9))
for v, colour in zip(variants, ["C0", "C1", "C3"]):
    for kind, style in zip(BOX_KIND_NAMES, ["-", "--"]):
        d, h = weights[v][kind]
        axes[0].ecdf(d.numpy(), color=colour, ls=style, label=f"{v}: {kind}")
        axes[1].ecdf(h.numpy(), color=colour, ls=style)
axes[0].set_xscale("log")
axes[0].set_xlabel(r"$d_L$(box crop, its image) (log scale)")
axes[1].set_xlabel(r"intra weight $h = 1 - e^{-d_L}$")
for ax in axes:
    ax.set_ylabel("fraction of crops ≤ x")
axes[0].set_title("distance from each crop to its own image")
axes[1].set_title("the weight ARGENT gives (or would give) the pair")
fig.tight_layout()
fig.legend(
    *axes[0].get_legend_handles_labels(),
    loc="upper center",
    ncol=3,
    bbox_to_anchor=(0.5, 0.0),
    fontsize=8,
)
save(fig, "horopca_crop_weights")
plt.show()

# %% [markdown]
# ## What shows at this scale
#
# Computed from the embeddings above (so it stays true when the study is re-run):
#
# * **levels by norm** — Kendall's $\tau$ between chain level (1–4) and norm over the distinct
#   captions; positive means specific captions sit farther out, as the hyperbolic models intend;
# * **images beyond captions** — whether the median image norm exceeds the median level-4
#   caption norm (MERU's convention: text entails image, so images sit outside);
# * **near-full crops close to their image** — whether near-full crops are nearer their image than
#   object crops are, i.e. whether ARGENT's weight actually discounts them;
# * **HoroPCA vs tangent PCA** — whether HoroPCA's 2-D view keeps the distances better (a
#   by-product, not its objective: it maximises projected variance, SPEC §2.6).

# %%
verdicts = {}
for v in variants:
    x, level = hierarchy_points(embeddings[v])
    text = level < 4
    tau = kendalltau(level[text].numpy(), x[text].norm(dim=-1).numpy()).statistic
    d = {kind: weights[v][kind][0] for kind in BOX_KIND_NAMES}
    verdicts[v] = {
        "Kendall τ (level vs norm)": round(float(tau), 3),
        "images beyond level-4 captions": bool(
            groups[v]["image"].median() > groups[v][LEVEL_NAMES[3]].median()
        ),
        "near-full crops nearer their image": bool(
            d["near-full crop"].median() < d["object crop"].median()
        ),
        "HoroPCA distortion ≤ tangent PCA's": bool(
            views[v]["HoroPCA"].distortion <= views[v]["tangent PCA"].distortion
        ),
        "median h, near-full / object": f"{weights[v]['near-full crop'][1].median():.2f} / "
        f"{weights[v]['object crop'][1].median():.2f}",
    }
pd.DataFrame(verdicts)

# %% [markdown]
# A short schedule on a toy world need not produce a clean hierarchy, and a negative or near-zero
# $\tau$ is a result, not a plotting error: the contrastive term dominates early training and
# the entailment terms (weights 0.1–0.2) shape the radial layout only slowly. The smoke study
# trains for a few dozen steps; re-run with `python -m paperlib.study --scale full` and this
# notebook picks up the full-scale embeddings automatically.
