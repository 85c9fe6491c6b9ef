"""Screening suites (seed 002 s.4.6-4.7): every combination of the important options, the other
options at random levels, and how well such a suite stands for the whole space.

A suite of the ``t`` important options has ``prod(levels)`` configurations (4 for two binary
options); benchmarking it per version is what replaces benchmarking the whole space.  Seed 002
validated its suites by a Q-Q plot and a Mann-Whitney test against the full set (s.4.6), and
showed that random samples of the same size often look quite different (s.4.7).
:func:`validate_suite` does both: the Mann-Whitney test of the suite against the full set, the
Q-Q points, and the same for many random samples of configurations of the suite's size, with
the Kolmogorov-Smirnov distance of each sample's distribution to the full set's as the measure
of "looks different" (the suite's distance is ranked among the samples').
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..errors import ConfigError
from .base import Design, DesignMatrix, register


@register
class Suite(Design):
    """All combinations of the ``important`` options' levels; every other option at a random
    level, redrawn until ``valid`` accepts the configuration.

    Parameters
    ----------
    important : sequence of int
        Indices of the important options.
    rng : int or numpy.random.Generator, optional
        Draws the other options' levels (a fixed seed gives the same suite every time).
    valid : callable, optional
        ``valid(levels)`` (one level index per option) is False for a configuration that breaks a
        constraint.
    """

    name = "suite"

    def __init__(self, *, important: Sequence[int], rng: int | np.random.Generator | None = 0,
                 valid: Callable[[np.ndarray], bool] | None = None):
        if not important or len(set(important)) != len(important):
            raise ConfigError("a screening suite needs distinct important options (--important NAME)")
        self.important = tuple(int(i) for i in important)
        self.rng = rng
        self.valid = valid

    def build(self, level_counts: Sequence[int]) -> DesignMatrix:
        from pyDOE3 import fullfact

        k = len(level_counts)
        if any(not 0 <= i < k for i in self.important):
            raise ConfigError(f"important option index out of range (0..{k - 1})")
        rng = np.random.default_rng(self.rng)
        combos = np.asarray(fullfact([level_counts[i] for i in self.important]), dtype=np.int64)
        others = [i for i in range(k) if i not in self.important]
        rows = []
        excluded = []
        for combo in combos:
            row = self._draw(combo, others, level_counts, rng)
            if row is None:
                excluded.append(combo.tolist())
            else:
                rows.append(row)
        if not rows:
            raise ConfigError("no combination of the important options has a configuration the constraints allow")
        note = (f"all {len(rows)} combinations of {len(self.important)} important options, the others at random"
                + (f"; {len(excluded)} combination(s) that no configuration allowed by the constraints has "
                   f"were left out: {', '.join(map(str, excluded))}" if excluded else ""))
        return DesignMatrix(design=self.name, levels=np.array(rows).reshape(-1, k), level_counts=tuple(level_counts),
                            note=note)

    def _draw(self, combo: np.ndarray, others: list[int], level_counts: Sequence[int],
              rng: np.random.Generator) -> np.ndarray | None:
        """A valid configuration with the important options at ``combo`` and the others at random
        levels; None when no configuration with ``combo`` is valid (a constraint among the
        important options alone, such as ``not (a == 1 and b == 0)``, forbids it)."""
        k = len(level_counts)
        row = np.empty(k, dtype=np.int64)
        row[list(self.important)] = combo
        for _ in range(1_000):
            row[others] = [rng.integers(level_counts[i]) for i in others]
            if self.valid is None or self.valid(row):
                return row
        # Rare valid configurations, or none: look at every level of the others when that is
        # affordable, and draw among the valid ones.
        n_others = int(np.prod([level_counts[i] for i in others])) if others else 1
        if n_others > 100_000:
            raise ConfigError(f"no valid configuration with the important options at {combo.tolist()} in 1000 "
                              f"random draws of the others, and too many ({n_others}) to try them all")
        from pyDOE3 import fullfact

        valid = []
        for rest in np.asarray(fullfact([level_counts[i] for i in others]), dtype=np.int64).reshape(-1, len(others)):
            row[others] = rest
            if self.valid is None or self.valid(row):
                valid.append(row.copy())
        return valid[int(rng.integers(len(valid)))] if valid else None


@dataclass(frozen=True)
class SuiteValidation:
    """How a suite's values compare with the full set's (seed 002 s.4.6-4.7).

    Attributes
    ----------
    mann_whitney_p : float
        Two-sided Mann-Whitney test of the suite's values against the full set's.
    ks_distance : float
        Kolmogorov-Smirnov distance between the two empirical distributions.
    qq_suite, qq_full : numpy.ndarray
        Q-Q points: the same quantiles of the suite and of the full set.
    random_ks : numpy.ndarray
        The KS distance of each random sample of configurations of the suite's size.
    random_rejected : float
        Share of the random samples that the Mann-Whitney test rejects at ``alpha``.
    suite_rank : float
        Share of the random samples at least as far from the full set as the suite (near 1:
        the suite is closer than most samples).
    """

    mann_whitney_p: float
    ks_distance: float
    qq_suite: np.ndarray = field(repr=False)
    qq_full: np.ndarray = field(repr=False)
    random_ks: np.ndarray = field(repr=False)
    random_rejected: float
    suite_rank: float
    alpha: float
    samples: int


def validate_suite(suite: Sequence[float] | np.ndarray, full: Sequence[float] | np.ndarray, *,
                   samples: int = 1000, alpha: float = 0.05,
                   rng: int | np.random.Generator | None = None) -> SuiteValidation:
    """Compare a suite's values (one per configuration: its mean) with the whole space's.

    ``samples`` random subsets of ``full`` of the suite's size (without replacement) are compared
    the same way.  Mann-Whitney and KS come from :mod:`scipy.stats`.
    """
    s = np.asarray(suite, dtype=float)
    f = np.asarray(full, dtype=float)
    if s.size < 2 or f.size < s.size or not (np.all(np.isfinite(s)) and np.all(np.isfinite(f))):
        raise ConfigError("`suite` needs at least two finite values and `full` at least as many")
    if not 0 < alpha < 1:
        raise ConfigError("`alpha` must be in (0, 1)")
    rng = np.random.default_rng(rng)
    p = float(stats.mannwhitneyu(s, f, alternative="two-sided").pvalue)
    ks = float(stats.ks_2samp(s, f).statistic)
    probs = (np.arange(1, s.size + 1) - 0.5) / s.size
    random_ks = np.empty(samples)
    rejected = 0
    for i in range(samples):
        sample = f[rng.choice(f.size, size=s.size, replace=False)]
        random_ks[i] = stats.ks_2samp(sample, f).statistic
        rejected += stats.mannwhitneyu(sample, f, alternative="two-sided").pvalue < alpha
    return SuiteValidation(mann_whitney_p=p, ks_distance=ks, qq_suite=np.quantile(s, probs),
                           qq_full=np.quantile(f, probs), random_ks=random_ks,
                           random_rejected=rejected / samples if samples else float("nan"),
                           suite_rank=float(np.mean(random_ks >= ks)) if samples else float("nan"),
                           alpha=alpha, samples=samples)
