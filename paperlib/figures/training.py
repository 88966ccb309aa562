"""A training log's curves (the training notebooks)."""

from __future__ import annotations

import matplotlib.pyplot as plt


def plot_log(log: list[dict], keys: list[str], title: str = "") -> plt.Figure:
    """One panel per logged quantity (``loss`` first) against the training step, each from
    the records that hold it."""
    keys = ["loss", *[k for k in keys if k != "loss" and any(k in r for r in log)]]
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 3), squeeze=False)
    for ax, key in zip(axes[0], keys):
        ax.plot([r["step"] for r in log if key in r], [r[key] for r in log if key in r])
        ax.set(title=key, xlabel="training step", ylabel=key)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def loss_sentence(log: list[dict], log_file: str) -> str:
    """The loss curve in one sentence: whether it fell, from its first logged value to its last
    (``log_file``: where the records were read, as the reader should see it)."""
    steps = [r for r in log if "loss" in r]
    first, last = steps[0], steps[-1]
    moved = "fell" if last["loss"] < first["loss"] else "did not fall"
    return (
        f"The loss {moved}: {first['loss']:.4g} at step {first['step']}, {last['loss']:.4g} at "
        f"step {last['step']} ({len(steps)} logged steps, `{log_file}`)."
    )
