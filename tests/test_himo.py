"""HiDe and MoLo (docs/methods/himo-clip.md#hide, docs/methods/himo-clip.md#molo) against numpy /
open_clip references and autograd checks.

Both implementations (``implementation="plain"``: the paper's steps with autograd through
the SVD; ``"fast"``: eigenprojector with a custom backward) are checked against the
references, and against each other in value and gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from open_clip.loss import ClipLoss

from paperlib.losses.contrastive import symmetric_cross_entropy
from paperlib.losses.himo import IMPLEMENTATIONS, NonFiniteFeaturesError, hide, molo_loss

both = pytest.mark.parametrize("impl", IMPLEMENTATIONS)


def _anisotropic(n: int, d: int, seed: int, dtype=torch.float64) -> torch.Tensor:
    """L2-normalised (n, d) features with well-separated principal variances."""
    g = torch.Generator().manual_seed(seed)
    scales = torch.logspace(0, -1.5, d, dtype=dtype)
    x = torch.randn(n, d, generator=g, dtype=dtype) * scales + 0.3
    return F.normalize(x, dim=1)


def _numpy_hide(u: np.ndarray, tau: float):
    """Independent reference: SVD of the centred batch, cumulative S² ratio, reconstruction."""
    mean = u.mean(axis=0)
    x = u - mean
    _, s, vt = np.linalg.svd(x, full_matrices=False)
    ratio = np.cumsum(s**2) / max((s**2).sum(), 1e-8)
    m = max(1, int(np.searchsorted(ratio, tau, side="left")) + 1)
    m = min(m, len(s))
    p = vt[:m]
    return m, p, x @ p.T @ p + mean, ratio[m - 1]


@pytest.mark.parametrize("shape", [(40, 12), (10, 24)])  # dim <= batch and batch < dim
@pytest.mark.parametrize("tau", [0.5, 0.8, 0.9, 0.99])
@both
def test_hide_matches_numpy_svd(shape, tau, impl):
    u = _anisotropic(*shape, seed=1)
    out = hide(u, tau, implementation=impl)
    m, p, recon, ratio = _numpy_hide(u.numpy(), tau)
    assert out.m == m
    assert out.features.dtype == torch.float64
    np.testing.assert_allclose(out.features.numpy(), recon, atol=1e-10)
    np.testing.assert_allclose(float(out.explained_variance), ratio, rtol=1e-10)
    np.testing.assert_allclose(out.mean.numpy(), u.numpy().mean(0), atol=1e-12)
    # components equal up to the sign of each row
    signs = np.sign((out.components.numpy() * p).sum(1))
    np.testing.assert_allclose(out.components.numpy(), p * signs[:, None], atol=1e-8)
    assert out.components.shape == (m, shape[1])


@both
def test_hide_float32_matches_float64_reference(impl):
    u = _anisotropic(64, 32, seed=2)
    out = hide(u.float(), 0.9, implementation=impl)
    m, _, recon, _ = _numpy_hide(u.numpy(), 0.9)
    assert out.m == m and out.features.dtype == torch.float32
    np.testing.assert_allclose(out.features.numpy(), recon, atol=2e-5)


@pytest.mark.parametrize("shape", [(30, 8), (6, 16)])
@both
def test_tau_one_reproduces_batch_and_fixed_rank(shape, impl):
    u = _anisotropic(*shape, seed=3)
    torch.testing.assert_close(hide(u, 1.0, implementation=impl).features, u, atol=1e-12, rtol=0)
    rank = min(shape[0] - 1, shape[1])  # centring removes one dimension when batch <= dim
    full = hide(u, fixed_m=rank, implementation=impl).features
    torch.testing.assert_close(full, u, atol=1e-12, rtol=0)
    assert hide(u, fixed_m=rank - 1, implementation=impl).features.sub(u).abs().max() > 1e-4


@both
def test_m_at_least_one_and_fixed_m_clamped(impl):
    u = _anisotropic(20, 6, seed=4)
    assert hide(u, 1e-9, implementation=impl).m == 1
    assert hide(u, fixed_m=100, implementation=impl).m == 6
    with pytest.raises(ValueError, match="fixed_m"):
        hide(u, fixed_m=0)
    with pytest.raises(ValueError, match="tau"):
        hide(u, 0.0)
    with pytest.raises(ValueError, match="scope"):
        hide(u, scope="world")
    with pytest.raises(ValueError, match="batch, dim"):
        hide(u[0])
    with pytest.raises(ValueError, match="implementation"):
        molo_loss(u, u, torch.tensor(1.0), implementation="svd")
    with pytest.raises(ValueError, match="gap_tol"):
        hide(u, gap_tol=1e-6, implementation="plain")


@both
def test_permutation_equivariance(impl):
    u = _anisotropic(25, 10, seed=5)
    perm = torch.randperm(25, generator=torch.Generator().manual_seed(0))
    a, b = hide(u, 0.9, implementation=impl), hide(u[perm], 0.9, implementation=impl)
    assert a.m == b.m
    torch.testing.assert_close(b.features, a.features[perm])


@pytest.mark.parametrize("n", [8, 40])
def test_identical_texts(n):  # fast only: the plain SVD's gradient is undefined here
    row = F.normalize(torch.randn(1, 16, dtype=torch.float64), dim=1)
    u = row.repeat(n, 1).requires_grad_()
    out = hide(u, 0.9)
    assert out.m >= 1
    torch.testing.assert_close(out.features, u.detach(), atol=1e-12, rtol=0)
    (out.features * torch.randn_like(u)).sum().backward()
    assert torch.isfinite(u.grad).all()


@pytest.mark.parametrize("shape", [(7, 4), (4, 6)])
@pytest.mark.parametrize("mode", [{"fixed_m": 2}, {"tau": 0.8}])
@both
def test_gradcheck_float64(shape, mode, impl):
    u = _anisotropic(*shape, seed=6).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: hide(x, **mode, implementation=impl).features, (u,))


def _hide_value_and_grad(u: torch.Tensor, w: torch.Tensor, **kwargs):
    leaf = u.clone().requires_grad_()
    out = hide(leaf, **kwargs)
    (out.features * w).sum().backward()
    return out, leaf.grad


@pytest.mark.parametrize("shape", [(30, 10), (12, 12), (7, 16)])  # batch >, =, < dim
@pytest.mark.parametrize(
    "mode",
    [
        {"fixed_m": 4},
        {"fixed_m": 1},
        {"tau": 0.9},
        {"tau": 1e-9},
        {"tau": 0.8, "detach": True},
        {"tau": 0.8, "renormalize": True},
        {"fixed_m": 5, "detach": True, "renormalize": True},
    ],
)
def test_hide_fast_matches_plain(shape, mode):
    """Custom eigenprojector backward == autograd through torch.linalg.svd (distinct values);
    values, m, explained variance and components agree too."""
    u = _anisotropic(*shape, seed=7)
    w = torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    fast, fast_grad = _hide_value_and_grad(u, w, **mode, implementation="fast")
    plain, plain_grad = _hide_value_and_grad(u, w, **mode, implementation="plain")
    assert fast.m == plain.m
    torch.testing.assert_close(fast.features, plain.features, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(fast.explained_variance, plain.explained_variance)
    torch.testing.assert_close(fast.components, plain.components, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(fast_grad, plain_grad, rtol=1e-9, atol=1e-10)


def test_finite_gradients_on_degenerate_batch():
    """Repeated eigenvalues straddling the cut (orthonormal rows) and duplicate rows."""
    eye = torch.eye(6, dtype=torch.float64)
    u = torch.cat([eye, -eye]).requires_grad_()  # centred rows: all variances equal
    out = hide(u, fixed_m=3)
    (out.features * torch.randn(12, 6, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(u.grad).all()
    dup = _anisotropic(3, 8, seed=8).repeat(4, 1).float().requires_grad_()
    molo = molo_loss(dup, dup.detach().flip(0), torch.tensor(4.6, requires_grad=True))
    molo.loss.backward()
    assert torch.isfinite(dup.grad).all() and torch.isfinite(molo.loss)


@pytest.mark.parametrize("shape", [(20, 8), (6, 10)])  # (dim, dim) and (batch, batch) Gram
@both
def test_detach_keeps_linear_gradient_only(shape, impl):
    u = _anisotropic(*shape, seed=9).requires_grad_()
    w = torch.randn(*shape, dtype=torch.float64)
    out = hide(u, fixed_m=3, detach=True, implementation=impl)
    (out.features * w).sum().backward()
    p = out.components  # constant directions
    ref_u = u.detach().clone().requires_grad_()
    x = ref_u - ref_u.mean(0)
    ((x @ p.T @ p + ref_u.mean(0)) * w).sum().backward()
    torch.testing.assert_close(u.grad, ref_u.grad)
    torch.testing.assert_close(out.features, hide(u, fixed_m=3, implementation=impl).features)


@both
def test_renormalize(impl):
    u = _anisotropic(20, 8, seed=10)
    raw = hide(u, 0.6, implementation=impl)
    unit = hide(u, 0.6, renormalize=True, implementation=impl)
    assert raw.features.norm(dim=1).sub(1).abs().max() > 1e-3  # reference: not unit norm
    torch.testing.assert_close(unit.features, F.normalize(raw.features, dim=1))


@both
def test_autocast_runs_decomposition_in_float32(impl):
    u = _anisotropic(64, 32, seed=11).to(torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = hide(u, 0.9, implementation=impl)
    ref = hide(u.float(), 0.9, implementation=impl)
    assert out.features.dtype == torch.bfloat16 and out.m == ref.m
    torch.testing.assert_close(out.features.float(), ref.features, atol=1e-2, rtol=0)


def test_molo_lambda_zero_equals_open_clip_cliploss():
    torch.manual_seed(0)
    img = F.normalize(torch.randn(16, 12), dim=1)
    txt = F.normalize(torch.randn(16, 12), dim=1)
    logit_scale = torch.tensor(np.log(100.0), dtype=torch.float32)
    out = molo_loss(img, txt, logit_scale, lam=0.0, label_smoothing=0.0)
    ref = ClipLoss()(img, txt, logit_scale.exp())
    torch.testing.assert_close(out.loss, ref)
    torch.testing.assert_close(out.global_loss, ref)
    assert out.comp_loss > 0  # still reported for logging


@both
def test_molo_is_global_plus_lambda_comp(impl):
    torch.manual_seed(1)
    img = F.normalize(torch.randn(24, 10, dtype=torch.float64), dim=1)
    txt = _anisotropic(24, 10, seed=12)
    scale = torch.tensor(2.0, dtype=torch.float64)
    out = molo_loss(img, txt, scale, lam=0.5, tau=0.9, label_smoothing=0.1, implementation=impl)
    m, _, recon, ratio = _numpy_hide(txt.numpy(), 0.9)
    comp = symmetric_cross_entropy(scale.exp() * img @ torch.from_numpy(recon).T, 0.1)
    glob = symmetric_cross_entropy(scale.exp() * img @ txt.T, 0.1)
    torch.testing.assert_close(out.comp_loss, comp)
    torch.testing.assert_close(out.global_loss, glob)
    torch.testing.assert_close(out.loss, glob + 0.5 * comp)
    assert out.m == m and out.explained_variance == pytest.approx(ratio)


@both
def test_molo_gradcheck_float64(impl):
    img = F.normalize(torch.randn(8, 5, dtype=torch.float64), dim=1).requires_grad_()
    txt = _anisotropic(8, 5, seed=13).requires_grad_()
    scale = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda a, b, s: molo_loss(a, b, s, fixed_m=2, implementation=impl).loss, (img, txt, scale)
    )


def test_molo_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="same"):
        molo_loss(torch.randn(4, 3), torch.randn(5, 3), torch.tensor(1.0))


def _molo_value_and_grads(img, txt, scale, **kwargs):
    """MoLo's output and its gradients w.r.t. image features, text features and logit scale."""
    leaves = [t.clone().requires_grad_() for t in (img, txt, scale)]
    out = molo_loss(*leaves, **kwargs)
    out.loss.backward()
    return out, [t.grad for t in leaves]


def _molo_inputs(shape, dtype=torch.float64):
    g = torch.Generator().manual_seed(20)
    img = F.normalize(torch.randn(*shape, generator=g, dtype=torch.float64), dim=1)
    return img.to(dtype), _anisotropic(*shape, seed=21).to(dtype), torch.tensor(1.7, dtype=dtype)


def _assert_molo_agree(fast, plain, rtol: float, atol: float, grad_rtol: float, grad_atol: float):
    (out_f, grads_f), (out_p, grads_p) = fast, plain
    for name in ("loss", "global_loss", "comp_loss"):
        torch.testing.assert_close(getattr(out_f, name), getattr(out_p, name), rtol=rtol, atol=atol)
    assert out_f.explained_variance == pytest.approx(out_p.explained_variance, rel=rtol, abs=atol)
    for a, b in zip(grads_f, grads_p):  # image features, text features, logit scale
        torch.testing.assert_close(a, b, rtol=grad_rtol, atol=grad_atol)


@pytest.mark.parametrize("shape", [(40, 12), (12, 12), (9, 16)])  # batch >, =, < dim
@pytest.mark.parametrize("m", [1, 3, 6, 8])  # kept block smaller and larger than dropped
@pytest.mark.parametrize("detach", [False, True])
def test_molo_fast_matches_plain_fixed_m(shape, m, detach):
    """Loss and all gradients: the fast path == autograd through the SVD-built u'."""
    inputs = _molo_inputs(shape)
    kwargs = {"fixed_m": m, "lam": 0.7, "detach": detach}
    fast = _molo_value_and_grads(*inputs, **kwargs)
    plain = _molo_value_and_grads(*inputs, **kwargs, implementation="plain")
    assert fast[0].m == plain[0].m == m
    _assert_molo_agree(fast, plain, 1e-12, 1e-12, 1e-9, 1e-10)


@pytest.mark.parametrize("shape", [(40, 12), (9, 16)])
@pytest.mark.parametrize(
    "mode",
    [
        {"tau": 0.9},
        {"tau": 0.5},
        {"tau": 0.99},
        {"tau": 1e-9},
        {"fixed_m": 100},
        {"tau": 0.8, "renormalize": True},
        {"tau": 0.8, "detach": True, "renormalize": True},
        {"tau": 0.8, "label_smoothing": 0.0},
        {"tau": 0.8, "label_smoothing": 0.3, "lam": 2.0},
        {"tau": 0.8, "scope": "local"},
        {"tau": 0.8, "lam": 0.0},
    ],
)
def test_molo_fast_matches_plain(shape, mode):
    """τ rule, renormalize, detach, label smoothing, λ and scope: same m, loss and gradients."""
    inputs = _molo_inputs(shape)
    fast = _molo_value_and_grads(*inputs, **mode)
    plain = _molo_value_and_grads(*inputs, **mode, implementation="plain")
    assert fast[0].m == plain[0].m
    _assert_molo_agree(fast, plain, 1e-12, 1e-12, 1e-9, 1e-10)


@pytest.mark.parametrize("shape", [(40, 12), (12, 12), (9, 16)])
def test_molo_fast_matches_plain_at_tau_one(shape):
    """τ = 1 keeps every direction of nonzero variance. When batch ≤ dim the centred batch
    has a null direction, counted or not by rounding (m = rank or rank + 1); u', the loss
    and its gradients do not depend on it."""
    inputs = _molo_inputs(shape)
    fast = _molo_value_and_grads(*inputs, tau=1.0)
    plain = _molo_value_and_grads(*inputs, tau=1.0, implementation="plain")
    rank = min(shape[0] - 1, shape[1])
    assert rank <= fast[0].m <= min(shape) and rank <= plain[0].m <= min(shape)
    _assert_molo_agree(fast, plain, 1e-12, 1e-12, 1e-9, 1e-10)


@pytest.mark.parametrize("shape", [(64, 16), (16, 64)])
def test_molo_fast_matches_plain_float32(shape):
    inputs = _molo_inputs(shape, torch.float32)
    fast = _molo_value_and_grads(*inputs, tau=0.9)
    plain = _molo_value_and_grads(*inputs, tau=0.9, implementation="plain")
    assert fast[0].m == plain[0].m
    _assert_molo_agree(fast, plain, 1e-5, 1e-5, 1e-4, 1e-4)


@pytest.mark.parametrize("shape", [(8, 5), (4, 6)])  # (dim, dim) and (batch, batch) Gram
@pytest.mark.parametrize("fixed_m", [1, 3])  # kept block the smaller / the larger
@both
def test_molo_gradcheck_float64_both_blocks(shape, fixed_m, impl):
    g = torch.Generator().manual_seed(22)
    img = F.normalize(torch.randn(*shape, generator=g, dtype=torch.float64), dim=1)
    txt = _anisotropic(*shape, seed=23)
    scale = torch.tensor(1.0, dtype=torch.float64)
    inputs = tuple(t.requires_grad_() for t in (img, txt, scale))
    assert torch.autograd.gradcheck(
        lambda a, b, s: molo_loss(a, b, s, fixed_m=fixed_m, implementation=impl).loss, inputs
    )


@both
def test_molo_renormalize_uses_normalised_features(impl):
    torch.manual_seed(24)
    img = F.normalize(torch.randn(20, 6, dtype=torch.float64), dim=1)
    txt = _anisotropic(20, 6, seed=25)
    scale = torch.tensor(2.0, dtype=torch.float64)
    out = molo_loss(img, txt, scale, fixed_m=2, renormalize=True, implementation=impl)
    unit = hide(txt, fixed_m=2, renormalize=True, implementation=impl).features
    ref = symmetric_cross_entropy(scale.exp() * img @ unit.T, 0.1)
    torch.testing.assert_close(out.comp_loss, ref)


@both
def test_molo_float32_close_to_float64(impl):
    img = F.normalize(torch.randn(64, 16, dtype=torch.float64), dim=1)
    txt = _anisotropic(64, 16, seed=26)
    scale = torch.tensor(4.6052, dtype=torch.float64)
    ref = molo_loss(img, txt, scale, implementation=impl)
    out = molo_loss(img.float(), txt.float(), scale.float(), implementation=impl)
    assert out.m == ref.m and out.loss.dtype == torch.float32
    torch.testing.assert_close(out.loss.double(), ref.loss, rtol=1e-5, atol=1e-5)


@both
def test_non_finite_features_are_named_not_an_ill_conditioned_batch(impl):
    u = torch.randn(8, 16)
    u[3, 5] = float("nan")
    message = r"HiDe: the batch features hold \d+ non-finite value"
    with pytest.raises(NonFiniteFeaturesError, match=message):
        hide(u, implementation=impl)
    assert issubclass(NonFiniteFeaturesError, torch.linalg.LinAlgError)  # the loop's named stop
