"""What a loss sees of a training batch: its feature sets and the model scalars, as one value.

A training module (``engine.methods``) encodes a batch and hands its loss one of these:

- :class:`EuclideanBatch`: (batch, dim) L2-normalised image and text features, Long-CLIP's
  short-caption features when the batch has them, and the log logit scale;
- :class:`HyperbolicBatch`: (batch, dim) Lorentz space components of the images and captions
  (and, for HyCoCLIP and ARGENT, of one box crop and its phrase per sample), the curvature
  ``curv`` (c of curvature −c) and the log logit scale.

Entailment pairs are (parent, child), :data:`ENTAILMENT_PAIRS`
(``docs/methods/argent.md#hycoclip``):

=========================  ===============  =================
pair                       kind             HyCoCLIP's η
=========================  ===============  =================
text → image               inter-modality   η_inter = 0.7
box_text → box_image       inter-modality   η_inter = 0.7
box_image → image          intra-modality   η_intra = 1.2
box_text → text            intra-modality   η_intra = 1.2
=========================  ===============  =================
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from torch import Tensor

from paperlib.collectives import all_gather_with_grad
from paperlib.tensor_checks import require_features, require_finite_result

#: (parent, child, is_intra) of HyCoCLIP's and ARGENT's four entailment pairs
ENTAILMENT_PAIRS = (
    ("text", "image", False),
    ("box_text", "box_image", False),
    ("box_image", "image", True),
    ("box_text", "text", True),
)
FEATURE_SETS = ("image", "text", "box_image", "box_text")


@dataclass(frozen=True)
class EuclideanBatch:
    """A Euclidean method's loss input (module docstring)."""

    image: Tensor
    text: Tensor
    logit_scale: Tensor
    short_text: Tensor | None = None

    def __post_init__(self) -> None:
        require_features(image=self.image, text=self.text, short_text=self.short_text)


@dataclass(frozen=True)
class HyperbolicBatch:
    """A hyperbolic method's loss input (module docstring); MERU's batch has no boxes."""

    image: Tensor
    text: Tensor
    curv: float | Tensor
    logit_scale: Tensor
    box_image: Tensor | None = None
    box_text: Tensor | None = None

    def __post_init__(self) -> None:
        require_features(
            image=self.image, text=self.text, box_image=self.box_image, box_text=self.box_text
        )

    def total(self, loss: Tensor) -> Tensor:
        """``loss``; :class:`~paperlib.tensor_checks.NonFiniteInputError` naming the feature
        sets that hold NaN or inf when it is not finite."""
        return require_finite_result(
            loss, **{n: getattr(self, n) for n in FEATURE_SETS}, logit_scale=self.logit_scale
        )

    def features(self) -> list[Tensor]:
        """The feature sets present, in the order of :data:`FEATURE_SETS`."""
        return [f for name in FEATURE_SETS if (f := getattr(self, name)) is not None]

    def require_boxes(self) -> HyperbolicBatch:
        """This batch; ValueError when it lacks the box crops' and phrases' features."""
        if self.box_image is None or self.box_text is None:
            raise ValueError("HyCoCLIP's and ARGENT's losses need box_image and box_text")
        return self

    def pairs(self) -> list[tuple[Tensor, Tensor, bool]]:
        """The (parent, child, is_intra) features of :data:`ENTAILMENT_PAIRS`; needs the boxes."""
        self.require_boxes()
        return [(getattr(self, p), getattr(self, c), intra) for p, c, intra in ENTAILMENT_PAIRS]

    def gathered(self) -> HyperbolicBatch:
        """Every feature set gathered from all ranks with gradient (``all_gather_with_grad``):
        the global batch the contrastive terms score."""
        return dataclasses.replace(
            self,
            **{
                n: all_gather_with_grad(f)
                for n in FEATURE_SETS
                if (f := getattr(self, n)) is not None
            },
        )
