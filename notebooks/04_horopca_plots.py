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
# is reached by $u = \sqrt c\,(x_t, x)$, $p = u_{space}/(1 + u_{time})$
# ([conventions page, the Poincaré ball](../docs/methods/conventions.md#poincare-ball)), and
# distances scale as $d_P = \sqrt c\,d_L$. The boundary circle is at infinite distance.
#
# **Three ways down to two dimensions**
# ([conventions page, HoroPCA](../docs/methods/conventions.md#horopca)):
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
scale = "auto"  # "full" when its ARGENT study has finished, else "smoke"
variants = ["ARGENT", "HyCoCLIP", "MERU"]  # hyperbolic runs with embeddings (seed 0)
max_points = 600  # subsample (seeded) above this many distinct points, to bound UMAP's time
n_neighbors = 15  # UMAP
seed = 0

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from IPython.display import Markdown, display
from scipy.stats import kendalltau

from paperlib.analysis.hyperbolic import (
    BOX_KIND_NAMES,
    LEVEL_NAMES,
    crop_weights,
    disc_views,
    hierarchy_points,
    norm_groups,
)
from paperlib.figures import crop_weight_ecdfs, disc_grid, norm_boxplots, save, use_style
from paperlib.geometry.lorentz import aperture_radius
from paperlib.study.report.decided import available_scale
from paperlib.study.results.reader import load_embeddings, run_info

use_style()
torch.manual_seed(seed)
scale = available_scale(scale, study="argent")
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
# repeat across images (the cell after the table counts the distinct level-1 captions), and a
# repeated point would be a zero distance in the distortion, so each distinct point is kept once.
# Above `max_points` distinct points a seeded subsample is drawn; the table counts what is kept.

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

# %%
distinct = {  # every distinct point, before the subsample
    v: np.bincount(hierarchy_points(emb)[1].numpy(), minlength=len(LEVEL_NAMES))
    for v, emb in embeddings.items()
}
display(
    Markdown(
        "Before the subsample the models have "
        + ", ".join(
            f"{v} {n[0]} distinct level-1 and {n[3]} distinct level-4 captions"
            for v, n in distinct.items()
        )
        + ": "
        + (
            "the general levels contribute far fewer points to the views below than the "
            "specific ones."
            if all(10 * n[0] <= n[3] for n in distinct.values())
            else "the general levels are not much smaller groups than the specific ones here."
        )
    )
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
save(disc_grid(views, {v: level for v, (_, level) in points.items()}), "horopca_disc_views")
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
# mean ([HoroPCA](../docs/methods/conventions.md#horopca)), not the agreement of pairwise distances, so nothing guarantees it a lower
# distortion than tangent PCA; the line printed below says which view keeps the distances better
# on these embeddings. UMAP's distortion before rescaling includes its arbitrary scale; the
# rescaled column measures only the shape of its layout.

# %%
for v in variants:
    horo, tangent = views[v]["HoroPCA"].distortion, views[v]["tangent PCA"].distortion
    better = "HoroPCA" if horo < tangent else "tangent PCA"
    print(
        f"{v:10s} distortion HoroPCA {horo:.3f}, tangent PCA {tangent:.3f}: "
        f"{better} keeps the distances better"
    )

# %%
horo_better = [
    v for v in variants if views[v]["HoroPCA"].distortion < views[v]["tangent PCA"].distortion
]
tangent_better = [v for v in variants if v not in horo_better]
umap = {v: (views[v]["UMAP"].distortion, views[v]["UMAP"].scaled_distortion) for v in variants}
display(
    Markdown(
        "HoroPCA keeps the distances better than tangent PCA for "
        + (
            "every model"
            if not tangent_better
            else "no model"
            if not horo_better
            else f"{', '.join(horo_better)} and not for {', '.join(tangent_better)}"
        )
        + "; UMAP's distortion falls from "
        + ", ".join(f"{a:.2f}" for a, _ in umap.values())
        + " to "
        + ", ".join(f"{b:.2f}" for _, b in umap.values())
        + f" ({', '.join(umap)}) at its best uniform rescaling, so most of its raw distortion "
        + (
            "is its arbitrary scale."
            if all(b < a / 2 for a, b in umap.values())
            else "is not its scale alone."
        )
    )
)

# %% [markdown]
# ## Norms per hierarchy level, and crops vs full images
#
# The projection loses information; the norms do not. Below, the norm of the space part of
# every distinct caption at each chain level, of the images, and of the box crops, split by
# kind: **object crops** (one object of the scene) and **near-full crops** (almost the whole
# image). The dotted line is the undefined-aperture radius $2K/\sqrt c$ of notebook 03, the
# dashed line ARGENT's regularizer optimum $1/\sqrt2$. Each model has its own norm axis, on a log
# scale: one group far out (the table below gives each group's mean and spread) then neither
# stretches another model's axis nor flattens the other groups of its own model to a line.

# %%
groups = {v: norm_groups(emb) for v, emb in embeddings.items()}
radii = {v: float(aperture_radius(float(emb["curv"]))) for v, emb in embeddings.items()}
title = f"embedding norms per level and box kind ({scale} scale, held-out world)"
save(norm_boxplots(groups, radii, title, seed), "horopca_norms")
plt.show()

# %%
pd.DataFrame(
    {
        v: {name: f"{g.mean():.3f} ± {g.std():.3f} (n={len(g)})" for name, g in groups[v].items()}
        for v in variants
    }
)

# %%
medians = {v: {name: float(g.median()) for name, g in groups[v].items()} for v in variants}
farthest = {v: max(m, key=m.get) for v, m in medians.items()}
lowest = {v: min(float(g.min()) for g in groups[v].values()) for v in variants}
display(
    Markdown(
        "The group with the largest median norm is "
        + ", ".join(
            f"{v}'s {farthest[v]} ({medians[v][farthest[v]]:.2f}, "
            f"{medians[v][farthest[v]] / medians[v]['image']:.1f} times its median image norm)"
            for v in variants
        )
        + ", and "
        + (
            "no caption, image or crop of any model lies inside its radius 2K/√c "
            f"(smallest norm {min(lowest.values()):.2f}, largest radius {max(radii.values()):.2f})."
            if all(lowest[v] > radii[v] for v in variants)
            else "some points lie inside the radius 2K/√c: "
            + ", ".join(f"{v} down to {lowest[v]:.2f}" for v in variants if lowest[v] <= radii[v])
            + "."
        )
    )
)

# %% [markdown]
# ## The case ARGENT's intra weight is about
#
# HyCoCLIP asks each box crop to entail its full image with the same force whatever the crop.
# A near-full crop shows almost the same pixels as the image, so an encoder can place it almost on
# top of the image; an entailment cone between two nearly identical points is ill-posed (the
# exterior angle of a child next to its parent is arbitrary). ARGENT scales the intra-modality
# loss by $h = 1 - e^{-d_L(\text{crop}, \text{image})}$, so near-duplicates contribute little.
# Below: the distance from each crop to its own image and the resulting weight, per box kind,
# as cumulative distributions (solid: object crops, dashed: near-full crops). Only ARGENT trains
# with $h$; for MERU and HyCoCLIP it shows what the weight would be on their embeddings.

# %%
weights = {v: crop_weights(emb) for v, emb in embeddings.items()}
save(crop_weight_ecdfs(weights), "horopca_crop_weights")
plt.show()

# %%
crop_d = {
    v: {kind: float(weights[v][kind][0].median()) for kind in BOX_KIND_NAMES} for v in variants
}
crop_h = {
    v: {kind: float(weights[v][kind][1].median()) for kind in BOX_KIND_NAMES} for v in variants
}
near, obj = "near-full crop", "object crop"
nearer = [v for v in variants if crop_d[v][near] < crop_d[v][obj]]
display(
    Markdown(
        "Near-full crops sit nearer their image than object crops in "
        + ("every model" if len(nearer) == len(variants) else ", ".join(nearer) or "no model")
        + (
            f" (not in {', '.join(v for v in variants if v not in nearer)})"
            if len(nearer) < len(variants)
            else ""
        )
        + " (median $d_L$ near-full / object: "
        + ", ".join(f"{v} {crop_d[v][near]:.2f} / {crop_d[v][obj]:.2f}" for v in variants)
        + "), and the median weights $h$, near-full / object, are "
        + ", ".join(f"{v} {crop_h[v][near]:.2f} / {crop_h[v][obj]:.2f}" for v in variants)
        + ": "
        + (
            "ARGENT's weight discounts near-full crops on every model's embeddings."
            if all(round(crop_h[v][near], 2) < round(crop_h[v][obj], 2) for v in variants)
            else "ARGENT's weight does not discount near-full crops on every model's embeddings "
            "(where both medians are 1.00 the weight is saturated)."
        )
    )
)

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
#   by-product, not its objective: it maximises projected variance,
#   [HoroPCA](../docs/methods/conventions.md#horopca)).

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
# A negative or near-zero $\tau$ is a result, not a plotting error: the hyperbolic losses ask for
# specific captions farther out, and $\tau$ measures whether the trained embeddings place them
# there. The sentences below read the table above.

# %%
tau = {v: verdicts[v]["Kendall τ (level vs norm)"] for v in variants}
sign = {v: "negative" if t < 0 else "positive" if t > 0 else "zero" for v, t in tau.items()}
by_sign = {s: [v for v in variants if sign[v] == s] for s in dict.fromkeys(sign.values())}
meaning = {
    "negative": "by rank, the more specific a caption, the nearer the origin it tends to sit, "
    "against the layout the hyperbolic losses ask for",
    "positive": "by rank, the more specific a caption, the farther out it tends to sit, as the "
    "hyperbolic losses ask",
    "zero": "caption level and norm are not ranked together",
}
image_median = {v: medians[v]["image"] for v in variants}
specific_median = {v: medians[v][LEVEL_NAMES[3]] for v in variants}
place = {v: "inside" if image_median[v] < specific_median[v] else "beyond" for v in variants}
steps = run_info(scale, "argent", variants[0])["config"]["train"]["steps"]  # seed 0, as loaded
display(
    Markdown(
        f"These are the {scale} study's seed-0 embeddings, after {steps} training steps"
        + (
            " (`python -m paperlib.study --scale full` trains the full study, and this notebook "
            "reads its embeddings once its results exist). "
            if scale == "smoke"
            else ". "
        )
        + "Kendall's τ between caption level and norm is "
        + "; ".join(
            f"{s} for {'every model' if len(vs) == len(variants) else ' and '.join(vs)} "
            f"({', '.join(f'{v} {tau[v]:+.2f}' for v in vs)}): {meaning[s]}"
            for s, vs in by_sign.items()
        )
        + ". Measured by median norm, "
        + "; ".join(
            f"{v}'s images sit {place[v]} its most specific captions "
            f"({image_median[v]:.3f} against {specific_median[v]:.3f})"
            for v in variants
        )
        + "."
    )
)
