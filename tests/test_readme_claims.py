"""The README's summary of the committed study is the table of ``results/full/claims.json``."""

from __future__ import annotations

import json
import re
from collections import Counter

from paperlib.study.decide import summary_table
from paperlib.study.reader import REPO_ROOT, load_claims


def test_readme_summarises_the_committed_claims():
    readme = (REPO_ROOT / "README.md").read_text()
    table = summary_table(load_claims("full"))
    assert table in readme, (
        "README's claims table is stale: paste `python -m paperlib.study --scale full --summary`"
    )


def _readme() -> str:
    """The README with its line breaks and runs of spaces read as single spaces."""
    return " ".join((REPO_ROOT / "README.md").read_text().split())


def _percent(share: float) -> str:
    """A share as the README writes it: whole percent from 10 %, one decimal below."""
    return f"{100 * share:.0f} %" if share >= 0.1 else f"{100 * share:.1f} %"


def test_the_readme_says_what_the_committed_runs_are():
    """The paragraph above the table states the committed runs' code version, recipe,
    retention, seeds kept, verdict counts and the aperture premise: each figure is computed
    here from claims.json (a new study rewrites both the paragraph and this test)."""
    readme = _readme()
    decided = load_claims("full")
    (version,) = decided["code_versions"]
    assert version["code_hash"] and f"code hash `{version['code_hash'][:12]}`" in readme
    claims = decided["claims"]
    headline = [c for c in claims if c["headline"]]
    recipes = {
        "HiMo-CLIP": ("every HiMo fine-tune at lr 3e-5 with 100 of its 400 steps as warm-up",
                      (3e-5, 100, 400)),
        "ARGENT": ("every ARGENT and HyCoCLIP fine-tune at lr 1e-4 with 15 of 300", (1e-4, 15, 300)),
    }  # fmt: skip
    for paper, (phrase, setting) in recipes.items():
        assert phrase in readme, phrase
        own = [c for c in headline if c["paper"] == paper and c["variant"] != "InfoNCE (λ=0)"]
        got = {(c["regime"]["lr"], c["regime"]["warmup_steps"], c["regime"]["steps"]) for c in own}
        assert got == {setting}, (paper, got)
    kept = min(
        v for c in headline for arm in ("variant", "baseline") for v in c["retention"][arm].values()
    )
    assert f"keeps at least {int(100 * kept) / 100:.2f} of its base's" in readme
    pairs = {p: {c["seeds_kept"]["pairs"] for c in headline if c["paper"] == p} for p in recipes}
    assert pairs["HiMo-CLIP"] == {6} and "the HiMo headline claims keep 6 of 8 seed pairs" in readme
    assert min(pairs["ARGENT"]) >= 7 and "the ARGENT ones 7 or 8" in readme
    for paper in recipes:
        counts = Counter(c["verdict"] for c in claims if c["paper"] == paper)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        words = ", ".join(f"{n} {verdict}" for verdict, n in ranked)
        assert f"{paper} ({sum(counts.values())} claims): {words}" in readme, words


def test_the_readme_s_contradiction_and_aperture_figures_are_the_claims():
    """The one contradicted claim with its effect beside the paper's, and the aperture arm's
    share of captions inside the radius per model, read from claims.json."""
    claims = load_claims("full")["claims"]
    readme = _readme()
    reproduced = {
        c["claim"] for c in claims if c["verdict"] == "reproduces" and c["paper"] == "HiMo-CLIP"
    }
    assert reproduced == {"himo-long-i2t-vs-infonce", "himo-long-t2i-vs-infonce"}, reproduced
    assert "the two that reproduce: MoLo over InfoNCE (λ=0) on long-caption I2T and T2I" in readme
    (against,) = [c for c in claims if c["verdict"] == "contradicts"]
    assert against["claim"] == "himo-h2-vs-longclip"
    effects = f"{against['effect']:+.1f} points against the paper's {against['paper_effect']:+.1f}"
    assert effects in readme, effects
    aperture = {c["claim"]: c for c in claims if c["claim"].endswith("-k01")}
    hycoclip, meru = (
        aperture["argent-aperture-vs-hycoclip-k01"],
        aperture["argent-aperture-vs-meru-k01"],
    )
    shares = [hycoclip["baseline_value"]["mean"], meru["baseline_value"]["mean"],
              meru["variant_value"]["mean"]]  # fmt: skip
    words = "HyCoCLIP leaves {} of the held-out captions inside 2K/√c, MERU {} and ARGENT {}"
    assert words.format(*map(_percent, shares)) in readme, words.format(*map(_percent, shares))
    assert all(c["verdict"] == "reproduces" for c in aperture.values())
    assert [c["seeds_kept"]["pairs"] for c in (hycoclip, meru)] == [6, 4]
    assert "(6 against HyCoCLIP, 4 against MERU) both reproduce" in readme
    figures = [
        "{:.3f} [{:.3f}, {:.3f}]".format(c["effect"], *c["interval"]) for c in (hycoclip, meru)
    ]
    sentence = "ARGENT leaves {} of the captions fewer inside than HyCoCLIP and {} fewer than MERU"
    assert sentence.format(*figures) in readme, sentence.format(*figures)
    (learned,) = [c for c in claims if c["claim"] == "argent-aperture-vs-hycoclip"]
    assert learned["verdict"] == "untestable" and "premise not reproduced" in learned["reason"]
    assert learned["variant_value"]["mean"] == learned["baseline_value"]["mean"] == 0
    assert "At the learned curvature neither HyCoCLIP nor ARGENT leaves a caption inside" in readme


def test_the_readme_s_study_cost_is_what_the_committed_runs_recorded():
    """The `make study` paragraph's figures: the recipe stage's and then per stage the
    core-seconds their ``run.done`` records under ``results/full`` sum to, and the hours all
    of it is on two workers."""
    from paperlib.study.design import plan, recipe_plan
    from paperlib.study.status import stage_seconds

    readme = _readme()
    found = re.search(
        r"the recipe stage's (\d+) runs took ([\d,]+) core-seconds and the study's (\d+) runs "
        r"took ([\d,]+) core-seconds \(([^)]*)\), about ([\d.]+) hours on two workers in all",
        readme,
    )
    assert found, "README's make study paragraph no longer states the study's measured cost"
    recipe_runs, runs = recipe_plan("full"), plan("full")
    recipe = sum(stage_seconds(recipe_runs, "full").values())
    seconds = stage_seconds(runs, "full")
    assert int(found.group(1)) == len(recipe_runs) and found.group(2) == f"{recipe:,.0f}"
    assert int(found.group(3)) == len(runs)
    assert found.group(4) == f"{sum(seconds.values()):,.0f}"
    assert found.group(5) == ", ".join(f"{stage} {s:,.0f}" for stage, s in seconds.items())
    assert float(found.group(6)) == round((recipe + sum(seconds.values())) / 2 / 3600, 1)
    mean = (recipe + sum(seconds.values())) / (len(recipe_runs) + len(runs))
    assert "(about five minutes on one core)" in readme and 270 <= mean <= 330, mean
    picks = json.loads((REPO_ROOT / "results" / "full" / "recipe.json").read_text())["arms"]
    assert "lr 3e-5 with 25 % warm-up for the three HiMo arms" in readme
    assert "1e-4 with 5 % for HyCoCLIP and ARGENT" in readme
    chosen = {arm: (e["pick"]["lr"], e["pick"]["warmup"]) for arm, e in picks.items()}
    assert chosen == {"MoLo": (3e-5, 0.25), "InfoNCE (λ=0)": (3e-5, 0.25),
                      "Long-CLIP": (3e-5, 0.25), "HyCoCLIP": (1e-4, 0.05),
                      "ARGENT": (1e-4, 0.05)}  # fmt: skip
    assert all(e["pick"]["retained"] and e["pick"]["at_grid_edge"] is None for e in picks.values())
