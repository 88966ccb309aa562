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

# %% tags=["parameters"]
scale = "auto"  # "full" when its ARGENT study has finished, else "smoke"
variants = ["ARGENT", "HyCoCLIP", "MERU"]  # hyperbolic runs with embeddings (seed 0)
max_points = 600  # subsample (seeded) above this many distinct points, to bound UMAP's time
n_neighbors = 15  # UMAP
seed = 0

# %%
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from paperlib.analysis.hyperbolic import (
    BOX_KIND_NAMES,
    LEVEL_NAMES,
    crop_weights,
    disc_views,
    hierarchy_points,
    layout,
    level_norms,
    median_difference,
    norm_groups,
)
from paperlib.analysis.readings import horopca as read
from paperlib.analysis.readings import summary
from paperlib.analysis.readings.stand_in import read_from
from paperlib.figures import crop_weight_ecdfs, disc_grid, norm_boxplots, save, use_style
from paperlib.geometry.horopca import frechet_centre, horopca, horospherical_projection
from paperlib.geometry.lorentz import aperture_radius, dist_to_origin, log_map0, paired_dist
from paperlib.study.paths import results_dir
from paperlib.study.report.decided import available_scale, load_claims
from paperlib.study.results.reader import load_embeddings, run_info

use_style()
torch.manual_seed(seed)
scale = available_scale(scale, study="argent")
embeddings = {v: load_embeddings(scale, "argent", v) for v in variants}
steps = {v: run_info(scale, "argent", v)["config"]["train"]["steps"] for v in variants}
for v, emb in embeddings.items():
    print(
        f"{v:10s} curvature c = {float(emb['curv']):.3f} after {steps[v]:,} training steps; "
        f"{len(emb['image'])} images, {len(emb['box_image'])} box crops"
    )
print(f"study scale: {scale}; the seed-0 runs' held-out embeddings (every figure shows seed 0)")

# %% [markdown]
# The views are only as good as the runs behind them: the line below says which study they come
# from and what its budget lets them say.

# %%
full = load_claims("full") if (results_dir("full") / "claims.json").is_file() else None
source = read_from(scale, full, load_claims("smoke"), "argent")
source

# %% [markdown]
# ## The points
#
# For each model: the distinct captions of the four chain levels and the images. General levels
# repeat across images, and a repeated point would be a zero distance in the distortion, so each
# distinct point is kept once. Above `max_points` distinct points a seeded subsample is drawn;
# the table counts what is kept.

# %%
generator = torch.Generator().manual_seed(seed)
points, distinct = {}, {}
for v, emb in embeddings.items():
    x, level = hierarchy_points(emb)
    distinct[v] = np.bincount(level.numpy(), minlength=len(LEVEL_NAMES))
    if len(x) > max_points:
        keep = torch.randperm(len(x), generator=generator)[:max_points].sort().values
        x, level = x[keep], level[keep]
    points[v] = (x, level)
counts = {
    v: np.bincount(level.numpy(), minlength=len(LEVEL_NAMES)) for v, (_, level) in points.items()
}
display(pd.DataFrame(counts, index=list(LEVEL_NAMES)).rename_axis("points kept"))
read.points(distinct)

# %% [markdown]
# ## HoroPCA in three steps
#
# HoroPCA works on the unit-curvature hyperboloid: the space parts $\sqrt c\,x$, with time part
# $x_t = \sqrt{1 + \lVert x\rVert^2}$. The cells compute it on ARGENT's points, with the model's
# origin $O$ as one more point so that the views can show where it lands, and check each step
# against `paperlib.geometry.horopca`.
#
# **1. Centre.** The Fréchet mean $\mu = \arg\min_m \frac1N\sum_i d(m, x_i)^2$, found by L-BFGS
# from the origin, is moved to $O$ by the Lorentz boost
# $B_\mu(x) = x + \frac{\mu\cdot x}{\mu_t + 1}\,\mu - x_t\,\mu$, an isometry: distances are kept,
# and the data are now centred at $O$.

# %%
model = variants[0]
curv = float(embeddings[model]["curv"])
x = torch.cat([points[model][0], torch.zeros_like(points[model][0][:1])]).double()  # + O
unit = x * curv**0.5  # unit curvature
mu = torch.zeros(unit.shape[1], dtype=torch.float64, requires_grad=True)
lbfgs = torch.optim.LBFGS([mu], max_iter=100, line_search_fn="strong_wolfe", tolerance_change=1e-15)


def mean_squared_distance():
    lbfgs.zero_grad()
    loss = paired_dist(unit, mu[None], 1.0).pow(2).mean()
    loss.backward()
    return loss


lbfgs.step(mean_squared_distance)
mu = mu.detach()
x_t, mu_t = torch.sqrt(1 + (unit**2).sum(-1)), torch.sqrt(1 + mu @ mu)
centred = unit + ((unit @ mu) / (mu_t + 1))[:, None] * mu - x_t[:, None] * mu  # B_μ(x)
assert torch.allclose(centred, frechet_centre(unit)[0])

# %% [markdown]
# **2. Project along horospheres.** For $k$ orthonormal ideal points $p_i$ (unit vectors: points
# at infinity), each point keeps $b_i = x_t - x\cdot p_i$ (its Busemann coordinate is
# $\log b_i$) on the geodesic plane through $O$ and the $p_i$. That plane's points are $(y_t, \sum_i z_i p_i)$ with
# $\lVert z\rVert^2 = y_t^2 - 1$, and keeping every $b_i$ means $y_t - z_i = b_i$: a quadratic
# $(k-1)\,y_t^2 - 2\beta y_t + \gamma = 0$ ($\beta = \sum_i b_i$,
# $\gamma = \lVert b\rVert^2 + 1$) whose root on the origin's side is
# $y_t = \gamma/(\beta + \sqrt{\beta^2 - (k-1)\gamma})$.


# %%
def project(points: torch.Tensor, ideals: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Horospherical projection onto the plane of ``ideals`` (k, D): (y_t, z)."""
    b = torch.sqrt(1 + (points**2).sum(-1))[:, None] - points @ ideals.T  # b_i = x_t − x·p_i
    beta, gamma = b.sum(-1), (b * b).sum(-1) + 1
    k = len(ideals)
    y_t = gamma / (beta + torch.sqrt((beta**2 - (k - 1) * gamma).clamp_min(0)))
    return y_t, y_t[:, None] - b


some = torch.linalg.qr(torch.randn(unit.shape[1], 2, dtype=torch.float64))[0].T  # any 2 ideals
assert all(
    torch.allclose(a, b)
    for a, b in zip(project(centred, some), horospherical_projection(centred, some))
)

# %% [markdown]
# **3. Choose the ideal points.** Starting at tangent PCA's two leading directions, L-BFGS
# moves them to maximise the projected variance $\frac1N\sum_i d(O, \pi(x_i))^2$ (kept
# orthonormal by a QR step); the disc coordinates are then $z/(1 + y_t)$. The result must be the
# library's `horopca`, the view the grid below draws.

# %%
tangent = log_map0(centred, 1.0)
w = torch.linalg.svd(tangent - tangent.mean(0), full_matrices=False)[2][:2].contiguous()
w.requires_grad_(True)  # tangent PCA's two leading directions, to be moved
lbfgs = torch.optim.LBFGS([w], max_iter=20, line_search_fn="strong_wolfe", tolerance_change=1e-12)


def projected_variance(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean d(O, π(x))² on the plane of w's rows made orthonormal (QR, signs fixed)."""
    q, r = torch.linalg.qr(w.T)
    ideals = (q * torch.sign(torch.diagonal(r))).T
    return dist_to_origin(project(centred, ideals)[1], 1.0).pow(2).mean(), ideals


def negative_variance():
    lbfgs.zero_grad()
    loss = -projected_variance(w)[0]
    loss.backward()
    return loss


start = float(projected_variance(w.detach())[0])
lbfgs.step(negative_variance)

# %% [markdown]
# The optimised ideal points give the disc coordinates:

# %%
variance, ideals = projected_variance(w.detach())
y_t, z = project(centred, ideals)
disc = z / (1 + y_t[:, None])  # Poincaré disc coordinates
assert torch.allclose(disc, horopca(x, curv, n_components=2).poincare)
read.horopca_steps(model, float(dist_to_origin(mu, 1.0)), (start, float(variance)))

# %% [markdown]
# ## Three views of each model
#
# HoroPCA as above, **tangent PCA** (map to the tangent space at $O$, PCA there, map back:
# cheap, but distances far from $O$ are distorted) and **UMAP** with
# `output_metric="hyperboloid"` (a neighbour-graph embedding on the hyperboloid; its input here
# is the matrix of hyperbolic distances: it keeps neighbourhoods, not distances, and its scale is
# arbitrary), all drawn by `paperlib.analysis.hyperbolic.disc_views`. Both PCAs centre the data,
# so **the centre of the disc is not the model's origin**: $O$ is projected with the data and
# drawn as a black cross, and distance from the cross, not from the centre, encodes genericity.
# Where the data fill only the middle of the disc, the panel zooms in and an inset shows the
# whole disc. The first UMAP call compiles numba code (≈ 20–30 s).

# %%
views = {
    v: disc_views(x, float(embeddings[v]["curv"]), n_neighbors=n_neighbors, seed=seed)
    for v, (x, _) in points.items()
}
assert torch.allclose(
    torch.cat([views[model]["HoroPCA"].poincare, views[model]["HoroPCA"].origin[None]]), disc
)
_ = save(disc_grid(views, {v: level for v, (_, level) in points.items()}), "horopca_disc_views")

# %% [markdown]
# **Reading each view.** On the PCA views, the levels should form rings or a gradient away from
# the cross (generic captions near $O$, images outermost); on UMAP, clusters show which points
# are neighbours and radial position means little. For each view and model the paragraphs below
# take Kendall's $\tau$ between the level (images as the fifth) and the distance from $O$ in the
# disc, with a bootstrap interval over the points; the median distance from $O$ per level; and
# the share of each point's 10 nearest neighbours in the view that share its level, against the
# same share with the levels shuffled over the points.

# %%
layouts = {method: {v: layout(views[v][method], points[v][1], seed=seed) for v in variants}
           for method in next(iter(views.values()))}  # fmt: skip
view_readings = [read.view(method, per_model) for method, per_model in layouts.items()]
for reading in view_readings:
    display(reading)

# %% [markdown]
# Each view's **distortion** (the HoroPCA paper's measure) is the mean relative error over all
# pairs, $\frac{1}{|P|}\sum_{i<j} |d'_{ij} - d_{ij}|/d_{ij}$ with $d = \sqrt c\,d_L$ in the model
# and $d'$ in the disc; 0 is perfect. UMAP's scale is arbitrary, so the table also gives the
# distortion at the best uniform rescaling of $d'$. HoroPCA maximises projected variance, not the
# agreement of distances, so nothing guarantees it a lower distortion than tangent PCA.

# %%
table = {v: {m: (view.distortion, view.scaled_distortion) for m, view in views[v].items()}
         for v in variants}  # fmt: skip
display(read.distortion_table(table))
read.distortions(table)

# %% [markdown]
# ## Norms per hierarchy level, and crops vs full images
#
# The projection loses information; the norms do not. Below, the norm of the space part of every
# distinct caption at each chain level, of the images, and of the box crops, split by kind:
# **object crops** (one object of the scene) and **near-full crops** (almost the whole image).
# The dotted line is the undefined-aperture radius $2K/\sqrt c$ of notebook 03, the dashed line
# ARGENT's regularizer optimum $1/\sqrt2$. Each model has its own norm axis, on a log scale.

# %%
groups = {v: norm_groups(emb) for v, emb in embeddings.items()}  # norms per level and box kind
radii = {v: float(aperture_radius(float(emb["curv"]))) for v, emb in embeddings.items()}
title = f"embedding norms per level and box kind ({scale} scale, held-out world)"
_ = save(norm_boxplots(groups, radii, title, seed), "horopca_norms")

# %% [markdown]
# Per group: the median norm with its quartiles, and the share inside each model's radius. The
# reading then takes the per-level medians, Kendall's $\tau$ of level against norm over the
# distinct captions (with a bootstrap interval), each image against its own level-4 caption
# (the share of images whose norm is the larger, with its standard error) and the shares inside.

# %%
levels = {v: level_norms(emb, radii[v], seed) for v, emb in embeddings.items()}
display(read.norm_table(levels))
norms_reading = read.norms(levels)
norms_reading

# %% [markdown]
# ## The case ARGENT's intra weight is about
#
# HyCoCLIP asks each box crop to entail its full image with the same force whatever the crop. A
# near-full crop shows almost the same pixels as the image, so an encoder can place it almost on
# top of the image, and an entailment cone between two nearly identical points is ill-posed.
# ARGENT scales the intra-modality loss by $h = 1 - e^{-d_L(\text{crop}, \text{image})}$, so
# near-duplicates contribute little. Below: the distance from each crop to its own image and the
# resulting weight, per box kind, as cumulative distributions (solid: object crops, dashed:
# near-full crops). Only ARGENT trains with $h$; for MERU and HyCoCLIP it shows what the weight
# would be on their embeddings.

# %%
weights = {v: crop_weights(emb) for v, emb in embeddings.items()}
_ = save(crop_weight_ecdfs(weights), "horopca_crop_weights")

# %% [markdown]
# The reading compares the median distance of near-full and object crops to their image, with a
# bootstrap interval of the difference:

# %%
near, obj = BOX_KIND_NAMES[1], BOX_KIND_NAMES[0]
distance = {v: {k: float(weights[v][k][0].median()) for k in BOX_KIND_NAMES} for v in variants}
weight = {v: {k: float(weights[v][k][1].median()) for k in BOX_KIND_NAMES} for v in variants}
nearer = {v: median_difference(weights[v][near][0].numpy(), weights[v][obj][0].numpy(), seed=seed)
          for v in variants}  # fmt: skip
crops_reading = read.crops(distance, weight, nearer)
crops_reading

# %% [markdown]
# ## What shows
#
# These are the seed-0 embeddings of the study named at the top, after the training steps it
# prints; the points below are read off the sections above.

# %%
summary([source, *view_readings, norms_reading, crops_reading])
