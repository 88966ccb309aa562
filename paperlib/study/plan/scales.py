"""The study's scales: how many bases and seeds, and each schedule's steps, batch and rate."""

from __future__ import annotations

from dataclasses import dataclass, field

from paperlib.study.plan.claims import HEADLINE_ARMS

# the arms every seed runs (the headline comparisons)
EVERY_SEED = frozenset(v for arms in HEADLINE_ARMS.values() for v in arms)


@dataclass(frozen=True)
class Scale:
    """Schedule sizes of one study scale."""

    bases: tuple[int, ...]  # pre-trained bases (``study.plan.bases``); seed s uses s % len
    seeds: tuple[int, ...]  # fine-tune seeds of the headline comparisons
    sweep_seeds: tuple[int, ...]  # seeds that also run the ablations and sweeps
    finetune_steps: int
    finetune_batch: int
    finetune_lr: float
    train_size: int  # fine-tune world samples
    eval_size: int
    # ARGENT's arms are evaluated on more test samples, where their claims' item floors ask
    # for them (``scripts/scratch_design_notes.py``); the first ``eval_size`` are the same
    argent_eval_size: int
    val_size: int
    pcm_dim: int = 8
    # ARGENT's arms, each trained from random weights (``design.scratch_config``) as the
    # hyperbolic bases were pre-trained (``study.plan.bases.RECIPES``): the world of the seed's
    # base, its size, learning rate, warm-up and weight decay, at one budget of ``scratch_steps`` ×
    # ``scratch_batch`` samples, validated ``scratch_val_points`` times on ``scratch_val_size``
    # held-out samples; which arm runs on which seeds: ``sweep_arm_seeds``
    scratch_steps: int = 0
    scratch_batch: int = 128
    scratch_lr: float = 1e-3
    scratch_warmup: int = 200
    scratch_weight_decay: float = 0.1
    scratch_world_size: int = 200_000
    scratch_val_size: int = 1000
    scratch_val_points: int = 16
    # the studies whose runs are left out of the claims while their validation curve is still
    # rising (the full study's HiMo fine-tunes); the others only report it: the smoke study's
    # schedules are too short to flatten, and ARGENT's from-scratch arms still rise at the
    # largest budget the study's cost allows (``scripts/scratch_budget_probe.py``)
    require_plateau: tuple[str, ...] = ("himo", "argent")
    # whether seed 0's headline fine-tunes also run at twice their steps (``study.plan.design``'s
    # schedule check: would a longer schedule still have helped?)
    schedule_check: bool = False
    # the recipe stage's grid (``study.plan.recipe``, ``recipe_grid``): learning rates × warm-ups (a
    # fraction of each run's steps), searched per headline arm on the validation split; a
    # study with an empty grid does not search: its arms train at ``finetune_lr`` /
    # ``hyperbolic_lr`` with the design's fixed warm-up
    recipe_lrs: tuple[float, ...] = ()
    recipe_warmups: tuple[float, ...] = ()

    # the headline arms' scale trend on the sweep seeds (``design.trend_runs``): batch sizes as
    # factors of the headline batch (equal samples seen) and training lengths as factors of its
    # steps
    trend_batch_factors: tuple[float, ...] = ()
    trend_length_factors: tuple[float, ...] = ()
    # sweep arms that run on other seeds than ``sweep_seeds``: variant -> seeds, chosen from the
    # claims' design notes (``study.decide.design_notes.design_note``: the seeds per base that
    # resolve δ, never fewer than 3 per base); the scale trend stays on ``sweep_seeds``
    sweep_arm_seeds: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def base_of(self, seed: int) -> int:
        return self.bases[seed % len(self.bases)]

    def recipe_grid(self, study: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The learning rates and warm-up fractions ``study``'s arms search (``study.plan.recipe``):
        HiMo's fine-tunes search; ARGENT's from-scratch arms take the bases' recipe."""
        if study != "himo":
            return (), ()
        return self.recipe_lrs, self.recipe_warmups

    def arm_seeds(self, variant: str) -> tuple[int, ...]:
        """The seeds an arm runs on: its :attr:`sweep_arm_seeds` entry where it has one, else
        every seed for a headline arm and the sweep seeds for the others."""
        if variant in self.sweep_arm_seeds:
            return self.sweep_arm_seeds[variant]
        return self.seeds if variant in EVERY_SEED else self.sweep_seeds


# ARGENT's from-scratch arms (``design.ARGENT_ARMS``): the main arms and the model-size pair on
# the seeds their claims' design notes ask, the ablations (at the smaller model) on theirs
ARGENT_MAIN_ARMS = (
    "HyCoCLIP",
    "ARGENT",
    "MERU",
    "HyCoCLIP, smaller model",
    "ARGENT, smaller model",
)
ARGENT_ABLATION_ARMS = tuple(
    f"ARGENT, smaller model, {change}"
    for change in ("no weights", "weights on all pairs", "no regularizer", "Ent")
)


def from_scratch(variant: str) -> bool:
    """Whether a study variant trains from random weights: every ARGENT arm (it starts from no
    base, so it keeps none)."""
    return variant in ARGENT_MAIN_ARMS or variant in ARGENT_ABLATION_ARMS


SCALES = {
    "smoke": Scale(
        bases=(0,),
        seeds=(0,),
        sweep_seeds=(0,),
        finetune_steps=20,
        finetune_batch=32,
        finetune_lr=5e-4,
        scratch_steps=20,
        scratch_batch=32,
        scratch_warmup=2,
        scratch_world_size=1024,
        scratch_val_size=100,
        scratch_val_points=2,
        train_size=1024,
        eval_size=200,
        argent_eval_size=200,
        val_size=100,
        require_plateau=(),
        # one setting per trend axis: the machinery the full study's trend runs, at smoke cost
        trend_batch_factors=(2.0,),
        trend_length_factors=(2.0,),
        recipe_lrs=(5e-4, 1e-4),
        recipe_warmups=(0.05,),
    ),
    "full": Scale(
        bases=(0, 1),
        seeds=(0, 1, 2, 3, 4, 5, 6, 7),
        sweep_seeds=(0, 1, 2),
        finetune_steps=400,
        finetune_batch=64,
        finetune_lr=5e-4,
        # ARGENT from scratch: no point of the committed probe (results/probes/scratch_budget.json,
        # ``scripts/scratch_budget_probe.py``) has both main arms flat and staying flat on zero-shot
        # L1 and short R@1, as the bases themselves still rise on R@1 at their 819,200 samples; the
        # budget is the largest at which six seeds of every ARGENT arm (three per world, the fewest
        # whose intervals the design notes can use) fit the study's cost, with HiMo's scale trend
        # cut: 2,800 × 128 = 358,400 samples, where both main arms pass their learning targets
        scratch_steps=2800,
        scratch_val_points=8,
        require_plateau=("himo",),
        # the fine-tunes' training world: 400 steps at batch 64 pass over it three times, so the
        # schedule is several epochs (as the papers' are) at the study's CPU cost
        train_size=8_500,
        eval_size=1000,
        argent_eval_size=3000,
        val_size=500,
        schedule_check=False,
        # no scale trend: the full study's cost goes to ARGENT's from-scratch arms (the smoke
        # study keeps the machinery running)
        recipe_lrs=(1e-5, 3e-5, 1e-4, 3e-4),  # half-decade steps; the paper's 1e-6 is below
        recipe_warmups=(0.05, 0.25),
        # MoLo's ablations, balanced over the two bases: the batch pair on 3 + 3 seeds (its HiMo@K
        # claim's note asks 3 per base), the HiDe-scope pair on 4 + 4 (its long I2T claim's note
        # asks 4 per base). ARGENT's arms on the seeds of their design notes
        # (results/probes/scratch_design.json), fixed before their runs
        sweep_arm_seeds={
            **dict.fromkeys(ARGENT_MAIN_ARMS, tuple(range(6))),
            **dict.fromkeys(ARGENT_ABLATION_ARMS, tuple(range(6))),
            "MoLo, half batch": tuple(range(6)),
            "MoLo, double batch": tuple(range(6)),
            "MoLo, 2 ranks, global HiDe": tuple(range(8)),
            "MoLo, 2 ranks, HiDe per rank": tuple(range(8)),
        },
    ),
}
