"""Static diagnostic plots (PNG) with matplotlib: what a person looks at to trust a benchmark.

- :func:`plot_samples_by_run`: every sample in execution order with run boundaries and warm-up
  shaded (Kalibera et al. 2005, fig. 1: the clusters of each run, and how runs differ).
- :func:`plot_lag`: lag plot of one run beside the same samples randomly reordered (Kalibera et al. 2005,
  figs. 4 and 5: structure on the left that vanishes on the right is auto-dependence).
- :func:`plot_distributions`: violin and box per version (Larres et al. 2013, fig. 4).

matplotlib is imported lazily with the non-interactive Agg backend, so plotting works on a
server without a display.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def _save(fig, path: Path) -> None:
    """Lay ``fig`` out tightly and save it; a character the font lacks (an emoji in a benchmark's name) is left out of
    the picture without a warning: matplotlib's says nothing the user can act on."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from", category=UserWarning)
        fig.tight_layout()  # lays the text out: it warns too
        fig.savefig(path)


def _pyplot():
    from ..extras import require

    matplotlib = require("matplotlib", what="plots (regbench diagnose without --no-plots)")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def plot_samples_by_run(raw_runs: Sequence[np.ndarray], warmups: Sequence[int], path: Path, *,
                        title: str, unit: str, detected: Sequence[int] | None = None) -> Path:
    """Samples in execution order, one run after the other, run boundaries as vertical lines."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(11, 4.2), dpi=110)
    start = 0
    for j, (r, w) in enumerate(zip(raw_runs, warmups, strict=True)):
        x = np.arange(start, start + r.size)
        if w:
            ax.scatter(x[:w], r[:w], s=6, color="0.65", label="warm-up (discarded)" if j == 0 else None)
        ax.scatter(x[w:], r[w:], s=6, color=f"C{j % 10}")
        if detected is not None and detected[j] > w:
            ax.axvline(start + detected[j], color="red", lw=0.8, ls=":",
                       label="detected steady state" if j == 0 else None)
        if j:
            ax.axvline(start - 0.5, color="black", lw=0.6)
        start += r.size
    ax.set_xlabel("sample (runs in order, separated by vertical lines)")
    ax.set_ylabel(unit)
    ax.set_title(title)
    if any(warmups) or detected is not None:
        ax.legend(loc="upper right", fontsize=8)
    _save(fig, path)
    plt.close(fig)
    return path


def plot_lag(sample: np.ndarray, path: Path, *, title: str, unit: str, rng=0, lag: int = 1) -> Path:
    """Lag plot of a run next to a random reordering of the same samples."""
    plt = _pyplot()
    shuffled = np.random.default_rng(rng).permutation(sample)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), dpi=110, sharex=True, sharey=True)
    for ax, data, label in ((axes[0], sample, "in measured order"), (axes[1], shuffled, "randomly reordered")):
        ax.scatter(data[:-lag], data[lag:], s=5, alpha=0.6)
        ax.set_title(f"{label}")
        ax.set_xlabel(f"x[t] ({unit})")
    axes[0].set_ylabel(f"x[t+{lag}] ({unit})")
    fig.suptitle(title)
    _save(fig, path)
    plt.close(fig)
    return path


def plot_distributions(samples_by_version: Sequence[tuple[str, np.ndarray]], path: Path, *, title: str,
                       unit: str, highlight: str | None = None) -> Path:
    """Violin (with a box) of the measured samples of each version, in history order."""
    plt = _pyplot()
    names = [n for n, _ in samples_by_version]
    data = [d for _, d in samples_by_version]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * len(names) + 2), 4.6), dpi=110)
    parts = ax.violinplot(data, showextrema=False)
    for k, body in enumerate(parts["bodies"]):
        body.set_alpha(0.5)
        if names[k] == highlight:
            body.set_facecolor("C3")
    ax.boxplot(data, widths=0.15, showfliers=False)
    ax.set_xticks(np.arange(1, len(names) + 1), [n[:12] for n in names], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(unit)
    ax.set_title(title)
    _save(fig, path)
    plt.close(fig)
    return path
