"""The README's findings and the study page's table, written from ``claims.json``: the sentences
that count what the study found, each paper's compact table with its verdict legend, and the
full table with the learning targets (``python -m paperlib.study --summary``)."""

from __future__ import annotations

import textwrap
from collections import Counter
from typing import Any

from paperlib.study.decide.regime import regime_text
from paperlib.study.decide.verdicts import (
    CONTRADICTS,
    MEANINGS,
    NOT_RUN,
    REPRODUCES,
    REPRODUCES_BELOW,
    SMALLER,
    UNDECIDED,
)
from paperlib.study.report.synthesis import not_run_clause
from paperlib.study.report.tables import (
    base_text,
    claim_name,
    delta_text,
    design_text,
    effect_text,
    exclusions_text,
    paper_text,
    premise_text,
    sign_text,
    size_text,
)


def verdict_cell(claim: dict[str, Any]) -> str:
    """A claim's verdict as the tables show it, marked "(not run)" where its runs are missing
    but the verdict does not already say so."""
    not_run = claim["verdict"] != NOT_RUN and claim.get("reason", "").startswith("not run")
    return claim["verdict"] + (" (not run)" if not_run else "")


def summary_table(decided: dict[str, Any]) -> str:
    """Markdown tables of the decided claims and the learning targets (``docs/study.md``'s
    summary of ``claims.json``): verdict, effect with its interval in the metric's shown units,
    δ, the paper's effect and its translation, the premise, the sign and size the interval
    establishes, the design note, the verdict with the excluded runs counted in, both arms
    against the base, the regime and the valid / planned seeds."""
    lines = [
        "| claim | paper | verdict | effect [interval] | δ | paper → here | premise | sign | size | "
        "design | with the excluded runs | variant / baseline − base | regime | valid / planned "
        "seeds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in decided["claims"]:
        lines.append(
            f"| {c['statement']} ({claim_name(c)}; {c['shown']}) | {c['paper']} | "
            f"{verdict_cell(c)} | {effect_text(c)} | {delta_text(c)} | {paper_text(c)} | "
            f"{premise_text(c)} | {sign_text(c)} | {size_text(c)} | {design_text(c)} | "
            f"{exclusions_text(c)} | {base_text(c)} | {regime_text(c)} | "
            f"{len(c['seeds'])} / {c['runs_total']} |"
        )
    lines += ["", "| learning target | runs | median | target | met |", "|---|---|---|---|---|"]
    for t in decided["targets"]:
        median = "–" if t["median"] is None else f"{t['median']:.3f}"
        share = f", as a share of its base's ({t['of_base']})" if t.get("of_base") else ""
        lines.append(
            f"| {t['metric']} of {t['variant']}{share} | {t['runs']} | {median} | "
            f"≥ {t['target']:g} | {'yes' if t['met'] else 'no'} |"
        )
    return "\n".join(lines)


def compact_table(decided: dict[str, Any], paper: str | None = None) -> str:
    """The README's table of the decided claims (of ``paper``, or all): each claim's statement,
    the units its numbers are shown in, its verdict, the effect with its interval, δ, the
    paper's effect and its translation onto this scale, the premise and the valid / planned
    seeds. :func:`summary_table` has every column."""
    lines = [
        "| claim | shown as | verdict | effect [interval] | δ | paper → here | premise | seeds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in decided["claims"]:
        if paper is not None and c["paper"] != paper:
            continue
        lines.append(
            f"| {c['statement']} | {c['shown']} | {verdict_cell(c)} | {effect_text(c)} | "
            f"{delta_text(c)} | {paper_text(c)} | {premise_text(c)} | "
            f"{len(c['seeds'])} / {c['runs_total']} |"
        )
    return "\n".join(lines)


def verdict_legend(decided: dict[str, Any], paper: str | None = None) -> str:
    """One line that says what each verdict word in the table means (those that appear)."""
    found = dict.fromkeys(
        c["verdict"] for c in decided["claims"] if paper is None or c["paper"] == paper
    )
    return "Verdicts: " + "; ".join(f"*{v}*: {MEANINGS[v]}" for v in found if v in MEANINGS) + "."


def _counted(counts: Counter) -> str:
    """``5 *negligible*, 3 *depends on the base*``: counts, largest first (ties by name), each
    verdict in italics (some have commas of their own)."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n} *{verdict}*" for verdict, n in ranked)


def findings_sentences(decided: dict[str, Any]) -> str:
    """The README's two sentences on what the study found, counted from the decided claims:
    the claims that reproduce in the paper's direction (per paper) and the ones that contradict
    it, then the claims left undecided at this scale and how the rest read."""
    claims = decided["claims"]
    counts = Counter(c["verdict"] for c in claims)
    papers = Counter(c["paper"] for c in claims)
    signed = [c for c in claims if c["verdict"] in (REPRODUCES, REPRODUCES_BELOW, SMALLER)]
    per_paper = ", ".join(f"{paper} {sum(c['paper'] == paper for c in signed)}" for paper in papers)
    against = counts[CONTRADICTS]
    contradicts = (
        "none contradicts its paper"
        if not against
        else f"{against} {'contradicts its' if against == 1 else 'contradict their'} paper"
    )
    undecided = Counter({v: counts[v] for v in UNDECIDED if counts[v]})
    apart = (REPRODUCES, REPRODUCES_BELOW, SMALLER, NOT_RUN, *UNDECIDED)
    rest = Counter({v: n for v, n in counts.items() if v not in apart})
    not_run = counts[NOT_RUN]
    of_papers = ", ".join(f"{n} {paper}" for paper, n in papers.items())
    n_undecided = sum(undecided.values())
    second = (
        f"{n_undecided} {'is' if n_undecided == 1 else 'are'} not decided at this scale "
        f"({_counted(undecided)})"
        if n_undecided
        else f"Every claim {'that ran ' if not_run else ''}is decided at this scale"
    )
    if rest:
        joint = ", and the other" if n_undecided else "; the other"
        second += f"{joint} {sum(rest.values())} read {_counted(rest)}"
    second += not_run_clause(claims)
    return (
        f"Of the {len(claims)} claims ({of_papers}), {len(signed)} reproduce in the paper's "
        f"direction ({per_paper}), {counts[REPRODUCES] + counts[REPRODUCES_BELOW]} with their "
        f"interval beyond the smallest effect of interest and "
        f"{counts[SMALLER] + counts[REPRODUCES_BELOW]} below the paper's effect on this scale; "
        f"{contradicts}. "
        f"{second}."
    )


def findings(decided: dict[str, Any]) -> str:
    """The README's findings: :func:`findings_sentences` wrapped at 100 columns, then each
    paper's :func:`compact_table` under its name and claim count."""
    papers = Counter(c["paper"] for c in decided["claims"])
    parts = [textwrap.fill(findings_sentences(decided), 100, break_on_hyphens=False)]
    for paper, n in papers.items():
        parts += [
            f"**{paper}** ({n} claims)",
            compact_table(decided, paper),
            textwrap.fill(verdict_legend(decided, paper), 100, break_on_hyphens=False),
        ]
    return "\n\n".join(parts)
