"""Excursions of versions timed by one run each, weighed against the history's other ones.

A CI job that times each commit once gives a history of one run per version.  A commit whose one
run was slowed by interference (another job on the runner, a page-cache flush) is then a step up
and back down at the next commit: the search of ``auto`` finds it as a short excursion, a
regression undone a version later (seed 003 s.5.2-5.3), exactly as it finds a real one-commit
regression reverted at the next commit.  With one run a version nothing *within* the version tells
the two apart: there is no second run to disagree.  The history does: interference strikes again
and again, a real regression reverted in the next commit is rare.  A probe timed 500 flat commits
once each, 5% of them slowed by 20-60%: ``auto`` reported 40-64 changes in each, every spike a
regression and its "revert".

So the excursions that rest on one run a version are weighed against the others of the same
direction in the same history (:func:`explained`).  Take the versions' one-run slowdowns (or
speed-ups) as independent, at a rate ``p`` estimated from the *other* such excursions the search
found (leave one out: the history's only excursion is judged by the search's test alone, as
before).  The number of stretches of ``w`` or more such versions in a row among ``n`` versions is
then about Poisson with mean ``n p^w`` (the approximation of runs of successes, Feller 1968,
s.XIII.7), so spikes at that rate make one at least as wide somewhere in the history with
probability ``1 - exp(-n p^w)``.  An excursion is reported only where that is below the search's
``alpha``: a one-version excursion in a history holding another one of its direction is not
(under the spike model the two are exchangeable, and neither is more of a change than the
other); a wide one is where the spikes are rare enough not to stack that deep.

A change at the newest versions that has not been reverted yet (a "lone end") is weighed the same
way, its width the versions since it: a real step in a history of spikes is reported once it has
held longer than the spikes do.  Excursions of versions with two runs or more are not weighed:
their runs' spread is what the search's test judges them by.

There is no library for this rule (it is specific to how ``auto`` reports excursions); the
arithmetic is three lines of numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Series
from .base import Change

#: Where :class:`~regbench.detect.auto.Auto`'s state keeps what :func:`weigh` found.
STATE_KEY = "lone_runs"


@dataclass(frozen=True)
class Excursion:
    """A short excursion of versions timed by one run each.

    ``up``: higher in the series searched (slower, but in a throughput searched as it is);
    ``width``: its versions with data;
    ``changes``: its two edges, or the one change of a lone end (``open``)."""

    up: bool
    width: int
    changes: tuple[Change, ...]
    open: bool = False


def runs_with_data(runs: Sequence[np.ndarray]) -> int:
    """How many of a version's runs have samples, counted at C speed: every series' full pass
    asks (a generator of ``np.size`` calls took 10 ms of a 500-version, 10-run series)."""
    return sum(map(bool, map(len, runs)))


def single_run(series: Series) -> tuple[list[int], np.ndarray]:
    """The history positions of the versions with data, and whether each has one run exactly."""
    with_data, single = [], []
    for k, runs in enumerate(series.runs):
        n = runs_with_data(runs)
        if n:
            with_data.append(k)
            single.append(n == 1)
    return with_data, np.asarray(single, dtype=bool)


def levels(series: Series, with_data: Sequence[int]) -> np.ndarray | None:
    """Each version's level on the log scale, the median of its runs' medians, for the versions
    ``with_data``; None where one is not above 0 (a history this module leaves as it is)."""
    level = np.array([np.median([np.median(np.asarray(r, dtype=float)) for r in series.runs[k] if np.size(r)])
                      for k in with_data])
    if not np.all(np.isfinite(level)) or np.any(level <= 0):
        return None
    return np.log(level)


#: Versions a side whose median is the level an excursion left and came back to (:func:`excursions`).
LEVEL_SIDE = 5


def excursions(series: Series, changes: Sequence[Change], width: int, *, min_change: float = 0.03,
               confidence: float = 0.99) -> list[Excursion]:
    """The excursions among ``changes`` (history order, of ``series`` as searched) that rest on
    versions of one run each: a change at version ``a`` undone by the next change at ``a + w``
    (``1 <= w <= width`` versions with data), or a change at the ``w <= width`` newest versions
    that has not been undone, or the first change after the ``w <= width`` oldest ones; every
    version of the stretch timed by one run.

    Also one edge of an excursion whose other edge the search did not report (its test is of
    segments, and the versions next to a spike can sit a little off the level): a change into a
    stretch of at most ``width`` one-run versions after which the history came back, or a change
    out of one (:func:`returned`: the level after it is not a step from the level before it, at
    the detector's ``confidence`` level or by its ``min_change``)."""
    with_data, single = single_run(series)
    if not single.any():
        return []
    rank = {series.versions[k].name: i for i, k in enumerate(with_data)}
    n = len(with_data)
    x = levels(series, with_data)
    # The noise of one version's level, for the noise of the levels an excursion left and came
    # back to (the scale of the search's version component: Qn of successive differences).
    from scipy.special import ndtri

    from ..stats.segments import difference_scale

    sigma = difference_scale(np.diff(x)) / np.sqrt(2.0) if x is not None and x.size > 2 else np.nan
    q = float(ndtri(0.5 + confidence / 2))

    def lone(a: int, b: int) -> bool:
        return 0 < a < b <= n and bool(single[a:b].all())

    ordered = [c for c in changes if c.until is None and c.version in rank and c.previous in rank]

    def adjacent(c: Change) -> bool:
        return rank[c.previous] == rank[c.version] - 1

    # The versions of the excursions whose both edges the search reported: not the level on either
    # side of another one (with spikes at 10% of the versions, two of the five versions after a
    # spike were another spike, and the level "after" it was theirs).
    paired = np.zeros(n, dtype=bool)
    for c, d in zip(ordered, ordered[1:]):
        a, b = rank[c.version], rank[d.version]
        if (c.change > 0) != (d.change > 0) and adjacent(c) and adjacent(d) and 1 <= b - a <= width and lone(a, b):
            paired[a:b] = True

    def returned(a: int, b: int) -> tuple[bool, float] | None:
        """Whether the one-run versions ``[a, b)`` stood apart from the versions on both sides
        and the history came back after them: the median of up to :data:`LEVEL_SIDE` versions a
        side (which another spike among them does not move), every version of the stretch beyond
        both on one side, and the two not a step apart (not significantly, at the detector's
        confidence level, the median's standard error being ``sqrt(pi / 2)`` times the mean's; or
        less than the minimum relevant change) and nearer each other than half the stretch's least
        distance from them.  Both, because a real step next to a version that read a little off by
        noise looks like an excursion and its return otherwise (with one version a side and a
        return halfway, 3 of 20 10% steps among spikes were lost that way).  The versions a side
        are those outside the excursions both of whose edges the search reported.  ``(True,
        apart)`` for a slower stretch, ``(False, apart)`` for a faster one (``apart``: its least
        distance from the two levels, log scale), None when it is neither."""
        if x is None or not (lone(a, b) and b < n):
            return None
        sides = levels_around(a, b)
        if sides is None:
            return None
        before, after, no_step = sides
        inside = x[a:b]
        net = abs(after - before)
        for up, apart in ((True, inside.min() - max(before, after)), (False, min(before, after) - inside.max())):
            if apart > 0 and no_step and net < apart / 2:
                return up, float(apart)
        return None

    def levels_around(a: int, b: int) -> tuple[float, float, bool] | None:
        """The levels before ``a`` and from ``b`` on (the medians of up to :data:`LEVEL_SIDE`
        versions outside the paired excursions), and whether they are not a step apart."""
        assert x is not None
        left = x[:a][~paired[:a]][-LEVEL_SIDE:]
        right = x[b:][~paired[b:]][:LEVEL_SIDE]
        if not (left.size and right.size):
            return None
        before, after = float(np.median(left)), float(np.median(right))
        se = sigma * np.sqrt(np.pi / 2 * (1 / left.size + 1 / right.size))
        return before, after, abs(after - before) < max(np.log1p(min_change), q * se if np.isfinite(se) else 0.0)

    def stretch(at: int, up: bool, *, after: bool) -> tuple[int, float] | None:
        """The narrowest stretch of at most ``width`` versions starting at ``at`` (``after``) or
        ending before it that came back on the side ``up``, and how far apart it stood."""
        for w in range(1, width + 1):
            a = at if after else at - w
            got = returned(a, a + w) if a > 0 else None
            if got is not None and got[0] is up:
                return w, got[1]
        return None

    out: list[Excursion] = []
    alone: dict[int, Excursion | None] = {}  # each change read as one edge: its excursion, or None
    i = 0
    while i < len(ordered):
        c = ordered[i]
        a = rank[c.version]
        if rank[c.previous] != a - 1:
            i += 1
            continue
        up = c.change > 0
        nxt = ordered[i + 1] if i + 1 < len(ordered) else None
        if nxt is not None and (nxt.change > 0) != up and rank[nxt.previous] == rank[nxt.version] - 1:
            b = rank[nxt.version]
            if 1 <= b - a <= width and lone(a, b):
                out.append(Excursion(up, b - a, (c, nxt)))
                i += 2
                continue
        if nxt is None and 1 <= n - a <= width and lone(a, n):
            out.append(Excursion(up, n - a, (c,), open=True))
        elif i == 0 and 1 <= a <= width and bool(single[:a].all()):
            # The history's first versions, one run each, apart from what follows: an excursion
            # with no versions before it, weighed like one at the newest versions (a first commit
            # slowed by interference was a "step" at the second).  The changes of the same sign
            # right after it within ``width`` versions are its descent (two slowed commits, the
            # first more than the second, were two steps down).
            j = i + 1
            while (j < len(ordered) and (ordered[j].change > 0) == up and rank[ordered[j].version] <= width
                   and rank[ordered[j].previous] == rank[ordered[j].version] - 1
                   and bool(single[:rank[ordered[j].version]].all())):
                j += 1
            out.append(Excursion(not up, rank[ordered[j - 1].version], tuple(ordered[i:j])))
            i = j
            continue
        else:
            # One edge alone: the start of a stretch that came back, or the end of one that the
            # change left.  Where both fit, the one that stood further apart, which accounts for
            # the change (a spike's end next to a version that read a little low by noise is the
            # spike's end, not the start of a faster version; the start on a tie): a spike two
            # versions wide with a change into it, one within it and one out of it has its first
            # two paired above, and the third is the end of the one-version stretch before it,
            # not the start of a three-version one after it.
            into = stretch(a, up, after=True)
            out_of = stretch(a, not up, after=False)
            if into is not None and (out_of is None or into[1] >= out_of[1]):
                out.append(Excursion(up, into[0], (c,)))
                alone[i] = out[-1]
            elif out_of is not None:
                out.append(Excursion(not up, out_of[0], (c,)))
                alone[i] = out[-1]
            else:
                alone[i] = None
        i += 1
    # A change and its revert, too far apart to pair but within the versions `returned` judges
    # (``width`` + :data:`LEVEL_SIDE`), and after which the history came back to the level before
    # them (as `returned` judges it): both one edge of a short stretch (spikes at both ends of
    # the segment between them), or neither.  Where only one was, the other is a change the
    # spikes do not explain, and this one its revert (a rise and its revert 9 versions later,
    # over a cluster of spikes: the revert read as a short stretch's end left the rise reported
    # alone, a regression that the history shows undone).  A change after which the history
    # stayed at another level is no one's revert.
    for j in range(1, len(ordered)):
        c, d = ordered[j - 1], ordered[j]
        if not (j - 1 in alone and j in alone and (c.change > 0) != (d.change > 0)
                and rank[d.version] - rank[c.version] <= width + LEVEL_SIDE
                and (alone[j - 1] is None) != (alone[j] is None)) or x is None:
            continue
        sides = levels_around(rank[c.version], rank[d.version])
        if sides is not None and sides[2]:
            k = j - 1 if alone[j - 1] is not None else j
            out = [y for y in out if y is not alone[k]]
            alone[k] = None
    return out


def chance(n: int, rate: float, width: int) -> float:
    """The chance that independent one-version excursions at ``rate`` among ``n`` versions make a
    stretch of at least ``width`` of them in a row somewhere (Poisson approximation, module
    docstring)."""
    return float(-np.expm1(-n * rate ** width)) if rate > 0 else 0.0


def explained(found: Sequence[Excursion], n_single: int, alpha: float,
              prior: dict[bool, int] | None = None) -> list[Excursion]:
    """The excursions of ``found`` that one-run noise explains: where the history's other
    excursions of the same direction (and ``prior``, its one-run versions of that direction left
    out already, :func:`lone_versions`), as a rate over its ``n_single`` one-run versions, make
    one at least as wide with probability ``alpha`` or more."""
    out = []
    for x in found:
        others = sum(y.width for y in found if y is not x and y.up == x.up) + (prior or {}).get(x.up, 0)
        if n_single and chance(n_single, others / n_single, x.width) >= alpha:
            out.append(x)
    return out


def lone_versions(series: Series, *, z: float, alpha: float) -> tuple[list[int], dict[bool, int], int]:
    """The versions of one run each that stand alone, to leave out of the search where the history
    holds others like them on the same side; and their count per side (``True``: higher in ``series``) and the
    history's one-run versions.

    A version stands alone where its run's median is more than ``z`` robust standard deviations
    from the median of itself and its two neighbours (Tukey's running median of three, Tukey
    1977, ch. 7, as :func:`~regbench.stats.segments.isolated_versions` judges the fastest runs;
    the scale is the Qn of successive differences).  Such a version is the search's one-version
    excursion (:func:`explained` with width 1): one of ``k`` on its side is explained by the
    ``k - 1`` others whenever ``k >= 2``.  Left out *before* the search, not after it: a spike
    next to a real step made the search place the step's change and the spike's end as one
    excursion (a probe: a 10% step with spikes two versions after it was lost).
    """
    from ..stats.segments import MIN_VERSIONS_FOR_VERSION_VAR, difference_scale

    with_data, single = single_run(series)
    n_single = int(single.sum())
    if n_single < 2 or len(with_data) < MIN_VERSIONS_FOR_VERSION_VAR:
        return [], {}, n_single
    x = levels(series, with_data)
    if x is None:
        return [], {}, n_single
    local = np.empty_like(x)
    local[1:-1] = np.median(np.stack([x[:-2], x[1:-1], x[2:]]), axis=0)
    local[0], local[-1] = np.median(x[:3]), np.median(x[-3:])
    scale = difference_scale(np.diff(x)) / np.sqrt(2.0)
    if not (np.isfinite(scale) and scale > 0):
        return [], {}, n_single
    alone = single & (np.abs(x - local) > z * scale)
    out: list[int] = []
    counts: dict[bool, int] = {}
    for up in (True, False):
        side = np.flatnonzero(alone & ((x > local) if up else (x < local)))
        if side.size and chance(n_single, (side.size - 1) / n_single, 1) >= alpha:
            out += [with_data[i] for i in side]
            counts[up] = int(side.size)
    return sorted(out), counts, n_single


def without(series: Series, drop: Sequence[int]) -> Series:
    """``series`` without the versions at history positions ``drop``."""
    gone = set(drop)
    keep = [k for k in range(len(series)) if k not in gone]
    return Series(series.benchmark, series.config, series.machine, series.unit, series.direction,
                  [series.versions[k] for k in keep], [series.runs[k] for k in keep],
                  [series.failed[k] for k in keep], [series.warmup[k] for k in keep])


def weigh(series: Series, changes: list[Change], *, width: int, alpha: float, min_change: float = 0.03,
          confidence: float = 0.99, n_single: int | None = None, prior: dict[bool, int] | None = None) -> tuple[list[Change], dict | None]:
    """``changes`` without the excursions one-run noise explains (:func:`explained`), and what
    to save of them with ``prior`` (the one-run versions left out before the search, per side,
    :func:`lone_versions`; None when nothing was left out): per direction, the versions and
    excursions left out, the one-run versions (``n_single``: of the whole history, before
    ``series`` lost its lone versions), and how many versions a step there must hold to be
    reported; and ``open``, the version before a change at the newest versions left out.""" 
    prior = prior or {}
    if not changes and not any(prior.values()):
        return changes, None
    found = excursions(series, changes, width, min_change=min_change, confidence=confidence)
    if n_single is None:
        n_single = int(single_run(series)[1].sum())
    gone = explained(found, n_single, alpha, prior) if found else []
    if not gone and not any(prior.values()):
        return changes, None
    dropped = {id(c) for x in gone for c in x.changes}
    info: dict = {"versions": n_single}
    pending = [x for x in gone if x.open]
    if pending:
        # A step at the newest versions not held long enough yet: the next pass looks at it again
        # (``open``: the version before it, which the state's last version becomes).
        info["open"] = pending[0].changes[0].previous
    # Up in the series searched is slower where lower is better (times, and throughputs searched as
    # their reciprocal), faster where higher is (a throughput searched as it is: a sample below 0).
    worse_up = series.direction != "higher"
    for up in (True, False):
        side = "slower" if up == worse_up else "faster"
        mine = [x for x in found if x.up == up]
        alone = prior.get(up, 0)
        if not (mine or alone):
            continue
        rate = (sum(x.width for x in mine) + alone) / n_single
        # The width a step must hold to be reported (beyond `width` the search sees a step).
        hold = next((w for w in range(1, width + 1) if chance(n_single, rate, w) < alpha), width + 1)
        info[side] = {"alone": alone, "excursions": sum(1 for x in gone if x.up == up), "holds": hold}
    return [c for c in changes if id(c) not in dropped], info


def note(info: dict) -> str | None:
    """What a saved :data:`STATE_KEY` says, in words (why, and what to do, is :data:`ADVICE`);
    None when nothing was left out."""
    parts = []
    for side in ("slower", "faster"):
        got = info.get(side) or {}
        if got.get("alone") or got.get("excursions"):
            what = [f"{got['alone']} version(s) {side} than both neighbours"] if got.get("alone") else []
            what += [f"{got['excursions']} {side} excursion(s)"] if got.get("excursions") else []
            parts.append(" and ".join(what) + f" (a step must hold {got['holds']} versions)")
    if not parts:
        return None
    return f"{'; '.join(parts)}, among {info.get('versions', 0)} versions timed by one run each"


#: Why :func:`note`'s versions are not reported, and what to do: said once for every series noted.
ADVICE = ("one run cannot tell interference from a change undone at once, and each of these histories has several "
          "like them; time each version twice, or run two versions again with `regbench compare --run A B` "
          "(`detect --confirm` runs only the changes reported)")
