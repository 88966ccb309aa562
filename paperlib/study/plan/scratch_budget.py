"""The from-scratch budget: the first point of a probe's curves where every arm has flattened.

ARGENT's paper trains every arm of a comparison from scratch at one budget, fixed before the
runs. The study reads its budget off a committed probe (``scripts/scratch_budget_probe.py``:
each main arm trained from random weights for the hyperbolic bases' whole schedule, validated at
regular steps): the first validated step ``T``, at or above :data:`MIN_SAMPLES` samples seen,
where every arm's curve read up to ``T`` has stopped rising on every plateau metric by the
study's own rule (``study.plan.plateau``: a least-squares slope over the last 40 % of ``[0, T]``,
its gain over the last fifth not established above δ), and stays so at the next :data:`PERSIST`
validated steps: a curve that dips once (a noisy point, a brief instability) and then climbs
again has not flattened. A run scheduled for ``T`` steps anneals its
learning rate by ``T`` where the probe's is still high there, so a curve flat at ``T`` in the
probe is, if anything, flatter in the study (the rule errs toward a longer budget).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from paperlib.study.plan.plateau import plateau_check

MIN_SAMPLES = 150_000  # never a budget below this many samples seen per run
PERSIST = 2  # the later validated steps at which the curves must stay flat


def flat_at(
    points: Sequence[tuple[int, float]], step: int, n_items: int, metric: str, smallest: float
):
    """The plateau check (``study.plan.plateau.plateau_check``) of a curve read up to ``step``."""
    return plateau_check([p for p in points if p[0] <= step], n_items, metric, smallest)


def budget(
    curves: Mapping[str, Mapping[str, Sequence[tuple[int, float]]]],
    batch: int,
    n_items: int,
    deltas: Mapping[str, float],
    min_samples: int = MIN_SAMPLES,
    persist: int = PERSIST,
) -> dict:
    """``{"steps", "samples", "checks"}``: the first validated step at which every arm's curve
    of every metric of ``deltas`` is flat (:func:`flat_at`), at or above ``min_samples``
    samples of ``batch``, and stays flat at the next ``persist`` validated steps; ``steps``
    None where no validated step is (a step too near the probe's end to be followed
    ``persist`` times is not one). ``curves``: arm → metric → ``[(step, value), ...]``;
    ``checks`` gives, per candidate step, each arm's and metric's gain, interval and whether it
    is flat."""
    steps = sorted({s for arm in curves.values() for c in arm.values() for s, _ in c})
    checks = []
    for step in (s for s in steps if s * batch >= min_samples):
        found = {
            f"{arm}/{metric}": flat_at(curves[arm][metric], step, n_items, metric, delta)
            for arm in curves
            for metric, delta in deltas.items()
        }
        checks.append(
            {
                "step": step,
                "samples": step * batch,
                "flat": all(p.reached for p in found.values()),
                "curves": {
                    name: {"gain": p.gain, "interval": list(p.interval), "reached": p.reached}
                    for name, p in found.items()
                },
            }
        )
    flat = [c["flat"] for c in checks]
    chosen = next(
        (
            c["step"]
            for i, c in enumerate(checks)
            if i + persist < len(checks) and all(flat[i : i + persist + 1])
        ),
        None,
    )
    return {
        "steps": chosen,
        "samples": None if chosen is None else chosen * batch,
        "checks": checks,
    }
