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
# # Main tables: the papers' numbers beside this project's CPU-scale study
#
# The published numbers come from one data file, `paperlib/tables/published.json`, each table
# with its source named. This project's numbers come from the results files that the study
# (`python -m paperlib.study`) wrote under `results/<scale>/` — nothing below is typed in.
#
# **What the CPU-scale study is.** Pretrained weights and real datasets cannot be downloaded
# where this project is built, so the study runs both papers' comparisons on the generated
# hierarchical world (`paperlib.data.world`) with a 3.4M-parameter CLIP at 32 px:
#
# * **HiMo-CLIP.** A CLIP is pre-trained on *short* captions (it stands in for OpenAI CLIP), then
#   fine-tuned on *long* captions (248 tokens, Long-CLIP's positions) with global InfoNCE only,
#   or with MoLo (HiDe components, $\mathcal L = \mathcal L_{global} + \lambda\,\mathcal L_{comp}$),
#   with a sweep of $\tau$ and $\lambda$.
# * **ARGENT.** A hyperbolic CLIP is trained with MERU's entailment cone, HyCoCLIP's four-pair
#   cones, ARGENT's adaptive angular entailment with intra-modality weights and the norm
#   regularizer, and ARGENT's ablations.
#
# Differences of scale are large (3.4M vs 428M parameters; minutes of CPU vs days of 8×H100), so
# the question each table answers is narrower than the paper's: *does the direction of each
# claim show up when the mechanism is the only thing that changes?* A result that goes against
# a paper is reported as such.

# %% tags=["parameters"]
scale = "auto"  # "full" (≥ 3 seeds) when its results exist, else "smoke" (1 seed)

# %%
import matplotlib.pyplot as plt
import pandas as pd

from paperlib.analysis.hyperbolic import log_series, seed_logs
from paperlib.figures import bars_with_errors, save, use_style
from paperlib.study import available_scale, load_results
from paperlib.tables import published_table
from paperlib.tables.summary import Column, study_table, values, verdict

use_style()
pd.set_option("display.width", 200, "display.max_columns", 30)
scale = available_scale(scale)
rows = load_results(scale)
seeds = sorted({r["seed"] for r in rows})
print(f"study scale: {scale}; {len(rows)} result rows; seeds {seeds}")

# %% [markdown]
# ## HiMo-CLIP — published (SPEC §1.4)
# Long-text retrieval R@1 (image→text / text→image) on Urban1k, DOCCI and Long-DCI, and
# short-text retrieval on Flickr30k and COCO.

# %%
published, source = published_table("himo_retrieval")
print("source:", source)
pd.DataFrame([
    {"model": f"{r['model']} {r['arch']}",
     **{d: ("–" if r[d] is None else f"{r[d]['i2t_r1']:.1f} / {r[d]['t2i_r1']:.1f}")
        for d in ("Urban1k", "DOCCI", "Long-DCI", "Flickr30k", "COCO")}}
    for r in published
]).set_index("model")

# %%
published, source = published_table("himo_monotonicity")
print("source:", source)
pd.DataFrame([
    {"model": r["model"], "HiMo@2 (avg)": r["himo@2"]["avg"], "HiMo@3 (avg)": r["himo@3"]["avg"],
     "HiMo@K (ρ)": r["himo@K_pearson"], "COLA": r["cola_top1"]}
    for r in published
]).set_index("model")

# %% [markdown]
# ## HiMo-CLIP — this project, CPU scale
# Mean ± standard deviation over seeds (single values when only one seed ran). Retrieval is
# 1:1 over held-out world scenes; HiMo@2/3 are the percentages of images whose score rises
# strictly over 2 / 3 cumulative caption segments; HiMo@K is the mean Pearson ρ between segment
# index and score over all cumulative sentence prefixes; SSI (lower is better) is the mean
# relative change of the image-text score when one irrelevant sentence is injected
# (`paperlib.metrics.monotonicity`); COLA is top-1 accuracy on colour-swapped image pairs.

# %%
HIMO = "himo"
himo_variants = sorted({r["variant"] for r in rows if r["study"] == HIMO},
                       key=lambda v: (not v.startswith("pretrain"), not v.startswith("InfoNCE"), v))
himo_columns = [
    Column("long R@1 I2T", "world-long", "text_retrieval_recall@1", 100),
    Column("long R@1 T2I", "world-long", "image_retrieval_recall@1", 100),
    Column("short R@1 I2T", "world-short", "text_retrieval_recall@1", 100),
    Column("short R@1 T2I", "world-short", "image_retrieval_recall@1", 100),
    Column("HiMo@2", "world-monotonicity", "himo@2"),
    Column("HiMo@3", "world-monotonicity", "himo@3"),
    Column("HiMo@K (ρ)", "world-monotonicity", "himo@k_pearson"),
    Column("SSI ↓", "world-monotonicity", "ssi", higher_is_better=False),
    Column("COLA", "world-cola", "cola_accuracy", 100),
]
study_table(rows, HIMO, himo_variants, himo_columns, digits=2)

# %%
show = [v for v in himo_variants if v.startswith(("pretrain", "InfoNCE", "MoLo (τ=0.9, λ=1)"))]
fig, axes = plt.subplots(1, 4, figsize=(13, 3.4))
for ax, col in zip(axes, [himo_columns[0], himo_columns[5], himo_columns[6], himo_columns[7]]):
    bars_with_errors(ax, [v.split(" (")[0] for v in show], [values(rows, HIMO, v, col) for v in show],
                     ylabel=col.label, title=col.label, colors=["#999999", "#4c72b0", "#dd8452"])
fig.suptitle(f"HiMo-CLIP mechanisms at CPU scale ({scale}, seeds {seeds})")
fig.tight_layout()
save(fig, "tables_himo_study")

# %% [markdown]
# ## ARGENT — published (SPEC §2.4)

# %%
published, source = published_table("argent_main")
print("source:", source)
display_main = pd.DataFrame(published).set_index(["model", "arch"])
display_main

# %%
published, source = published_table("argent_ablations")
print("source:", source)
pd.DataFrame(published).set_index("variant")

# %% [markdown]
# ## ARGENT — this project, CPU scale
# Zero-shot accuracy at the three taxonomy levels of the world (super-category, category,
# sub-category; prompts averaged in the tangent space), text→image R@5 on long captions, PEP
# AUC/AP (`paperlib.metrics.hierarchy`; every chain level of an image is a positive, the finest
# captions of 100 other images with a different root are the negatives), HierarCaps-style
# $d_{corr}$, and the aperture diagnostic: the fraction of caption embeddings (entailment
# parents) inside the radius $2K/\sqrt c$ where the half-aperture is undefined, at the end of
# training.

# %%
ARGENT = "argent"
argent_variants = ["MERU (Ent)", "HyCoCLIP (Ent)", "ARGENT", "ARGENT, no weights",
                   "ARGENT, weights on all pairs", "ARGENT, no regularizer"]
argent_variants = [v for v in argent_variants if any(r["variant"] == v for r in rows)]
argent_columns = [
    Column("zero-shot L1", "world-zeroshot-L1", "acc1", 100),
    Column("zero-shot L2", "world-zeroshot-L2", "acc1", 100),
    Column("zero-shot L3", "world-zeroshot-L3", "acc1", 100),
    Column("R@5 T2I", "world-long", "image_retrieval_recall@5", 100),
    Column("PEP AUC", "world-hierarchy", "pep_auc", 100),
    Column("PEP AP", "world-hierarchy", "pep_ap", 100),
    Column("d_corr", "world-hierarchy", "d_corr"),
]
table = study_table(rows, ARGENT, argent_variants, argent_columns)
INSIDE = "diag/text->image/frac_parent_inside_radius"
# per variant and seed: % of caption parents inside the undefined-aperture radius at the last
# diagnostic of training
aperture = {
    v: [100 * log_series(log, INSIDE)[1][-1] for log in seed_logs(scale, ARGENT, v).values()]
    for v in argent_variants
}
table["parents inside 2K/√c (%)"] = [f"{pd.Series(aperture[v]).mean():.1f}" for v in argent_variants]
table

# %%
fig, axes = plt.subplots(1, 4, figsize=(14, 3.6))
short = [v.replace("ARGENT, ", "").replace(" (Ent)", "") for v in argent_variants]
for ax, col in zip(axes, [argent_columns[2], argent_columns[3], argent_columns[4], argent_columns[5]]):
    bars_with_errors(ax, short, [values(rows, ARGENT, v, col) for v in argent_variants],
                     ylabel=f"{col.label} (%)", title=col.label)
fig.suptitle(f"ARGENT and its ablations at CPU scale ({scale}, seeds {seeds})")
fig.tight_layout()
save(fig, "tables_argent_study")

# %% [markdown]
# ## Which claims reproduce at this scale
# Each claim is checked on the per-seed values: **reproduces** when the mean difference has the
# paper's sign and exceeds the standard error of the difference, **contradicts** when it
# exceeds it with the opposite sign, **inconclusive** otherwise. With a single seed (the smoke
# scale) only the sign is shown.

# %%
def col(columns, label):
    return next(c for c in columns if c.label == label)


def claim(paper, text, study, columns, label, candidate, baseline):
    c = col(columns, label)
    a, b = values(rows, study, candidate, c), values(rows, study, baseline, c)
    return {"paper": paper, "claim": text, "metric": label,
            "candidate": f"{pd.Series(a).mean():.2f}" if a else "–",
            "baseline": f"{pd.Series(b).mean():.2f}" if b else "–",
            "verdict": verdict(a, b, c.higher_is_better)}


molo, infonce = "MoLo (τ=0.9, λ=1)", "InfoNCE (long captions)"
claims = [
    claim("HiMo", "MoLo beats InfoNCE on long-text retrieval", HIMO, himo_columns, "long R@1 T2I", molo, infonce),
    claim("HiMo", "MoLo beats InfoNCE on long-text retrieval", HIMO, himo_columns, "long R@1 I2T", molo, infonce),
    claim("HiMo", "MoLo keeps short-text retrieval", HIMO, himo_columns, "short R@1 T2I", molo, infonce),
    claim("HiMo", "MoLo is more monotone (HiMo@2)", HIMO, himo_columns, "HiMo@2", molo, infonce),
    claim("HiMo", "MoLo is more monotone (HiMo@3)", HIMO, himo_columns, "HiMo@3", molo, infonce),
    claim("HiMo", "MoLo is more monotone (HiMo@K)", HIMO, himo_columns, "HiMo@K (ρ)", molo, infonce),
    claim("HiMo", "MoLo is more robust to noise (SSI)", HIMO, himo_columns, "SSI ↓", molo, infonce),
    claim("HiMo", "MoLo composes better (COLA)", HIMO, himo_columns, "COLA", molo, infonce),
]
for other in ("MoLo (τ=0.8, λ=1)", "MoLo (τ=0.95, λ=1)", "MoLo (τ=0.9, λ=0.5)", "MoLo (τ=0.9, λ=2)"):
    if other in himo_variants:
        claims.append(claim("HiMo", f"τ=0.9, λ=1 beats {other.split(' ', 1)[1]}", HIMO,
                            himo_columns, "long R@1 T2I", molo, other))
claims += [
    claim("ARGENT", "ARGENT beats HyCoCLIP on zero-shot", ARGENT, argent_columns, "zero-shot L3", "ARGENT", "HyCoCLIP (Ent)"),
    claim("ARGENT", "ARGENT beats HyCoCLIP on R@5", ARGENT, argent_columns, "R@5 T2I", "ARGENT", "HyCoCLIP (Ent)"),
    claim("ARGENT", "ARGENT beats HyCoCLIP on PEP AUC", ARGENT, argent_columns, "PEP AUC", "ARGENT", "HyCoCLIP (Ent)"),
    claim("ARGENT", "ARGENT beats HyCoCLIP on PEP AP", ARGENT, argent_columns, "PEP AP", "ARGENT", "HyCoCLIP (Ent)"),
    claim("ARGENT", "intra weights beat no weights (PEP AUC)", ARGENT, argent_columns, "PEP AUC", "ARGENT", "ARGENT, no weights"),
    claim("ARGENT", "intra weights beat weights on all pairs (PEP AUC)", ARGENT, argent_columns, "PEP AUC", "ARGENT", "ARGENT, weights on all pairs"),
    claim("ARGENT", "the regularizer helps zero-shot", ARGENT, argent_columns, "zero-shot L3", "ARGENT", "ARGENT, no regularizer"),
]
claims_table = pd.DataFrame(claims)
claims_table

# %%
aperture_claim = verdict(aperture.get("ARGENT", []), aperture.get("HyCoCLIP (Ent)", []),
                         higher_is_better=False)
print("ARGENT keeps fewer parents inside the undefined-aperture radius than HyCoCLIP:", aperture_claim)
print(claims_table["verdict"].value_counts().to_string())
