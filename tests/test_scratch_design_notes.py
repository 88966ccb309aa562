"""The from-scratch design notes: a claim's note against a hand computation on a fabricated
pilot whose per-item effects have no seed × item interaction within a world (so the item term
is the plain variance of the item means), the record ``main`` writes, and the committed pilot
the notes read (the runs its docstring describes)."""

from __future__ import annotations

import importlib.util
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from paperlib.study.decide.targets import SCRATCH_TARGETS
from paperlib.study.paths import REPO_ROOT
from paperlib.study.plan.claims import CLAIMS

spec = importlib.util.spec_from_file_location(
    "scratch_design_notes", REPO_ROOT / "scripts" / "scratch_design_notes.py"
)
notes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(notes)

ARGENT_CLAIMS = [c for c in CLAIMS if c.study == "argent"]
ITEMS = 40


def _claim(claim_id: str):
    return next(c for c in CLAIMS if c.id == claim_id)


def _pilot(root, effects: dict[str, np.ndarray], items: tuple[str, ...]) -> None:
    """A pilot folder of the three arms, 8 seeds each: the baselines' values random, ARGENT's
    the baseline's plus ``effects[baseline][seed]`` (per item), for every one of ``items``."""
    rng = np.random.default_rng(3)
    base = {arm: rng.random((8, ITEMS)) for arm in ("hycoclip", "meru")}
    values = {
        "hycoclip": base["hycoclip"],
        "meru": base["meru"],
        "argent": base["hycoclip"] + effects["hycoclip"],
    }
    for arm, table in values.items():
        for seed in range(8):
            folder = root / arm / f"seed{seed}"
            folder.mkdir(parents=True)
            rows = {item: table[seed] for item in items}
            if arm == "meru":  # ARGENT against MERU: the MERU claim's own effect
                rows = {item: values["argent"][seed] - effects["meru"][seed] for item in items}
            np.savez(folder / "items.npz", **rows)


def _effects(seed_effects, world_items) -> np.ndarray:
    """(8 seeds, items) effects ``a_s + g_{w(s), i}``: a seed's shift plus its world's item
    profile, the world of seed s being s mod 2."""
    return np.array([seed_effects[s] + world_items[s % 2] for s in range(8)])


def test_a_note_is_the_hand_computed_design_from_the_pilot(tmp_path, monkeypatch):
    """Per-item effects ARGENT − HyCoCLIP of ``a_s + g_{w,i}``: the effect is the mean of the
    two worlds' means; the within-world variance of the seed means is the pooled variance of
    the seed shifts (6 degrees of freedom); the item term is the variance over items of the
    world-averaged profile, over the items (no residual within a world); each balanced design
    of n seeds per world has half-width √(t² · within / (2n) + z² · item term), t with 2n − 2
    degrees of freedom at the claim's level (0.8 × 0.05 over the declared claims, two-sided);
    the seeds needed are the fewest whose half-width falls below δ."""
    rng = np.random.default_rng(0)
    shifts = np.array([0.02, 0.04, 0.03, 0.05, 0.01, 0.07, 0.02, 0.06])
    profiles = rng.normal(0.0, 0.01, (2, ITEMS))
    effect = _effects(shifts, profiles)
    claim = _claim("argent-zs-l3-vs-hycoclip")
    _pilot(tmp_path, {"hycoclip": effect, "meru": effect}, (claim.item,))
    monkeypatch.setattr(notes, "PILOT", tmp_path)
    monkeypatch.setattr(notes, "claim_translation", lambda scale, c: SimpleNamespace(delta=0.03))
    note = notes.note(claim)
    worlds = [shifts[0::2], shifts[1::2]]
    mean = np.mean([w.mean() + profiles[k].mean() for k, w in enumerate(worlds)])
    within = sum(((w - w.mean()) ** 2).sum() for w in worlds) / 6
    item_term = profiles.mean(axis=0).var(ddof=1) / ITEMS
    alpha = 0.05 * 0.8 / len(CLAIMS)
    z = stats.norm.isf(alpha / 2)
    widths = {n: math.sqrt(stats.t.isf(alpha / 2, 2 * n - 2) ** 2 * within / (2 * n)
                           + z * z * item_term) for n in range(2, 9)}  # fmt: skip
    assert note["claim"] == claim.id and note["pilot_pair"] == ["argent", "hycoclip"]
    assert (note["delta"], note["alpha"]) == (0.03, pytest.approx(alpha))
    assert note["pilot_effect"] == pytest.approx(mean)
    assert note["within_variance"] == pytest.approx(within)
    assert note["item_term"] == pytest.approx(item_term)
    assert note["item_floor"] == pytest.approx(z * math.sqrt(item_term))
    assert note["half_width_per_world"] == {str(n): pytest.approx(w) for n, w in widths.items()}
    needed = min(n for n, w in widths.items() if w < 0.03)
    assert note["per_world_needed"] == needed > 2  # a design the pilot's spread resolves
    assert all(w >= 0.03 for n, w in widths.items() if n < needed)
    assert note["items_for_floor"] is None  # the floor is below δ


def test_a_floor_at_delta_asks_for_more_items_and_the_meru_claim_reads_meru(tmp_path, monkeypatch):
    """With the seeds' shifts nearly alike the item term dominates: at δ below its floor no
    design resolves it, and the test set that would is the items times (floor / δ)², rounded
    up. The MERU claim's pilot pair is ARGENT against MERU."""
    profiles = np.array([np.linspace(-0.05, 0.05, ITEMS), np.linspace(0.05, -0.05, ITEMS) * 0.5])
    shifts = 0.2 + 1e-5 * np.arange(8)
    effect = _effects(np.full(8, 0.1), profiles)
    meru = _effects(shifts, profiles)
    claim = _claim("argent-aperture-vs-meru")
    _pilot(tmp_path, {"hycoclip": effect, "meru": meru}, (claim.item,))
    monkeypatch.setattr(notes, "PILOT", tmp_path)
    monkeypatch.setattr(notes, "claim_translation", lambda scale, c: SimpleNamespace(delta=1e-3))
    note = notes.note(claim)
    assert note["pilot_pair"] == ["argent", "meru"]
    assert note["pilot_effect"] == pytest.approx(np.mean(shifts))
    # each world's shifts 0, 2, 4, 6 (× 1e-5 above 0.2) lie ±1 and ±3 about their mean
    assert note["within_variance"] == pytest.approx(2 * (9 + 1 + 1 + 9) * 1e-10 / 6)
    item_term = profiles.mean(axis=0).var(ddof=1) / ITEMS
    alpha = 0.05 * 0.8 / len(CLAIMS)
    floor = stats.norm.isf(alpha / 2) * math.sqrt(item_term)
    assert note["item_floor"] == pytest.approx(floor) and floor >= 1e-3
    assert note["per_world_needed"] is None
    assert note["items_for_floor"] == math.ceil(ITEMS * (floor / 1e-3) ** 2)
    assert notes.pilot_pair(_claim("argent-pep-vs-ent")) == ("argent", "hycoclip")


def test_main_writes_one_note_per_argent_claim(tmp_path, monkeypatch):
    items = tuple({i for c in ARGENT_CLAIMS for i in (c.item, c.baseline_metric)})
    effect = _effects(np.linspace(0.0, 0.07, 8), np.zeros((2, ITEMS)) + 0.01)
    _pilot(tmp_path / "pilot", {"hycoclip": effect, "meru": effect}, items)
    monkeypatch.setattr(notes, "PILOT", tmp_path / "pilot")
    monkeypatch.setattr(notes, "claim_translation", lambda scale, c: SimpleNamespace(delta=0.02))
    out = tmp_path / "design.json"
    assert notes.main(["--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert [n["claim"] for n in record["notes"]] == [c.id for c in ARGENT_CLAIMS]
    assert record["notes"][0] == json.loads(json.dumps(notes.note(ARGENT_CLAIMS[0])))
    assert record["about"].startswith("Every ARGENT claim now compares arms trained from random")


def test_the_committed_pilot_is_the_runs_the_notes_describe():
    """Eight seeds of MERU, HyCoCLIP and ARGENT, each from random weights for 400 steps at batch
    64, seed s on the world of base s mod 2; each holds every item an ARGENT claim reads, on
    one test set; and they had not learned the world: zero-shot L1 about 0.27 over all of
    them, below the from-scratch target."""
    l1 = []
    for arm in ("meru", "hycoclip", "argent"):
        sizes = set()
        for seed in notes.SEEDS:
            folder = notes.PILOT / arm / f"seed{seed}"
            config = json.loads((folder / "run.done").read_text())["config"]
            assert (config["method"], config["model"]["init"]) == (arm, "random")
            assert (config["train"]["steps"], config["train"]["batch_size"]) == (400, 64)
            assert config["train"]["seed"] == seed and config["data"]["seed"] % 100 == seed % 2
            items = np.load(folder / "items.npz")
            for claim in ARGENT_CLAIMS:
                assert {claim.item, claim.baseline_metric} <= set(items.files), claim.id
            sizes |= {items[k].size for k in items.files if k.startswith("world-zeroshot")}
            l1.append(items["world-zeroshot/L1_correct"].mean())
        assert len(sizes) == 1
    assert notes.SEEDS == tuple(range(8)) and len(l1) == 24
    assert round(float(np.mean(l1)), 2) == 0.27 < SCRATCH_TARGETS["world-zeroshot/L1_correct"]
