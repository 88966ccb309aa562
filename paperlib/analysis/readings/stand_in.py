"""Which study a tutorial reads: the full study where the runs it needs have finished, else the
smoke study, said as such, with what the full study has not run and what the smoke study's
budget lets its numbers say (its arms' learning targets)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paperlib.analysis.readings.words import Reading, listing, plural

NOT_RUN = "not run yet"
START = {"random": " from random weights", "base": " from a pre-trained base"}


def regime(claim: Mapping[str, Any]) -> str:
    """A claim's training regime in words: ``batch 128 × 2,800 steps from random weights``."""
    r = claim["regime"]
    return f"batch {r['batch_size']} × {r['steps']:,} steps{START.get(r.get('init'), '')}"


def _study(decided: Mapping[str, Any], study: str) -> list[Mapping[str, Any]]:
    return [c for c in decided["claims"] if c["study"] == study]


def _targets(decided: Mapping[str, Any], study: str) -> list[Mapping[str, Any]]:
    """The learning targets of the arms ``study``'s claims compare."""
    claims = _study(decided, study)
    arms = {c["variant"] for c in claims} | {c["baseline"] for c in claims}
    return [t for t in decided["targets"] if t["study"] == study and t["variant"] in arms]


def _learned(targets: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """What the met targets let the numbers say (none met, some, or all), in a clause and in a
    few words."""
    met, n = sum(t["met"] for t in targets), len(targets)
    if not met:
        return (
            f"none of its arms' {n} learning targets is met, so no arm has learned the world and "
            "its numbers say nothing about the methods",
            "no arm learned the world",
        )
    if met < n:
        return (
            f"{met} of its arms' {n} learning targets {plural(met, 'is', 'are')} met: an arm "
            "that missed its target says nothing about its method",
            f"{met} of {n} learning targets met",
        )
    return f"every one of its arms' {n} learning targets is met", "every learning target met"


def _seeds(claims: Sequence[Mapping[str, Any]]) -> str:
    seeds = sorted({s for c in claims for s in c.get("seeds") or []})
    words = f"{plural(len(seeds), 'seed', 'seeds')} {listing(str(s) for s in seeds)}"
    return words + (" (one seed: no interval)" if len(seeds) == 1 else "")


def _missing(full: Mapping[str, Any] | None, study: str, paper: str) -> str:
    """What the full study has not run of ``study``: nothing there, all, some or none of it."""
    if full is None:
        return "There is no full study yet"
    mine = _study(full, study)
    n = sum(c["verdict"] == NOT_RUN for c in mine)
    if not n:
        return (
            f"The full study's claims on {paper}'s arms are decided; the smoke study is asked for"
        )
    return (
        f"The full study's {paper} arms have not "
        + (
            f"run yet: all {n} of its claims"
            if n == len(mine)
            else f"all run: {n} of its {len(mine)} claims"
        )
        + f" on them read *{NOT_RUN}*"
    )


def _smoke(smoke: Mapping[str, Any], study: str) -> tuple[str, str, str]:
    """The smoke study's ``study`` arms: their regime, their seeds, and what their learning
    targets let them say (a clause and a few words)."""
    ran = [c for c in _study(smoke, study) if c.get("regime")]
    return regime(ran[0]), _seeds(ran), *_learned(_targets(smoke, study))


def _paper(decided: Mapping[str, Any], study: str) -> str:
    return _study(decided, study)[0]["paper"]


def read_from(
    scale: str, full: Mapping[str, Any] | None, smoke: Mapping[str, Any], study: str
) -> Reading:
    """Which study a section reads (``scale``) for ``study``'s arms, from the full study's
    claims (``full``, its claims.json; None where there is none) and the smoke study's
    (``smoke``): the full study where all its claims on them are decided; the full study with
    those not run yet said as such; or the smoke study standing in, said as such, with its
    regime, seeds and learning targets."""
    paper = _paper(smoke if full is None else full, study)
    missing = _missing(full, study, paper)
    if scale == "full" and not any(c["verdict"] == NOT_RUN for c in _study(full, study)):
        return Reading(f"This section reads the full study's {paper} runs.")
    steps, seeds, learned, briefly = _smoke(smoke, study)
    point = f"{missing}; in the smoke study ({steps}) {briefly}."
    if scale == "full":
        return Reading(
            f"{missing}, and nothing is read of them here. The smoke study has run them, at "
            f"{steps} on {seeds}, a check that the pipeline runs end to end; at that budget "
            f"{learned}.",
            point,
        )
    return Reading(
        f"**The smoke study stands in here.** {missing}. What follows reads the smoke study, "
        f"whose arms train at {steps} on {seeds}: it shows that the pipeline runs end to end. "
        f"At that budget {learned}.",
        point,
    )
