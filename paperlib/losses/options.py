"""Checks of the loss options that the loss config dataclasses share.

Each method's ``loss`` config section is a dataclass defined beside its loss (for example
:class:`~paperlib.losses.himo.MoLoConfig`); its ``__post_init__`` checks its values with
:func:`require`, so a bad value is refused both in a training config (``loss.tau=1.5``) and
when the dataclass is built in code. The message starts with the field's name.
"""

from __future__ import annotations

from typing import Any


def require(ok: bool, name: str, expected: str, value: Any) -> None:
    """ValueError ``"<name>: expected <expected>, got <value>"`` unless ``ok``."""
    if not ok:
        raise ValueError(f"{name}: expected {expected}, got {value}")


def require_unit_interval(name: str, value: float, closed_high: bool = False) -> None:
    """``value`` in [0, 1) (or [0, 1] with ``closed_high``)."""
    ok = 0.0 <= value <= 1.0 if closed_high else 0.0 <= value < 1.0
    require(ok, name, "[0, 1]" if closed_high else "[0, 1)", value)


def require_non_negative(config: Any, *names: str) -> None:
    """Each named field of ``config`` is >= 0 (a weight of a loss term)."""
    for name in names:
        require(getattr(config, name) >= 0, name, ">= 0", getattr(config, name))
