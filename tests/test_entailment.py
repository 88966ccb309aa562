"""Hyperbolic losses (docs/methods/argent.md: MERU, HyCoCLIP, ARGENT) against naive per-pair
loops."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from paperlib.geometry import lorentz as L
from paperlib.losses import entailment as E
from paperlib.losses import hyperbolic_contrastive as HC
from paperlib.losses.batch import HyperbolicBatch

CURV = 0.7


def _features(seed: int, n: int = 5, dim: int = 6, scale: float = 0.8):
    gen = torch.Generator().manual_seed(seed)
    return [L.exp_map0(torch.randn(n, dim, generator=gen) * scale, CURV) for _ in range(4)]


def _batch(image, text, box_image=None, box_text=None, scale=1.0, curv=CURV):
    return HyperbolicBatch(image, text, curv, torch.tensor(scale), box_image, box_text)


def _time(x):
    return math.sqrt(1 / CURV + sum(v * v for v in x))


def _inner(x, y):
    return sum(a * b for a, b in zip(x, y)) - _time(x) * _time(y)


def _naive_dist(x, y):
    """Textbook ``acosh(−c⟨x,y⟩_L)/√c`` in Python floats."""
    x, y = x.double().tolist(), y.double().tolist()
    return math.acosh(max(1.0, -CURV * _inner(x, y))) / math.sqrt(CURV)


def _naive_angle(p, c):
    """MERU's ``oxy_angle`` formula (docs/methods/conventions.md#exterior-angle) in floats."""
    p, c = p.double().tolist(), c.double().tolist()
    c_inner = CURV * _inner(p, c)
    num = _time(c) + c_inner * _time(p)
    den = math.sqrt(sum(v * v for v in p)) * math.sqrt(c_inner**2 - 1)
    return math.acos(max(-1.0, min(1.0, num / den)))


def _naive_ce(rows):
    """Mean over rows of −log softmax(row)[i] (plain Python)."""
    total = 0.0
    for i, row in enumerate(rows):
        total += -row[i] + math.log(sum(math.exp(v) for v in row))
    return total / len(rows)


def _naive_logits(a, b, scale):
    return [[-_naive_dist(x, y) * math.exp(scale) for y in b] for x in a]


def _transpose(m):
    return [list(r) for r in zip(*m)]


def test_hyperbolic_contrastive_matches_naive_loop():
    image, text, _, _ = _features(0)
    logits = _naive_logits(image, text, 2.0)
    expected = 0.5 * (_naive_ce(logits) + _naive_ce(_transpose(logits)))
    got = HC.hyperbolic_contrastive_loss(_batch(image, text, scale=2.0))
    assert float(got) == pytest.approx(expected, rel=1e-5)


def test_hycoclip_contrastive_matches_naive_loop():
    image, text, box_image, box_text = _features(1)
    it = _naive_logits(image, text, 1.5)
    expected = 0.25 * (
        _naive_ce(it)
        + _naive_ce(_transpose(it))
        + _naive_ce(_naive_logits(box_image, text, 1.5))
        + _naive_ce(_naive_logits(box_text, image, 1.5))
    )
    got = HC.hycoclip_contrastive_loss(_batch(image, text, box_image, box_text, scale=1.5))
    assert float(got) == pytest.approx(expected, rel=1e-5)


def _naive_cone(parent, child, eta):
    total = 0.0
    for p, c in zip(parent, child):
        aperture = math.asin(min(2 * 0.1 / (math.sqrt(CURV) * float(p.norm())), 1 - 1e-4))
        total += max(0.0, _naive_angle(p, c) - eta * aperture)
    return total / len(parent)


def test_meru_and_hycoclip_totals_match_naive_loops():
    image, text, box_image, box_text = _features(2, scale=1.5)
    meru = E.meru_loss(_batch(image, text))
    assert float(meru.entailment) == pytest.approx(_naive_cone(text, image, 1.0), rel=1e-5)
    assert float(meru.entailment) > 0
    assert float(meru.total) == pytest.approx(float(meru.contrastive + 0.2 * meru.entailment))
    hy = E.hycoclip_loss(_batch(image, text, box_image, box_text))
    naive_ent = 0.5 * (
        _naive_cone(text, image, 0.7)
        + _naive_cone(box_text, box_image, 0.7)
        + _naive_cone(box_image, image, 1.2)
        + _naive_cone(box_text, text, 1.2)
    )
    assert float(hy.entailment) == pytest.approx(naive_ent, rel=1e-5)
    assert float(hy.total) == pytest.approx(float(hy.contrastive) + 0.2 * naive_ent, rel=1e-6)


def _huber(phi, beta):
    return 0.5 * phi**2 / beta if phi < beta else phi - 0.5 * beta


def _naive_adaent(parent, child, intra, weights, beta, placement, normalize):
    losses, hs = [], []
    for p, c in zip(parent, child):
        use_h = weights == "all" or (weights == "intra" and intra)
        h = 1 - math.exp(-_naive_dist(p, c)) if use_h else 1.0
        phi = _naive_angle(p, c)
        losses.append(h * _huber(phi, beta) if placement == "outside" else _huber(h * phi, beta))
        hs.append(h)
    return sum(losses) / (sum(hs) if normalize == "weighted" else len(losses))


@pytest.mark.parametrize("weights", ["intra", "all", "none"])
@pytest.mark.parametrize(
    "placement,normalize", [("outside", "mean"), ("outside", "weighted"), ("inside", "mean")]
)
def test_argent_loss_matches_naive_loop(weights, placement, normalize):
    image, text, box_image, box_text = _features(3, scale=1.2)
    beta = 0.3
    config = E.ARGENTConfig(
        weights=weights, adaent_beta=beta, adaent_placement=placement, adaent_normalize=normalize
    )
    out = E.argent_loss(_batch(image, text, box_image, box_text), config)
    pairs = [
        (text, image, False),
        (box_text, box_image, False),
        (box_image, image, True),
        (box_text, text, True),
    ]
    naive = 0.5 * sum(
        _naive_adaent(p, c, intra, weights, beta, placement, normalize) for p, c, intra in pairs
    )
    assert float(out.entailment) == pytest.approx(naive, rel=1e-5)
    feats = torch.cat([image, text, box_image, box_text]).double()
    naive_reg = sum(float(x.norm()) ** 2 - math.log(float(x.norm())) for x in feats) / len(feats)
    assert float(out.regularizer) == pytest.approx(naive_reg, rel=1e-5)
    expected = float(out.contrastive) + 0.1 * naive + 0.1 * naive_reg
    assert float(out.total) == pytest.approx(expected, rel=1e-5)


def test_argent_ablations_are_reachable():
    batch = _batch(*_features(4, scale=1.2))
    ent = E.argent_loss(batch, E.ARGENTConfig(entailment="ent", regularize=False))
    hy = E.hycoclip_loss(batch)
    assert float(ent.entailment) == pytest.approx(float(hy.entailment))
    assert float(ent.regularizer) == 0.0
    assert float(ent.total) == pytest.approx(float(hy.contrastive + 0.1 * hy.entailment))
    for bad, key in (
        ({"weights": "some"}, "weights"),
        ({"entailment": "cone"}, "entailment"),
        ({"adaent_normalize": "weighted", "adaent_placement": "inside"}, "adaent_normalize"),
        ({"adaent_beta": 0.0}, "adaent_beta"),
        ({"gamma1": -0.1}, "gamma1"),
    ):
        with pytest.raises(ValueError, match=rf"^{key}: expected"):
            E.ARGENTConfig(**bad)
    with pytest.raises(ValueError, match="placement"):
        E.argent_loss(batch, E.ARGENTConfig(adaent_placement="around"))
    with pytest.raises(ValueError, match="box_image and box_text"):
        E.argent_loss(_batch(batch.image, batch.text))
    assert set(ent.as_dict()) == {"total", "contrastive", "entailment", "regularizer"}


def test_adaent_weight_limits():
    parent = _features(5)[0]
    near = parent + 1e-4
    h_near = E.adaent_weight(parent, near, CURV, intra=True)
    h_same = E.adaent_weight(parent, parent, CURV, intra=True)
    assert float(h_same.max()) == 0.0 and float(h_near.max()) < 1e-3
    far = E.adaent_weight(parent, 30 * parent, CURV, intra=True)
    assert float(far.min()) > 0.9
    torch.testing.assert_close(E.adaent_weight(parent, near, CURV, intra=False), torch.ones(5))
    d = L.paired_dist(parent, 2 * parent, CURV)
    torch.testing.assert_close(E.adaent_weight(parent, 2 * parent, CURV, True), 1 - torch.exp(-d))
    undetached = E.adaent_weight(parent.requires_grad_(True), 2 * parent, CURV, True, detach=False)
    assert undetached.requires_grad
    assert not E.adaent_weight(parent, 2 * parent, CURV, True).requires_grad


def test_regularizer_minimum_at_inverse_sqrt_two():
    direction = F.normalize(torch.randn(1, 4, generator=torch.Generator().manual_seed(6)), dim=-1)
    radii = torch.linspace(0.3, 1.5, 1201)
    values = torch.stack([E.norm_regularizer(r * direction) for r in radii])
    assert float(radii[values.argmin()]) == pytest.approx(1 / math.sqrt(2), abs=1e-3)
    x = (direction / math.sqrt(2)).requires_grad_(True)
    (grad,) = torch.autograd.grad(E.norm_regularizer(x), x)
    assert float(grad.abs().max()) < 1e-5


def test_gradients_finite_at_zero_distance_and_zero_norm():
    image, text, box_image, _ = _features(7)
    inputs = [image, text, image.clone(), text.clone()]  # box = full: d = 0 for intra pairs
    inputs[0] = torch.cat([torch.zeros(1, 6), image[1:]])  # a point at the origin
    inputs = [x.clone().requires_grad_(True) for x in inputs]
    for kwargs in ({}, {"weights": "all", "detach_weight": False}, {"entailment": "ent"}):
        out = E.argent_loss(_batch(*inputs), E.ARGENTConfig(**kwargs))
        grads = torch.autograd.grad(out.total, inputs)
        assert all(bool(torch.isfinite(g).all()) for g in grads), kwargs
        assert bool(torch.isfinite(out.total))
    del box_image
