"""Lorentz geometry (docs/methods/conventions.md#lorentz-model) against closed forms, identities
and float64 references; each robust form against the plain textbook form beside it."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from paperlib.geometry import lorentz as L

F64 = torch.float64


def _points(seed: int, n: int = 6, dim: int = 5, scale: float = 1.0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, dim, generator=gen, dtype=F64) * scale


curvs = st.floats(min_value=0.05, max_value=5.0)
seeds = st.integers(min_value=0, max_value=10_000)
scales = st.floats(min_value=1e-3, max_value=3.0)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, curv=curvs, scale=st.floats(min_value=1e-6, max_value=8.0))
def test_distance_from_origin_of_exp_map_is_norm(seed, curv, scale):
    v = _points(seed, scale=scale)
    assume(float(v.norm(dim=-1).max()) * math.sqrt(curv) < L.MAX_SINH_ARG)
    x = L.exp_map0(v, curv)
    torch.testing.assert_close(L.dist_to_origin(x, curv), v.norm(dim=-1), rtol=1e-9, atol=1e-12)
    origin = torch.zeros_like(x)
    torch.testing.assert_close(L.paired_dist(origin, x, curv), v.norm(dim=-1), rtol=1e-9, atol=0)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, curv=curvs, scale=st.floats(min_value=1e-6, max_value=8.0))
def test_log_map_inverts_exp_map(seed, curv, scale):
    v = _points(seed, scale=scale)
    assume(float(v.norm(dim=-1).max()) * math.sqrt(curv) < L.MAX_SINH_ARG)
    torch.testing.assert_close(L.log_map0(L.exp_map0(v, curv), curv), v, rtol=1e-9, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(seed=seeds, curv=curvs, scale=scales)
def test_symmetry_triangle_and_textbook_formula(seed, curv, scale):
    x, y, z = (_points(seed + k, scale=scale) for k in range(3))
    dxy, dyx = L.paired_dist(x, y, curv), L.paired_dist(y, x, curv)
    torch.testing.assert_close(dxy, dyx, rtol=1e-12, atol=0)
    assert bool((dxy <= L.paired_dist(x, z, curv) + L.paired_dist(z, y, curv) + 1e-9).all())
    torch.testing.assert_close(dxy, L.plain_paired_dist(x, y, curv), rtol=1e-7, atol=1e-7)
    torch.testing.assert_close(L.pairwise_dist(x, y, curv).diagonal(), dxy, rtol=1e-6, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(seed=seeds, curv=curvs, scale=scales)
def test_poincare_distance_is_sqrt_c_times_lorentz(seed, curv, scale):
    x, y = _points(seed, scale=scale), _points(seed + 1, scale=scale)
    p, q = L.to_poincare(x, curv), L.to_poincare(y, curv)
    assert bool((p.norm(dim=-1) < 1).all())
    sq = ((p - q) ** 2).sum(-1)
    ball = torch.acosh(1 + 2 * sq / ((1 - (p * p).sum(-1)) * (1 - (q * q).sum(-1))))
    torch.testing.assert_close(
        ball, math.sqrt(curv) * L.paired_dist(x, y, curv), rtol=1e-7, atol=1e-9
    )
    torch.testing.assert_close(L.from_poincare(p, curv), x, rtol=1e-7, atol=1e-9)


def test_inner_products_match_definition():
    x, y, curv = _points(0), _points(1), 0.3
    xt = torch.sqrt(1 / curv + (x * x).sum(-1))
    yt = torch.sqrt(1 / curv + (y * y).sum(-1))
    torch.testing.assert_close(L.lorentz_inner(x, y, curv), (x * y).sum(-1) - xt * yt)
    torch.testing.assert_close(L.pairwise_inner(x, y, curv).diagonal(), (x * y).sum(-1) - xt * yt)
    torch.testing.assert_close(L.lorentz_inner(x, x, curv), torch.full_like(xt, -1 / curv))


def test_close_points_are_accurate_in_float32():
    """The chord form keeps digits that ``acosh(−c⟨x,y⟩)`` loses (float64 reference)."""
    x = _points(3, n=64, dim=16)
    x, y = x.float().double(), (x + 1e-4 * _points(4, n=64, dim=16)).float().double()
    ref = L.paired_dist(x, y, 1.0)  # float64 on the same float32-representable inputs
    ours = L.paired_dist(x.float(), y.float(), 1.0).double()
    naive = L.plain_paired_dist(x.float(), y.float(), 1.0).double()
    assert float(((ours - ref).abs() / ref).max()) < 1e-4
    assert float(((naive - ref).abs() / ref).max()) > 1e-2  # what the reference formula does


def test_far_points_on_one_ray_are_accurate_in_float32():
    direction = torch.nn.functional.normalize(_points(5, n=1, dim=8), dim=-1)
    x, y = 1000.0 * direction, 1010.0 * direction
    ref = torch.tensor([math.asinh(1010.0) - math.asinh(1000.0)], dtype=F64)
    ours = L.paired_dist(x.float(), y.float(), 1.0).double()
    torch.testing.assert_close(ours, ref, rtol=1e-3, atol=0)


def test_aperture_domain_boundary():
    radius = L.aperture_radius(0.1, min_radius=0.1)
    assert radius == pytest.approx(0.6325, abs=1e-4)
    direction = torch.nn.functional.normalize(_points(6, n=1, dim=4), dim=-1)
    norms = torch.tensor([0.0, 0.3, 0.6, radius * 1.0005, 0.7, 1.0, 5.0], dtype=F64)
    x = (norms[:, None] * direction).requires_grad_(True)
    aperture = L.half_aperture(x, 0.1, min_radius=0.1)
    saturated = math.asin(1 - 1e-4)
    torch.testing.assert_close(aperture[:3], torch.full((3,), saturated, dtype=F64))
    assert bool((aperture[3:].diff() < 0).all()) and float(aperture[3].detach()) <= saturated
    outside = norms[4:]
    torch.testing.assert_close(aperture[4:], torch.asin(0.2 / (math.sqrt(0.1) * outside)))
    (grad,) = torch.autograd.grad(aperture.sum(), x)
    assert bool(torch.isfinite(grad).all()) and float(grad.norm(dim=-1).max()) < 250


def test_exterior_angle_matches_meru_formula():
    parent, child = _points(7, scale=1.5), _points(8, scale=1.5)
    for curv in (0.1, 1.0, 3.0):
        torch.testing.assert_close(
            L.exterior_angle(parent, child, curv),
            L.plain_exterior_angle(parent, child, curv),
            rtol=1e-8,
            atol=1e-8,
        )


def test_angle_convention_on_the_outward_ray():
    """Child further out on the parent's geodesic ray from O: ≈ 0; roles swapped: ≈ π."""
    direction = torch.nn.functional.normalize(_points(9, n=5, dim=6), dim=-1).float()
    parent, child = 0.8 * direction, 2.5 * direction
    assert float(L.exterior_angle(parent, child, 1.0).abs().max()) < 1e-3
    torch.testing.assert_close(
        L.exterior_angle(child, parent, 1.0), torch.full((5,), math.pi), atol=1e-3, rtol=0
    )


EDGE_NORMS = [0.0, 1e-6, 1e-3, 1.0, 1e3]


@pytest.mark.parametrize("norm", EDGE_NORMS)
@pytest.mark.parametrize("curv", [0.1, 1.0])
def test_finite_values_and_gradients_at_edge_cases(norm, curv):
    torch.manual_seed(0)
    base = torch.nn.functional.normalize(torch.randn(4, 8), dim=-1) * norm
    cases = {
        "x=y": (base, base),
        "x=0": (torch.zeros(4, 8), base),
        "y=0": (base, torch.zeros(4, 8)),
        "scaled": (base, 2 * base),
    }
    fns = {
        "paired_dist": lambda x, y: L.paired_dist(x, y, curv),
        "pairwise_dist": lambda x, y: L.pairwise_dist(x, y, curv),
        "exterior_angle": lambda x, y: L.exterior_angle(x, y, curv),
        "inner": lambda x, y: L.lorentz_inner(x, y, curv),
        "exp_map0": lambda x, y: L.exp_map0(x, curv) + y,
        "log_map0": lambda x, y: L.log_map0(x, curv) + y,
        "half_aperture": lambda x, y: L.half_aperture(x, curv) + y.sum(-1),
        "dist_to_origin": lambda x, y: L.dist_to_origin(x, curv) + y.sum(-1),
        "to_poincare": lambda x, y: L.to_poincare(x, curv) + y,
    }
    for case, (x0, y0) in cases.items():
        for name, fn in fns.items():
            x = x0.clone().requires_grad_(True)
            y = y0.clone().requires_grad_(True)
            out = fn(x, y)
            gx, gy = torch.autograd.grad(out.sum(), [x, y])
            assert bool(torch.isfinite(out).all()), (case, name, out)
            assert bool(torch.isfinite(gx).all() and torch.isfinite(gy).all()), (case, name)


def test_coincident_points_have_zero_distance_and_angle():
    x = _points(10).float()
    assert float(L.paired_dist(x, x, 1.0).max()) < 1e-12
    assert float(L.exterior_angle(x, x, 1.0).abs().max()) == 0.0
    assert float(L.pairwise_dist(x, x, 1.0).diagonal().max()) < 5e-3


def test_bf16_autocast_computes_in_float32():
    x, y = _points(11).float(), _points(12).float()
    expected = L.paired_dist(x, y, 1.0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = L.paired_dist(x.bfloat16().float(), y.bfloat16().float(), 1.0)
        pairwise = L.pairwise_dist(x, y, 1.0)
        angle = L.exterior_angle(x.bfloat16(), y.bfloat16(), 1.0)
    assert out.dtype == pairwise.dtype == angle.dtype == torch.float32
    leaf = x.bfloat16().requires_grad_(True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        total = L.paired_dist(leaf, leaf, 1.0).sum() + L.exterior_angle(leaf, 2 * leaf, 1.0).sum()
    (grad,) = torch.autograd.grad(total, leaf)
    assert grad.dtype == torch.bfloat16 and bool(torch.isfinite(grad.float()).all())
    torch.testing.assert_close(pairwise.diagonal(), expected, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(out, expected, rtol=2e-2, atol=2e-2)


def test_exp_map_is_capped_and_jacobian_at_zero_is_identity():
    big = torch.full((1, 3), 1e3)
    assert bool(torch.isfinite(L.exp_map0(big, 1.0)).all())
    assert float(L.exp_map0(big, 1.0).norm()) == pytest.approx(2.0**15, rel=1e-4)
    jac = torch.autograd.functional.jacobian(lambda v: L.exp_map0(v, 2.0), torch.zeros(1, 3))
    torch.testing.assert_close(jac.reshape(3, 3), torch.eye(3))


def test_tangent_pca_recovers_a_geodesic_plane():
    gen = torch.Generator().manual_seed(13)
    basis, _ = torch.linalg.qr(torch.randn(10, 2, generator=gen, dtype=F64))
    coords = torch.randn(20, 2, generator=gen, dtype=F64)
    coords = torch.cat([coords, -coords])  # zero tangent mean
    x = L.exp_map0(coords @ basis.T, 0.5)
    low = L.tangent_pca(x, 0.5, n_components=2)
    assert low.shape == (40, 2)
    torch.testing.assert_close(
        L.pairwise_dist(low, low, 0.5, rel_floor=0.0),
        L.pairwise_dist(x, x, 0.5, rel_floor=0.0),
        rtol=1e-6,
        atol=1e-6,
    )
    with pytest.raises(ValueError, match="n_components"):
        L.tangent_pca(x, 0.5, n_components=11)


def test_rejects_non_positive_curvature():
    with pytest.raises(ValueError, match="curv must be > 0"):
        L.paired_dist(torch.zeros(1, 2), torch.zeros(1, 2), -1.0)


# ---------------------------------------------------------------- the plain textbook forms


def test_plain_forms_against_closed_forms():
    """The plain forms are what they say: d(O, x) = asinh(√c‖x‖)/√c, exp and log invert each
    other, d(O, exp(v)) = ‖v‖, and MERU's angle is π/2 for a child at O seen from the parent."""
    x, v, curv = _points(20, scale=1.3), _points(21, scale=0.9), 0.4
    origin = torch.zeros_like(x)
    closed = torch.asinh(math.sqrt(curv) * x.norm(dim=-1)) / math.sqrt(curv)
    torch.testing.assert_close(L.plain_paired_dist(origin, x, curv), closed, rtol=1e-10, atol=0)
    mapped = L.plain_exp_map0(v, curv)
    torch.testing.assert_close(L.plain_log_map0(mapped, curv), v, rtol=1e-10, atol=1e-14)
    torch.testing.assert_close(
        L.plain_paired_dist(origin, mapped, curv), v.norm(dim=-1), rtol=1e-10, atol=0
    )
    # the child at O lies on the geodesic back through O: the exterior angle at the parent is π
    torch.testing.assert_close(
        L.plain_exterior_angle(x, origin, curv),
        torch.full((6,), math.pi, dtype=F64),
        atol=1e-6,
        rtol=0,
    )


@settings(max_examples=40, deadline=None)
@given(seed=seeds, curv=curvs, scale=st.floats(min_value=0.05, max_value=4.0))
def test_robust_forms_equal_the_plain_ones_where_those_are_accurate(seed, curv, scale):
    """float64, points 0.05 to 4 from O and not close to each other: distance, angle and maps
    agree with the textbook to ~1e-9."""
    x, y = _points(seed, scale=scale), _points(seed + 1, scale=scale)
    d = L.plain_paired_dist(x, y, curv)
    assume(float(d.min()) > 1e-2)
    torch.testing.assert_close(L.paired_dist(x, y, curv), d, rtol=1e-9, atol=0)
    angle = L.plain_exterior_angle(x, y, curv)
    assume(float(angle.min()) > 1e-2 and float(angle.max()) < math.pi - 1e-2)
    torch.testing.assert_close(L.exterior_angle(x, y, curv), angle, rtol=1e-8, atol=1e-10)
    assume(float(x.norm(dim=-1).max()) * math.sqrt(curv) < L.MAX_SINH_ARG)  # below MERU's cap
    torch.testing.assert_close(L.exp_map0(x, curv), L.plain_exp_map0(x, curv), rtol=1e-9, atol=0)
    torch.testing.assert_close(L.log_map0(x, curv), L.plain_log_map0(x, curv), rtol=1e-9, atol=0)


def test_where_the_plain_forms_fail_and_the_robust_ones_do_not():
    """float32: the plain log map rounds small norms to 0, the plain exp map has no value at 0,
    and MERU's angle turns rounding into ~1e-3 rad for a child on the parent's ray (acos near
    1), where the robust angle stays below 1e-6."""
    small = 1e-5 * torch.nn.functional.normalize(_points(22, dim=4), dim=-1).float()
    assert float(L.plain_log_map0(small, 1.0).abs().max()) == 0.0
    torch.testing.assert_close(L.log_map0(small, 1.0), small, rtol=1e-6, atol=0)
    zero = torch.zeros(1, 4)
    assert not bool(torch.isfinite(L.plain_exp_map0(zero, 1.0)).all())
    assert float(L.exp_map0(zero, 1.0).abs().max()) == 0.0
    direction = torch.nn.functional.normalize(_points(23, n=50, dim=4), dim=-1).float()
    parent, child = 0.8 * direction, 2.0 * direction
    assert float(L.plain_exterior_angle(parent, child, 1.0).max()) > 5e-4
    assert float(L.exterior_angle(parent, child, 1.0).abs().max()) < 1e-6
