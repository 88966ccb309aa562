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
# Which of the two papers' claims this project's study reproduces, which it does not, and why.
# The study runs both papers' comparisons on the generated hierarchical world with small CLIPs
# (named below); every fine-tune starts from one of the pre-trained *bases*, as the papers start
# from released CLIP weights, and a comparison's two runs differ in exactly the thing under test.
# Nothing below is typed in: every number comes from `results/<scale>/claims.json`, which
# `paperlib.study.decide` wrote from the study's results files by
# [the verdict rules](../docs/methods/conventions.md#verdicts) (the base as a level, one error
# statement over everything the study reports, the smallest effect of interest δ on the study's
# own scale, each claim's premise, the design note and the order the labels are tried in). This notebook renders them and decides nothing
# itself; the cell after the imports re-decides every verdict from the results files and checks
# that `claims.json` still holds it.

# %% tags=["parameters"]
scale = "auto"  # "full" when its results exist, else "smoke" (1 seed)

# %%
import html
import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from paperlib import figures
from paperlib.geometry.lorentz import aperture_radius
from paperlib.study import paths
from paperlib.study.decide import verdicts
from paperlib.study.decide.decide import report as decide_report
from paperlib.study.plan import design
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
assert CLAIMS_FILE["scale"] == scale, (CLAIMS_FILE["scale"], scale)
assert {c["verdict"] for c in CLAIMS} <= set(verdicts.VERDICTS)
for paper in PAPERS:  # each paper's family, declared before any run was read
    members = [c for c in CLAIMS if c["paper"] == paper]
    assert {c["family_size"] for c in members} == {len(members)} == {CLAIMS_FILE["families"][paper]}
# the committed verdicts must still follow from the committed results files and the rules
fresh = {c["claim"]: c for c in decide_report(scale, partial=CLAIMS_FILE["partial"])["claims"]}
assert set(fresh) == {c["claim"] for c in CLAIMS}, "claims.json and the declared claims differ"
for c in CLAIMS:
    assert fresh[c["claim"]]["verdict"] == c["verdict"], (c["claim"], c["verdict"])
    assert np.allclose(fresh[c["claim"]]["interval"] or [0, 0], c["interval"] or [0, 0]), c["claim"]
models = sorted({c["regime"]["model"] for c in CLAIMS if (c.get("regime") or {}).get("model")})
versions = CLAIMS_FILE["code_versions"]
print(
    f"{scale} study of {', '.join(models)}: bases {STUDY['bases']}, headline seeds "
    f"{STUDY['seeds']}, sweep seeds {STUDY['sweep_seeds']}, {STUDY['runs_finished']} of "
    f"{STUDY['runs']} planned runs finished"
    + (" (a partial study: the claims on missing runs are untestable, 'not run')"
       if STUDY["partial"] else "")
    + f"; {len(CLAIMS)} claims, each verdict re-decided from the results files and unchanged"
)  # fmt: skip
print(
    f"the decided runs were trained by {len(versions)} code version(s): "
    + "; ".join(
        f"{v['runs']} run(s) by "
        + (f"training code {v['code_hash'][:12]}" if v["code_hash"] else "code without provenance")
        for v in versions
    )
)
paper_claims = {paper: synthesis.paper_claims(CLAIMS, paper) for paper in PAPERS}


# %% [markdown]
# ## What reproduced, what did not, and why
#
# Per paper: how many claims received each verdict, the claims that reproduce with their effect
# and simultaneous interval against δ, and for every other claim the reason `claims.json`
# records (its first clause; for a claim its design could not decide, the design note; where
# the two bases differ by more than δ, each base's verdict). Every label is read off the
# interval shown: a claim *reproduces* when its interval lies beyond +δ; *reproduces in sign,
# below the published effect* when it excludes 0 on the paper's side and lies below the paper's
# effect carried onto this study's scale; *negligible* when it lies inside ±δ; and a claim whose
# baseline does not do what the paper says it does reads *premise fails here*.

# %%
display(
    Markdown(
        "\n\n".join(
            f"**{verdict_counts(CLAIMS, paper)}.**\n\n"
            + "\n".join(synthesis.outcome_lines(paper_claims[paper]))
            for paper in PAPERS
        )
    )
)

# %% [markdown]
# The same claims as forest plots, one row per claim, one panel per unit: the effect in the
# paper's direction (right of zero is the paper's side) with its simultaneous interval (thick)
# and raw 95 % interval (thin), the grey band ±δ, the paper's own effect (◇), and the verdict
# as the dot's colour.

# %%
fig = figures.claims_forest(paper_claims["HiMo-CLIP"], title=f"HiMo-CLIP claims ({scale} study)")
figures.save(fig, "tables_claims_forest_himo")
plt.show()
fig = figures.claims_forest(paper_claims["ARGENT"], title=f"ARGENT claims ({scale} study)")
figures.save(fig, "tables_claims_forest_argent")
plt.show()

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
display(Markdown(synthesis.outcomes_sentence(CLAIMS)))

# %% [markdown]
# ## One verdict, from its effect to its label
#
# The rules at work on one claim: the first claim whose label is read off its interval and that
# has a published effect in the paper's units and a design that resolves δ, so that every step
# of the rule reads a number. Each line is read from
# that claim's record in `claims.json`; the table then tries the labels in the rules' order,
# and the first that holds must be the label `claims.json` records and the label
# `paperlib.tables.verdicts.verdict` gives from the same numbers.

# %%
candidates = [c for c in CLAIMS if synthesis.walkable(c)]
if candidates:
    walk = candidates[0]
    facts, conclusion = synthesis.verdict_walk(walk)
    display(Markdown(facts))
else:
    counts = pd.Series([c["verdict"] for c in CLAIMS]).value_counts()
    conclusion = (
        f"At the {scale} scale no claim reproduces with a simultaneous interval ("
        + ", ".join(f"{n} {v}" for v, n in counts.items())
        + "), so no verdict here passes every step of the rules; each claim's reason is in the "
        "folded list above."
    )
display(Markdown(conclusion))

# %% [markdown]
# ## HiMo-CLIP: the claims in detail
#
# The paper's effect is HiMo-CLIP L/14 against the named baseline in its Tables 1-2 (retrieval
# and COLA as fractions, HiMo@2/3 in points, HiMo@K as ρ, SSI in its own units), read from
# `paperlib/tables/published.json` in the study's units; "–" where the paper states the
# direction in words only. Against InfoNCE (λ=0) the paper reports an ablation, not a table
# row; the line under the table names the claims that have a published number there.


# %%
print(
    "published effects against InfoNCE (λ=0):",
    synthesis.published_against(paper_claims["HiMo-CLIP"], "InfoNCE (λ=0)"),
)
summary.claims_table(paper_claims["HiMo-CLIP"])

# %% [markdown]
# What each verdict rests on: the sign the interval establishes, where it lies against the
# paper's effect on this scale, each arm against the base it started from (arm − base), the
# regime the claim holds at and the family's size.

# %%
summary.claims_context(paper_claims["HiMo-CLIP"])

# %% [markdown]
# Each claim's design: the valid seeds per base, its design note (the half-width its planned
# seeds reach against δ, the seeds per base that would resolve δ, or the item floor no seed count
# passes) and its verdict with the runs the plateau rule left out counted in ("–" where none was
# left out).


# %%
display(summary.claims_design(paper_claims["HiMo-CLIP"]))
display(Markdown(synthesis.design_conclusion(CLAIMS, "HiMo-CLIP")))

# %% [markdown]
# ## ARGENT: the claims in detail
#
# The paper's effect is ARGENT-S against HyCoCLIP-S in its Table 2 (ImageNet, COCO T2I R@5,
# PEP AUC), the full ARGENT against each ablation in Table 3, ARGENT-L against ARGENT-S for the
# model-size claims, and CLIP LFT's hierarchical P/R after against before the cleaning in
# Table 1; the line under the table names the claims without a published number.

# %%
print(
    "claims without a published effect:",
    ", ".join(summary.claim_name(c) for c in paper_claims["ARGENT"] if c["paper_effect"] is None)
    or "none",
)
summary.claims_table(paper_claims["ARGENT"])

# %%
summary.claims_context(paper_claims["ARGENT"])

# %%
display(summary.claims_design(paper_claims["ARGENT"]))
display(Markdown(synthesis.design_conclusion(CLAIMS, "ARGENT")))

# %% [markdown]
# ## The scale trend
#
# The papers fine-tune with far larger batches and for far longer
# ([running at scale](../docs/methods/conventions.md#distributed)); this study fine-tunes at the
# batch and steps printed below. Whether a verdict is a property of the method or of that regime
# shows in how the effect moves with scale: on the sweep seeds every headline arm trains again
# at other batch sizes and training lengths, and each headline claim gets one slope per axis,
# the effect's change per doubling of the factor
# ([the trend rule](../docs/methods/conventions.md#verdicts)). The figure shows each slope in
# units of the claim's δ, the paper's direction right; the folded list gives each reading in
# words.

# %%
regimes = pd.Series(
    [summary.regime_text(c) for c in CLAIMS if c["headline"] and c.get("regime")]
).value_counts()
print("the headline claims' regimes:", "; ".join(f"{r} ({n} claims)" for r, n in regimes.items()))
fig = figures.claims_trend(
    [c for c in CLAIMS if c.get("trend")], title=f"scale trend ({scale} study)"
)
figures.save(fig, "tables_claims_trend")
plt.show()
readings = summary.trend_readings(CLAIMS)
HTML(
    summary.folded(
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
summary.trend_table(CLAIMS, "batch")

# %% [markdown]
# And at each training length (the batch kept):

# %%
summary.trend_table(CLAIMS, "length")

# %% [markdown]
# HiDe's component count at each batch size: the mean number of principal components HiDe kept
# per training step, for each arm that logs it:

# %%
display(summary.hide_components(CLAIMS))
display(Markdown(synthesis.trend_sentence(readings)))

# %% [markdown]
# ## Both arms against the base
#
# A gain of the variant over its baseline can be *less damage*: both fine-tunes may fall below
# the pre-trained base they started from. Per claim, each arm's change from its base (arm − base,
# item by item, the base as a level) with its simultaneous interval, and where the two arms
# stand: an arm is above or below its base only where that interval excludes no change. A claim
# on a metric its base was not measured on (the aperture's share of parents) shows none.

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
display(against.round(4))
damage = against[against["reading"].str.contains("less damage")]
display(
    Markdown(
        f"Of the {len(against)} claims with both arms against the base, "
        f"{len(damage)} read as less damage (both arms established below the base)"
        + (
            ": " + ", ".join(f"{i} ({r.verdict})" for i, r in damage.iterrows())
            if len(damage)
            else ""
        )
        + "; the readings of all of them: "
        + ", ".join(f"{n} {r}" for r, n in against["reading"].value_counts().items())
        + "."
    )
)

# %% [markdown]
# ## What the compared models reach
#
# Each claimed metric per variant: the mean over its valid seeds with its 95 % interval (the
# claims' estimator), its seeds as dots and the chance level dashed.

# %%
himo_panels = decided.claim_panels(scale, "himo", CLAIMS, reader.HIMO_MODELS)
fig = figures.metric_panels(himo_panels, reader.HIMO_COLORS, title=f"HiMo-CLIP study ({scale})")
figures.save(fig, "tables_himo_study")
plt.show()
argent_variants = {v: v for v in reader.ARGENT_COLORS}
argent_panels = decided.claim_panels(scale, "argent", CLAIMS, argent_variants)
fig = figures.metric_panels(
    argent_panels, reader.ARGENT_COLORS, ncols=3, title=f"ARGENT study ({scale})"
)
figures.save(fig, "tables_argent_study")
plt.show()
for study, shown, names in (
    ("himo", himo_panels, reader.HIMO_MODELS),
    ("argent", argent_panels, {}),
):  # the panels show the claims' own numbers
    claimed = [c for c in CLAIMS if c["study"] == study]
    figures.assert_values_match_claims(claimed, {c["item"]: v for c, v in shown}, names)
beyond, at_chance = 0, []
for claim, values in himo_panels + argent_panels:
    if claim["chance"] is None:
        continue
    for label, value in values.items():
        if not (value or {}).get("interval"):
            continue  # no valid seed, or too few for an interval
        low = verdicts.signed(value["interval"], claim["better"])[0]
        if low > (1 if claim["better"] == "higher" else -1) * claim["chance"]:
            beyond += 1
        else:
            at_chance.append(f"{label} on {claim['label']}")
display(
    Markdown(
        f"Of the {beyond + len(at_chance)} (model, metric) pairs with a chance level and an "
        f"interval, {beyond} "
        "have their whole 95 % interval on the better side of chance"
        + (f"; not so: {', '.join(at_chance)}." if at_chance else ".")
    )
)

# %% [markdown]
# ## Did the models learn, and stop improving?
#
# Learning targets (medians over valid runs) for the bases of both geometries and the headline
# fine-tunes; the rows with an `of_base` give what each headline hyperbolic fine-tune keeps of
# its own hyperbolic base (the median over runs of run ÷ base, `paperlib.study.targets`). Then
# every run's held-out validation curve (`results/<scale>/curves.json`): seeds thin, mean thick;
# the shaded last 40 % of the schedule is where the plateau rule fits its slope. Runs that
# collapsed or were still improving are listed and left out of every claim.

# %%
targets = pd.DataFrame(CLAIMS_FILE["targets"]).reindex(
    columns=["study", "variant", "metric", "of_base", "target", "median", "runs", "met"]
)
print(
    f"runs left out ({len(CLAIMS_FILE['excluded_runs'])}):"
    + ("".join(f"\n  - {r}" for r in CLAIMS_FILE["excluded_runs"]) or " none")
)
display(targets)
# a fine-tune starts from its base: where both miss a target, the target asks for more than the base
base_rows = {
    (t["study"], t["metric"]): t for t in CLAIMS_FILE["targets"] if design.is_base_reference(t["variant"])
}  # fmt: skip
for t in CLAIMS_FILE["targets"]:
    base = base_rows.get((t["study"], t["metric"]))
    missed = [r for r in (t, base) if r is not None and not r["met"] and r["median"] is not None]
    if t is base or t.get("of_base") or len(missed) < 2:
        continue
    print(f"{t['variant']} misses {t['metric']} ≥ {t['target']:g} (median {t['median']:.3f}), and "
          f"so does its base, {base['variant']} ({base['median']:.3f}): the target asks the "
          "fine-tune to improve on its start")  # fmt: skip

# %%
curves = reader.load_curves(scale)
target_of = {"long_i2t_r1": 0.5, "short_i2t_r1": 0.85, "zeroshot_L1": 0.8, "zeroshot_L3": 0.3}
for t in CLAIMS_FILE["targets"]:  # the figure's target lines are the study's own
    if t.get("of_base"):
        continue  # a share of the run's base, not a line on the curves
    name = {"world-long/i2t_hit1": "long_i2t_r1", "world-short/i2t_hit1": "short_i2t_r1",
            "world-zeroshot/L1_correct": "zeroshot_L1", "world-zeroshot/L3_correct": "zeroshot_L3"}[t["metric"]]  # fmt: skip
    assert target_of[name] == t["target"], (name, t["target"])
if curves["bases"]:
    fig = figures.validation_curves(curves["bases"], targets=target_of)
    fig.suptitle("the pre-trained bases: held-out validation over training", y=1.03)
    figures.save(fig, "tables_base_curves")
    plt.show()
headline = {"MoLo", "InfoNCE (λ=0)", "Long-CLIP", "HyCoCLIP", "ARGENT"}
shown = [c for c in curves["validation"] if c["variant"] in headline]
fig = figures.validation_curves(shown, {**reader.HIMO_COLORS, **reader.ARGENT_COLORS}, target_of)
fig.suptitle(f"headline fine-tunes, every seed ({scale} study)", y=1.03)
figures.save(fig, "tables_learning_curves")
plt.show()

# %% [markdown]
# **Would a longer schedule still have helped?** The plateau rule reads a run's own curve, and a
# cosine schedule flattens its end by design; so headline fine-tunes also run at twice their
# steps, on the seeds named below
# ([the plateau rule](../docs/methods/conventions.md#verdicts)). Below: each final validation
# value at the study's and at twice its steps, and whether the gain stays below one standard
# error.

# %%
checks = pd.DataFrame(CLAIMS_FILE["schedule_checks"])
if len(checks):
    checks["values"] = checks["values"].map(lambda v: f"{v[0]:.3f} → {v[1]:.3f}")
    checks["steps"] = checks["steps"].map(lambda v: f"{v[0]} → {v[1]}")
    print(f"schedule checks on seeds {sorted(checks['seed'].unique().tolist())}")
    display(checks[["variant", "seed", "metric", "steps", "values", "gain", "within_noise"]])
helped = checks[~checks["within_noise"]] if len(checks) else checks
reached = [c["plateau"]["reached"] for c in curves["validation"] if c["plateau"]]
display(
    Markdown(
        f"{int(targets['met'].sum())} of {len(targets)} learning targets are met, {sum(reached)} "
        f"of {len(reached)} validation curves are flat over their last fifth, "
        f"{len(CLAIMS_FILE['excluded_runs'])} runs are left out, and "
        + (
            f"{len(checks) - len(helped)} of {len(checks)} curves gain less than one standard "
            "error at twice the steps"
            + ("" if helped.empty else " (more steps helped: " + ", ".join(
                f"{r.variant} {r.metric}, {r.gain:+.3f}" for r in helped.itertuples()) + ")")
            if len(checks) else "no schedule check runs at this scale"
        )
        + "."
    )
)  # fmt: skip

# %% [markdown]
# ## The aperture arm
#
# MERU, HyCoCLIP and ARGENT at the paper's fixed curvature κ = 0.1: the fraction of each
# training batch's caption and box-phrase parents inside MERU's half-aperture radius
# $2K/\sqrt{\kappa}$, below which a parent's entailment cone is undefined (notebook 03 derives
# why it matters). The sentence under the figure gives the radius and where the batches' norms
# lie against it.

# %%
arm = [c for c in curves["aperture"] if c["variant"].endswith("κ = 0.1")]
arm_scale = scale
if not arm:  # a study stopped before its κ = 0.1 arm: the smoke study's arm shows the measure
    arm_scale = "smoke"
    arm = [c for c in reader.load_curves("smoke")["aperture"] if c["variant"].endswith("κ = 0.1")]
    print(f"the {scale} study has no κ = 0.1 run yet; the figure shows the smoke study's")
if arm:
    (kappa,) = {float(c["variant"].rsplit("κ = ", 1)[1]) for c in arm}
    radius = aperture_radius(kappa)
    assert all(np.isclose(c["radius"], radius) for c in arm), {c["radius"] for c in arm}
    fig = figures.aperture_over_training(arm, reader.ARGENT_COLORS)
    figures.save(fig, "tables_aperture_arm")
    plt.show()
    norms = [p["norm_mean"] for c in arm for p in c["points"]]
    parents = {"text": "captions", "box_text": "box phrases"}
    last = pd.DataFrame(
        [
            {"arm": f"{c['variant']}, {parents[c['features']]}", "inside": c["points"][-1]["frac_inside_radius"]}
            for c in arm
        ]
    ).groupby("arm")["inside"].mean()  # fmt: skip
    where = (
        "within"
        if min(norms) <= radius <= max(norms)
        else "above"
        if radius > max(norms)
        else "below"
    )
    conclusion = (
        f"In the {arm_scale} study, at κ = {kappa:g} the radius 2K/√κ is {radius:.3f}, {where} the span of the batches' "
        f"mean norms over training ({min(norms):.3f} to {max(norms):.3f}); at the last step the share of "
        "parents inside the radius, averaged over seeds, is "
        + "; ".join(f"{name}: {share:.0%}" for name, share in last.items())
        + "."
    )
else:
    conclusion = "No run of the aperture arm at this scale."
display(Markdown(conclusion))
