"""Every claim of both papers that the CPU-scale study tests, declared once, as data.

A claim compares two study variants on one per-item metric (``metrics.items``): the paper
says ``variant`` is better than ``baseline``. What a metric means is declared once, in
:data:`METRICS` (:class:`Metric`): its direction, its best value, the paper's lead over its
runner-up on it (the published effect of a claim the paper states without a number), the far
end of its range, how tables show it, and its learning guard (a metric both compared models
must clear before the comparison counts, with a threshold that a learned model reaches and an
untrained one does not). Its chance level comes from a permutation null on the test set
(``study.decide.chance``). Each claim names the paper's own effect (:class:`PaperEffect`, read from
``tables/published.json``), which the δ rule carries onto the study's scale
(``study.plan.smallest_effect``), and its premise (:class:`Premise`): what the paper says its
baseline does.
``headline`` claims run on every study seed; the others (ablations, sweeps) on the sweep seeds.

The two compared runs differ in exactly one thing (see ``paperlib.study.plan.design``):

- HiMo: "InfoNCE (λ=0)" is MoLo with λ = 0 (same logit-scale reset, smoothing, decay, lr,
  steps), so the component term is the only difference; "Long-CLIP" is the same fine-tune
  with Long-CLIP's loss (long InfoNCE + short captions ↔ PCA-reduced image features).
- ARGENT: every variant trains from random weights, as the paper's do, with the same batch
  (images, short captions, box crops, box phrases), optimiser and budget. "HyCoCLIP" is
  HyCoCLIP's loss, "MERU" MERU's; "ARGENT, Ent" keeps ARGENT's contrastive terms, box pairs,
  norm regularizer and γ1 but replaces AdaEnt by HyCoCLIP's aperture entailment (η-scaled
  half-apertures).
- Model sizes (Table 2 compares S, B and L): ", smaller model" variants repeat the pair with
  the same ResNet at half the width; ARGENT's ablations (Table 3, the paper's smaller CC3M
  setting) run at that smaller model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from statistics import fmean

from paperlib.study.plan.smallest_effect import PaperLead, PublishedEffect, smallest_share
from paperlib.tables import published_table, published_where


def better_sign(better: str) -> float:
    """+1 where a higher value is better, -1 where a lower one is (any other word: an error)."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower'; got {better!r}")
    return 1.0 if better == "higher" else -1.0


@dataclass(frozen=True)
class Guard:
    """A learning guard: both models' ``item`` intervals must lie above ``threshold``."""

    item: str
    threshold: float
    why: str


@dataclass(frozen=True)
class Metric:
    """What one per-item metric means for a claim (see the module docstring)."""

    item: str
    label: str
    better: str  # "higher" | "lower"
    ceiling: float  # the best possible value
    # the paper's lead over its runner-up on this metric (``smallest_effect``): the published
    # effect of a claim stated without a number; None: no table of the paper prints the metric
    lead: PaperLead | None
    guard: Guard | None = None
    units: str = ""  # what one unit of the metric is (required: validate_claims)
    # the far end of the metric's range from the best (None: unbounded): the reference level of
    # a claim whose bases and untrained model do not carry the metric
    worst: float | None = None
    # how tables show it: values times ``shown_scale``, named ``shown`` (e.g. "PEP AUC, of 100")
    shown: str = ""
    shown_scale: float = 1.0
    # the largest difference of two per-item values that still counts as the same answer
    # (``study.decide.disagreement``): 0 for hits, labels and rises; a stated step for a
    # continuous one
    item_tolerance: float = 0.0


@dataclass(frozen=True)
class PaperEffect:
    """The paper's effect for a claim: ``variant`` − ``baseline`` rows of a published table,
    each the mean over ``paths`` (keys into the row: the datasets the paper measures the claim's
    metric on), times ``scale`` (the study's units). With ``baseline`` None, ``variant``'s value
    is already the published difference, and ``level`` (table, row, path) reads the variant's
    own level, from which the baseline's follows."""

    table: str
    paths: tuple[tuple[str, ...], ...]
    variant: dict[str, str]
    baseline: dict[str, str] | None = None
    scale: float = 1.0
    # whether the study's metric is the quantity the paper reports (then sizes compare; R@1
    # here against the paper's R@5 do not)
    same_units: bool = True
    level: tuple[str, dict[str, str], tuple[str, ...]] | None = None

    def _mean(self, select: dict[str, str]) -> float:
        rows, _ = published_table(self.table)
        return fmean(_lookup(rows, select, path) for path in self.paths)

    def value(self) -> float:
        """The effect in the study's units, ``variant − baseline`` (signed)."""
        b = 0.0 if self.baseline is None else self._mean(self.baseline)
        return round((self._mean(self.variant) - b) * self.scale, 6)

    def published(self, ceiling: float, better: str) -> PublishedEffect:
        """The effect in the paper's units on the paper's side, its baseline's level and the
        metric's best (``ceiling`` in the study's units), for the δ rule."""
        sign = better_sign(better)
        if self.baseline is not None:
            level = self._mean(self.baseline)
            effect = sign * (self._mean(self.variant) - level)
        elif self.level is not None:
            table, row, path = self.level
            difference = self._mean(self.variant)
            level = _lookup(published_table(table)[0], row, path) - difference
            effect = sign * difference
        else:
            raise ValueError(f"{self.row()}: no baseline row and no level to read its level from")
        return PublishedEffect(effect, level, ceiling / self.scale, self.row())

    def row(self) -> str:
        """Where the effect is read, short: the paper's table and its rows, e.g.
        ``ARGENT Table 2: ARGENT S − HyCoCLIP S``."""
        variant = " ".join(self.variant.values())
        rows = (
            variant if self.baseline is None else f"{variant} − {' '.join(self.baseline.values())}"
        )
        return f"{published_where(self.table)}: {rows}"

    def describe(self) -> str:
        rows, source = published_table(self.table)
        where = ", ".join(".".join(p) for p in self.paths)
        a = self._mean(self.variant)
        row = " ".join(self.variant.values())
        if self.baseline is None:
            return f"{source}: {row}, {where} {a:+g}"
        b = self._mean(self.baseline)
        return f"{source}: {row} {a:.4g} vs {' '.join(self.baseline.values())} {b:.4g} ({where})"


def _lookup(rows: list[dict], select: dict[str, str], path: tuple[str, ...]) -> float:
    found = [r for r in rows if all(r.get(k) == v for k, v in select.items())]
    if len(found) != 1:
        raise KeyError(f"published rows matching {select}: {len(found)}, expected 1")
    value = found[0]
    for key in path:
        value = value[key]
    return float(value)


# how a premise is measured on the baseline arm here (``study.decide.premise``)
ROOM = "room"  # the baseline arm leaves at least the paper's effect on this scale to the best
PARENTS_INSIDE = "parents inside"  # the baseline's parents fall inside 2K/√c, during or after
PREMISE_KINDS = (ROOM, PARENTS_INSIDE)


@dataclass(frozen=True)
class Premise:
    """What the paper says its baseline does, the comparison's starting point, and how it is
    measured here (``kind``, one of :data:`PREMISE_KINDS`)."""

    statement: str
    kind: str = ROOM


@dataclass(frozen=True)
class Claim:
    """One tested statement: ``variant`` beats ``baseline`` on ``metric``."""

    id: str
    paper: str
    statement: str
    study: str
    metric: Metric
    variant: str
    baseline: str
    headline: bool
    source: str
    paper_effect: PaperEffect | None = None
    # the baseline side's metric where it is not the variant's: an evaluation claim compares
    # one run's two metrics (ARGENT's Table 1: P/R with and without the ambiguous captions)
    baseline_item: str | None = None
    family: str = ""  # the multiplicity family (a key of FAMILIES; required)
    premise: Premise | None = None  # what the paper says its baseline does (required)
    # how many looks at the data chose the claim's seeds: seeds added after a first look split
    # the claim's error rate between the looks (``study.decide.error_control``)
    looks: int = 1

    @property
    def item(self) -> str:
        return self.metric.item

    @property
    def baseline_metric(self) -> str:
        """The per-item metric of the baseline side."""
        return self.baseline_item or self.metric.item

    @property
    def paper_units(self) -> bool | None:
        """Whether the paper's effect is in the metric's units (None: no published effect)."""
        return None if self.paper_effect is None else self.paper_effect.same_units

    def published(self) -> tuple[PublishedEffect, str]:
        """The published effect the δ rule translates (``study.plan.smallest_effect``), in the
        paper's units, and what it is: the claim's own, the paper's lead on the metric, or a
        share borrowed from the paper's most cautious lead."""
        m = self.metric
        if self.paper_effect is not None:
            return self.paper_effect.published(m.ceiling, m.better), "the paper's effect"
        if m.lead is not None:
            return m.lead.published(m.ceiling), "the paper's lead on this metric"
        leads = [
            (x.lead, x.ceiling) for x in METRICS.values() if x.lead and _paper_of(x) == self.paper
        ]
        return smallest_share(leads), "no table prints this metric: the paper's smallest lead share"

    def as_dict(self) -> dict:
        """The claim as JSON-ready data (metric fields flattened, the paper's effect read)."""
        skip = ("metric", "paper_effect", "premise")
        out = {k: v for k, v in asdict(self).items() if k not in skip}
        metric = asdict(self.metric)
        out.update({k: v for k, v in metric.items() if k not in ("guard", "lead")})
        out["guard"] = metric["guard"]
        effect = self.paper_effect
        out["paper_effect"] = None if effect is None else effect.value()
        out["paper_effect_source"] = None if effect is None else effect.describe()
        out["paper_effect_table"] = None if effect is None else published_where(effect.table)
        out["paper_effect_row"] = None if effect is None else effect.row()
        out["paper_units"] = self.paper_units
        out["family_size"] = FAMILY_SIZES.get(self.family)
        return out


MONO, LONG, SHORT, ZS, HIER = (
    "world-monotonicity",
    "world-long",
    "world-short",
    "world-zeroshot",
    "world-hierarchy",
)
EUCLIDEAN_CLIP = "pretrain (short captions)"  # the study's bases, evaluated as they are
HYPERBOLIC_MERU = "pretrain, hyperbolic (short captions)"  # the hyperbolic bases, as they are
SMALLER = ", smaller model"  # in a variant's name: the smaller model (the size arm, the ablations)
UNTRAINED = "untrained"  # a model evaluated at its random initialisation
LONGER = ", 2× steps"  # the suffix of the schedule check's runs (seed 0, twice the steps)
# the headline arms of each study: HiMo's fine-tunes, ARGENT's from-scratch main pair
HEADLINE_ARMS = {
    "himo": ("MoLo", "InfoNCE (λ=0)", "Long-CLIP"),
    "argent": ("HyCoCLIP", "ARGENT"),
}

# learning guards: thresholds a learned model reaches and an untrained one does not
# (claims.json states the untrained reference's own value beside each)
LONG_LEARNED = Guard(
    f"{LONG}/i2t_hit1", 0.1, "long-caption R@1 ≥ 0.1: 100 × chance on 1,000 test items"
)
SHORT_LEARNED = Guard(
    f"{SHORT}/i2t_hit1", 0.1, "short-caption R@1 ≥ 0.1: 100 × chance on 1,000 test items"
)
ZS_LEARNED = Guard(f"{ZS}/L3_correct", 0.125, "zero-shot L3 ≥ 0.125: 3 × chance of 24 classes")

# the paper's lead over its runner-up on each metric (``study.plan.smallest_effect.PaperLead``):
# the published effect of a claim its paper states without a number, at the model size the
# claims compare; the aperture share, which no table prints, has none
HIMO_L14 = {"arch": "L/14"}
ARGENT_S = {"arch": "S"}
LONG_SETS, SHORT_SETS = ("Urban1k", "DOCCI", "Long-DCI"), ("Flickr30k", "COCO")


def _himo_retrieval(sets: tuple[str, ...], key: str, label: str) -> PaperLead:
    columns = tuple((s, key) for s in sets)
    label = f"{label}, mean of {', '.join(sets)}"
    return PaperLead("himo_retrieval", columns, {"model": "HiMo"}, label, HIMO_L14, scale=0.01)


def _himo_table2(column: tuple[str, ...], label: str, scale: float = 1.0) -> PaperLead:
    return PaperLead(
        "himo_monotonicity", (column,), {"model": "HiMo"}, label, HIMO_L14, scale=scale
    )


def _argent_table2(column: str, label: str) -> PaperLead:
    return PaperLead("argent_main", ((column,),), {"model": "ARGENT"}, label, ARGENT_S, scale=0.01)


LEADS = {
    "long-i2t": _himo_retrieval(LONG_SETS, "i2t_r1", "long-caption I2T R@1"),
    "long-t2i": _himo_retrieval(LONG_SETS, "t2i_r1", "long-caption T2I R@1"),
    "short-i2t": _himo_retrieval(SHORT_SETS, "i2t_r1", "short-caption I2T R@1"),
    "short-t2i": _argent_table2("coco_t2i_r5", "COCO T2I R@5"),
    "himo2": _himo_table2(("himo@2", "avg"), "HiMo@2 (avg)"),
    "himo3": _himo_table2(("himo@3", "avg"), "HiMo@3 (avg)"),
    "himoK": _himo_table2(("himo@K_pearson",), "HiMo@K"),
    "ssi": PaperLead("himo_ssi", (("ssi",),), {"model": "HiMo"}, "SSI", better="lower"),
    "cola": _himo_table2(("cola_top1",), "COLA top-1", 0.01),
    "zs-l1": _argent_table2("imagenet_acc1", "ImageNet zero-shot top-1"),
    "zs-l3": _argent_table2("imagenet_acc1", "ImageNet zero-shot top-1"),
    "pep": _argent_table2("pep_auc", "PEP AUC"),
    "pep-finest": _argent_table2("pep_auc", "PEP AUC"),
    "aperture": None,
}
for _kind in ("precision", "recall"):
    LEADS[f"hier-{_kind}"] = PaperLead(
        "argent_cleaning", ((_kind,),), {"captions": "ambiguous removed"},
        f"hierarchical retrieval {_kind}", scale=0.01,
        wording="the gain from removing the ambiguous captions",
    )  # fmt: skip

METRICS = {
    "long-i2t": Metric(f"{LONG}/i2t_hit1", "long I2T R@1", "higher", 1.0, LEADS["long-i2t"], worst=0.0),
    "long-t2i": Metric(f"{LONG}/t2i_hit1", "long T2I R@1", "higher", 1.0, LEADS["long-t2i"], worst=0.0),
    "short-i2t": Metric(f"{SHORT}/i2t_hit1", "short I2T R@1", "higher", 1.0, LEADS["short-i2t"], worst=0.0),
    "short-t2i": Metric(f"{SHORT}/t2i_hit1", "short T2I R@1", "higher", 1.0, LEADS["short-t2i"], worst=0.0),
    "himo2": Metric(f"{MONO}/himo2", "HiMo@2 (%)", "higher", 100.0, LEADS["himo2"], LONG_LEARNED, worst=0.0),
    "himo3": Metric(f"{MONO}/himo3", "HiMo@3 (%)", "higher", 100.0, LEADS["himo3"], LONG_LEARNED, worst=0.0),
    "himoK": Metric(f"{MONO}/himoK", "HiMo@K (ρ)", "higher", 1.0, LEADS["himoK"], LONG_LEARNED, worst=-1.0),
    # 0 is a text-blind model's SSI
    "ssi": Metric(f"{MONO}/ssi", "SSI (%)", "lower", 0.0, LEADS["ssi"], LONG_LEARNED),
    "cola": Metric("world-cola/correct", "COLA", "higher", 1.0, LEADS["cola"], worst=0.0),
    "zs-l1": Metric(f"{ZS}/L1_correct", "zero-shot L1", "higher", 1.0, LEADS["zs-l1"], worst=0.0),
    "zs-l3": Metric(f"{ZS}/L3_correct", "zero-shot L3", "higher", 1.0, LEADS["zs-l3"], ZS_LEARNED, worst=0.0),
    "pep": Metric(f"{HIER}/pep_auc_all", "PEP AUC (per-image mean)", "higher", 1.0, LEADS["pep"], SHORT_LEARNED, worst=0.0),
    "pep-finest": Metric(f"{HIER}/pep_auc_finest", "PEP AUC (finest, per-image mean)", "higher", 1.0, LEADS["pep-finest"], SHORT_LEARNED, worst=0.0),
    "aperture": Metric("aperture/parents_inside_radius", "parents inside 2K/√c", "lower", 0.0, None, SHORT_LEARNED, worst=1.0),
}  # fmt: skip
for _kind in ("precision", "recall"):
    METRICS[f"hier-{_kind}"] = Metric(
        f"{HIER}/hier_{_kind}_cleaned", f"hier. {_kind} (ambiguous removed)", "higher", 1.0, LEADS[f"hier-{_kind}"], SHORT_LEARNED, worst=0.0,
    )  # fmt: skip

_UNITS = {
    "long-i2t": "share of test images (0-1)",
    "long-t2i": "share of test captions (0-1)",
    "short-i2t": "share of test images (0-1)",
    "short-t2i": "share of test captions (0-1)",
    "himo2": "percent of test captions",
    "himo3": "percent of test captions",
    "himoK": "Pearson correlation (-1 to 1)",
    "ssi": "percent score change",
    "cola": "share of test pairs (0-1)",
    "zs-l1": "share of test images (0-1)",
    "zs-l3": "share of test images (0-1)",
    "pep": "AUC (0-1)",
    "pep-finest": "AUC (0-1)",
    "aperture": "share of each test sample's parents: caption, box phrase, box crop (0-1)",
    "hier-precision": "precision (0-1)",
    "hier-recall": "recall (0-1)",
}
# how the tables show each metric: a share as points of 100, the others in their own units
_SHOWN = {
    "long-i2t": ("long I2T R@1, of 100", 100), "long-t2i": ("long T2I R@1, of 100", 100),
    "short-i2t": ("short I2T R@1, of 100", 100), "short-t2i": ("short T2I R@1, of 100", 100),
    "himo2": ("HiMo@2, % of captions", 1), "himo3": ("HiMo@3, % of captions", 1),
    "himoK": ("HiMo@K, Pearson ρ (−1 to 1)", 1), "ssi": ("SSI, % score change", 1),
    "cola": ("COLA, of 100", 100), "zs-l1": ("zero-shot L1, of 100", 100),
    "zs-l3": ("zero-shot L3, of 100", 100), "pep": ("PEP AUC, of 100", 100),
    "pep-finest": ("PEP AUC (finest), of 100", 100),
    "aperture": ("parents inside 2K/√c, % of parents", 100),
    "hier-precision": ("hier. precision, of 100", 100), "hier-recall": ("hier. recall, of 100", 100),
}  # fmt: skip
# a continuous per-item value differs only beyond a hundredth of its range (SSI, unbounded: a
# tenth of a percentage point of score change)
_TOLERANCE = {"himoK": 0.02, "ssi": 0.1, "pep": 0.01, "pep-finest": 0.01}
METRICS = {
    name: replace(
        m, units=_UNITS.get(name, ""), shown=_SHOWN[name][0], shown_scale=_SHOWN[name][1],
        item_tolerance=_TOLERANCE.get(name, 0.0),
    )
    for name, m in METRICS.items()
}  # fmt: skip

# which paper each metric's lead is read from (a metric no table prints borrows its paper's)
_LEAD_PAPER = {"himo_": "HiMo-CLIP", "argent_": "ARGENT"}


def _paper_of(metric: Metric) -> str | None:
    if metric.lead is None:
        return None
    return next(p for prefix, p in _LEAD_PAPER.items() if metric.lead.table.startswith(prefix))


L14 = {"arch": "L/14"}
# the paper's PEP AUC pools every (image, caption) score into one ROC; the study's per-item PEP
# is each image's own AUC, averaged (per-item values for the intervals), so sizes do not compare
PEP_PUBLISHED = "pep_auc"
S = {"arch": "S"}


def _sets(sets: tuple[str, ...], key: str) -> tuple[tuple[str, ...], ...]:
    return tuple((s, key) for s in sets)


def _himo_table(table: str, paths: tuple, baseline: str, scale: float = 1.0) -> PaperEffect:
    return PaperEffect(table, paths, {"model": "HiMo", **L14}, {"model": baseline, **L14}, scale)


def _argent_main(
    path: str, baseline: dict, variant: dict | None = None, same_units: bool = True
) -> PaperEffect:
    variant = variant or {"model": "ARGENT", **S}
    return PaperEffect("argent_main", ((path,),), variant, baseline, 0.01, same_units)


def _ablation(path: str, baseline: str) -> PaperEffect:
    full = {"variant": "AdaEnt, weights on intra pairs (ARGENT)"}
    same_units = path != PEP_PUBLISHED
    return PaperEffect(
        "argent_ablations", ((path,),), full, {"variant": baseline}, 0.01, same_units
    )


def _claim(paper, study, variant, id, statement, metric, baseline, headline, source, effect=None,
           premise=None, looks=1):  # fmt: skip
    premise = premise or Premise(f"{baseline} leaves room for the paper's effect on this metric")
    return Claim(id, paper, statement, study, METRICS[metric], variant, baseline, headline,
                 source, effect, family=paper, premise=premise, looks=looks)  # fmt: skip


def _himo(*args, **kwargs) -> Claim:
    return _claim("HiMo-CLIP", "himo", kwargs.pop("variant", "MoLo"), *args, **kwargs)


def _argent(*args, **kwargs) -> Claim:
    return _claim("ARGENT", "argent", kwargs.pop("variant", "ARGENT"), *args, **kwargs)


# MoLo's HiMo@K gain over the global loss alone (the paper's text gives the difference; the
# global loss's own level is HiMo's HiMo@K less it)
HK_GAIN = PaperEffect(
    "himo_ablations", (("himo@K_pearson_gain",),),
    {"comparison": "MoLo (global + component) vs the global loss alone"},
    level=("himo_monotonicity", {"model": "HiMo", **L14}, ("himo@K_pearson",)),
)  # fmt: skip
IN_S = ("imagenet_acc1", {"model": "HyCoCLIP", **S})
HYCO_S = {"model": "HyCoCLIP", **S}
INFONCE, LONGCLIP = "InfoNCE (λ=0)", "Long-CLIP"
ABLATION = "§4 ablation (text: 1024 best, 512 near)"
# the premises the papers state in so many words (the others: the baseline leaves room)
LONGCLIP_H2 = Premise(
    "Long-CLIP's score rises from the first to the full caption for few images: HiMo@2 35.0 (Table 2), below the 50 of scores that carry no order"
)
LONGCLIP_HK = Premise("Long-CLIP's scores fall as the caption grows: HiMo@K −0.55 (Table 2)")
HYCO_PEP = Premise("HyCoCLIP orders entailment below the ceiling: PEP AUC 96.8 (Table 2)")
HYCO_INSIDE = Premise(
    "HyCoCLIP's parents fall inside MERU's radius 2K/√c, where the half-aperture is undefined (§3)",
    PARENTS_INSIDE,
)
MERU_INSIDE = Premise(
    "MERU's text parents fall inside 2K/√c, where the half-aperture is undefined (§3)",
    PARENTS_INSIDE,
)
# MoLo's ablations took seeds from their claims' design notes after a first look at 3 seeds
SECOND_LOOK = 2

# the claims table: (id, statement, metric, baseline, headline, source, paper effect)
# fmt: off
CLAIMS: tuple[Claim, ...] = (
    # MoLo against its own recipe without the component term (the λ = 0 end of the λ ablation)
    _himo("himo-h2-vs-infonce", "MoLo makes scores rise from the first to the full caption more often (HiMo@2)", "himo2", INFONCE, True, "ablation: λ = 1 best"),
    _himo("himo-h3-vs-infonce", "MoLo makes scores rise over three cumulative segments more often (HiMo@3)", "himo3", INFONCE, True, "ablation: λ = 1 best"),
    _himo("himo-hk-vs-infonce", "MoLo raises the correlation of score and caption length (HiMo@K)", "himoK", INFONCE, True, "ablation: global + component vs global", HK_GAIN),
    _himo("himo-ssi-vs-infonce", "MoLo's scores move less when irrelevant sentences are injected (SSI)", "ssi", INFONCE, True, "ablation: λ = 1 best"),
    _himo("himo-long-i2t-vs-infonce", "MoLo improves long-caption image→text retrieval", "long-i2t", INFONCE, True, "ablation: λ = 1 best"),
    _himo("himo-long-t2i-vs-infonce", "MoLo improves long-caption text→image retrieval", "long-t2i", INFONCE, True, "ablation: λ = 1 best"),
    # HiMo against Long-CLIP, the published comparisons (L/14 rows, the paper's datasets)
    _himo("himo-long-i2t-vs-longclip", "HiMo beats Long-CLIP on long-caption image→text retrieval", "long-i2t", LONGCLIP, True, "Table 1", _himo_table("himo_retrieval", _sets(LONG_SETS, "i2t_r1"), LONGCLIP, 0.01)),
    _himo("himo-short-i2t-vs-longclip", "HiMo beats Long-CLIP on short-caption image→text retrieval", "short-i2t", LONGCLIP, True, "Table 1", _himo_table("himo_retrieval", _sets(SHORT_SETS, "i2t_r1"), LONGCLIP, 0.01)),
    _himo("himo-h2-vs-longclip", "HiMo's scores rise from the first to the full caption more often than Long-CLIP's (HiMo@2)", "himo2", LONGCLIP, True, "Table 2", _himo_table("himo_monotonicity", (("himo@2", "avg"),), LONGCLIP), LONGCLIP_H2),
    _himo("himo-h3-vs-longclip", "HiMo's scores rise over three segments more often than Long-CLIP's (HiMo@3)", "himo3", LONGCLIP, True, "Table 2", _himo_table("himo_monotonicity", (("himo@3", "avg"),), LONGCLIP)),
    _himo("himo-hk-vs-longclip", "HiMo's scores follow caption length where Long-CLIP's do not (HiMo@K)", "himoK", LONGCLIP, True, "Table 2", _himo_table("himo_monotonicity", (("himo@K_pearson",),), LONGCLIP), LONGCLIP_HK),
    _himo("himo-ssi-vs-longclip", "HiMo's scores move less than Long-CLIP's when irrelevant sentences are injected (SSI)", "ssi", LONGCLIP, True, "§4 text", PaperEffect("himo_ssi", (("ssi",),), {"model": "HiMo"}, {"model": LONGCLIP})),
    _himo("himo-cola-vs-longclip", "HiMo binds attributes better than Long-CLIP (COLA)", "cola", LONGCLIP, True, "Table 2", _himo_table("himo_monotonicity", (("cola_top1",),), LONGCLIP, 0.01)),
    # MoLo's ablations on the sweep seeds: batch size at equal samples seen, HiDe's scope
    _himo("himo-batch-long-i2t", "A larger batch gives a better MoLo fine-tune (long-caption image→text R@1)", "long-i2t", "MoLo, half batch", False, ABLATION, variant="MoLo, double batch", looks=SECOND_LOOK),
    _himo("himo-batch-hk", "A larger batch gives a better MoLo fine-tune (HiMo@K)", "himoK", "MoLo, half batch", False, ABLATION, variant="MoLo, double batch", looks=SECOND_LOOK),
    _himo("himo-hide-scope-long-i2t", "HiDe's PCA on the global batch beats PCA on each rank's batch (long-caption image→text R@1)", "long-i2t", "MoLo, 2 ranks, HiDe per rank", False, ABLATION, variant="MoLo, 2 ranks, global HiDe", looks=SECOND_LOOK),
    _himo("himo-hide-scope-hk", "HiDe's PCA on the global batch beats PCA on each rank's batch (HiMo@K)", "himoK", "MoLo, 2 ranks, HiDe per rank", False, ABLATION, variant="MoLo, 2 ranks, global HiDe", looks=SECOND_LOOK),
    # ARGENT against HyCoCLIP (Table 2, S rows), every arm trained from random weights
    _argent("argent-zs-l3-vs-hycoclip", "ARGENT improves fine-grained zero-shot classification", "zs-l3", "HyCoCLIP", True, "Table 2", _argent_main(*IN_S)),
    _argent("argent-t2i-vs-hycoclip", "ARGENT improves text→image retrieval (R@5 in the paper; R@1 here)", "short-t2i", "HyCoCLIP", True, "Table 2", _argent_main("coco_t2i_r5", HYCO_S, same_units=False)),
    _argent("argent-pep-vs-hycoclip", "ARGENT orders entailment better (PEP AUC, positives at every level)", "pep", "HyCoCLIP", True, "Table 2", _argent_main(PEP_PUBLISHED, HYCO_S, same_units=False), HYCO_PEP),
    _argent("argent-pep-finest-vs-hycoclip", "ARGENT orders entailment better (PEP AUC, finest-level positives)", "pep-finest", "HyCoCLIP", True, "Table 2", _argent_main(PEP_PUBLISHED, HYCO_S, same_units=False), HYCO_PEP),
    # the aperture failure, on the same runs: their curvature is learned, and it ends at its
    # lower clamp, the paper's κ = 0.1 (``claims.json``'s ``curvature``): one regime
    _argent("argent-aperture-vs-hycoclip", "ARGENT leaves fewer parents than HyCoCLIP inside the undefined-aperture radius", "aperture", "HyCoCLIP", True, "§3 aperture", premise=HYCO_INSIDE),
    _argent("argent-aperture-vs-meru", "ARGENT leaves fewer parents than MERU inside the undefined-aperture radius", "aperture", "MERU", False, "§3 aperture", premise=MERU_INSIDE),
    # Table 3's ablations, in a smaller setting of their own as the paper's CC3M one: the
    # smaller model, at the same budget
    _argent("argent-pep-intra-vs-all", "Weights on intra-modality pairs only beat weights on all pairs (PEP; smaller model)", "pep", f"ARGENT{SMALLER}, weights on all pairs", False, "Table 3", _ablation(PEP_PUBLISHED, "AdaEnt, weights on all pairs"), variant=f"ARGENT{SMALLER}"),
    _argent("argent-pep-intra-vs-none", "Intra-modality weights beat AdaEnt without weights (PEP; smaller model)", "pep", f"ARGENT{SMALLER}, no weights", False, "Table 3", _ablation(PEP_PUBLISHED, "AdaEnt, no weights"), variant=f"ARGENT{SMALLER}"),
    _argent("argent-pep-vs-noreg", "The norm regularizer improves PEP (smaller model)", "pep", f"ARGENT{SMALLER}, no regularizer", False, "Table 3", _ablation(PEP_PUBLISHED, "ARGENT without norm regularizer"), variant=f"ARGENT{SMALLER}"),
    _argent("argent-zs-vs-noreg", "The norm regularizer improves zero-shot classification (smaller model)", "zs-l3", f"ARGENT{SMALLER}, no regularizer", False, "Table 3", _ablation("cls_acc1", "ARGENT without norm regularizer"), variant=f"ARGENT{SMALLER}"),
    _argent("argent-pep-vs-ent", "AdaEnt beats the original aperture entailment (PEP; smaller model)", "pep", f"ARGENT{SMALLER}, Ent", False, "Table 3", _ablation(PEP_PUBLISHED, "original Ent"), variant=f"ARGENT{SMALLER}"),
    # Table 2's model sizes: ARGENT's gains at a second, smaller size; the larger model's gains
    _argent("argent-t2i-vs-hycoclip-smaller", "ARGENT improves text→image retrieval, at the smaller model size", "short-t2i", f"HyCoCLIP{SMALLER}", False, "Table 2 (sizes)", _argent_main("coco_t2i_r5", HYCO_S, same_units=False), variant=f"ARGENT{SMALLER}"),
    _argent("argent-pep-vs-hycoclip-smaller", "ARGENT orders entailment better (PEP AUC), at the smaller model size", "pep", f"HyCoCLIP{SMALLER}", False, "Table 2 (sizes)", _argent_main(PEP_PUBLISHED, HYCO_S, same_units=False), HYCO_PEP, variant=f"ARGENT{SMALLER}"),
    _argent("argent-size-zs-l1", "The larger ARGENT model classifies better zero-shot (Table 2: S → L)", "zs-l1", f"ARGENT{SMALLER}", False, "Table 2 (sizes)", _argent_main("imagenet_acc1", {"model": "ARGENT", **S}, {"model": "ARGENT", "arch": "L"})),
    _argent("argent-size-t2i", "The larger ARGENT model retrieves images better (Table 2: S → L)", "short-t2i", f"ARGENT{SMALLER}", False, "Table 2 (sizes)", _argent_main("coco_t2i_r5", {"model": "ARGENT", **S}, {"model": "ARGENT", "arch": "L"}, same_units=False)),
)
# fmt: on


def _cleaning(kind: str) -> Claim:
    """ARGENT's Table 1 (an evaluation claim) on a fine-tuned Euclidean CLIP (the study's
    InfoNCE fine-tunes): hierarchical retrieval P/R rise once each image's potentially
    ambiguous captions are removed."""
    effect = PaperEffect(
        "argent_cleaning", ((kind,),), {"captions": "ambiguous removed"}, {"captions": "all"}, 0.01
    )
    return Claim(
        f"argent-table1-{kind}",
        "ARGENT",
        f"Removing each image's potentially ambiguous captions (those of its 10 most similar "
        f"images) raises hierarchical retrieval {kind}",
        "himo",
        METRICS[f"hier-{kind}"],
        INFONCE,
        INFONCE,
        True,
        "Table 1",
        effect,
        baseline_item=f"{HIER}/hier_{kind}",
        family="ARGENT",
        premise=Premise(
            f"a fine-tuned CLIP's hierarchical {kind} over all captions leaves room for the gain (Table 1: {kind} {'15.36' if kind == 'precision' else '43.23'} of 100)"
        ),
    )


CLAIMS = CLAIMS + (_cleaning("precision"), _cleaning("recall"))
# the multiplicity families, declared with the claims and fixed before any result is read:
# every claim of a paper counts in its family, whatever its runs later show
FAMILIES = {
    "HiMo-CLIP": "every HiMo-CLIP claim the study tests (Tables 1-2, §4 and the ablations)",
    "ARGENT": "every ARGENT claim the study tests (Tables 1-3 and §3)",
}


class ClaimDeclarationError(ValueError):
    """A claim declared without what its verdict needs; the message names the claim."""


def _problems(claim: Claim, families: dict[str, str], seen: Counter) -> list[str]:
    """What a claim's declaration lacks for its verdict, each naming the field."""
    m, premise = claim.metric, claim.premise
    problems = [
        f"family {claim.family!r} is not one of {sorted(families)}" * (claim.family not in families),
        f"metric {m.item!r} declares no units" * (not m.units),
        f"better {m.better!r} is not 'higher' or 'lower'" * (m.better not in ("higher", "lower")),
        "its id is declared more than once" * (seen[claim.id] > 1),
        "premise: none declared (what the paper says its baseline does)" * (premise is None),
        f"looks {claim.looks!r} is not a positive count" * (not (isinstance(claim.looks, int) and claim.looks >= 1)),
    ]  # fmt: skip
    if premise is not None and premise.kind not in PREMISE_KINDS:
        problems.append(f"premise: kind {premise.kind!r} has no measure (one of {PREMISE_KINDS})")
    try:
        published, _ = claim.published()
        if not published.share > 0:
            problems.append(f"paper_effect: {published.where} is not on the claim's side")
    except (KeyError, ValueError) as error:
        problems.append(f"paper_effect: {error}")
    return [p for p in problems if p]


def validate_claims(claims: Sequence[Claim], families: dict[str, str] = FAMILIES) -> None:
    """Refuse a declaration a verdict cannot be decided from, naming the claim and the field: a
    claim without a declared family or premise (or a premise with no measure), on a metric
    without units or a direction, whose published effect (or lead) cannot be read or is not on
    the claim's side, or an id given twice. δ itself is computed from the measured reference
    when the claims are decided (``study.decide.decide``), and checked there against the rule."""
    seen = Counter(c.id for c in claims)
    for claim in claims:
        found = _problems(claim, families, seen)
        if found:
            raise ClaimDeclarationError(f"claim {claim.id!r}: " + "; ".join(found))


validate_claims(CLAIMS)
FAMILY_SIZES = Counter(c.family for c in CLAIMS)


def claims_for(study: str) -> tuple[Claim, ...]:
    """The claims of one study (``himo`` or ``argent``)."""
    return tuple(c for c in CLAIMS if c.study == study)
