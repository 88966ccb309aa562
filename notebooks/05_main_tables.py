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
# # Main tables: each paper's tables beside this project's CPU-scale study
#
# Both papers report their methods in tables: HiMo-CLIP's retrieval and monotonicity at
# ViT-L/14 (Tables 1–2), ARGENT's zero-shot, retrieval and PEP at three model sizes and its
# ablations (Tables 2–3) and its caption cleaning (Table 1). This notebook sets each of those
# rows beside the same comparison in this project's study, which runs both papers' methods on the
# generated hierarchical world with small CLIPs, then gives each claim's verdict, the forest plots
# of the effects, and what a verdict at this scale can and cannot say. Every number comes from
# `results/<scale>/claims.json`, which `paperlib.study.decide` wrote from the study's results by
# [the verdict rules](../docs/methods/conventions.md#verdicts), and from the papers' numbers in
# `paperlib/tables/published.json`; the notebook decides nothing itself.

# %% tags=["parameters"]
scale = "auto"  # "full" where results/full/claims.json exists (decided as far as it has run), else "smoke"

# %%
import html
import json

import pandas as pd
from IPython.display import HTML, Markdown, display

from paperlib import figures
from paperlib.analysis.published import beside_paper, paper_rows
from paperlib.analysis.readings import papers as read
from paperlib.analysis.readings import summary as points
from paperlib.analysis.readings.stand_in import NOT_RUN, read_from
from paperlib.models.clip import create_model
from paperlib.study import paths
from paperlib.study.plan.claims import CLAIMS as DECLARED
from paperlib.study.plan.claims import HEADLINE_ARMS
from paperlib.study.plan.scales import SCALES
from paperlib.study.report import decided, synthesis
from paperlib.study.report import tables as summary
from paperlib.study.report.study_paragraph import verdict_counts
from paperlib.study.results import reader

# %%
figures.use_style()
pd.set_option("display.width", 160, "display.max_columns", 12, "display.max_colwidth", 60)
scale = decided.available_scale(scale)
CLAIMS_FILE = decided.load_claims(scale)
CLAIMS = CLAIMS_FILE["claims"]
STUDY = json.loads((paths.results_dir(scale) / "study.json").read_text())
PAPERS = list(dict.fromkeys(c["paper"] for c in CLAIMS))
paper_claims = {paper: synthesis.paper_claims(CLAIMS, paper) for paper in PAPERS}
rows = paper_rows(DECLARED)  # each claim's two published rows, where the paper prints both
print(
    f"{scale} study: bases {STUDY['bases']}, headline seeds {STUDY['seeds']}, sweep seeds "
    f"{STUDY['sweep_seeds']}; {STUDY['runs_finished']} of {STUDY['runs']} planned runs finished; "
    f"{len(CLAIMS)} claims"
)

# %% [markdown]
# ## 1. HiMo-CLIP's tables beside this study
#
# Each row is one comparison the paper prints: HiMo ViT-L/14 against Long-CLIP ViT-L/14 in
# Tables 1–2 (and the SSI the text gives), the paper's metric averaged over the datasets it
# names. Beside it, this study's two arms on the same comparison, MoLo and Long-CLIP fine-tuned
# from the same base, each as its mean over valid seeds with its 95 % interval, in the shown
# units; then the claim's verdict. "same quantity" says whether the study measures what the
# paper reports.

# %%
display(beside_paper(paper_claims["HiMo-CLIP"], rows))
himo_rows = read.beside(paper_claims["HiMo-CLIP"], rows, "HiMo-CLIP")
himo_rows

# %% [markdown]
# ## 2. ARGENT's tables beside this study
#
# ARGENT's Table 2 compares ARGENT with HyCoCLIP at model sizes S, B and L (the study: its
# model and one at half the width, "smaller model", every arm trained from random weights), its
# Table 3 the ablations in a smaller setting (the study: at the smaller model), and its Table 1
# hierarchical retrieval before and after removing ambiguous captions (the study: one fine-tuned
# Euclidean CLIP's two metrics). ImageNet zero-shot reads as the world's finest zero-shot level
# here, COCO's text→image R@5 as the world's short-caption R@1. A row whose runs have not run
# reads *not run yet*; the line under the table says which ARGENT runs this section reads.

# %%
display(beside_paper(paper_claims["ARGENT"], rows))
argent_rows = read.beside(paper_claims["ARGENT"], rows, "ARGENT")
argent_rows

# %%
full = (
    decided.load_claims("full") if (paths.results_dir("full") / "claims.json").is_file() else None
)
source = read_from(scale, full, decided.load_claims("smoke"), "argent")
source

# %% [markdown]
# ## 3. The claims and their verdicts
#
# Every claim the study tests, per paper: how many received each verdict and, for each, why
# (its effect and simultaneous interval against the smallest effect of interest δ where it
# reproduces, otherwise the reason `claims.json` records). A claim *reproduces* when its interval
# lies beyond +δ; *reproduces in sign, below the published effect* when it excludes 0 on the
# paper's side and lies below the paper's effect carried onto this study's scale; *negligible*
# when it lies inside ±δ; and a claim whose baseline does not do what the paper says it does
# reads *premise fails here*.

# %%
Markdown(
    "\n\n".join(
        f"**{verdict_counts(CLAIMS, paper)}.**\n\n" + "\n".join(synthesis.outcome_lines(paper_claims[paper]))
        for paper in PAPERS
    )
)  # fmt: skip

# %% [markdown]
# The same claims as forest plots, one row per claim, one panel per unit: the effect in the
# paper's direction (right of zero is the paper's side) with its simultaneous interval (thick)
# and raw 95 % interval (thin), the grey band ±δ, the paper's own effect (◇), and the verdict as
# the dot's colour. A claim whose runs have not run yet has no effect to draw and is left out.

# %%
ran = {paper: [c for c in paper_claims[paper] if c["verdict"] != NOT_RUN] for paper in PAPERS}
fig = figures.claims_forest(ran["HiMo-CLIP"], title=f"HiMo-CLIP claims ({scale} study)")
_ = figures.save(fig, "tables_claims_forest_himo")

# %%
fig = figures.claims_forest(ran["ARGENT"], title=f"ARGENT claims ({scale} study, those that ran)")
_ = figures.save(fig, "tables_claims_forest_argent")

# %% [markdown]
# Every claim in full (folded; click to open): the statement, its effect and simultaneous
# interval, the paper's effect with the table and rows it is read from, δ, valid / total seeds,
# the whole reason for the verdict and the runs left out.

# %%
display(
    HTML(
        summary.claims_details(
            CLAIMS, "Every claim in full: statement, numbers and the rule that decided it"
        )
    )
)
Markdown(synthesis.outcomes_sentence(CLAIMS))

# %% [markdown]
# ## 4. What this scale can and cannot say
#
# The facts the paragraph rests on are read from the study: the models' sizes (built here), the
# image size and each study's training regime (from the claims' records), the claims whose metric
# is not the paper's quantity and the test items.

# %%
names = sorted({c["regime"]["model"] for c in CLAIMS if (c.get("regime") or {}).get("model")})
params = {
    n: sum(p.numel() for p in create_model(n, pretrained=None)[0].parameters()) / 1e6 for n in names
}
image_size = reader.run_info(scale, "himo", "MoLo")["config"]["data"]["image_size"]
items = {"HiMo-CLIP": SCALES[scale].eval_size, "ARGENT": SCALES[scale].argent_eval_size}
read.scale_limits(CLAIMS, params, image_size, len(STUDY["seeds"]), items)

# %% [markdown]
# ## 5. Did the models learn, and stop improving?
#
# Every headline run's held-out validation curve (`results/<scale>/curves.json`): seeds thin,
# mean thick, the shaded last 40 % of the schedule where the plateau rule fits its slope. Then
# the learning targets (the median over valid runs of a metric a learned model reaches) for the
# bases and the headline runs. Runs that collapsed or were still improving are left out of every
# claim.

# %%
headline = {v for arms in HEADLINE_ARMS.values() for v in arms}
curves = reader.load_curves(scale)["validation"]
shown = [
    c
    for c in curves
    if c["variant"] in headline and not c["metric"].startswith(("inside_", "norm_"))
]
fig = figures.validation_curves(shown, {**reader.HIMO_COLORS, **reader.ARGENT_COLORS})
_ = figures.save(fig, "tables_learning_curves")

# %%
read.targets(CLAIMS_FILE["targets"])

# %% [markdown]
# **Would a longer schedule have helped?** A cosine schedule flattens its end by design, so the
# plateau rule alone cannot say; where a study runs the check, the headline runs of some seeds
# also train at twice their steps ([the plateau rule](../docs/methods/conventions.md#verdicts)).
# Each row: a run's final validation value at its steps and at twice them, and the change with
# its standard error.

# %%
checks = pd.DataFrame(CLAIMS_FILE["schedule_checks"])
if len(checks):
    display(
        checks[
            ["study", "variant", "seed", "metric", "steps", "values", "gain", "standard_error"]
        ].round(3)
    )
schedule_reading = read.schedule(CLAIMS_FILE["schedule_checks"])
schedule_reading

# %% [markdown]
# ## 6. The scale trend
#
# The papers train with far larger batches and for far longer; this study at the regime printed
# in section 4. Whether a verdict is a property of the method or of that regime shows in how the
# effect moves with scale: where a study runs the trend, every HiMo headline arm trains again on
# the sweep seeds at other batch sizes and training lengths, and each headline claim gets one slope per axis, the effect's change
# per doubling ([the trend rule](../docs/methods/conventions.md#verdicts)). The figure shows each
# slope in units of the claim's δ, the paper's direction right; the folded list gives each
# reading in words.

# %%
trend = [c for c in CLAIMS if c.get("trend")]
if trend:
    fig = figures.claims_trend(trend, title=f"scale trend ({scale} study)")
    _ = figures.save(fig, "tables_claims_trend")

# %%
readings = summary.trend_readings(CLAIMS)
words = [
    html.escape(f"{name}: batch {r['batch']}; length {r['length']}") for name, r in readings.items()
]
if words:
    display(HTML(summary.folded(words, "Each claim's trend in words")))
if read.trend_intervals(trend):  # the per-setting tables, where some setting has an interval
    display(summary.trend_table(CLAIMS, "batch"), summary.trend_table(CLAIMS, "length"))
read.trend(readings, trend)

# %% [markdown]
# ## 7. What the compared models reach
#
# Each claimed metric per variant: the mean over its valid seeds with its 95 % interval (the
# claims' estimator), its seeds as dots and the chance level dashed; the bars are the claims'
# own values. A study none of whose arms has run (section 2 says which) has no panel.

# %%
himo_panels = decided.claim_panels(scale, "himo", CLAIMS, reader.HIMO_MODELS)
fig = figures.metric_panels(himo_panels, reader.HIMO_COLORS, title=f"HiMo-CLIP study ({scale})")
_ = figures.save(fig, "tables_himo_study")

# %%
argent_panels = decided.claim_panels(scale, "argent", CLAIMS, {v: v for v in reader.ARGENT_COLORS})
if any(values for _, values in argent_panels):
    fig = figures.metric_panels(
        argent_panels, reader.ARGENT_COLORS, ncols=3, title=f"ARGENT study ({scale})"
    )
    _ = figures.save(fig, "tables_argent_study")

# %% [markdown]
# ## What shows
#
# The points of the sections above:

# %%
points([himo_rows, argent_rows, source, schedule_reading])
