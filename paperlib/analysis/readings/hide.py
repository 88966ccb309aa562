"""Tutorial 01's readings: what HiDe keeps of the held-out captions, read off the numbers of each
section (``docs/methods/himo-clip.md#hide``, ``docs/methods/himo-clip.md#hide-scope``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from paperlib.analysis.readings.words import Reading, listing, plural, span

CLEAR = 2.0  # a difference counts as clear beyond this many noise standard deviations


def towers(labels: Sequence[str]) -> str:
    """``the MoLo tower``, ``the Long-CLIP and MoLo towers``."""
    labels = list(labels)
    return f"the {listing(labels)} tower{plural(len(labels), '', 's')}"


def components_text(columns: Sequence[int]) -> str:
    """0-based component indices as text: ``PC4–PC5`` for a run, else ``PC1, PC3``."""
    names = [f"PC{j + 1}" for j in columns]
    run = list(columns) == list(range(columns[0], columns[0] + len(columns)))
    return f"{names[0]}–{names[-1]}" if run and len(names) > 1 else ", ".join(names)


def hide_steps(n: int, directions: int, m: int, explained: float, tau: float) -> Reading:
    """What HiDe did to one batch: m of its directions, the variance they hold."""
    return Reading(
        f"At τ = {tau}, HiDe keeps m = {m} of the {directions} principal directions of these "
        f"{n} caption features; they hold {explained:.3f} of the batch's variance (the τ cut "
        f"asks for at least {tau}), and each feature is replaced by the batch mean plus its "
        "projection on them."
    )


def spectrum(
    counts: Mapping[float, Mapping[str, int]],
    cumulative: Mapping[str, np.ndarray],
    tau: float,
    base: str,
    n: int,
) -> Reading:
    """How steep the spectra are and how the fine-tuned towers' cumulative curves lie against
    the ``base`` tower's, up to where the base holds 99 % of the variance. ``counts[level]`` is
    each tower's m at that level (0.5, ``tau`` and 0.99 at least)."""
    directions = len(next(iter(cumulative.values())))
    tuned = [label for label in cumulative if label != base]
    reach = counts[0.99][base]
    below = {
        label: int(np.sum(cumulative[label][:reach] < cumulative[base][:reach])) for label in tuned
    }
    if all(k == reach for k in below.values()):
        where = f"below the pre-trained tower's at every m from 1 to {reach}"
        spread = "spreads the variance over more directions"
    elif not any(below.values()):
        where = f"above the pre-trained tower's at every m from 1 to {reach}"
        spread = "concentrates the variance in fewer directions"
    else:
        counted = ", ".join(f"{label} at {k}" for label, k in below.items())
        where = f"across the pre-trained tower's (below it, of m = 1–{reach}: {counted})"
        spread = "neither concentrates nor spreads the variance consistently"
    half, kept, most = (counts[level] for level in (0.5, tau, 0.99))
    against = f"{', '.join(str(kept[label]) for label in tuned)} against {kept[base]}"
    text = (
        f"The spectrum is steep: in every tower {span(half.values(), 'd')} directions hold half "
        f"of the variance of the {n} captions and {span(most.values(), 'd')} of {directions} "
        f"hold 99 % of it, so from τ = {tau} to τ = 0.99 m grows from "
        f"{span(kept.values(), 'd')} to {span(most.values(), 'd')} and the other "
        f"{directions - max(most.values())} directions share the last per cent. The fine-tuned "
        f"towers' cumulative curves lie {where}: fine-tuning on long captions {spread}, and at "
        f"τ = {tau} HiDe keeps {', '.join(f'{kept[label]} ({label})' for label in tuned)} "
        f"directions of the fine-tuned towers against {kept[base]} of the pre-training."
    )
    point = (
        f"HiDe is PCA with a variance threshold: at τ = {tau} it keeps m = "
        f"{span(kept.values(), 'd')} of {directions} directions of the {n} held-out captions, "
        f"and fine-tuning on long captions {spread} ({against})."
    )
    return Reading(text, point)


def _leading(followed: Mapping[str, Sequence[str]], name: str) -> int:
    """How many leading components follow ``name`` in every tower."""
    lead = 0
    while all(lead < len(names) and names[lead] == name for names in followed.values()):
        lead += 1
    return lead


def _background_text(eta, followed, row: int, shown: int) -> tuple[str, list[str]]:
    """Which components follow the background, tower by tower, with their η²."""
    columns = {
        label: [j for j, name in enumerate(names) if name == "background"]
        for label, names in followed.items()
    }
    having = [label for label, c in columns.items() if c]
    if not having:
        return f"no component among the first {shown} of any tower", having
    by_run: dict[str, list[str]] = {}
    for label in having:
        by_run.setdefault(components_text(columns[label]), []).append(label)
    values = [eta[label][row, j] for label in having for j in columns[label]]
    text = (
        ", ".join(f"{run} in {listing(labels)}" for run, labels in by_run.items())
        + f" (η² {span(values)})"
    )
    without = [label for label in eta if label not in having]
    if without:
        largest = max(eta[label][row, :shown].max() for label in without)
        text += (
            f", while none of the first {shown} components of {towers(without)} does (largest "
            f"background η² {largest:.2f})"
        )
    return text, having


def components(
    eta: Mapping[str, np.ndarray],
    followed: Mapping[str, Sequence[str]],
    factors: Sequence[str],
    base: str,
    scatter: str = "MoLo",
) -> Reading:
    """Which factors the leading components follow (``followed``, from
    ``analysis.components.followed_factor`` of each (factors × components) ``eta`` table), and
    the η² of the ``scatter`` tower's PC1 and PC2 with the two things the first sentence names."""
    top, back = factors.index("super-category"), factors.index("background")
    shown = min(table.shape[1] for table in eta.values())
    lead = _leading(followed, "super-category")
    later, having = _background_text(eta, followed, back, shown)
    fine_tuned = [label for label in eta if label != base]
    holders = "the fine-tuned towers" if set(having) == set(fine_tuned) else towers(having)
    if lead:
        leading = components_text(list(range(lead)))
        values = span(table[top, j] for table in eta.values() for j in range(lead))
        opening = (
            f"In all {len(eta)} towers {leading} follow the taxonomy from its coarsest level down "
            f"(super-category η² {values}), as the paper reads the leading components"
        )
        point = (
            f"The leading components follow the taxonomy ({leading}, super-category η² {values})"
        )
    else:
        opening = "PC1 does not follow the super-category in every tower"
        point = "The leading components do not follow the super-category in every tower"
    first = eta[scatter][:, :2]
    text = (
        f"{opening}; the background colour is what later components follow: {later}. "
        if having
        else f"{opening}; {later} follows the background colour. "
    ) + (
        f"On the scatter, {scatter}'s PC1 and PC2 have super-category η² {first[top, 0]:.2f} "
        f"and {first[top, 1]:.2f}, background η² {first[back, 0]:.2f} and {first[back, 1]:.2f}."
    )
    if having:
        text += (
            " Both things the first sentence names become variance: the super-category"
            f"{' first' if lead else ''} and, in {holders}, the background colour, a factor the "
            "paper's reading of the leading components does not anticipate."
        )
        point += (
            f"; in {holders} later ones follow the background colour, which the paper's reading "
            "does not anticipate."
        )
    else:
        point += f"; the background colour leads none of the first {shown} components."
    return Reading(text, point)


def _sides(kept: pd.DataFrame, dropped: pd.DataFrame, floor: float = 0.1) -> dict[str, list]:
    """The factors whose η² is larger in the kept part in every tower, larger in the dropped part
    in every tower, or neither; a factor under ``floor`` in both parts of every tower is left
    out."""
    sides: dict[str, list] = {"kept": [], "dropped": [], "split": []}
    for f in kept.columns:
        k, d = kept[f], dropped[f]
        if max(k.max(), d.max()) >= floor:
            sides["kept" if (k > d).all() else "dropped" if (d > k).all() else "split"].append(f)
    return sides


def kept_dropped(
    kept: pd.DataFrame,
    dropped: pd.DataFrame,
    median_cos: Mapping[str, float],
    tau: float,
    dropped_share: float,
) -> Reading:
    """Which factors the reconstruction keeps and which it drops: the pooled η² of each factor
    (columns) in the kept and the dropped part of each tower (rows), the median cos(u, u′), and
    the share of one batch's variance its dropped part holds."""
    sides = _sides(kept, dropped)
    parts = [
        f"At τ = {tau} HiDe keeps {listing(sides['kept']) or 'no factor'}"
        + (
            f" (η² {span(kept[sides['kept']].values.ravel())} of the kept part, "
            f"{span(dropped[sides['kept']].values.ravel())} of the dropped one)"
            if sides["kept"]
            else ""
        ),
        f" and drops {listing(sides['dropped']) or 'no factor'}"
        + (
            f" (η² {span(dropped[sides['dropped']].values.ravel())} of the dropped part, "
            f"{span(kept[sides['dropped']].values.ravel())} of the kept one)"
            if sides["dropped"]
            else ""
        ),
    ]
    for f in sides["split"]:
        larger = kept[f] > dropped[f]
        parts.append(
            f"; {f} sits in the kept part of {towers(kept.index[larger])} and in the dropped "
            f"part of {towers(kept.index[~larger])}"
        )
    bound = "at most" if dropped_share <= 1 - tau else "more than"
    text = (
        f"MoLo's dropped part holds {dropped_share:.3f} of its batch's variance, {bound} "
        f"1 − τ = {1 - tau:.2f}, and the median cos(u, u′) is "
        f"{span(median_cos.values(), '.3f')} across the towers. " + "".join(parts) + "."
    )
    point = (
        f"The reconstruction u′ keeps {listing(sides['kept']) or 'no factor'} and drops "
        f"{listing(sides['dropped']) or 'no factor'}."
    )
    return Reading(text, point)


def _expected_words(above: int, below: int, total: int) -> str:
    """How ``above`` and ``below`` clear differences among ``total`` (batch, expected factor)
    pairs read against the paper's expectation of a gain."""
    if above == total:
        return "as the paper expects"
    if below == total:
        return "the opposite of the paper's expectation"
    if above and below:
        return "mixed, not the consistent gain the paper expects"
    return "only partly as the paper expects" if above else "not the gain the paper expects"


def _clear_counts(difference: pd.DataFrame, noise: pd.Series, names: Sequence[str]) -> str:
    """Per factor of ``names``: how many batches differ clearly above and below, the range of
    the differences and the noise."""
    return "; ".join(
        f"{f}: {int((difference[f] > CLEAR * noise[f]).sum())} of {len(difference)} clearly "
        f"above and {int((difference[f] < -CLEAR * noise[f]).sum())} clearly below "
        f"(differences {span(difference[f], '+.2f')}, noise s.d. {noise[f]:.2f})"
        for f in names
    )


def batch_content(
    difference: pd.DataFrame,
    noise: pd.Series,
    expected: Sequence[str],
    angles: Mapping[str, np.ndarray],
    sampling: np.ndarray,
    random_level: float,
) -> Reading:
    """What a batch of one super-category keeps against mixed batches: ``difference`` (one row
    per single-super-category batch, one column per factor) of the within-super-category ε²
    against the mixed batches' mean, read against ``noise`` (the s.d. of such a difference);
    and the principal ``angles`` of each batch's subspace to a mixed batch's, their mean against
    the ``sampling`` angles between two disjoint mixed batches."""
    clear = difference.abs() > CLEAR * noise
    above = int((clear & (difference > 0))[list(expected)].values.sum())
    below = int((clear & (difference < 0))[list(expected)].values.sum())
    words = _expected_words(above, below, len(difference) * len(expected))
    others = [f for f in difference.columns if f not in expected and clear[f].any()]
    rest = (
        f" Of the other factors, those that differ clearly in some batch: "
        f"{_clear_counts(difference, noise, others)}."
        if others
        else " None of the other factors differs clearly in any batch."
    )
    mean, sd = float(np.mean(sampling)), float(np.std(sampling, ddof=1))
    low, high = (f(float(np.mean(a)) for a in angles.values()) for f in (min, max))
    moved = (
        "moves the kept directions beyond sampling"
        if low > mean + CLEAR * sd
        else "moves the kept directions no more than sampling does"
        if high <= mean + CLEAR * sd
        else "moves the kept directions of some batches beyond sampling"
    )
    text = (
        f"The batch's content {moved}: the mean principal angle of a single-super-category "
        f"subspace to the mixed batch's is {low:.1f}–{high:.1f}°, against {mean:.1f}° (s.d. "
        f"{sd:.1f}°) between two disjoint mixed batches of the same size and {random_level:.1f}° "
        f"between random subspaces. What a single-super-category batch keeps within its "
        f"super-category is {words} (clearly: by more than {CLEAR:g} noise s.d. from the mixed "
        f"batches' mean): {_clear_counts(difference, noise, expected)}." + rest
    )
    point = (
        f"The components depend on the batch's content: it {moved} (mean angle "
        f"{low:.1f}–{high:.1f}° against {mean:.1f}° between two mixed batches), and what a "
        f"single-super-category batch keeps of the {listing(expected)} within its "
        f"super-category is {words}."
    )
    return Reading(text, point)


def batch_size(sweeps: Mapping[str, Mapping[str, np.ndarray]], n: int) -> Reading:
    """How m and the angle between two disjoint sub-batches change from the smallest to the
    largest batch size of each tower's sweep (``analysis.components.batch_size_sweep``)."""
    first, last = {}, {}
    falls = []
    for label, sweep in sweeps.items():
        angle = sweep["angle"]
        se = angle.std(axis=1, ddof=1) / np.sqrt(angle.shape[1])
        first[label], last[label] = angle[0].mean(), angle[-1].mean()
        if first[label] - last[label] > CLEAR * float(np.hypot(se[0], se[-1])):
            falls.append(label)
    sizes = next(iter(sweeps.values()))["sizes"]
    small_m = {label: sweep["m"][0] for label, sweep in sweeps.items()}
    m_ref = {label: int(sweep["m_ref"]) for label, sweep in sweeps.items()}
    fewer = all(small_m[label].mean() < m_ref[label] for label in sweeps)
    trend = (
        "in every tower the mean angle between two disjoint sub-batches falls"
        if len(falls) == len(sweeps)
        else f"the mean angle between two disjoint sub-batches falls clearly in "
        f"{listing(falls) or 'no tower'}, and elsewhere not beyond its standard error, going"
    )
    size_words = (
        "the larger the batch, the more alike the components of two batches, as the paper's "
        "batch-size ablation argues"
        if len(falls) == len(sweeps)
        else "the batch size does not stabilise the components in every tower"
    )
    text = (
        f"At N = {sizes[0]} HiDe keeps m = {span([m.mean() for m in small_m.values()], '.1f')} "
        f"on average (s.d. {span([m.std() for m in small_m.values()], '.1f')} over sub-batches) "
        f"against {span(m_ref.values(), 'd')} on all {n} captions, "
        f"{'fewer in every tower' if fewer else 'not fewer in every tower'}; {trend} from "
        f"{span(first.values(), '.1f')}° at N = {sizes[0]} to {span(last.values(), '.1f')}° at "
        f"N = {sizes[-1]} (by more than {CLEAR:g} standard errors of the difference): "
        f"{size_words}."
    )
    point = (
        f"Its size matters: the mean angle between two disjoint batches goes from "
        f"{span(first.values(), '.1f')}° at N = {sizes[0]} to {span(last.values(), '.1f')}° at "
        f"N = {sizes[-1]}; {size_words}."
    )
    return Reading(text, point)
