"""The segment-cutting rule shared by the world and the monotonicity metrics."""

from __future__ import annotations

import math

import pytest

from paperlib.segments import cumulative_prefixes, prefix_ends


@pytest.mark.parametrize("n", range(1, 12))
def test_prefix_ends_are_ceil_of_even_cuts(n):
    for k in range(1, n + 1):
        ends = prefix_ends(n, k)
        assert ends == [math.ceil(j * n / k) for j in range(1, k + 1)]
        assert ends[-1] == n and all(a < b for a, b in zip(ends, ends[1:]))


def test_prefixes_and_errors():
    sentences = ["A.", "B.", "C."]
    assert cumulative_prefixes(sentences) == ["A.", "A. B.", "A. B. C."]
    assert cumulative_prefixes(sentences, 2) == ["A. B.", "A. B. C."]
    with pytest.raises(ValueError, match="num_segments must be in"):
        cumulative_prefixes(sentences, 4, name="num_segments")
