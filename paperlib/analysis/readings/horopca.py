"""Tutorial 04's readings: what HoroPCA did to one model's points, what each disc view shows of
the hierarchy, the norms per level, and the crops ARGENT's intra weight is about
(``docs/methods/conventions.md#horopca``, ``docs/methods/argent.md#adaptive-weights``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from paperlib.analysis.hyperbolic import LEVEL_NAMES, Layout, LevelNorms
from paperlib.analysis.readings.words import Reading, listing, number, verb, who

CLEAR = 2.0  # a share counts as beyond chance past this many standard deviations of chance
SHORT = ("level 1", "level 2", "level 3", "level 4", "images")  # LEVEL_NAMES, short


def points(distinct: Mapping[str, np.ndarray]) -> Reading:
    """How many distinct points each level gives (``distinct[model]``: counts per level)."""
    fewer = all(10 * n[0] <= n[3] for n in distinct.values())
    counted = ", ".join(
        f"{model} {n[0]} distinct level-1 and {n[3]} distinct level-4 captions"
        for model, n in distinct.items()
    )
    return Reading(
        f"Before the subsample the models have {counted}: "
        + (
            "the general levels contribute far fewer points to the views than the specific ones."
            if fewer
            else "the general levels are not much smaller groups than the specific ones here."
        )
    )


def horopca_steps(model: str, mean_distance: float, variance: tuple[float, float]) -> Reading:
    """What the three steps did to ``model``'s points: the Fréchet mean's distance from the
    model's origin, and the projected variance (mean squared distance from O in the plane) at
    the tangent-PCA start and after the ideal points were optimised (``variance``)."""
    start, end = variance
    raised = "raise" if end > start else "do not raise"
    return Reading(
        f"{model}'s Fréchet mean lies {mean_distance:.3f} (unit curvature) from the model's "
        "origin, so after centring the disc's centre is the mean, not O; the optimised ideal "
        f"points {raised} the projected variance from {start:.4f} at tangent PCA's directions to "
        f"{end:.4f}."
    )


def _order(tau: tuple[float, float, float]) -> str:
    """``outward``, ``inward`` or ``unordered`` as τ's interval lies above, below or across 0."""
    return "outward" if tau[1] > 0 else "inward" if tau[2] < 0 else "unordered"


def _tau(tau: tuple[float, float, float]) -> str:
    return f"τ {number(tau[0], '+.2f')} [{number(tau[1], '+.2f')}, {number(tau[2], '+.2f')}]"


def view(method: str, layouts: Mapping[str, Layout]) -> Reading:
    """What one view (``method``) shows of each model's hierarchy (``layouts[model]``): whether
    distance from the projected origin grows with the level (Kendall's τ of level against it,
    with its bootstrap interval; images count as the fifth level), the median distance per
    level, and whether points sit among points of their own level beyond chance."""
    models = list(layouts)
    orders = {m: _order(lay.tau) for m, lay in layouts.items()}
    words = {
        "outward": "sit farther from O the more specific the level (by rank, images counted "
        "as the most specific), the layout the losses ask for",
        "inward": "sit nearer O the more specific the level (by rank), against the layout the "
        "losses ask for",
        "unordered": "are not ordered by distance from O",
    }
    parts = []
    for order in dict.fromkeys(orders.values()):
        these = [m for m in models if orders[m] == order]
        taus = ", ".join(f"{m} {_tau(layouts[m].tau)}" for m in these)
        parts.append(f"the levels of {who(these, models)} {words[order]} ({taus})")
    medians = "; ".join(
        f"{m} " + ", ".join(f"{layouts[m].medians[i]:.2f}" for i in sorted(layouts[m].medians))
        for m in models
    )
    grouped = [
        m for m, lay in layouts.items() if lay.neighbours > lay.chance[0] + CLEAR * lay.chance[1]
    ]
    k = next(iter(layouts.values())).k
    shares = ", ".join(
        f"{m} {lay.neighbours:.0%} against {lay.chance[0]:.0%} ± {lay.chance[1]:.1%}"
        for m, lay in layouts.items()
    )
    text = (
        f"**{method}.** In this view {'; '.join(parts)}. Median distance from O, levels 1–4 then "
        f"images: {medians}. Of each point's {k} nearest neighbours in the view, the share at its "
        f"own level is {shares} with the levels shuffled: "
        + (
            f"{who(grouped, models)} {verb(grouped, models, 'keeps', 'keep')} points of one level "
            "together beyond chance"
            if grouped
            else "no model keeps points of one level together beyond chance"
        )
        + "."
    )
    if method == "UMAP":
        text += " UMAP keeps neighbourhoods, not distances: its radial order is not evidence."
        keeps = verb(grouped, models, "keeps", "keep")
        return Reading(text, f"UMAP: {who(grouped, models)} {keeps} levels together beyond chance.")
    outward = [m for m in models if orders[m] == "outward"]
    order = verb(outward, models, "orders", "order")
    return Reading(text, f"{method}: {who(outward, models)} {order} the levels outward from O.")


def distortions(table: Mapping[str, Mapping[str, tuple[float, float]]]) -> Reading:
    """Which view keeps the model's distances better (``table[model][method]``: distortion and
    distortion at the best uniform scale)."""
    models = list(table)
    horo = [m for m in models if table[m]["HoroPCA"][0] < table[m]["tangent PCA"][0]]
    tangent = [m for m in models if m not in horo]
    umap = {m: table[m]["UMAP"] for m in models}
    scale_only = all(b < a / 2 for a, b in umap.values())
    better = (
        "every model" if not tangent else "no model" if not horo
        else f"{listing(horo)} and not for {listing(tangent)}"
    )  # fmt: skip
    return Reading(
        f"HoroPCA keeps the distances better than tangent PCA for {better}; UMAP's distortion "
        f"falls from {', '.join(f'{a:.2f}' for a, _ in umap.values())} to "
        f"{', '.join(f'{b:.2f}' for _, b in umap.values())} ({listing(models)}) at its best "
        "uniform rescaling, so most of its raw distortion "
        + ("is its arbitrary scale." if scale_only else "is not its scale alone.")
    )


def _sequence(values: Sequence[float], names: Sequence[str]) -> str:
    """The runs of rises and falls of ``values`` along ``names``: ``rises from level 1 to level
    3 and falls to level 4``."""
    steps = np.sign(np.diff(values))
    parts, start = [], 0
    for i in range(1, len(steps) + 1):
        if i == len(steps) or steps[i] != steps[start]:
            word = {1: "rises", -1: "falls", 0: "stays"}[int(steps[start])]
            parts.append(f"{word} {'from ' + names[start] + ' ' if not parts else ''}to {names[i]}")
            start = i
    return listing(parts)


def _interval(value: tuple[float, float, float], fmt: str = "+.2f") -> str:
    return f"{number(value[0], fmt)} [{number(value[1], fmt)}, {number(value[2], fmt)}]"


def norms(levels: Mapping[str, LevelNorms]) -> Reading:
    """The norms per level (``levels[model]``, ``analysis.hyperbolic.level_norms``): each
    model's median norm at levels 1–4 and of the images, Kendall's τ of level against norm with
    its interval, each image against its own level-4 caption, and the shares inside 2K/√c."""
    models = list(levels)
    medians = {m: [levels[m].quartiles[name][1] for name in LEVEL_NAMES] for m in models}
    shape = "; ".join(
        f"{m} {', '.join(f'{v:.3f}' for v in medians[m][:4])}, images {medians[m][4]:.3f} "
        f"(it {_sequence(medians[m], SHORT)})"
        for m in models
    )
    read_as = {"outward": "more specific captions farther out", "inward": "more specific "
               "captions nearer the origin", "unordered": "no order"}  # fmt: skip
    taus = ", ".join(
        f"{m} {_interval(lv.tau)} ({read_as[_order(lv.tau)]})" for m, lv in levels.items()
    )
    out = [m for m, lv in levels.items() if lv.beyond[0] - CLEAR * lv.beyond[1] > 0.5]
    within = [m for m, lv in levels.items() if lv.beyond[0] + CLEAR * lv.beyond[1] < 0.5]
    images = ", ".join(f"{m} {lv.beyond[0]:.0%} ± {lv.beyond[1]:.0%}" for m, lv in levels.items())
    held = "; ".join(
        f"{m}: captions {lv.inside['captions']:.0%}, images {lv.inside['image']:.0%}"
        for m, lv in levels.items()
    )
    most = [m for m, lv in levels.items() if max(lv.inside.values()) > 0.5]
    text = (
        f"Median norm at levels 1–4, then of the images: {shape}. Kendall's τ between level and "
        f"norm over the distinct captions, with its bootstrap interval: {taus}; τ weighs every "
        "pair of distinct captions at different levels, so the most numerous levels weigh most, and "
        "the medians show where the order breaks. Each image's norm "
        f"exceeds its own level-4 caption's for {images} of the images: "
        + (f"{who(out, models)} {verb(out, models, 'places', 'place')} images beyond their "
           "captions" if out else "")
        + ("; " if out and within else "")
        + (f"{who(within, models)} {verb(within, models, 'places', 'place')} them inside"
           if within else "")
        + ("" if out or within else "no model places them clearly on either side")
        + f". Inside the radius 2K/√c of each model's curvature: {held}"
        + (f" — most of some group's points, in {listing(most)}." if most else " — under half of every group.")
    )  # fmt: skip
    return Reading(text, f"Caption norm against level (Kendall's τ): {taus}.")


def norm_table(levels: Mapping[str, LevelNorms]) -> pd.DataFrame:
    """Per (model, group): the median norm, its quartiles and the share inside 2K/√c."""
    return pd.DataFrame(
        {
            (m, group): {
                "median": f"{q[1]:.3f}",
                "quartiles": f"{q[0]:.3f}–{q[2]:.3f}",
                "inside 2K/√c": f"{lv.inside[group]:.0%}",
            }  # fmt: skip
            for m, lv in levels.items()
            for group, q in lv.quartiles.items()
        }
    ).T


def distortion_table(table: Mapping[str, Mapping[str, tuple[float, float]]]) -> pd.DataFrame:
    """Per (model, view): its distortion and its distortion at the best uniform scale."""
    return pd.DataFrame(
        {
            (m, view): {"distortion": d, "at best scale": s}
            for m, row in table.items()
            for view, (d, s) in row.items()
        }
    ).T.round(3)


def crops(
    distance: Mapping[str, Mapping[str, float]],
    weight: Mapping[str, Mapping[str, float]],
    nearer: Mapping[str, tuple[float, float, float]],
) -> Reading:
    """The crops ARGENT's intra weight is about: per model the median distance from each kind of
    crop to its image (``distance[model][kind]``), the median weight h (``weight``), and the
    difference of the medians near-full − object with its bootstrap interval (``nearer``)."""
    models = list(distance)
    closer = [m for m, d in nearer.items() if d[2] < 0]
    farther = [m for m, d in nearer.items() if d[1] > 0]
    listed = ", ".join(
        f"{m} {distance[m]['near-full crop']:.2f} / {distance[m]['object crop']:.2f} "
        f"(difference {_interval(nearer[m])})"
        for m in models
    )
    weights = ", ".join(
        f"{m} {weight[m]['near-full crop']:.2f} / {weight[m]['object crop']:.2f}" for m in models
    )
    text = (
        f"Median d_L from crop to its image, near-full / object: {listed}. "
        + (f"Near-full crops sit nearer their image in {who(closer, models)}" if closer else "")
        + ("; " if closer and farther else "")
        + (f"farther in {who(farther, models)}" if farther else "")
        + ("" if closer or farther else "No model places near-full crops clearly nearer")
        + f". The median weights h, near-full / object, are {weights}: "
        + (
            "the weight discounts near-full crops on the embeddings where they sit nearer."
            if closer
            else "where near-full crops do not sit nearer, the weight does not discount them."
        )
    )
    point = (
        f"Near-full crops sit nearer their image than object crops in {who(closer, models)}, "
        "so ARGENT's intra weight discounts them there."
        if closer
        else "Near-full crops do not sit clearly nearer their image in any model."
    )
    return Reading(text, point)
