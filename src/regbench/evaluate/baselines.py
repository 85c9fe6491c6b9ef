"""Baselines the detectors are compared with: the Perfherder rule, Apache Otava and asv's step detection.

They behave like detectors (a :class:`~regbench.detect.Detector` returning
:class:`~regbench.detect.Change` objects) but are not in the detector registry: they are
yardsticks for ``regbench evaluate``, not methods offered to ``regbench detect``.

``perfherder``
    The alerting rule of Mozilla's Perfherder as it is publicly described (the Talos t-test of
    seed 003 s.5.1 with the windows and threshold Perfherder uses today): for every version, a
    *back window* of the values of the versions before it (nearest first, until it holds at least
    12 values and at most 24, and not reaching further back than the last version where the test
    fired, with at least 12 versions allowed) and a *fore window* of the values of the version and
    the versions after it (until it holds at least 12 values) are compared with a Welch t statistic
    whose means and variances weight values linearly less the further their version is from the
    tested one.  A version is reported when both windows are full, ``|t| > 7``, its ``|t|`` is not
    below either neighbour's (so a change is reported once, not at every version whose windows
    straddle it), and the fore mean differs from the back mean by at least 2%.  A value is a *run*
    (one job, retriggers add values); ``perfherder-versions`` takes one value per version instead
    (the mean of its runs), as a push with one job gives.  Written from the description; no
    Perfherder code is used.
``otava-mean``, ``otava-median``, ``otava-low``, ``otava-tuned``
    :func:`otava.analysis.compute_change_points` (Hunter's windowed E-divisive with a t-test merge
    step; Fleming et al., ICPE 2023) on the per-version mean of run means, the per-version
    median of all samples, or their 10% quantile (a floor under interference), with Otava's defaults (window 50, p-value 0.001, no magnitude floor);
    ``otava-tuned`` is the variant that scored best among those tried on the default corpus (see
    :data:`OTAVA_VARIANTS`).  Needs ``apache-otava`` (``pip install 'regbench[evaluate]'``).
``asv-steps``
    airspeed velocity's regression detection, with asv's own functions and defaults, on what asv
    plots: each version's value is the median of its samples and its weight ``2 / (b - a)`` for
    the 99% interval ``[a, b]`` of that median (``asv_runner.statistics.compute_stats`` and
    ``asv._stats.get_weight``, as ``asv publish`` computes them); :func:`asv.step_detect.detect_steps`
    fits a piecewise-constant function to them (an L1 Potts model, its penalty chosen by asv's
    cross-validation) and :func:`asv.step_detect.detect_regressions` keeps the upward steps
    that exceed both fitted errors and asv's default threshold of 5% (``regressions_thresholds``)
    and are not undone later (asv reports regressions still present at the newest version).
    asv reports regressions only; here the same rule is also run on the mirrored fit (each
    segment's value ``v`` as ``1 / v``, its error ``e`` as ``e / v^2``), so that improvements are
    reported as asv would report them of the benchmark's speed.  Needs ``asv``
    (``pip install 'regbench[evaluate]'``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..detect import Change, Detector, kind_of
from ..model import Series
from ..stats.runs import LOW_QUANTILE

INSTALL_HINT = "pip install 'regbench[evaluate]'"


def _version_values(series: Series, unit: str) -> list[np.ndarray]:
    out: list[np.ndarray] = []
    for runs in series.runs:
        if not runs:
            out.append(np.empty(0))
            continue
        means = np.array([float(np.mean(r)) for r in runs])
        out.append(means if unit == "run" else np.array([means.mean()]))
    return out


def _weighted(values: list[np.ndarray]) -> tuple[float, float, int]:
    """Mean, variance and count of window values, each version's values weighted ``1 - r / D``
    (``r`` its rank from the tested version, ``D`` the versions in the window)."""
    d = len(values)
    w = np.concatenate([np.full(v.size, 1.0 - r / d) for r, v in enumerate(values)])
    x = np.concatenate(values)
    mean = float(np.sum(w * x) / np.sum(w))
    var = float(np.sum(w * (x - mean) ** 2) / np.sum(w))
    if x.size > 1:
        var *= x.size / (x.size - 1)
    return mean, var, int(x.size)


class PerfherderRule(Detector):
    """Perfherder's moving-window t-test (back 12-24, fore 12, ``|t| > 7``, 2%); see the module."""

    name = "perfherder"

    def __init__(self, *, min_back: int = 12, max_back: int = 24, fore: int = 12, t_threshold: float = 7.0,
                 min_change: float = 0.02, unit: str = "run", confidence_level: float = 0.99):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        for label, value in (("min_back", min_back), ("max_back", max_back), ("fore", fore)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"`{label}` must be a positive integer")
        if max_back < min_back:
            raise ValueError("`max_back` must be at least `min_back`")
        if not t_threshold > 0:
            raise ValueError("`t_threshold` must be positive")
        if unit not in ("run", "version"):
            raise ValueError("`unit` must be 'run' or 'version'")
        self.min_back, self.max_back, self.fore = min_back, max_back, fore
        self.t_threshold = float(t_threshold)
        self.unit = unit
        if unit == "version":
            self.name = "perfherder-versions"

    def not_analysable(self, series: Series) -> str | None:
        counts = [v.size for v in _version_values(series, self.unit)]
        counts = [c for c in counts if c]
        # The back window may reach max_back versions back (after a quiet stretch); if even that
        # cannot fill both windows at some version, no version is ever tested.
        for i in range(1, len(counts)):
            if sum(counts[max(0, i - self.max_back):i]) >= self.min_back and sum(counts[i:]) >= self.fore:
                return None
        return (f"too short for its windows ({self.min_back} values before a version, {self.fore} from it on): "
                f"{sum(counts)} values in {len(counts)} versions with data")

    def detect(self, series: Series) -> list[Change]:
        return self.detect_counted(series)[0]

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes, and the versions tested (those whose windows were full)."""
        values = _version_values(series, self.unit)
        idx = [k for k, v in enumerate(values) if v.size]  # versions with data, in order
        vals = [values[k] for k in idx]
        n = len(vals)
        t = np.zeros(n)
        full = np.zeros(n, dtype=bool)
        stats: dict[int, tuple[float, float, float]] = {}  # (back mean, fore mean, se) by position
        quiet_for = 0  # versions since |t| last exceeded the threshold
        for i in range(1, n):
            limit = min(max(quiet_for, self.min_back), self.max_back)
            back: list[np.ndarray] = []
            got = 0
            p = i - 1
            while p >= 0 and got < self.max_back and i - p <= limit:
                back.append(vals[p])
                got += vals[p].size
                p -= 1
            fore: list[np.ndarray] = []
            ahead = 0
            q = i
            while q < n and ahead < self.fore:
                fore.append(vals[q])
                ahead += vals[q].size
                q += 1
            mb, vb, nb = _weighted(back)
            mf, vf, nf = _weighted(fore)
            se = math.sqrt(vb / nb + vf / nf)
            if se > 0:
                t[i] = abs(mf - mb) / se
            elif mf != mb:
                t[i] = math.inf
            full[i] = got >= self.min_back and ahead >= self.fore
            stats[i] = (mb, mf, se)
            quiet_for = 0 if t[i] > self.t_threshold else quiet_for + 1
        changes = []
        for i in range(1, n):
            if not full[i] or not t[i] > self.t_threshold:
                continue
            if t[i - 1] > t[i] or (i + 1 < n and t[i + 1] > t[i]):
                continue
            mb, mf, se = stats[i]
            if not mb:
                continue
            rel = mf / mb - 1.0
            if abs(rel) < self.min_change:
                continue
            half = 2.5758293035489 * se / abs(mb)  # approximate 99% interval from the Welch error
            changes.append(Change(
                benchmark=series.benchmark, config=series.config, machine=series.machine,
                version=series.versions[idx[i]].name, previous=series.versions[idx[i - 1]].name,
                change=float(rel), ci_low=float(rel - half), ci_high=float(rel + half),
                kind=kind_of(rel, series.direction), method=self.name))
        return changes, int(np.count_nonzero(full))


def _load_otava() -> Callable:
    from ..extras import require

    return require("otava.analysis", what="the Otava baseline").compute_change_points


class OtavaBaseline(Detector):
    """Apache Otava's ``compute_change_points`` on per-version means, medians or low quantiles."""

    def __init__(self, *, name: str = "otava-mean", statistic: str = "mean", window_len: int = 50,
                 max_pvalue: float = 0.001, min_magnitude: float = 0.0):
        super().__init__(min_change=min_magnitude)
        if statistic not in ("mean", "median", "low"):
            raise ValueError("`statistic` must be 'mean', 'median' or 'low'")
        self.name = name
        self.statistic = statistic
        self.window_len = window_len
        self.max_pvalue = max_pvalue
        self.min_magnitude = min_magnitude
        self._compute = _load_otava()

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_compute", None)  # re-imported after unpickling in a worker
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._compute = _load_otava()

    def not_analysable(self, series: Series) -> str | None:
        usable = sum(1 for r in series.runs if len(r))
        return None if usable >= 3 else f"{usable} version(s) with data, Otava needs 3"

    def detect(self, series: Series) -> list[Change]:
        idx, data = [], []
        for k, runs in enumerate(series.runs):
            if not runs:
                continue
            if self.statistic == "mean":
                value = float(np.mean([np.mean(r) for r in runs]))
            elif self.statistic == "median":
                value = float(np.median(np.concatenate(runs)))
            else:  # the low quantile of the version's samples (a floor under interference)
                value = float(np.quantile(np.concatenate(runs), LOW_QUANTILE))
            idx.append(k)
            data.append(value)  # Python floats: Otava fails on numpy arrays
        if len(data) < 3:
            return []
        points, _ = self._compute(data, window_len=self.window_len, max_pvalue=self.max_pvalue,
                                  min_magnitude=self.min_magnitude)
        changes = []
        for cp in points:
            i = int(cp.index)
            if not 0 < i < len(idx):
                continue
            rel = float(cp.stats.forward_rel_change())
            changes.append(Change(
                benchmark=series.benchmark, config=series.config, machine=series.machine,
                version=series.versions[idx[i]].name, previous=series.versions[idx[i - 1]].name,
                change=rel, ci_low=float("nan"), ci_high=float("nan"), kind=kind_of(rel, series.direction),
                method=self.name, p_value=float(cp.stats.pvalue)))
        return changes


@dataclass(frozen=True)
class AsvFunctions:
    """The functions of asv that :class:`AsvSteps` calls (imported on first use)."""

    detect_steps: Callable
    detect_regressions: Callable
    compute_stats: Callable
    get_weight: Callable


def _load_asv() -> AsvFunctions:
    from ..extras import require

    what = "the asv-steps baseline"
    step_detect = require("asv.step_detect", what=what)
    stats = require("asv._stats", what=what)
    runner_stats = require("asv_runner.statistics", what=what)
    return AsvFunctions(step_detect.detect_steps, step_detect.detect_regressions, runner_stats.compute_stats,
                        stats.get_weight)


class AsvSteps(Detector):
    """asv's step detection and regression rule on per-version medians (see the module docstring)."""

    name = "asv-steps"

    def __init__(self, *, threshold: float = 0.05, min_size: int = 2):
        super().__init__(min_change=threshold)
        if not 0 <= threshold < 1:
            raise ValueError("`threshold` must be in [0, 1)")
        if not isinstance(min_size, int) or min_size < 1:
            raise ValueError("`min_size` must be a positive integer")
        self.threshold = float(threshold)
        self.min_size = min_size
        self._asv = _load_asv()

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_asv", None)  # re-imported after unpickling in a worker
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._asv = _load_asv()

    def not_analysable(self, series: Series) -> str | None:
        usable = sum(1 for r in series.runs if len(r))
        return None if usable >= 2 else f"{usable} version(s) with data, a step needs 2"

    def detect(self, series: Series) -> list[Change]:
        asv = self._asv
        idx, y, w = [], [], []
        for k, runs in enumerate(series.runs):
            if not runs:
                continue
            # What `asv publish` plots: the median of the samples, weighted by 2 / the width of
            # its 99% interval (None, then the median weight, when the interval is infinite).
            value, stats = asv.compute_stats([float(x) for x in np.concatenate(runs)], 1)
            idx.append(k)
            y.append(float(value))
            w.append(asv.get_weight(stats))
        if len(y) < 2:
            return []
        steps = asv.detect_steps(y, w)

        def jumps_of(fit: list) -> list[tuple[int, int]]:
            # detect_regressions gives (last index before, first index after, value before, best after)
            found = asv.detect_regressions(fit, self.threshold, self.min_size)[2] or []
            return [(before, after) for before, after, *_ in found]

        jumps = jumps_of(steps)
        if all(v > 0 for _, _, v, _, _ in steps):
            jumps += jumps_of([(left, right, 1 / v, 1 / v, err / v ** 2) for left, right, v, _, err in steps])
        value_at = {}
        for left, right, v, _, _ in steps:
            for i in range(left, right):
                value_at[i] = v
        changes = []
        for before, after in sorted(jumps, key=lambda j: j[1]):
            v0, v1 = value_at.get(before), value_at.get(after)
            if not v0 or v1 is None:
                continue
            rel = v1 / v0 - 1.0
            changes.append(Change(
                benchmark=series.benchmark, config=series.config, machine=series.machine,
                version=series.versions[idx[after]].name, previous=series.versions[idx[before]].name,
                change=float(rel), ci_low=float("nan"), ci_high=float("nan"), kind=kind_of(rel, series.direction),
                method=self.name))
        return changes


#: Otava variants: name -> options.  ``otava-tuned`` was chosen on the default corpus (seed 0)
#: from max_pvalue in {1e-2, 1e-3, 1e-4, 1e-6} x min_magnitude in {0, 0.01, 0.02, 0.03} x
#: statistic in {mean, median}, by F1.
OTAVA_VARIANTS: dict[str, dict] = {
    "otava-mean": {"statistic": "mean"},
    "otava-median": {"statistic": "median"},
    "otava-low": {"statistic": "low"},
    "otava-tuned": {"statistic": "median", "max_pvalue": 0.001, "min_magnitude": 0.02},
}

#: Baseline name -> factory.
BASELINES: dict[str, Callable[[], Detector]] = {
    "perfherder": lambda: PerfherderRule(),
    "perfherder-versions": lambda: PerfherderRule(unit="version"),
    **{name: functools.partial(OtavaBaseline, name=name, **opts) for name, opts in OTAVA_VARIANTS.items()},
    "asv-steps": lambda: AsvSteps(),
}


def make_baseline(name: str) -> Detector:
    """A baseline by name; :class:`~regbench.errors.MissingDependency` when it needs a package not installed."""
    try:
        factory = BASELINES[name]
    except KeyError:
        raise KeyError(name) from None
    return factory()
