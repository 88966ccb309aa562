"""Aperture-failure diagnostics (docs/methods/argent.md#aperture-failure) against a naive per-row
loop."""

from __future__ import annotations

import json
import math

import pytest
import torch

from paperlib.geometry import lorentz as L
from paperlib.metrics.diagnostics import aperture_diagnostics


def _features():
    gen = torch.Generator().manual_seed(0)
    scales = {"image": 1.5, "text": 0.4, "box_image": 0.9, "box_text": 0.3}
    return {k: torch.randn(16, 6, generator=gen) * s / math.sqrt(6) for k, s in scales.items()}


def test_values_match_a_naive_loop():
    feats, curv = _features(), 0.1
    out = aperture_diagnostics(feats, curv)
    radius = 2 * 0.1 / math.sqrt(curv)
    assert out["aperture_radius"] == pytest.approx(0.6325, abs=1e-4)
    for name, x in feats.items():
        norms = [float(r.norm()) for r in x]
        inside = sum(n < radius for n in norms) / len(norms)
        assert out[f"{name}/frac_inside_radius"] == pytest.approx(inside)
        assert out[f"{name}/norm_mean"] == pytest.approx(sum(norms) / len(norms), rel=1e-5)
        assert out[f"{name}/norm_max"] == pytest.approx(max(norms), rel=1e-6)
    parent, child = feats["text"], feats["image"]
    angles = [float(L.exterior_angle(p[None], c[None], curv)) for p, c in zip(parent, child)]
    apertures = [
        math.asin(min(2 * 0.1 / (math.sqrt(curv) * float(p.norm())), 1 - 1e-4)) for p in parent
    ]
    assert out["text->image/angle_mean"] == pytest.approx(sum(angles) / 16, rel=1e-5)
    assert out["text->image/aperture_mean"] == pytest.approx(sum(apertures) / 16, rel=1e-5)
    outside = sum(a > b for a, b in zip(angles, apertures)) / 16
    assert out["text->image/frac_outside_cone"] == pytest.approx(outside)
    assert 0 < out["text/frac_inside_radius"] <= 1


def test_is_a_flat_json_dict_and_checks_names():
    out = aperture_diagnostics(_features(), 1.0)
    assert all(isinstance(v, float) for v in out.values())
    json.dumps(out)
    assert "box_text->text/frac_parent_inside_radius" in out
    with pytest.raises(KeyError, match="caption"):
        aperture_diagnostics(_features(), 1.0, pairs=[("caption", "image")])
