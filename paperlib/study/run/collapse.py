"""Whether a run collapsed: its contrastive loss stayed at ln B (nothing was told apart) or its
features hardly vary over the test set. A run records its collapse check in ``run.done``
when it finishes; the results stage decides it anew from the log
(:mod:`~paperlib.study.results.validity`) and the study leaves a collapsed run out of the
claims, saying so (``docs/methods/conventions.md#verdicts``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# the contrastive term of each method's log, the one a collapse leaves at ln B
LOSS_TERM = {
    "clip": "contrastive",
    "himo": "global",
    "longclip": "long",
    "meru": "contrastive",
    "hycoclip": "contrastive",
    "argent": "contrastive",
}
COLLAPSE_LOSS_FRACTION = 0.01  # loss within 1 % of ln B over the last fifth of training
COLLAPSE_FEATURE_STD = 1e-3  # features whose std over the test set is below this


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


def run_collapse(info: dict[str, Any], log: list[dict[str, Any]]) -> str | None:
    """:func:`collapse_reason` of a finished run's record and log."""
    term = LOSS_TERM[info["config"]["method"]]
    losses = [r[term] for r in log if term in r]
    return collapse_reason(losses, info["config"]["train"]["batch_size"], info["feature_std"])
