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
# # The aperture failure: why MERU's entailment cones go slack, and ARGENT's fix
#
# MERU and HyCoCLIP embed images and captions on the Lorentz hyperboloid of curvature $-c$
# (only the space part $x\in\mathbb R^d$ is stored;
# [conventions, the Lorentz model](../docs/methods/conventions.md#lorentz-model)) and ask that a
# *parent* (a caption, a box phrase, a box crop) **entail** its *child* (the image it
# describes): the child must lie in a cone that opens outward from the parent. The cone's half
# aperture is
#
# $$\omega(x) = \arcsin\!\Big(\frac{2K}{\sqrt c\,\lVert x\rVert}\Big),\qquad K = 0.1,$$
#
# and the entailment loss penalises the exterior angle $\varphi(x, y)$ (the angle at the parent,
# in the triangle origin–parent–child, between the outward ray and the direction to the child)
# only where it exceeds the aperture, $\mathcal L_{Ent}(x, y) = \max\big(0,\ \varphi(x, y) -
# \eta\,\omega(x)\big)$ (MERU: $\eta = 1$; HyCoCLIP: $\eta = 0.7$ for caption → image and box
# phrase → box crop, $1.2$ for box crop → image and box phrase → caption;
# [ARGENT method page, HyCoCLIP](../docs/methods/argent.md#hycoclip)). The sections below use
# MERU's cone, $\eta = 1$.
#
# The argument of $\arcsin$ exceeds 1 when $\lVert x\rVert < 2K/\sqrt c$: **inside that radius
# the aperture is undefined**. MERU clamps the argument, so the aperture saturates at $\pi/2$ —
# a half-space, not a cone — with zero gradient. ARGENT
# ([method page, the aperture failure](../docs/methods/argent.md#aperture-failure)) argues that
# training drives parents into that ball, where the entailment constraint goes slack, and
# replaces the cone by a penalty on the angle itself plus a norm regularizer.
#
# The notebook follows the argument: (1) the aperture and its domain, (2) its gradient under a
# clamp, (3) the failure in this project's own MERU pre-training log, (4) why the loss drives
# parents inward, at the curvature that training reaches, (5) ARGENT's penalty and weight,
# then the runs from random weights: (6) the budget probe of HyCoCLIP and ARGENT, and (7) the
# study's arms and its claims on held-out parents.

# %% tags=["parameters"]
scale = "auto"  # "smoke", "full" or "auto" (full when its ARGENT study has finished)
curvatures = [0.1, 0.5, 1.0, 2.0]  # c values for the aperture plot
curv = 1.0  # the curvature of sections 1-2: every hyperbolic model starts at c = 1
min_radius = 0.1  # K
child_norm = 0.6  # the fixed child of the "parent on a ray" experiment (section 4)
child_angle = 1.2  # its angle (rad) from the parent's ray, seen from the origin
base_model = "paper-tiny-rn"  # whose hyperbolic pre-training log section 3 reads

# %%
import functools
import json

import matplotlib.pyplot as plt
import numpy as np
import torch
from IPython.display import Markdown, display

from paperlib.analysis.aperture import (
    APERTURE,
    CAPTION_NORM,
    CAPTIONS_INSIDE,
    RADIUS,
    arm_summary,
    curvature_floor,
    last_values,
    paired_difference,
    probe_arms,
    ray_balance,
    track,
)
from paperlib.analysis.hyperbolic import aperture_profile, child_at_angle, pair_losses, per_pair
from paperlib.analysis.readings import aperture as read
from paperlib.analysis.readings import summary
from paperlib.analysis.readings.stand_in import read_from
from paperlib.engine.config import ModelConfig
from paperlib.figures import (
    adaent_panels,
    aperture_gradient_panels,
    assert_values_match_claims,
    claim_range,
    curve_panels,
    half_aperture_curves,
    interval_bars,
    ray_panels,
    save,
    use_style,
    validation_curves,
)
from paperlib.geometry.lorentz import aperture_radius, exterior_angle, half_aperture, paired_dist
from paperlib.losses.entailment import (
    ARGENTConfig,
    MERUConfig,
    adaent_loss,
    adaent_weight,
    entailment_loss,
    norm_regularizer,
)
from paperlib.notebooks import require_range
from paperlib.study.paths import REPO_ROOT, results_dir
from paperlib.study.plan.claims import SMALLER
from paperlib.study.plan.scales import SCALES
from paperlib.study.report.decided import available_scale, item_value, load_claims
from paperlib.study.report.study_paragraph import aperture_paragraph
from paperlib.study.results.reader import ARGENT_COLORS, has_finished_runs, load_curves, seed_logs
from paperlib.train import log_records

for name, value, high in [("curvatures", curvatures, np.inf), ("curv", curv, np.inf),
                          ("min_radius", min_radius, np.inf), ("child_norm", child_norm, np.inf),
                          ("child_angle", child_angle, np.pi)]:  # fmt: skip
    require_range(name, value, 0.0, high)
use_style()
scale = available_scale(scale, study="argent")
meru_config, argent_config = MERUConfig(), ARGENTConfig()
print(f"study scale: {scale}")

# %% [markdown]
# ## 1. The half aperture and its domain
#
# $\omega$ falls from $\pi/2$ at the boundary $\lVert x\rVert = 2K/\sqrt c$ to $0$ as the parent
# moves away from the origin: far parents have narrow cones (they are specific), parents near
# the origin wide ones (they are generic). Below the boundary the argument of $\arcsin$ exceeds 1
# and there is no cone; the cell writes $\pi/2$ there, what a clamp at 1 returns, and checks the
# formula against `paperlib.geometry.lorentz.half_aperture` where the cone exists.

# %%
norms = torch.linspace(1e-3, 1.5, 3000, dtype=torch.float64)
on_axis = torch.stack([norms, torch.zeros_like(norms)], dim=-1)  # parents r·e₁
radii = {c: 2 * min_radius / c**0.5 for c in curvatures}  # 2K/√c
apertures = {c: torch.asin((2 * min_radius / (c**0.5 * norms)).clamp(max=1.0)) for c in curvatures}
library = {c: half_aperture(on_axis, c, min_radius, asin_margin=0.0) for c in curvatures}
outside = {c: norms > radii[c] for c in curvatures}  # where the cone exists
assert all(
    radii[c] == aperture_radius(c, min_radius)
    and torch.allclose(apertures[c][outside[c]], library[c][outside[c]])
    for c in curvatures
)
_ = save(half_aperture_curves(norms, apertures, radii, min_radius), "aperture_half_aperture")
plt.show()
read.domain(radii)

# %% [markdown]
# ## 2. The clamp and its gradient: a spike at the boundary, nothing inside
#
# Outside the boundary, with $r = \lVert x\rVert$ and $r_0 = 2K/\sqrt c$,
#
# $$\frac{\partial\omega}{\partial r} = -\frac{r_0}{r\sqrt{r^2 - r_0^2}}
#   \;\approx\; -\frac{1}{\sqrt{2 r_0}}\,(r - r_0)^{-1/2}\quad (r\downarrow r_0),$$
#
# which diverges. The cell differentiates three versions by autograd, at distances ("gaps")
# from $10^{-9}$ to 1 outside the boundary: **exact** (float64, no clamp); **MERU's clamp** of the
# $\arcsin$ argument to $1 - 10^{-8}$ in float32, where $1 - 10^{-8}$ rounds to $1$, so the
# clamp does nothing and only float32's spacing bounds the gradient; and **this project's**
# clamp at $1 - 10^{-4}$ (`half_aperture`'s default), which bounds it just outside the boundary.
# Inside the boundary every version is constant, so its gradient is zero. The exact version is
# checked against the formula, each version against `paperlib.analysis.hyperbolic.aperture_profile`
# (the library's half aperture, differentiated the same way).

# %%
r0 = 2 * min_radius / curv**0.5
gap = torch.logspace(-9, 0, 400, dtype=torch.float64)  # r − r0, outside the boundary
inside = r0 * torch.linspace(0.01, 0.99, 50, dtype=torch.float64)  # norms inside it
zoom = torch.linspace(0.5 * r0, 2 * r0, 2000, dtype=torch.float64)  # the left panel's norms
versions = {"exact (float64)": (torch.float64, 0.0), "MERU's clamp 1e-8 (float32)":
            (torch.float32, 1e-8), "ours, clamp 1e-4 (float32)": (torch.float32, 1e-4)}  # fmt: skip
omegas, grads, library = {}, {}, {}
for label, (dtype, margin) in versions.items():
    r = torch.cat([r0 + gap, inside, zoom]).to(dtype).requires_grad_(True)
    omegas[label] = torch.asin((2 * min_radius / (curv**0.5 * r)).clamp(max=1 - margin))
    (grads[label],) = torch.autograd.grad(omegas[label].sum(), r)  # ∂ω/∂r
    library[label] = aperture_profile(r.detach(), curv, min_radius, margin)[1]
exact = -r0 / ((r0 + gap) * torch.sqrt((r0 + gap) ** 2 - r0**2))  # the formula, outside
assert torch.allclose(grads["exact (float64)"][: len(gap)], exact) and all(
    torch.allclose(grads[label], library[label]) for label in versions
)

# %% [markdown]
# Left: each version's half aperture near the boundary (shaded: no cone); right: the size of its
# gradient against the gap, on log–log axes, at the gaps each dtype can resolve.

# %%
n = len(gap)
profiles = {label: (omegas[label][-len(zoom) :].detach(), (r0 + gap).to(d).double() - r0,
                    grads[label][:n]) for label, (d, _) in versions.items()}  # fmt: skip
_ = save(aperture_gradient_panels(zoom, profiles, r0, curv), "aperture_gradient")

# %% [markdown]
# The right panel's curves follow the formula down to the gap where float32 can no longer
# resolve $r - r_0$; each ends at a dot, its largest gradient. The reading below takes the
# largest gradient of each version, the largest one inside the radius and the slope of the
# exact gradient on log–log axes over the gaps below $10^{-6}$:

# %%
peaks = {label: float(grad.abs().max()) for label, (_, _, grad) in profiles.items()}
inside_max = max(float(g[n : n + len(inside)].abs().max()) for g in grads.values())
small = gap < 1e-6
slope = float(np.polyfit(np.log(gap[small].numpy()), np.log(exact[small].abs().numpy()), 1)[0])
read.gradient(peaks, inside_max, slope, r0, curv)

# %% [markdown]
# ## 3. The failure in a training log: MERU trained from random weights
#
# The ARGENT study's hyperbolic bases (`results/bases-hyperbolic/`, the reference level of its
# claims) are MERU models trained by `paperlib.study.run.pretrain` from random weights on the
# world's short captions, at curvature $c = 1$ to start, learned
# ([ARGENT method page, MERU](../docs/methods/argent.md#meru)). Their training logs record every
# 400 steps, on the batch at hand, the learned curvature, the mean caption norm, the radius
# $2K/\sqrt c$, the share of captions (the parents) inside it, their mean half aperture, and the
# entailment loss. Sections 1–2 predict what to look for: if the captions cross the radius, their
# aperture pins at $\pi/2$ and the entailment loss goes slack. The dotted lines are the radius of
# each base (middle left) and the curvature's lower clamp (left), $c_0/10$: MERU bounds the
# learned curvature to $[c_0/10,\ 10\,c_0]$.

# %%
folder = REPO_ROOT / "results" / "bases-hyperbolic"
logs = {f"base {b}": track(log_records(folder / f"{base_model}-base{b}.log.jsonl")) for b in (0, 1)}
c_start = ModelConfig(name=base_model).curv_init  # where every hyperbolic run starts
floor = curvature_floor(c_start)  # c0 / 10
panels = {"learned curvature c": "curv", "mean caption norm": CAPTION_NORM,
          "captions inside 2K/√c": CAPTIONS_INSIDE, "entailment loss": "entailment"}  # fmt: skip
lines = {
    title: {b: (t.steps, t.values[key]) for b, t in logs.items()} for title, key in panels.items()
}
references = {
    "learned curvature c": {"clamp c₀/10": (logs["base 0"].steps, np.full(len(logs["base 0"].steps), floor))},
    "mean caption norm": {f"2K/√c, {b}": (t.steps, t.values[RADIUS]) for b, t in logs.items()},
}  # fmt: skip
figure = curve_panels(lines, {title: title for title in panels}, references)
_ = save(figure, "aperture_base_pretraining")

# %% [markdown]
# The reading compares each base's first and last diagnostic, and finds the step at which the
# curvature reaches its clamp and the step from which most captions are inside the radius:

# %%
bases = json.loads((folder / "bases.json").read_text())
steps = next(b["steps"] for b in bases["bases"] if b["model"] == base_model)
pretraining = read.pretraining(logs, floor, steps)
pretraining

# %% [markdown]
# ## 4. Why the loss drives parents inward: a parent on a ray
#
# Put a parent on a ray, $x = r\,e_1$, and keep a child $y$ fixed. As $r$ shrinks the exterior
# angle $\varphi$ shrinks (seen from a parent near the origin, the child lies almost straight
# "outward") and the aperture $\omega$ grows. Both lower $\mathcal L_{Ent}$, so its slope along
# the ray, $\partial\mathcal L_{Ent}/\partial r$, is positive wherever the loss is active:
# gradient descent moves the parent toward the origin, until the child enters the cone or the
# parent crosses $2K/\sqrt c$, inside which the aperture is pinned at $\pi/2$ and nothing pushes
# it back out.
#
# ARGENT's **AdaEnt** penalises $\varphi$ itself through a Huber function at $\beta$,
# $\ell_\beta(\varphi) = \varphi^2/(2\beta)$ below $\beta$ and $\varphi - \beta/2$ above
# ([method page, AdaEnt](../docs/methods/argent.md#adaent)). Because $\varphi$ also shrinks as
# the parent moves in, AdaEnt alone pulls parents inward too, at every norm; the **norm
# regularizer** $\mathcal L_{Reg}(x) = \lVert x\rVert^2 - \log\lVert x\rVert$ (minimum at
# $1/\sqrt2$; [method page](../docs/methods/argent.md#norm-regularizer)) holds them out, and
# the sum $\gamma_1\mathcal L_{AdaEnt} + \gamma_2\mathcal L_{Reg}$ has a balance point where its
# slope is zero. Where that point lies against the radius depends on the curvature, so the cell
# computes it at the curvature the bases end at (section 3) and at the one every run starts at,
# each loss by its formula, checked against `paperlib.losses.entailment`. The contrastive
# term, which also moves parents, is left out of this picture.

# %%
c_end = float(np.mean([t.last("curv") for t in logs.values()]))  # where the bases end
r = torch.linspace(0.01, 1.5, 600, dtype=torch.float64).requires_grad_(True)
parent = torch.stack([r, torch.zeros_like(r)], dim=-1)  # x = r·e₁
direction = torch.tensor([np.cos(child_angle), np.sin(child_angle)], dtype=torch.float64)
child = (child_norm * direction).expand_as(parent)
beta, losses = argent_config.adaent_beta, {}
for c in (c_end, c_start):
    phi = exterior_angle(parent, child, c)  # the library's exterior angle φ(x, y)
    omega = torch.asin((2 * min_radius / (c**0.5 * r)).clamp(max=1 - 1e-4))
    hinge = torch.relu(phi - omega)  # MERU: max(0, φ − ω)
    huber = torch.where(phi < beta, phi**2 / (2 * beta), phi - beta / 2)  # AdaEnt: ℓ_β(φ)
    losses[c] = {"φ": phi, "ω": omega, "hinge": hinge, "huber": huber, "reg": r**2 - torch.log(r)}
library = {c: pair_losses(parent.detach(), child, c, beta) for c in losses}
assert all(torch.allclose(losses[c][k], v) for c in losses for k, v in library[c].items())

# %% [markdown]
# The slopes, weighted as the objectives weight them (MERU: $0.2\cdot\mathcal L_{Ent}$; ARGENT:
# $\gamma_1 = \gamma_2 = 0.1$), at the curvature the bases end at. Left: the exterior angle and
# the half aperture along the ray; right: each slope, clipped to ±3 (MERU's spike at the boundary
# goes far higher), with the balance point of ARGENT's sum; shaded: inside the radius. The
# reading below takes, at both curvatures, where MERU's hinge is active, the signs of the slopes
# and the balance point.

# %%
weights = {"hinge": meru_config.entail_weight, "huber": argent_config.gamma1,
           "reg": argent_config.gamma2}  # fmt: skip
slopes, balance = {}, {}
for c, values in losses.items():  # each weighted slope along the ray, by autograd
    slopes[c] = {k: w * torch.autograd.grad(values[k].sum(), r, retain_graph=True)[0]
                 for k, w in weights.items()}  # fmt: skip
    balance[c] = ray_balance(r.detach(), values["hinge"].detach(), slopes[c], aperture_radius(c))
end, shown, w = balance[c_end], slopes[c_end], weights
angles = {f"{name} {k}": losses[c_end][k].detach() for k, name in
          (("φ", "exterior angle"), ("ω", "half aperture"))}  # fmt: skip
lines = {f"MERU: {w['hinge']:g}·L_Ent": shown["hinge"], f"{w['huber']:g}·L_AdaEnt": shown["huber"],
         f"{w['huber']:g}·L_AdaEnt + {w['reg']:g}·L_Reg": shown["huber"] + shown["reg"]}  # fmt: skip
_ = save(ray_panels(r.detach(), angles, lines, end["stationary"], end["r0"]), "aperture_ray")

# %%
read.ray(balance, c_end, c_start)

# %% [markdown]
# ## 5. ARGENT's fix: penalise the angle, weight intra-modality pairs by distance
#
# AdaEnt drops the aperture: its penalty $\ell_\beta(\varphi)$ depends on the angle alone, the
# same for every parent norm, and is positive for every angle above zero. Each pair's penalty is
# multiplied by a weight $h$: 1 for inter-modality pairs (caption → image), and
# $h = 1 - e^{-d_L(x, y)}$ for intra-modality pairs (box crop → image, box phrase → caption;
# [method page, the weights](../docs/methods/argent.md#adaptive-weights)): a crop that covers
# nearly the whole image is nearly the image itself, its distance is small and so is its
# weight. The paper's equation (7) is unreadable in our copy; the placement of $h$ (outside the
# Huber function), the mean over pairs and $\beta = 0.1$ are this project's choices
# (`ARGENTConfig.adaent_*`).
#
# The cell builds pairs whose exterior angle is known exactly (`child_at_angle`) for parents
# inside and outside the radius at the curvature the bases end at, computes the Huber penalty and
# the weight by their formulas and checks both against `paperlib.losses.entailment`; MERU's hinge
# on the same pairs is the library's.

# %%
r0_end = aperture_radius(c_end, min_radius)
angles = torch.linspace(0, np.pi - 1e-3, 300, dtype=torch.float64)
pairs = {n: child_at_angle(n, angles, 0.3, c_end) for n in (0.5 * r0_end, 1.5 * r0_end, 3 * r0_end)}
huber = {b: torch.where(angles < b, angles**2 / (2 * b), angles - b / 2) for b in (beta, 0.5)}
hinge = {
    n: per_pair(functools.partial(entailment_loss, curv=c_end), *pair) for n, pair in pairs.items()
}
distances = torch.linspace(0, 5, 200, dtype=torch.float64)
crop, image = child_at_angle(0.5, 0.0, distances, c_end)  # pairs at known distances
h = 1 - torch.exp(-paired_dist(crop, image, c_end))  # the intra-modality weight
ada = functools.partial(adaent_loss, curv=c_end, beta=beta)
assert all(torch.allclose(huber[beta], per_pair(ada, *pair)) for pair in pairs.values()) and (
    torch.allclose(h, adaent_weight(crop, image, c_end, intra=True).double())
)
_ = save(adaent_panels(angles, huber, hinge, r0_end, distances, h, c_end), "aperture_adaent")

# %% [markdown]
# Left: the penalty against the angle (AdaEnt's the same for every parent norm, MERU's hinge for
# three parents); right: the weight against the distance. The reading takes the smallest angle
# MERU's hinge penalises for the parent inside the radius, and the weight's range:

# %%
inside_norm = min(hinge)
hinge_free = float(angles[hinge[inside_norm] > 0].min())
read.adaent(
    True, list(pairs), r0_end, hinge_free, (float(h[0]), float(h[-1])), float(distances[-1])
)

# %% [markdown]
# ## 6. From random weights: HyCoCLIP and ARGENT in the budget probe
#
# ARGENT's paper trains every model from scratch. Before the study's runs, a probe trained
# HyCoCLIP and ARGENT that way at the bases' recipe (`scripts/scratch_budget_probe.py`, its
# record `results/probes/scratch_budget.json`), one seed each, validating every 400 steps on
# held-out captions: the share inside $2K/\sqrt c$ (at the curvature the run has reached) and
# their mean norm. It is the evidence this project has at full scale before the study's runs
# finish. Left: the share inside; middle: the mean norm against each arm's radius (dotted);
# right: the learned curvature against its clamp.

# %%
record = json.loads((REPO_ROOT / "results" / "probes" / "scratch_budget.json").read_text())
arms = probe_arms(record)
radius_at = {f"2K/√c, {name}": (a.steps, [aperture_radius(a.curv_at(s)) for s in a.steps])
             for name, a in arms.items()}  # fmt: skip
lines = {
    "held-out captions inside 2K/√c": {name: (a.steps, a.inside) for name, a in arms.items()},
    "held-out mean caption norm": {name: (a.steps, a.norm) for name, a in arms.items()},
    "learned curvature c": {name: (a.curv_steps, a.curv) for name, a in arms.items()},
}
clamp = {"clamp c₀/10": ([0, max(a.curv_steps[-1] for a in arms.values())], [floor, floor])}
references = {"held-out mean caption norm": radius_at, "learned curvature c": clamp}
figure = curve_panels(lines, {t: t for t in lines}, references, ARGENT_COLORS)
_ = save(figure, "aperture_budget_probe")

# %%
budget = SCALES["full"].scratch_steps  # the full study's from-scratch budget
val_size = next(iter(record["arms"].values()))["config"]["train"]["val_size"]
probe_reading = read.probe(arms, budget, floor, val_size)
probe_reading

# %% [markdown]
# ## 7. The study's arms: held-out parents at the end of training
#
# Every arm of the ARGENT study trains from random weights at the bases' recipe, each with its
# own objective and one budget (the study page, `docs/study.md`), and validates its held-out
# parents over training: per kind (captions, box phrases, box crops) the share inside
# $2K/\sqrt c$ at the curvature the run has reached, and their mean norm. The figure shows each
# share over training (seeds thin, their mean thick); the table gives each arm's learned
# curvature and its held-out captions at the last validation, as the mean over its seeds with a
# 95 % t interval over seeds (one seed gives none, and a table without intervals is not shown).
# Where the full study has not run these arms, the smoke study stands in, as the line below says.

# %%
STUDY = "argent"
full = load_claims("full") if (results_dir("full") / "claims.json").is_file() else None
source = read_from(scale, full, load_claims("smoke"), STUDY)
source

# %%
arms = [v for v in ARGENT_COLORS if has_finished_runs(scale, STUDY, v)]
validation = [
    c for c in load_curves(scale)["validation"] if c["study"] == STUDY and c["variant"] in arms
]
inside = [c for c in validation if c["metric"].startswith("inside_")]
_ = save(validation_curves(inside, ARGENT_COLORS), "aperture_study_parents")

# %%
rows = {arm: arm_summary(seed_logs(scale, STUDY, arm), validation, arm) for arm in arms}
if read.has_intervals(rows):
    display(read.runs_table(rows))
with_reg, without_reg = f"ARGENT{SMALLER}", f"ARGENT{SMALLER}, no regularizer"
regularizer = (
    (without_reg, with_reg, paired_difference(*(last_values(validation, v, "norm_short") for v in (without_reg, with_reg))))
    if {with_reg, without_reg} <= set(arms) else None
)  # fmt: skip
last_step = max(c["points"][-1]["step"] for c in validation)
study_reading = read.study_runs(rows, last_step, floor, regularizer, scale)
study_reading

# %% [markdown]
# **The claims.** The study tests ARGENT's aperture claims on the held-out world after
# training: per test sample, the share of its three parents (short caption, box phrase, box
# crop) inside the radius (`aperture/parents_inside_radius`), ARGENT against HyCoCLIP and MERU,
# paired by seed. The share has no chance level; a claim counts only when both models learned
# (their short-caption retrieval clears its guard) and the baseline's parents do fall inside
# the radius by at least the claim's smallest effect of interest δ (the premise). Bars: the mean
# over valid seeds; error bars: the claims' 95 % interval (`paperlib.study.decide.inference`), clipped
# to [0, 1]; dots: seeds. The paragraph under the figure is each claim's verdict, from
# `results/<scale>/claims.json`.

# %%
claims = load_claims(scale)
aperture_claims = [c for c in claims["claims"] if c["item"].startswith("aperture/")]
item = aperture_claims[0]["item"]
compared = [
    v for v in ARGENT_COLORS if any(v in (c["variant"], c["baseline"]) for c in aperture_claims)
]
held_out = {
    v: item_value(scale, STUDY, v, item) for v in compared if has_finished_runs(scale, STUDY, v)
}
assert_values_match_claims(aperture_claims, {item: held_out})  # the bars are the claims' values
fig, ax = plt.subplots(figsize=(6, 3.6))
interval_bars(ax, list(held_out), list(held_out.values()), claim_range(aperture_claims[0]),
              colors=[ARGENT_COLORS[v] for v in held_out], ylabel="share of parents inside 2K/√c",
              title=f"held-out parents inside 2K/√c ({scale} study; no chance level)")  # fmt: skip
_ = save(fig, "aperture_held_out")

# %%
Markdown(aperture_paragraph(claims))

# %% [markdown]
# ## What shows
#
# The points of the sections above, each read off its numbers:

# %%
summary([pretraining, probe_reading, source, study_reading])
