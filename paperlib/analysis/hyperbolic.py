"""Analyses behind the hyperbolic tutorials: 03 (aperture failure) and 04 (HoroPCA plots).

* Aperture and cone losses as functions of the parent's norm or of the exterior angle
  (``docs/methods/conventions.md#half-aperture``, ``docs/methods/argent.md#meru``,
  ``docs/methods/argent.md#adaent``), with derivatives by autograd.
* Training-log series of the study runs, stacked across seeds.
* Poincaré-disc views of trained embeddings (HoroPCA, tangent PCA, UMAP;
  ``docs/methods/conventions.md#horopca``), their
  distortion, and norm/weight distributions per hierarchy level and per box kind.

Feature tensors are Lorentz space parts (batch, dim) of curvature ``-curv``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy import stats
from torch import Tensor

from paperlib.geometry.horopca import distortion, horopca, poincare_pairwise_dist
from paperlib.geometry.lorentz import (
    half_aperture,
    paired_dist,
    pairwise_dist,
    tangent_pca,
    to_poincare,
)
from paperlib.losses.entailment import adaent_loss, adaent_weight, entailment_loss, norm_regularizer

__all__ = [
    "BOX_KIND_NAMES",
    "CommonStart",
    "DiscView",
    "Drift",
    "LEVEL_NAMES",
    "LevelNorms",
    "SeedSummary",
    "aperture_profile",
    "best_scale_distortion",
    "child_at_angle",
    "common_start",
    "crop_weights",
    "disc_views",
    "drift_direction",
    "drift_from_start",
    "hierarchy_points",
    "inset_bounds",
    "kendall_interval",
    "Layout",
    "layout",
    "level_norms",
    "log_series",
    "loss_along_ray",
    "median_difference",
    "norm_groups",
    "pair_losses",
    "per_pair",
    "stack_seeds",
    "unique_rows",
]

#: Names of the hierarchy levels returned by :func:`hierarchy_points` (index = level).
LEVEL_NAMES = (
    "text level 1 (general)",
    "text level 2",
    "text level 3",
    "text level 4 (specific)",
    "image",
)
#: ``box_kind`` codes of the study's exported box crops (``paperlib.study.box_embeddings``).
BOX_KIND_NAMES = ("object crop", "near-full crop")


# ------------------------------------------------------------------ aperture and cone losses


def aperture_profile(
    norms: Tensor, curv: float, min_radius: float = 0.1, asin_margin: float = 1e-4
) -> tuple[Tensor, Tensor]:
    """Half aperture ``asin(2K/(√c‖x‖))`` (``docs/methods/conventions.md#half-aperture``) and its
    derivative d/d‖x‖ (autograd).

    ``norms`` (n,) are parent norms; the computation runs in ``norms.dtype`` (float32 shows
    MERU's behaviour with ``asin_margin=1e-8``, a no-op clamp in float32; float64 with
    ``asin_margin=0`` is the exact function outside the radius). Returns ``(aperture, grad)``.
    """
    r = norms.detach().clone().requires_grad_(True)
    parent = torch.stack([r, torch.zeros_like(r)], dim=-1)
    aperture = half_aperture(parent, curv, min_radius=min_radius, asin_margin=asin_margin)
    (grad,) = torch.autograd.grad(aperture.sum(), r)
    return aperture.detach(), grad


def child_at_angle(
    parent_norm: float | Tensor,
    angle: float | Tensor,
    distance: float | Tensor,
    curv: float,
    dim: int = 2,
    dtype: torch.dtype = torch.float64,
) -> tuple[Tensor, Tensor]:
    """A parent ``r·e₁`` and a child at geodesic distance ``s`` whose exterior angle is φ.

    The child is ``cosh(√c s)·p + sinh(√c s)/√c · (cos φ·u_r + sin φ·e₂)`` on the hyperboloid,
    with ``u_r = (√c r, √c p_t e₁)`` the unit outward radial tangent at p, so the exterior
    angle at the parent (triangle O-parent-child,
    ``docs/methods/conventions.md#exterior-angle``) is φ and ``d(parent, child) = s``.
    Arguments broadcast; returns ``(parent, child)``, each (batch, dim).
    """
    if dim < 2:
        raise ValueError(f"dim must be >= 2 to place a child off the parent's ray; got {dim}")
    r, phi, s = torch.broadcast_tensors(
        *(torch.as_tensor(v, dtype=dtype) for v in (parent_norm, angle, distance))
    )
    r, phi, s = r.reshape(-1), phi.reshape(-1), s.reshape(-1)
    sqrt_c = math.sqrt(curv)
    parent_time = torch.sqrt(1.0 / curv + r * r)
    child = torch.zeros(r.shape[0], dim, dtype=dtype)
    child[:, 0] = torch.cosh(sqrt_c * s) * r + torch.sinh(sqrt_c * s) * parent_time * torch.cos(phi)
    child[:, 1] = torch.sinh(sqrt_c * s) * torch.sin(phi) / sqrt_c
    parent = torch.zeros_like(child)
    parent[:, 0] = r
    return parent, child


def per_pair(loss_fn: Callable[[Tensor, Tensor], Tensor], parent: Tensor, child: Tensor) -> Tensor:
    """Per-pair values (batch,) of a batch-mean loss ``loss_fn(parent, child)``, one pair at a
    time (e.g. ``functools.partial(entailment_loss, curv=1.0)``)."""
    if parent.shape != child.shape:
        raise ValueError(
            f"parent and child must have equal shapes; got {parent.shape}, {child.shape}"
        )
    with torch.no_grad():
        return torch.stack(
            [loss_fn(parent[i : i + 1], child[i : i + 1]) for i in range(len(parent))]
        )


def loss_along_ray(
    loss_fn: Callable[[Tensor], Tensor], norms: Tensor, dim: int = 2
) -> tuple[Tensor, Tensor]:
    """``ℓ(r·e₁)`` and ``dℓ/dr`` (autograd) for one parent moved along the first axis.

    ``loss_fn`` maps a parent (1, dim) to a scalar (e.g. a cone loss against a fixed child,
    or the norm regularizer). ``norms`` (n,) in the dtype to compute in. Returns two (n,).
    """
    values, grads = [], []
    for r in norms:
        r = r.detach().clone().requires_grad_(True)
        parent = torch.cat([r.reshape(1, 1), torch.zeros(1, dim - 1, dtype=r.dtype)], dim=1)
        value = loss_fn(parent)
        grad = None
        if value.requires_grad:
            (grad,) = torch.autograd.grad(value, r, allow_unused=True)
        values.append(value.detach().to(norms.dtype))
        grads.append(torch.zeros_like(r) if grad is None else grad.to(norms.dtype))
    return torch.stack(values), torch.stack(grads)


# ------------------------------------------------------------------ training logs


def log_series(log: Sequence[Mapping[str, Any]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """``(steps, values)`` of the log records that hold ``key`` (diagnostics are logged only
    every ``diag_every`` steps)."""
    records = [r for r in log if key in r]
    if not records:
        present = sorted({k for r in log for k in r})
        raise KeyError(f"no log record holds {key!r}; keys present: {present}")
    return (np.array([r["step"] for r in records]), np.array([float(r[key]) for r in records]))


@dataclass
class SeedSummary:
    """One log key across seeds: ``steps`` (T,), ``mean`` and ``std`` (T,) over seeds
    (std with ddof=1, 0 for one seed), ``values`` (n_seeds, T)."""

    steps: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    values: np.ndarray

    @property
    def n_seeds(self) -> int:
        return self.values.shape[0]


def stack_seeds(logs: Sequence[Sequence[Mapping[str, Any]]], key: str) -> SeedSummary:
    """Stack ``key`` over the logs of several seeds on the steps every log has."""
    if not logs:
        raise ValueError("stack_seeds needs at least one log")
    series = [log_series(log, key) for log in logs]
    steps = sorted(set.intersection(*(set(s.tolist()) for s, _ in series)))
    if not steps:
        raise ValueError(f"the logs share no step that holds {key!r}")
    values = np.stack([v[np.isin(s, steps)] for s, v in series])
    std = values.std(0, ddof=1) if len(values) > 1 else np.zeros(len(steps))
    return SeedSummary(np.array(steps), values.mean(0), std, values)


@dataclass
class CommonStart:
    """Where runs that share an initialisation stand at their first logged diagnostic:
    ``step`` (the same for every run), ``reference`` ``{seed: mean over that seed's variants}``
    and ``spread``, the largest range over the variants of one seed (how far apart runs from one
    checkpoint already are when first logged)."""

    step: int
    reference: dict[int, float]
    spread: float


def common_start(
    logs: Mapping[str, Mapping[int, Sequence[Mapping[str, Any]]]], key: str
) -> CommonStart:
    """The common start of ``key`` over ``logs`` ``{variant: {seed: records}}``: per seed, the
    mean of its variants' first logged values, and the largest within-seed range of those
    values. ValueError when the runs log their first ``key`` at different steps (there is then no
    common reference)."""
    series = {
        (variant, seed): log_series(log, key)
        for variant, per_seed in logs.items()
        for seed, log in per_seed.items()
    }
    if not series:
        raise ValueError("common_start needs at least one run")
    steps = {int(run_steps[0]) for run_steps, _ in series.values()}
    if len(steps) != 1:
        raise ValueError(f"the runs log their first diagnostic at different steps {sorted(steps)}")
    start = {
        seed: np.array([values[0] for (_, s), (_, values) in series.items() if s == seed])
        for seed in sorted({s for _, s in series})
    }
    return CommonStart(
        step=steps.pop(),
        reference={seed: float(values.mean()) for seed, values in start.items()},
        spread=max(float(values.max() - values.min()) for values in start.values()),
    )


@dataclass
class Drift:
    """One variant's ``key`` relative to the common start: ``steps`` (T,) logged by every seed,
    ``relative`` (T,) the mean over seeds of each seed's value minus its seed's
    :attr:`CommonStart.reference`, and ``final`` the mean value (not relative) at the last step."""

    steps: np.ndarray
    relative: np.ndarray
    final: float

    @property
    def last_step(self) -> int:
        return int(self.steps[-1])

    @property
    def moved(self) -> float:
        """The relative value at the last step: how far the variant ended from the start."""
        return float(self.relative[-1])


def drift_from_start(
    logs: Mapping[int, Sequence[Mapping[str, Any]]], key: str, start: CommonStart
) -> Drift:
    """:class:`Drift` of ``key`` over one variant's ``logs`` ``{seed: records}`` from
    ``start`` (:func:`common_start`, which must hold every seed of ``logs``)."""
    stacked = stack_seeds(list(logs.values()), key)
    reference = np.array([start.reference[seed] for seed in logs])
    relative = stacked.values - reference[:, None]
    return Drift(stacked.steps, relative.mean(0), float(stacked.mean[-1]))


def drift_direction(drift: Drift, start: CommonStart) -> str:
    """How a :class:`Drift` reads against the spread at the common start: ``"unmeasured"``
    (nothing logged after the first diagnostic), ``"within spread"`` (it ended no farther from
    the start than the variants' spread there), else ``"inward"`` (lower) or ``"outward"``."""
    if drift.last_step == start.step:
        return "unmeasured"
    if abs(drift.moved) <= start.spread:
        return "within spread"
    return "inward" if drift.moved < 0 else "outward"


# ------------------------------------------------------------------ embeddings


def unique_rows(points: Tensor) -> Tensor:
    """Indices (sorted) of the first occurrence of every distinct row of ``points`` (N, dim)."""
    _, inverse = torch.unique(points, dim=0, return_inverse=True)
    first = torch.full((int(inverse.max()) + 1,), len(points), dtype=torch.long)
    first = first.scatter_reduce(0, inverse, torch.arange(len(points)), reduce="amin")
    return first.sort().values


def hierarchy_points(emb: Mapping[str, Tensor]) -> tuple[Tensor, Tensor]:
    """Chain texts (levels 1–4, general → specific) and images, duplicates removed.

    ``emb`` holds ``chain`` (N, 4, dim) and ``image`` (N, dim). Identical captions (general
    levels repeat across images) would be zero-distance pairs, so each distinct point is kept
    once. Returns ``points`` (M, dim) and ``level`` (M,) indexing :data:`LEVEL_NAMES`.
    """
    chain, image = emb["chain"], emb["image"]
    n, levels = chain.shape[0], chain.shape[1]
    points = torch.cat([chain.transpose(0, 1).reshape(-1, chain.shape[-1]), image])
    level = torch.cat([torch.arange(levels).repeat_interleave(n), torch.full((n,), levels)])
    keep = unique_rows(points)
    return points[keep], level[keep]


def best_scale_distortion(original: Tensor, projected: Tensor) -> tuple[float, float]:
    """``min_s mean_{i<j} |s·d'_ij − d_ij| / d_ij`` and the minimising ``s`` (N, N) inputs.

    With ``ρ = d'/d`` the objective is ``Σ ρ·|s − 1/ρ|``: its minimiser is the ρ-weighted
    median of ``1/ρ``. For projections with an arbitrary scale (UMAP), this separates the
    shape of the embedding from its size. Returns ``(distortion, s)``.
    """
    i, j = torch.triu_indices(original.shape[0], original.shape[0], offset=1)
    ratio = (projected[i, j] / original[i, j]).double()
    order = torch.argsort(1.0 / ratio)
    cumulative = torch.cumsum(ratio[order], 0)
    median = int(torch.searchsorted(cumulative, 0.5 * cumulative[-1]))
    scale = float((1.0 / ratio)[order][median])
    return distortion(original, scale * projected), scale


@dataclass
class DiscView:
    """A 2-D view in the unit Poincaré disc: ``poincare`` (N, 2) for the data; ``origin`` (2,)
    where the model's origin O lands; ``distortion`` against the unit-curvature distances
    ``√c·d_L`` and ``scaled_distortion`` at the best uniform scale (data points only)."""

    poincare: Tensor
    origin: Tensor
    distortion: float
    scaled_distortion: float


def disc_views(
    x: Tensor,
    curv: float,
    methods: Sequence[str] = ("HoroPCA", "tangent PCA", "UMAP"),
    n_neighbors: int = 15,
    seed: int = 0,
) -> dict[str, DiscView]:
    """2-D Poincaré-disc views of (N, dim) space parts (``docs/methods/conventions.md#horopca``),
    with their distortion.

    * "HoroPCA": :func:`paperlib.geometry.horopca.horopca` (centred at the Fréchet mean);
    * "tangent PCA": :func:`paperlib.geometry.lorentz.tangent_pca` (``log_map0`` → PCA,
      centred in the tangent space at the origin → ``exp_map0``);
    * "UMAP": umap-learn with ``output_metric="hyperboloid"`` (its output is the space part of
      the unit hyperboloid, mapped to the disc by ``to_poincare``). Our choice where the
      papers are silent: UMAP's input is the precomputed matrix of hyperbolic distances.

    Both PCAs centre the data, so the disc's centre is not the model's origin: O is projected
    as one extra point (our choice; it changes each fit by one point in N+1) and returned as
    ``origin``. Distortion (HoroPCA paper): mean relative error of all pairwise distances of
    the data, against ``√c·d_L`` (the disc has curvature −1). Runs in float64.
    """
    x = x.detach().double()
    with_origin = torch.cat([x, torch.zeros_like(x[:1])])
    lifted = with_origin * math.sqrt(curv)
    original = pairwise_dist(lifted, lifted, 1.0, rel_floor=0.0).fill_diagonal_(0.0)
    n = len(x)
    views = {}
    for method in methods:
        if method == "HoroPCA":
            disc = horopca(with_origin, curv, n_components=2).poincare
        elif method == "tangent PCA":
            disc = to_poincare(tangent_pca(with_origin, curv, n_components=2), curv)
        elif method == "UMAP":
            disc = _umap_disc(original, n_neighbors, seed)
        else:
            raise ValueError(f"unknown method {method!r}; expected HoroPCA, tangent PCA or UMAP")
        projected = poincare_pairwise_dist(disc[:n])
        scaled, _ = best_scale_distortion(original[:n, :n], projected)
        views[method] = DiscView(disc[:n], disc[n], distortion(original[:n, :n], projected), scaled)
    return views


def _umap_disc(distances: Tensor, n_neighbors: int, seed: int) -> Tensor:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm, via umap
        import umap  # first import compiles with numba (~25 s)

        warnings.filterwarnings("ignore", message="using precomputed metric")
        reducer = umap.UMAP(
            n_components=2,
            n_neighbors=n_neighbors,
            metric="precomputed",
            output_metric="hyperboloid",
            random_state=seed,
            n_jobs=1,
        )
        hyperboloid = reducer.fit_transform(distances.numpy())
    return to_poincare(torch.as_tensor(hyperboloid, dtype=torch.float64), 1.0)


def inset_bounds(view: DiscView, limit: float, size: float = 0.3) -> list[float]:
    """Axes-fraction bounds ``[x0, y0, w, h]`` of a square inset in the corner of a ``±limit``
    window that holds the fewest of the view's points (and not the origin, if possible)."""
    points = torch.cat([view.poincare, view.origin[None]]) / limit  # window → [-1, 1]²
    edge = 1.0 - 2.0 * size
    best = None
    for x0, y0 in [(1 - size, 0.0), (0.0, 0.0), (1 - size, 1 - size), (0.0, 1 - size)]:
        sx, sy = (1 if x0 > 0 else -1), (1 if y0 > 0 else -1)
        inside = ((sx * points[:, 0] > edge) & (sy * points[:, 1] > edge)).sum()
        if best is None or inside < best[0]:
            best = (int(inside), [x0, y0, size, size])
    return best[1]


def norm_groups(emb: Mapping[str, Tensor]) -> dict[str, Tensor]:
    """Space norms ‖x‖ per group: the distinct captions of each chain level, the images, and
    (when present) the object crops and near-full crops (``box_kind`` 0 / 1)."""
    points, level = hierarchy_points(emb)
    norms = points.norm(dim=-1)
    groups = {name: norms[level == i] for i, name in enumerate(LEVEL_NAMES)}
    if "box_image" in emb:
        box_norms = emb["box_image"].norm(dim=-1)
        for kind, name in enumerate(BOX_KIND_NAMES):
            groups[name] = box_norms[emb["box_kind"] == kind]
    return groups


def crop_weights(emb: Mapping[str, Tensor]) -> dict[str, tuple[Tensor, Tensor]]:
    """Per box kind: ``d_L(crop, its image)`` and ARGENT's intra weight ``h = 1 − exp(−d)``
    for the pair parent = box crop → child = full image
    (``docs/methods/argent.md#adaptive-weights``). ``{kind: (d, h)}``."""
    curv = float(emb["curv"])
    crops, images = emb["box_image"], emb["image"][emb["box_owner"]]
    out = {}
    for kind, name in enumerate(BOX_KIND_NAMES):
        mask = emb["box_kind"] == kind
        d = paired_dist(crops[mask], images[mask], curv)
        out[name] = (d, adaent_weight(crops[mask], images[mask], curv, intra=True))
    return out


# ------------------------------------------------------------------ reading a layout


def kendall_interval(
    x: np.ndarray, y: np.ndarray, resamples: int = 200, seed: int = 0
) -> tuple[float, float, float]:
    """Kendall's τ of ``x`` and ``y`` and its 95 % percentile-bootstrap interval over the
    points (``resamples`` draws with replacement): ``(tau, low, high)``."""
    x, y = np.asarray(x), np.asarray(y)
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(x), len(x)) for _ in range(resamples)]
    taus = np.array([stats.kendalltau(x[i], y[i]).statistic for i in draws])
    low, high = np.nanpercentile(taus, [2.5, 97.5])
    return float(stats.kendalltau(x, y).statistic), float(low), float(high)


@dataclass(frozen=True)
class Layout:
    """How a view lays out the hierarchy: per level (:data:`LEVEL_NAMES` index) the median
    distance from the projected origin (``medians``), Kendall's τ of level against that
    distance with its bootstrap interval (``tau``), and the share of each point's ``k`` nearest
    neighbours in the view that share its level (``neighbours``) against that share with the
    levels shuffled over the points (``chance``: its mean and standard deviation)."""

    medians: dict[int, float]
    tau: tuple[float, float, float]
    neighbours: float
    chance: tuple[float, float]
    k: int


def layout(view: DiscView, level: Tensor, k: int = 10, shuffles: int = 20, seed: int = 0) -> Layout:
    """The :class:`Layout` of a :class:`DiscView` of points at ``level`` (distances in the
    disc, curvature −1; ``shuffles`` permutations of the levels give the chance share)."""
    level = np.asarray(level)
    everything = poincare_pairwise_dist(torch.cat([view.poincare, view.origin[None]]).double())
    from_origin = everything[-1, :-1].numpy()
    nearest = np.argsort(everything[:-1, :-1].fill_diagonal_(math.inf).numpy(), axis=1)[:, :k]
    rng = np.random.default_rng(seed)
    shuffled = [rng.permutation(level) for _ in range(shuffles)]
    chance = [float((s[nearest] == s[:, None]).mean()) for s in shuffled]
    medians = {int(v): float(np.median(from_origin[level == v])) for v in np.unique(level)}
    return Layout(
        medians,
        kendall_interval(level, from_origin, seed=seed),
        float((level[nearest] == level[:, None]).mean()),
        (float(np.mean(chance)), float(np.std(chance, ddof=1))),
        k,
    )


def median_difference(
    a: np.ndarray, b: np.ndarray, resamples: int = 200, seed: int = 0
) -> tuple[float, float, float]:
    """``median(a) − median(b)`` and its 95 % percentile-bootstrap interval (each group
    resampled with replacement): ``(difference, low, high)``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    draws = [
        np.median(rng.choice(a, a.size)) - np.median(rng.choice(b, b.size))
        for _ in range(resamples)
    ]
    low, high = np.percentile(draws, [2.5, 97.5])
    return float(np.median(a) - np.median(b)), float(low), float(high)


@dataclass(frozen=True)
class LevelNorms:
    """A model's norms by hierarchy level (:func:`norm_groups`' groups): each group's
    ``quartiles`` (first, median, third) and share ``inside`` the radius ``2K/√c`` (with
    ``"captions"``, the four levels' distinct captions pooled), Kendall's ``tau`` of level
    against norm over the distinct captions with its bootstrap interval, and ``beyond``: the
    share of images whose norm exceeds their own level-4 caption's, with its standard error."""

    quartiles: dict[str, tuple[float, float, float]]
    inside: dict[str, float]
    tau: tuple[float, float, float]
    beyond: tuple[float, float]


def level_norms(emb: Mapping[str, Tensor], radius: float, seed: int = 0) -> LevelNorms:
    """The :class:`LevelNorms` of one model's held-out embeddings (``emb``: ``chain``,
    ``image`` and, where present, the box crops)."""
    groups = norm_groups(emb)
    quartiles = {
        name: tuple(float(q) for q in np.percentile(g.numpy(), [25, 50, 75]))
        for name, g in groups.items()
    }
    captions = torch.cat([groups[name] for name in LEVEL_NAMES[:-1]])
    inside = {name: float((g < radius).float().mean()) for name, g in groups.items()}
    points, level = hierarchy_points(emb)
    text = level < len(LEVEL_NAMES) - 1
    tau = kendall_interval(level[text].numpy(), points[text].norm(dim=-1).numpy(), seed=seed)
    wins = (emb["image"].norm(dim=-1) > emb["chain"][:, -1].norm(dim=-1)).double()
    beyond = (float(wins.mean()), float(wins.std() / math.sqrt(len(wins))))
    return LevelNorms(quartiles, {"captions": float((captions < radius).float().mean()), **inside},
                      tau, beyond)  # fmt: skip


def pair_losses(parent: Tensor, child: Tensor, curv: float, beta: float) -> dict[str, Tensor]:
    """The library's per-pair values of MERU's cone loss (``hinge``), AdaEnt's Huber penalty at
    ``beta`` (``huber``) and the norm regularizer of the parent (``reg``), for (batch, dim)
    pairs, in ``parent``'s dtype: what tutorial 03 computes by the formulas."""
    values = {
        "hinge": per_pair(lambda p, c: entailment_loss(p, c, curv), parent, child),
        "huber": per_pair(lambda p, c: adaent_loss(p, c, curv, beta=beta), parent, child),
        "reg": torch.stack([norm_regularizer(p[None]) for p in parent]),
    }
    return {k: v.to(parent.dtype) for k, v in values.items()}
