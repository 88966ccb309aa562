"""Cumulative sentence prefixes: the one rule for cutting a caption into K segments.

The papers do not say how HiMo@2/3 segments are cut from captions of n > K sentences
(``docs/methods/himo-clip.md#segments``). Here segment j (1..K) is the first
``ceil(j·n/K)`` sentences: sentences spread as evenly as possible, earlier segments taking the
extra ones, segment K the whole caption.
Used by the generated world (``data.world``) and by the monotonicity metrics.
"""

from __future__ import annotations

from collections.abc import Sequence


def prefix_ends(n: int, k: int, name: str = "k") -> list[int]:
    """Sentence counts ``ceil(j·n/k)`` of the k cumulative segments of an n-sentence caption;
    ``name`` is the caller's parameter, for the error message."""
    if not 1 <= k <= n:
        raise ValueError(f"{name} must be in [1, {n}] for this caption, got {k}")
    return [-(-j * n // k) for j in range(1, k + 1)]


def cumulative_prefixes(
    sentences: Sequence[str], k: int | None = None, name: str = "k"
) -> list[str]:
    """The cumulative prefixes of ``sentences`` joined by spaces: all of them, or ``k`` cut ones."""
    ends = range(1, len(sentences) + 1) if k is None else prefix_ends(len(sentences), k, name)
    return [" ".join(sentences[:e]) for e in ends]
