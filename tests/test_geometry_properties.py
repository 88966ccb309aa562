"""Property-based checks of the Lorentz geometry (docs/methods/conventions.md#lorentz-model) and
HoroPCA on degenerate inputs.

Every function must give finite values and finite gradients for x = y, x = 0, y = s·x,
y = −x and very large norms, in float32 and under bf16 autocast (the functions compute in
float32), and stay inside its range: distances ≥ 0 and symmetric, angles in [0, π], half
apertures in [0, π/2), PEP scores in [0, 1]. Norms go up to ``MAX_NORM``: beyond ~1.8e19 the
squared norm of a float32 vector overflows, which no float32 formula of ``x_t`` survives.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from paperlib.geometry import horopca as H
from paperlib.geometry import lorentz as L
from paperlib.metrics.hierarchy import entailment_score

F32, F64 = torch.float32, torch.float64
MAX_NORM = 1e18
RELATIONS = ("random", "equal", "x=0", "y=0", "both=0", "scaled", "opposite")

curvs = st.floats(min_value=0.05, max_value=20.0)
norms = st.one_of(
    st.sampled_from([0.0, 1e-40, 1e-30, 1e-12, 1e-6, 0.5, 1.0, 1e3, 3.3e4, 1e8, MAX_NORM]),
    st.floats(min_value=0.0, max_value=50.0),
    st.floats(min_value=1.0, max_value=MAX_NORM).map(float),
)
directions = st.integers(1, 6).flatmap(
    lambda dim: st.integers(1, 4).flatmap(
        lambda n: arrays(np.float32, (n, dim), elements=st.floats(-1, 1, width=32))
    )
)


def _unit(raw: np.ndarray) -> torch.Tensor:
    """Rows of unit length (a zero row becomes the first basis vector)."""
    v = torch.from_numpy(raw.copy()).double()
    v[v.norm(dim=-1) == 0, 0] = 1.0
    return torch.nn.functional.normalize(v, dim=-1)


@st.composite
def point_pairs(draw) -> tuple[torch.Tensor, torch.Tensor, str]:
    """(x, y, relation): float32 (n, dim) space parts with a degenerate relation."""
    d1 = _unit(draw(directions))
    d2 = _unit(draw(arrays(np.float32, d1.shape, elements=st.floats(-1, 1, width=32))))
    a, b = draw(norms), draw(norms)
    x, y = (a * d1).float(), (b * d2).float()
    relation = draw(st.sampled_from(RELATIONS))
    if relation == "equal":
        y = x.clone()
    elif relation == "x=0":
        x = torch.zeros_like(x)
    elif relation == "y=0":
        y = torch.zeros_like(y)
    elif relation == "both=0":
        x, y = torch.zeros_like(x), torch.zeros_like(y)
    elif relation == "scaled":
        y = x * draw(st.sampled_from([2.0, 0.5, 1.0 + 2**-20, 1e3]))
        if float(y.double().norm(dim=-1).max()) > MAX_NORM:
            y = x * 0.5
    elif relation == "opposite":
        y = -x
    return x, y, relation


FUNCTIONS = {
    "paired_dist": lambda x, y, c: L.paired_dist(x, y, c),
    "pairwise_dist": lambda x, y, c: L.pairwise_dist(x, y, c),
    "exterior_angle": lambda x, y, c: L.exterior_angle(x, y, c),
    "entailment_score": lambda x, y, c: entailment_score(x, y, c),
    "exp_map0": lambda x, y, c: L.exp_map0(x, c) + L.exp_map0(y, c),
    "log_map0": lambda x, y, c: L.log_map0(x, c) + L.log_map0(y, c),
    "half_aperture": lambda x, y, c: L.half_aperture(x, c) + L.half_aperture(y, c),
    "dist_to_origin": lambda x, y, c: L.dist_to_origin(x, c) + L.dist_to_origin(y, c),
    "to_poincare": lambda x, y, c: L.to_poincare(x, c) + L.to_poincare(y, c),
}


def _values_and_grads(fn, x, y, curv, dtype=F32, autocast=False):
    xl = x.to(dtype).requires_grad_(True)
    yl = y.to(dtype).requires_grad_(True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        out = fn(xl, yl, curv)
    gx, gy = torch.autograd.grad(out.sum(), [xl, yl], allow_unused=True)
    grads = [torch.zeros_like(xl) if g is None else g for g in (gx, gy)]
    return out, grads


@settings(max_examples=150, deadline=None)
@given(pair=point_pairs(), curv=curvs, name=st.sampled_from(sorted(FUNCTIONS)))
def test_values_and_gradients_are_finite_in_float32_and_bf16_autocast(pair, curv, name):
    x, y, relation = pair
    for dtype, autocast in ((F32, False), (F32, True), (torch.bfloat16, True)):
        out, grads = _values_and_grads(FUNCTIONS[name], x, y, curv, dtype, autocast)
        assert out.dtype == F32, (name, dtype)  # geometry is computed in float32
        assert bool(torch.isfinite(out).all()), (name, relation, dtype, out)
        for g in grads:
            assert bool(torch.isfinite(g.float()).all()), (name, relation, dtype, g)


@settings(max_examples=150, deadline=None)
@given(pair=point_pairs(), curv=curvs)
def test_paired_distance_is_symmetric_non_negative_and_zero_exactly_at_x_equals_y(pair, curv):
    x, y, relation = pair
    d = L.paired_dist(x, y, curv)
    assert bool((d >= 0).all())
    assert torch.equal(d, L.paired_dist(y, x, curv))
    same = L.paired_dist(x, x, curv)
    assert bool((same == 0).all())
    leaf = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(L.paired_dist(leaf, x, curv).sum(), leaf)
    assert bool((grad == 0).all())  # the cusp at d = 0: the zero subgradient, never NaN
    if relation in (
        "x=0",
        "y=0",
    ):  # d(O, p) = asinh(√c‖p‖)/√c, docs/methods/conventions.md#lorentz-distance
        other = y if relation == "x=0" else x
        expected = L.dist_to_origin(other.double(), curv).float()
        # the chord is d², so distances below √(float32 tiny) ≈ 1e-19 lose digits to underflow
        torch.testing.assert_close(d, expected, rtol=1e-5, atol=1e-18)


@settings(max_examples=150, deadline=None)
@given(pair=point_pairs(), curv=curvs)
def test_pairwise_distance_is_symmetric_non_negative_with_a_floored_diagonal(pair, curv):
    x, y, _ = pair
    points = torch.cat([x, y])
    d = L.pairwise_dist(points, points, curv)
    assert bool((d >= 0).all())
    # compared as chords D = (2/√c·sinh(√c·d/2))², whose documented rounding error (one
    # matmul) is about eps·‖x_i‖·‖x_j‖
    a = points.double().norm(dim=-1)
    chord = (2 / math.sqrt(curv) * torch.sinh(math.sqrt(curv) * d.double() / 2)) ** 2
    budget = 64 * torch.finfo(F32).eps * a[:, None] * a[None, :] + 1e-30
    assert bool(((chord - chord.T).abs() <= budget + 1e-5 * chord).all())
    # the diagonal is the documented floor, never noise that grows faster; for unit-scale
    # points that is a distance below 1e-3
    assert bool((chord.diagonal() <= budget.diagonal()).all())
    small = a <= 1.0
    assert bool((d.diagonal()[small] < 1e-3).all())


@settings(max_examples=150, deadline=None)
@given(pair=point_pairs(), curv=curvs)
def test_angles_apertures_and_pep_scores_stay_in_range(pair, curv):
    x, y, relation = pair
    angle = L.exterior_angle(x, y, curv)
    assert bool(((angle >= 0) & (angle <= math.pi)).all()), angle
    if relation in ("equal", "x=0", "both=0"):  # the child at the apex: angle 0, score 1
        assert bool((angle == 0).all())
        assert bool((entailment_score(x, y, curv) == 1).all())
    score = entailment_score(x, y, curv)
    assert bool(((score >= 0) & (score <= 1)).all())
    aperture = L.half_aperture(x, curv)
    assert bool(((aperture >= 0) & (aperture < math.pi / 2)).all())
    # non-increasing in the parent's norm: a farther parent has a narrower cone
    assert bool((L.half_aperture(2 * x, curv) <= aperture).all())


@settings(max_examples=100, deadline=None)
@given(raw=directions, scale=st.floats(0.0, 10.0), curv=curvs)
def test_log_map_inverts_exp_map_in_float32_up_to_its_cap(raw, scale, curv):
    v = (_unit(raw) * scale).float()
    x = L.exp_map0(v, curv)
    back = L.log_map0(x, curv)
    if scale * math.sqrt(curv) < 0.99 * L.MAX_SINH_ARG:
        torch.testing.assert_close(back, v, rtol=1e-5, atol=1e-6)
    else:  # the cap: the output norm saturates at 2**15/√c, the direction is kept
        assert bool((x.double().norm(dim=-1) <= 2**15 / math.sqrt(curv) * (1 + 1e-5)).all())
        torch.testing.assert_close(
            torch.nn.functional.normalize(back, dim=-1), torch.nn.functional.normalize(v, dim=-1)
        )


@settings(max_examples=100, deadline=None)
@given(raw=directions, scale=st.floats(0.0, 1e6), curv=curvs)
def test_exp_map_inverts_log_map_in_float32(raw, scale, curv):
    x = (_unit(raw) * scale).float()
    assert bool(torch.isfinite(L.log_map0(x, curv)).all())
    if scale * math.sqrt(curv) <= 2.0**15 * 0.99:
        torch.testing.assert_close(L.exp_map0(L.log_map0(x, curv), curv), x, rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(pair=point_pairs(), curv=curvs)
def test_float32_agrees_with_float64_on_generic_points(pair, curv):
    """Away from the overflow range, from exactly collinear far points (whose float32
    distance is ill-conditioned: one rounding of the direction moves it by ~eps²‖x‖²) and from
    parents that float32 puts at the origin (squared norm below its smallest normal number,
    where the angle is 0 by definition), float32 results match float64 on the same inputs."""
    x, y, relation = pair
    if relation in ("scaled", "opposite") or float(torch.cat([x, y]).abs().max()) > 1e4:
        return
    keep = ((x.double() ** 2).sum(-1) >= torch.finfo(F32).tiny) | (x == 0).all(-1)
    x, y = x[keep], y[keep]
    for name in ("paired_dist", "exterior_angle", "dist_to_origin", "half_aperture"):
        got = FUNCTIONS[name](x, y, curv).double()
        ref = FUNCTIONS[name](x.double(), y.double(), curv)
        torch.testing.assert_close(got, ref, rtol=2e-4, atol=2e-5, msg=name)


@pytest.mark.parametrize("norm", [1e12, 1e14, 1e16, 8e17])
def test_a_far_point_against_a_near_one_is_accurate_in_float32(norm):
    """d(x, y) with ‖y‖ ≪ ‖x‖ is well conditioned (≈ d(O, x) + O(‖y‖)); the chord's
    transverse term must not carry a rounding error of order ‖x‖ into it."""
    x = torch.tensor([[0.8, 0.6, 0.0]]) * norm
    for y in (torch.zeros(1, 3), torch.tensor([[1.0, -2.0, 0.5]])):
        ref = L.paired_dist(x.double(), y.double(), 1.0)
        torch.testing.assert_close(L.paired_dist(x, y, 1.0).double(), ref, rtol=1e-6, atol=0)
        torch.testing.assert_close(L.paired_dist(y, x, 1.0).double(), ref, rtol=1e-6, atol=0)
    torch.testing.assert_close(
        L.paired_dist(x, torch.zeros(1, 3), 1.0).double(),
        L.dist_to_origin(x.double(), 1.0),
        rtol=1e-6,
        atol=0,
    )


@pytest.mark.parametrize("curv", [0.1, 1.0, 2.0])
def test_a_parent_near_the_origin_gets_the_limit_angle_and_one_at_it_gets_zero(curv):
    """As ‖p‖ → 0 the exterior angle tends to θ_O, the angle between p̂ and q̂ (φ − θ_O =
    O(‖p‖·(1 + 1/‖q‖))); exactly at the origin it is 0 by definition, whatever the child's norm."""
    child_norms = torch.tensor([1e-3, 1.0, 30.0])
    child = torch.tensor([[0.6, 0.8]]) * child_norms[:, None]
    limit = math.acos(0.6)
    for norm in (1e-8, 1e-6, 1e-4):
        parent = torch.tensor([[norm, 0.0]]).expand_as(child)
        angle = L.exterior_angle(parent, child, curv)
        bound = 4 * (1 + curv) * norm * (1 + 1 / child_norms) + 1e-6
        assert bool(((angle - limit).abs() <= bound).all()), (norm, angle)
    at_origin = L.exterior_angle(torch.zeros_like(child), child, curv)
    assert at_origin.tolist() == [0.0, 0.0, 0.0]
    assert entailment_score(torch.zeros_like(child), child, curv).tolist() == [1.0, 1.0, 1.0]


def test_bf16_inputs_come_back_as_float32_and_float64_stays_float64():
    x = torch.randn(3, 4)
    for fn in FUNCTIONS.values():
        assert fn(x.bfloat16(), x.bfloat16(), 1.0).dtype == F32
        assert fn(x.double(), x.double(), 1.0).dtype == F64


# --------------------------------------------------------------------------- HoroPCA


def _ball_dist(p: torch.Tensor) -> torch.Tensor:
    return H.poincare_pairwise_dist(p)


def _check_result(result, n: int, k: int) -> None:
    assert result.poincare.shape == (n, k) and result.ideals.shape[0] == k
    assert bool(torch.isfinite(result.poincare).all() and torch.isfinite(result.mean).all())
    assert float(result.poincare.norm(dim=-1).max()) < 1
    torch.testing.assert_close(result.ideals @ result.ideals.T, torch.eye(k, dtype=F64))


@pytest.mark.parametrize("objective", ["origin", "pairwise"])
def test_horopca_of_identical_points_maps_them_all_to_the_origin(objective):
    point = L.exp_map0(torch.tensor([[0.7, -0.2, 0.4, 0.1]], dtype=F64), 1.0)
    for cloud in (point.repeat(9, 1), torch.zeros(9, 4, dtype=F64)):
        result = H.horopca(cloud, 1.0, n_components=2, objective=objective)
        _check_result(result, 9, 2)
        assert float(result.poincare.abs().max()) < 1e-6


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("curv", [0.3, 1.0])
def test_horopca_keeps_the_distance_of_two_points(k, curv):
    pair = L.exp_map0(
        torch.tensor([[0.9, 0.1, -0.3, 0.2, 0.0], [-0.4, 0.5, 0.2, 0.0, 0.6]], dtype=F64), curv
    )
    result = H.horopca(pair, curv, n_components=k)
    _check_result(result, 2, k)
    # two points lie on one geodesic through their midpoint: a 1-D projection keeps them
    expected = math.sqrt(curv) * L.paired_dist(pair[:1], pair[1:], curv)
    torch.testing.assert_close(_ball_dist(result.poincare)[0, 1:2], expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_horopca_asks_for_more_components_than_points(k):
    one = L.exp_map0(torch.tensor([[0.3, 0.2, -0.1, 0.5]], dtype=F64), 1.0)
    result = H.horopca(one, 1.0, n_components=k)
    _check_result(result, 1, k)


@pytest.mark.parametrize("k", [1, 2])
def test_horopca_of_rank_deficient_data_is_exact(k):
    """Points on one geodesic (tangent rank 1): any k ≥ 1 keeps every pairwise distance."""
    direction = torch.nn.functional.normalize(torch.tensor([[1.0, -2.0, 0.5, 3.0, 1.0]]), dim=-1)
    cloud = L.exp_map0(torch.linspace(-1.5, 2.0, 12)[:, None] * direction.double(), 1.0)
    result = H.horopca(cloud, 1.0, n_components=k)
    _check_result(result, 12, k)
    original = L.pairwise_dist(cloud, cloud, 1.0, rel_floor=0.0)
    assert H.distortion(original, _ball_dist(result.poincare)) < 1e-6


def test_horopca_names_empty_and_non_finite_inputs():
    with pytest.raises(ValueError, match="at least one point"):
        H.horopca(torch.zeros(0, 4), 1.0)
    bad = torch.zeros(5, 4)
    bad[2, 1] = math.nan
    with pytest.raises(ValueError, match=r"x holds 1 non-finite value"):
        H.horopca(bad, 1.0)
