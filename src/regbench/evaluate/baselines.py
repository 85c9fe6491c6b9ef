"""Baselines the detectors are compared with: the Perfherder rule and Apache Otava.

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
``otava-mean``, ``otava-median``, ``otava-tuned``
    :func:`otava.analysis.compute_change_points` (Hunter's windowed E-divisive with a t-test merge
    step; Fleming et al., ICPE 2023) on the per-version mean of run means, or the per-version
    median of all samples, with Otava's defaults (window 50, p-value 0.001, no magnitude floor);
    ``otava-tuned`` is the variant that scored best among those tried on the default corpus (see
    :data:`OTAVA_VARIANTS`).  Needs ``apache-otava`` (``pip install 'regbench[evaluate]'``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from ..detect import Change, Detector, kind_of
from ..model import Series

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

    def detect(self, series: Series) -> list[Change]:
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
        return changes


def _load_otava() -> Callable:
    from ..extras import require

    return require("otava.analysis", what="the Otava baseline").compute_change_points


class OtavaBaseline(Detector):
    """Apache Otava's ``compute_change_points`` on per-version means or medians."""

    def __init__(self, *, name: str = "otava-mean", statistic: str = "mean", window_len: int = 50,
                 max_pvalue: float = 0.001, min_magnitude: float = 0.0):
        super().__init__(min_change=min_magnitude)
        if statistic not in ("mean", "median"):
            raise ValueError("`statistic` must be 'mean' or 'median'")
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

    def detect(self, series: Series) -> list[Change]:
        idx, data = [], []
        for k, runs in enumerate(series.runs):
            if not runs:
                continue
            if self.statistic == "mean":
                value = float(np.mean([np.mean(r) for r in runs]))
            else:
                value = float(np.median(np.concatenate(runs)))
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


#: Otava variants: name -> options.  ``otava-tuned`` was chosen on the default corpus (seed 0)
#: from max_pvalue in {1e-2, 1e-3, 1e-4, 1e-6} x min_magnitude in {0, 0.01, 0.02, 0.03} x
#: statistic in {mean, median}, by F1.
OTAVA_VARIANTS: dict[str, dict] = {
    "otava-mean": {"statistic": "mean"},
    "otava-median": {"statistic": "median"},
    "otava-tuned": {"statistic": "median", "max_pvalue": 0.001, "min_magnitude": 0.02},
}

#: Baseline name -> factory.
BASELINES: dict[str, Callable[[], Detector]] = {
    "perfherder": lambda: PerfherderRule(),
    "perfherder-versions": lambda: PerfherderRule(unit="version"),
    **{name: functools.partial(OtavaBaseline, name=name, **opts) for name, opts in OTAVA_VARIANTS.items()},
}


def make_baseline(name: str) -> Detector:
    """A baseline by name; :class:`~regbench.errors.MissingDependency` when it needs a package not installed."""
    try:
        factory = BASELINES[name]
    except KeyError:
        raise KeyError(name) from None
    return factory()
