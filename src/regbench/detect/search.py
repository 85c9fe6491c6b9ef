"""The search of ``auto`` (:class:`~regbench.detect.auto.Auto`): where a history splits.

Binary segmentation over a history's per-version summaries (:class:`~regbench.stats.runs.VersionStats`):
each segment's candidate splits (the energy statistic's best split, seed 001 s.2.3, and the
segment's first and last version) are tested with the two-level test of adjacent segments
(:func:`~regbench.stats.segments.segment_test`, seed 000 s.3) at a Bonferroni-adjusted level; a
kept split is moved to where its statistic is largest, then the segments are scanned for short
excursions, a step undone a few versions later (seed 003 s.5.2-5.3), which a split search cannot
isolate.  A short history is also split by its best segmentations (Auger and Lawrence 1989), each
tested as a whole, where several steps among a few versions defeat a search one split at a time.
The methods are those of :class:`SegmentSearch`, which ``Auto`` inherits: they read the
detector's ``alpha``, ``confidence_level``, ``excursion``, ``nested`` and ``segmentations``
options and its :meth:`relevant` rule.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..stats.runs import (
    VersionStats
)
from ..stats.segments import (
    MIN_VERSIONS_FOR_VERSION_VAR, SegmentTest, noisier_variance, relative_interval, segment_neighbourhood, segment_test,
    mean_square_test, two_level_t, version_variance, within_segments_mean_square
)
from ..stats.moderuns import WINDOW as HELD_WINDOW
from ..stats.moderuns import ModeRuns, held


#: How far (in versions) a kept split may move to where its t statistic is largest
#: (:meth:`SegmentSearch._refine`): how precisely the search places a change.
REFINE_REACH = 2
#: Versions a short excursion needs on either side of it within its segment to be scanned for:
#: one, so that a slowdown undone by the history's last version is looked for (two before
#: 2026-11-29; the scores of every corpus were the same with one, docs/evaluation.md).
EXCURSION_SIDE = 1

#: ``excursions`` of :meth:`SegmentSearch.change_points` that scans only for stretches faster than the
#: versions around them.
FASTER = "faster"

#: Histories of at most this many versions are also split by every best segmentation
#: (:meth:`SegmentSearch._short_history`); its Bonferroni factor grows geometrically with the versions.
SHORT_HISTORY = 16
#: The fewest versions in a segment of those segmentations: a version alone is what heavy-tailed
#: noise between versions makes (the three runs of one version of a bimodal benchmark all drawing
#: the fast mode, 200x away), and the excursion scan looks for one with the whole history's scale.
SEGMENT_SIZE = 2


def short_family(k: int) -> int:
    """The Bonferroni factor of :meth:`SegmentSearch._short_history` in a history of ``k``
    versions: every split of every segmentation into segments of at least :data:`SEGMENT_SIZE`
    versions (``m C(k - m - 2, m)`` for ``m`` changes, summed); 0 where that search does not
    run."""
    if not MIN_VERSIONS_FOR_VERSION_VAR <= k <= SHORT_HISTORY:
        return 0
    # Segments of at least SEGMENT_SIZE versions: compositions of k into m + 1 such parts.
    return sum(m * math.comb(k - m * (SEGMENT_SIZE - 1) - SEGMENT_SIZE, m) for m in range(1, k // SEGMENT_SIZE))


@dataclasses.dataclass(frozen=True)
class ShortSplits:
    """The splits a short history's best segmentation added to the search's
    (:meth:`SegmentSearch._short_history`), and that segmentation, whose within-segment spread
    they are tested against again (:meth:`~regbench.detect.auto.Auto._change`)."""

    taus: frozenset[int]
    segmentation: tuple[int, ...]


class SegmentSearch:
    """The split search of :class:`~regbench.detect.auto.Auto`, which sets these options."""

    alpha: float
    confidence_level: float
    excursion: int
    nested: bool
    segmentations: bool

    def relevant(self, rel, low, high):  # pragma: no cover - Auto's rule
        raise NotImplementedError

    def change_points(self, vs: VersionStats, *, factor: int = 1, excursions: bool | str = True,
                      nested: bool | None = None) -> tuple[list[int], int, dict[int, int], ShortSplits | None]:
        """Split points (indices into ``vs``), the number of tests run, for each split the number
        of positions it was chosen from (its Bonferroni factor), and the splits a short history's
        best segmentation added (:meth:`_short_history`), or None.

        Binary segmentation: each segment's candidate is the split maximising E-Divisive's energy
        statistic (:func:`regbench.stats.best_split`, at least two versions a side), or its
        first or last version alone, which the energy statistic cannot isolate (so a change in
        the latest commit is found by a full pass, as by an incremental one); the candidate with
        the smallest p-value, Bonferroni-adjusted for the positions it was chosen from, is kept
        when below ``alpha``, and both halves are searched again.  Each candidate tested is one
        hypothesis of the count.  Kept splits are then moved, within two versions and between
        their neighbours, to where the t statistic is largest (the energy statistic can sit a
        version or two off a step).
        """
        found: dict[int, int] = {}
        tests = 0
        # The nested search below finds short stretches too (as two splits), so by default
        # (``nested`` None) it runs where the excursion scan does, under the same rules: not in
        # the versions' fastest runs (:meth:`floor_history`, ``FASTER``), where a stretch slower
        # than its neighbours is interference (every run of two neighbouring versions slowed: 8
        # more false alarms on `few-runs`, seed 2, with the search there), and not in the modes of
        # a benchmark whose runs visit several modes (``excursions`` false), whose locations come
        # from the few samples a run has in each (2 more there).  The benchmark's own location is
        # always searched with it (``nested`` true, :meth:`detect_with_state`).
        nested = self.nested and (bool(excursions) and excursions != FASTER if nested is None else nested)
        vv = version_variance(vs)
        stack = [(0, vs.mean.size)]
        while stack:
            s, e = stack.pop()
            if found:  # the steps found so far are not version-to-version noise
                vv = version_variance(vs, sorted(found))
            # A stretch between changes found that is noisier than the whole history is tested
            # with its own scale (:func:`~regbench.stats.segments.noisier_variance`).
            vv_here = noisier_variance(vs, s, e, vv, sorted(found))
            candidates, split = _candidates(vs.mean, s, e)
            best, n = self._best_candidate(vs, s, e, candidates, vv_here, factor)
            tests += n
            pair = None
            if best is None and split is not None and nested:
                # Binary segmentation's blind spot (Fryzlewicz 2014, s.1, the reason for Wild
                # Binary Segmentation): a segment holding two steps is tested as one split, the
                # other step counting as noise, and neither passes.  In a short history of two
                # large steps with versions that vary (the demo's: +78% and -36% among 8 versions
                # whose runs land at two levels), the split between them failed at p = 0.009 and
                # nothing was found, though each step against its own neighbours has p < 1e-5.
                # So each side of the energy statistic's best split is searched in turn as a
                # segment of its own, Bonferroni-adjusted for every side that could have been
                # chosen (2 sides x the outer positions x the inner positions), and an inner split
                # is kept only when the outer one then passes too, against the segment the inner
                # one leaves it (with the outer positions' factor): two steps, each hiding the
                # other, are what this search is for.  (Where it runs is limited above: run in
                # every search, it kept short stretches of interference, docs/evaluation.md.)
                outer = max(1, e - s - 3)
                for a, b in ((s, split.index), (split.index, e)):
                    inner, _ = _candidates(vs.mean, a, b)
                    got, n = self._best_candidate(vs, a, b, inner, vv_here, factor, extra=2 * outer)
                    tests += n
                    if got is None or (best is not None and got[0] >= best[0]):
                        continue
                    lo, hi = (got[1], e) if a == s else (s, got[1])
                    tests += 1
                    both = sorted({*found, got[1]})
                    res = self._segment_test(vs, lo, split.index, hi,
                                             noisier_variance(vs, s, e, version_variance(vs, both), both))
                    if np.isfinite(res.p_value) and res.p_value * outer * factor < self.alpha:
                        best, pair = got, (split.index, outer)
            if best is not None:
                found[best[1]] = best[2]
                cuts = [best[1]]
                if pair is not None:
                    found[pair[0]] = pair[1]
                    cuts.append(pair[0])
                edges = [s, *sorted(cuts), e]
                stack.extend(zip(edges[:-1], edges[1:], strict=True))
        found = self._refine(vs, found, vv)
        vv = version_variance(vs, sorted(found))
        if excursions and vv is not None:
            extra, n = self._excursions(vs, sorted(found), vv, factor, faster_only=excursions == FASTER)
            tests += n
            found = {**extra, **found}
        # Last, and where the nested search runs, for its reason: a short stretch of the versions'
        # fastest runs, or of the modes of runs that visit several, is interference or the draw of
        # a mode's share, and a segmentation isolates it from the spread it should be measured
        # against (a quiet 8-version bimodal history, `few-runs` seed 1, had a false -65% and its
        # revert in its fastest runs, where two of one version's three runs held no slow sample).
        # After the excursion scan, whose segments its splits would otherwise cut (a 3.5% revert
        # over versions 1-2 of 11 lost its first edge when the segmentation's split at 3 left the
        # stretch no version after it in its segment).
        short = None
        if self.segmentations and nested:
            extra, segmentation, n = self._short_history(vs, factor)
            tests += n
            added = frozenset(tau for tau in extra if tau not in found)
            found = {**extra, **found}
            if added:
                short = ShortSplits(added, tuple(segmentation))
        return sorted(found), tests, found, short

    def _short_history(self, vs: VersionStats, factor: int) -> tuple[dict[int, int], list[int], int]:
        """Splits of a short history found by testing its best segmentations: for each number of
        changes, the split points into segments of at least :data:`SEGMENT_SIZE` versions that
        leave the least spread within segments
        (:func:`~regbench.stats.segments.segment_neighbourhood`), each tested against its
        neighbouring segments by Student's t with the version means' spread within all the
        segments as the error term (:func:`~regbench.stats.segments.mean_square_test`).

        Binary segmentation tests one split at a time, with the rest of the segment counted as
        noise; in a short history where most versions moved (eight versions, -23%, 3.1x slower,
        13x faster and +32%, each held two versions), the whole history's scale from seven
        differences, four of them steps, and each segment's own, holding the other steps, are
        both dominated by the steps, and nothing was found, though the runs of each version
        agreed within 3%.  A segmentation chosen to leave little spread understates the error
        term, so each test is Bonferroni-adjusted for every split of every segmentation that
        could have been chosen (:func:`short_family`): the union bound holds however the
        segmentation was chosen, as each segmentation's own test is exact under normal noise.
        Only histories of at most :data:`SHORT_HISTORY` versions are searched this way; beyond,
        the whole history's scale has enough differences to be robust to the steps.  Of the
        segmentations, the one with the most splits that pass is kept (the fewest changes among
        ties).

        Returns the splits that passed (with their factor), the segmentation they passed in
        (whose spread :meth:`~regbench.detect.auto.Auto._change` tests them against again), and
        the number of tests.
        """
        k = vs.mean.size
        family = short_family(k)
        if not family:
            return {}, [], 0
        best: dict[int, int] = {}
        chosen: list[int] = []
        tests = 0
        for splits in segment_neighbourhood(vs.mean, k, min_size=SEGMENT_SIZE).values():
            ms = within_segments_mean_square(vs, splits)
            if ms is None:
                continue
            edges = [0, *splits, k]
            passed = {}
            for i, tau in enumerate(splits):
                res = mean_square_test(vs, edges[i], tau, edges[i + 2], ms)
                tests += 1
                if np.isfinite(res.p_value) and res.p_value * family * factor < self.alpha:
                    passed[tau] = family
            if len(passed) > len(best):
                best, chosen = passed, splits
        return best, chosen, tests

    def _best_candidate(self, vs: VersionStats, s: int, e: int, candidates: list[tuple[int, int]], vv,
                        factor: int, extra: int = 1) -> tuple[tuple[float, int, int] | None, int]:
        """The candidate split of ``[s, e)`` with the smallest Bonferroni-adjusted p-value below
        ``alpha`` as ``(p, tau, positions x extra)`` (the split's own factor, without the
        search's ``factor``; ``extra``: the nested search's sides), or None; and the number of
        tests run."""
        best = None
        for tau, positions in candidates:
            res = self._segment_test(vs, s, tau, e, vv)
            p = min(1.0, res.p_value * positions * extra * factor)  # Bonferroni over the positions searched
            if np.isfinite(p) and p < self.alpha and (best is None or p < best[0]):
                best = (p, tau, positions * extra)
        return best, len(candidates)

    @staticmethod
    def _segment_test(vs: VersionStats, s: int, tau: int, e: int, vv: tuple[float, float] | None) -> SegmentTest:
        """The two-level test of ``[s, tau)`` against ``[tau, e)``, with the version component
        estimated both ways: over the whole history (robust to the steps it holds, but from a few
        differences in a short history, where two steps spoil it) and by the ANOVA of the two
        segments compared (clean when they hold no other step).  Either is valid when the segments
        hold no other change; the smaller p-value, doubled (Bonferroni over the two), is kept, with
        the interval of its test.  A short history with two steps (the demo's) needs the second;
        a long one with many, the first.  The second only where the two segments estimate the
        component (3 degrees of freedom between versions, 5 versions together): shorter ones take
        it as 0, runs the only replicates, which a history whose builds differ cannot afford
        (it split one version from the next on run noise alone: 16 of 400 quiet 11-version
        histories with 1% build jitter raised an alarm that way once the nested search of
        :meth:`change_points` had found a split nearby; none with this rule)."""
        if vv is not None and e - s < 5:
            return segment_test(vs, s, tau, e, version_var=vv)
        local = segment_test(vs, s, tau, e)
        if vv is None:
            return local
        whole = segment_test(vs, s, tau, e, version_var=vv)
        best = whole if not (local.p_value < whole.p_value) else local
        return dataclasses.replace(best, p_value=float(min(1.0, 2 * best.p_value)))

    @staticmethod
    def _held(modes: ModeRuns, vs: VersionStats, s: int, tau: int, tau_end: int, e: int,
              vv: tuple[float, float] | None) -> bool:
        """Whether the location's change at ``tau`` (through ``tau_end``) of segments ``[s, e)`` of
        ``vs`` shows in the modes of a benchmark whose runs each stay in one: the shares of runs
        in them, a mode's level or the fastest runs, between the :data:`HELD_WINDOW` versions
        with runs on either side, within the segments (:func:`regbench.stats.moderuns.held`,
        where the reason is); ``vv``: the history's version component."""
        return held(modes.take(vs.index[max(s, tau - HELD_WINDOW):tau]),
                    modes.take(vs.index[tau_end:min(e, tau_end + HELD_WINDOW)]), version_var=vv)

    def _refine(self, vs: VersionStats, found: dict[int, int], vv, *, reach: int = REFINE_REACH) -> dict[int, int]:
        taus = sorted(found)
        out: dict[int, int] = {}
        for i, tau in enumerate(taus):
            s = taus[i - 1] if i else 0
            e = taus[i + 1] if i + 1 < len(taus) else vs.mean.size
            best, best_t = tau, -1.0
            # Nearest first, so that a tie stays where the search put the split: in a count that
            # is the same in every run (allocs/op), every t near a step is infinite, and taking
            # the first of the range moved a step of 2 -> 1 two versions early (-29%, not -50%).
            for cand in sorted(range(max(s + 1, tau - reach), min(e - 1, tau + reach) + 1),
                               key=lambda c: (abs(c - tau), c)):
                res = segment_test(vs, s, cand, e, version_var=vv)
                if abs(res.t) > best_t:  # NaN compares False and is never chosen
                    best, best_t = cand, abs(res.t)
            taus[i] = best
            out[best] = max(out.get(best, 0), found[tau])
        return out

    def _excursions(self, vs: VersionStats, cps: list[int], vv: tuple[float, float], factor: int, *,
                    faster_only: bool = False) -> tuple[dict[int, int], int]:
        """Short excursions inside the segments: a step undone 1 to ``excursion`` versions later.

        Binary segmentation looks for one split at a time, and a short excursion in the middle of
        a long segment moves neither side's mean (Matteson and James's search over ``kappa``
        handles it at seven times the cost, see :mod:`regbench.stats.changepoint`).  So every
        stretch of 1-``excursion`` versions of a segment, with two versions or more on either
        side, is compared with up to 10 versions around it (the same two-level test, vectorised
        over positions); the best one per segment is kept when its p-value, Bonferroni-adjusted
        for all the stretches tried, is below ``alpha``, and both its edges become splits (a
        revert, seed 003 s.5.3).  The scan is repeated on the segments a kept excursion cuts, as
        binary segmentation repeats its search.  One hypothesis per segment scanned.
        ``faster_only``: only stretches faster than the versions around them (in a history of
        the versions' fastest runs, :meth:`floor_history`, where a stretch of versions whose
        every run was slowed is interference, and only a faster one is not).
        """
        if self.excursion < 1 or vs.mean.size < 2 * EXCURSION_SIDE + 1:
            return {}, 0
        m, n, var = vs.mean, vs.n, vs.var
        multi = n > 1
        cols = {"k": np.ones(m.size), "m": m, "m2": m * m, "inv": 1.0 / n,
                "ssw": np.where(multi, (n - 1) * np.nan_to_num(var), 0.0), "dfw": np.where(multi, n - 1, 0.0)}
        pre = {key: np.concatenate(([0.0], np.cumsum(col))) for key, col in cols.items()}

        def seg(a, b):
            return {key: pre[key][b] - pre[key][a] for key in pre}

        out: dict[int, int] = {}
        tests = 0
        # Like binary segmentation, the scan is repeated on the segments an excursion it kept has
        # cut (a history with two short reverts in one segment has both found); a segment already
        # scanned without result is not scanned again.
        scanned: set[tuple[int, int]] = set()
        while True:
            bounds = [0, *sorted({*cps, *out}), m.size]
            todo = [(s, e) for s, e in zip(bounds[:-1], bounds[1:], strict=True) if (s, e) not in scanned]
            if not todo:
                break
            scanned.update(todo)
            before_scan = len(out)
            for s, e in todo:
                # Each segment on its own scale where it is the noisier (as in the split search).
                s2v, df_b = noisier_variance(vs, s, e, vv, sorted({*cps, *out})) or vv
                tests += self._scan_segment(s, e, seg, out, s2v, df_b, vs.log, factor, faster_only=faster_only)
            if len(out) == before_scan:
                break
        return out, tests

    def _scan_segment(self, s: int, e: int, seg, out: dict[int, int], s2v: float, df_b: float, log: bool,
                      factor: int, *, faster_only: bool = False) -> int:
        """One segment of :meth:`_excursions`: the best excursion in ``[s, e)``, added to ``out``
        when significant; returns the number of hypotheses tested (0 or 1).  ``faster_only``:
        only stretches lower than the versions around them count (their number is still the
        Bonferroni factor)."""
        best = None
        # Every stretch tried counts for the Bonferroni factor, so only those whose p-value passes
        # it can be kept: the intervals (Student's quantile a position, a third of the scan's
        # time) are computed for those alone.  The stretch kept is the one it was before: the
        # smallest p-value among the relevant ones, the first of equals.
        side = EXCURSION_SIDE
        positions = sum(max(0, e - width - side + 1 - (s + side)) for width in range(1, self.excursion + 1))
        if positions == 0:
            return 0
        for width in range(1, self.excursion + 1):
            ks = np.arange(s + side, e - width - side + 1)
            if ks.size == 0:
                continue
            inside = seg(ks, ks + width)
            before, after = seg(np.maximum(s, ks - 10), ks), seg(ks + width, np.minimum(e, ks + width + 10))
            around = {key: before[key] + after[key] for key in before}
            ml, mr = around["m"] / around["k"], inside["m"] / inside["k"]
            dfw = around["dfw"] + inside["dfw"]
            s2w = np.where(dfw > 0, (around["ssw"] + inside["ssw"]) / np.where(dfw > 0, dfw, 1), 0.0)
            tt = two_level_t(ml, mr, around["k"], inside["k"], around["inv"], inside["inv"],
                             s2_within=s2w, df_within=dfw, s2_version=s2v, df_version=df_b)
            p = np.broadcast_to(tt.p_value, ks.shape)
            tt, p = self._local_excursion_test(tt, p, around, inside, df_b)
            with np.errstate(invalid="ignore"):
                can = np.isfinite(p) & (p * positions * factor < self.alpha)
            if faster_only:
                can &= mr < ml
            idx = np.flatnonzero(can)
            if idx.size == 0:
                continue
            pick = lambda a: np.broadcast_to(a, ks.shape)[idx]  # noqa: E731
            rel, lo, hi = relative_interval(ml[idx], mr[idx], pick(tt.var_left), pick(tt.var_right), pick(tt.df),
                                            self.confidence_level, log=log)
            cand = idx[np.asarray(self.relevant(rel, lo, hi), dtype=bool)]
            if cand.size == 0:
                continue
            j = int(cand[np.argmin(p[cand])])
            if best is None or p[j] < best[0]:
                best = (float(p[j]), int(ks[j]), width)
        if best is not None and min(1.0, best[0] * positions * factor) < self.alpha:
            out[best[1]] = out[best[1] + best[2]] = positions
        return 1

    @staticmethod
    def _local_excursion_test(tt, p: np.ndarray, around: dict, inside: dict, df_b: float):
        """The scan's test of each stretch with the version component estimated from the stretch
        and the versions around it, where that estimate has more degrees of freedom than the
        history's.

        The history's estimate (:func:`~regbench.stats.segments.version_variance`, from successive
        differences) has few degrees of freedom in a short history, and the stretch's own two edges
        are two of its few differences: a 3x slowdown of one version among six, undone at the next,
        was missed, the component coming out at 12% where the other versions differ by 3-4%.  The
        spread of the version means of the stretch and of the versions around it, pooled within the
        two groups (under no change the stretch's versions are like those around it), estimates the
        variance of a version mean without those edges, on ``k_around + k_stretch - 2`` degrees of
        freedom, and Student's two-sample test of the version means uses it; a
        position takes it where that is more than the history's estimate has (so in short histories
        only), which depends on the sizes alone: one test a position, no second look and no
        doubling.  Where the segment holds an undetected step, the ANOVA is inflated by it: the
        test is then conservative, not liberal.  As for a split (:meth:`_segment_test`), only where
        the two groups hold 5 versions and 3 degrees of freedom between versions."""
        k_a, k_i = around["k"], inside["k"]
        df_a = k_a + k_i - 2
        with np.errstate(invalid="ignore", divide="ignore"):
            ss = (around["m2"] - around["m"] ** 2 / k_a) + (inside["m2"] - inside["m"] ** 2 / k_i)
            ms = np.maximum(0.0, np.where(df_a > 0, ss / np.where(df_a > 0, df_a, 1.0), 0.0))
        shape = p.shape
        local = (k_a + k_i >= 5) & (df_a >= 3) & (df_a > df_b)
        if not np.any(local):
            return tt, p
        # The version means' own spread, runs' share included: Student's two-sample test of the
        # version means, exact for normal ones.  Not the component less the runs' share (that
        # difference, cut at 0 where the versions of a short history happen to agree, left the
        # runs as the only replicates, and 6-version histories whose builds differ by 5% raised
        # a change in 3% more of them).
        alt = two_level_t(tt.mean_left, tt.mean_right, k_a, k_i, around["inv"], inside["inv"],
                          s2_within=0.0, df_within=0.0, s2_version=ms, df_version=df_a)

        def pick(ours, theirs):
            return np.where(local, np.broadcast_to(theirs, shape), np.broadcast_to(ours, shape))

        p_out = pick(p, alt.p_value)
        return dataclasses.replace(tt, var_left=pick(tt.var_left, alt.var_left), var_right=pick(tt.var_right, alt.var_right),
                                   t=pick(tt.t, alt.t), df=pick(tt.df, alt.df), p_value=p_out), p_out



def _candidates(x: np.ndarray, s: int, e: int):
    """Candidate splits of ``[s, e)`` as ``(tau, positions)`` and the energy statistic's split.

    The energy statistic's best split (two versions a side, chosen from ``e - s - 3``
    positions), and the segment's first and last version alone (which the energy statistic
    cannot isolate; no search, one position each)."""
    from ..stats.changepoint import best_split

    candidates = []
    split = best_split(x, s, e, min_size=2) if e - s >= 4 else None
    if split is not None:
        candidates.append((split.index, max(1, e - s - 3)))
    if e - s >= 3:
        candidates += [(e - 1, 1), (s + 1, 1)]
    elif e - s == 2:  # two versions: the one split there is (a history of two versions)
        candidates.append((s + 1, 1))
    return candidates, split
