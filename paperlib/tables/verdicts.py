"""The decision rule: from a claim's displayed interval to its label.

A claim says ``variant`` beats ``baseline`` on a per-item metric (``better``: "higher" or
"lower"). The study estimates the paired effect with the pre-trained base as a fixed level
(``tables.inference.based_estimate``) and shows its simultaneous interval, at the level the
study's one error statement gives it (``tables.error_control``). Every label is read off that
interval, so a label never says more than the interval beside it
(``docs/methods/conventions.md#verdicts``). With δ the claim's smallest effect of interest and
``T`` the paper's effect carried onto the study's scale (``tables.smallest_effect``), and the
interval ``[lo, hi]`` signed so that the paper's side is positive (:func:`verdict`):

- ``negligible``: the interval lies inside ``(−δ, +δ)``; ``…, with the paper's sign`` or
  ``…, with the other sign`` where it also excludes 0;
- ``reproduces``: the interval lies beyond ``+δ``; ``reproduces, below the published effect``
  where it also lies below ``T`` and the metric is the quantity the paper reports;
- ``contradicts``: the interval lies beyond ``−δ``;
- ``reproduces in sign, below the published effect``: the interval excludes 0 on the paper's
  side and lies below ``T`` (the paper's quantity), its size not shown beyond ``+δ``;
- else ``inconclusive`` (with the sign where the interval excludes 0), read against the claim's
  design (:func:`design_verdict`): ``unresolvable at this test set`` where the test items alone
  put the half-width at or above δ, ``underpowered`` where more seeds would resolve it.

Before any of these: ``premise fails here`` where the baseline does not do what the paper says
it does (``study.premise``; the claim is not decided, and its reason still says what the
interval shows); ``untestable`` where a model did not learn, forgot its base or sits at chance;
``differs between the two bases`` where the two bases' effects differ by more than δ with
confidence (:func:`differs_between_bases`; each base's own label is given beside it).

A run whose contrastive loss stays within 1 % of ln B over its last fifth, or whose features
hardly vary (:func:`collapse_reason`), is collapsed; the study leaves it out and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

REPRODUCES = "reproduces"
REPRODUCES_BELOW = "reproduces, below the published effect"
SMALLER = "reproduces in sign, below the published effect"
CONTRADICTS = "contradicts"
NEGLIGIBLE = "negligible"
NEGLIGIBLE_PAPER_SIGN = "negligible, with the paper's sign"
NEGLIGIBLE_OTHER_SIGN = "negligible, with the other sign"
INCONCLUSIVE = "inconclusive"
UNDERPOWERED = "underpowered"
UNRESOLVABLE = "unresolvable at this test set"
UNTESTABLE = "untestable"
PREMISE_FAILS = "premise fails here"
DIFFERS_BY_BASE = "differs between the two bases"
DID_NOT_LEARN = "did not learn the world at this budget"
NEAR_COPIES = "the arms are near-copies"
NOT_RUN = "not run yet"  # a partial study: none of the claim's planned runs has finished
VERDICTS = (
    REPRODUCES, REPRODUCES_BELOW, SMALLER, CONTRADICTS, NEGLIGIBLE, NEGLIGIBLE_PAPER_SIGN,
    NEGLIGIBLE_OTHER_SIGN, INCONCLUSIVE, UNDERPOWERED, UNRESOLVABLE, UNTESTABLE, PREMISE_FAILS,
    DIFFERS_BY_BASE, DID_NOT_LEARN, NEAR_COPIES, NOT_RUN,
)  # fmt: skip
# what each label says, in one line (the README's legend)
MEANINGS = {
    REPRODUCES: "the interval lies beyond +δ: an effect of interest, on the paper's side",
    REPRODUCES_BELOW: "beyond +δ, and below the paper's effect on this scale",
    SMALLER: "the paper's sign is established, below the paper's effect, not shown beyond +δ",
    CONTRADICTS: "the interval lies beyond −δ: an effect of interest, on the other side",
    NEGLIGIBLE: "the interval lies inside ±δ: smaller than half the paper's effect here",
    NEGLIGIBLE_PAPER_SIGN: "inside ±δ and above 0",
    NEGLIGIBLE_OTHER_SIGN: "inside ±δ and below 0",
    INCONCLUSIVE: "the design resolves δ, these data do not decide",
    UNDERPOWERED: "more seeds would resolve δ",
    UNRESOLVABLE: "the test items alone leave the interval wider than δ",
    UNTESTABLE: "a model did not learn, forgot its base or sits at chance",
    PREMISE_FAILS: "the baseline does not do what the paper says it does",
    DIFFERS_BY_BASE: "the two bases' effects differ by more than δ",
    DID_NOT_LEARN: "an arm missed its learning target at the fixed budget",
    NEAR_COPIES: "the arms give the same answer on almost every test item",
    NOT_RUN: "the claim's runs have not finished",
}
# the verdicts of a claim the study could not decide at its scale (README and notebook 05 alike)
UNDECIDED = (UNDERPOWERED, UNRESOLVABLE, INCONCLUSIVE)
# the claims the study could not test here, or whose two bases split
NOT_TESTED = (PREMISE_FAILS, UNTESTABLE, DIFFERS_BY_BASE, DID_NOT_LEARN, NEAR_COPIES)
COLLAPSE_LOSS_FRACTION = 0.01  # loss within 1 % of ln B over the last fifth of training
COLLAPSE_FEATURE_STD = 1e-3  # features whose std over the test set is below this
# no interval from fewer within-base degrees of freedom: with one, the study-level t is in the
# hundreds (2 + 1 seeds over two bases give intervals as wide as the metric's whole range)
MIN_SEED_DF = 2


def better_sign(better: str) -> float:
    """+1 where a higher value is better, -1 where a lower one is (any other word: an error)."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower'; got {better!r}")
    return 1.0 if better == "higher" else -1.0


def near(value: float, level: float | None, smallest: float) -> bool:
    """A point value lies within the smallest effect of interest of a level."""
    return level is not None and abs(value - level) < smallest


def signed(interval: tuple[float, float], better: str) -> tuple[float, float]:
    """The interval of the effect with the paper's direction positive."""
    low, high = interval
    return (low, high) if better_sign(better) > 0 else (-high, -low)


def untestable_reason(
    variant: float, baseline: float, chance: float | None, smallest: float
) -> str | None:
    """Why two arms' *means* cannot be read (never an interval's width), or None: a side lies
    within δ of chance, where a metric reads nothing. A baseline too near the best value for the
    paper's effect is the premise's concern (``study.premise``), not this one."""
    for name, value in (("variant", variant), ("baseline", baseline)):
        if near(value, chance, smallest):
            return f"the {name}'s mean {value:.4g} lies within ±{smallest:.3g} of chance ({chance:.4g})"
    return None


@dataclass(frozen=True)
class Evidence:
    """What a label is read from: the displayed interval and what it is judged against."""

    effect: float  # variant − baseline, in the metric's units
    interval: tuple[float, float]  # the displayed (simultaneous) interval of the effect
    better: str
    smallest: float  # δ
    translated: float | None = None  # T: the paper's effect on this scale, paper's side > 0
    paper_units: bool = False  # whether the metric is the paper's quantity (sizes compare)


def _shown(e: Evidence) -> str:
    low, high = e.interval
    return f"[{low:+.3g}, {high:+.3g}]"


def verdict(evidence: Evidence) -> tuple[str, str]:
    """The label the displayed interval supports (module docstring) and its reason."""
    e = evidence
    if not e.smallest > 0:
        raise ValueError(f"smallest must be positive; got {e.smallest}")
    low, high = signed(e.interval, e.better)
    if not low <= high:
        raise ValueError(f"the interval's ends are out of order: {e.interval}")
    delta, shown = e.smallest, _shown(e)
    below_paper = e.paper_units and e.translated is not None and high < e.translated
    paper = "" if e.translated is None else f" (the paper's effect here {e.translated:.3g})"
    if low > delta:
        label = REPRODUCES_BELOW if below_paper else REPRODUCES
        return label, f"the interval {shown} lies beyond +δ = {delta:.3g}{paper}"
    if high < -delta:
        return CONTRADICTS, f"the interval {shown} lies beyond −δ = −{delta:.3g}"
    if -delta < low and high < delta:
        label = (
            NEGLIGIBLE_PAPER_SIGN if low > 0 else NEGLIGIBLE_OTHER_SIGN if high < 0 else NEGLIGIBLE
        )
        return label, f"the interval {shown} lies inside ±δ = ±{delta:.3g}{paper}"
    if low > 0 and below_paper:
        return SMALLER, (
            f"the interval {shown} excludes 0 on the paper's side and lies below the paper's "
            f"effect here {e.translated:.3g}; it is not shown beyond +δ = {delta:.3g}"
        )
    if low > 0 or high < 0:
        side = "the paper's side" if low > 0 else "the other side"
        return INCONCLUSIVE, (
            f"the interval {shown} excludes 0 on {side}, its size not shown beyond ±δ = "
            f"±{delta:.3g}"
        )
    return INCONCLUSIVE, f"the interval {shown} holds 0 and reaches beyond ±δ = ±{delta:.3g}"


def differs_between_bases(difference: tuple[float, float], smallest: float) -> bool:
    """Whether the interval of the two bases' effects' difference lies beyond ±δ: the effect
    differs between the bases by more than the smallest effect of interest, with confidence."""
    low, high = difference
    return low > smallest or high < -smallest


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
