"""``auto``: the default policy, a change-point search confirmed by a hierarchical test.

What the evaluation (``regbench evaluate``, docs/detection.md) showed works best, put together:

1. **Robust run means.**  Runs, not iterations, are the unit of replication (seed 000,
   000_833974a369fcaf36.txt, s.2), so each run is reduced to its mean; samples more than
   ``fence`` (10) times beyond the 90th (or below the 10th) percentile of their version are left
   out first, because one outlier "several orders of magnitude" long (seed 001,
   001_0c28a3a14a5fab8a.txt, s.2.1) moves a run mean more than any real change does.
2. **Change-point search over the whole history.**  Binary segmentation with the energy
   statistic of E-Divisive (Matteson and James 2014; seed 001 s.2.3 for why a whole-history
   search matters: it also finds a creeping degradation whose steps are each negligible) on the
   per-version means.  The search only proposes where a change could be.
3. **Hierarchical confirmation.**  Each proposed split is tested by comparing the segment before
   with the segment after it, with the variance of a segment mean taken from a two-level model:
   runs within versions (the within-version variance of run means, as in seed 000 s.3) and
   versions within segments (a version-to-version variance component, estimated by one-way
   ANOVA, so that builds that differ a little do not count as a change).  The t statistic uses
   Satterthwaite's degrees of freedom and its p-value is Bonferroni-adjusted for the positions
   the search chose from, so it stays a valid p-value after the search.  A split is kept when that
   p-value is below ``alpha``; binary segmentation then searches both halves.
4. **A minimum relevant change** (3% by default, seed 004, 004_3e2b5449efcf85e0.txt, s.4.5): the
   change between the neighbouring segments' means must be at least that large.  When it is not,
   but a multimodal benchmark has one mode that moved by at least that much (seed 001 s.4.2, the
   cache hit/miss case), the cluster-by-cluster comparison of the versions next to the split
   decides instead (``regbench.stats.compare_clusters``).

Each change carries the relative change of the segment means, its interval at
``confidence_level`` by the delta method, and the adjusted p-value, which ``regbench detect``
feeds to Benjamini-Hochberg across all series (:mod:`regbench.detect.fdr`).

The statistics (robust run means, per-version summaries, the two-level test of adjacent
segments, the bimodality screen) are pure functions of arrays in :mod:`regbench.stats.runs`,
:mod:`regbench.stats.segments` and :mod:`regbench.stats.levels`; this module is the policy that
puts them together, with the split search in :mod:`.search` (:class:`~.search.SegmentSearch`,
which :class:`Auto` inherits) and the handling of modes in :mod:`.modes`.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..model import Series
from ..stats.levels import (
    FastestLevel, fastest_level, mode_floors, mode_stats, runs_in_one_mode
)
from ..stats.runs import (
    LOCATIONS, LOCATION_NAMES, OUTLYING_RUN_Z, LocationChoice, VersionStats,
    burst_side, choose_location, flatten_runs, given_locations, history_percentiles, pooled_spread, screens
)
from ..stats.segments import (
    MIN_VERSIONS_FOR_VERSION_VAR, SegmentStats, SegmentTest, compare_segments, compare_segments_many,
    difference_scale, isolated_versions, noisier_variance, ratio_interval, relative_change, relative_interval, segment_test, version_floors,
    mean_square_test, runs_differ, unequal_runs_test, version_stats, version_stats_many, version_variance,
    within_segments_mean_square
)
from ..stats.moderuns import WINDOW as HELD_WINDOW
from ..stats.moderuns import ModeRuns, held
from .base import Change, Detector, kind_of, register
from .lone import STATE_KEY as LONE_KEY
from .lone import lone_versions, runs_with_data, weigh, without
from .modes import mode_bounds, merge_near, modes_mix, place_in_gap, previous_in, short_runs
from .search import FASTER, SegmentSearch


#: Short excursions are scanned for in the location and each mode of a multimodal benchmark when at
#: least this share of its runs lie wholly in one mode (:func:`~regbench.stats.levels.runs_in_one_mode`):
#: most runs, leaving room for the odd run that switched level midway.
WHOLE_RUNS = 0.8

#: ... and only in a mode held (by at least two runs) at this share of the versions: the scan
#: compares short stretches of consecutive versions, and a mode's history with holes (versions
#: where too few runs landed in it, as with 3 runs a version) has no consecutive versions to
#: compare; scanning them raised false alarms on the `few-runs` shape (docs/evaluation.md).
SCAN_MODE_COVERAGE = 0.9

#: How the fastest runs veto a change (:meth:`Auto._on_floor`): unless they confirm it
#: (``significant``), or unless they confirm it or favour it over no change (``nearer``, the
#: default).
FLOOR_VETOES = ("significant", "nearer")

#: How a significant change is judged relevant against ``min_change``: by its point estimate, or
#: by its interval (relevant unless the whole interval lies below the minimum).
RELEVANCE = ("estimate", "interval")


@register
class Auto(SegmentSearch, Detector):
    """Change-point search plus hierarchical confirmation and a minimum relevant change."""

    name = "auto"
    p_values = True

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.03, alpha: float = 0.001,
                 fence: float = 10.0, clusters: bool = True, ramp: int = 10, excursion: int = 5, rng: int = 0,
                 location: str = "auto", relevance: str = "interval", outlying: float = OUTLYING_RUN_Z,
                 levels: bool = True, floor: bool = True, floor_search: bool = True, nested: bool = True,
                 floor_veto: str = "nearer", held: bool = True, segmentations: bool = True,
                 ramp_relevance: str = "estimate", local_noise: bool = True):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        self.local_noise = bool(local_noise)
        if ramp_relevance not in RELEVANCE:
            raise ValueError(f"`ramp_relevance` must be one of {', '.join(RELEVANCE)}, got {ramp_relevance!r}")
        self.ramp_relevance = ramp_relevance
        if not 0 < alpha < 1:
            raise ValueError("`alpha` must be in (0, 1)")
        if location != "auto" and location not in LOCATIONS:
            raise ValueError(f"`location` must be 'auto' or one of {', '.join(LOCATIONS)}, got {location!r}")
        self.location_rule = location
        if relevance not in RELEVANCE:
            raise ValueError(f"`relevance` must be one of {', '.join(RELEVANCE)}, got {relevance!r}")
        self.relevance = relevance
        if not (isinstance(outlying, int | float) and outlying > 0):
            raise ValueError(f"`outlying` must be a positive number of robust standard deviations (inf: keep every "
                             f"run), got {outlying!r}")
        self.outlying = float(outlying)
        if not fence > 0:
            raise ValueError("`fence` must be positive")
        self.alpha = alpha
        self.fence = fence
        self.clusters = clusters
        self.rng = rng
        self.ramp = ramp
        self.excursion = excursion
        self.levels = levels
        self.floor = floor
        self.floor_search = floor_search
        self.nested = nested
        self.segmentations = segmentations
        if floor_veto not in FLOOR_VETOES:
            raise ValueError(f"`floor_veto` must be one of {', '.join(FLOOR_VETOES)}, got {floor_veto!r}")
        self.floor_veto = floor_veto
        self.held = held

    def relevant(self, rel, low, high):
        """Whether significant changes are relevant (scalars or arrays alike).

        ``interval`` (the default): unless the interval shows the change to be smaller than
        ``min_change``, i.e. its far end reaches the minimum.  A change measured at +2.9% with an
        interval up to +4% may well be the 3% the minimum asks for (half of all true 3% steps are
        measured below 3%); one at +1.2% [+0.8%, +1.6%] is certainly not.  This is how
        ``compare --run`` gates (a regression unless shown below the threshold).  ``estimate``:
        the point estimate must reach the minimum.
        """
        rel, low, high = np.asarray(rel), np.asarray(low), np.asarray(high)
        if self.relevance == "estimate":
            out = np.abs(rel) >= self.min_change
        else:
            out = ((rel > 0) & (high >= self.min_change)) | ((rel < 0) & (low <= -self.min_change))
        return bool(out) if out.ndim == 0 else out

    def detect(self, series: Series) -> list[Change]:
        return self.detect_counted(series)[0]

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes and the number of hypotheses tested: one per split the search tried."""
        changes, n_tests, _ = self.detect_with_state(series)
        return changes, n_tests

    incremental = True
    #: 2: runs are left out as bursts on the slow side only (``burst_side``); a state saved before
    #: left them out on both sides, and its segment would be compared with new versions that do not.
    #: 3: a history searched on a floor keeps its fastest runs' segment (``floor``), which a new
    #: version's change must show in too (:meth:`floors`).
    #: 4: a history of runs too short to choose a location keeps its fastest runs' segment too
    #: (:meth:`floors`), when those are a floor; a state saved before would not ask them.
    #: 5: a series where higher is better (a throughput) is searched as its reciprocal
    #: (:meth:`oriented`), and its state is that of the reciprocal (``reciprocal``).
    #: 6: a history whose runs each stay in one mode keeps its modes' bounds and last versions
    #: (``modes``), which a new version's change must show in too (:meth:`_held`).
    state_revision = 6

    def oriented(self, series: Series) -> tuple[Series, bool]:
        """``series`` as detection searches it, and whether that is its reciprocal.

        Interference on a shared machine only lowers a throughput (operations per second, items
        per second: higher is better), as it only adds time to a time; the floor of a time (Chen
        and Revels 2016) is the ceiling of a throughput.  The locations, the bursts left out, the
        fastest runs and the modes' floors are all built for times (:func:`burst_side`
        ``above``), so a series where higher is better and every sample is positive is searched
        as its reciprocal, the time an operation takes, and its changes are reported on its own
        scale (:func:`_on_own_scale`).  Measured: the shipped real corpus as throughputs (every
        sample inverted, the same runs) lost 0.15 of recall searched as it was (0.569 against
        0.718 as times) and found 0.736 as reciprocals (docs/evaluation.md).  Other series are
        searched as they are.  Either way without the samples that are not numbers (:func:`_finite`).
        """
        series = _finite(series)
        inverse = _reciprocal(series) if series.direction == "higher" else None
        return (series, False) if inverse is None else (inverse, True)

    def detect_with_state(self, series: Series) -> tuple[list[Change], int, dict | None]:
        """Changes, hypotheses tested, and the state of the last segment for :meth:`check_new`."""
        searched, inverted = self.oriented(series)
        changes, n_tests, state = self._detect_with_state(searched)
        if not inverted:
            return changes, n_tests, state
        return ([_on_own_scale(c, series.direction) for c in changes], n_tests,
                None if state is None else {**state, "reciprocal": True})

    def _detect_with_state(self, series: Series) -> tuple[list[Change], int, dict | None]:
        """:meth:`detect_with_state` of a series as it is searched (:meth:`oriented`): without the
        versions of one run each that stand alone where the history has others like them
        (:func:`~.lone.lone_versions`; the state says so, and its last version is still the
        history's newest)."""
        drop, alone, n_single = lone_versions(series, z=self.outlying, alpha=self.alpha)
        if not drop:
            return self._search_history(series, n_single=n_single)
        # The state's last version is the last one kept: a newest version left out is checked
        # again by the next incremental pass, which searches the history in full when it sees a
        # change there (:meth:`full_pass_needed`): whether it was a spike or a step's first
        # version, the versions after it tell.
        return self._search_history(without(series, drop), n_single=n_single, alone=alone)

    def _search_history(self, series: Series, *, n_single: int, alone: dict[bool, int] | None = None
                        ) -> tuple[list[Change], int, dict | None]:
        """:meth:`_detect_with_state` of a history without its lone versions (``alone``: how many
        were left out on each side, of ``n_single`` versions of one run)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            choice = self._location(series)
            # The runs' locations were computed to choose the location (``run_values``, the same
            # fence): not again.
            vs = version_stats(series.runs, fence=self.fence, estimator=choice.estimator, log=choice.log,
                               outlying_z=self.outlying, outlying_side=burst_side(series.direction, choice.log),
                               locations=(choice.run_values or {}).get(choice.estimator), weigh=True)
            if vs.mean.size == 0 or not np.all(np.isfinite(vs.mean)):
                return [], 0, None
            if vs.mean.size < 2:
                return [], 0, self._state(series, vs, [], choice, self.floors(series, vs, choice))
            modes = mode_bounds(series, fence=self.fence, rng=self.rng) if self.clusters else None
            # Modes between runs: the runs lie wholly in one mode each (a process lands at one
            # level and stays), so each run's location is measured from all its samples, as in a
            # unimodal benchmark, and short excursions are looked for in the benchmark's location
            # and in its modes' (see below; `_search`).
            scan_modes = modes is not None and bool(runs_in_one_mode(series.runs, modes) >= WHOLE_RUNS)
            floors = self.floors(series, vs, choice)
            # Each version's fastest run, computed once for the checks below that ask for it (where
            # the history is searched on its floor, ``floors`` are those runs).
            fastest_runs = floors if floors is not None else self.fastest_runs(series, vs, choice)
            # Where the runs each stay in one mode, the location moves with the share of runs in
            # each, binomial noise whose tail its test understates: a change of the location must
            # show in the modes too (`regbench.stats.moderuns`).
            held_runs = None if not (self.held and scan_modes) or modes is None else ModeRuns.of(
                series.runs, modes, fence=self.fence, log=choice.log, fastest=fastest_runs)
            if held_runs is not None and not modes_mix(held_runs):
                # No version has runs in two modes: the "modes" are levels the history went
                # through (a step puts every run after it in a mode no run before it held), not
                # levels a process lands at by chance, so there is no share of runs per mode to
                # be noise, and the check would only refute real steps for want of runs (a 3x
                # slowdown at a history's last version, 3 runs against 7, was vetoed).
                held_runs = None
            # The nested search (:meth:`change_points`) in the location whatever the modes: the
            # demo's runs land at two levels and, on a loaded machine, switch level within a run
            # (69% of runs in one mode): with the search left out there, it found neither of its
            # two steps.
            changes, n_tests, cps = self._search(
                series, vs, with_cps=True, excursions=modes is None or scan_modes, floors=floors, nested=True,
                modes=held_runs, fastest=self._fastest_floor(series, vs, fastest_runs) if self.local_noise and floors is None
                else None, local=True,
                estimator=choice.reason + ("" if floors is None else "; each change also seen in the versions' "
                                                                     "fastest runs (interference only adds time)")
                + ("" if held_runs is None else "; runs each stay in one mode: each change also seen in the "
                                                "shares of runs per mode, a mode's level or the fastest runs"))
            state = self._state(series, vs, cps, choice, floors, held_runs, modes)
            located = {id(c) for c in changes}  # the location's own changes (``merge_near``)
            if modes is not None:
                # The run mean's spread, whichever location was searched: see below.
                overall = choice.spread.get("mean", choice.spread.get(choice.estimator, np.nan))
                if choice.estimator == "mean" and short_runs(series):
                    # Runs too short to choose a location (processes timed once or twice): the
                    # choice measured no spread, and the run mean searched is ``vs``.  Without
                    # it, every mode was followed, a "mode" of interference delays too (false
                    # alarms on the probe shape `one-iter-skewed`, docs/evaluation.md).
                    overall = pooled_spread(vs)
                # Short excursions are looked for in a mode's location only when the runs lie
                # wholly in one mode (``scan_modes``), so that each run's location in its mode is
                # measured from all its samples, as in a unimodal benchmark.  With modes within
                # runs it comes from the few samples a run has there, and the scan's short
                # stretches raised false alarms (measured with `regbench evaluate`,
                # docs/evaluation.md).
                # A change found in a mode must show in the mode's fastest runs too
                # (:meth:`mode_floors`) where the runs each stay in one mode, and where the
                # benchmark is searched on its floor (``floors``): see :meth:`mode_floors`.
                fastest = self.mode_floors(series, modes, choice) if scan_modes or floors is not None else None
                for j, per_mode in enumerate(mode_stats(series.runs, modes, fence=self.fence, log=choice.log,
                                                        outlying_z=self.outlying)):
                    if per_mode.mean.size < 2:
                        continue
                    # A mode is followed when its location is steadier from run to run than the
                    # run mean (the point of seed 001 s.4.2: the cache hits' level is far steadier
                    # than a mean that moves with the share of misses); a "mode" of interference
                    # delays, whose location wanders from run to run, would only add false alarms.
                    # The yardstick is the mean, not the location searched above: a low quantile
                    # sits in the fast mode and is steadier than any slow mode, so measured against
                    # it every slow mode was dropped and its moves were missed (moved modes found
                    # 0.57-0.92 by shape; against the mean 0.76-1.00, measured with `regbench
                    # evaluate` on seeds 1 and 2, docs/evaluation.md).
                    if choice.log and np.isfinite(overall) and not pooled_spread(per_mode) < overall:
                        continue
                    detail = f"mode {j + 1} of {len(modes) - 1} ({modes[j]:.4g} to {modes[j + 1]:.4g})"
                    scan = scan_modes and per_mode.mean.size >= SCAN_MODE_COVERAGE * vs.mean.size
                    floors_j = None if fastest is None else _on_versions(fastest[j], per_mode.index)
                    found, tests = self._search(series, per_mode, factor=len(modes) - 1, detail=detail,
                                                excursions=scan, floors=floors_j,
                                                estimator="the mean of each run's samples in each mode: a "
                                                          "multimodal benchmark" + (" whose runs each stay in one "
                                                                                    "mode" if scan else "")
                                                + ("" if floors_j is None else "; each change also seen in the "
                                                   "mode's fastest runs"))
                    n_tests += tests
                    found = place_in_gap(series, per_mode, found, modes[j], modes[j + 1], fence=self.fence,
                                          log=choice.log)
                    changes = merge_near(series, changes, [previous_in(series, vs, c) for c in found], located)
                changes.sort(key=lambda c: series.index(c.version))
            level = self.followed_level(series, choice, vs.mean.size) if self.levels else None
            if level is not None:
                detail = (f"the fastest of {level.n_levels} levels the runs land at (within "
                          f"{np.expm1(level.cut):+.1%} of the floor)")
                name = LOCATION_NAMES.get(choice.estimator, choice.estimator)
                found, tests = self._search(series, level.stats, detail=detail, excursions=True, local=True,
                                            estimator=f"the {name} of each run at the fastest level: runs land at "
                                                      "separate levels")
                n_tests += tests
                changes = merge_near(series, changes, [previous_in(series, vs, c) for c in found], located)
                changes.sort(key=lambda c: series.index(c.version))
            # Also in a multimodal benchmark of runs too short to hold two samples in each of two
            # modes (processes timed once or twice), where a run's location is the share of each
            # mode among its one to three samples and the fastest run jumps with those draws: a
            # cache hit/miss benchmark 80 times apart, 5 runs of 2 samples, had a false +3,900%
            # and its revert where all five runs of two versions drew a miss, and such histories
            # were left out of this search.  Since the search drops short slower stretches in
            # multimodal benchmarks (``_slow_stretches``), and versions whose fastest run jumps
            # alone are left out (:meth:`floor_history`), those draws raise nothing, and the
            # search finds what the fixed mode boundaries miss: a fast mode that moved into the
            # range of a slower one (2026-11-29: recall 0.872-0.892 -> 0.904-0.923 on the probe
            # shape `one-iter-bimodal`, 0.879-0.891 -> 0.917-0.936 on `one-iter-skewed`, the
            # same false alarms or one fewer; docs/evaluation.md).
            followed = None if not self.floor_search else self.floor_history(
                vs, fastest_runs)
            if followed is not None:
                # A change of the fastest runs must not be ruled out by the location
                # (:meth:`_not_ruled_out`).
                found, tests, floor_cps = self._search(series, followed, factor=FLOOR_FACTOR, excursions=FASTER,
                                                       location=_on_versions(vs, followed.index), with_cps=True,
                                            detail="the fastest run of each version",
                                            estimator="the fastest run of each version: interference only adds "
                                                      "time, and it slowed whole runs")
                # Not a change with one version on a side (the history's first or last alone): the
                # fastest of a few runs has a long tail on the fast side (the minimum of five runs
                # of 3% normal noise lies beyond 3 standard deviations one version in a few
                # hundred), and one version's fastest run is too thin a witness.  The location's
                # own search still looks at the newest version alone.
                edges = {int(followed.index[1]), int(followed.index[-1])}
                found = [c for c in found if series.index(c.version) not in edges]
                # Where runs land at levels (``modes``): see :func:`_slow_stretches`.
                slow = set() if modes is None else {
                    series.versions[int(followed.index[t])].name
                    for t in _slow_stretches(followed, floor_cps, self.excursion,
                                             runs_at=lambda: self._run_locations(series, choice), alpha=self.alpha)}
                found = [c for c in found if c.version not in slow]
                n_tests += tests
                changes = merge_near(series, changes, [previous_in(series, vs, c) for c in found], located)
                changes.sort(key=lambda c: series.index(c.version))
            changes = _one_per_pair(changes)
            # Excursions of versions timed once each, where the history holds others like them
            # (:mod:`.lone`): not reported, and not the start of the segment the state goes on from.
            kept, lone = weigh(series, changes, width=self.excursion, alpha=self.alpha, min_change=self.min_change,
                               confidence=self.confidence_level, n_single=n_single, prior=alone)
            if lone is not None:
                still = {id(c) for c in kept}
                gone = {series.index(c.version) for c in changes if id(c) not in still}
                cps = [t for t in cps if int(vs.index[t]) not in gone]
                state = {**self._state(series, vs, cps, choice, floors, held_runs, modes), LONE_KEY: lone}
                if lone.get("open"):  # a step at the newest versions, not held long enough yet
                    state["last_version"] = lone["open"]
        return kept, n_tests, state

    def _run_locations(self, series: Series, choice: LocationChoice) -> dict[int, np.ndarray]:
        """Each version's runs' locations in the location searched (logarithms where it is on the
        log scale), by history position: what :func:`_slow_stretches` weighs a stretch with."""
        flat, group, index = flatten_runs(series.runs)
        loc = given_locations((choice.run_values or {}).get(choice.estimator), flat, group=group, fence=self.fence,
                              estimator=choice.estimator)
        if choice.log:
            with np.errstate(divide="ignore", invalid="ignore"):
                loc = np.log(loc)
        # ``group`` runs in order (flatten_runs): each version's runs are one slice.
        return dict(zip(map(int, index), np.split(loc, np.flatnonzero(np.diff(group)) + 1), strict=True))

    def fastest_runs(self, series: Series, vs: VersionStats, choice: LocationChoice) -> VersionStats | None:
        """Each version's fastest run in the location searched, whichever it is, for positive
        times whose interference only adds time (:meth:`floor_history`); else None."""
        if not choice.log or burst_side(series.direction, choice.log) != "above":
            return None
        floors = version_floors(series.runs, estimator=choice.estimator, fence=self.fence, log=choice.log,
                                locations=(choice.run_values or {}).get(choice.estimator))
        if not np.array_equal(floors.index, vs.index) or not np.all(np.isfinite(floors.mean)):
            return None
        return floors

    def _fastest_floor(self, series: Series, vs: VersionStats, fastest: VersionStats | None) -> VersionStats | None:
        """Each version's fastest run (``fastest``, :meth:`fastest_runs`), for :meth:`_change`'s
        check of a change whose two sides' runs spread differently; else None.  For runs too short to choose
        a location from (:func:`short_runs`), only where they form a floor to follow
        (:meth:`floor_history`), as :meth:`floors` asks there: processes timed once that land at
        four levels have fastest runs that jump whenever none lands at the fastest level, and
        held to them a -10% change of the two slower levels was lost."""
        if fastest is not None and short_runs(series) and self.floor_history(vs, fastest) is None:
            return None
        return fastest

    def floor_history(self, vs: VersionStats, floors: VersionStats | None) -> VersionStats | None:
        """The versions' fastest runs (:meth:`fastest_runs`) as a history searched on its own, or None.

        Interference on a shared machine slows whole runs (another process on the CPU for a
        run's seconds), and with few runs a version two of three can be slowed: the version's
        mean location then jumps by tens of percent while its fastest run stays at the floor
        (Chen and Revels 2016's argument for the minimum, made at the level of runs).  Such
        versions make the location's version-to-version noise large enough to hide a 10-20%
        step, which the fastest runs show plainly (on a real corpus measured under load, 3 runs
        a version: docs/evaluation.md).  The fastest run is taken in the location searched,
        whichever it is: whole runs slowed move every location of a run alike.  The floor
        history is searched like the location, with a Bonferroni factor of
        :data:`FLOOR_FACTOR` for the second history; its short reverts only when faster than the
        versions around them (:data:`FASTER`): interference can slow every run of two
        neighbouring versions, never speed them up.  It is searched when:

        - it is steadier from version to version than the location searched (Qn of successive
          differences, the scale of :func:`~regbench.stats.segments.version_variance`), as a
          mode or a level is followed only when steadier than the run mean;
        - after single versions far from both neighbours are left out
          (:func:`~regbench.stats.segments.isolated_versions`: a version whose every run was
          slowed, or whose one run was far faster than the others), and only when those are
          rare (at most 5% of the versions, the share of :func:`outlying_runs`): a history
          whose fastest run often jumps (a program whose runs land at levels, where all three
          runs of a version can land high) has no floor to follow.
        """
        if not self.floor_search or floors is None or floors.mean.size < MIN_VERSIONS_FOR_VERSION_VAR:
            return None
        isolated = isolated_versions(floors, z=self.outlying)
        if isolated is None:
            return None
        kept = _on_versions(floors, floors.index[~isolated])
        if kept is None or kept.mean.size < MIN_VERSIONS_FOR_VERSION_VAR:
            return None
        if not difference_scale(np.diff(kept.mean)) < difference_scale(np.diff(vs.mean)):
            return None
        return kept

    def followed_level(self, series: Series, choice: LocationChoice, n_versions: int) -> FastestLevel | None:
        """The runs at the fastest level (:func:`~regbench.stats.levels.fastest_level`) when the
        search follows them, else None.

        Followed under the rules of a mode: held (by two runs or more) at 90% of the ``n_versions``
        versions, since with few runs a version the fastest runs are a selection of the fastest,
        not a level (on `few-runs`, 3 runs a version, following them without this tripled the
        false alarms), and steadier from run to run than the run mean.  Only for positive data
        (levels are ratios to a floor).
        """
        if not choice.log:
            return None
        level = fastest_level(series.runs, estimator=choice.estimator, fence=self.fence, outlying_z=self.outlying,
                              rng=self.rng, locations=(choice.run_values or {}).get(choice.estimator),
                              outlying_side=burst_side(series.direction, choice.log))
        overall = choice.spread.get("mean", np.nan)
        if level is None or level.stats.mean.size < SCAN_MODE_COVERAGE * n_versions or not np.isfinite(overall) \
                or not pooled_spread(level.stats) < overall:
            return None
        return level

    def floors(self, series: Series, vs: VersionStats, choice: LocationChoice) -> VersionStats | None:
        """The fastest run of each version (:func:`~regbench.stats.segments.version_floors`) when
        the history is searched on a floor, else None.

        A floor: the low quantile of each run, of positive times (lower is better) whose
        interference only adds time (:func:`~regbench.stats.runs.burst_side` is ``above``),
        which is why the low quantile was chosen.  Then a real change moves every run of the
        versions after it, the fastest too; a burst of interference that slowed two of a version's
        three runs moves that version's mean location but leaves its fastest run at the floor,
        and was reported as a change and its revert (on a probe shape of 3 runs a version with
        long bursts, 30 of its false alarms and 18 on two seeds, 15 each with this check;
        docs/evaluation.md).

        Also for runs too short to choose a location from (fewer than
        :data:`~regbench.stats.runs.MIN_SAMPLES_FOR_QUANTILES` samples, a process timed once
        or twice, in versions of several runs: :func:`short_runs`), whose location is then the mean
        (:func:`~regbench.stats.runs.choose_location`): with one sample a
        run, interference that slows a quarter of the processes by 30-200% moves a version's mean
        by 10-20% while its fastest run stays at the floor (on the probe shape
        `one-iter-skewed`, 7 of its 14 false alarms on the design seed).  There the
        location's own spread cannot say whether there is a floor, so the fastest runs must
        form one that :meth:`floor_history` would follow (steadier from version to version
        than the mean, seldom jumping): in a history of runs at four levels, where a change
        moved the two slower ones, the fastest runs stayed at the fastest level and the check
        removed the change.
        """
        if not self.floor:
            return None
        if choice.estimator == "low":
            return self.fastest_runs(series, vs, choice)
        if choice.estimator == "mean" and short_runs(series):
            fastest = self.fastest_runs(series, vs, choice)
            if self.floor_history(vs, fastest) is not None:
                return fastest
        return None

    def mode_floors(self, series: Series, modes: np.ndarray, choice: LocationChoice) -> list[VersionStats] | None:
        """Each mode's fastest run per version (:func:`~regbench.stats.levels.mode_floors`),
        which a change found in a mode must show in too, for positive times whose interference
        only adds time, as for :meth:`floors`; else None.  The caller asks for them where the
        benchmark's runs each stay in one mode, and where the benchmark is searched on its floor
        (:meth:`floors`).

        Runs that each stay at one level, 4-12% apart: a real step carries the fast level into
        the slow one's fixed boundaries, and that mode's location then moves with the share of
        runs at each level from version to version, reported as changes the size of the gap in
        opposite-sign pairs (23 of the 28 false alarms of the probe shape `bimodal-close`, seed 4,
        docs/evaluation.md).  The mode's fastest run stays at the lower level through such mixes.

        A benchmark searched on its floor (interference only adds time, and slows whole runs or
        many of their samples): a step of the floor carries the slowed runs below a fixed mode
        boundary, into the fast mode, whose location then moves with how many of a version's runs
        were slowed, reported as changes several versions after the step, too far to be merged
        with it (three false changes after a -29% step on the probe shape `skewed-few`, seed 5;
        asked there, the check removed 5 of that seed's 25 false alarms and 3 each of
        `bimodal-runs` seeds 1 and 2, docs/evaluation.md).  The fast mode's fastest run stays at
        the floor.
        """
        if not self.floor or not choice.log or burst_side(series.direction, choice.log) != "above":
            return None
        return mode_floors(series.runs, modes, fence=self.fence, log=True)

    @staticmethod
    def _against_local_noise(left: SegmentStats, right: SegmentStats, vv: tuple[float, float] | None,
                             res: SegmentTest) -> SegmentTest:
        """The test of a change between segments ``left`` and ``right`` again, with each side's
        own runs' variance where one side's runs spread significantly more than
        the other's (:func:`~regbench.stats.segments.unequal_runs_test`); else ``res`` (the
        search's test).

        The search's test pools the runs' variance of its two segments, robust to what a minority
        of versions do.  Another process on the machine for ten versions is such a minority: its
        versions' runs spread five times wider and their locations wander by several percent,
        and one of them tested against the quiet majority's runs was a change and its revert
        (pairs of +-2-5% at p < 1e-18: 55 false alarms on the independent shape `noisy-stretch`,
        seed 1, docs/evaluation.md).  :meth:`_change` uses it as a filter at ``alpha`` without the
        search's Bonferroni factor (a filter on a split the search chose and confirmed with it:
        with the factor, a -20% step at a noisy neighbour's first version was lost, t = -21 on 2
        degrees of freedom, p = 0.002), in the location's and the fastest level's searches; its
        second check, of the fastest runs where the runs spread differently, is made there.

        (A third check was tried and dropped: the version component of the change's
        neighbourhood, five versions either side, where significantly larger than the history's.
        It took 13-16 more false alarms off `noisy-stretch` but lost 5 of the 336 relevant changes
        of the independent shape `layout`, already the lowest recall of those shapes: Qn of ten
        differences varies more than its asymptotic efficiency says, so the variance-ratio test
        called quiet neighbourhoods noisier too often.)"""
        if vv is None:
            return res
        unequal = unequal_runs_test(left, right, vv)
        return unequal if unequal is not None and not unequal.p_value <= res.p_value else res

    def _runs_agree(self, seg: SegmentStats, new: SegmentStats, state: dict) -> bool:
        """Whether a new version's change against the saved segment (an incremental pass,
        :meth:`check_new`) also passes with each side's own runs' variance where one side's runs
        spread significantly more (:meth:`_against_local_noise`).  The check of the fastest runs
        where the runs spread differently (:meth:`_change`) needs the segment's fastest runs, which
        the saved state holds only for a benchmark searched on its floor: the next full pass makes
        it."""
        vv = state.get("version_var")
        if not self.local_noise or not vv:
            return True
        unequal = unequal_runs_test(seg, new, (float(vv[0]), float(vv[1])))
        return unequal is None or bool(np.isfinite(unequal.p_value) and unequal.p_value < self.alpha)

    def _on_floor(self, res: SegmentTest, rel: float) -> bool:
        """Whether the fastest runs confirm a change of sign ``rel``: their two-level test (one value
        a version, so the version-to-version variance is all the noise) is significant at the
        detector's confidence level, the same way, and relevant (:meth:`relevant`, on their own
        interval).  A further condition on a change already found significant: it can only remove
        changes, so the search's error rate holds.  Where too few versions measure the fastest
        runs' noise (one value a version, in a history of three), the check cannot be made and
        removes nothing.

        ``nearer`` (the default) also keeps a change whose fastest runs moved the same way by at
        least half of it on the log scale: the two explanations the check weighs are interference
        (the floor did not move) and a real change (it moved as the location did), and with the
        same standard error under both, the fastest runs' estimate favours the real change exactly
        when it lies nearer the location's change than zero.  A short history of a program whose
        runs land at two levels needs it: the demo's three slow commits had fastest runs of 12.6,
        12.4 and 21.8 ms (all ten runs of one at the slow level) against 7.2-9.3 ms before, p =
        0.049, and its +77% regression was dropped (tests/golden/detect)."""
        if np.isnan(res.se_left) or np.isnan(res.se_right):
            return True
        moved, low, high = ratio_interval(res, self.confidence_level, log=True)
        if self.floor_veto == "nearer" and np.sign(moved) == np.sign(rel) \
                and abs(np.log1p(moved)) >= abs(np.log1p(rel)) / 2:
            return True
        if not (np.isfinite(res.p_value) and res.p_value < 1 - self.confidence_level
                and np.sign(res.mean_right - res.mean_left) == np.sign(rel)):
            return False
        # Relevant there too: the fastest runs are the nearest the code's own cost is measured, so
        # a relevant change of the code is a relevant change of them; bursts that slowed most runs
        # of a version by 20% and its fastest one by 1% are interference, not a 20% change.
        return bool(self.relevant(moved, low, high))

    def _not_ruled_out(self, res: SegmentTest, rel: float) -> bool:
        """Whether a change ``rel`` found in the versions' fastest runs is within the location's
        interval for the same split (``res``, at the detector's confidence level): the fastest
        runs are followed as a floor under which every run moves alike with the code, so a real
        change moves the location by as much, however noisily.  Where a run's samples land at
        levels several times apart, the fastest run's mean jumps instead with how many of its
        samples landed low (the fastest of 20 runs of 5 samples: all five low in one version, one
        of five high in the next, +117%) while the location moves by a fraction of that, which
        its interval then excludes (39 of the 43 false alarms of the probe shape
        `many-runs-quiet`, seed 5, docs/evaluation.md).  Not a test of its own: it can only
        remove changes already found significant.  A point rule (the location moved by at least
        half, as :meth:`_on_floor`'s ``nearer``) was tried: the location of three runs a version,
        whole runs slowed by 20-80%, moved by less than half of a real 10% step one history in a
        few (tests/test_detect_auto.py)."""
        if np.isnan(res.se_left) or np.isnan(res.se_right):
            return True
        _, low, high = ratio_interval(res, self.confidence_level, log=True)
        return bool(low <= rel <= high)

    def location(self, series: Series) -> LocationChoice:
        """How the runs of ``series`` are summarised: the location with the least run-to-run spread
        (:func:`~regbench.stats.runs.choose_location`), compared as logarithms when positive."""
        series, inverted = self.oriented(series)
        choice = self._location(series)
        if inverted:  # said where it is shown (``regbench diagnose``)
            choice = dataclasses.replace(choice, reason=f"{choice.reason}; of the reciprocal, the time of one "
                                                         "operation (higher is better)")
        return choice

    def _location(self, series: Series) -> LocationChoice:
        """:meth:`location` of a series as it is searched (:meth:`oriented`, :func:`_finite`)."""
        candidates = LOCATIONS if self.location_rule == "auto" else (self.location_rule,)
        return choose_location(series.runs, fence=self.fence, candidates=candidates, outlying_z=self.outlying,
                               direction=series.direction)

    def _state(self, series: Series, vs: VersionStats, cps: list[int], choice: LocationChoice,
               floors: VersionStats | None = None, held_runs: ModeRuns | None = None,
               bounds: np.ndarray | None = None) -> dict:
        start = cps[-1] if cps else 0
        seg = SegmentStats.of(vs, start, vs.mean.size)
        floor = {} if floors is None else {"floor": dict(vars(SegmentStats.of(floors, start, vs.mean.size))),
                                           "floor_var": _listed(version_variance(floors, cps))}
        if held_runs is not None and bounds is not None:
            # The last versions (with runs) of the segment, for :meth:`_held` of the versions to come.
            window = held_runs.take(vs.index[max(start, vs.mean.size - HELD_WINDOW):])
            floor["modes"] = {"bounds": [float(b) for b in bounds[1:-1]], "window": window.to_state()}
        return {**floor, "last_version": series.versions[int(vs.index[-1])].name,
                "segment_start": series.versions[int(vs.index[start])].name,
                "segment": dict(vars(seg)), "version_var": _listed(version_variance(vs, cps)),
                "estimator": choice.estimator, "log": choice.log, "reason": choice.reason,
                "run_scale": None if not np.isfinite(vs.run_scale) else float(vs.run_scale),
                # What the rule on outlying runs weighed (VersionStats.screen), for full_pass_needed.
                "screen": None if vs.screen is None else [float(vs.screen[0]), int(vs.screen[1]), int(vs.screen[2])],
                "fence_history": _fence_history(series)}

    def check_new(self, state: dict, series: Series) -> tuple[list[Change], int, dict]:
        """Test each new version, in history order, against the segment since the last change.

        One hypothesis per new version (no search, so no Bonferroni factor): the hierarchical
        test of :func:`~regbench.stats.segments.compare_segments` between the saved segment's
        sufficient statistics and the new version, and the minimum relevant change.  A change
        starts a new segment; a version without one joins the current segment.  Creeping
        degradations and moved modes are left to the next full pass, which alerts de-duplicate
        against this one.
        """
        own = series.direction
        series = _as_saved(state, series)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            vs = version_stats(series.runs, fence=self.fence, estimator=state.get("estimator", "mean"),
                               log=bool(state.get("log", False)), outlying_z=self.outlying,
                               outlying_side=burst_side(series.direction, bool(state.get("log", False))),
                               run_scale=_saved_scale(state), fence_history=_saved_fence(state),
                               count_scale=_screen_scale(state))
        return _counted(_checked_on_own_scale(self._check(state, series, vs), state, own), vs)

    def full_pass_needed(self, state: dict, series: Series, changes: Sequence[Change],
                         new_state: dict | None = None) -> bool:
        """Whether a change the check found is at a version timed by one run, or the last full
        pass left a step at the newest versions for later: whether that is a change or
        interference only the whole history tells (:mod:`.lone`); or the new runs turn the rule
        on outlying runs that the saved segment was summarised with (:meth:`_screening_turns`,
        from ``new_state``, what the check returned).  The history is then searched again in
        full, and the incremental answer is the full pass's."""
        if (state.get(LONE_KEY) or {}).get("open"):
            # The saved state's last version is before such a step (:meth:`_search_history`): its
            # segment holds the versions checked as new here, so only a full pass can judge them.
            return True
        return any(runs_with_data(series.runs[series.index(c.version)]) == 1 for c in changes) \
            or self._screening_turns(state, new_state)

    def _screening_turns(self, state: dict, new_state: dict | None) -> bool:
        """Whether the new versions' runs turn the whole history's rule on outlying runs
        (:func:`~regbench.stats.runs.outlying_runs`: left out while they are at most
        :data:`~regbench.stats.runs.OUTLYING_RUN_SHARE` of the runs) from one decision to the
        other: ``state``'s ``screen`` (what the full pass weighed) against ``new_state``'s (the
        new runs counted in at the same scale, :meth:`_counted`).

        The segment a check tests a new version against was summarised with that decision: runs
        left out, or kept as the noise's own tails.  A probe (a C program on a loaded VM): two
        bursts among 39 runs were one more than the share allowed, so the full pass kept them, and
        its saved segment was wide with them; the 42nd run made them few enough, a full pass left
        them out and found a +48% step at q = 3.6e-10, and the incremental check, on the wide
        segment, had let it in.  So when the decision would turn, the history is searched again
        in full, and the incremental answer is the full pass's."""
        before, after = state.get("screen"), (new_state or {}).get("screen")
        return before is not None and after is not None and \
            screens(int(before[1]), int(before[2])) != screens(int(after[1]), int(after[2]))

    def reported_through(self, state: dict) -> str | None:
        """The start of the saved segment: :meth:`check_new` lets a new version into the segment
        when it alone is not significant, so the first versions of a modest step at one run a
        version joined it unreported; a full pass finds the step there, and it is reported (the
        change that began the segment was reported already)."""
        return state.get("segment_start") or state.get("last_version")

    def check_new_many(self, items: Sequence[tuple[dict, Series]]) -> list[tuple[list[Change], int, dict]]:
        """:meth:`check_new` of many series, with the robust run means of all of them computed in
        one pass (:func:`~regbench.stats.segments.version_stats_many`): an incremental pass over a
        store has one or two new versions per series, where numpy's per-call overhead, not the
        arithmetic, is the cost."""
        own = [series.direction for _, series in items]
        items = [(state, _as_saved(state, series)) for state, series in items]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            all_stats = version_stats_many([series.runs for _, series in items], fence=self.fence,
                                           estimators=[state.get("estimator", "mean") for state, _ in items],
                                           logs=[bool(state.get("log", False)) for state, _ in items],
                                           outlying_z=self.outlying,
                                           outlying_sides=[burst_side(series.direction, bool(state.get("log", False)))
                                                           for state, series in items],
                                           run_scales=[_saved_scale(state) for state, _ in items],
                                           fence_histories=[_saved_fence(state) for state, _ in items],
                                           count_scales=[_screen_scale(state) for state, _ in items])
            firsts = self._first_tests(items, all_stats)
        return [_counted(_checked_on_own_scale(self._check(state, series, vs, first=first), state, direction), vs)
                for (state, series), vs, first, direction in zip(items, all_stats, firsts, own, strict=True)]

    def _first_tests(self, items: Sequence[tuple[dict, Series]], all_stats: Sequence[VersionStats]
                     ) -> list[tuple[SegmentTest, float, float, float] | None]:
        """The test of each series' first new version against its saved segment, and its relative
        change and interval, for all series at once (:func:`compare_segments_many`); what
        :meth:`_check` would compute first, equal to it.  None where there is no new version."""
        todo = [i for i, vs in enumerate(all_stats) if vs.mean.size]
        pairs = [(SegmentStats(**items[i][0]["segment"]), SegmentStats.of(all_stats[i], 0, 1)) for i in todo]
        vvs = [items[i][0].get("version_var") for i in todo]
        tests = compare_segments_many(pairs, [tuple(vv) if vv else None for vv in vvs])
        out: list[tuple[SegmentTest, float, float, float] | None] = [None] * len(items)
        for log in (False, True):
            at = [k for k, i in enumerate(todo) if bool(all_stats[i].log) == log]
            if not at:
                continue
            rel, lo, hi = relative_interval(
                np.array([tests[k].mean_left for k in at]), np.array([tests[k].mean_right for k in at]),
                np.array([tests[k].se_left for k in at]) ** 2, np.array([tests[k].se_right for k in at]) ** 2,
                np.array([tests[k].df for k in at]), self.confidence_level, log=log)
            for pos, k in enumerate(at):
                out[todo[k]] = (tests[k], float(rel[pos]), float(lo[pos]), float(hi[pos]))
        return out

    def _check(self, state: dict, series: Series, vs: VersionStats, *,
               first: tuple[SegmentTest, float, float, float] | None = None) -> tuple[list[Change], int, dict]:
        """Test each new version in turn; ``first``: the first one's test and interval, computed
        already (:meth:`_first_tests`)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            seg = SegmentStats(**state["segment"])
            floor = SegmentStats(**state["floor"]) if state.get("floor") and self.floor else None
            fv = state.get("floor_var")
            last, start = state["last_version"], state["segment_start"]
            saved_modes = state.get("modes") if self.held else None
            window = ModeRuns.from_state(saved_modes["window"]) if saved_modes else None
            if saved_modes and window is not None and len(saved_modes["bounds"]) + 1 != len(window.modes):
                saved_modes = window = None  # not a state this detector saved: no modes to hold to
            changes, n_tests = [], 0
            for j in range(vs.mean.size):
                new = SegmentStats.of(vs, j, j + 1)
                name = series.versions[int(vs.index[j])].name
                runs = [series.runs[int(vs.index[j])]]
                # The new version's fastest run, for the floor (:meth:`floors`) and the modes.
                fastest = None if floor is None and (window is None or window.fastest is None) else version_floors(
                    runs, fence=self.fence, estimator=state.get("estimator", "low"), log=True,
                    fence_history=_saved_fence(state))
                new_modes = None
                if saved_modes and window is not None:  # the new version in the modes (:meth:`_held`)
                    new_modes = ModeRuns.of(runs, np.array([-np.inf, *saved_modes["bounds"], np.inf]),
                                            fence=self.fence, log=bool(state.get("log", False)),
                                            fastest=None if window.fastest is None else fastest,
                                            fence_history=_saved_fence(state))
                if j == 0 and first is not None:
                    res, rel, lo, hi = first
                else:
                    vv = state.get("version_var")
                    res = compare_segments(seg, new, version_var=tuple(vv) if vv else None)
                    rel, lo, hi = ratio_interval(res, self.confidence_level, log=vs.log)
                n_tests += 1
                new_floor = None
                if floor is not None and fastest is not None:
                    if fastest.mean.size:
                        m = float(fastest.mean[0])
                        new_floor = SegmentStats(1, m, m * m, 0.0, 0.0, 1.0)
                on_floor = floor is None or new_floor is None or self._on_floor(
                    compare_segments(floor, new_floor, version_var=tuple(fv) if fv else None), rel)
                if np.isfinite(rel) and np.isfinite(res.p_value) and res.p_value < self.alpha \
                        and self.relevant(rel, lo, hi) and on_floor and self._runs_agree(seg, new, state) \
                        and (new_modes is None or window is None or held(
                            window, new_modes, version_var=tuple(vv) if (vv := state.get("version_var")) else None)):
                    changes.append(Change(
                        benchmark=series.benchmark, config=series.config, machine=series.machine,
                        version=name, previous=last, change=rel, ci_low=lo, ci_high=hi,
                        kind=kind_of(rel, series.direction), method=self.name, p_value=float(res.p_value),
                        estimator=state.get("reason")))
                    seg, start = new, name
                    floor = new_floor if floor is not None else None
                    window = new_modes
                else:
                    seg = seg + new
                    if floor is not None and new_floor is not None:
                        floor = floor + new_floor
                    if window is not None and new_modes is not None:
                        window = window + new_modes
                        window = window.window(window.size - HELD_WINDOW, window.size)
                last = name
        out = {**state, "last_version": last, "segment_start": start, "segment": dict(vars(seg))}
        if saved_modes and window is not None:
            out["modes"] = {**saved_modes, "window": window.to_state()}
        if floor is not None:
            out["floor"] = dict(vars(floor))
        else:
            out.pop("floor", None)  # not the floor of a segment that ended
        return changes, n_tests, out

    def _search(self, series: Series, vs: VersionStats, *, factor: int = 1, detail: str | None = None,
                with_cps: bool = False, excursions: bool | str = True, estimator: str | None = None,
                floors: VersionStats | None = None, nested: bool | None = None,
                location: VersionStats | None = None, modes: ModeRuns | None = None,
                fastest: VersionStats | None = None, local: bool = False):
        # Excursions are looked for in the location of a unimodal benchmark, and in the location
        # and the modes of a multimodal one whose runs each stay in one mode: where every run
        # visits several modes, the overall location jumps with the share of each mode in the
        # runs, and a mode's location, measured from the few samples a run has there, raised false
        # alarms in short stretches (measured with `regbench evaluate`, docs/evaluation.md).
        cps, n_tests, positions, short = self.change_points(vs, factor=factor, excursions=excursions, nested=nested)
        changes = []
        for first, last in self._groups(vs, cps):
            # Splits of a short history's best segmentation are tested again in that segmentation.
            segmented = short is not None and cps[first] in short.taus
            c = self._change(series, vs, cps, first, last, factor=factor * positions[cps[first]], detail=detail,
                             estimator=estimator, floors=floors, location=location, modes=modes, fastest=fastest,
                             local=local, segmentation=list(short.segmentation) if segmented and short is not None else None)
            if c is not None:
                changes.append(c)
        return (changes, n_tests, cps) if with_cps else (changes, n_tests)

    def _groups(self, vs: VersionStats, cps: list[int]) -> list[tuple[int, int]]:
        """Change points to report, as ``(first, last)`` positions in ``cps``.

        A creeping degradation (seed 001 s.2.3) is found by the search as several nearby splits
        of the same sign, each below the minimum relevant change.  Such neighbours (at most
        ``ramp`` versions apart) are reported once, as one change from the segment before the
        first to the segment after the last; every other change point stands alone.
        """
        bounds = [0, *cps, vs.mean.size]
        small, sign = [], []
        vv = version_variance(vs, cps)
        for i, tau in enumerate(cps):
            res = segment_test(vs, bounds[i], tau, bounds[i + 2], version_var=vv)
            rel = float(relative_change(res.mean_left, res.mean_right, log=vs.log))
            small.append(abs(rel) < self.min_change)
            sign.append(np.sign(rel))
        groups: list[tuple[int, int]] = []
        i = 0
        while i < len(cps):
            j = i
            while (small[i] and j + 1 < len(cps) and small[j + 1] and sign[j + 1] == sign[i]
                   and cps[j + 1] - cps[j] <= self.ramp):
                j += 1
            groups.append((i, j))
            i = j + 1
        return groups

    def _change(self, series: Series, vs: VersionStats, cps: list[int], first: int, last: int, *,
                factor: int = 1, detail: str | None = None, estimator: str | None = None,
                floors: VersionStats | None = None, location: VersionStats | None = None,
                modes: ModeRuns | None = None, segmentation: list[int] | None = None,
                fastest: VersionStats | None = None, local: bool = False) -> Change | None:
        """The change at split ``cps[first]`` (through ``cps[last]`` for a ramp); ``factor`` is its
        Bonferroni factor (positions searched x modes); ``segmentation``: the best segmentation
        of a short history the split was found in (:meth:`~.search.SegmentSearch._short_history`),
        whose version component, from within all its segments, it is tested with, as it was there.  With ``floors`` (:meth:`floors`), the
        change must show in the versions' fastest runs too (:meth:`_on_floor`); with ``location``
        (a search of the fastest runs), the location must not rule it out (:meth:`_not_ruled_out`);
        with ``modes`` (a benchmark whose runs each stay in one mode), it must show in its modes
        (:meth:`_held`); with ``local`` (the location's and the fastest level's searches) and the
        ``local_noise`` option, it must pass with each side's own runs' variance where one side's
        runs spread more (:meth:`_against_local_noise`), and show in ``fastest`` (each version's fastest run) where
        the runs spread differently on its two sides."""
        bounds = [0, *cps, vs.mean.size]
        s, tau, tau_end, e = bounds[first], cps[first], cps[last], bounds[last + 2]
        # The two segments on the scale the search tested them with (a noisier stretch on its own).
        vv = noisier_variance(vs, s, e, version_variance(vs, cps), cps)
        if segmentation is not None:
            # Between the splits of the segmentation too, whose steps the search's segments would
            # otherwise hold (a 13x step measured as -85% between segments holding three others).
            finer = sorted({0, *cps, *segmentation, vs.mean.size})
            s, e = max(b for b in finer if b < tau), min(b for b in finer if b > tau_end)
        ms = None if segmentation is None else within_segments_mean_square(vs, segmentation)
        if ms is not None:
            res = mean_square_test(vs, s, tau, e, ms) if first == last else \
                mean_square_test(_without(vs, tau, tau_end), s, tau, e - (tau_end - tau), ms)
        elif first == last:
            res = self._segment_test(vs, s, tau, e, vv)
        else:  # a ramp: the segment before it against the segment after it, the ramp left out
            res = self._segment_test(_without(vs, tau, tau_end), s, tau, e - (tau_end - tau), vv)
        p = min(1.0, res.p_value * factor)
        rel, lo, hi = ratio_interval(res, self.confidence_level, log=vs.log)
        # A ramp's span is chosen from the splits the search found, each below the minimum, to
        # join them: ``ramp_relevance = "estimate"`` (the default since 2026-12-01) asks its point
        # estimate to reach the minimum, as that choice makes its interval optimistic; a level
        # drifting across versions read as creeps measured below the minimum (docs/evaluation.md,
        # "Shapes from an independent generator").  ``interval``: as any other change.
        relevant = abs(rel) >= self.min_change if first != last and self.ramp_relevance == "estimate" \
            else self.relevant(rel, lo, hi)
        if not (np.isfinite(rel) and np.isfinite(p)) or not relevant or p >= self.alpha:
            return None
        if self.local_noise and local and ms is None:
            # Tested again where the noise there is larger than the search's test took it
            # (:meth:`_against_local_noise`): a filter, which keeps or drops the change; what is
            # reported (its p-value, which ranks it against a mode's change of the same split in
            # `merge_near` and across series, and its interval) stays the search's.
            tested = _without(vs, tau, tau_end) if tau_end > tau else vs
            left, right = SegmentStats.of(tested, s, tau), SegmentStats.of(tested, tau, e - (tau_end - tau))
            again = self._against_local_noise(left, right, vv, res)
            if not (np.isfinite(again.p_value) and again.p_value < self.alpha):
                return None
            if floors is None and fastest is not None and runs_differ(left, right):
                # The runs spread differently on the two sides: interference (another process on
                # the machine spreads the runs and adds time, moving the location with its share)
                # or a change that brought other noise.  The fastest runs tell them apart, as where
                # the benchmark is searched on its floor (:meth:`floors`).
                floors = fastest
        for other, keep in ((floors, self._on_floor), (location, self._not_ruled_out)):
            if other is None:
                continue
            oms = None if ms is None or segmentation is None else within_segments_mean_square(
                other, segmentation if other.mean.size == vs.mean.size else cps)
            if oms is not None:
                ores = mean_square_test(other, s, tau, e, oms) if first == last else \
                    mean_square_test(_without(other, tau, tau_end), s, tau, e - (tau_end - tau), oms)
            elif first == last:
                ores = segment_test(other, s, tau, e, version_var=version_variance(other, cps))
            else:
                ores = segment_test(_without(other, tau, tau_end), s, tau, e - (tau_end - tau),
                                    version_var=version_variance(other, cps))
            if not keep(ores, rel):
                return None
        if modes is not None and not self._held(modes, vs, s, tau, tau_end, e, vv):
            return None
        return Change(
            benchmark=series.benchmark, config=series.config, machine=series.machine,
            version=series.versions[int(vs.index[tau])].name,
            previous=series.versions[int(vs.index[tau - 1])].name,
            change=rel, ci_low=lo, ci_high=hi,
            kind=kind_of(rel, series.direction), method=self.name, p_value=float(p), detail=detail,
            estimator=estimator, until=series.versions[int(vs.index[tau_end])].name if tau_end > tau else None)


#: What the estimator of a change found in a series' reciprocal says (:func:`_on_own_scale`;
#: :func:`regbench.run.rerun.comparison_of` reads it).
RECIPROCAL_NOTE = "searched as its reciprocal"


def _one_per_pair(changes: list[Change]) -> list[Change]:
    """One change for each pair of versions, the most significant: two searches can each place a
    change between the same two versions (a step whose first version was also slowed by a spike:
    the step placed one version late, and the spike's end), and one pair of versions cannot have
    become both faster and slower (a probe reported -33.57% and +9.72% for one pair, and raised
    two alerts).  ``merge_near`` merges changes *near* each other that agree; this keeps the pair
    that disagrees from being reported twice."""
    best: dict[tuple[str, str], Change] = {}
    for c in changes:
        key = (c.version, c.previous)
        kept = best.get(key)
        if kept is None or (c.p_value if c.p_value is not None else 1.0) < (
                kept.p_value if kept.p_value is not None else 1.0):
            best[key] = c
    return [c for c in changes if best[(c.version, c.previous)] is c]


def _reciprocal(series: Series, *, lenient: bool = False) -> Series | None:
    """``series`` with every sample replaced by its reciprocal and lower-is-better, or None when a
    sample is negative (a score that can be negative has no reciprocal scale).

    A throughput of zero measured nothing (the tool ran no operation): such samples are left out,
    as :func:`_finite` leaves out samples that are not numbers.  ``lenient`` (a state saved on the
    reciprocal, :meth:`Auto.check_new`): negative samples are left out too, so that a history
    searched as its reciprocal goes on being one.  Runs left empty are left out."""
    runs = []
    for version in series.runs:
        kept = []
        for r in version:
            r = np.asarray(r, dtype=float)
            ok = np.isfinite(r) & (r > 0)
            if not ok.all():
                if not lenient and np.any(r < 0):
                    return None
                r = r[ok]
                if r.size == 0:
                    continue
            kept.append(1.0 / r)
        runs.append(kept)
    return dataclasses.replace(series, runs=runs, direction="lower")


def _finite(series: Series) -> Series:
    """``series`` without its samples that are not numbers (NaN, infinite), and without the runs
    left empty by that; the series itself when every sample is finite.

    One NaN sample made every location of its run NaN, and a history with one NaN version level
    was not searched at all (no change reported in any version)."""
    every = [r for version in series.runs for r in version]
    # One check over all samples at once: one numpy call a run cost 11 ms for 5,000 runs.
    if not every or np.isfinite(np.concatenate(every)).all():
        return series
    runs = [[r[np.isfinite(r)] for r in version if np.isfinite(r).any()] for version in series.runs]
    return dataclasses.replace(series, runs=runs)


def _as_saved(state: dict, series: Series) -> Series:
    """``series`` on the scale its saved ``state`` was computed on (:meth:`Auto.oriented`), its
    samples that are not numbers left out (:func:`_finite`)."""
    if not state.get("reciprocal"):
        return _finite(series)
    inverse = _reciprocal(series, lenient=True)
    assert inverse is not None  # lenient: never None
    return inverse


def _on_own_scale(change: Change, direction: str) -> Change:
    """A change found in a series' reciprocal (:meth:`Auto.oriented`) on the series' own scale.

    A relative change ``c`` of the reciprocal is ``1 / (1 + c) - 1`` of the series, a decreasing
    map, so the interval's ends swap; exact, and still inside (-100%, +inf).  The kind is the
    same (a slower operation is a lower throughput)."""
    def own(c: float) -> float:
        if not np.isfinite(c):
            return c if np.isnan(c) else -1.0 if c > 0 else float("inf")
        return 1.0 / (1.0 + c) - 1.0 if c > -1.0 else float("inf")

    estimator = change.estimator
    note = f"{RECIPROCAL_NOTE} (the time of one operation): higher is better, interference only lowers it"
    return dataclasses.replace(change, change=own(change.change), ci_low=own(change.ci_high),
                               ci_high=own(change.ci_low), kind=kind_of(own(change.change), direction),
                               estimator=note if not estimator else f"{estimator}; {note}",
                               detail=_mode_on_own_scale(change.detail))


def _mode_on_own_scale(detail: str | None) -> str | None:
    """A mode's detail, ``mode j of n (lo to hi)``, of a series' reciprocal as the series' own:
    the boundaries inverted and the modes numbered from the other end (the reciprocal's fastest
    mode is the throughput's highest); any other detail as it is."""
    import re

    m = re.fullmatch(r"mode (\d+) of (\d+) \((\S+) to (\S+)\)(.*)", detail or "", flags=re.S)
    if m is None:
        return detail
    j, n, lo, hi = int(m[1]), int(m[2]), float(m[3]), float(m[4])
    # (lo, hi] of the reciprocal is [1 / hi, 1 / lo) of the series; the reciprocal is positive, so
    # its first mode's -inf is 0, whose reciprocal is +inf.
    new_lo = "-inf" if hi == np.inf else f"{1.0 / hi:.4g}"
    new_hi = "inf" if lo <= 0 else f"{1.0 / lo:.4g}"
    return f"mode {n - j + 1} of {n} ({new_lo} to {new_hi}){m[5]}"


def _checked_on_own_scale(checked: tuple[list[Change], int, dict], state: dict, direction: str
                          ) -> tuple[list[Change], int, dict]:
    """:meth:`Auto._check`'s result with its changes on the series' own scale (:func:`_as_saved`)."""
    if not state.get("reciprocal"):
        return checked
    changes, n_tests, out = checked
    return [_on_own_scale(c, direction) for c in changes], n_tests, out


#: The Bonferroni factor of a search of the versions' fastest runs (:meth:`Auto.floor_history`):
#: a second history searched besides the location.
FLOOR_FACTOR = 2


def _screen_scale(state: dict) -> float | None:
    """The scale the full pass weighed its rule on outlying runs with (``screen``), for counting
    the new versions' runs at it (None: not saved)."""
    screen = state.get("screen")
    return float(screen[0]) if screen else None


def _counted(checked: tuple[list[Change], int, dict], vs: VersionStats) -> tuple[list[Change], int, dict]:
    """``checked`` with its new state's ``screen`` counting the new versions' runs (``vs.screen``,
    counted at the saved scale), so that the next pass weighs the rule on outlying runs over every
    run since the full pass."""
    changes, n_tests, out = checked
    saved = out.get("screen")
    if saved is not None and vs.screen is not None:
        out = {**out, "screen": [float(saved[0]), int(saved[1]) + vs.screen[1], int(saved[2]) + vs.screen[2]]}
    return changes, n_tests, out


def _saved_scale(state: dict) -> float:
    """The run scale of a full pass, for the few new versions of an incremental one (NaN, so that
    no run is left out, when the pass could not estimate it)."""
    scale = state.get("run_scale")
    return float("nan") if scale is None else float(scale)


def _fence_history(series: Series) -> list[float] | None:
    """The history's percentiles that the outlier fence of a full pass used
    (:func:`~regbench.stats.runs.history_percentiles`), saved for incremental passes."""
    lo, hi = history_percentiles([r for runs in series.runs for r in runs])
    return [lo, hi] if np.isfinite(lo) and np.isfinite(hi) else None


def _saved_fence(state: dict) -> tuple[float, float] | None:
    """The fence reference of a full pass (None for a state saved before it was kept: the new
    versions' own percentiles are used)."""
    ref = state.get("fence_history")
    return (float(ref[0]), float(ref[1])) if ref else None


def _listed(vv: tuple[float, float] | None) -> list[float] | None:
    return None if vv is None else [float(vv[0]), float(vv[1])]


def _slow_stretches(vs: VersionStats, cps: list[int], width: int, *,
                    runs_at: Callable[[], Mapping[int, np.ndarray]] | None = None, alpha: float = 0.001) -> set[int]:
    """The change points of ``cps`` (positions in ``vs``, a search of the versions' fastest runs)
    that start or end a stretch of at most ``width`` versions slower than the segments on both
    sides of it: a slowdown and the speed-up that ends it.

    Used where the samples land at levels (a multimodal benchmark, point 5 of docs/detection.md):
    all of a version's runs can then land at a slower level, as the runs of other versions do,
    for a few versions in a row (the probe shape `bimodal-close`, 5 runs at two levels 4-12%
    apart: stretches of two versions 9-11% slower made most of its false alarms); that is the
    reason of :data:`FASTER`, which the scan for short reverts of the fastest runs follows, for
    what the search of change points finds, and the modes' own searches judge such stretches.
    Both ends go, whichever of them passed the checks of :meth:`Auto._change`.  Not in a unimodal
    benchmark, where a slower stretch of the fastest runs is a real slowdown reverted (measured:
    applied there too it lost such reverts on `few-runs` and on a real corpus,
    docs/evaluation.md); a real slowdown reverted within ``width`` versions of a multimodal one
    is left to the location's and the modes' searches.

    Unless that draw is too unlikely (``runs_at`` gives each version's runs' locations by
    history position, asked only when there is such a stretch): in the segments on either side, a share ``f`` of the runs lie nearer their
    segment's fastest level than the stretch's; were the stretch's versions drawn like them, all
    its ``N`` runs would miss that level with probability ``(1 - f) ** N``, and where that,
    times the positions such a stretch could have been drawn at, is below ``alpha``, the stretch
    is a real slowdown undone, kept.  A probe: a history of 16 runs a version, each run
    at its version's level or 1.5 times it, had a +67% step and its -60% revert four versions later
    dropped as such a draw (all 64 runs of the stretch at the slow level, where 59% of their
    neighbours' runs were at the fast one: probability 1e-25).  With 5 runs at two levels (the
    probe shape above), two versions' 10 runs all slow is as likely as 1 - f is large."""
    bounds = [0, *cps, vs.mean.size]
    level = [float(np.mean(vs.mean[a:b])) for a, b in zip(bounds, bounds[1:])]
    out: set[int] = set()
    located: Mapping[int, np.ndarray] | None = None
    for i in range(1, len(level) - 1):
        if bounds[i + 1] - bounds[i] <= width and level[i] > max(level[i - 1], level[i + 1]):
            if runs_at is not None:
                located = runs_at() if located is None else located
                if _not_a_draw(vs, bounds, i, level, located, alpha):
                    continue
            out |= {bounds[i], bounds[i + 1]}
    return out


def _not_a_draw(vs: VersionStats, bounds: list[int], i: int, level: list[float], runs_at: Mapping[int, np.ndarray],
                alpha: float) -> bool:
    """Whether the slower stretch ``[bounds[i], bounds[i + 1])`` of ``vs`` is too unlikely a draw
    of its neighbours' levels to be one (:func:`_slow_stretches`)."""
    near = total = 0
    for j in (i - 1, i + 1):
        cut = (level[j] + level[i]) / 2  # nearer the side's fastest level than the stretch's
        for t in range(bounds[j], bounds[j + 1]):
            x = runs_at.get(int(vs.index[t]), np.empty(0))
            x = x[np.isfinite(x)]
            near += int(np.sum(x < cut))
            total += x.size
    inside = sum(int(np.isfinite(runs_at.get(int(vs.index[t]), np.empty(0))).sum())
                 for t in range(bounds[i], bounds[i + 1]))
    if total == 0 or inside == 0:
        return False
    share = near / total
    # Such a stretch could have been drawn at any of the history's positions (Bonferroni over
    # them): in a quiet 100-version history of 3 runs a version, 31% of them slow, two versions'
    # six runs all slow (probability 0.0009 at one place) were a false +17% and its revert.
    positions = max(1, vs.mean.size - (bounds[i + 1] - bounds[i]) + 1)
    return bool(share >= 1.0 or inside * np.log1p(-share) + np.log(positions) < np.log(alpha))


def _on_versions(vs: VersionStats, index: np.ndarray) -> VersionStats | None:
    """``vs`` on the versions ``index`` (history positions), or None when it lacks one of them."""
    pos = np.searchsorted(vs.index, index)
    if np.any(pos >= vs.index.size) or not np.array_equal(vs.index[pos], index):
        return None
    return VersionStats(vs.index[pos], vs.mean[pos], vs.var[pos], vs.n[pos], vs.log, vs.run_scale)


def _without(vs: VersionStats, start: int, stop: int) -> VersionStats:
    """``vs`` without the versions ``[start, stop)`` (the inside of a ramp)."""
    keep = np.r_[0:start, stop:vs.mean.size]
    return VersionStats(vs.index[keep], vs.mean[keep], vs.var[keep], vs.n[keep], vs.log, vs.run_scale)
