"""The decision rule: from an effect, its family's tests and its simultaneous interval to a verdict.

A claim says ``variant`` beats ``baseline`` on a per-item metric (``better``: "higher" or
"lower"). Its *family* is every claim of its paper, declared with the claims
(``tables.claims.FAMILIES``) before any result is read, so its size never depends on the data.
The study estimates the paired effect with the pre-trained base as a fixed level
(``tables.inference.based_estimate``) and decides one of :data:`VERDICTS`
(:func:`verdict`; ``docs/methods/conventions.md#verdicts``):

1. ``untestable`` (:func:`untestable_reason`, on *point values*): a model did not learn (its
   guard metric's mean does not clear the guard's threshold), a side's mean lies within the
   smallest effect of interest δ of the metric's chance level (a learned model's too: a
   metric at chance reads nothing), the baseline leaves less than δ to the best value or to
   chance, or both sides lie within δ of the best value.
2. ``underpowered``: the valid seeds give the seed variance fewer than :data:`MIN_SEED_DF`
   within-base degrees of freedom (e.g. 2 + 1 seeds over two bases: one), so no interval is
   estimated. The claim stays in its family with p = 1, and its design note says how many
   seeds per base would resolve δ.
3. ``at ceiling`` (:func:`ceiling_reason`): the baseline leaves less room to the metric's best
   value than the paper's own effect (in the paper's units), so that effect cannot occur here;
   the sign the data give is recorded in the reason, never read as a contradiction.
4. ``negligible``: the two one-sided tests of ``|effect| < δ``, Holm-adjusted over the family,
   reject (an equivalence established at the family level). Where the sign test rejects too,
   the label names the sign: ``negligible, with the paper's sign`` or ``…the other sign``.
5. The sign, decided by Holm over the family (two-sided p of "effect = 0"). With the sign on
   the other side: ``contradicts`` when the simultaneous interval lies beyond −δ. Where the
   metric is in the paper's units and the simultaneous interval lies wholly below the paper's
   effect: ``reproduces in sign, below the published effect`` with the paper's sign
   established, ``below the published effect`` whatever the sign test says otherwise. With the
   paper's sign: ``reproduces`` when the simultaneous interval lies beyond +δ.
6. Everything else is ``inconclusive`` (with the sign established but its size not, the reason
   says so), provided the claim's design resolves δ (its design note,
   ``tables.inference.design_note``): where the test items alone put the simultaneous
   half-width at or above δ (the item floor) it is ``unresolvable at this test set``, and where
   more seeds per base would resolve it, ``underpowered`` with that count
   (:func:`design_verdict`).

The simultaneous interval is Bonferroni's at the family's size: its level does not depend on
the claim's own p-value, so it shows size while Holm decides. Where the base × method
interaction is significant (:data:`INTERACTION_ALPHA`, Holm-adjusted over the family) the
verdict is given per base, each by
the same rule from that base's own effect, with its p-values Bonferroni-adjusted at the
family's size; they are summed up as :data:`BASE_DEPENDENT` when they differ.

A run whose contrastive loss stays within 1 % of ln B over its last fifth, or whose features
hardly vary (:func:`collapse_reason`), is collapsed; the study leaves it out and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

REPRODUCES = "reproduces"
SMALLER = "reproduces in sign, below the published effect"
BELOW_PUBLISHED = "below the published effect"
AT_CEILING = "at ceiling"
CONTRADICTS = "contradicts"
NEGLIGIBLE = "negligible"
NEGLIGIBLE_PAPER_SIGN = "negligible, with the paper's sign"
NEGLIGIBLE_OTHER_SIGN = "negligible, with the other sign"
INCONCLUSIVE = "inconclusive"
UNDERPOWERED = "underpowered"
UNRESOLVABLE = "unresolvable at this test set"
UNTESTABLE = "untestable"
BASE_DEPENDENT = "depends on the base"
NOT_RUN = "not run yet"  # a partial study: none of the claim's planned runs has finished
VERDICTS = (
    REPRODUCES, SMALLER, BELOW_PUBLISHED, CONTRADICTS, NEGLIGIBLE, NEGLIGIBLE_PAPER_SIGN,
    NEGLIGIBLE_OTHER_SIGN, AT_CEILING, INCONCLUSIVE, UNDERPOWERED, UNRESOLVABLE, UNTESTABLE,
    BASE_DEPENDENT, NOT_RUN,
)  # fmt: skip
# the verdicts of a claim the study could not decide at its scale (README and notebook 05 alike)
UNDECIDED = (UNDERPOWERED, UNRESOLVABLE, INCONCLUSIVE)
# the claims the study could not test here, or whose two bases split
NOT_TESTED = (AT_CEILING, UNTESTABLE, BASE_DEPENDENT)
COLLAPSE_LOSS_FRACTION = 0.01  # loss within 1 % of ln B over the last fifth of training
COLLAPSE_FEATURE_STD = 1e-3  # features whose std over the test set is below this
# no interval from fewer within-base degrees of freedom: with one, the family-level t is in the
# hundreds (2 + 1 seeds over two bases give intervals as wide as the metric's whole range)
MIN_SEED_DF = 2
INTERACTION_ALPHA = 0.05  # the base × method test that splits a verdict by base


def better_sign(better: str) -> float:
    """+1 where a higher value is better, -1 where a lower one is (any other word: an error)."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower'; got {better!r}")
    return 1.0 if better == "higher" else -1.0


def near(value: float, level: float | None, smallest: float) -> bool:
    """A point value lies within the smallest effect of interest of a level."""
    return level is not None and abs(value - level) < smallest


def headroom(
    baseline: float, chance: float | None, ceiling: float, better: str, smallest: float
) -> bool:
    """Whether the baseline's mean leaves room for an effect of ``smallest`` either way: at
    least that much between it and the best value (the paper's side) and, where the metric has
    a chance level, between it and chance (the other side)."""
    room_up = better_sign(better) * (ceiling - baseline)
    room_down = math.inf if chance is None else abs(baseline - chance)
    return room_up >= smallest and room_down >= smallest


def untestable_reason(
    variant: float,
    baseline: float,
    chance: float | None,
    ceiling: float,
    better: str,
    smallest: float,
) -> str | None:
    """Why a comparison cannot be tested (step 1 of the module docstring), or None, from the
    two sides' *mean* values (never from an interval's width)."""
    better_sign(better)
    for name, value in (("variant", variant), ("baseline", baseline)):
        if near(value, chance, smallest):
            return (
                f"the {name}'s mean {value:.4g} lies within ±{smallest:g} of chance ({chance:.4g})"
            )
    if near(variant, ceiling, smallest) and near(baseline, ceiling, smallest):
        return f"both means lie within ±{smallest:g} of the metric's best value ({ceiling:g})"
    if not headroom(baseline, chance, ceiling, better, smallest):
        return (
            f"the baseline ({baseline:.4g}) leaves less than the smallest effect of "
            f"interest ({smallest:g}) to the best value ({ceiling:g})"
            + ("" if chance is None else f" or to chance ({chance:.4g})")
        )
    return None


def signed(interval: tuple[float, float], better: str) -> tuple[float, float]:
    """The interval of the effect with the paper's direction positive."""
    low, high = interval
    return (low, high) if better_sign(better) > 0 else (-high, -low)


@dataclass(frozen=True)
class Evidence:
    """What a verdict is decided from (steps 3-6 of the module docstring)."""

    effect: float  # variant − baseline, in the metric's units
    simultaneous: tuple[float, float]  # the family-level interval of the effect
    p_sign: float  # Holm-adjusted two-sided p of "effect = 0"
    p_equivalence: float  # Holm-adjusted TOST p of "|effect| < smallest"
    better: str
    smallest: float
    paper_effect: float | None = None  # the published effect, in the study's units
    paper_units: bool = False  # whether the metric is the paper's quantity (sizes compare)
    alpha: float = 0.05
    room: float | None = None  # the baseline's mean distance to the best value, paper's side


def ceiling_reason(evidence: Evidence) -> str | None:
    """Step 3: why the paper's effect cannot occur at this baseline (it leaves less room to
    the best value than the published effect, both in the paper's units), or None."""
    e = evidence
    if e.room is None or not e.paper_units or e.paper_effect is None:
        return None
    paper = better_sign(e.better) * e.paper_effect
    if paper <= 0 or e.room >= paper:
        return None
    return (
        f"the baseline leaves {e.room:.3g} to the best value, less than the paper's effect "
        f"{e.paper_effect:+.3g}"
    )


def _sign_words(evidence: Evidence) -> str:
    """The sign the data give and whether Holm establishes it."""
    e = evidence
    side = "the paper's sign" if better_sign(e.better) * e.effect > 0 else "the other sign"
    status = "established" if e.p_sign < e.alpha else "not established"
    return f"{side}, {status} (Holm p = {e.p_sign:.3g})"


def verdict(evidence: Evidence) -> tuple[str, str]:
    """Steps 3-6 of the module docstring: the verdict and its reason."""
    e = evidence
    if not e.smallest > 0:
        raise ValueError(f"smallest must be positive; got {e.smallest}")
    if ceiling := ceiling_reason(e):
        return AT_CEILING, f"{ceiling}; {_sign_words(e)}"
    paper_side = better_sign(e.better) * e.effect > 0
    sign_known = e.p_sign < e.alpha
    if e.p_equivalence < e.alpha:
        label = NEGLIGIBLE
        if sign_known:
            label = NEGLIGIBLE_PAPER_SIGN if paper_side else NEGLIGIBLE_OTHER_SIGN
        return label, (
            f"equivalent within ±{e.smallest:g} (two one-sided tests, Holm p = "
            f"{e.p_equivalence:.3g}); {_sign_words(e)}"
        )
    low, high = signed(e.simultaneous, e.better)
    if sign_known and not paper_side and high < -e.smallest:
        return CONTRADICTS, f"{_sign_words(e)}, the interval beyond −{e.smallest:g}"
    paper = None if e.paper_effect is None else better_sign(e.better) * e.paper_effect
    if e.paper_units and paper is not None and paper > 0 and high < paper:
        label = SMALLER if sign_known and paper_side else BELOW_PUBLISHED
        return label, f"{_sign_words(e)}, the interval below the paper's {e.paper_effect:+.3g}"
    if sign_known and paper_side and low > e.smallest:
        return REPRODUCES, f"{_sign_words(e)}, the interval beyond +{e.smallest:g}"
    if not sign_known:
        return INCONCLUSIVE, f"the sign is not established (Holm p = {e.p_sign:.3g})"
    bound = f"+{e.smallest:g}" if paper_side else f"−{e.smallest:g}"
    return INCONCLUSIVE, f"{_sign_words(e)}, its size not shown beyond {bound}"


def design_verdict(
    label: str, reason: str, note: dict | None, interval: list[float] | None = None
) -> tuple[str, str]:
    """Step 6's reading of an undecided claim against its design note (``DesignNote.as_dict``):
    an item floor at or above δ makes it :data:`UNRESOLVABLE`; a design that does not resolve δ
    makes it :data:`UNDERPOWERED`, judged on the simultaneous ``interval`` the valid seeds gave
    where there is one (runs left out can leave fewer seeds than planned), else on the note's
    planned design. A decided claim, or one without a note, keeps its label."""
    if label not in (INCONCLUSIVE, UNDERPOWERED) or note is None:
        return label, reason
    if note["item_floor"] is not None and note["item_floor"] >= note["delta"]:
        return UNRESOLVABLE, f"{reason}; {note['reason']}"
    if interval is not None:
        achieved = (interval[1] - interval[0]) / 2
        if label == INCONCLUSIVE and achieved < note["delta"]:
            return label, reason
        return UNDERPOWERED, (
            f"{reason}; the valid seeds give ±{achieved:.3g} against δ = {note['delta']:g}; "
            f"{note['reason']}"
        )
    committed = note["half_width"]
    if label == INCONCLUSIVE and committed is not None and committed < note["delta"]:
        return label, reason
    return UNDERPOWERED, f"{reason}; {note['reason']}"


def collapse_reason(losses: list[float], batch_size: int, feature_std: float) -> str | None:
    """Why a run counts as collapsed, or None: its contrastive loss stayed within 1 % of
    ln B over the last fifth of its logged steps (nothing was told apart), or its features
    hardly vary over the test set (std below :data:`COLLAPSE_FEATURE_STD`)."""
    if feature_std < COLLAPSE_FEATURE_STD:
        return f"feature std {feature_std:.2e} < {COLLAPSE_FEATURE_STD:g}"
    if losses:
        tail = losses[-max(1, len(losses) // 5) :]
        level = math.log(batch_size)
        if abs(float(np.mean(tail)) - level) <= COLLAPSE_LOSS_FRACTION * level:
            return f"contrastive loss {np.mean(tail):.3f} within 1% of ln B = {level:.3f}"
    return None
