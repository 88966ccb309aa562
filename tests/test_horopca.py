"""HoroPCA (docs/methods/conventions.md#horopca): closed-form horospherical projection, centring,
distortion."""

from __future__ import annotations

import pytest
import torch

from paperlib.geometry import horopca as H
from paperlib.geometry import lorentz as L

F64 = torch.float64


def _cloud(seed: int = 0, n: int = 60, dim: int = 8) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    tangent = torch.randn(n, dim, generator=gen, dtype=F64) * torch.linspace(
        1.5, 0.1, dim, dtype=F64
    )
    return L.exp_map0(tangent + 0.4, 1.0)


def _ideals(seed: int, k: int, dim: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(dim, k, generator=gen, dtype=F64))
    return q.T


def _busemann(x: torch.Tensor, ideal: torch.Tensor) -> torch.Tensor:
    """``log(x_t − x·p)`` on the unit hyperboloid (reference formula)."""
    return torch.log(L.time_component(x, 1.0) - x @ ideal)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_projection_keeps_busemann_coordinates_and_lies_on_the_hyperboloid(k):
    x, ideals = _cloud(1), _ideals(2, k, 8)
    yt, z = H.horospherical_projection(x, ideals)
    torch.testing.assert_close(yt**2 - (z**2).sum(-1), torch.ones_like(yt))
    y = z @ ideals  # the projection embedded back in R^D
    for p in ideals:
        torch.testing.assert_close(_busemann(y, p), _busemann(x, p))


def test_projection_fixes_points_of_the_plane_and_picks_the_origin_side():
    ideals = _ideals(3, 2, 8)
    gen = torch.Generator().manual_seed(4)
    in_plane = L.exp_map0(torch.randn(10, 2, generator=gen, dtype=F64) @ ideals, 1.0)
    yt, z = H.horospherical_projection(in_plane, ideals)
    torch.testing.assert_close(z @ ideals, in_plane)
    yt0, z0 = H.horospherical_projection(torch.zeros(1, 8, dtype=F64), ideals)
    torch.testing.assert_close(yt0, torch.ones(1, dtype=F64))


def test_boost_is_an_isometry_and_frechet_centre_is_stationary():
    x = _cloud(5)
    mean = L.exp_map0(torch.full((8,), 0.3, dtype=F64)[None], 1.0)[0]
    boosted = H.boost_to_origin(x, mean)
    for shift in (1, 7, 30):
        torch.testing.assert_close(
            L.paired_dist(boosted, boosted.roll(shift, 0), 1.0),
            L.paired_dist(x, x.roll(shift, 0), 1.0),
        )
    torch.testing.assert_close(H.boost_to_origin(mean[None], mean), torch.zeros(1, 8, dtype=F64))
    centred, mu = H.frechet_centre(x)
    # first-order optimality of the Fréchet functional: the tangent mean vanishes
    assert float(L.log_map0(centred, 1.0).mean(0).norm()) < 1e-6
    # and no nearby point has a lower Fréchet variance
    variance = L.paired_dist(x, mu[None], 1.0).pow(2).mean()
    for step in 1e-3 * torch.eye(8, dtype=F64):
        assert float(L.paired_dist(x, (mu + step)[None], 1.0).pow(2).mean()) >= float(variance)


def test_distortion_matches_a_naive_loop():
    gen = torch.Generator().manual_seed(6)
    a = torch.rand(7, 7, generator=gen, dtype=F64) + 0.5
    b = torch.rand(7, 7, generator=gen, dtype=F64) + 0.5
    a, b = (a + a.T) / 2, (b + b.T) / 2
    naive = [abs(b[i, j] - a[i, j]) / a[i, j] for i in range(7) for j in range(i + 1, 7)]
    assert H.distortion(a, b) == pytest.approx(float(sum(naive) / len(naive)))
    assert H.distortion(a, a) == 0.0
    with pytest.raises(ValueError, match="equal-shape"):
        H.distortion(a, b[:3, :3])


def test_poincare_pairwise_dist_is_the_ball_formula():
    p = L.to_poincare(_cloud(7, n=5), 1.0)
    sq = ((p[:, None] - p[None]) ** 2).sum(-1)
    norms = 1 - (p * p).sum(-1)
    ref = torch.acosh(1 + 2 * sq / (norms[:, None] * norms[None]))
    off = ~torch.eye(5, dtype=torch.bool)
    torch.testing.assert_close(H.poincare_pairwise_dist(p)[off], ref[off], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("objective", ["origin", "pairwise"])
def test_horopca_beats_tangent_pca_and_returns_ball_coordinates(objective):
    x, curv = _cloud(8, n=80, dim=10) / 2.0, 4.0  # the same points at curvature -4
    result = H.horopca(x, curv, n_components=2, objective=objective, max_points=50)
    assert result.poincare.shape == (80, 2) and float(result.poincare.norm(dim=-1).max()) < 1
    torch.testing.assert_close(result.ideals @ result.ideals.T, torch.eye(2, dtype=F64))
    original = 2.0 * L.pairwise_dist(x, x, curv, rel_floor=0.0)  # unit-curvature distances
    centred, _ = H.frechet_centre(x * 2.0)
    tangent = L.tangent_pca(centred, 1.0, 2)
    ours = H.distortion(original, H.poincare_pairwise_dist(result.poincare))
    baseline = H.distortion(original, L.pairwise_dist(tangent, tangent, 1.0, rel_floor=0.0))
    assert ours < baseline


def test_horopca_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n_components"):
        H.horopca(torch.zeros(5, 3), 1.0, n_components=3)
    with pytest.raises(ValueError, match="objective"):
        H.horopca(_cloud(), 1.0, objective="variance")
