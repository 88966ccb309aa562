"""What HiDe's principal components carry (tutorial 01; ``docs/methods/himo-clip.md#hide``).

HiDe keeps the top-m principal directions ``P`` (m, dim) of a batch of text features
(batch, dim). These helpers measure the spectrum that fixes m, which ground-truth factors of
the generated world each component's scores follow (the correlation ratio η²), how the
reconstruction splits a feature into a kept and a dropped part, and how the subspace moves
with the batch (principal angles, ``scipy.linalg.subspace_angles``). The decomposition itself
is always :func:`paperlib.losses.himo.hide`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch
from scipy.linalg import subspace_angles
from torch import Tensor

from paperlib.data import world
from paperlib.data.world import World
from paperlib.losses.himo import HiDeResult, hide

FACTORS = (
    "super-category",
    "category",
    "sub-category",
    "main colour",
    "main pattern",
    "main size",
    "object count",
    "background",
)
TAXONOMY = FACTORS[:3]  # nested levels: super-category ⊃ category ⊃ sub-category
FOLLOWS = 0.5  # a component follows a factor that explains at least this share of its variance


def factor_value_names(name: str) -> tuple[str, ...]:
    """Readable names of the values of factor ``name`` (index = value in :func:`world_factors`)."""

    names = {
        "super-category": world.SUPERS,
        "category": world.CATEGORIES,
        "sub-category": world.SUBCATEGORIES,
        "main colour": tuple(c[0] for c in world.COLOURS),
        "main pattern": world.PATTERNS,
        "main size": world.SIZES,
        "object count": ("no object", "1 object", "2 objects", "3 objects", "4 objects"),
        "background": tuple(f"{b[0]} background" for b in world.BACKGROUNDS),
    }
    if name not in names:
        raise ValueError(f"unknown factor {name!r}; expected one of {FACTORS}")
    return tuple(names[name])


def world_factors(seed: int, size: int) -> dict[str, np.ndarray]:
    """Ground truth of world samples 0..size-1: one (size,) int array per name in FACTORS.

    The taxonomy, colour, pattern and size are those of the main object (object 0).
    """
    world = World(seed=seed)
    scenes = [world.scene(i) for i in range(size)]
    main = [s.objects[0] for s in scenes]
    columns = {
        "super-category": [o.super for o in main],
        "category": [o.category for o in main],
        "sub-category": [o.sub for o in main],
        "main colour": [o.colour for o in main],
        "main pattern": [o.pattern for o in main],
        "main size": [o.size for o in main],
        "object count": [len(s.objects) for s in scenes],
        "background": [s.background for s in scenes],
    }
    return {name: np.asarray(columns[name], dtype=np.int64) for name in FACTORS}


def _as_numpy(features: Tensor | np.ndarray) -> np.ndarray:
    return np.asarray(torch.as_tensor(features).detach().double().cpu())


def explained_variance_ratio(features: Tensor | np.ndarray) -> np.ndarray:
    """(min(batch, dim),) share of the batch's variance along each principal direction.

    ``S_j² / Σ S²`` for the singular values S of the centred (batch, dim) features, in
    decreasing order; its cumulative sum is what HiDe compares with τ.
    """
    x = _as_numpy(features)
    singular = np.linalg.svd(x - x.mean(axis=0), compute_uv=False)
    power = singular**2
    return power / max(power.sum(), 1e-300)


def kept_counts(features: Tensor, taus: Sequence[float]) -> list[int]:
    """HiDe's m for each threshold τ in ``taus`` on the (batch, dim) ``features``."""
    return [hide(torch.as_tensor(features), tau).m for tau in taus]


def component_scores(features: Tensor, result: HiDeResult) -> np.ndarray:
    """(batch, m) coordinates ``P(u_i − ū)`` of each feature along HiDe's components."""
    x = _as_numpy(features) - _as_numpy(result.mean)
    return x @ _as_numpy(result.components).T


def kept_and_dropped(features: Tensor, result: HiDeResult) -> tuple[np.ndarray, np.ndarray]:
    """(batch, dim) ``u' − ū = PᵀP(u − ū)`` (kept) and ``u − u'`` (dropped) of a HiDe result."""
    u, reconstructed = _as_numpy(features), _as_numpy(result.features)
    return reconstructed - _as_numpy(result.mean), u - reconstructed


def _between_and_total(values: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column between-group and total sums of squares of (n, k) values."""
    _, codes = np.unique(groups, return_inverse=True)
    counts = np.bincount(codes).astype(np.float64)
    centred = values - values.mean(axis=0)
    group_sums = np.stack([np.bincount(codes, weights=col) for col in centred.T], axis=1)
    between = (group_sums**2 / counts[:, None]).sum(axis=0)
    return between, (centred**2).sum(axis=0)


def _check_groups(values: np.ndarray, groups: np.ndarray) -> None:
    if groups.ndim != 1 or groups.shape[0] != values.shape[0]:
        raise ValueError(
            f"groups must be one label per row: values has {values.shape[0]} rows, groups "
            f"has shape {groups.shape}"
        )


def _cells(groups, within) -> np.ndarray:
    """One code per (``within``, ``groups``) pair: the cells of the groups inside each ``within``
    group (the groups themselves where they are nested in ``within``)."""
    pairs = np.stack([np.asarray(within), np.asarray(groups)], axis=1)
    return np.unique(pairs, axis=0, return_inverse=True)[1].ravel()


def adjust_for_chance(eta2, groups, within=None):
    """ε² = ``1 − (1 − η²)(n − k₀)/(n − k)``: η² rescaled so that chance is 0 and 1 stays 1.

    k is the number of groups and k₀ = 1; with ``within`` (for :func:`within_correlation_ratio`)
    k counts the (within, group) cells and k₀ the ``within`` groups. (The adjusted R² of
    regressing on the k group indicators, or its partial form given the k₀ ``within``
    indicators.) Use it to compare η² across batches whose number of groups or size differ; it
    can be slightly negative.
    """
    groups = np.asarray(groups)
    n = groups.shape[0]
    k0 = 1 if within is None else np.unique(within).size
    k = np.unique(groups).size if within is None else np.unique(_cells(groups, within)).size
    if n <= k:
        raise ValueError(f"need more rows than groups to adjust η²; got n={n}, k={k}")
    return 1.0 - (1.0 - np.asarray(eta2)) * (n - k0) / (n - k)


def correlation_ratio(values, groups) -> np.ndarray | float:
    """η² = SS_between / SS_total of each column of (n,) or (n, k) ``values`` by ``groups``.

    The fraction of a score's variance explained by the group means (1: the score is a
    function of the group; 0: every group has the same mean). NaN for a constant column.
    Chance level: :func:`chance_correlation_ratio`; chance-corrected: :func:`adjust_for_chance`.
    """
    values = _as_numpy(values)
    groups = np.asarray(groups)
    column = values.ndim == 1
    values = values[:, None] if column else values
    _check_groups(values, groups)
    between, total = _between_and_total(values, groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        eta2 = np.where(total > 0, between / np.where(total > 0, total, 1.0), np.nan)
    return float(eta2[0]) if column else eta2


def pooled_correlation_ratio(values, groups) -> float:
    """Multivariate η²: ``Σ SS_between / Σ SS_total`` over the columns of (n, dim) ``values``.

    The share of the total variance of a set of vectors that the group means explain.
    """
    values = _as_numpy(values)
    groups = np.asarray(groups)
    _check_groups(values, groups)
    between, total = _between_and_total(values, groups)
    return float(between.sum() / total.sum()) if total.sum() > 0 else float("nan")


def within_correlation_ratio(values, groups, within) -> float:
    """Pooled η² of ``groups`` *within* ``within`` (partial η²) over the columns of (n, dim)
    ``values``: of the variance the ``within`` group means leave, the share that the means of
    the (within, group) cells explain, ``(SS_cells − SS_within) / (SS_total − SS_within)``.

    Nested labels (a category inside its super-category) make η² of the finer label include
    the coarser one's variance; this form leaves it out, so a batch of one super-category (where
    it equals :func:`pooled_correlation_ratio`) and a mixed batch are read alike.
    """
    values = _as_numpy(values)
    groups, within = np.asarray(groups), np.asarray(within)
    _check_groups(values, groups)
    _check_groups(values, within)
    cells, total = _between_and_total(values, _cells(groups, within))
    coarse, _ = _between_and_total(values, within)
    left = total.sum() - coarse.sum()
    return float((cells.sum() - coarse.sum()) / left) if left > 0 else float("nan")


def factor_correlations(scores, factors: Mapping[str, np.ndarray]) -> np.ndarray:
    """(len(factors), k) η² of each of the k score columns with each ground-truth factor."""
    return np.stack([np.atleast_1d(correlation_ratio(scores, g)) for g in factors.values()])


def followed_factor(column: Sequence[float]) -> str:
    """The factor one component follows, from its η² with each factor (``column``, in the order
    of :data:`FACTORS`): the coarsest taxonomy level with η² ≥ :data:`FOLLOWS`, else the other
    factor with the largest η² where it reaches :data:`FOLLOWS`, else ``"–"``.

    The taxonomy's levels are nested, so η² can only grow towards the finest level, which would
    otherwise always be the factor a component "follows most".
    """
    level = next((f for f in TAXONOMY if column[FACTORS.index(f)] >= FOLLOWS), None)
    others = [f for f in FACTORS if f not in TAXONOMY]
    other = max(others, key=lambda f: column[FACTORS.index(f)])
    return level or (other if column[FACTORS.index(other)] >= FOLLOWS else "–")


def principal_angles(components_a, components_b) -> np.ndarray:
    """Principal angles in degrees, ascending, between the spans of two (m, dim) row bases."""
    a, b = _as_numpy(components_a), _as_numpy(components_b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(
            f"components must be (m, dim) with the same dim; got {a.shape} and {b.shape}"
        )
    return np.sort(np.degrees(subspace_angles(a.T, b.T)))


def random_subspace_angle(dim: int, m: int, repeats: int = 200, seed: int = 0) -> float:
    """Mean principal angle (degrees) between two uniformly random m-dim subspaces of R^dim.

    The chance level for :func:`principal_angles` averaged over its m angles.
    """
    rng = np.random.default_rng(seed)
    angles = [
        principal_angles(
            np.linalg.qr(rng.normal(size=(dim, m)))[0].T,
            np.linalg.qr(rng.normal(size=(dim, m)))[0].T,
        ).mean()
        for _ in range(repeats)
    ]
    return float(np.mean(angles))


def _disjoint_pairs(n: int, size: int, repeats: int, rng: np.random.Generator):
    """``repeats`` pairs of disjoint random row sets of ``size`` rows each out of ``n``."""
    for _ in range(repeats):
        rows = torch.as_tensor(rng.choice(n, size=2 * size, replace=False))
        yield rows[:size], rows[size:]


def disjoint_pair_angles(
    features: Tensor, size: int, m: int, repeats: int = 10, seed: int = 0
) -> np.ndarray:
    """(repeats,) mean principal angles (degrees) between the top-m HiDe subspaces of two
    disjoint random sub-batches of ``size`` rows of the (batch, dim) ``features``: how far two
    batches of the same content differ by sampling alone."""
    features = torch.as_tensor(features)
    _check_pair_size(size, features.shape[0])
    rng = np.random.default_rng(seed)
    return np.array(
        [
            principal_angles(
                hide(features[a], fixed_m=m).components, hide(features[b], fixed_m=m).components
            ).mean()
            for a, b in _disjoint_pairs(features.shape[0], size, repeats, rng)
        ]
    )


def _check_pair_size(size: int, n: int) -> None:
    if not 2 <= size <= n // 2:
        raise ValueError(
            f"sizes must lie in [2, {n // 2}] (two disjoint sub-batches of a batch of {n}); "
            f"got {size}"
        )


def batch_size_sweep(
    features: Tensor,
    sizes: Sequence[int],
    tau: float = 0.9,
    repeats: int = 10,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """How HiDe's output depends on the batch size N, from disjoint random sub-batches of
    ``features`` (``docs/methods/himo-clip.md#hide-scope``).

    For each N in ``sizes`` and ``repeats`` draws of 2N rows without replacement, split into two
    disjoint sub-batches of N: m at ``tau`` of the first, and the mean principal angle between
    the two sub-batches' top-m_ref subspaces (m_ref = the whole (batch, dim) ``features``' m at
    ``tau``, so every N is compared in the same dimension). Neither sub-batch contains the
    other, so the angle measures how much the components of two batches of N differ by
    sampling alone. Returns (len(sizes), repeats) arrays ``m`` and ``angle`` (degrees),
    ``sizes`` and the scalar ``m_ref``; N must lie in [2, batch // 2].
    """
    features = torch.as_tensor(features)
    n = features.shape[0]
    for size in sizes:
        _check_pair_size(size, n)
    m_ref = hide(features, tau).m
    rng = np.random.default_rng(seed)
    m = np.zeros((len(sizes), repeats), dtype=np.int64)
    angle = np.zeros((len(sizes), repeats))
    for i, size in enumerate(sizes):
        for r, (a, b) in enumerate(_disjoint_pairs(n, size, repeats, rng)):
            m[i, r] = hide(features[a], tau).m
            first, second = hide(features[a], fixed_m=m_ref), hide(features[b], fixed_m=m_ref)
            angle[i, r] = principal_angles(first.components, second.components).mean()
    return {"sizes": np.asarray(sizes), "m": m, "angle": angle, "m_ref": np.asarray(m_ref)}


def chance_correlation_ratio(groups) -> float:
    """Expected η² of a score unrelated to ``groups``: ``(k − 1)/(n − 1)`` for k groups, n rows.

    (Exact for exchangeable scores: the mean of η² over all relabellings.) A factor with many
    small groups reaches a large η² by chance, so read η² against this level.
    """
    groups = np.asarray(groups)
    k = np.unique(groups).size
    return (k - 1) / (groups.shape[0] - 1)


def kept_and_dropped_correlations(
    features: Tensor, factors: Mapping[str, np.ndarray], tau: float = 0.9
) -> tuple[list[float], list[float]]:
    """Per factor (in the order of ``factors``): the pooled η² of HiDe's kept part ``u' − ū``
    and of its dropped part ``u − u'`` (:func:`kept_and_dropped` at ``tau``)."""
    kept, dropped = kept_and_dropped(features, hide(features, tau))
    return (
        [pooled_correlation_ratio(kept, g) for g in factors.values()],
        [pooled_correlation_ratio(dropped, g) for g in factors.values()],
    )


def content_batches(
    groups: np.ndarray, names: Sequence[str], seed: int = 0
) -> dict[str, np.ndarray]:
    """Row indices of one batch per group (``names[g]``: only rows of group g) and of a
    ``"mixed"`` batch, all of the size of the smallest group, drawn without replacement."""
    groups = np.asarray(groups)
    rng = np.random.default_rng(seed)
    size = int(np.bincount(groups).min())
    batches = {
        name: rng.choice(np.flatnonzero(groups == g), size, replace=False)
        for g, name in enumerate(names)
    }
    batches["mixed"] = rng.choice(groups.shape[0], size, replace=False)
    return batches


def kept_factors_by_batch(
    features: Tensor,
    batches: Mapping[str, np.ndarray],
    factors: Mapping[str, np.ndarray],
    tau: float = 0.9,
    within: np.ndarray | None = None,
) -> dict[str, list[float]]:
    """Per batch: the chance-adjusted pooled ε² (:func:`adjust_for_chance`) of each factor in
    the kept part of HiDe run on that batch alone; with ``within`` (one label per row of
    ``features``), each factor's ε² within those groups (:func:`within_correlation_ratio`)."""
    out = {}
    for name, rows in batches.items():
        kept, _ = kept_and_dropped(features[rows], hide(features[rows], tau))
        out[name] = []
        for g in factors.values():
            if within is None:
                eta2, inside = pooled_correlation_ratio(kept, g[rows]), None
            else:
                eta2, inside = within_correlation_ratio(kept, g[rows], within[rows]), within[rows]
            out[name].append(float(adjust_for_chance(eta2, g[rows], inside)))
    return out


def angles_to_batch(
    features: Tensor, batches: Mapping[str, np.ndarray], reference: str, m: int
) -> dict[str, np.ndarray]:
    """Principal angles (degrees) between each batch's top-m HiDe subspace and the
    ``reference`` batch's (the reference itself left out)."""
    base = hide(features[batches[reference]], fixed_m=m).components
    return {
        name: principal_angles(hide(features[rows], fixed_m=m).components, base)
        for name, rows in batches.items()
        if name != reference
    }
