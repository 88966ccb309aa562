"""How often two arms answer differently: the share of test items whose per-item outcomes differ.

Two arms that agree on almost every test item are one model twice, whatever their intervals say
(``docs/methods/conventions.md#verdicts``). For each seed pair, the share of test items on which
the two arms' per-item values differ (a hit against a miss, a correct label against a wrong one,
a rise against none; for a continuous per-item value, such as one image's PEP AUC or HiMo@K ρ, a
difference beyond the metric's stated tolerance, ``Metric.item_tolerance``), averaged over the
seed pairs. A claim whose arms differ on fewer than :data:`NEAR_COPY_SHARE` of its items reads
"the arms are near-copies" and is not decided.
"""

from __future__ import annotations

import numpy as np

NEAR_COPY_SHARE = 0.02


def item_disagreement(variant: np.ndarray, baseline: np.ndarray, tolerance: float = 0.0) -> dict:
    """``{"share", "per_seed", "tolerance"}``: per seed pair (rows of the ``(seeds, items)``
    tables), the share of items whose values differ by more than ``tolerance``, and their
    mean."""
    a, b = np.asarray(variant, dtype=np.float64), np.asarray(baseline, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2 or a.shape[1] == 0:
        raise ValueError(f"two (seeds, items) tables of one shape; got {a.shape} and {b.shape}")
    if not tolerance >= 0:
        raise ValueError(f"tolerance must be at least 0; got {tolerance}")
    per_seed = (np.abs(a - b) > tolerance).mean(axis=1)
    return {"share": float(per_seed.mean()), "per_seed": per_seed.tolist(), "tolerance": tolerance}


def near_copies(disagreement: dict) -> bool:
    """Whether the arms differ on fewer than :data:`NEAR_COPY_SHARE` of the items."""
    return disagreement["share"] < NEAR_COPY_SHARE
