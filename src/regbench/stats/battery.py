"""A battery of two-sample tests on run results, with normalising transformations and effect sizes.

Seed 001 s.3.3 compares the results of consecutive runs of two versions (one value per run, runs
as independent replicates) with the nonparametric Kolmogorov-Smirnov, Wilcoxon rank-sum and
Kruskal-Wallis tests, and with the two-sample t-test on the raw data and after a normalising
transformation (``log``, ``1/x``, ``1/sqrt(x)``), checking normality with Shapiro-Wilk; fig. 5
tabulates the p-values.  This module computes that table for one pair of versions, adds Welch's
t-test (unequal variances), the Levene and Brown-Forsythe tests for equal variances that seed 003
s.3.3.1 uses to show that noise control changed the spread, and two effect sizes: Cliff's delta
and the ratio of means with a bootstrap interval.  Every test is the :mod:`scipy.stats` function.

A test that scipy cannot decide on these data (too few values, identical values, a warning about
precision) gives NaN and is named in one :class:`RuntimeWarning`: undecidable, never
"significant" (STYLE.md habit 5).  Transformations that need positive data are skipped, with NaN
and a warning, when a value is zero or negative.

References
----------
seed 001 (001_0c28a3a14a5fab8a.txt), Bulej, Kalibera, Tuma, "Repeated Results Analysis for
Middleware Regression Benchmarking": s.3.3 and fig. 5.
seed 003 (003_17e43d4a143bef6e.txt), Larres, Potanin, Hirose: s.3.3.1 "The Levene Test" (Levene
1960, Brown and Forsythe 1974).
Cliff, "Dominance statistics", Psychological Bulletin 114(3), 1993; thresholds from Romano et
al., "Appropriate statistics for ordinal level data", 2006.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from ._validate import as_1d, check_confidence, check_positive_int
from .compare import compare_runs

#: Transformations of seed 001 s.3.3, in the order of fig. 5.
TRANSFORMS = ("raw", "log", "1/x", "1/sqrt(x)")

_TRANSFORM_FUNCS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "raw": lambda x: x,
    "log": np.log,
    "1/x": lambda x: 1.0 / x,
    "1/sqrt(x)": lambda x: 1.0 / np.sqrt(x),
}

#: Upper bounds of ``|delta|`` for "negligible", "small" and "medium" (Romano et al. 2006).
CLIFF_THRESHOLDS = (0.147, 0.33, 0.474)


@dataclass(frozen=True)
class TestResult:
    """One test of the battery.

    Attributes
    ----------
    name : str
        ``"Kolmogorov-Smirnov"``, ``"Wilcoxon rank-sum"``, ``"Kruskal-Wallis"``, ``"t-test"``,
        ``"Welch t-test"``, ``"Levene"`` or ``"Brown-Forsythe"``.
    transform : str
        One of :data:`TRANSFORMS`: the data the test ran on.
    statistic, pvalue : float
        NaN when the test is undefined on these data.
    note : str
        Why the test is NaN (empty when it is defined).
    """

    __test__ = False  # not a pytest test class, whatever its name

    name: str
    transform: str
    statistic: float
    pvalue: float
    note: str = ""


@dataclass(frozen=True)
class NormalityResult:
    """Shapiro-Wilk p-values of both samples under one transformation (NaN when undefined)."""

    transform: str
    pvalue_a: float
    pvalue_b: float

    @property
    def worst(self) -> float:
        """The smaller p-value: how normal the less normal-looking sample looks."""
        return float(min(self.pvalue_a, self.pvalue_b))


@dataclass(frozen=True)
class BatteryResult:
    """The two-sample battery of seed 001 fig. 5, with variance tests and effect sizes.

    Attributes
    ----------
    tests : tuple of TestResult
        Kolmogorov-Smirnov, Wilcoxon rank-sum (Mann-Whitney U), Kruskal-Wallis on raw data;
        Student's t-test on each of :data:`TRANSFORMS`; Welch's t-test on raw data.
    normality : tuple of NormalityResult
        Shapiro-Wilk of each sample under each transformation.
    best_transform : str or None
        The transformation whose less normal sample looks most normal (largest smaller
        Shapiro-Wilk p-value); None when no transformation could be tested.
    levene, brown_forsythe : TestResult
        Equality of variances, centred on the mean (Levene) and on the median (Brown-Forsythe).
    cliffs_delta : float
        ``P(b > a) - P(b < a)`` over all pairs: positive when B tends to be larger.
    cliffs_magnitude : str
        ``"negligible"``, ``"small"``, ``"medium"`` or ``"large"`` (:data:`CLIFF_THRESHOLDS`).
    ratio : float
        ``mean(b) / mean(a)``.
    ratio_ci_low, ratio_ci_high : float
        Bootstrap interval of ``ratio`` at level ``1 - alpha`` (resampling runs of each side).
    ratio_method : str
        The bootstrap method actually used (see :func:`~regbench.stats.compare_runs`).
    alpha : float
        Significance level.
    n_a, n_b : int
    """

    tests: tuple[TestResult, ...]
    normality: tuple[NormalityResult, ...]
    best_transform: str | None
    levene: TestResult
    brown_forsythe: TestResult
    cliffs_delta: float
    cliffs_magnitude: str
    ratio: float
    ratio_ci_low: float
    ratio_ci_high: float
    ratio_method: str
    alpha: float
    n_a: int
    n_b: int

    def test(self, name: str, transform: str = "raw") -> TestResult:
        """The result of test ``name`` on ``transform``-ed data."""
        for t in (*self.tests, self.levene, self.brown_forsythe):
            if t.name == name and t.transform == transform:
                return t
        raise KeyError(f"no test {name!r} on {transform!r} data in the battery")

    def significant(self, name: str, transform: str = "raw") -> bool | None:
        """Whether test ``name`` rejects at ``alpha``; None when it is undefined."""
        p = self.test(name, transform).pvalue
        return None if np.isnan(p) else bool(p < self.alpha)


def cliffs_delta(a, b) -> float:
    """Cliff's delta of ``b`` against ``a``: ``P(b > a) - P(b < a)``.

    Computed from ranks in ``O(n log n)`` (sorted ``a``, binary search for each value of ``b``);
    it equals ``2 U_b / (n_a n_b) - 1`` with ``U_b`` the Mann-Whitney statistic of ``b``.

    Parameters
    ----------
    a, b : array_like, 1-D
        Finite, non-empty samples.

    Returns
    -------
    float
        In ``[-1, 1]``; positive when values of ``b`` tend to be larger.

    References
    ----------
    Cliff (1993); used as the effect size beside the tests of seed 001 s.3.3.
    """
    x = as_1d(a, "a")
    y = as_1d(b, "b")
    if x.size == 0 or y.size == 0:
        raise ValueError("`a` and `b` must not be empty")
    s = np.sort(x)
    below = np.searchsorted(s, y, side="left").sum()           # pairs with a < b
    above = (s.size - np.searchsorted(s, y, side="right")).sum()  # pairs with a > b
    return float((below - above) / (s.size * y.size))


def cliffs_magnitude(delta: float) -> str:
    """``"negligible"``, ``"small"``, ``"medium"`` or ``"large"`` by :data:`CLIFF_THRESHOLDS`."""
    if not np.isfinite(delta) or abs(delta) > 1:
        raise ValueError("`delta` must be in [-1, 1]")
    d = abs(delta)
    for bound, label in zip(CLIFF_THRESHOLDS, ("negligible", "small", "medium")):
        if d < bound:
            return label
    return "large"


def _call(fn: Callable, *args, **kwargs) -> tuple[float, float, str]:
    """Run one scipy test; a warning from scipy (degenerate data) makes it NaN with the reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = fn(*args, **kwargs)
        except ValueError as exc:  # some scipy versions raise on degenerate data instead of warning
            return float("nan"), float("nan"), str(exc).splitlines()[0]
    degenerate = [w for w in caught if issubclass(w.category, (RuntimeWarning, UserWarning))]
    for w in caught:
        if w not in degenerate:  # not about the data: pass on untouched
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    stat, p = float(np.asarray(res.statistic)), float(np.asarray(res.pvalue))
    if degenerate or not np.isfinite(p):
        note = str(degenerate[0].message).splitlines()[0] if degenerate else "undefined on these data"
        return float("nan"), float("nan"), note
    return stat, p, ""


def compare_battery(a, b, *, alpha: float = 0.05, n_resamples: int = 10_000,
                    rng=None) -> BatteryResult:
    """Compare the run results of two versions with the test battery of seed 001 fig. 5.

    Parameters
    ----------
    a, b : array_like, 1-D
        One result per run (e.g. run medians) of the old (A) and the new (B) version.  Seed 001
        assumes the runs independent and identically distributed (runs after a reset).
    alpha : float, keyword-only
        Significance level (0.05 in seed 001 s.3.3); the ratio interval has level ``1 - alpha``.
    n_resamples : int, keyword-only
        Bootstrap resamples for the ratio interval.
    rng : int, numpy.random.Generator or None, keyword-only
        For the ratio interval.

    Returns
    -------
    BatteryResult
        Tests that cannot be computed on these data are NaN, and one :class:`RuntimeWarning`
        names them; transformations needing positive data are skipped when a value is not
        positive.

    Raises
    ------
    ValueError
        For a sample that is empty, not 1-D or not finite, or an invalid option.

    References
    ----------
    seed 001 (001_0c28a3a14a5fab8a.txt) s.3.3 and fig. 5; seed 003 (003_17e43d4a143bef6e.txt)
    s.3.3.1; Cliff (1993), Romano et al. (2006).
    """
    x = as_1d(a, "a")
    y = as_1d(b, "b")
    if x.size == 0 or y.size == 0:
        raise ValueError("`a` and `b` must not be empty")
    check_confidence(alpha, "alpha")
    check_positive_int(n_resamples, "n_resamples")

    undefined: list[str] = []

    def run(name: str, transform: str, fn: Callable, *args, **kwargs) -> TestResult:
        stat, p, note = _call(fn, *args, **kwargs)
        if note:
            undefined.append(f"{name} on {transform} data ({note})")
        return TestResult(name, transform, stat, p, note)

    positive = bool(np.all(x > 0) and np.all(y > 0))
    skipped = "non-positive values: transformation undefined"
    tests = [
        run("Kolmogorov-Smirnov", "raw", _st.ks_2samp, x, y),
        run("Wilcoxon rank-sum", "raw", _st.mannwhitneyu, x, y, alternative="two-sided"),
        run("Kruskal-Wallis", "raw", _st.kruskal, x, y),
    ]
    normality = []
    for tr in TRANSFORMS:
        if tr != "raw" and not positive:
            tests.append(TestResult("t-test", tr, float("nan"), float("nan"), skipped))
            normality.append(NormalityResult(tr, float("nan"), float("nan")))
            continue
        f = _TRANSFORM_FUNCS[tr]
        tx, ty = f(x), f(y)
        tests.append(run("t-test", tr, _st.ttest_ind, tx, ty, equal_var=True))
        sa = run("Shapiro-Wilk (a)", tr, _st.shapiro, tx)
        sb = run("Shapiro-Wilk (b)", tr, _st.shapiro, ty)
        normality.append(NormalityResult(tr, sa.pvalue, sb.pvalue))
    tests.append(run("Welch t-test", "raw", _st.ttest_ind, x, y, equal_var=False))
    levene = run("Levene", "raw", _st.levene, x, y, center="mean")
    brown_forsythe = run("Brown-Forsythe", "raw", _st.levene, x, y, center="median")

    if not positive:
        warnings.warn("compare_battery: a value is zero or negative, so the log, 1/x and "
                      "1/sqrt(x) transformations are skipped (NaN)", RuntimeWarning, stacklevel=2)
    if undefined:
        warnings.warn("compare_battery: undefined on these data, reported as NaN: "
                      + "; ".join(undefined), RuntimeWarning, stacklevel=2)

    tested = [nr for nr in normality if np.isfinite(nr.worst)]
    best = max(tested, key=lambda nr: nr.worst).transform if tested else None
    delta = cliffs_delta(x, y)
    cmp = compare_runs(x, y, confidence_level=1 - alpha, n_resamples=n_resamples, rng=rng)
    return BatteryResult(
        tests=tuple(tests), normality=tuple(normality), best_transform=best, levene=levene,
        brown_forsythe=brown_forsythe, cliffs_delta=delta, cliffs_magnitude=cliffs_magnitude(delta),
        ratio=1.0 + cmp.change, ratio_ci_low=1.0 + cmp.ci_low, ratio_ci_high=1.0 + cmp.ci_high,
        ratio_method=cmp.method, alpha=alpha, n_a=int(x.size), n_b=int(y.size),
    )
