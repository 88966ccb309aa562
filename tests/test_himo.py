"""HiDe and MoLo (SPEC §1.1) against numpy / open_clip references and autograd checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from open_clip.loss import ClipLoss

from paperlib.losses.contrastive import symmetric_cross_entropy
from paperlib.losses.himo import hide, molo_loss


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
def test_hide_matches_numpy_svd(shape, tau):
    u = _anisotropic(*shape, seed=1)
    out = hide(u, tau)
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


def test_hide_float32_matches_float64_reference():
    u = _anisotropic(64, 32, seed=2)
    out = hide(u.float(), 0.9)
    m, _, recon, _ = _numpy_hide(u.numpy(), 0.9)
    assert out.m == m and out.features.dtype == torch.float32
    np.testing.assert_allclose(out.features.numpy(), recon, atol=2e-5)


@pytest.mark.parametrize("shape", [(30, 8), (6, 16)])
def test_tau_one_reproduces_batch_and_fixed_rank(shape):
    u = _anisotropic(*shape, seed=3)
    torch.testing.assert_close(hide(u, 1.0).features, u, atol=1e-12, rtol=0)
    rank = min(shape[0] - 1, shape[1])  # centring removes one dimension when batch <= dim
    torch.testing.assert_close(hide(u, fixed_m=rank).features, u, atol=1e-12, rtol=0)
    assert hide(u, fixed_m=rank - 1).features.sub(u).abs().max() > 1e-4


def test_m_at_least_one_and_fixed_m_clamped():
    u = _anisotropic(20, 6, seed=4)
    assert hide(u, 1e-9).m == 1
    assert hide(u, fixed_m=100).m == 6
    with pytest.raises(ValueError, match="fixed_m"):
        hide(u, fixed_m=0)
    with pytest.raises(ValueError, match="tau"):
        hide(u, 0.0)
    with pytest.raises(ValueError, match="scope"):
        hide(u, scope="world")
    with pytest.raises(ValueError, match="batch, dim"):
        hide(u[0])


def test_permutation_equivariance():
    u = _anisotropic(25, 10, seed=5)
    perm = torch.randperm(25, generator=torch.Generator().manual_seed(0))
    a, b = hide(u, 0.9), hide(u[perm], 0.9)
    assert a.m == b.m
    torch.testing.assert_close(b.features, a.features[perm])


@pytest.mark.parametrize("n", [8, 40])
def test_identical_texts(n):
    row = F.normalize(torch.randn(1, 16, dtype=torch.float64), dim=1)
    u = row.repeat(n, 1).requires_grad_()
    out = hide(u, 0.9)
    assert out.m >= 1
    torch.testing.assert_close(out.features, u.detach(), atol=1e-12, rtol=0)
    (out.features * torch.randn_like(u)).sum().backward()
    assert torch.isfinite(u.grad).all()


@pytest.mark.parametrize("shape", [(7, 4), (4, 6)])
@pytest.mark.parametrize("mode", [{"fixed_m": 2}, {"tau": 0.8}])
def test_gradcheck_float64(shape, mode):
    u = _anisotropic(*shape, seed=6).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: hide(x, **mode).features, (u,))


def test_gradient_matches_svd_autograd():
    """Custom eigenprojector backward == autograd through torch.linalg.svd (distinct values)."""
    u = _anisotropic(30, 10, seed=7).requires_grad_()
    w = torch.randn(30, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    (hide(u, fixed_m=4).features * w).sum().backward()
    ours = u.grad.clone()
    u.grad = None
    x = u - u.mean(0)
    _, _, vt = torch.linalg.svd(x, full_matrices=False)
    ref = x @ vt[:4].T @ vt[:4] + u.mean(0)
    (ref * w).sum().backward()
    torch.testing.assert_close(ours, u.grad)


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
def test_detach_keeps_linear_gradient_only(shape):
    u = _anisotropic(*shape, seed=9).requires_grad_()
    w = torch.randn(*shape, dtype=torch.float64)
    out = hide(u, fixed_m=3, detach=True)
    (out.features * w).sum().backward()
    p = out.components  # constant directions
    ref_u = u.detach().clone().requires_grad_()
    x = ref_u - ref_u.mean(0)
    ((x @ p.T @ p + ref_u.mean(0)) * w).sum().backward()
    torch.testing.assert_close(u.grad, ref_u.grad)
    torch.testing.assert_close(out.features, hide(u, fixed_m=3).features)


def test_renormalize():
    u = _anisotropic(20, 8, seed=10)
    plain, unit = hide(u, 0.6), hide(u, 0.6, renormalize=True)
    assert plain.features.norm(dim=1).sub(1).abs().max() > 1e-3  # reference: not unit norm
    torch.testing.assert_close(unit.features, F.normalize(plain.features, dim=1))


def test_autocast_runs_decomposition_in_float32():
    u = _anisotropic(64, 32, seed=11).to(torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = hide(u, 0.9)
    ref = hide(u.float(), 0.9)
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


def test_molo_is_global_plus_lambda_comp():
    torch.manual_seed(1)
    img = F.normalize(torch.randn(24, 10, dtype=torch.float64), dim=1)
    txt = _anisotropic(24, 10, seed=12)
    scale = torch.tensor(2.0, dtype=torch.float64)
    out = molo_loss(img, txt, scale, lam=0.5, tau=0.9, label_smoothing=0.1)
    m, _, recon, ratio = _numpy_hide(txt.numpy(), 0.9)
    comp = symmetric_cross_entropy(scale.exp() * img @ torch.from_numpy(recon).T, 0.1)
    glob = symmetric_cross_entropy(scale.exp() * img @ txt.T, 0.1)
    torch.testing.assert_close(out.comp_loss, comp)
    torch.testing.assert_close(out.global_loss, glob)
    torch.testing.assert_close(out.loss, glob + 0.5 * comp)
    assert out.m == m and out.explained_variance == pytest.approx(ratio)


def test_molo_gradcheck_float64():
    img = F.normalize(torch.randn(8, 5, dtype=torch.float64), dim=1).requires_grad_()
    txt = _anisotropic(8, 5, seed=13).requires_grad_()
    scale = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda a, b, s: molo_loss(a, b, s, fixed_m=2).loss, (img, txt, scale)
    )


def test_molo_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="same"):
        molo_loss(torch.randn(4, 3), torch.randn(5, 3), torch.tensor(1.0))


def _svd_molo(img, txt, scale, m: int, lam: float, detach: bool = False):
    """Reference MoLo: u' from autograd through torch.linalg.svd, logits from explicit u'."""
    mean = txt.mean(0)
    x = txt - mean
    _, _, vt = torch.linalg.svd(x, full_matrices=False)
    p = vt[:m].detach() if detach else vt[:m]
    comp = x @ p.T @ p + mean
    glob = symmetric_cross_entropy(scale.exp() * img @ txt.T, 0.1)
    return glob + lam * symmetric_cross_entropy(scale.exp() * img @ comp.T, 0.1)


@pytest.mark.parametrize("shape", [(40, 12), (12, 12), (9, 16)])  # batch >, =, < dim
@pytest.mark.parametrize("m", [1, 3, 6, 8])  # kept block smaller and larger than dropped
@pytest.mark.parametrize("detach", [False, True])
def test_molo_matches_svd_autograd(shape, m, detach):
    """Loss and all gradients equal autograd through an explicit SVD-built u'."""
    g = torch.Generator().manual_seed(20)
    img = F.normalize(torch.randn(*shape, generator=g, dtype=torch.float64), dim=1)
    txt = _anisotropic(*shape, seed=21)
    scale = torch.tensor(1.7, dtype=torch.float64)
    ours = [t.clone().requires_grad_() for t in (img, txt, scale)]
    out = molo_loss(*ours, fixed_m=m, lam=0.7, detach=detach)
    out.loss.backward()
    ref = [t.clone().requires_grad_() for t in (img, txt, scale)]
    ref_loss = _svd_molo(*ref, m, 0.7, detach)
    ref_loss.backward()
    assert out.m == m
    torch.testing.assert_close(out.loss, ref_loss, rtol=1e-12, atol=1e-12)
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(8, 5), (4, 6)])  # (dim, dim) and (batch, batch) Gram
@pytest.mark.parametrize("fixed_m", [1, 3])  # kept block the smaller / the larger
def test_molo_gradcheck_float64_both_blocks(shape, fixed_m):
    g = torch.Generator().manual_seed(22)
    img = F.normalize(torch.randn(*shape, generator=g, dtype=torch.float64), dim=1)
    txt = _anisotropic(*shape, seed=23)
    scale = torch.tensor(1.0, dtype=torch.float64)
    inputs = tuple(t.requires_grad_() for t in (img, txt, scale))
    assert torch.autograd.gradcheck(
        lambda a, b, s: molo_loss(a, b, s, fixed_m=fixed_m).loss, inputs
    )


def test_molo_renormalize_uses_normalised_features():
    torch.manual_seed(24)
    img = F.normalize(torch.randn(20, 6, dtype=torch.float64), dim=1)
    txt = _anisotropic(20, 6, seed=25)
    scale = torch.tensor(2.0, dtype=torch.float64)
    out = molo_loss(img, txt, scale, fixed_m=2, renormalize=True)
    unit = hide(txt, fixed_m=2, renormalize=True).features
    ref = symmetric_cross_entropy(scale.exp() * img @ unit.T, 0.1)
    torch.testing.assert_close(out.comp_loss, ref)


def test_molo_float32_close_to_float64():
    img = F.normalize(torch.randn(64, 16, dtype=torch.float64), dim=1)
    txt = _anisotropic(64, 16, seed=26)
    scale = torch.tensor(4.6052, dtype=torch.float64)
    ref = molo_loss(img, txt, scale)
    out = molo_loss(img.float(), txt.float(), scale.float())
    assert out.m == ref.m and out.loss.dtype == torch.float32
    torch.testing.assert_close(out.loss.double(), ref.loss, rtol=1e-5, atol=1e-5)


def test_non_finite_features_are_named_not_an_ill_conditioned_batch():
    from paperlib.losses.himo import NonFiniteFeaturesError

    u = torch.randn(8, 16)
    u[3, 5] = float("nan")
    with pytest.raises(NonFiniteFeaturesError, match=r"HiDe: the batch features hold \d+ non-finite value"):
        hide(u)
    assert issubclass(NonFiniteFeaturesError, torch.linalg.LinAlgError)  # the loop's named stop
