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
# with its source named. This project's numbers come from the files that the study
# (`python -m paperlib.study`) wrote under `results/<scale>/` — nothing below is typed in — and
# the verdicts come from `results/<scale>/claims.json`, where `paperlib.study.decide` decided
# every claim of `paperlib.tables.claims` once, with the rules of `paperlib.tables.verdicts`.
# This notebook renders them; it decides nothing itself.
#
# **What the CPU-scale study is.** Pretrained weights and real datasets cannot be downloaded
# where this project is built, so the study runs both papers' comparisons on the generated
# hierarchical world (`paperlib.data.world`) with an 8.5M-parameter CLIP at 32 px. Per seed, one
# shared pre-training on *short* captions stands in for a pretrained CLIP, and every fine-tune of
# that seed starts from it:
#
# * **HiMo-CLIP.** Fine-tunes on *long* captions (248 tokens, Long-CLIP's positions) with MoLo
#   (HiDe components, $\mathcal L = \mathcal L_{global} + \lambda\,\mathcal L_{comp}$, τ = 0.9,
#   λ = 1), with the same recipe at λ = 0 (`InfoNCE (λ=0)`: the component term is the only
#   difference), and with Long-CLIP's loss; on the sweep seeds also MoLo's batch-size ablation
#   (half and double batch at equal samples seen, as the paper keeps its epochs) and HiDe's scope
#   (PCA on the global batch or on each rank's half, both on 2 gloo ranks).
# * **ARGENT.** Hyperbolic fine-tunes with HyCoCLIP's four-pair cones and with ARGENT (adaptive
#   angular entailment, intra-modality weights, norm regularizer) on every seed; MERU's cone and
#   ARGENT's ablations (no weights, weights on all pairs, no regularizer, Ent instead of AdaEnt)
#   on the sweep seeds. ARGENT's Table 1 is an evaluation claim, tested on the shared
#   pre-training (a Euclidean CLIP, as the paper's CLIP-LFT): hierarchical retrieval precision and
#   recall with and without each image's potentially ambiguous captions (those of its 10 most
#   similar images that are not in its own chain).
#
# Differences of scale are large (8.5M vs 428M parameters; minutes of CPU vs days of 8×H100), so
# the question each claim answers is narrower than the paper's: *does the direction of the claim
# show up when the mechanism is the only thing that changes?* Each claim gets one of four
# verdicts: **reproduces** / **contradicts** when the 95 % interval of the paired effect (seed
# spread + test-set bootstrap) lies on the paper's / the other side of zero, **inconclusive**
# when it contains zero, **untestable** when a model's interval reaches the metric's chance level
# (the models did not learn enough), both reach its best value, or a learning guard fails.

# %% tags=["parameters"]
scale = "auto"  # "full" when its results exist, else "smoke" (1 seed)

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from paperlib.figures import (
    claim_range,
    claims_forest,
    interval_bars,
    learning_curves,
    save,
    use_style,
)
from paperlib.study.decide import report as decide_report
from paperlib.study.reader import (
    ARGENT_COLORS,
    HIMO_COLORS,
    HIMO_MODELS,
    available_scale,
    item_value,
    load_claims,
    load_curves,
    load_results,
    run_info,
    valid_seeds,
)
from paperlib.tables import published_table
from paperlib.tables.summary import Column, study_table
from paperlib.tables.verdicts import (
    VERDICTS,
)

use_style()
pd.set_option("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 80)
scale = available_scale(scale)
rows = load_results(scale)
CLAIMS_FILE = load_claims(scale)
CLAIMS = CLAIMS_FILE["claims"]
assert CLAIMS_FILE["scale"] == scale, (CLAIMS_FILE["scale"], scale)
# the committed verdicts must still follow from the committed results files and the rules
fresh = {c["claim"]: c for c in decide_report(scale)["claims"]}
for c in CLAIMS:
    assert fresh[c["claim"]]["verdict"] == c["verdict"], (
        c["claim"],
        c["verdict"],
        fresh[c["claim"]]["verdict"],
    )
    assert np.allclose(fresh[c["claim"]]["interval"] or [0, 0], c["interval"] or [0, 0]), c["claim"]
assert set(fresh) == {c["claim"] for c in CLAIMS}, "claims.json and the declared claims differ"
seeds = sorted({r["seed"] for r in rows})
print(f"study scale: {scale}; {len(rows)} result rows; seeds {seeds}; {len(CLAIMS)} claims decided")
# the recipe the text above states: MoLo at τ = 0.9, λ = 1; InfoNCE (λ=0) the same with λ = 0
molo, infonce = (run_info(scale, "himo", v)["config"]["loss"] for v in ("MoLo", "InfoNCE (λ=0)"))
assert (molo["tau"], molo["lam"], infonce["lam"]) == (0.9, 1.0, 0.0), (molo, infonce)
assert {k: v for k, v in molo.items() if k != "lam"} == {
    k: v for k, v in infonce.items() if k != "lam"
}


def value_panels(
    study: str, variants: dict[str, str], colors: dict[str, str], name: str, ncols: int = 4
) -> None:
    """One panel per metric the study's claims test: every variant's mean over valid seeds, its
    95 % interval clipped to the metric's range, its seeds, and the chance level."""
    panels = list({c["item"]: c for c in CLAIMS if c["study"] == study}.values())
    shown = [v for v in variants if valid_seeds(scale, study, v)]
    nrows = -(-len(panels) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols, 3.6 * nrows), squeeze=False)
    for ax, c in zip(axes.flat, panels):
        values = [item_value(scale, study, v, c["item"]) for v in shown]
        sides = (
            ("variant_value", c["variant"], c["item"]),
            ("baseline_value", c["baseline"], c.get("baseline_item") or c["item"]),
        )
        for side, variant, item in sides:  # the panel's numbers are the claim's numbers
            mine = item_value(scale, study, variant, item) if variant in shown else None
            if side in c and mine is not None and mine["seeds"] == c["seeds"]:
                assert np.isclose(mine["mean"], c[side]["mean"]), (c["claim"], variant)
        interval_bars(
            ax,
            [variants[v] for v in shown],
            values,
            claim_range(c),
            c["chance"],
            colors=[colors[variants[v]] for v in shown],
            ylabel=c["label"],
            title=c["label"] + ("" if c["chance"] is not None else " (no chance level)"),
        )
        ax.tick_params(axis="x", labelsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    counts = sorted({len(valid_seeds(scale, study, v)) for v in shown})
    fig.suptitle(
        f"{study} study at CPU scale ({scale}; valid seeds per variant: "
        f"{'/'.join(map(str, counts))}; bars: mean, error bars: 95 % interval, dots: "
        "seeds, dashed: chance)"
    )
    fig.tight_layout()
    save(fig, name)


# %% [markdown]
# ## HiMo-CLIP — published (SPEC §1.4)
# Long-text retrieval R@1 (image→text / text→image) on Urban1k, DOCCI and Long-DCI, and
# short-text retrieval on Flickr30k and COCO.

# %%
published, source = published_table("himo_retrieval")
print("source:", source)
pd.DataFrame(
    [
        {
            "model": f"{r['model']} {r['arch']}",
            **{
                d: ("–" if r[d] is None else f"{r[d]['i2t_r1']:.1f} / {r[d]['t2i_r1']:.1f}")
                for d in ("Urban1k", "DOCCI", "Long-DCI", "Flickr30k", "COCO")
            },
        }
        for r in published
    ]
).set_index("model")

# %%
published, source = published_table("himo_monotonicity")
print("source:", source)
pd.DataFrame(
    [
        {
            "model": r["model"],
            "HiMo@2 (avg)": r["himo@2"]["avg"],
            "HiMo@3 (avg)": r["himo@3"]["avg"],
            "HiMo@K (ρ)": r["himo@K_pearson"],
            "COLA": r["cola_top1"],
        }
        for r in published
    ]
).set_index("model")

# %% [markdown]
# ## HiMo-CLIP — this project, CPU scale
# Mean ± standard deviation over seeds from the study's CLIP_benchmark-format results (single
# values when only one seed ran). Retrieval is 1:1 over held-out world scenes; HiMo@2/3 are the
# percentages of images whose score rises strictly over 2 / 3 cumulative caption segments; HiMo@K
# is the mean Pearson ρ between segment index and score over all cumulative sentence prefixes;
# SSI (lower is better) is the mean relative change of the image-text score when one irrelevant
# sentence is injected (`paperlib.metrics.monotonicity`); COLA is top-1 accuracy on
# colour-swapped image pairs.

# %%
HIMO = "himo"
himo_variants = [
    v for v in HIMO_MODELS if any(r["study"] == HIMO and r["variant"] == v for r in rows)
]
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

# %% [markdown]
# The metrics the HiMo-CLIP claims test, per variant, from the per-item results (`items.npz`) of
# every valid seed, with the intervals and chance levels the claims use:

# %%
value_panels(HIMO, HIMO_MODELS, HIMO_COLORS, "tables_himo_study")

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
# sub-category; prompts averaged in the tangent space), text→image R@5 on short captions, PEP
# AUC/AP (`paperlib.metrics.hierarchy`; every chain level of an image is a positive, the finest
# captions of 100 other images with a different root are the negatives), HierarCaps-style
# $d_{corr}$, and the aperture measure: the fraction of held-out short-caption embeddings
# (entailment parents) inside the radius $2K/\sqrt c$ where the half-aperture is undefined.

# %%
ARGENT = "argent"
argent_variants = [
    v for v in ARGENT_COLORS if any(r["study"] == ARGENT and r["variant"] == v for r in rows)
]
argent_columns = [
    Column("zero-shot L1", "world-zeroshot-L1", "acc1", 100),
    Column("zero-shot L2", "world-zeroshot-L2", "acc1", 100),
    Column("zero-shot L3", "world-zeroshot-L3", "acc1", 100),
    Column("R@5 T2I", "world-short", "image_retrieval_recall@5", 100),
    Column("PEP AUC", "world-hierarchy", "pep_auc", 100),
    Column("PEP AP", "world-hierarchy", "pep_ap", 100),
    Column("d_corr", "world-hierarchy", "d_corr"),
]
table = study_table(rows, ARGENT, argent_variants, argent_columns)
APERTURE = "aperture/short_caption_inside_radius"
inside = {v: item_value(scale, ARGENT, v, APERTURE) for v in argent_variants}
table["captions inside 2K/√c (%)"] = [
    "–" if inside[v] is None else f"{100 * inside[v]['mean']:.1f}" for v in argent_variants
]
table

# %%
value_panels(ARGENT, {v: v for v in ARGENT_COLORS}, ARGENT_COLORS, "tables_argent_study", ncols=3)

# %% [markdown]
# ### Model sizes
# The paper compares S, B and L backbones (Table 2): ARGENT's gain over HyCoCLIP at each size,
# and how much a larger model gains. On its sweep seeds the study repeats the HyCoCLIP/ARGENT
# pair with the same ResNet at half the width (`paper-micro-rn`, 2.9M parameters against
# 8.5M), pre-trained on its own with the same recipe. The rows below are claims of
# `claims.json` (the effect and its 95 % interval over seeds and test set), beside the paper's
# differences in points at each of its sizes.


# %%
def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:+.4g}"


def effect_cell(c: dict) -> str:
    """A claim's effect and 95 % interval, as the tables below print it."""
    return (
        "–"
        if c["effect"] is None
        else f"{fmt(c['effect'])} [{fmt(c['interval'][0])}, {fmt(c['interval'][1])}]"
    )


def seeds_cell(c: dict) -> str:
    return f"{len(c['seeds'])}/{c['runs_total']}"


by_claim = {c["claim"]: c for c in CLAIMS}
paper_rows = {(r["model"], r["arch"]): r for r in published_table("argent_main")[0]}
size_claims = {
    "ARGENT − HyCoCLIP, larger model": ("argent-t2i-vs-hycoclip", "argent-pep-vs-hycoclip"),
    "ARGENT − HyCoCLIP, smaller model": (
        "argent-t2i-vs-hycoclip-smaller",
        "argent-pep-vs-hycoclip-smaller",
    ),
    "larger − smaller ARGENT": ("argent-size-t2i", "argent-size-zs-l1"),
}
size_table = pd.DataFrame(
    [
        {
            "comparison": name,
            "metric": by_claim[cid]["label"],
            "verdict": by_claim[cid]["verdict"],
            "effect [95 % interval]": effect_cell(by_claim[cid]),
            "valid/total seeds": seeds_cell(by_claim[cid]),
        }
        for name, ids in size_claims.items()
        for cid in ids
    ]
).set_index(["comparison", "metric"])
paper_gain = pd.DataFrame(
    {
        arch: {
            metric: paper_rows[("ARGENT", arch)][metric] - paper_rows[("HyCoCLIP", arch)][metric]
            for metric in ("imagenet_acc1", "coco_t2i_r5", "pep_auc")
        }
        for arch in "SBL"
    }
)
print("the paper's ARGENT − HyCoCLIP, in points, per size:")
print(paper_gain.round(1).to_string())
size_table

# %% [markdown]
# ## Which claims reproduce at this scale
#
# Every claim of both papers, as `claims.json` records it: the effect is variant − baseline in the
# metric's unit (the paper's direction is `better`), with its 95 % interval; `valid/total seeds`
# counts the seeds where both runs finished and neither collapsed, out of those where both
# finished; `invalid runs` names the runs left out; `why untestable` says which rule applied;
# `baseline headroom` says whether the baseline's mean lies between 3 × chance and 0.9 × the
# metric's best value, so that an effect could show in either direction (n.a. where 3 × chance
# is already beyond that, as for HiMo@2's 50 % or PEP's 0.5, or where there is no chance level).

# %%
claims_table = pd.DataFrame(
    [
        {
            "paper": c["paper"],
            "claim": c["statement"],
            "metric": c["label"],
            "variant vs baseline": f"{c['variant']} vs {c['baseline']}",
            "better": c["better"],
            "verdict": c["verdict"],
            "effect [95 % interval]": effect_cell(c),
            "chance": "none" if c["chance"] is None else f"{c['chance']:.4g}",
            "valid/total seeds": seeds_cell(c),
            "baseline headroom": {True: "yes", False: "no", None: "n.a."}[
                c.get("baseline_headroom")
            ],
            "invalid runs": "; ".join(c["invalid_runs"]) or "–",
            "why untestable": c["reason"] if c["verdict"] == "untestable" else "",
        }
        for c in CLAIMS
    ]
).set_index("claim")
assert set(claims_table["verdict"]) <= set(VERDICTS)
claims_table

# %% [markdown]
# The same claims as a forest plot: each effect turned so that right of zero is the paper's
# direction, with its interval (clipped to the differences the metric allows) and the verdict
# beside it; one panel per unit, since percentages, correlations and fractions share no axis.

# %%
fig = claims_forest(
    CLAIMS, title=f"claims of both papers at CPU scale ({scale} study, {len(seeds)} seed(s))"
)
save(fig, "tables_claims_forest")
plt.show()
for paper in sorted({c["paper"] for c in CLAIMS}):
    counts = pd.Series([c["verdict"] for c in CLAIMS if c["paper"] == paper]).value_counts()
    print(f"{paper}: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS))
reasons = pd.Series([c["reason"].split(" (")[0] for c in CLAIMS if c["verdict"] == "untestable"])
print(
    "untestable, by reason: "
    + (", ".join(f"{n} × {r}" for r, n in reasons.value_counts().items()) or "none")
)
for verdict_name in ("reproduces", "contradicts"):
    named = [f"{c['paper']}: {c['statement']}" for c in CLAIMS if c["verdict"] == verdict_name]
    print(f"\n{verdict_name} ({len(named)}):" + "".join(f"\n  - {n}" for n in named))

# %% [markdown]
# ## Did the models learn? Learning targets and collapsed runs
#
# A claim means little if the models it compares did not learn. The study sets learning targets
# for the base models (medians over the valid runs named) and checks every run for collapse (its
# contrastive loss stuck at $\ln B$, or features that hardly vary). Collapsed runs are left out of
# every claim.

# %%
targets = pd.DataFrame(
    [
        {
            "study": t["study"],
            "variants": ", ".join(t["variants"]),
            "metric": t["metric"],
            "target": t["target"],
            "median": t["median"],
            "runs": t["runs"],
            "met": t["met"],
        }
        for t in CLAIMS_FILE["targets"]
    ]
)
met = int(targets["met"].sum())
print(f"{met} of {len(targets)} learning targets met at the {scale} scale")
if met < len(targets):
    print(
        "where a target is missed, the claims on those models rest on models that did not reach "
        "the intended quality; their verdicts are read with that in mind"
    )
print(
    f"collapsed runs ({len(CLAIMS_FILE['collapsed_runs'])}):"
    + ("".join(f"\n  - {r}" for r in CLAIMS_FILE["collapsed_runs"]) or " none")
)
targets

# %% [markdown]
# ### Metric against CPU time, for every recipe tried
#
# Where a target is missed, the curves below show how far each recipe got for the CPU time it
# spent (`results/<scale>/curves.json`, written by `paperlib.study.curves`): the study's own
# pre-training, MoLo fine-tune and ARGENT fine-tune (seed 0, one point per kept snapshot), and the
# pre-training recipe the study's replaced (the study's recipe without twins, trained again
# here). The x axis is the training process's CPU seconds (a fine-tune's own, without its
# pre-training); the dotted line is the target, the dashed one chance.
#
# The study's pre-training puts each scene's **counterfactual twin** in the same batch: the same
# scene with the main object's shape replaced by one of another super-category, so that its
# caption differs only in the main object's name. Without twins, colour and layout identify an
# image within a batch and the shapes are hardly learned; the curve labelled "short captions, no
# twins" is that recipe.

# %%
curves = load_curves(scale)
target_of = {t["metric"]: t["target"] for t in CLAIMS_FILE["targets"]}
n_eval = curves[0]["eval_size"]
chance_of = {
    c["item"]: c["chance"] for c in CLAIMS if c["item"] in target_of
}  # claims.json's levels
assert set(chance_of) == set(target_of), (chance_of, target_of)
fig = learning_curves(curves, target_of, chance_of)
fig.suptitle(
    f"held-out metric against training CPU time ({scale} study, seed 0, {n_eval} held-out samples)",
    y=1.02,
)
save(fig, "tables_learning_curves")
plt.show()
final = {(c["recipe"], c["metric"]): c["points"][-1] for c in curves}
for (recipe, metric), point in final.items():
    print(
        f"{recipe}: {metric} {point['value']:.3f} after {point['cpu_seconds']:.0f} CPU-s "
        f"(step {point['step']})"
    )
zero_shot = {
    r: p["value"]
    for (r, m), p in final.items()
    if m == "zero-shot L1 acc1" and r.startswith("pretrain")
}
best = max(zero_shot, key=zero_shot.get)
print(
    f"best pre-training recipe on zero-shot L1: {best} ({zero_shot[best]:.3f}; target "
    f"{target_of['world-zeroshot/L1_correct']})"
)
if scale == "full":  # the recipe the study chose is the best one tried on the metric it targets
    assert best.endswith("(the study's recipe)"), zero_shot

# %% [markdown]
# ## Reading the verdicts
#
# The counts above are the result of this notebook: they are printed from `claims.json`, so they
# change with the study that produced it. A claim that *contradicts* its paper is reported as
# such; an *untestable* one says nothing for or against the paper (the `why untestable` column
# and the count by reason above say why: a model at chance or a failed learning guard means the
# models did not learn enough at this scale); *inconclusive* means the study's seeds and test set
# cannot tell the two runs apart.
