"""The hand-written inference of ``paperlib.study.decide.inference`` against statsmodels.

- Holm: ``holm`` and ``holm_by_formula`` against ``multipletests(method="holm")`` on random,
  tied, p = 1 and single p-values.
- The t parts: on tables whose items carry no variance (item term 0), the interval, p-value and
  TOST p-value of ``based_estimate`` against statsmodels' one-sample TOST (one base) and an OLS
  of the per-seed values on the base (the mean of the base means, ``S − B`` degrees of
  freedom), and ``base_difference`` against the pooled two-sample TOST.
- The standard error: ``based_estimate`` against a REML mixed model
  (``statsmodels.formula.api.mixedlm``: the base a fixed effect under sum coding, seed, item
  and base × item variance components, all rows in one group) on data simulated at the study's
  designs, with two wrong variance formulas (the item term dropped, the seed × item residual
  counted twice) shown to miss the same tolerance.
- Coverage: the 95 % interval over simulated datasets of the known generating model, with the
  same two wrong formulas shown to miss it.
- ``base_difference``: its mean against the difference of ``per_base_estimates`` means, its
  standard error against the empirical SD of that difference over simulated datasets, with the
  two-sample t-test of the per-seed means (which leaves out the base × item interaction) shown
  to fall short.

``tests/test_inference.py`` checks the variance parts against brute force at other designs, the
coverage at 400 items and Holm's rejections against the step-down test; this file does not
repeat those.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
import statsmodels.formula.api as smf
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import (
    CompareMeans,
    DescrStatsW,
    _tstat_generic,
    ttost_ind,
)
from statsmodels.tools.sm_exceptions import ConvergenceWarning

from paperlib.study.decide.error_control import holm, holm_by_formula
from paperlib.study.decide.inference import (
    base_difference,
    based_estimate,
    per_base_estimates,
    seed_weight,
)

BASE_EFFECTS = (0.2, -0.1)  # the fixed effects of base 0 and base 1


def assign(counts):
    """One base label per seed, interleaved as the study assigns them (``s mod B`` while every
    base still has seeds left)."""
    left, labels = list(counts), []
    while any(left):
        for b, n in enumerate(left):
            if n:
                labels.append(b)
                left[b] -= 1
    return labels


def simulate(rng, bases, items, sd_seed, sd_item, sd_base_item, sd_resid):
    """One (seeds, items) table of y = β_b + a_s + b_i + g_{b,i} + e_si with b = b(s): fixed
    base effects ``BASE_EFFECTS``, random seed, item, base × item and seed × item effects."""
    labels = np.asarray(bases)
    seeds = len(labels)
    return (
        np.asarray(BASE_EFFECTS)[labels][:, None]
        + rng.normal(0, sd_seed, (seeds, 1))
        + rng.normal(0, sd_item, (1, items))
        + rng.normal(0, sd_base_item, (labels.max() + 1, items))[labels]
        + rng.normal(0, sd_resid, (seeds, items))
    )


def truth(bases):
    """The effect the estimate targets: the mean of the bases' fixed effects."""
    return float(np.mean(BASE_EFFECTS[: len(set(bases))]))


def base_item_means(y, bases):
    """``c_i``: each item's mean of its per-base means."""
    labels = np.asarray(bases)
    return np.mean([y[labels == b].mean(axis=0) for b in sorted(set(bases))], axis=0)


def wrong_estimates(estimate, y, bases):
    """The estimate with two wrong item terms: dropped (the seed spread alone), and the items'
    spread ``Var_i(c_i) / N`` without the within-base residual subtracted (the seed × item
    residual, already in the seed term, counted a second time)."""
    spread = float(base_item_means(y, bases).var(ddof=1)) / y.shape[1]
    return {
        "no item term": dataclasses.replace(estimate, item_term=0.0),
        "residual twice": dataclasses.replace(estimate, item_term=spread),
    }


# (a) Holm


def _holm_cases():
    rng = np.random.default_rng(0)
    cases = {f"uniform-{m}": rng.uniform(0, 1, m) for m in (2, 5, 17, 40)}
    cases |= {f"small-{m}": rng.uniform(0, 0.05, m) ** 2 for m in (3, 12)}
    cases["rounded ties"] = np.round(rng.uniform(0, 0.1, 15), 2)
    cases["all tied"] = np.full(6, 0.01)
    cases["ties at 1"] = np.array([0.2, 1.0, 1.0, 0.004, 1.0])
    cases["all 1"] = np.ones(4)
    cases["zeros and ones"] = np.array([0.0, 1.0, 0.03, 0.0, 0.5])
    cases["single"] = np.array([0.3])
    cases["single 1"] = np.array([1.0])
    return cases


HOLM_CASES = _holm_cases()


@pytest.mark.parametrize("name", sorted(HOLM_CASES))
def test_holm_is_statsmodels_holm_and_the_step_down_formula(name):
    p = HOLM_CASES[name]
    reference = multipletests(p, method="holm")[1]
    assert holm(list(p)) == pytest.approx(list(reference), rel=1e-12, abs=1e-15)
    assert holm_by_formula(list(p)) == pytest.approx(list(reference), rel=1e-12, abs=1e-15)


def test_holm_of_no_claims_is_empty():
    assert holm([]) == [] and holm_by_formula([]) == []


# (b) the t parts, where the item term is 0


def flat_items_table(rng, bases, items=40):
    """A table whose seed means are random and whose items carry no variance: per-seed values
    plus noise centred on every row and on every column of each base, so that each base's item
    means are constant (``Var_i(c_i) = 0``)."""
    labels = np.asarray(bases)
    values = np.asarray(BASE_EFFECTS)[labels] + rng.normal(0, 0.05, len(labels))
    noise = rng.normal(0, 0.3, (len(labels), items))
    for b in set(bases):
        rows = noise[labels == b]
        noise[labels == b] = (
            rows - rows.mean(axis=1, keepdims=True) - rows.mean(axis=0) + rows.mean()
        )
    return values[:, None] + noise


def ols_mean_of_base_means(seed_values, bases):
    """statsmodels' t-test of the mean of the base means: OLS of the per-seed values on one
    indicator per base (the base means, residual variance pooled within bases, ``S − B``
    degrees of freedom), then the contrast averaging them."""
    levels = sorted(set(bases))
    exog = np.array([[float(b == level) for level in levels] for b in bases])
    fit = sm.OLS(np.asarray(seed_values), exog).fit()
    return fit.t_test(np.full((1, len(levels)), 1.0 / len(levels)))


def tost_from(contrast, delta):
    """TOST of ``|effect| < delta`` from a statsmodels contrast: the larger of the one-sided
    p-values of ``effect ≤ −delta`` and ``effect ≥ delta``."""
    effect, sd, df = float(contrast.effect[0]), float(contrast.sd[0, 0]), contrast.df_denom
    above = _tstat_generic(effect, 0.0, sd, df, "larger", diff=-delta)[1]
    below = _tstat_generic(effect, 0.0, sd, df, "smaller", diff=delta)[1]
    return max(float(above), float(below))


def deltas_around(mean, se):
    """Equivalence margins giving TOST p-values from near 0 to above one half."""
    return [abs(mean) / 2 + 1e-9, abs(mean) + 0.5 * se, abs(mean) + 1.5 * se, abs(mean) + 5 * se]


@pytest.mark.parametrize("counts", [(8,), (3,), (4, 4), (3, 3), (2, 3), (2, 1)])
def test_with_no_item_variance_the_interval_and_tost_are_statsmodels_t_tests(counts):
    """With the item term 0 (a single item column is refused as a table, so: items that carry
    no variance) the estimate is a t-test of the per-seed values with ``S − B`` degrees of
    freedom: its interval, two-sided p and TOST p are statsmodels' for the mean of the base
    means (an OLS contrast, one-sided tails by ``_tstat_generic``) and, with one base, the
    one-sample TOST of ``DescrStatsW.ttost_mean``."""
    bases = assign(counts)
    rng = np.random.default_rng(sum(counts) + 10 * len(counts))
    y = flat_items_table(rng, bases)
    estimate = based_estimate(y, bases)
    assert estimate.item_term == 0.0
    contrast = ols_mean_of_base_means(estimate.seed_values, bases)
    assert estimate.seed_df == contrast.df_denom == len(bases) - len(counts)
    assert estimate.mean == pytest.approx(float(contrast.effect[0]), rel=1e-12)
    assert estimate.se == pytest.approx(float(contrast.sd[0, 0]), rel=1e-10)
    assert estimate.interval() == pytest.approx(tuple(contrast.conf_int(alpha=0.05)[0]), rel=1e-9)
    assert estimate.p_value() == pytest.approx(float(contrast.pvalue), rel=1e-6)
    seen = []
    for delta in deltas_around(estimate.mean, estimate.se):
        seen.append(estimate.equivalence_p(delta))
        assert seen[-1] == pytest.approx(tost_from(contrast, delta), rel=1e-6), delta
        if len(counts) == 1:
            reference = DescrStatsW(np.asarray(estimate.seed_values)).ttost_mean(-delta, delta)
            assert seen[-1] == pytest.approx(float(reference[0]), rel=1e-6), delta
    assert min(seen) < 0.1 and max(seen) > 0.5


@pytest.mark.parametrize("counts", [(4, 4), (3, 3), (2, 3), (2, 1)])
def test_with_no_item_variance_the_base_difference_is_the_pooled_two_sample_tost(counts):
    """With the item term 0 the difference of the bases is the pooled two-sample t-test of the
    per-seed values (``S − 2`` degrees of freedom): statsmodels' ``CompareMeans`` standard
    error and p, and ``ttost_ind``'s TOST p."""
    bases = assign(counts)
    rng = np.random.default_rng(7 + sum(counts))
    y = flat_items_table(rng, bases)
    difference = base_difference(y, bases)
    assert difference.item_term == 0.0
    seed_values = y.mean(axis=1)
    first, second = (seed_values[np.asarray(bases) == b] for b in (0, 1))
    pooled = CompareMeans(DescrStatsW(first), DescrStatsW(second))
    assert difference.seed_df == len(bases) - 2
    assert difference.mean == pytest.approx(first.mean() - second.mean(), rel=1e-12)
    assert difference.se == pytest.approx(pooled.std_meandiff_pooledvar, rel=1e-10)
    p_two_sided = pooled.ttest_ind(usevar="pooled")[1]
    assert difference.p_value() == pytest.approx(float(p_two_sided), rel=1e-6)
    seen = []
    for delta in deltas_around(difference.mean, difference.se):
        seen.append(difference.equivalence_p(delta))
        reference = ttost_ind(first, second, -delta, delta, usevar="pooled")[0]
        assert seen[-1] == pytest.approx(float(reference), rel=1e-6), delta
    assert min(seen) < 0.1 and max(seen) > 0.5


# (c) the standard error against a mixed model, and coverage

MIXED_ITEMS = 60
MIXED_REPLICATES = 3
MIXED_REGIME = (0.4, 0.3, 0.3, 1.0)  # sd of seed, item, base × item, seed × item residual
MIXED_OPTIMIZERS = ("nm", "powell")
SE_TOLERANCE = 0.005  # |mean SE ratio − 1| over the replicates; each one within twice that


def reml_fit(y, bases):
    """REML fit of the crossed model with the base as a fixed effect under sum coding (the
    intercept is the mean of the base means) and variance components for seed, item and (with
    two bases) base × item, all rows in one group. statsmodels' default optimizer fails to
    converge on some of these tables and L-BFGS can stop short of the maximum, so the fit is
    the highest REML log-likelihood of the derivative-free optimizers that converge."""
    seeds, items = y.shape
    data = pd.DataFrame(
        {
            "y": y.ravel(),
            "seed": np.repeat(np.arange(seeds), items),
            "item": np.tile(np.arange(items), seeds),
            "base": np.repeat(np.asarray(bases), items),
            "group": 0,
        }
    )
    components = {"seed": "0 + C(seed)", "item": "0 + C(item)"}
    if len(set(bases)) > 1:
        components["base_item"] = "0 + C(base):C(item)"
    formula = "y ~ C(base, Sum)" if len(set(bases)) > 1 else "y ~ 1"
    model = smf.mixedlm(
        formula, data, groups="group", re_formula="0", vc_formula=components, use_sparse=True
    )
    fits = []
    for method in MIXED_OPTIMIZERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fit = model.fit(reml=True, method=method)
        if fit.converged:
            fits.append(fit)
    assert fits, "no optimizer converged"
    return max(fits, key=lambda fit: fit.llf)


@pytest.mark.slow
@pytest.mark.parametrize("counts", [(4, 4), (3, 3), (8,)])
def test_the_standard_error_is_the_mixed_models(counts):
    """On a balanced table, away from the boundary of the variance components, REML is the
    ANOVA estimator: the seed term ``W · within`` is ``W (σ̂_a² + σ̂_e²/N)``, the item term is
    ``(σ̂_b² + σ̂_g²/B) / N`` and the standard error is the mixed model's for the intercept,
    up to the optimizer's tolerance (``SE_TOLERANCE``, on the mean SE ratio over the
    replicates). ``MIXED_REGIME`` keeps σ_a² near ten times σ_e²/N, so that REML's truncation
    of a component at 0, where the two would part, does not bind. Dropping the item term or
    counting the residual twice misses the tolerance by several times. With one base the base ×
    item component is the item's own and is not fitted."""
    bases = assign(counts)
    levels = len(counts)
    weight = seed_weight(counts)
    rng = np.random.default_rng(100 + sum(counts))
    ratios = {"based_estimate": [], "no item term": [], "residual twice": []}
    for _ in range(MIXED_REPLICATES):
        y = simulate(rng, bases, MIXED_ITEMS, *MIXED_REGIME)
        estimate = based_estimate(y, bases)
        fit = reml_fit(y, bases)
        assert estimate.mean == pytest.approx(float(fit.fe_params["Intercept"]), abs=1e-9)
        se = float(fit.bse_fe["Intercept"])
        variances = dict(zip(fit.model.exog_vc.names, fit.vcomp, strict=True))
        reml_items = (variances["item"] + variances.get("base_item", 0.0) / levels) / MIXED_ITEMS
        reml_seeds = weight * (variances["seed"] + fit.scale / MIXED_ITEMS)
        assert estimate.seed_term == pytest.approx(reml_seeds, rel=2 * SE_TOLERANCE)
        assert estimate.item_term == pytest.approx(reml_items, rel=2 * SE_TOLERANCE)
        wrong = wrong_estimates(estimate, y, bases)
        assert wrong["residual twice"].item_term > 1.3 * reml_items
        ratios["based_estimate"].append(estimate.se / se)
        for name, value in wrong.items():
            ratios[name].append(value.se / se)
    means = {name: float(np.mean(values)) for name, values in ratios.items()}
    print(f"SE / mixed-model SE, {counts}: {ratios} mean {means}")
    assert all(abs(r - 1) < 2 * SE_TOLERANCE for r in ratios["based_estimate"])
    assert abs(means["based_estimate"] - 1) < SE_TOLERANCE
    assert means["no item term"] < 1 - 4 * SE_TOLERANCE
    assert means["residual twice"] > 1 + 4 * SE_TOLERANCE


COVERAGE_ITEMS = 100
COVERAGE_REPLICATES = 2000
BAND = 3 * math.sqrt(0.95 * 0.05 / COVERAGE_REPLICATES)  # three standard errors: 1.46 points
SD_TOLERANCE = 3 / math.sqrt(2 * COVERAGE_REPLICATES)  # three relative SEs of an SD: 4.7 %
COVERAGE_REGIMES = {  # sd of seed, item, base × item, seed × item residual; the formula it fails
    "items": ((0.01, 0.3, 0.3, 0.1), "no item term"),
    "residual": ((0.02, 0.15, 0.15, 1.0), "residual twice"),
}


@pytest.mark.parametrize("regime", sorted(COVERAGE_REGIMES))
@pytest.mark.parametrize("counts", [(4, 4), (3, 3), (8,)])
def test_coverage_is_95_percent_and_the_wrong_formulas_miss_it(counts, regime):
    """Over datasets simulated with known base effects: the 95 % interval covers the mean of
    the base effects within ``BAND`` of 95 % and the root mean square of the standard error is
    within ``SD_TOLERANCE`` of the estimator's empirical SD. Where the items dominate, dropping
    the item term under-covers beyond the band; where the seed × item residual dominates,
    counting it twice over-covers beyond it, and both miss the empirical SD."""
    parameters, failing = COVERAGE_REGIMES[regime]
    bases = assign(counts)
    target = truth(bases)
    rng = np.random.default_rng(200 + sum(counts) + len(regime))
    names = ("based_estimate", "no item term", "residual twice")
    hits = dict.fromkeys(names, 0)
    variances = {name: [] for name in names}
    means = []
    for _ in range(COVERAGE_REPLICATES):
        y = simulate(rng, bases, COVERAGE_ITEMS, *parameters)
        estimate = based_estimate(y, bases)
        means.append(estimate.mean)
        for name, value in {
            "based_estimate": estimate,
            **wrong_estimates(estimate, y, bases),
        }.items():
            low, high = value.interval()
            hits[name] += low <= target <= high
            variances[name].append(value.se**2)
    spread = float(np.std(means, ddof=1))
    coverage = {name: hits[name] / COVERAGE_REPLICATES for name in names}
    se_ratio = {name: math.sqrt(np.mean(variances[name])) / spread for name in names}
    print(f"{counts} {regime}: coverage {coverage}, RMS SE / empirical SD {se_ratio}")
    assert abs(coverage["based_estimate"] - 0.95) <= BAND
    assert abs(se_ratio["based_estimate"] - 1) <= SD_TOLERANCE
    assert abs(coverage[failing] - 0.95) > BAND
    assert abs(se_ratio[failing] - 1) > 2 * SD_TOLERANCE


# (d) the difference of the two bases


@pytest.mark.parametrize("counts", [(4, 4), (3, 3), (2, 3)])
def test_the_base_difference_is_the_per_base_means_difference_with_its_sampling_sd(counts):
    """``base_difference`` is the difference of the two ``per_base_estimates`` means on every
    table; over simulated datasets the root mean square of its standard error is within
    ``SD_TOLERANCE`` of the difference's empirical SD, while statsmodels' pooled two-sample
    standard error of the per-seed means (no base × item interaction) falls short of it."""
    bases = assign(counts)
    labels = np.asarray(bases)
    rng = np.random.default_rng(300 + sum(counts))
    differences, variances, two_sample = [], [], []
    for _ in range(COVERAGE_REPLICATES):
        y = simulate(rng, bases, COVERAGE_ITEMS, 0.05, 0.3, 0.3, 0.5)
        difference = base_difference(y, bases)
        per_base = per_base_estimates(y, bases)
        assert difference.mean == pytest.approx(per_base[0].mean - per_base[1].mean, abs=1e-12)
        assert difference.seed_df == len(bases) - 2
        differences.append(difference.mean)
        variances.append(difference.se**2)
        seed_values = y.mean(axis=1)
        groups = (DescrStatsW(seed_values[labels == b]) for b in (0, 1))
        two_sample.append(CompareMeans(*groups).std_meandiff_pooledvar ** 2)
    spread = float(np.std(differences, ddof=1))
    ratio = math.sqrt(np.mean(variances)) / spread
    short = math.sqrt(np.mean(two_sample)) / spread
    print(f"difference {counts}: RMS SE / empirical SD {ratio:.4f}, two-sample t {short:.4f}")
    assert np.mean(differences) == pytest.approx(
        BASE_EFFECTS[0] - BASE_EFFECTS[1], abs=3 * spread / math.sqrt(COVERAGE_REPLICATES)
    )
    assert abs(ratio - 1) <= SD_TOLERANCE
    assert short < 1 - 2 * SD_TOLERANCE
