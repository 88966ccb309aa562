"""Tutorial 02's readings: when a longer caption scores higher, read off the numbers of each
section (``docs/methods/himo-clip.md#monotonicity-derivation``,
``docs/methods/himo-clip.md#himo-at-k``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from paperlib.analysis.readings.words import Reading, listing, plural, span, verb, who

CLEAR = 2.0  # a mean counts as away from a level beyond this many standard errors


def _direction(value: float, se: float, up: str, down: str, level: float = 0.0) -> str:
    """``up`` or ``down`` where ``value`` lies beyond ``CLEAR`` standard errors ``se`` from
    ``level``, else ``"no change beyond 2 standard errors"``."""
    if value - CLEAR * se > level:
        return up
    if value + CLEAR * se < level:
        return down
    return f"no change beyond {CLEAR:g} standard errors"


def argument(
    agreement: float, draws: int, crossing: float, exact: bool, published: Mapping[str, float]
) -> Reading:
    """The margin's sign check on random draws, the counterexample's crossing (``exact``: the
    score falls below s₁ exactly where the margin turns negative) and the published HiMo@K of
    Long-CLIP (``published[model]``)."""
    where = "exactly where" if exact else "not exactly where"
    long_clip = published["Long-CLIP"]
    failed = (
        f"and, by the published HiMo@K of Long-CLIP ({long_clip:+.2f}, below 0), something "
        "fine-tuning on long captions can fail to learn"
        if long_clip < 0
        else f"though the published HiMo@K of Long-CLIP ({long_clip:+.2f}) is not below 0"
    )
    return Reading(
        f"The margin's sign matched the score change in {100 * agreement:.1f} % of {draws} random "
        f"draws, and in the counterexample a relevant increment lowers the score once its "
        f"image-orthogonal part exceeds h = {crossing:.2f}, {where} the margin turns negative: "
        "cosine similarity does not make a longer caption score higher by itself, so "
        f"monotonicity is something an encoder has to learn — {failed}."
    )


def full_vs_component(
    share: Mapping[str, float], median: Mapping[str, float], plain: Sequence[str]
) -> Reading:
    """On which side of zero each model puts cos(v, u) − cos(v, u′) (``share``: % of pairs
    right of zero; ``median``: the median difference), and whether MoLo moves the share against
    InfoNCE (λ=0), given the models trained without a component term (``plain``)."""
    right = [label for label, s in share.items() if s > 50]
    shift = share["MoLo"] - share["InfoNCE (λ=0)"]
    ranks = verb(right, list(share), "ranks", "rank")
    text = f"At seed 0 {who(right, list(share))} {ranks} the full caption above its HiDe component "
    text += (
        f"for most pairs ({span([share[label] for label in right], '.1f')} % of pairs right of "
        f"zero, median differences {span([median[label] for label in right], '+.3f')}), as the "
        "paper reads MoLo; "
        if right
        else "for most pairs; "
    )
    if set(plain) <= set(right) and shift <= 0:
        text += (
            f"since the {listing(plain)} models, trained without any component term, do so too "
            f"and MoLo moves the share by {shift:+.1f} points against InfoNCE (λ=0), this "
            "ordering does not come from MoLo's component term at this scale."
        )
    else:
        text += (
            f"MoLo moves the share by {shift:+.1f} points against InfoNCE (λ=0), one run each: "
            "an observation, not a tested claim."
        )
    return Reading(text)


def _steps(steps: Sequence[int]) -> str:
    """Steps k → k + 1 as text: ``2 to 3 and 4 to 5``."""
    return listing(f"{j} to {j + 1}" for j in steps).replace(" and ", " and from k = ")


def _rises(fixed: Mapping[str, np.ndarray]) -> dict[str, tuple[float, float]]:
    """Per model, the mean of s_K − s_1 over the images of its (images, K) scores, and its
    standard error."""
    out = {}
    for label, scores in fixed.items():
        rise = scores[:, -1] - scores[:, 0]
        out[label] = (float(rise.mean()), float(rise.std(ddof=1) / np.sqrt(rise.size)))
    return out


def prefix_curves(
    fixed: Mapping[str, np.ndarray],
    alike: np.ndarray,
    prefixes: np.ndarray,
    context: int,
    base: str,
) -> Reading:
    """Scores over the fixed set of prefixes every tower reads in full (``fixed[model]``: (images,
    K) scores), and what the ``context``-token tower (``base``) reads beyond them: ``alike``, per
    caption, the prefix from which its prefixes read alike, out of its ``prefixes``."""
    n, k = next(iter(fixed.values())).shape
    rises = _rises(fixed)
    words = {label: _direction(r, se, "rises", "falls") for label, (r, se) in rises.items()}
    rising = [label for label, w in words.items() if w == "rises"]
    dips = {
        label: tuple(int(j) + 1 for j in np.flatnonzero(np.diff(f.mean(axis=0)) < 0))
        for label, f in fixed.items()
    }
    cut = alike < prefixes
    listed = ", ".join(f"{label} {r:+.3f} ± {se:.3f}" for label, (r, se) in rises.items())
    text = (
        f"Over the fixed set — all {n} held-out captions, prefixes 1 to {k}, each read in full by "
        f"every tower — the mean score of {who(rising, list(fixed))} rises from the first sentence "
        f"to the {k}th by more than {CLEAR:g} standard errors (mean s_{k} − s_1 at seed 0: "
        f"{listed})"
    )
    falling = {steps for steps in dips.values() if steps}
    if falling:
        text += ", though not at every step: the mean falls " + "; ".join(
            f"from k = {_steps(steps)} in {who([m for m, s in dips.items() if s == steps], list(fixed))}"
            for steps in falling
        )
    text += "."
    if cut.any():
        text += (
            f" Beyond prefix {k} some prefixes no longer fit the {context}-token {base} tower's "
            f"context: for {int(cut.sum())} of the {n} captions every prefix from prefix "
            f"{span(alike[cut], 'd')} (by caption) on reads the same tokens as the whole caption, "
            "so its scores there are equal by construction and say nothing about monotonicity."
        )
    point = (
        f"Over the first {k} prefixes, which every tower reads in full, the mean score of "
        f"{who(rising, list(fixed))} rises with added text (s_{k} − s_1 "
        f"{span([r for r, _ in rises.values()], '+.2f')}, seed 0)."
    )
    return Reading(text, point)


def himo_k(rhos: Mapping[str, np.ndarray], chance: float) -> Reading:
    """Each model's HiMo@K (the mean of its per-image ρ) against its ``chance`` level, with the
    standard error over images, and the share of images with ρ < 0."""
    parts, above = [], []
    for label, rho in rhos.items():
        mean, se = float(rho.mean()), float(rho.std(ddof=1) / np.sqrt(rho.size))
        if _direction(mean, se, "above", "below", chance) == "above":
            above.append(label)
        parts.append(
            f"{label} {mean:+.2f} ± {se:.2f}, {100 * np.mean(rho < 0):.0f} % of images with ρ < 0"
        )
    falling = [label for label, rho in rhos.items() if np.any(rho < 0)]
    return Reading(
        f"At seed 0 the HiMo@K of {who(above, list(rhos))} lies above its chance level "
        f"{chance:g} by more than {CLEAR:g} standard errors over images ({'; '.join(parts)}). "
        + (
            f"The mean hides the spread: {who(falling, list(rhos))} "
            f"{verb(falling, list(rhos), 'has', 'have')} images whose scores fall with added text."
            if falling
            else "No image's scores fall with added text overall."
        )
    )


def k10_case(summary: pd.DataFrame, molo: str = "MoLo") -> Reading:
    """The K = 10 failure case: per model (rows), the share of images with a fall, the share
    rising overall and the median largest fall, MoLo's against the others'."""
    mine = summary.loc[molo]
    others = summary.drop(index=molo)
    ratio = others["median largest fall"] / mine["median largest fall"]
    larger = (
        "much larger, as in the paper's failure case"
        if ratio.min() >= 2
        else "not the much larger falls of the paper's failure case"
    )
    return Reading(
        f"At K = 10 MoLo's score falls at least once on {100 * mine['share with ≥ 1 fall']:.0f} % "
        f"of the images and still rises overall (ρ > 0) on "
        f"{100 * mine['share rising overall (ρ > 0)']:.0f} %, while the other models' median "
        f"largest falls are {span(ratio, '.2f')} times MoLo's: {larger} (seed 0)."
    )


def takeaway(
    himo_k_values: Mapping[str, Mapping | None],
    chance: float,
    base: str,
    base_fixed: np.ndarray,
    tally: Mapping[str, int],
    contradicts: str,
) -> Reading:
    """The short-caption tower's HiMo@K over seeds (``himo_k_values[model]``: mean, 95 %
    ``interval``, seeds) and its seed-0 rise over the fixed prefixes (``base_fixed``: (images,
    K) scores), against HiMo@K's chance; whether every model's interval lies above chance; and
    how many verdicts (``tally``: verdict → claims) contradict."""
    pre = himo_k_values.get(base)
    decided = sum(tally.values())
    against = tally.get(contradicts, 0)
    closing = (
        f"{against or 'none'} of the {decided} monotonicity verdicts "
        f"{plural(against, 'contradicts', 'contradict')} the paper."
    )
    if pre is None:
        return Reading(closing[0].upper() + closing[1:])
    low, high = pre["interval"]
    (rise, se), k = _rises({base: base_fixed})[base], base_fixed.shape[1]
    direction = _direction(rise, se, "rise", "fall")
    every = all(v["interval"][0] > chance for v in himo_k_values.values() if v)
    text = (
        f"Within the {k} prefixes it reads in full, the short-caption pre-trained tower's scores "
        f"{direction if direction in ('rise', 'fall') else 'show ' + direction} with added text "
        f"(mean s_{k} − s_1 {rise:+.3f} ± {se:.3f} at seed 0), and over {len(pre['seeds'])} "
        f"seed(s) its HiMo@K is {pre['mean']:+.3f} [{low:+.3f}, {high:+.3f}], "
        + ("above" if low > chance else "below" if high < chance else "level with")
        + f" its chance level {chance:g}"
        + (
            "; every model's HiMo@K interval lies above chance, so the “more detail, worse "
            "alignment” the paper reports for Long-CLIP does not occur at this scale: the HiMo@ "
            f"claims compare models whose scores all rise with added text, and {closing}"
            if every
            else f"; {closing}"
        )
    )
    return Reading(text)
