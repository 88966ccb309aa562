"""The README's first screen: three plain sentences of what the committed study found, read off
``results/full/claims.json`` (the findings block further down, with every claim's row, is
``study.report.findings.findings``). The verdict words are those of ``study.decide.verdicts``;
``tests/test_readme_claims.py`` checks that every one of them has its plain reading here."""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from paperlib.analysis.readings.words import listing, number, plural

#: the verdicts that reproduce the paper's direction
REPRODUCED = (
    "reproduces",
    "reproduces, below the published effect",
    "reproduces in sign, below the published effect",
)
#: every other verdict, in three plain groups (named for one claim and for several), each
#: verdict with what its claims show
SMALL, UNDECIDED, NO_TEST = "small", "undecided", "no test"
GROUP_WORDS = {
    SMALL: ("finds an effect too small to matter", "find an effect too small to matter"),
    UNDECIDED: (
        "is not decided by its seeds and test items",
        "are not decided by their seeds and test items",
    ),
    NO_TEST: ("is no test of the paper here", "are no test of the paper here"),
}
GROUPS = {
    SMALL: {
        "negligible": "the effect is too small to matter",
        "negligible, with the paper's sign": "the effect is on the paper's side but too small",
        "negligible, with the other sign": "the effect is against the paper but too small",
    },
    UNDECIDED: {
        "inconclusive": "the interval leaves the direction open",
        "underpowered": "too few seeds",
        "unresolvable at this test set": "too few test items",
    },
    NO_TEST: {
        "the arms are near-copies": "the two arms answer almost every test item alike",
        "did not learn the world at this budget": "a model did not learn the world at its budget",
        "premise fails here": "the baseline does not do what the paper says it does",
        "untestable": "the metric leaves no room for the effect",
        "differs between the two bases": "the two pre-trained bases disagree",
    },
}
#: the verdict of a claim whose runs have not run, said beside its paper's count (a partial study)
NOT_RUN = "not run yet"


def _fixed(value: float, places: int) -> str:
    return number(value, f"+.{places}f")


def effect_in_units(claim: Mapping[str, Any]) -> str:
    """A claim's effect with its interval in its metric's shown units, as many decimals as
    three significant digits of the effect take: ``+12.2 [+9.2, +15.2] points of 100 on long
    T2I R@1``."""
    metric, unit = claim["shown"].rsplit(", ", 1)
    scale = claim.get("shown_scale", 1.0)
    effect = claim["effect"] * scale
    places = max(0, 2 - math.floor(math.log10(abs(effect)))) if effect else 1
    units = "points of 100" if unit == "of 100" else f"({unit})"
    if not claim.get("interval"):
        return f"{_fixed(effect, places)} {units} on {metric}, no interval"
    low, high = (_fixed(x * scale, places) for x in claim["interval"])
    return f"{_fixed(effect, places)} [{low}, {high}] {units} on {metric}"


def _clearest(claims: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The claim whose interval lies farthest beyond its smallest effect of interest δ."""

    def margin(c):
        low, high = c["interval"]
        return (low if c["better"] == "higher" else -high) / c["smallest"]

    return max(claims, key=margin)


def _paper(claims: Sequence[Mapping[str, Any]], paper: str) -> str:
    """One paper's sentence: how many claims reproduce, the clearest with its effect, and how
    many contradict it."""
    mine = [c for c in claims if c["paper"] == paper]
    shown = [c for c in mine if c["verdict"] in REPRODUCED and c.get("interval")]
    against = sum(c["verdict"] == "contradicts" for c in mine)
    not_run = sum(c["verdict"] == NOT_RUN for c in mine)
    clearest = ""
    if shown:
        c = _clearest(shown)
        clearest = f", the clearest that {_lower(c['statement'])}, {effect_in_units(c)},"
    counted = (
        f"{not_run} {plural(not_run, 'is', 'are')} {NOT_RUN}; of the other {len(mine) - not_run}, "
        if not_run
        else ""
    )
    return (
        f"Of {paper}'s {len(mine)} claims, {counted}{len(shown)} "
        f"{plural(len(shown), 'reproduces', 'reproduce')} in the paper's direction{clearest} "
        f"and {against or 'none'} {plural(max(against, 1), 'contradicts', 'contradict')} it."
    )


def _lower(statement: str) -> str:
    """A statement as a clause: its first word in lower case unless it is a name (MoLo, ARGENT)."""
    first = statement.split()[0]
    return statement if first[1:] != first[1:].lower() else statement[0].lower() + statement[1:]


def first_screen(decided: Mapping[str, Any]) -> str:
    """The three sentences: per paper, how many claims are not run yet, how many reproduce (the
    clearest with its effect in its units) and contradict it; then what the other claims show,
    in three plain groups."""
    claims = decided["claims"]
    papers = list(dict.fromkeys(c["paper"] for c in claims))
    counts = Counter(c["verdict"] for c in claims)
    groups = {
        name: {v: counts[v] for v in members if counts[v]} for name, members in GROUPS.items()
    }
    parts = [
        f"{sum(g.values())} {plural(sum(g.values()), *GROUP_WORDS[name])}"
        for name, g in groups.items()
        if g
    ]
    biggest = max(groups[NO_TEST].items(), key=lambda i: i[1], default=None)
    most = biggest and 2 * biggest[1] > sum(groups[NO_TEST].values())
    share = f"most ({biggest[1]})" if most else f"{biggest and biggest[1]} of them"
    why = f", {share} because {GROUPS[NO_TEST][biggest[0]]}" if biggest and biggest[1] > 1 else ""
    rest = sum(sum(g.values()) for g in groups.values())
    ran = " that has run" if counts[NOT_RUN] else ""
    third = (
        f"The other {rest} show nothing either way at this CPU scale: {listing(parts)}{why}."
        if rest
        else f"Every claim{ran} is shown one way or the other."
    )
    return " ".join([*(_paper(claims, p) for p in papers), third])


def first_screen_block(decided: Mapping[str, Any]) -> str:
    """:func:`first_screen` wrapped at 100 columns, as the README holds it."""
    return textwrap.fill(first_screen(decided), 100, break_on_hyphens=False)
