"""Every claim of both papers that the CPU-scale study tests, declared once, as data.

A claim compares two study variants on one per-item metric (``metrics.items``): the paper
says ``variant`` is better than ``baseline`` (``better``: "higher" or "lower"). ``chance`` is
the metric's value for scores that carry no information (None where no such level exists:
SSI is 0 for a text-blind model, the aperture fraction is a property of norms), and
``ceiling`` its best possible value. ``headline`` claims run on every study seed (≥ 5); the
others are ablations and sweeps, run on the study's sweep seeds (≥ 3).

The two compared runs differ in exactly one thing (see ``paperlib.study.runner``):

- HiMo: "InfoNCE (λ=0)" is MoLo with λ = 0 (same logit-scale reset, smoothing, decay, lr,
  steps), so the component term is the only difference; "Long-CLIP" is the same fine-tune
  with Long-CLIP's loss (long InfoNCE + short captions ↔ PCA-reduced image features).
- ARGENT: every variant starts from the same shared pre-training and trains with the same
  batch (images, short captions, box crops, box phrases) and optimiser. "HyCoCLIP" is
  HyCoCLIP's loss; "ARGENT, Ent" keeps ARGENT's contrastive terms, box pairs, norm
  regularizer and γ1 but replaces AdaEnt by HyCoCLIP's aperture entailment (η-scaled
  half-apertures).
- Model sizes (Table 2 compares S, B and L): "HyCoCLIP, smaller model" and "ARGENT, smaller
  model" repeat the pair with the same ResNet at half the width, pre-trained on its own; the
  size claims compare ARGENT with its smaller self, so the model size is the difference.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


def chance_level(chance: float | str | None, n_items: int) -> float | None:
    """A declared chance level on a test set of ``n_items`` items ("1/N" → 1 / n_items)."""
    return 1.0 / n_items if chance == "1/N" else chance


@dataclass(frozen=True)
class Claim:
    """One tested statement: ``variant`` beats ``baseline`` on ``item`` in direction ``better``."""

    id: str
    paper: str
    statement: str
    study: str
    item: str
    label: str
    variant: str
    baseline: str
    better: str  # "higher" | "lower"
    chance: float | str | None  # "1/N": one over the number of test items (1:1 retrieval R@1)
    ceiling: float
    headline: bool
    source: str
    # where the metric has no chance level: a metric that must be above its chance level for
    # both runs before the claim counts (the models learned), and that chance level
    guard: tuple[str, float | str] | None = None
    # the baseline side's metric where it is not ``item``: an evaluation claim compares one
    # run's two metrics (ARGENT's Table 1: P/R with and without the ambiguous captions)
    baseline_item: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def baseline_metric(self) -> str:
        """The per-item metric of the baseline side."""
        return self.baseline_item or self.item

    def chance_for(self, n_items: int) -> float | None:
        """The chance level on a test set of ``n_items`` items."""
        return chance_level(self.chance, n_items)


def _claims_of(paper: str, study: str, default_variant: str):
    """A :class:`Claim` maker for one paper's study, its variant defaulting to the paper's
    method (the claims below are declared positionally, their fields in this order)."""

    def make(
        id,
        statement,
        item,
        label,
        baseline,
        better,
        chance,
        ceiling,
        headline,
        source,
        guard=None,
        variant=default_variant,
    ):
        return Claim(
            id,
            paper,
            statement,
            study,
            item,
            label,
            variant,
            baseline,
            better,
            chance,
            ceiling,
            headline,
            source,
            guard,
        )

    return make


_himo = _claims_of("HiMo-CLIP", "himo", "MoLo")
_argent = _claims_of("ARGENT", "argent", "ARGENT")


R1 = "1/N"  # R@1 of 1:1 retrieval: one over the number of test items
HIMO2_CHANCE, HIMO3_CHANCE = 50.0, 100 / 6  # P(random scores strictly rise) over 2 / 3 segments
PEP, PEP_FINEST = "PEP AUC (per-image mean)", "PEP AUC (finest, per-image mean)"
MONO, LONG, SHORT, ZS, HIER = (
    "world-monotonicity",
    "world-long",
    "world-short",
    "world-zeroshot",
    "world-hierarchy",
)
# the learning guards: a metric both compared models must clear 3 × its chance level on
LONG_LEARNED, SHORT_LEARNED = (f"{LONG}/i2t_hit1", R1), (f"{SHORT}/i2t_hit1", R1)
ZS_LEARNED = (f"{ZS}/L3_correct", 1 / 24)  # zero-shot claims: the models must clear 3 × chance


def _cleaning(metric: str, label: str) -> Claim:
    """Table 1 of ARGENT on the shared pre-training (the Euclidean CLIP of the study)."""
    return Claim(
        f"argent-table1-{metric}",
        "ARGENT",
        f"Removing each image's potentially "
        f"ambiguous captions (those of its 10 most similar images) raises hierarchical "
        f"retrieval {metric}",
        "himo",
        f"world-hierarchy/hier_{metric}_cleaned",
        f"{label} (ambiguous removed)",
        EUCLIDEAN_CLIP,
        EUCLIDEAN_CLIP,
        "higher",
        None,
        1.0,
        True,
        "Table 1",
        SHORT_LEARNED,
        baseline_item=f"world-hierarchy/hier_{metric}",
    )


# (id suffix, what, item, label, better, chance, ceiling, guard) of each MoLo ablation claim
_ABLATION_METRICS = (
    (
        "long-i2t",
        "long-caption image→text R@1",
        f"{LONG}/i2t_hit1",
        "long I2T R@1",
        "higher",
        R1,
        1.0,
        None,
    ),
    ("hk", "HiMo@K", f"{MONO}/himoK", "HiMo@K (ρ)", "higher", 0.0, 1.0, LONG_LEARNED),
)
# (id prefix, statement with {what}, variant, baseline) of each MoLo ablation
_MOLO_ABLATIONS = (
    (
        "himo-batch",
        "A larger batch gives a better MoLo fine-tune ({what}; batch-size ablation: "
        "1024 best, 512 near)",
        "MoLo, double batch",
        "MoLo, half batch",
    ),
    (
        "himo-hide-scope",
        "HiDe's PCA on the global batch beats PCA on each rank's batch ({what}; "
        "SPEC §1.1, from the batch-size ablation)",
        "MoLo, 2 ranks, global HiDe",
        "MoLo, 2 ranks, HiDe per rank",
    ),
)
EUCLIDEAN_CLIP = "pretrain (short captions)"  # the study's shared pre-training (its variant)
SMALLER = ", smaller model"  # the suffix of the model-size arm's variants


# the claims table: one claim per entry, its fields in order (kept as a table)
# fmt: off
CLAIMS: tuple[Claim, ...] = (
    # MoLo against its own recipe without the component term (the λ = 0 end of the λ ablation)
    _himo("himo-h2-vs-infonce", "MoLo makes scores rise from the first to the full caption more often (HiMo@2)",
          f"{MONO}/himo2", "HiMo@2 (%)", "InfoNCE (λ=0)", "higher", HIMO2_CHANCE, 100.0, True,
          "ablation: λ = 1 best", guard=LONG_LEARNED),
    _himo("himo-h3-vs-infonce", "MoLo makes scores rise over three cumulative segments more often (HiMo@3)",
          f"{MONO}/himo3", "HiMo@3 (%)", "InfoNCE (λ=0)", "higher", HIMO3_CHANCE, 100.0, True,
          "ablation: λ = 1 best", guard=LONG_LEARNED),
    _himo("himo-hk-vs-infonce", "MoLo raises the correlation of score and caption length (HiMo@K)",
          f"{MONO}/himoK", "HiMo@K (ρ)", "InfoNCE (λ=0)", "higher", 0.0, 1.0, True,
          "ablation: λ = 1 best", guard=LONG_LEARNED),
    _himo("himo-ssi-vs-infonce", "MoLo's scores move less when irrelevant sentences are injected (SSI)",
          f"{MONO}/ssi", "SSI (%)", "InfoNCE (λ=0)", "lower", None, 0.0, True,
          "ablation: λ = 1 best", guard=LONG_LEARNED),
    _himo("himo-long-i2t-vs-infonce", "MoLo improves long-caption image→text retrieval",
          f"{LONG}/i2t_hit1", "long I2T R@1", "InfoNCE (λ=0)", "higher", R1, 1.0, True,
          "ablation: λ = 1 best"),
    _himo("himo-long-t2i-vs-infonce", "MoLo improves long-caption text→image retrieval",
          f"{LONG}/t2i_hit1", "long T2I R@1", "InfoNCE (λ=0)", "higher", R1, 1.0, True,
          "ablation: λ = 1 best"),
    # HiMo against Long-CLIP, the published comparisons (SPEC §1.4)
    _himo("himo-long-i2t-vs-longclip", "HiMo beats Long-CLIP on long-caption image→text retrieval",
          f"{LONG}/i2t_hit1", "long I2T R@1", "Long-CLIP", "higher", R1, 1.0, True, "Table 1"),
    _himo("himo-short-i2t-vs-longclip", "HiMo beats Long-CLIP on short-caption image→text retrieval",
          f"{SHORT}/i2t_hit1", "short I2T R@1", "Long-CLIP", "higher", R1, 1.0, True, "Table 1"),
    _himo("himo-h2-vs-longclip", "HiMo's scores rise from the first to the full caption more often than Long-CLIP's (HiMo@2)",
          f"{MONO}/himo2", "HiMo@2 (%)", "Long-CLIP", "higher", HIMO2_CHANCE, 100.0, True, "Table 2",
          guard=LONG_LEARNED),
    _himo("himo-h3-vs-longclip", "HiMo's scores rise over three segments more often than Long-CLIP's (HiMo@3)",
          f"{MONO}/himo3", "HiMo@3 (%)", "Long-CLIP", "higher", HIMO3_CHANCE, 100.0, True, "Table 2",
          guard=LONG_LEARNED),
    _himo("himo-hk-vs-longclip", "HiMo's scores follow caption length where Long-CLIP's do not (HiMo@K)",
          f"{MONO}/himoK", "HiMo@K (ρ)", "Long-CLIP", "higher", 0.0, 1.0, True, "Table 2",
          guard=LONG_LEARNED),
    _himo("himo-ssi-vs-longclip", "HiMo's scores move less than Long-CLIP's when irrelevant sentences are injected (SSI)",
          f"{MONO}/ssi", "SSI (%)", "Long-CLIP", "lower", None, 0.0, True, "§4 text",
          guard=LONG_LEARNED),
    _himo("himo-cola-vs-longclip", "HiMo binds attributes better than Long-CLIP (COLA)",
          "world-cola/correct", "COLA", "Long-CLIP", "higher", 0.25, 1.0, True, "Table 2"),
    # MoLo's ablations on the sweep seeds: batch size at equal samples seen, HiDe's scope
    *(_himo(f"{prefix}-{key}", statement.format(what=what), item, label, baseline, better,
            chance, ceiling, False, "§4 ablation", guard, variant=variant)
      for prefix, statement, variant, baseline in _MOLO_ABLATIONS
      for key, what, item, label, better, chance, ceiling, guard in _ABLATION_METRICS),
    # ARGENT against HyCoCLIP (table 2) and its ablations (table 3)
    _argent("argent-zs-l3-vs-hycoclip", "ARGENT improves fine-grained zero-shot classification",
            f"{ZS}/L3_correct", "zero-shot L3", "HyCoCLIP", "higher", 1 / 24, 1.0, True, "Table 2",
            guard=ZS_LEARNED),
    _argent("argent-t2i-vs-hycoclip", "ARGENT improves text→image retrieval (R@5 in the paper; "
            "R@1 here, where R@5 saturates)", f"{SHORT}/t2i_hit1", "short T2I R@1", "HyCoCLIP",
            "higher", R1, 1.0, True, "Table 2"),
    _argent("argent-pep-vs-hycoclip", "ARGENT orders entailment better (PEP AUC, positives at every level)",
            f"{HIER}/pep_auc_all", PEP, "HyCoCLIP", "higher", 0.5, 1.0, True, "Table 2",
            guard=SHORT_LEARNED),
    _argent("argent-pep-finest-vs-hycoclip", "ARGENT orders entailment better (PEP AUC, finest-level positives)",
            f"{HIER}/pep_auc_finest", PEP_FINEST, "HyCoCLIP", "higher", 0.5, 1.0, True, "Table 2"),
    _argent("argent-aperture-vs-hycoclip", "ARGENT leaves no caption inside the undefined-aperture radius",
            "aperture/short_caption_inside_radius", "captions inside 2K/√c", "HyCoCLIP", "lower",
            None, 0.0, True, "§3 aperture", guard=SHORT_LEARNED),
    _argent("argent-pep-intra-vs-all", "Weights on intra-modality pairs only beat weights on all pairs (PEP)",
            f"{HIER}/pep_auc_all", PEP, "ARGENT, weights on all pairs", "higher", 0.5, 1.0, False,
            "Table 3", guard=SHORT_LEARNED),
    _argent("argent-pep-intra-vs-none", "Intra-modality weights beat AdaEnt without weights (PEP)",
            f"{HIER}/pep_auc_all", PEP, "ARGENT, no weights", "higher", 0.5, 1.0, False, "Table 3",
            guard=SHORT_LEARNED),
    _argent("argent-pep-vs-noreg", "The norm regularizer improves PEP",
            f"{HIER}/pep_auc_all", PEP, "ARGENT, no regularizer", "higher", 0.5, 1.0, False, "Table 3",
            guard=SHORT_LEARNED),
    _argent("argent-zs-vs-noreg", "The norm regularizer improves zero-shot classification",
            f"{ZS}/L3_correct", "zero-shot L3", "ARGENT, no regularizer", "higher", 1 / 24, 1.0, False,
            "Table 3", guard=ZS_LEARNED),
    _argent("argent-pep-vs-ent", "AdaEnt beats the original aperture entailment (PEP)",
            f"{HIER}/pep_auc_all", PEP, "ARGENT, Ent", "higher", 0.5, 1.0, False, "Table 3",
            guard=SHORT_LEARNED),
    # Table 2's model sizes: ARGENT's gains over HyCoCLIP at a second, smaller size, and the
    # larger model's better classification and retrieval (S → L in the paper)
    *(_argent(f"argent-{key}-vs-hycoclip-smaller", f"{what}, at the smaller model size", item,
              label, f"HyCoCLIP{SMALLER}", "higher", chance, 1.0, False, "Table 2 (sizes)", guard,
              variant=f"ARGENT{SMALLER}")
      for key, what, item, label, chance, guard in (
          ("t2i", "ARGENT improves text→image retrieval", f"{SHORT}/t2i_hit1", "short T2I R@1",
           R1, None),
          ("pep", "ARGENT orders entailment better (PEP AUC, positives at every level)",
           f"{HIER}/pep_auc_all", PEP, 0.5, SHORT_LEARNED))),
    *(_argent(f"argent-size-{key}", f"The larger ARGENT model {what} (Table 2: S → L)", item,
              label, f"ARGENT{SMALLER}", "higher", chance, 1.0, False, "Table 2 (sizes)")
      for key, what, item, label, chance in (
          ("zs-l1", "classifies better zero-shot", f"{ZS}/L1_correct", "zero-shot L1", 0.25),
          ("t2i", "retrieves images better", f"{SHORT}/t2i_hit1", "short T2I R@1", R1))),
    # ARGENT's Table 1 (an evaluation claim): on a fine-tuned Euclidean CLIP, hierarchical
    # retrieval P/R rise once each image's potentially ambiguous captions are removed
    *(_cleaning(metric, label) for metric, label in (("precision", "hier. precision"),
                                                     ("recall", "hier. recall"))),
)
# fmt: on


def claims_for(study: str) -> tuple[Claim, ...]:
    """The claims of one study (``himo`` or ``argent``)."""
    return tuple(c for c in CLAIMS if c.study == study)
