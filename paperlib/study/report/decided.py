"""What the tutorials and the report read of the decided study: ``claims.json`` checked as
untrusted input (its verdicts among the decision rule's labels), the seeds it counts, and each
arm's value on a claimed metric with its interval (the claims' estimator), for the figures.
:func:`available_scale` picks the scale a tutorial reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from paperlib.study.decide.inference import summary
from paperlib.study.decide.verdicts import VERDICTS
from paperlib.study.paths import results_dir, slug
from paperlib.study.plan.scales import SCALES
from paperlib.study.results.files import Maybe, read_items, read_json, refuse
from paperlib.study.results.reader import finished_seeds, item_table, run_folder

CLAIM = {
    "claim": "text",
    "paper": "text",
    "statement": "text",
    "study": "study",
    "variant": "text",
    "baseline": "text",
    "headline": "flag",
    "family_size": "positive",
    "reason": "text",
    "better": "better",
    "smallest": "nonnegative?",
    "effect": "number?",
    "interval": "interval?",
    "interval_raw": "interval?",
    "paper_effect": "number?",
    "p_adjusted": "rate",
    "seeds": ["seed"],
    "runs_total": "count",
    "seeds_kept": {"variant": "count", "baseline": "count", "pairs": "count"},
    "regime": "object?",
    "retention": "object?",
    "trend": "object?",
}
TARGET = {
    "study": "study",
    "variant": "text",
    "metric": "text",
    "target": "number",
    "median": "number?",
    "runs": "count",
    "met": "flag",
    "of_base": Maybe("text"),  # a share of the run's base's value (``study.decide.targets``)
}
CODE_VERSION = {"code_hash": "text?", "commits": ["text"], "runs": "count"}
CLAIMS_FILE = {
    "scale": "text",
    "partial": "flag",
    "claims": [CLAIM],
    "targets": [TARGET],
    "code_versions": [CODE_VERSION],
    "excluded_runs": ["text"],
}


def read_claims(path: Path, some: bool = True) -> dict[str, Any]:
    """A decided ``claims.json`` (:data:`CLAIMS_FILE`), with at least one claim where ``some``
    (a comparison names the claims missing against the declared ones)."""
    decided = read_json(path, CLAIMS_FILE)
    for i, claim in enumerate(decided["claims"]):  # the decision rule's labels only
        if claim.get("verdict") not in VERDICTS:
            expected = f"one of the {len(VERDICTS)} verdicts"
            raise refuse(path, f"claims[{i}].verdict", expected, claim.get("verdict", "<missing>"))
    if some and not decided["claims"]:
        raise refuse(path, "claims", "the decided claims", "[]")
    return decided


def available_scale(preferred: str = "auto", study: str | None = None) -> str:
    """``preferred`` if given, else ``full`` when its study has finished (``study``'s claims
    all decided on every planned run: a study stopped early leaves the tutorial that reads it
    at ``smoke``), else ``smoke``."""
    if preferred not in ("auto", "smoke", "full"):
        raise ValueError(f"unknown study scale {preferred!r}; expected 'auto', 'smoke' or 'full'")
    if preferred != "auto":
        return preferred
    path = results_dir("full") / "claims.json"
    if not path.is_file():
        return "smoke"
    claims = json.loads(path.read_text())["claims"]
    partial = any(c["partial"] for c in claims if study is None or c["study"] == study)
    return "smoke" if study is not None and partial else "full"


def load_claims(scale_name: str) -> dict[str, Any]:
    """``results/<scale>/claims.json``: ``{"claims": [...], "targets": [...]}``."""
    path = results_dir(scale_name) / "claims.json"
    if not path.exists():
        raise FileNotFoundError(
            f"no claims file at {path}: run `python -m paperlib.study --scale {scale_name}`"
        )
    return read_claims(path)


def valid_seeds(scale_name: str, study: str, variant: str) -> list[int]:
    """Finished seeds of a study run that ``claims.json`` does not list as collapsed."""
    try:
        seeds = finished_seeds(scale_name, study, variant)
    except FileNotFoundError:
        return []
    collapsed = {e.split(":")[0] for e in load_claims(scale_name)["excluded_runs"]}
    return [s for s in seeds if f"{study}/{slug(variant)}/seed{s}" not in collapsed]


def item_value(scale_name: str, study: str, variant: str, item: str) -> dict[str, Any] | None:
    """Mean of one per-item metric over a variant's valid seeds with its 95 % interval (the
    claims' estimator, ``study.decide.inference.based_estimate``: the pre-trained base as a level);
    None when no seed is valid."""
    seeds = valid_seeds(scale_name, study, variant)
    if not seeds:
        return None
    per_seed = item_table(scale_name, study, variant, item, seeds)
    bases = [SCALES[scale_name].base_of(s) for s in seeds]
    return {**summary(per_seed, bases), "seeds": seeds}


def claim_panels(
    scale_name: str, study: str, claims: list[dict[str, Any]], variants: dict[str, str]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """One (claim, {label: :func:`item_value`}) per claimed item of ``study`` (the last claim
    of each item), over the ``variants`` ({variant: label}) that have a valid seed and whose
    runs record the item (the share of parents inside the aperture radius only where a run
    counts them: ``design.Run.parents``): the numbers ``figures.metric_panels`` draws."""
    measured = {}  # variant -> the per-item metrics its first valid seed's items.npz holds
    for variant in variants:
        seeds = valid_seeds(scale_name, study, variant)
        if seeds:
            path = run_folder(scale_name, study, variant, seeds[0]) / "items.npz"
            measured[variant] = set(read_items(path))
    claimed = {c["item"]: c for c in claims if c["study"] == study}.values()
    return [
        (c, {
            variants[v]: item_value(scale_name, study, v, c["item"])
            for v, items in measured.items() if c["item"] in items
        })
        for c in claimed
    ]  # fmt: skip
