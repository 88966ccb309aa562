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
# # Main tables: each paper's claims beside this project's CPU-scale study
#
# For every claim of both papers that the study tests: **the paper's effect** (read from
# `paperlib/tables/published.json`, in the study's units), **this study's effect** with its
# simultaneous interval over the claims of that paper, the **smallest effect of interest**, the
# **sign** Holm established, the **size** against the paper's, both arms against the **base**
# they started from, the **regime** (batch, steps, learning rate) it holds at, the family's
# size, the **verdict** and the valid / total seeds. Nothing below is typed in: the numbers come from
# `results/<scale>/claims.json`, which `paperlib.study.decide` wrote from the study's results
# files; this notebook renders them and decides nothing itself.
#
# **The study** runs both papers' comparisons on the generated hierarchical world with an
# 8.5M-parameter CLIP at 32 px. Every fine-tune starts from one of two pre-trained *bases* (CLIPs
# of the world trained once to their plateau, `results/bases/`), as the papers start from
# released CLIP weights; a comparison's two runs differ in exactly the thing under test, and the
# full study runs each headline comparison on 8 seeds over both bases (the numbers at this scale
# are printed below). Every trained run logs a held-out validation curve and, in the full study,
# counts only once it has stopped improving (its primary metric rose by no more than δ over its
# last fifth); a run left out takes its seed's other arm with it, and each claim also records its
# verdict with those runs counted in.
#
# **The verdicts** ([the rule](../docs/methods/conventions.md#verdicts)). The paired effect over
# seeds and shared test items is estimated with the pre-trained base as a fixed level
# (`paperlib.tables.inference.based_estimate`: the mean of the per-base means, the pooled
# within-base seed variance; its coverage is tested on simulated data), and a base × method
# interaction test asks whether the bases disagree. Each paper's claims form one family declared
# before any run is read; Holm over the whole family decides the **sign** and, by two one-sided
# tests against the smallest effect of interest δ, the **equivalence**; the interval shown is
# simultaneous over the family (Bonferroni), so it shows size whatever the claim's own p, and no
# interval comes from fewer than 2 within-base degrees of freedom. Before any run, each claim's
# **design note** gives the half-width its planned seeds reach, the *item floor* the test items
# alone impose, and the seeds per base that resolve δ. Then **at ceiling** (the baseline leaves
# less room than the paper's own effect: its sign is recorded, never read as a contradiction),
# **negligible** (equivalent within ±δ; *…with the paper's sign* or *…with the other sign* where
# the sign is established too), **contradicts** (the other sign, the interval beyond −δ),
# **reproduces in sign, below the published effect** (the paper's sign, the interval below the
# paper's effect, where the metric is the paper's quantity; **below the published effect**
# without an established sign), **reproduces** (the paper's sign, the interval beyond +δ),
# **depends on the base** (a significant interaction and the bases' verdicts differ),
# **underpowered** (a design that does not resolve δ: its note names the seeds per base that
# would), **unresolvable at this test set** (the item floor is at least δ), **untestable** (a
# model did not learn, a side at chance, no headroom: judged on mean values), else
# **inconclusive** (a design that resolves δ, and data that do not decide).

# %% tags=["parameters"]
scale = "auto"  # "full" when its results exist, else "smoke" (1 seed)

# %%
import html
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import HTML

from paperlib.figures import (
    aperture_over_training,
    assert_values_match_claims,
    claims_forest,
    claims_trend,
    metric_panels,
    save,
    use_style,
    validation_curves,
)
from paperlib.study.decide import report as decide_report
from paperlib.study.reader import (
    ARGENT_COLORS,
    HIMO_COLORS,
    HIMO_MODELS,
    available_scale,
    claim_panels,
    load_claims,
    load_curves,
    results_dir,
)
from paperlib.tables.summary import (
    claims_context,
    claims_design,
    claims_details,
    claims_table,
    folded,
    hide_components,
    trend_readings,
    trend_table,
)
from paperlib.tables.verdicts import VERDICTS

use_style()
pd.set_option("display.width", 160, "display.max_columns", 12, "display.max_colwidth", 60)
scale = available_scale(scale)
CLAIMS_FILE = load_claims(scale)
CLAIMS = CLAIMS_FILE["claims"]
assert CLAIMS_FILE["scale"] == scale, (CLAIMS_FILE["scale"], scale)
# the committed verdicts must still follow from the committed results files and the rules
fresh = {c["claim"]: c for c in decide_report(scale, partial=CLAIMS_FILE["partial"])["claims"]}
assert set(fresh) == {c["claim"] for c in CLAIMS}, "claims.json and the declared claims differ"
for c in CLAIMS:
    assert fresh[c["claim"]]["verdict"] == c["verdict"], (c["claim"], c["verdict"])
    assert np.allclose(fresh[c["claim"]]["interval"] or [0, 0], c["interval"] or [0, 0]), c["claim"]
assert {c["verdict"] for c in CLAIMS} <= set(VERDICTS)
STUDY = json.loads((results_dir(scale) / "study.json").read_text())
print(
    f"{scale} study: bases {STUDY['bases']}, headline seeds {STUDY['seeds']}, sweep seeds "
    f"{STUDY['sweep_seeds']}, {STUDY['runs_finished']} of {STUDY['runs']} planned runs finished"
    + (" (a partial study: the claims on missing runs are untestable, 'not run')"
       if STUDY["partial"] else "")
)  # fmt: skip
versions = CLAIMS_FILE["code_versions"]
print(
    f"the decided runs were trained by {len(versions)} code version(s): "
    + "; ".join(
        f"{v['runs']} run(s) by "
        + (
            f"training code {v['code_hash'][:12]}"
            if v["code_hash"]
            else "code that recorded no provenance"
        )
        for v in versions
    )
)
if scale == "full":  # the design the text above states: 8 seeds over both bases
    assert len(STUDY["seeds"]) == 8 and len(STUDY["bases"]) == 2, STUDY
PAPERS = list(dict.fromkeys(c["paper"] for c in CLAIMS))
for paper in PAPERS:
    members = [c for c in CLAIMS if c["paper"] == paper]
    assert {c["family_size"] for c in members} == {len(members)}, paper  # the declared family
    counts = pd.Series([c["verdict"] for c in members]).value_counts()
    print(
        f"{paper}: a family of {len(members)} claims (Holm over all {len(members)}); "
        + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS if counts.get(v, 0))
    )


def paper_claims(paper: str) -> list[dict]:
    return [c for c in CLAIMS if c["paper"] == paper]


# %% [markdown]
# ## HiMo-CLIP
#
# The paper's effect is HiMo-CLIP L/14 against the named baseline in its Tables 1-2 (retrieval
# and COLA as fractions, HiMo@2/3 in points, HiMo@K as ρ, SSI in its own units); against
# InfoNCE (λ=0) only HiMo@K has a published number (the component term's +0.19, from the
# ablation); "–" where the paper states the direction in words only.

# %%
claims_table(paper_claims("HiMo-CLIP"))

# %% [markdown]
# What each verdict rests on: the sign Holm established over the family, where the interval
# lies against the paper's effect, each arm against the base it started from (arm − base), the
# regime the claim holds at and the family's size.

# %%
claims_context(paper_claims("HiMo-CLIP"))

# %% [markdown]
# Each claim's design: the valid seeds per base, its design note (the half-width its planned
# seeds reach against δ, the seeds per base that would resolve δ, or the item floor no seed count
# passes) and its verdict with the runs the plateau rule left out counted in ("–" where none was
# left out).

# %%
claims_design(paper_claims("HiMo-CLIP"))

# %%
fig = claims_forest(paper_claims("HiMo-CLIP"), title=f"HiMo-CLIP claims ({scale} study)")
save(fig, "tables_claims_forest_himo")
plt.show()

# %% [markdown]
# ## ARGENT
#
# The paper's effect is ARGENT-S against HyCoCLIP-S in its Table 2 (ImageNet, COCO T2I R@5,
# PEP AUC), the full ARGENT against each ablation in Table 3, ARGENT-L against ARGENT-S for the
# model-size claims, and CLIP LFT's hierarchical P/R after against before the cleaning in
# Table 1; the aperture claims have no published number.

# %%
claims_table(paper_claims("ARGENT"))

# %%
claims_context(paper_claims("ARGENT"))

# %%
claims_design(paper_claims("ARGENT"))

# %%
fig = claims_forest(paper_claims("ARGENT"), title=f"ARGENT claims ({scale} study)")
save(fig, "tables_claims_forest_argent")
plt.show()

# %% [markdown]
# Every claim in full, from `claims.json` (folded; click to open): the statement, its effect and
# simultaneous interval, the paper's effect with the table and rows it is read from, the smallest
# effect of interest, valid / total seeds, the reason for the verdict and the runs left out.

# %%
HTML(claims_details(CLAIMS, "Every claim in full: statement, numbers and the rule that decided it"))

# %% [markdown]
# ## The scale trend
#
# The papers fine-tune at batch 1024 for epochs, this study at batch 64 for a few hundred steps.
# Whether a verdict is a property of the method or of that regime shows in how the effect moves
# with scale: on the sweep seeds every headline arm trains again at other batch sizes (equal
# samples seen; the learning rate kept) and training lengths
# (`paperlib.study.design.trend_runs`). A point counts only where both arms kept their base and
# learned. Per headline claim and axis, the figure shows one slope: the effect's change per
# doubling of the factor, in units of the claim's smallest effect of interest (the paper's
# direction right), fitted to every setting that counts on every sweep seed with one intercept
# per seed (`paperlib.tables.trend_slope`), so its residual degrees of freedom come from all the
# points. The reading says the effect moves toward (or away from) the paper's side only where
# the slope's interval (Bonferroni over the family's claims and both axes) excludes 0; a slope
# it cannot establish reads *no change established*, and one without enough points for an
# interval *not estimable*.

# %%
fig = claims_trend([c for c in CLAIMS if c.get("trend")], title=f"scale trend ({scale} study)")
save(fig, "tables_claims_trend")
plt.show()
readings = trend_readings(CLAIMS)
moving = [
    f"{name} ({axis})"
    for name, reading in readings.items()
    for axis, text in reading.items()
    if text.startswith("moves toward")
]
print(
    f"{len(readings)} headline claims with a trend; the effect moves toward the paper's side as "
    "the scale grows in: " + (", ".join(moving) or "none")
)
HTML(
    folded(
        [
            html.escape(f"{name}: batch {reading['batch']}; length {reading['length']}")
            for name, reading in readings.items()
        ],
        "Each claim's trend in words, computed from its slope",
    )
)

# %% [markdown]
# The effect at each batch size (samples seen kept equal), with its 95 % interval where the
# setting's seeds give one (*no interval*, with the seed degrees of freedom they do give, where
# they give fewer than 2 within-base; no value is shown without an interval; `*`: an arm forgot
# its base or did not learn, so the point does not count):

# %%
trend_table(CLAIMS, "batch")

# %% [markdown]
# And at each training length (the batch kept):

# %%
trend_table(CLAIMS, "length")

# %% [markdown]
# HiDe's component count at each batch size: the mean number of principal components HiDe kept
# per training step, for each arm that logs it, at each batch size:

# %%
hide_components(CLAIMS)

# %% [markdown]
# ## Both arms against the base
#
# A gain of the variant over its baseline can be *less damage*: both fine-tunes may fall below
# the pre-trained base they started from. Per claim, each arm's change from its base (arm − base,
# item by item, the base as a level) with its simultaneous interval, and where the two arms
# stand; a claim on a metric the Euclidean bases do not have (PEP, the aperture) shows none.

# %%
against = pd.DataFrame(
    [
        {
            "claim": c["claim"],
            "variant − base": c["against_base"]["variant"]["effect"],
            "baseline − base": c["against_base"]["baseline"]["effect"],
            "reading": c["against_base"]["reading"],
            "verdict": c["verdict"],
        }
        for c in CLAIMS
        if (c.get("against_base") or {}).get("variant") and c["against_base"].get("baseline")
    ]
).set_index("claim")
damage = against[against["reading"].str.contains("less damage")]
print(
    f"{len(against)} claims have both arms against the base; in {len(damage)} the variant's "
    "difference over its baseline is less damage (both arms below the base): "
    + (", ".join(f"{i} ({r.verdict})" for i, r in damage.iterrows()) or "none")
)
against.round(4)

# %% [markdown]
# ## What the compared models reach
#
# Each claimed metric per variant: the mean over its valid seeds with its 95 % interval (the
# claims' estimator), its seeds as dots and the chance level dashed.


# %%
himo_panels = claim_panels(scale, "himo", CLAIMS, HIMO_MODELS)
fig = metric_panels(himo_panels, HIMO_COLORS, title=f"HiMo-CLIP study ({scale})")
save(fig, "tables_himo_study")
plt.show()
argent_panels = claim_panels(scale, "argent", CLAIMS, {v: v for v in ARGENT_COLORS})
fig = metric_panels(argent_panels, ARGENT_COLORS, ncols=3, title=f"ARGENT study ({scale})")
save(fig, "tables_argent_study")
plt.show()
for study, shown, names in (("himo", himo_panels, HIMO_MODELS), ("argent", argent_panels, {})):
    claimed = [c for c in CLAIMS if c["study"] == study]  # the panels show the claims' own numbers
    assert_values_match_claims(claimed, {c["item"]: values for c, values in shown}, names)

# %% [markdown]
# ## Did the models learn, and stop improving?
#
# Learning targets (medians over valid runs) for the bases and the headline fine-tunes, and
# every run's held-out validation curve (`results/<scale>/curves.json`): seeds thin, mean thick;
# the shaded last fifth is where the plateau criterion looks. Runs that collapsed or were still
# improving are listed and left out of every claim.

# %%
targets = pd.DataFrame(CLAIMS_FILE["targets"])[
    ["study", "variant", "metric", "target", "median", "runs", "met"]
]
print(f"{int(targets['met'].sum())} of {len(targets)} learning targets met at the {scale} scale")
print(
    f"runs left out ({len(CLAIMS_FILE['excluded_runs'])}):"
    + ("".join(f"\n  - {r}" for r in CLAIMS_FILE["excluded_runs"]) or " none")
)
targets

# %%
curves = load_curves(scale)
target_of = {"long_i2t_r1": 0.5, "short_i2t_r1": 0.85, "zeroshot_L1": 0.8, "zeroshot_L3": 0.3}
for t in CLAIMS_FILE["targets"]:  # the figure's target lines are the study's own
    name = {"world-long/i2t_hit1": "long_i2t_r1", "world-short/i2t_hit1": "short_i2t_r1",
            "world-zeroshot/L1_correct": "zeroshot_L1", "world-zeroshot/L3_correct": "zeroshot_L3"}[t["metric"]]  # fmt: skip
    assert target_of[name] == t["target"], (name, t["target"])
if curves["bases"]:
    fig = validation_curves(curves["bases"], targets=target_of)
    fig.suptitle("the pre-trained bases: held-out validation over training", y=1.03)
    save(fig, "tables_base_curves")
    plt.show()
headline = {"MoLo", "InfoNCE (λ=0)", "Long-CLIP", "HyCoCLIP", "ARGENT"}
shown = [c for c in curves["validation"] if c["variant"] in headline]
fig = validation_curves(shown, {**HIMO_COLORS, **ARGENT_COLORS}, target_of)
fig.suptitle(f"headline fine-tunes, every seed ({scale} study)", y=1.03)
save(fig, "tables_learning_curves")
plt.show()
reached = [c["plateau"]["reached"] for c in curves["validation"] if c["plateau"]]
print(f"{sum(reached)} of {len(reached)} validation curves flat over their last fifth")

# %% [markdown]
# **Would a longer schedule still have helped?** The plateau criterion reads a run's own curve,
# and a cosine schedule flattens its end by design; so, where the scale asks for it
# (`Scale.schedule_check`), seed 0 of every headline fine-tune also runs at twice its steps.
# Below: each final validation value at the study's and at twice its steps, and whether the
# gain stays below one standard error.

# %%
checks = pd.DataFrame(CLAIMS_FILE["schedule_checks"])
if len(checks):
    checks["values"] = checks["values"].map(lambda v: f"{v[0]:.3f} → {v[1]:.3f}")
    checks["steps"] = checks["steps"].map(lambda v: f"{v[0]} → {v[1]}")
    helped = checks[~checks["within_noise"]]
    print(
        f"{len(checks) - len(helped)} of {len(checks)} curves gain less than one standard error "
        "at twice the steps" + ("" if helped.empty else "; more steps helped: " + ", ".join(
            f"{r.variant} {r.metric} ({r.gain:+.3f})" for r in helped.itertuples()))
    )  # fmt: skip
    display_checks = checks[["variant", "metric", "steps", "values", "gain", "within_noise"]]
else:
    display_checks = "no schedule check at this scale"
display_checks

# %% [markdown]
# ## The aperture arm
#
# MERU, HyCoCLIP and ARGENT at the paper's fixed curvature κ = 0.1, where MERU's half-aperture
# radius $2K/\sqrt{\kappa}$ = 0.63 lies among the embeddings' norms: the fraction of each
# training batch's caption and box-phrase parents inside that radius (notebook 03 derives why it
# matters).

# %%
arm = [c for c in curves["aperture"] if c["variant"].endswith("κ = 0.1")]
if arm:
    fig = aperture_over_training(arm, ARGENT_COLORS)
    save(fig, "tables_aperture_arm")
    plt.show()
