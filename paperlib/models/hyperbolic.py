"""MERU-style hyperbolic CLIP over open_clip encoders
(``docs/methods/argent.md#meru``).

``encode_*(normalize=False)`` (open_clip's features, including its linear projection)
→ ``× exp(α)`` → ``exp_map0`` (float32) on the hyperboloid of learnable curvature ``-c``.
Logits are ``-d_L · exp(logit_scale)``.

The scalar parameters are kept in range MERU's way, by projection: ``clamp_parameters_``
(called at the start of every forward) clamps their values in place, so the optimiser keeps
a gradient at the bound instead of getting stuck behind a clamp in the graph.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from paperlib.geometry.lorentz import exp_map0, pairwise_dist
from paperlib.models import LOGIT_SCALE_MAX
from paperlib.models.batchnorm import untrained_batchnorm
from paperlib.models.clip import text_features

__all__ = ["HyperbolicCLIP", "hyperbolic_logits", "no_weight_decay"]


def hyperbolic_logits(a: Tensor, b: Tensor, curv: float | Tensor, logit_scale: Tensor) -> Tensor:
    """``-d_L(a_i, b_j) · exp(logit_scale)``, (B1, B2); MERU's logits
    (``docs/methods/argent.md#meru``)."""
    return -pairwise_dist(a, b, curv) * logit_scale.exp()


def no_weight_decay(name: str, param: Tensor) -> bool:
    """open_clip's rule (1-d params: biases, norms, scalars; names with bn/ln/bias/logit_scale)
    plus the hyperbolic scalars (α, curvature)."""
    keys = ("bn", "ln", "bias", "logit_scale", "alpha", "log_curv")
    return param.ndim < 2 or any(k in name for k in keys)


def alpha_for_norm(features: Tensor, norm: float = 1.0) -> float:
    """The α whose ``e^α`` scales ``features`` (batch, dim) to a mean norm of ``norm``:
    ``α = log(norm / mean‖f‖)``, clamped ≤ 0 as MERU's α is (``model.alpha_rule:
    feature-norm``, docs/methods/argent.md#starting-from-a-euclidean-base)."""
    mean_norm = features.float().norm(dim=-1).mean().item()
    if not math.isfinite(mean_norm) or mean_norm <= 0:
        raise ValueError(
            f"model.alpha_rule=feature-norm: the first batch's features have mean norm "
            f"{mean_norm}; α needs a finite, positive one"
        )
    return min(0.0, math.log(norm / mean_norm))


# the learned curvature stays within [c0 / CURV_RANGE, c0 · CURV_RANGE] (MERU clamps it so)
CURV_RANGE = 10.0


class HyperbolicCLIP(nn.Module):
    """Wrap an open_clip CLIP model; features are Lorentz space components (batch, embed_dim).

    Args:
        clip: an open_clip ``CLIP`` (e.g. from ``paperlib.models.clip.create_model``); its own
            ``logit_scale`` is frozen (unused).
        curv_init: initial curvature c0 (MERU: 1.0); ``log c`` is learnable when
            ``learn_curv`` and clamped to ``[c0/10, 10·c0]``.
        alpha_init: initial ``α_visual = α_text`` (MERU: ``log(512**-0.5)``, 512 being MERU's
            embedding width; kept as the default whatever the width), clamped ≤ 0.
        logit_scale_init: ``log(1/0.07)``, clamped ≤ ln 100.
    """

    def __init__(
        self,
        clip: nn.Module,
        curv_init: float = 1.0,
        learn_curv: bool = True,
        alpha_init: float = math.log(512**-0.5),
        logit_scale_init: float = math.log(1 / 0.07),
    ):
        super().__init__()
        if curv_init <= 0:
            raise ValueError(f"curv_init must be > 0; got {curv_init}")
        self.clip = clip
        if isinstance(getattr(clip, "logit_scale", None), nn.Parameter):
            clip.logit_scale.requires_grad_(False)
        self.log_curv = nn.Parameter(torch.tensor(math.log(curv_init)), requires_grad=learn_curv)
        self.log_curv_bounds = (math.log(curv_init / CURV_RANGE), math.log(curv_init * CURV_RANGE))
        self.visual_alpha = nn.Parameter(torch.tensor(alpha_init))
        self.textual_alpha = nn.Parameter(torch.tensor(alpha_init))
        self.logit_scale = nn.Parameter(torch.tensor(logit_scale_init))

    @property
    def curv(self) -> Tensor:
        """Current curvature ``c = exp(log_curv)`` (the space has curvature −c)."""
        return self.log_curv.exp()

    def scalar_bounds(self) -> dict[str, tuple[float, float]]:
        """The bounds :meth:`clamp_parameters_` keeps each scalar in, by parameter name."""
        return {
            "log_curv": self.log_curv_bounds,
            "visual_alpha": (-math.inf, 0.0),
            "textual_alpha": (-math.inf, 0.0),
            "logit_scale": (-math.inf, LOGIT_SCALE_MAX),
        }

    @torch.no_grad()
    def clamp_parameters_(self) -> None:
        """Project α ≤ 0, ``log c`` into its bounds and ``logit_scale`` ≤ ln 100, in place."""
        self.visual_alpha.clamp_(max=0.0)
        self.textual_alpha.clamp_(max=0.0)
        self.log_curv.clamp_(*self.log_curv_bounds)
        self.logit_scale.clamp_(max=LOGIT_SCALE_MAX)

    @torch.no_grad()
    def calibrate_alpha_(self, images: Tensor, tokens: Tensor, norm: float = 1.0) -> None:
        """Set ``α_visual`` and ``α_text`` to :func:`alpha_for_norm` of this batch's
        unnormalised features, as the first training step will see them: in eval mode where the
        BatchNorm statistics were trained, in train mode where they were never updated (a
        random tower, whose eval-mode features are one constant vector whatever the input);
        the BatchNorm buffers are given back as they were either way."""
        was_training = self.training
        untrained = untrained_batchnorm(self.clip)
        buffers = {k: v.clone() for k, v in self.clip.named_buffers()}
        self.train(untrained)
        image = self.clip.encode_image(images, normalize=False)
        text = text_features(self.clip, tokens)
        self.clip.load_state_dict(buffers, strict=False)
        self.train(was_training)
        self.visual_alpha.fill_(alpha_for_norm(image, norm))
        self.textual_alpha.fill_(alpha_for_norm(text, norm))

    def _lift(self, features: Tensor, alpha: Tensor) -> Tensor:
        return exp_map0(features.float() * alpha.exp(), self.curv)

    def encode_image(self, images: Tensor) -> Tensor:
        """(batch, 3, H, W) → (batch, embed_dim) space components on the hyperboloid."""
        self.clamp_parameters_()
        return self._lift(self.clip.encode_image(images, normalize=False), self.visual_alpha)

    def encode_text(self, tokens: Tensor) -> Tensor:
        """(batch, context) token ids → (batch, embed_dim) space components."""
        self.clamp_parameters_()
        return self._lift(text_features(self.clip, tokens), self.textual_alpha)

    def forward(self, images: Tensor, tokens: Tensor) -> dict[str, Tensor]:
        """Features plus the scalars the losses need (``logit_scale`` in log space)."""
        return {
            "image_features": self.encode_image(images),
            "text_features": self.encode_text(tokens),
            "curv": self.curv,
            "logit_scale": self.logit_scale,
        }

    def logits(self, image_features: Tensor, text_features: Tensor) -> Tensor:
        """``-d_L(image_i, text_j) · exp(logit_scale)``, (n_images, n_texts)."""
        return hyperbolic_logits(image_features, text_features, self.curv, self.logit_scale)

    def param_groups(self, weight_decay: float) -> list[dict]:
        """AdamW groups: ``weight_decay`` on matrices, none on :func:`no_weight_decay` params."""
        decay, no_decay = [], []
        for name, param in self.named_parameters():
            if param.requires_grad:
                (no_decay if no_weight_decay(name, param) else decay).append(param)
        return [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
