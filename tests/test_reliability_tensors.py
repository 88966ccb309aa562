"""Hostile tensors to the public losses, metrics and geometry maps: an empty batch, a 1-D
vector, integers, a NumPy array, mixed dtypes or devices, mismatched shapes and NaN/inf are
refused by a TypeError or ValueError that names the argument; a batch of one, half precision,
float64, expanded and non-contiguous inputs give the result of the float64 (or contiguous)
reference; the degenerate points (identical texts in HiDe/MoLo, the origin and huge norms of
the Lorentz maps, zero-norm points of the entailment cone) keep finite gradients that match
the closed form or finite differences."""

from __future__ import annotations

import math
import re

import pytest
import torch
import torch.nn.functional as F

from paperlib.geometry import lorentz
from paperlib.losses import entailment, himo, longclip
from paperlib.losses.batch import HyperbolicBatch
from paperlib.losses.contrastive import infonce_loss
from paperlib.metrics import retrieval, scores
from paperlib.tensor_checks import NonFiniteInputError

SCALE = torch.tensor(math.log(10.0))


def _scale(like: object) -> torch.Tensor:
    """The log logit scale in ``like``'s dtype (float32 for what is not a float tensor)."""
    floating = isinstance(like, torch.Tensor) and like.is_floating_point()
    return SCALE.to(like.dtype) if floating else SCALE


def _unit(n: int, d: int = 8, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return F.normalize(torch.randn(n, d, generator=g, dtype=torch.float64), dim=-1).to(dtype)


def _space(n: int, d: int = 8, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    return 0.4 * _unit(n, d, seed, dtype)


def _batch(image, text, box_image=None, box_text=None) -> HyperbolicBatch:
    return HyperbolicBatch(image, text, 1.0, _scale(image), box_image, box_text)


def _boxed(n: int, dtype=torch.float32) -> HyperbolicBatch:
    return _batch(*(_space(n, seed=s, dtype=dtype) for s in range(4)))


#: name: (a loss of (image, text), the names its refusals use for the two arguments)
LOSSES = {
    "infonce": (lambda a, b: infonce_loss(a, b, _scale(a)), "image_features"),
    "molo": (lambda a, b: himo.molo_loss(a, b, _scale(a)).loss, "image_features"),
    "longclip": (
        lambda a, b: longclip.longclip_loss(a, b, b, _scale(a), pcm_dim=2).total,
        "image",
    ),
    "meru": (lambda a, b: entailment.meru_loss(_batch(a, b)).total, "image"),
    "argent": (lambda a, b: entailment.argent_loss(_batch(a, b, a, b)).total, "image"),
    "entailment": (lambda a, b: entailment.entailment_loss(a, b, 1.0), "parent"),
    "adaent": (lambda a, b: entailment.adaent_loss(a, b, 1.0), "parent"),
}


def _hostile(kind: str) -> tuple[object, object, str, type]:
    """(first argument, second argument, what the message holds, error type)."""
    good = _space(4)
    return {
        "empty batch": (good[:0], good[:0], "non-empty (batch, dim)", ValueError),
        "1-D vector": (good[0], good[1], "non-empty (batch, dim)", ValueError),
        "integers": (good.long(), good.long(), "floating-point", TypeError),
        "NumPy array": (good.numpy(), good.numpy(), "torch.Tensor", TypeError),
        "mixed dtypes": (good, good.double(), "one dtype", TypeError),
        "mixed devices": (good, good.to("meta"), "one device", ValueError),
        "other batch": (good, good[:3], "same (batch, dim) shape", ValueError),
        "other dim": (good, _space(4, 6), "same (batch, dim) shape", ValueError),
    }[kind]


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize(
    "kind",
    [
        "empty batch",
        "1-D vector",
        "integers",
        "NumPy array",
        "mixed dtypes",
        "mixed devices",
        "other batch",
        "other dim",
    ],
)
def test_a_loss_refuses_hostile_tensors_naming_the_argument(loss, kind):
    fn, first = LOSSES[loss]
    a, b, expected, error = _hostile(kind)
    with pytest.raises(error, match=re.escape(expected)) as caught:
        fn(a, b)
    assert first in str(caught.value) or loss in ("molo",) and "text_features" in str(caught.value)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_loss_refuses_non_finite_features_naming_them(loss, value):
    fn, _ = LOSSES[loss]
    image, text = _space(4), _space(4, seed=1)
    image[2, 3] = value
    with pytest.raises(ValueError, match="non-finite|NaN or inf") as caught:
        fn(image, text)
    if loss != "molo":  # MoLo's HiDe names its own input (the batch it decomposes)
        assert isinstance(caught.value, NonFiniteInputError)
        assert caught.value.args[0].startswith(LOSSES[loss][1])


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_a_loss_in_any_precision_is_its_float64_value(loss, dtype):
    fn, _ = LOSSES[loss]
    a64, b64 = _space(6, seed=2, dtype=torch.float64), _space(6, seed=3, dtype=torch.float64)
    reference = float(fn(a64, b64))
    value = fn(a64.to(dtype), b64.to(dtype))
    assert torch.isfinite(value)
    tolerance = {torch.float16: 2e-2, torch.bfloat16: 6e-2, torch.float32: 1e-5}[dtype]
    assert float(value) == pytest.approx(reference, rel=tolerance, abs=tolerance)


@pytest.mark.parametrize("loss", ["infonce", "molo", "longclip"])
def test_a_contrastive_loss_of_one_pair_is_zero(loss):
    """One pair: each cross entropy has one class, so the loss is exactly 0 (any smoothing)."""
    fn, _ = LOSSES[loss]
    a, b = (_unit(1, seed=s).requires_grad_() for s in (4, 5))
    value = fn(a, b)
    value.backward()
    assert float(value) == 0.0 and float(a.grad.abs().max()) == 0.0


@pytest.mark.parametrize("loss", list(LOSSES))
def test_expanded_and_non_contiguous_inputs_give_the_contiguous_result(loss):
    fn, _ = LOSSES[loss]
    wide = _space(8, 5, seed=6)
    strided = wide.T  # (5, 8), a transposed view
    expanded = _space(1, 8, seed=7).expand(5, 8)  # one row, stride 0
    assert not strided.is_contiguous() and expanded.stride(0) == 0
    expected = fn(strided.contiguous(), expanded.contiguous())
    assert torch.allclose(fn(strided, expanded), expected, rtol=1e-6, atol=1e-7)


def test_boxed_losses_refuse_a_box_set_of_another_shape():
    b = _boxed(4)
    with pytest.raises(ValueError, match=r"box_text has shape \(3, 8\) but image has \(4, 8\)"):
        _batch(b.image, b.text, b.box_image, b.box_text[:3])


def test_norm_regularizer_refuses_an_empty_set_and_names_a_bad_tensor():
    with pytest.raises(ValueError, match="at least one"):
        entailment.norm_regularizer()
    with pytest.raises(TypeError, match=r"features\[1\] must be a floating-point"):
        entailment.norm_regularizer(_space(3), torch.ones(3, 8, dtype=torch.long))


# ---------------------------------------------------------------- gradients at degenerate points


@pytest.mark.parametrize("scope", ["global", "local"])
@pytest.mark.parametrize("fixed_m", [None, 2])
def test_molo_with_identical_texts_has_the_finite_difference_gradient(scope, fixed_m):
    """Every text of the batch the same: HiDe's spectrum is all zero. The loss keeps a finite
    gradient; towards the images (the decomposition does not depend on them) it is the
    central finite difference of the float64 loss."""
    images = _unit(5, seed=8, dtype=torch.float64).requires_grad_()
    texts = _unit(1, seed=9, dtype=torch.float64).expand(5, 8).clone().requires_grad_()

    def loss(v):
        return himo.molo_loss(v, texts, SCALE.double(), scope=scope, fixed_m=fixed_m).loss

    loss(images).backward()
    assert torch.isfinite(texts.grad).all() and torch.isfinite(images.grad).all()
    texts.grad = None
    assert torch.autograd.gradcheck(loss, (images,), eps=1e-6, atol=1e-6)


def test_hide_of_identical_texts_returns_them_with_a_finite_gradient():
    """Centred rows all zero: u' = ū = u, whatever m; the gradient is finite."""
    texts = _unit(1, seed=10).expand(4, 8).clone().requires_grad_()
    out = himo.hide(texts)
    assert torch.allclose(out.features, texts, atol=1e-6)
    out.features.sum().backward()
    assert torch.isfinite(texts.grad).all()


def _jacobian(fn, x: torch.Tensor) -> torch.Tensor:
    return torch.autograd.functional.jacobian(fn, x)


@pytest.mark.parametrize("name", ["exp_map0", "log_map0"])
def test_the_lorentz_maps_at_the_origin_are_zero_with_the_identity_jacobian(name):
    fn = getattr(lorentz, name)
    origin = torch.zeros(1, 4, dtype=torch.float64)
    assert torch.equal(fn(origin, 0.7), origin)
    jac = _jacobian(lambda v: fn(v, 0.7), origin).reshape(4, 4)
    assert torch.allclose(jac, torch.eye(4, dtype=torch.float64), atol=1e-12)


def test_exp_map0_at_huge_norms_is_the_clamped_closed_form_with_finite_gradients():
    v = torch.tensor([[1e6, 0.0, 0.0], [0.0, -3e4, 4e4]], requires_grad=True)
    out = lorentz.exp_map0(v, 1.0)
    direction = v.detach() / v.detach().norm(dim=-1, keepdim=True)
    assert torch.allclose(out, math.sinh(lorentz.MAX_SINH_ARG) * direction, rtol=1e-6)
    out.sum().backward()
    assert torch.isfinite(v.grad).all()


def test_log_map0_at_huge_norms_is_the_float64_textbook_form_with_finite_gradients():
    x = torch.tensor([[1e18, 0.0], [3e15, -4e15]], dtype=torch.float32, requires_grad=True)
    out = lorentz.log_map0(x, 2.0)
    x64 = x.detach().double()
    norm = x64.norm(dim=-1, keepdim=True)
    expected = torch.asinh(math.sqrt(2.0) * norm) / math.sqrt(2.0) * x64 / norm
    assert torch.allclose(out.double(), expected, rtol=1e-6)
    out.sum().backward()
    assert torch.isfinite(x.grad).all()


def test_a_zero_norm_child_lies_at_angle_pi_and_its_cone_loss_is_the_closed_form():
    """From any parent, the origin lies straight back along the geodesic: φ = π, and the cone
    loss is mean(relu(π − η·aperture(parent)))."""
    parent = _space(3, 4, seed=11).double().requires_grad_()
    child = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    angle = lorentz.exterior_angle(parent, child, 1.0)
    assert torch.allclose(angle, torch.full((3,), math.pi, dtype=torch.float64))
    loss = entailment.entailment_loss(parent, child, 1.0, eta=0.7)
    aperture = lorentz.half_aperture(parent.detach(), 1.0)
    assert float(loss) == pytest.approx(float(F.relu(math.pi - 0.7 * aperture).mean()))
    loss.backward()
    assert torch.isfinite(parent.grad).all() and torch.isfinite(child.grad).all()


def test_cone_losses_at_zero_norm_parents_have_finite_finite_difference_gradients():
    """A parent at the origin has the widest cone (the aperture saturates): the losses keep a
    finite gradient that matches central finite differences in float64."""
    parent = torch.zeros(3, 4, dtype=torch.float64, requires_grad=True)
    child = _space(3, 4, seed=12).double().requires_grad_()
    for loss in (entailment.entailment_loss, entailment.adaent_loss):
        value = loss(parent, child, 1.0)
        value.backward()
        assert torch.isfinite(value) and torch.isfinite(parent.grad).all()
        assert torch.autograd.gradcheck(lambda c, fn=loss: fn(parent.detach(), c, 1.0), (child,))
        parent.grad = child.grad = None
    reg = torch.zeros(2, 4, requires_grad=True)
    entailment.norm_regularizer(reg).backward()
    assert torch.isfinite(reg.grad).all()


# ---------------------------------------------------------------- geometry and metrics


@pytest.mark.parametrize(
    "call",
    [
        lambda x, y: lorentz.pairwise_dist(x, y, 1.0),
        lambda x, y: lorentz.paired_dist(x, y, 1.0),
        lambda x, y: lorentz.exterior_angle(x, y, 1.0),
        lambda x, y: lorentz.lorentz_inner(x, y, 1.0),
    ],
    ids=["pairwise_dist", "paired_dist", "exterior_angle", "lorentz_inner"],
)
def test_two_point_geometry_refuses_integers_and_mixed_devices_by_name(call):
    x = _space(3, 4)
    with pytest.raises(TypeError, match=r"^y must be a floating-point tensor|^child must be"):
        call(x, torch.ones(3, 4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"is on meta but .* is on cpu; expected one device"):
        call(x, x.to("meta"))


def test_geometry_of_mixed_float_dtypes_is_the_float64_result():
    x, y = _space(3, 4, seed=13), _space(3, 4, seed=14, dtype=torch.float64)
    expected = lorentz.pairwise_dist(x.double(), y, 1.0)
    assert torch.allclose(lorentz.pairwise_dist(x, y, 1.0), expected, rtol=1e-12)


@pytest.mark.parametrize("geometry", ["euclidean", "hyperbolic"])
def test_scores_refuse_mixed_dtypes_and_devices_and_agree_on_strided_inputs(geometry):
    x = _space(4, 6, seed=15)
    with pytest.raises(TypeError, match="text_features has dtype torch.float64"):
        scores.pairwise_scores(x, x.double(), geometry, 1.0)
    with pytest.raises(ValueError, match="text_features is on meta"):
        scores.pairwise_scores(x, x.to("meta"), geometry, 1.0)
    with pytest.raises(ValueError, match="text_features is on meta"):
        scores.paired_scores(geometry, 1.0, x, x.to("meta"))
    strided = _space(6, 4, seed=16).T
    expanded = _space(1, 6, seed=17).expand(4, 6)
    got = scores.pairwise_scores(strided, expanded, geometry, 1.0)
    want = scores.pairwise_scores(strided.double(), expanded.double(), geometry, 1.0)
    assert torch.allclose(got.double(), want, atol=1e-6)


def test_retrieval_of_an_empty_batch_and_of_one_pair():
    with pytest.raises(ValueError, match="num_images"):
        retrieval.retrieval_metrics(_unit(0, 4), _unit(0, 4))
    one = retrieval.retrieval_metrics(_unit(1, 4), _unit(1, 4, seed=1))
    assert all(value == 1.0 for value in one.values())  # one candidate: always ranked first
