"""The modes of a benchmark for ``auto`` (:class:`~regbench.detect.auto.Auto`): where they lie and
how a change found in one of them joins the others.

A benchmark whose samples fall in several modes (cache hit or miss, a fast or a slow path) is
searched mode by mode (seed 001 s.4.2): :func:`mode_bounds` finds the boundaries between the
modes by clustering (seed 000 s.4.1), :func:`merge_near` reports a change seen in the location and
in a mode once, :func:`place_in_gap` and :func:`previous_in` place a change found in a mode's
history, which skips the versions where too few runs held the mode.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..model import Series
from ..stats.levels import (
    MODE_MIN_SAMPLES, mode_samples
)
from ..stats.runs import (
    MIN_SAMPLES_FOR_QUANTILES, VersionStats,
    bimodality_coefficient
)
from ..stats.moderuns import ModeRuns
from .base import Change
from .search import REFINE_REACH


#: A version a mode's history skipped places a change found in that mode (``place_in_gap``) only
#: when the step is at least this many standard errors of its median in the mode.
GAP_STEP_SE = 4.0

#: Samples a screened version of :func:`mode_bounds` needs for its bimodality coefficient.
MODE_SCREEN_SAMPLES = 20

#: Samples :func:`mode_bounds` pools from consecutive versions that each have fewer than
#: :data:`MODE_SCREEN_SAMPLES`: on a clean mixture of two levels 25% apart (35% slow, 0.6% noise),
#: the clustering counted two modes in 79 of 100 pools of 20 samples, 95 of 40 and 100 of 60.
MODE_POOL_SAMPLES = 60


def short_runs(series: Series) -> bool:
    """Whether some run is too short to choose a location from (fewer than
    :data:`~regbench.stats.runs.MIN_SAMPLES_FOR_QUANTILES` samples) while some version has
    several runs, so that its fastest run is a selection (:meth:`Auto.floors`).  With one run a
    version, however long, the fastest run is the run itself and there is nothing to check."""
    sizes = [r.size for v in series.runs for r in v if r.size]
    return bool(sizes) and min(sizes) < MIN_SAMPLES_FOR_QUANTILES and any(len(v) >= 2 for v in series.runs)


def mode_bounds(series: Series, *, fence: float = 10.0, rng=0, max_samples: int = 4000,
                n_versions: int = 8) -> np.ndarray | None:
    """Boundaries between the modes of a multimodal series, or None when it has one mode.

    Up to ``n_versions`` versions spread over the history are screened, each on its own (a
    seeded subsample of at most ``max_samples`` of its samples, far outliers dropped as in
    :func:`regbench.stats.runs.robust_run_means`), by a cheap statistic, the bimodality coefficient; when most of them
    look multimodal, the clustering of seed 000 s.4.1 / seed 001 s.4.2
    (:func:`regbench.stats.find_clusters`) runs on the most clearly multimodal one.  Modes holding under 5% of the samples are ignored.  The boundaries are
    ``[-inf, b_1, ..., inf]``, each ``b`` halfway between neighbouring modes.
    """
    from ..stats import find_clusters

    have = [k for k, r in enumerate(series.runs) if r]
    if len(have) < 2:
        return None
    picks = sorted({have[int(i)] for i in np.linspace(0, len(have) - 1, min(n_versions, len(have)))})
    gen = np.random.default_rng(rng)
    pools, coefficients = [], []
    for k in picks:  # one version at a time: pooling versions across a step would make two modes
        pool = np.concatenate(series.runs[k])
        # ... unless a version has too few samples to screen because its runs are short (one to
        # three samples, as a process timed once gives): then it and the next versions, until
        # the clustering has enough to count modes right.  A window that a step crosses can look
        # bimodal, but most windows must (the median below).  Not when the runs are long enough
        # to show modes of their own (a history of one run of ten samples a version): there each
        # version's samples sit at that version's level, and pooled versions made "modes" of the
        # version-to-version spread (false changes in 3 of 40 quiet histories of one run a version).
        j = have.index(k)
        small = pool.size < MODE_SCREEN_SAMPLES and max(r.size for r in series.runs[k]) < 2 * MODE_MIN_SAMPLES
        while small and pool.size < MODE_POOL_SAMPLES and j + 1 < len(have):
            j += 1
            pool = np.concatenate([pool, *series.runs[have[j]]])
        if pool.size > max_samples:
            pool = gen.choice(pool, max_samples, replace=False)
        if pool.size and pool.min() > 0:
            q10, q90 = np.quantile(pool, [0.1, 0.9])
            pool = pool[(pool >= q10 / fence) & (pool <= q90 * fence)]
        pools.append(pool)
        coefficients.append(bimodality_coefficient(pool) if pool.size >= MODE_SCREEN_SAMPLES else 0.0)
    if np.median(coefficients) <= 5 / 9:
        return None
    pool = pools[int(np.argmax(coefficients))]
    cl = find_clusters(pool, rng=gen)
    big = [j for j in range(cl.n_clusters) if cl.weights[j] >= 0.05]
    if len(big) < 2:
        return None
    cuts = []
    for a, b in zip(big[:-1], big[1:], strict=True):
        hi_a = pool[cl.labels == a].max()
        lo_b = pool[cl.labels == b].min()
        cuts.append(float(np.sqrt(hi_a * lo_b)) if cl.log_scale and hi_a > 0 else (hi_a + lo_b) / 2)
    return np.array([-np.inf, *cuts, np.inf])


def modes_mix(held_runs: ModeRuns) -> bool:
    """Whether some version holds runs in two modes or more (the benchmark's runs land in modes
    by chance, which is what :meth:`.search.SegmentSearch._held` guards against)."""
    return bool(((held_runs.counts > 0).sum(axis=1) >= 2).any())


def merge_near(series: Series, changes: list[Change], found: list[Change], located: set[int]) -> list[Change]:
    """``changes`` with a mode's ``found`` changes added, each change reported once.

    Changes within :data:`REFINE_REACH` versions of each other are one change seen twice (the
    search places a split only that precisely, :meth:`.search.SegmentSearch._refine`), seen through a mode, or the
    level step moving samples across a mode boundary: the one with the smallest p-value stands
    for them, except that a change going against the location's own (``located``: the ids of the
    location search's changes) never does.
    """
    out = list(changes)
    for c in found:
        k = series.index(c.version)
        # Two splits of one search that close are one change placed twice when they go the same
        # way, and the two edges of a short revert when they go opposite ways (both are kept).  A
        # change of another search stands for a near change that goes the same way when there is
        # one (a revert seen by two searches is two pairs of the same edges), else for any near
        # change (a level step moving samples across a mode boundary can go either way).
        near = [x for x in out if abs(series.index(x.version) - k) <= REFINE_REACH
                and (x in changes or np.sign(x.change) == np.sign(c.change))]
        same = [x for x in near if np.sign(x.change) == np.sign(c.change)]
        near = same or near
        p = c.p_value if c.p_value is not None else 1.0
        # A change that goes against a near change of the benchmark's location is that step seen
        # through a fixed mode boundary, never a change of its own, however small its p-value: a
        # step of +10% moved the samples of a mode into the next mode's range, whose mean fell by
        # 10.7% at the step's version, and that "improvement" stood for the regression (the probe
        # shape `bimodal-close`, seed 5; docs/evaluation.md).
        if near and not same and any(id(x) in located for x in near):
            continue
        if near and not all(p < (x.p_value if x.p_value is not None else 1.0) for x in near):
            continue
        out = [x for x in out if x not in near] + [c]
    return out


def place_in_gap(series: Series, per_mode: VersionStats, found: list[Change], lo: float, hi: float, *,
                  fence: float, log: bool) -> list[Change]:
    """``found``, changes of one mode's search, each moved to where the versions its mode's history
    skipped place it.

    A mode's history holds only the versions where two runs or more drew enough of its samples
    (:func:`~regbench.stats.levels.mode_stats`); with few runs and a rare mode it has holes, and
    its search can only place a change at the first version after a hole, though the change may
    lie anywhere in it (on the `few-runs` shape, 3 runs a version, changes were placed up to four
    versions late: each a false alarm and a miss).  The skipped versions' lone samples in the mode
    (:func:`~regbench.stats.levels.mode_samples`) each say on which side of the change they lie,
    being nearer the level before or the level after it, when the step is at least four standard
    errors of their median (so that one lies on the wrong side of the midpoint about 2% of the
    time under normal noise); the change is placed where the fewest of them disagree, and it stays
    where the search put it when they cannot tell (no such version, or a tie).  Written here: it
    places a change within a hole of this search's own history, which no change-point library
    models.
    """
    out = []
    values: np.ndarray | None = None
    count: np.ndarray = np.zeros(0, dtype=int)
    scale = float("nan")
    idx = per_mode.index
    for c in found:
        k = series.index(c.version)
        before, after = np.flatnonzero(idx < k), np.flatnonzero(idx >= k)
        if before.size == 0 or after.size == 0 or k - int(idx[before[-1]]) <= 1:
            out.append(c)
            continue
        p = int(idx[before[-1]])
        left, right = float(np.median(per_mode.mean[before[-3:]])), float(np.median(per_mode.mean[after[:3]]))
        if values is None:
            values, count, scale = mode_samples(series.runs, lo, hi, fence=fence, log=log)
        # The standard error of a median of n samples is about 1.2533 sd / sqrt(n) (normal noise).
        gap = [v for v in range(p + 1, k) if np.isfinite(values[v])
               and abs(right - left) >= GAP_STEP_SE * 1.2533 * scale / np.sqrt(count[v])]
        nearer_after = {v: abs(values[v] - right) < abs(values[v] - left) for v in gap}
        best, cost = k, sum(nearer_after[v] for v in gap)
        for t in range(k - 1, p, -1):  # from the latest: a tie keeps the later place
            here = sum(nearer_after[v] for v in gap if v < t) + sum(not nearer_after[v] for v in gap if v >= t)
            if here < cost:
                best, cost = t, here
        out.append(c if best == k else dataclasses.replace(c, version=series.versions[best].name,
                                                           previous=series.versions[best - 1].name))
    return out


def previous_in(series: Series, vs: VersionStats, c: Change) -> Change:
    """``c``, a change found in one mode, with ``previous`` the version before it in the whole
    history ``vs``.  A mode's own history skips the versions where too few runs held it (a level
    step can move a version's samples out of the mode), so the mode's last version before the
    change can lie several versions back; the change stays where the mode's search placed it,
    and a report "since" a version further back would overlap the steps in between."""
    k = series.index(c.version)
    before = [int(i) for i in vs.index if int(i) < k]
    return dataclasses.replace(c, previous=series.versions[before[-1]].name) if before else c

