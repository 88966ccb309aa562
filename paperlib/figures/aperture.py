"""MERU's half aperture and where it fails (notebook 03): the aperture against the parent
norm, its gradient near the boundary, the entailment losses along a ray, AdaEnt's penalty and
weight, and the aperture diagnostics over training."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from paperlib.analysis.hyperbolic import (
    CommonStart,
    Drift,
    SeedSummary,
)

RADIUS_LABEL = r"radius $2K/\sqrt{c}$ (ARGENT's c)"
#: the panels of :func:`aperture_training_panels`: (y label, title, the quantity's range)
APERTURE_PANELS = (
    ("mean caption norm ‖x‖", "caption (parent) norms", (0.0, np.inf)),
    ("fraction of captions inside 2K/√c", "captions with an undefined aperture", (0.0, 1.0)),
    ("mean half aperture ω (rad)", "half aperture of captions", (0.0, np.pi / 2)),
)
#: the panels of :func:`box_norm_panels`
BOX_PANELS = ("mean box-phrase norm", "mean box-crop norm")


def mean_and_band(
    ax: plt.Axes,
    summary,
    label: str,
    bounds: tuple[float | None, float | None] = (None, None),
    **style: Any,
) -> None:
    """A :class:`~paperlib.analysis.hyperbolic.SeedSummary`'s mean over seeds (labelled with
    the seed count) and, for more than one seed, a ± one-standard-deviation band clipped to
    ``bounds`` (the quantity's range)."""
    ax.plot(
        summary.steps,
        summary.mean,
        marker="o",
        ms=3,
        label=f"{label} ({summary.n_seeds} seed(s))",
        **style,
    )
    if summary.n_seeds > 1:
        low, high = bounds
        ax.fill_between(
            summary.steps,
            np.clip(summary.mean - summary.std, low, high),
            np.clip(summary.mean + summary.std, low, high),
            color=style.get("color"),
            alpha=0.15,
        )


def half_aperture_curves(
    norms, apertures: Mapping[float, Any], radii: Mapping[float, float], min_radius: float
) -> plt.Figure:
    """The half aperture against the parent norm, one curve per curvature (``apertures[c]``
    over ``norms``): solid outside the radius ``radii[c]`` (dashed line), dotted inside it, where
    the implementation clamps it at π/2."""
    norms = np.asarray(norms)
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for c, aperture in apertures.items():
        aperture, inside = np.asarray(aperture), norms < radii[c]
        line = ax.plot(norms[~inside], aperture[~inside], label=f"c = {c:g}")[0]
        ax.plot(norms[inside], aperture[inside], ls=":", color=line.get_color())
        ax.axvline(radii[c], color=line.get_color(), lw=0.8, ls="--")
    ax.set_xlabel(r"parent norm $\|x\|$ (space part, Lorentz coordinates)")
    ax.set_ylabel(r"half aperture $\omega$ (rad)")
    ax.set_title(
        rf"$\omega(x)=\arcsin(2K/(\sqrt{{c}}\|x\|))$, K = {min_radius:g}; dotted: clamped at "
        r"$\pi/2$"
    )
    ticks = [0, np.pi / 8, np.pi / 4, 3 * np.pi / 8, np.pi / 2]
    ax.set_yticks(ticks, ["0", "π/8", "π/4", "3π/8", "π/2"])
    ax.legend(title=r"dashed: $2K/\sqrt{c}$")
    return fig


def aperture_gradient_panels(
    zoom, profiles: Mapping[str, tuple[Any, Any, Any]], r0: float, curv: float
) -> plt.Figure:
    """Per implementation ``profiles[label] = (aperture over zoom, gap, grad)``: left, its half
    aperture near the boundary ``r0`` (the undefined region shaded); right, |dω/d‖x‖| against
    the distance ``gap`` outside the boundary on log–log axes (zero gradients, which a log axis
    cannot show, left out), a dot at its largest value."""
    zoom = np.asarray(zoom, dtype=float)
    fig, (ax_w, ax_g) = plt.subplots(1, 2, figsize=(11, 3.8))
    for (label, (aperture, gap, grad)), style in zip(
        profiles.items(), itertools.cycle("- -- :".split())
    ):
        ax_w.plot(zoom, np.asarray(aperture, dtype=float), ls=style, label=label)
        gap, grad = np.asarray(gap, dtype=float), np.abs(np.asarray(grad, dtype=float))
        shown = (gap > 0) & (grad != 0)
        line = ax_g.loglog(gap[shown], grad[shown], ls=style, label=label)[0]
        peak = int(grad.argmax())
        ax_g.plot(gap[peak], grad[peak], "o", color=line.get_color())
    ax_w.axvspan(zoom[0], r0, color="0.9", zorder=0, label="undefined aperture")
    ax_w.set(xlabel=r"parent norm $\|x\|$", ylabel=r"half aperture $\omega$ (rad)")
    ax_w.set_title(f"near the boundary (c = {curv:g}, $2K/\\sqrt{{c}}$ = {r0:.2f})")
    ax_g.set_xlabel(r"distance outside the boundary $\|x\| - 2K/\sqrt{c}$")
    ax_g.set_ylabel(r"$|\partial\omega/\partial\|x\||$ (rad per unit norm)")
    ax_g.set_title("gradient magnitude (autograd); dot: its largest value")
    for ax in (ax_w, ax_g):
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def ray_panels(
    norms, angles: Mapping[str, Any], slopes: Mapping[str, Any], stationary: float, r0: float
) -> plt.Figure:
    """A parent moved along a ray, the child fixed: left, the ``angles`` (exterior angle, half
    aperture) against its norm; right, the derivative along the ray of each entailment-side loss
    (``slopes``; clipped to ±3, MERU's spike at the boundary goes far higher), zero and the
    ``stationary`` norm of ARGENT's sum marked. The undefined region (norm < ``r0``) shaded."""
    fig, (ax_a, ax_d) = plt.subplots(1, 2, figsize=(11, 3.8))
    for label, values in angles.items():
        ax_a.plot(norms, values, label=label)
    for label, values in slopes.items():
        ax_d.plot(norms, values, label=label)
    ax_a.set_xlabel(r"parent norm $\|x\|$ (parent on a ray, child fixed)")
    ax_a.set(
        ylabel="angle (rad)", title="the angle shrinks and the cone widens as the parent moves in"
    )
    ax_d.axhline(0, color="k", lw=0.8)
    ax_d.axvline(stationary, color="C2", ls=":", label="ARGENT's stationary norm")
    ax_d.set_ylim(-3, 3)
    ax_d.set_xlabel(r"parent norm $\|x\|$")
    ax_d.set_ylabel(r"$\partial\ell/\partial\|x\|$  (> 0: descent moves the parent in)")
    ax_d.set_title("derivative of the entailment-side loss along the ray")
    for ax in (ax_a, ax_d):
        ax.axvspan(0, r0, color="0.9", zorder=0)
    ax_a.legend(fontsize=8)
    ax_d.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def adaent_panels(
    angles,
    adaent: Mapping[float, Any],
    hinge: Mapping[float, Any],
    r0: float,
    distance,
    weight,
    curv: float,
) -> plt.Figure:
    """Left: per-pair penalty against the exterior angle — AdaEnt's Huber penalty for each β
    (``adaent[β]``; green, the first solid, the others dashed) and MERU's hinge for each parent
    norm (``hinge[norm]``, inside or outside the radius ``r0``); right: ARGENT's intra-modality
    pair ``weight`` h against the Lorentz ``distance`` and the inter-modality weight 1."""
    fig, (ax_l, ax_h) = plt.subplots(1, 2, figsize=(11, 3.8))
    for (beta, loss), style in zip(adaent.items(), itertools.chain(["-"], itertools.repeat("--"))):
        ax_l.plot(angles, loss, color="C2", ls=style, label=f"AdaEnt Huber, β = {beta:g} (any ‖x‖)")
    for (norm, loss), color in zip(hinge.items(), itertools.cycle(["C3", "C1", "C4"])):
        where = "inside" if norm < r0 else "outside"
        ax_l.plot(angles, loss, color=color, label=f"MERU hinge, ‖x‖ = {norm:.2f} ({where})")
    ax_l.set(xlabel=r"exterior angle $\varphi$ (rad)", ylabel="per-pair loss (unweighted)")
    ax_l.set_title("penalty vs angle")
    ax_h.plot(distance, weight, label=r"intra-modality: $h = 1 - e^{-d_L}$")
    ax_h.axhline(1.0, color="C1", ls="--", label="inter-modality: h = 1")
    ax_h.set_xlabel(rf"Lorentz distance $d_L$(parent, child), c = {curv:g}")
    ax_h.set(ylabel="AdaEnt pair weight h", title="ARGENT's pair weight")
    for ax in (ax_l, ax_h):
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def variant_styles(
    variants: Iterable[str], colors: Mapping[str, str], headline: str = "ARGENT"
) -> dict[str, dict[str, Any]]:
    """Line styles of a study's variants: each its colour, the ``headline`` variant thick, its
    ablations (named ``"<headline>, …"``) dashed."""
    return {
        v: {
            "color": colors[v],
            "lw": 2.2 if v == headline else 1.4,
            "ls": "--" if v.startswith(f"{headline},") else "-",
        }
        for v in variants
    }


def _legend_below(fig: plt.Figure, ax: plt.Axes, ncol: int) -> None:
    """The legend of ``ax`` under the whole figure (call after ``tight_layout``)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(
        handles, labels, loc="upper center", ncol=ncol, bbox_to_anchor=(0.5, 0.0), fontsize=9
    )


def aperture_training_panels(
    stacked: Mapping[str, Sequence[SeedSummary]],
    radius: SeedSummary,
    drifts: Mapping[str, Drift],
    start: CommonStart,
    styles: Mapping[str, dict[str, Any]],
    title: str = "",
) -> plt.Figure:
    """The aperture diagnostics over training. One panel per entry of :data:`APERTURE_PANELS`:
    each variant's mean over seeds with its band (:func:`mean_and_band`) from
    ``stacked[variant]`` (caption norm, fraction inside the radius, half aperture), the mean
    ``radius`` 2K/√c on the first and π/2 on the last; a fourth panel: each variant's caption norm
    relative to the common start (``drifts``, ``analysis.hyperbolic.drift_from_start``), the
    spread at the first logged step shaded."""
    fig, axes = plt.subplots(1, len(APERTURE_PANELS) + 1, figsize=(19, 4))
    for variant, summaries in stacked.items():
        for ax, summary, (_, _, bounds) in zip(axes, summaries, APERTURE_PANELS):
            mean_and_band(ax, summary, variant, bounds, **styles[variant])
    for variant, drift in drifts.items():
        axes[-1].plot(drift.steps, drift.relative, marker="o", ms=3, **styles[variant])
    axes[0].plot(radius.steps, radius.mean, color="k", ls=":", label=RADIUS_LABEL)
    for ax, (ylabel, panel_title, _) in zip(axes, APERTURE_PANELS):
        ax.set(xlabel="training step", ylabel=ylabel, title=panel_title)
    axes[1].set_ylim(-0.05, 1.05)
    axes[2].axhline(np.pi / 2, color="k", ls=":", lw=0.8)
    axes[-1].axhline(0, color="k", lw=0.8)
    spread = start.spread
    axes[-1].axhspan(
        -spread, spread, color="0.9", zorder=0, label="spread at the first logged step"
    )
    axes[-1].set(xlabel="training step", ylabel=f"‖x‖ − common value at step {start.step}")
    axes[-1].set_title("caption norm relative to the common start")
    axes[-1].legend(fontsize=8, loc="lower left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    _legend_below(fig, axes[0], ncol=4)
    return fig


def box_norm_panels(
    stacked: Mapping[str, Sequence[SeedSummary]],
    radius: SeedSummary,
    styles: Mapping[str, dict[str, Any]],
    tag: str,
) -> plt.Figure:
    """Mean box-phrase and box-crop norms over training (:data:`BOX_PANELS`): each variant's
    mean over seeds with its band, from ``stacked[variant]``, and the mean ``radius`` 2K/√c;
    ``tag`` ends each title, e.g. ``"full study"``."""
    fig, axes = plt.subplots(1, len(BOX_PANELS), figsize=(11, 3.8))
    for variant, summaries in stacked.items():
        for ax, summary in zip(axes, summaries):
            mean_and_band(ax, summary, variant, (0, None), **styles[variant])
    for ax, label in zip(axes, BOX_PANELS):
        ax.plot(radius.steps, radius.mean, color="k", ls=":", label=RADIUS_LABEL)
        ax.set(xlabel="training step", ylabel=f"{label} ‖x‖")
        ax.set_title(f"{label.removeprefix('mean ')} ({tag})")
    fig.tight_layout()
    _legend_below(fig, axes[0], ncol=3)
    return fig


def curve_panels(
    panels: Mapping[str, Mapping[str, tuple[Any, Any]]],
    ylabels: Mapping[str, str],
    references: Mapping[str, Mapping[str, tuple[Any, Any]]] | None = None,
    colors: Mapping[str, str] | None = None,
    xlabel: str = "training step",
) -> plt.Figure:
    """One panel per title of ``panels``: each label's ``(steps, values)`` as a line with
    markers (one colour per label across the panels, ``colors`` where given), and each of
    ``references[title]`` (a radius, a clamp) as a black dotted or dash-dotted line."""
    labels = list(dict.fromkeys(label for lines in panels.values() for label in lines))
    color = {label: (colors or {}).get(label, f"C{i}") for i, label in enumerate(labels)}
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 3.6), squeeze=False)
    for ax, (title, lines) in zip(axes[0], panels.items()):
        for label, (steps, values) in lines.items():
            ax.plot(steps, values, marker="o", ms=3, color=color[label], label=label)
        refs = (references or {}).get(title, {}).items()
        for (label, (steps, values)), style in zip(refs, itertools.cycle([":", "-."])):
            ax.plot(steps, values, ls=style, color="k", lw=1.2, label=label)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabels[title])
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
