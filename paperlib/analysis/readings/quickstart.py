"""Tutorial 00's readings: the pre-trained base's training, and what its similarity matrices
show against the untrained model's (``docs/methods/himo-clip.md#inference``)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from paperlib.analysis.readings.words import Reading, listing, number

PICKS_MEAN = "picks the mean image's caption"  # the share of images that do, per model
PICKS_OWN = "picks its own caption"
METRIC_NAMES = {
    "zeroshot_L1": "zero-shot accuracy over the super-categories",
    "short_i2t_r1": "short-caption image→text R@1",
}


def _plateau_clause(check) -> str:
    """One validation curve's plateau check (``study.plan.plateau.Plateau`` without δ) in words."""
    low, high = check.interval
    where = "wholly above 0" if low > 0 else "wholly below 0" if high < 0 else "which includes 0"
    state = "flat" if check.reached else "still rising"
    name = METRIC_NAMES.get(check.metric, check.metric)
    gain, low, high = (number(x, "+.3f") for x in (check.gain, low, high))
    return f"{name} is {state} ({gain}, 95 % interval {low} to {high}, {where})"


def base_training(base: int, weights: str, steps: int, checks: Mapping[str, object]) -> Reading:
    """How long the base trained and, per validation curve it checks, the plateau rule's reading
    (``checks[metric]``: ``study.plan.plateau.plateau_check`` of the recorded curve, no δ: a base
    answers to no claim, so a curve is still rising where its gain's interval lies above 0;
    ``docs/methods/conventions.md#verdicts``)."""
    first = next(iter(checks.values()))
    window = f"steps {first.start[0]:,}–{first.end[0]:,}, {first.points} points"
    return Reading(
        f"Base {base} (`{weights}`) trained {steps:,} steps on the world's short captions. Over "
        f"the last 40 % of its schedule ({window}) the plateau rule finds "
        f"{listing(_plateau_clause(c) for c in checks.values())}."
    )


def similarity(table: pd.DataFrame, shown: int, held_out: int) -> Reading:
    """How many images score their own caption highest, per model (rows of ``table``:
    ``shown own``, ``held-out own`` as a share, ``min`` and ``max`` similarity), against chance."""
    parts = [
        f"{name}: {int(row['shown own'])} of the {shown} shown images and "
        f"{row['held-out own']:.1%} of the {held_out} held-out ones score their own caption "
        f"highest (similarities {row['min']:.3f} to {row['max']:.3f})"
        for name, row in table.iterrows()
    ]
    return Reading(
        "; ".join(parts)
        + f"; chance is 1 in {shown} among the shown, {1 / held_out:.1%} among all."
    )


def common_component(
    before: Mapping[str, float], after: Mapping[str, float], held_out: int, shown: Mapping
) -> Reading:
    """Why the untrained model lights up one caption column: the mean pairwise cosines of its
    image and caption features (``before``) against the trained base's (``after``), the share of
    images picking the mean image's caption, and in the figure (``shown``: ``picked`` of
    ``images`` shown pick caption ``column``, the mean shown image's pick)."""
    images, captions = "image–image cosine", "caption–caption cosine"
    tower = "image" if before[images] > before[captions] else "caption"
    spread = [
        f"the {name} features (mean cosine {before[key]:.4f} → {after[key]:.4f})"
        for name, key in (("image", images), ("caption", captions))
        if after[key] < before[key]
    ]
    kept = [
        name
        for name, key in (("image", images), ("caption", captions))
        if after[key] >= before[key]
    ]
    text = (
        f"In the untrained model the features of different images have a mean cosine of "
        f"{before[images]:.4f} and those of different captions {before[captions]:.4f}: the "
        f"common component sits mostly in the {tower} features, and "
        f"{before[PICKS_MEAN]:.0%} of the {held_out} images pick the "
        f"caption the mean image feature picks (in the figure, {shown['picked']} of the "
        f"{shown['images']} shown images pick caption {shown['column']}, the mean shown image's "
        "pick), whatever the image shows. "
    )
    if spread:
        text += f"Pre-training spreads {listing(spread)}"
        text += f", but not the {listing(kept)} features" if kept else ""
    else:
        text += "Pre-training does not spread the features"
    text += (
        f", and {after[PICKS_OWN]:.1%} of the images pick their own caption "
        f"against {before[PICKS_OWN]:.1%} before."
    )
    return Reading(text)
