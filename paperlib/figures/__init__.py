"""The companion's figures, one module per concept; every name is importable from here
(``from paperlib.figures import save``).

- :mod:`~paperlib.figures.common`: the shared style, where figures go and ``save(fig, name)``
  -> ``figures/name.png`` and ``figures/name.pdf`` (atomic writes), and small shared pieces;
- :mod:`~paperlib.figures.claims`: the decided claims and the study's curves (notebook 05);
- :mod:`~paperlib.figures.quickstart`: samples and similarity matrices (notebook 00);
- :mod:`~paperlib.figures.hide`: HiDe's components of a caption batch (notebook 01);
- :mod:`~paperlib.figures.monotonicity`: scores against caption length (notebook 02);
- :mod:`~paperlib.figures.aperture`: MERU's half aperture and its failure (notebook 03);
- :mod:`~paperlib.figures.horopca`: hyperbolic embeddings in 2-D (notebook 04);
- :mod:`~paperlib.figures.training`: a training log's curves (the training notebooks).

Importing the package selects matplotlib's backend (``$MPLBACKEND``, else Agg) before any
figure is drawn.
"""

from __future__ import annotations

import os

import matplotlib

matplotlib.use(os.environ.get("MPLBACKEND", "Agg"))
from paperlib.figures.aperture import (  # noqa: E402
    APERTURE_PANELS,
    BOX_PANELS,
    RADIUS_LABEL,
    adaent_panels,
    aperture_gradient_panels,
    aperture_training_panels,
    box_norm_panels,
    curve_panels,
    half_aperture_curves,
    mean_and_band,
    ray_panels,
    variant_styles,
)
from paperlib.figures.claims import (  # noqa: E402
    UNIT_TEXT,
    VERDICT_COLORS,
    aperture_over_training,
    assert_values_match_claims,
    claim_range,
    claim_unit,
    claims_forest,
    claims_trend,
    clipped_errors,
    interval_bars,
    metric_panels,
    seeds_and_mean,
    trend_slopes_in_smallest_units,
    validation_curves,
)
from paperlib.figures.common import (  # noqa: E402
    REPO_ROOT,
    STYLE,
    bars_with_errors,
    chance_line,
    figures_dir,
    save,
    use_style,
)
from paperlib.figures.hide import (  # noqa: E402
    angle_curves,
    batch_content_panels,
    batch_size_panels,
    eta_heatmaps,
    group_scatters,
    kept_dropped_panels,
    paired_bars,
    spectrum_panels,
)
from paperlib.figures.horopca import (  # noqa: E402
    crop_weight_ecdfs,
    disc_grid,
    draw_disc,
    norm_boxplots,
)
from paperlib.figures.monotonicity import (  # noqa: E402
    counterexample_panels,
    full_vs_component_histogram,
    k_segment_case,
    model_chance_ticks,
    rho_histogram,
    segment_score_panels,
)
from paperlib.figures.quickstart import (  # noqa: E402
    sample_strip,
    similarity_heatmap,
    similarity_heatmaps,
)
from paperlib.figures.training import (  # noqa: E402
    loss_sentence,
    plot_log,
)

__all__ = [
    "REPO_ROOT",
    "STYLE",
    "bars_with_errors",
    "chance_line",
    "figures_dir",
    "save",
    "use_style",
    "UNIT_TEXT",
    "VERDICT_COLORS",
    "aperture_over_training",
    "assert_values_match_claims",
    "claim_range",
    "claim_unit",
    "claims_forest",
    "claims_trend",
    "clipped_errors",
    "interval_bars",
    "metric_panels",
    "seeds_and_mean",
    "trend_slopes_in_smallest_units",
    "validation_curves",
    "sample_strip",
    "similarity_heatmap",
    "similarity_heatmaps",
    "angle_curves",
    "batch_content_panels",
    "batch_size_panels",
    "eta_heatmaps",
    "group_scatters",
    "kept_dropped_panels",
    "paired_bars",
    "spectrum_panels",
    "counterexample_panels",
    "full_vs_component_histogram",
    "k_segment_case",
    "model_chance_ticks",
    "rho_histogram",
    "segment_score_panels",
    "APERTURE_PANELS",
    "BOX_PANELS",
    "RADIUS_LABEL",
    "adaent_panels",
    "aperture_gradient_panels",
    "aperture_training_panels",
    "box_norm_panels",
    "curve_panels",
    "half_aperture_curves",
    "mean_and_band",
    "ray_panels",
    "variant_styles",
    "crop_weight_ecdfs",
    "disc_grid",
    "draw_disc",
    "norm_boxplots",
    "loss_sentence",
    "plot_log",
]
