"""A location change of a benchmark whose runs each stay in one mode, held to its modes.

Where every run of a benchmark lands in one of a few modes and stays there (seed 000 s.2's random
initial conditions: memory layout, core placement; seed 001 s.4.2's complex benchmarks), each
run's location is one of a few levels, and the benchmark's location moves whenever the share of
runs in each mode does.  With three runs a version, that share is binomial noise, skewed towards
the rarer (slower) mode, and a t test of the locations understates its tail: most false alarms
left on the probe shapes of such benchmarks were changes of the location that nothing else saw
(docs/evaluation.md, "Runs that stay in one mode: a location change held to its modes").

A real change of such a benchmark shows in at least one of three ways, each tested here between
the versions on either side of the split:

1. **the shares of runs in the modes** changed beyond binomial noise: Fisher's exact test of each
   mode's runs against the others' (a 2 x 2 table; Bonferroni over the modes), whose null
   distribution is the binomial (hypergeometric) one the t test approximates;
2. **a mode's level** moved: the two-level test of the runs' means in that mode
   (:func:`regbench.stats.segments.segment_test`, as the location's own test; Bonferroni over
   the modes);
3. **the versions' fastest runs** moved: a change large enough to carry runs across the fixed
   mode boundaries moves no mode's level and may not move the shares, but it moves the floor
   (for times, where interference only adds time).

The two sides are the :data:`WINDOW` versions next to the split (within the segments the search
compared), so that another change further away, which a mode's own search reports, does not
count for this one.  Why by hand: no library tests a location change against a mixture's shares
and levels; the tests themselves are scipy's (Fisher) and the location's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .levels import mode_stats, version_mode_counts
from .runs import VersionStats
from .segments import segment_test

#: Versions on each side of a split compared (the same reach as the running floor's window and
#: the short excursions, :data:`regbench.detect.search.REFINE_REACH` aside): 15 runs a side at
#: three runs a version.
WINDOW = 5
#: The level of each of the three tests; a change is held when any of them sees it.
ALPHA = 0.01


@dataclass(frozen=True)
class ModeRuns:
    """Per version of a stretch of history: how many runs lie in each mode, each mode's run
    summaries, and the fastest run.

    Attributes
    ----------
    counts : numpy.ndarray of int
        ``counts[k, j]``: runs of version ``k`` with at least
        :data:`~regbench.stats.levels.WHOLE_RUN_SHARE` of their samples in mode ``j`` (a run
        spread over modes counts for none; :func:`~regbench.stats.levels.version_mode_counts`).
    modes : tuple of VersionStats
        Per mode, the summaries of each run's mean in it (:func:`mode_stats`), indexed by the
        versions' positions in this stretch.
    fastest : VersionStats or None
        Each version's fastest run (log scale), indexed the same way; None where the benchmark
        has no floor (not times, or interference does not only add time).
    """

    counts: np.ndarray
    modes: tuple[VersionStats, ...]
    fastest: VersionStats | None

    @property
    def size(self) -> int:
        return int(self.counts.shape[0])

    @classmethod
    def of(cls, runs: Sequence[Sequence[np.ndarray]], bounds: np.ndarray, *, fence: float, log: bool,
           fastest: VersionStats | None, fence_history: tuple[float, float] | None = None) -> ModeRuns:
        """The mode runs of every version of ``runs`` (``fastest`` indexed by the same positions).

        No run is left out as outlying (``outlying_z`` of :func:`mode_stats`): that needs the
        spread of a whole history's runs, which an incremental pass, one new version at a time,
        does not have, and the two passes must hold a change to the same modes."""
        per_mode = mode_stats(runs, bounds, fence=fence, log=log, fence_history=fence_history)
        return cls(version_mode_counts(runs, bounds), tuple(per_mode), fastest)

    def take(self, positions: np.ndarray) -> ModeRuns:
        """The versions at ``positions`` (increasing) of this stretch, re-indexed from 0."""
        positions = np.asarray(positions, dtype=int)
        return ModeRuns(self.counts[positions], tuple(_take(m, positions) for m in self.modes),
                        None if self.fastest is None else _take(self.fastest, positions))

    def window(self, start: int, stop: int) -> ModeRuns:
        """Versions ``[start, stop)`` of this stretch, re-indexed from 0."""
        return self.take(np.arange(max(0, start), min(self.size, stop)))

    def __add__(self, other: ModeRuns) -> ModeRuns:
        """This stretch followed by ``other``."""
        fastest = None if self.fastest is None or other.fastest is None else _join(self.fastest, other.fastest,
                                                                                    self.size)
        return ModeRuns(np.concatenate([self.counts, other.counts]),
                        tuple(_join(a, b, self.size) for a, b in zip(self.modes, other.modes, strict=True)), fastest)

    def to_state(self) -> dict:
        """A JSON-safe form (NaN as None), for an incremental pass's saved state."""
        return {"counts": self.counts.tolist(), "modes": [_vs_state(m) for m in self.modes],
                "fastest": None if self.fastest is None else _vs_state(self.fastest)}

    @classmethod
    def from_state(cls, state: dict) -> ModeRuns:
        counts = np.asarray(state["counts"], dtype=int).reshape(len(state["counts"]), len(state["modes"]))
        fastest = state.get("fastest")
        return cls(counts, tuple(_vs_from(m) for m in state["modes"]), None if fastest is None else _vs_from(fastest))


def mode_change_p(before: ModeRuns, after: ModeRuns, *, version_var: tuple[float, float] | None = None
                  ) -> tuple[float, float, float]:
    """The p-values of the three ways a change shows (module docstring) between two stretches:
    the shares of runs in the modes, the modes' levels (each Bonferroni-adjusted over the tables
    or modes tested) and the versions' fastest runs; NaN where a test has nothing to compare.

    ``version_var`` is the history's version-to-version component ``(s2v, df)`` of the location
    (:func:`~regbench.stats.segments.version_variance`): a mode's level is tested with it, since
    a rare mode has a value at only a few versions of a window, too few to estimate it, and
    builds that differ a little move every mode alike.  The fastest runs (one value a version)
    estimate their own from the two windows when these have 3 degrees of freedom between
    versions, and take the history's otherwise."""
    left, right = before.counts.sum(axis=0), after.counts.sum(axis=0)
    shares = []
    if left.sum() and right.sum():
        from scipy.stats import fisher_exact  # only where a benchmark's runs stay in one mode
        # Each mode's runs against the others'; with two modes the two tables are one.
        for j in range(1 if left.size == 2 else left.size):
            table = np.array([[left[j], left.sum() - left[j]], [right[j], right.sum() - right[j]]])
            shares.append(float(fisher_exact(table).pvalue))
    levels = [_split_p(a, b, before.size, version_var) for a, b in zip(before.modes, after.modes, strict=True)]
    levels = [p for p in levels if np.isfinite(p)]
    floor = float("nan")
    if before.fastest is not None and after.fastest is not None:
        a, b = before.fastest, after.fastest
        floor = _split_p(a, b, before.size, None if a.mean.size + b.mean.size - 2 >= 3 else version_var)
    return (_bonferroni(shares), _bonferroni(levels), floor)


def held(before: ModeRuns, after: ModeRuns, *, alpha: float = ALPHA,
         version_var: tuple[float, float] | None = None) -> bool:
    """Whether a location change between two stretches shows in the benchmark's modes: in the
    shares of runs per mode, in a mode's level or in the fastest runs, any at ``alpha``
    (:func:`mode_change_p`).  A change that none of the three can be asked about (nothing to
    compare on one side) is held: the check removes only what it can refute."""
    ps = np.array(mode_change_p(before, after, version_var=version_var))
    return bool(np.all(np.isnan(ps)) or np.nanmin(ps) < alpha)


def _bonferroni(ps: list[float]) -> float:
    return min(1.0, min(ps) * len(ps)) if ps else float("nan")


def _split_p(a: VersionStats, b: VersionStats, offset: int, version_var: tuple[float, float] | None) -> float:
    """The two-level test of ``a``'s versions against ``b``'s (``b`` following ``offset`` versions)."""
    if a.mean.size == 0 or b.mean.size == 0:
        return float("nan")
    both = _join(a, b, offset)
    return float(segment_test(both, 0, a.mean.size, both.mean.size, version_var=version_var).p_value)


def _take(vs: VersionStats, positions: np.ndarray) -> VersionStats:
    at = np.searchsorted(positions, vs.index)
    keep = np.isin(vs.index, positions)
    return VersionStats(at[keep], vs.mean[keep], vs.var[keep], vs.n[keep], vs.log, vs.run_scale)


def _join(a: VersionStats, b: VersionStats, offset: int) -> VersionStats:
    return VersionStats(np.concatenate([a.index, b.index + offset]), np.concatenate([a.mean, b.mean]),
                        np.concatenate([a.var, b.var]), np.concatenate([a.n, b.n]), a.log, a.run_scale)


def _vs_state(vs: VersionStats) -> dict:
    def listed(x: np.ndarray) -> list:
        return [None if not np.isfinite(v) else float(v) for v in x]
    return {"index": vs.index.tolist(), "mean": listed(vs.mean), "var": listed(vs.var), "n": vs.n.tolist(),
            "log": bool(vs.log)}


def _vs_from(state: dict) -> VersionStats:
    def arr(x: list) -> np.ndarray:
        return np.array([np.nan if v is None else v for v in x], dtype=float)
    return VersionStats(np.asarray(state["index"], dtype=int), arr(state["mean"]), arr(state["var"]),
                        np.asarray(state["n"], dtype=int), bool(state["log"]))
