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
# # HiDe step by step: what in-batch PCA keeps of a long caption
#
# HiMo-CLIP's first component, **HiDe**
# ([HiMo-CLIP method page, HiDe](../docs/methods/himo-clip.md#hide)), decomposes a batch of text
# features by principal component analysis and keeps the leading components. The paper's reading
# is that "high-variance components correspond to high-level semantics (the object category),
# low-variance ones to low-level details", and that the decomposition *adapts to the batch*: in a
# batch of trucks the fine details matter, in a mixed batch the category does.
#
# This notebook computes HiDe by hand on real text features — the long captions of the
# companion's generated world, encoded by the text towers the CPU-scale study trained — checks
# it against the library, and then tests each of those readings against the world's exact
# ground truth:
#
# 1. HiDe's three steps, in view;
# 2. the explained-variance spectrum and the τ cut that fixes m;
# 3. which semantic factors the leading components follow (correlation ratio $\eta^2$);
# 4. what the reconstruction $u'$ keeps and what it drops;
# 5. how the components change with the batch's **content** and 6. its **size**.
#
# Four text towers are compared: the short-caption pre-training (our stand-in for pre-trained
# CLIP) and its three fine-tunes on long captions — global InfoNCE alone (MoLo with λ = 0),
# Long-CLIP's loss, and MoLo (τ = 0.9, λ = 1), whose loss runs HiDe at every step.

# %% tags=["parameters"]
scale = "auto"  # "smoke", "full" or "auto" (full when its results exist)
tau = 0.9  # HiDe's threshold (the paper's value)
taus = [0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99]
num_components = 6  # leading components shown in the η² tables
sweep_repeats = 10  # pairs of disjoint sub-batches per batch size
noise_repeats = 20  # random mixed batches for the content comparison's noise
seed = 0

# %%
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from paperlib.analysis import readings
from paperlib.analysis.components import (
    FACTORS,
    angles_to_batch,
    batch_size_sweep,
    chance_correlation_ratio,
    component_scores,
    content_batches,
    disjoint_pair_angles,
    explained_variance_ratio,
    factor_correlations,
    factor_value_names,
    followed_factor,
    kept_and_dropped_correlations,
    kept_factors_by_batch,
    random_subspace_angle,
    world_factors,
)
from paperlib.analysis.readings import hide as read
from paperlib.figures import (
    batch_content_panels,
    batch_size_panels,
    eta_heatmaps,
    group_scatters,
    kept_dropped_panels,
    save,
    spectrum_panels,
    use_style,
)
from paperlib.losses.himo import hide
from paperlib.study.plan.design import EVAL_SEED, PRETRAIN
from paperlib.study.report.decided import available_scale
from paperlib.study.results.reader import HIMO_COLORS, HIMO_MODELS, load_embeddings

# %%
use_style()
pd.set_option("display.float_format", "{:.3f}".format)
scale = available_scale(scale, study="himo")
BASE = HIMO_MODELS[PRETRAIN]  # the short-caption pre-training the three fine-tunes start from
text = {  # tower -> (N, d) held-out caption features, seed-0 run
    label: load_embeddings(scale, "himo", variant)["caption"].double()
    for variant, label in HIMO_MODELS.items()
}
n, dim = text["MoLo"].shape
factors = world_factors(EVAL_SEED, n)  # the ground truth of each caption's scene
print(f"study scale: {scale}; {n} held-out captions, text features of dimension {dim}, seed 0")

# %% [markdown]
# ## 1. HiDe in three steps
#
# For a batch of $N$ L2-normalised text features $u_i \in \mathbb{R}^d$:
#
# 1. **centre**: $\bar u = \frac1N \sum_{j=1}^N u_j$ and $\hat u_i = u_i - \bar u$;
# 2. **decompose**: the SVD $\hat U = [\hat u_1, \dots, \hat u_N]^\top = W S V^\top$ gives the
#    share of the batch's variance along the $j$-th principal direction $v_j$,
#    $r_j = S_j^2 / \sum_l S_l^2$, and HiDe keeps the smallest number of directions whose
#    cumulative share reaches the threshold τ,
#    $m = \min\{ m' : \sum_{j \le m'} r_j \ge \tau \}$, $P = [v_1, \dots, v_m]^\top$;
# 3. **reconstruct**: $u_i' = P^\top P\, \hat u_i + \bar u$.
#
# $P^\top P$ is the orthogonal projector onto the kept subspace, so every feature splits into a
# kept and a dropped part, $u_i = \underbrace{\bar u + P^\top P \hat u_i}_{u_i'} +
# \underbrace{(I - P^\top P)\hat u_i}_{r_i}$, with $r_i \perp P^\top P \hat u_i$. MoLo then trains
# the image to match $u_i'$ as well as $u_i$. The cell computes the three steps on the MoLo tower's
# captions and checks them against `paperlib.losses.himo.hide`, whose fast path reaches the same
# $u'$ through an eigendecomposition of the smaller Gram matrix.

# %%
u = text["MoLo"]  # (N, d)
u_bar = u.mean(dim=0)  # 1. centre
u_hat = u - u_bar
_, S, Vt = torch.linalg.svd(u_hat, full_matrices=False)  # 2. decompose
r = S**2 / (S**2).sum()  # each direction's share of the variance
m = int((r.cumsum(0) < tau).sum()) + 1  # the τ cut: the smallest m with Σ_{j≤m} r_j ≥ τ
P = Vt[:m]  # (m, d): the kept directions
u_prime = u_hat @ P.T @ P + u_bar  # 3. reconstruct
fast = hide(u, tau)  # the library: an eigendecomposition of the smaller Gram matrix
assert m == fast.m and torch.allclose(u_prime, fast.features, atol=1e-10)
read.hide_steps(n, len(S), m, float(r[:m].sum()), tau)

# %% [markdown]
# ## 2. The explained-variance spectrum and the τ cut
#
# The same shares $r_j$ for every tower. Left: the share of each direction (log scale); right:
# the cumulative share, where HiDe's $m$ is the first point on or above the dashed τ line (★).
# A cumulative curve that lies above another holds the variance in fewer directions. The table
# gives m at other thresholds.

# %%
spectra = {label: explained_variance_ratio(features) for label, features in text.items()}
counts = {t: {label: hide(f, t).m for label, f in text.items()} for t in taus}  # m at each τ
save(spectrum_panels(spectra, counts[tau], tau, HIMO_COLORS), "hide_spectrum")
display(pd.DataFrame(counts.values(), index=[f"τ = {t}" for t in taus]).rename_axis("m kept"))
cumulative = {label: np.cumsum(shares) for label, shares in spectra.items()}
spectrum = read.spectrum(counts, cumulative, tau, BASE, n)
spectrum

# %% [markdown]
# ## 3. Which semantic factors do the leading components follow?
#
# The world's ground truth gives, for each caption, the main object's super-category, category,
# sub-category, colour, pattern and size, the number of objects and the background colour. For the
# score $z_{ij} = v_j \cdot \hat u_i$ of caption $i$ on component $j$ and a factor with groups $g$,
# the **correlation ratio**
#
# $$\eta^2_j = \frac{\sum_g N_g (\bar z_{gj} - \bar z_j)^2}{\sum_i (z_{ij} - \bar z_j)^2}$$
#
# is the share of the component's variance explained by the factor (1: the score is a function of
# the factor). A factor with $k$ groups reaches $\eta^2 = (k-1)/(N-1)$ *by chance*, so each row
# label gives that level: a factor with many small groups (24 sub-categories) needs a much larger
# η² to mean anything than one with four. The cell computes η² of MoLo's PC1 with the
# super-category by the formula, then the library's table for every tower, component and factor.

# %%
z = (u_hat @ Vt[0]).numpy()  # each caption's score on PC1 (section 1's SVD)
groups = factors["super-category"]
between = sum(
    (groups == g).sum() * (z[groups == g].mean() - z.mean()) ** 2 for g in np.unique(groups)
)
eta2 = between / ((z - z.mean()) ** 2).sum()
eta = {  # tower -> (factors, components) table of η²
    label: factor_correlations(component_scores(f, hide(f, tau, fixed_m=num_components)), factors)
    for label, f in text.items()
}
assert np.isclose(eta2, eta["MoLo"][FACTORS.index("super-category"), 0])
rows = [f"{f} (chance {chance_correlation_ratio(factors[f]):.2f})" for f in FACTORS]
save(eta_heatmaps(eta, rows), "hide_component_semantics")
followed = {label: [followed_factor(column) for column in table.T] for label, table in eta.items()}
pd.DataFrame(followed, index=[f"PC{j + 1}" for j in range(num_components)]).T

# %% [markdown]
# Read each column from the top: the paper predicts that the first components follow the coarse
# taxonomy (super-category, category) and the later ones finer attributes. The three taxonomy
# levels are nested — every sub-category lies in one category, every category in one
# super-category — so a component's η² can only grow from the super-category to the
# sub-category, and the finest level would always be the factor a component "follows most". The
# table above therefore names, for each component, the coarsest taxonomy level that explains at
# least half of its variance (η² ≥ 0.5); where no level does, the other factor that does; and –
# where no factor does. In the generated world the *first sentence* of every caption names two
# things — the main object's super-category and the background colour — so both are candidates
# for "the high-level semantics"; which one the text tower turns into variance is an empirical
# question. A scatter of MoLo's first two component scores, coloured by each, shows it.

# %%
scores = component_scores(u, hide(u, fixed_m=2))
named = ("super-category", "background")  # what every caption's first sentence names
panels = {name: (factors[name], factor_value_names(name)) for name in named}
_ = save(group_scatters(scores, panels, "MoLo captions"), "hide_component_scatter")
components = read.components(eta, followed, FACTORS, BASE)
components

# %% [markdown]
# ## 4. What the reconstruction $u'$ keeps and drops
#
# Split each centred feature into its kept part $P^\top P \hat u_i = u_i' - \bar u$ and its dropped
# part $r_i = u_i - u_i'$. The parts are orthogonal, so their variances add up to the batch's, and
# the dropped part holds $1 - \sum_{j \le m} r_j \le 1 - \tau$ of it. For each factor, the pooled
# $\eta^2$ (between-group over total sum of squares, summed over the $d$ coordinates) says which
# share of each part's variance the factor explains: a factor the kept part carries is what MoLo's
# component term asks the image to match; one whose variance sits in the dropped part is what
# HiDe throws away. The median cosine between $u$ and $u'$ says how close the component vector
# stays to the full caption ($u'$ is not re-normalised, as in the reference code). Factors that
# explain under a tenth of both parts in every tower are left out of the reading.

# %%
dropped_share = float(((u - u_prime) ** 2).sum() / (u_hat**2).sum())  # section 1's MoLo batch
split = {label: kept_and_dropped_correlations(f, factors, tau) for label, f in text.items()}
chance = [chance_correlation_ratio(factors[f]) for f in FACTORS]
save(kept_dropped_panels(split, FACTORS, chance, counts[tau]), "hide_kept_dropped")
kept_eta = pd.DataFrame({label: pair[0] for label, pair in split.items()}, index=FACTORS).T
dropped_eta = pd.DataFrame({label: pair[1] for label, pair in split.items()}, index=FACTORS).T
display(pd.concat({"kept u'−ū": kept_eta, "dropped u−u'": dropped_eta}, axis=1).T)
median_cos = {
    label: float(torch.cosine_similarity(f, hide(f, tau).features, dim=-1).median())
    for label, f in text.items()
}
kept_dropped = read.kept_dropped(kept_eta, dropped_eta, median_cos, tau, dropped_share)
kept_dropped

# %% [markdown]
# ## 5. The batch's content: one super-category vs a mixed batch
#
# HiDe is "context adaptive": its components are those of the batch at hand. To see it, run HiDe
# on batches that hold a single super-category (all round shapes, all polygons, …) and on mixed
# batches of the same size, then compare what each kept subspace carries and how far apart the
# subspaces lie.
#
# A fair comparison has two traps. The labels are nested: in a mixed batch much of the category's
# variance is super-category variance, which a one-super-category batch cannot hold at all; and
# every factor's share of a mixed batch's variance is diluted by the super-category's. So each
# factor is read *within the super-category* in every batch: of the kept part's variance that the
# super-category means leave, the share the factor explains (the partial η², equal to the plain
# η² in a one-super-category batch), adjusted for chance,
# $\varepsilon^2 = 1 - (1-\eta^2)\frac{N-k_0}{N-k}$ ($k$ the factor's groups within the
# super-categories, $k_0$ the super-categories; 0 = chance). The mixed side is the mean over
# random mixed batches, whose spread is the noise of a difference. The angles are read against
# the angles between two disjoint random mixed batches of the same size: what sampling alone
# moves.

# %%
supers = factors["super-category"]
batches = content_batches(supers, factor_value_names("super-category"), seed)  # + one mixed
size, m_mix = len(batches["mixed"]), hide(u[batches["mixed"]], tau).m
draw = np.random.default_rng(seed + 1)
mixed = {r: draw.choice(n, size, replace=False) for r in range(noise_repeats)}
names = ["category", "sub-category", "main colour", "main pattern", "background"]
within = {f: factors[f] for f in names}  # each read within the super-category
single = {name: rows for name, rows in batches.items() if name != "mixed"}
kept_single = pd.DataFrame(kept_factors_by_batch(u, single, within, tau, supers), index=names).T
kept_mixed = pd.DataFrame(kept_factors_by_batch(u, mixed, within, tau, supers), index=names).T
angles = angles_to_batch(u, batches, "mixed", m_mix)  # each single batch's subspace to a mixed one
sampling = disjoint_pair_angles(u, size, m_mix, noise_repeats, seed)  # two mixed batches
random_level = random_subspace_angle(dim, m_mix)
figure = batch_content_panels(kept_single, kept_mixed.mean(), angles, sampling.mean(), random_level)
_ = save(figure, "hide_batch_content")

# %% [markdown]
# Each single-super-category batch against the mixed batches, factor by factor (a positive
# difference: the single batch keeps more of the factor within its super-category), with the
# noise standard deviation of such a difference:

# %%
difference = kept_single - kept_mixed.mean()  # single-super-category batch − mixed batches
noise = kept_mixed.std(ddof=1) * np.sqrt(1 + 1 / noise_repeats)  # s.d. of such a difference
display(pd.concat([difference, noise.to_frame("noise s.d.").T]))
expected = ["category", "sub-category"]  # what the paper expects a one-category batch to gain
content = read.batch_content(difference, noise, expected, angles, sampling, random_level)
content

# %% [markdown]
# ## 6. The batch's size: m and the stability of the subspace
#
# The paper's batch-size ablation (1024 best, 512 close) argues that larger batches give more
# stable components. Stability is measured here between batches that share no caption: draw
# $2N$ held-out captions, split them into two disjoint sub-batches of $N$, and take the mean
# principal angle between their top-$m_{ref}$ subspaces ($m_{ref}$ = the whole set's m, so every
# N is compared in the same dimension); left, the m HiDe picks at τ on a sub-batch. Mean ± s.d.
# over draws, up to N = half the held-out set. Were the components of small batches noisy, the
# angle would shrink as N grows: the mechanism behind the paper's preference for large (global)
# batches, and the reason the companion runs HiDe on the **global** batch gathered across ranks
# by default (`scope="global"`, [HiDe's scope](../docs/methods/himo-clip.md#hide-scope)).

# %%
sizes = sorted({s for s in (8, 16, 32, 64, 128, 256) if s <= n // 2} | {n // 2})
sweeps = {
    label: batch_size_sweep(f, sizes, tau, repeats=sweep_repeats, seed=seed)
    for label, f in text.items()
}
_ = save(batch_size_panels(sweeps, tau, HIMO_COLORS), "hide_batch_size")
stability = read.batch_size(sweeps, n)
stability

# %% [markdown]
# ## Summary
#
# What the sections above found at the study scale in use:

# %%
readings.summary([spectrum, components, kept_dropped, content, stability])
