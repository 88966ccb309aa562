"""The decision rule: from a claim's displayed interval to its label.

A claim says ``variant`` beats ``baseline`` on a per-item metric (``better``: "higher" or
"lower"). The study estimates the paired effect with the pre-trained base as a fixed level
(``study.decide.inference.based_estimate``) and shows its simultaneous interval, at the level the
study's one error statement gives it (``study.decide.error_control``). Every label is read off that
interval, so a label never says more than the interval beside it
(``docs/methods/conventions.md#verdicts``). With δ the claim's smallest effect of interest and
``T`` the paper's effect carried onto the study's scale (``study.plan.smallest_effect``), and the
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
it does (``study.decide.premise``; the claim is not decided, and its reason still says what the
interval shows); ``untestable`` where a model did not learn, forgot its base or sits at chance;
``differs between the two bases`` where the two bases' effects differ by more than δ with
confidence (:func:`differs_between_bases`; each base's own label is given beside it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from paperlib.study.decide.disagreement import NEAR_COPY_SHARE, near_copies
from paperlib.study.decide.regime import regime_text
from paperlib.study.plan.claims import better_sign

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
# no interval from fewer within-base degrees of freedom: with one, the study-level t is in the
# hundreds (2 + 1 seeds over two bases give intervals as wide as the metric's whole range)
MIN_SEED_DF = 2


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
    paper's effect is the premise's concern (``study.decide.premise``), not this one."""
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


def claim_verdict(record: dict) -> dict[str, Any]:
    """The verdict and reason of one claim, in order: not run, an arm from scratch that did not
    learn the world (``decide.targets.SCRATCH_TARGETS``: the reason its metric may sit at
    chance, so it comes first), untestable, the arms near-copies
    (``decide.disagreement``), premise fails here, too few seeds, differs between the two bases,
    else the label its displayed interval supports (:func:`verdict`) read against its design
    note."""
    if "not_run" in record:
        return {"verdict": NOT_RUN, "reason": record["not_run"]}
    if (record.get("learned") or {}).get("met") is False:
        return {
            "verdict": DID_NOT_LEARN,
            "reason": "an arm trained from random weights missed its learning target: "
            + "; ".join(record["learned"]["missed"]),
        }
    if "untestable" in record:
        return {"verdict": UNTESTABLE, "reason": record["untestable"]}
    if near_copies(record["disagreement"]):
        share = record["disagreement"]["share"]
        return {
            "verdict": NEAR_COPIES,
            "reason": f"the arms answer differently on {share:.2%} of the test items, fewer than "
            f"{NEAR_COPY_SHARE:.0%}: one model twice, not a comparison",
        }
    known = record["seed_df"] >= MIN_SEED_DF
    label, reading = verdict(_evidence(record)) if known else (None, "no interval")
    premise = record.get("premise") or {}
    if premise.get("held") is False:
        measured = f"{premise['measured']:.4g} here vs {_paper_value(premise)}"
        return {
            "verdict": PREMISE_FAILS,
            "reason": f"premise fails here ({measured}): {premise['reason']}; {reading}",
        }
    if not known:
        return _too_few_seeds(record)
    split = _by_base(record, reading)
    if split is not None:
        return split
    label, reason = design_verdict(label, reading, record.get("design_note"), record["interval"])
    return {"verdict": label, "reason": reason, "verdict_per_base": None}


def _evidence(record: dict, **changes: Any) -> Evidence:
    fields = dict(
        effect=record["effect"], interval=tuple(record["interval"]), better=record["better"],
        smallest=record["smallest"], translated=record["smallest_rule"]["translated"],
        paper_units=bool(record.get("paper_units")),
    )  # fmt: skip
    return Evidence(**{**fields, **changes})


def _too_few_seeds(record: dict) -> dict[str, Any]:
    """The reading of a claim whose valid seeds leave fewer than :data:`MIN_SEED_DF`
    within-base degrees of freedom: underpowered (or unresolvable, by its design note)."""
    counts = Counter(record.get("bases_of_seeds", []))
    df = record["seed_df"]
    why = (
        f"the valid seeds of each base tie ({len(record['seeds'])} valid)"
        if df == 0 and counts and max(counts.values()) > 1
        else f"{len(record['seeds'])} valid seeds over {len(counts)} base(s) give the seed "
        f"variance {df} within-base degree(s) of freedom, fewer than {MIN_SEED_DF}"
    )
    label, reason = design_verdict(
        UNDERPOWERED, f"{why}: no interval is estimated; in its family with p = 1",
        record.get("design_note"),
    )  # fmt: skip
    return {"verdict": label, "reason": reason}


def _by_base(record: dict, reading: str) -> dict[str, Any] | None:
    """:data:`DIFFERS_BY_BASE` where the two bases' effects differ by more than δ with
    confidence (their difference's interval beyond ±δ), with each base's own label; else None."""
    difference = record.get("base_difference") or {}
    if not difference.get("interval") or not differs_between_bases(
        difference["interval"], record["smallest"]
    ):
        return None
    per_base = {
        b: verdict(_evidence(record, effect=e["effect"], interval=tuple(e["interval"])))[0]
        for b, e in record["per_base"].items()
    }
    low, high = difference["interval"]
    a, b = difference["bases"]
    listed = ", ".join(f"base {k}: {v}" for k, v in per_base.items())
    return {
        "verdict": DIFFERS_BY_BASE,
        "reason": (
            f"base {a}'s effect less base {b}'s is {difference['effect']:+.3g} [{low:+.3g}, "
            f"{high:+.3g}], beyond ±δ = ±{record['smallest']:.3g}: {listed}; the readings hold "
            f"for these bases ({reading})"
        ),
        "verdict_per_base": per_base,
    }


def _paper_value(premise: dict) -> str:
    paper = premise.get("paper")
    if paper is None:
        return "no level in the paper"
    return paper if isinstance(paper, str) else f"{paper:.4g} in the paper"


def seeds_wording(record: dict) -> str:
    """What a verdict's reason adds where a headline claim keeps fewer seed pairs than the
    study asks (``seeds_kept.met`` false)."""
    kept = record.get("seeds_kept") or {}
    if kept.get("met") is not False:
        return ""
    return (
        f"; keeps {kept['pairs']} of {kept['of']} seed pairs (the study asks at least "
        f"{kept['needed']})"
    )


def scale_wording(record: dict) -> str:
    """What a verdict's reason adds about scale: the regime it holds at (a verdict that is not
    untestable) and, where the trend runs exist, where the effect moves with batch size and
    training length."""
    holds = record.get("regime") and record.get("verdict") != UNTESTABLE
    words = f"; holds at {regime_text(record)}" if holds else ""
    trend = record.get("trend") or {}
    for axis, reading in (trend.get("reading") or {}).items():
        if not reading.startswith("not measured"):
            words += f"; with {axis}: {reading}"
    return words
