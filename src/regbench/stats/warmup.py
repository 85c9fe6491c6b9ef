"""Automated warm-up detection: where the iterations of a run reach a steady state.

Seed 001 s.2.2 asks that a regression benchmark "recognize when the regression benchmark outputs
stable data as opposed to data distorted during the warm up period", and rejects the usual
practice, long fixed warm-ups or warm-ups "set by trial and error".  This module finds, per run,
how many leading iterations to drop, from the run's own samples:

* :func:`warmup_mser`: MSER-5 (White 1997; White, Cobb, Spratt 2000), the truncation rule that
  steady-state simulation studies rank best (Hoad, Robinson, Davies 2010): batch means of 5, and
  the truncation point that minimises the marginal standard error of what remains, searched over
  the first half;
* :func:`warmup_changepoint`: the alternative, a penalised least-squares change-point search on
  the mean, repeated forward until no significant change is left in the first half;
* :func:`detect_warmup`: one of them on every run and a summary across runs (a high quantile of
  the per-run counts, so one strange run does not dictate the warm-up of all).

Both are made robust to isolated outliers (a single slow iteration from an interrupt must not be
taken for the end of the warm-up) by winsorising the series at ``clip`` robust standard deviations
of its second half, and both report a Geweke check of the retained part as a confirmation.
MSER-5 also tests that what it truncates differs from the steady state (``bias_check``, at a
stated error rate ``alpha``), which stops it from cutting noise off runs that have no warm-up,
short runs included (``warmup = "auto"`` runs of 20 iterations: 0-2.7% cut, against 44-47%
before the check was a test; see :func:`warmup_mser`).

Measured accuracy (``python benchmarks/bench_clusters.py --warmup``: 200 seeded runs of 1000
iterations per row, noise sd 1%): on warm-ups that decay exponentially and end sharply after
L = 10 / 50 / 100 iterations, MSER-5 lands within +-10% of L in 68 / 85 / 87% of runs and is never
short (its misses cut a few batches too many), the change-point search in 98 / 98 / 100%; without a
warm-up MSER-5 cuts 1 run of 200 (4 under AR(1) noise with autocorrelation 0.9), the
change-point search 6 (12).  On gradual warm-ups (a linear ramp, or a warm-up on top of
a steady state that switches between two clusters) the change-point search stops short more
often (multimodal, L = 50: short in 87% of runs, median 30, against MSER's 62%, median 40).
Dropping too little leaves bias in the result, dropping too much only costs samples, so MSER-5 is
the default.

References
----------
seed 001 (001_0c28a3a14a5fab8a.txt), Bulej, Kalibera, Tuma, "Repeated Results Analysis for
Middleware Regression Benchmarking": s.2.2 (automated warm-up detection, no trial and error).

White, "An effective truncation heuristic for bias reduction in simulation output", Simulation
69 (1997); White, Cobb, Spratt, "A comparison of five steady-state truncation heuristics for
simulation", WSC 2000; Hoad, Robinson, Davies, "Automating warm-up length estimation", JORS 61
(2010); Geweke, "Evaluating the accuracy of sampling-based approaches to the calculation of
posterior moments", Bayesian Statistics 4 (1992).
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from ._validate import as_1d, check_positive_int

METHODS = ("mser", "changepoint")
_MAD = 1.482602218505602  # 1 / Phi^-1(3/4): MAD -> standard deviation for normal data


@dataclass(frozen=True)
class WarmupResult:
    """Warm-up of one run (result of :func:`warmup_mser` or :func:`warmup_changepoint`).

    Attributes
    ----------
    n_warmup : int
        Leading iterations to drop.
    method : str
        ``"mser"`` or ``"changepoint"``.
    steady_state : bool
        False when the answer is the end of the search range (half the run): the run may not
        have reached a steady state at all; a :class:`RuntimeWarning` says so.
    candidates : numpy.ndarray
        Truncation points (iterations) examined: ``0, b, 2b, ...`` for MSER, the accepted
        change-points in order for the change-point search.
    statistic : numpy.ndarray
        The MSER value of each candidate, or the cost reduction of each accepted change-point.
    geweke_z : float
        Geweke's z comparing the mean of the first 10% of the retained samples with the mean of
        the last 50% (standard errors by batch means, so auto-dependence is allowed for); NaN when
        fewer than 50 samples are retained.
    geweke_p : float
        Its two-sided p-value; a small value says the retained part still drifts.
    n : int
        Length of the run.
    bias_statistic : float
        MSER's bias check (:func:`warmup_mser`): the largest ``|T_c|``, the first ``c``
        iterations against the second half of the run, for ``c`` up to MSER's truncation; NaN
        when not tested (no truncation, the check off, or the change-point method).
    bias_critical : float
        The critical value ``|T|`` had to exceed for the truncation to be kept.
    """

    n_warmup: int
    method: str
    steady_state: bool
    candidates: np.ndarray
    statistic: np.ndarray
    geweke_z: float
    geweke_p: float
    n: int
    bias_statistic: float = math.nan
    bias_critical: float = math.nan


@dataclass(frozen=True)
class WarmupSummary:
    """Warm-up of several runs (result of :func:`detect_warmup`).

    Attributes
    ----------
    n_warmup : int
        Iterations to drop from every run: the ``quantile`` of ``per_run`` (method ``"higher"``,
        so with ten runs or fewer at 0.9 it is the largest).
    per_run : numpy.ndarray
        ``n_warmup`` of each run.
    results : tuple of WarmupResult
    method : str
    quantile : float
    """

    n_warmup: int
    per_run: np.ndarray
    results: tuple[WarmupResult, ...]
    method: str
    quantile: float

    @property
    def largest(self) -> int:
        return int(self.per_run.max())

    @property
    def unsteady_runs(self) -> np.ndarray:
        """Indices of runs that did not reach a steady state within their first half."""
        return np.flatnonzero([not r.steady_state for r in self.results])


def _check_clip(clip) -> float | None:
    if clip is None:
        return None
    if not isinstance(clip, numbers.Real) or not float(clip) > 0:
        raise ValueError("`clip` must be positive or None")
    return float(clip)


def _winsorise(x: np.ndarray, clip: float | None) -> np.ndarray:
    """Clip at ``median +- clip * robust sd`` of the second half.

    The second half is taken as steady state, the same assumption that limits the search to the
    first half.  Warm-up samples far from it stay far (at the clip bound), so the warm-up is
    still seen; an isolated spike loses the weight that would otherwise make MSER truncate past
    it (one sample of 20 sd in a batch of 5 outweighs tens of batches of noise).
    """
    if clip is None:
        return x
    tail = x[x.size // 2:]
    med = float(np.median(tail))
    sd = _MAD * float(np.median(np.abs(tail - med)))
    if sd == 0:  # over half the tail identical (coarse timer): fall back to the plain sd
        sd = float(tail.std())
    if sd == 0:
        return x
    return np.clip(x, med - clip * sd, med + clip * sd)


def _batch_se(x: np.ndarray) -> float:
    """Standard error of the mean of ``x`` by non-overlapping batch means (about sqrt(n) batches)."""
    k = max(int(math.isqrt(x.size)), 2)
    size = x.size // k
    means = x[: k * size].reshape(k, size).mean(axis=1)
    return float(means.std(ddof=1) / math.sqrt(k))


def _long_run_variance(x: np.ndarray) -> float:
    """``n Var(mean)`` by batch means: the variance a change-point cost must be scaled by.

    For independent samples it is the variance; auto-dependent samples (seed 000 s.4.1) wander,
    and a scale from the plain or the successive-difference variance would take their wandering
    for changes (with AR(1) noise of coefficient 0.5, such a penalty put the warm-up at a quarter
    of the run on average instead of at its true end).
    """
    return x.size * _batch_se(x) ** 2


def _geweke(x: np.ndarray) -> tuple[float, float]:
    if x.size < 50:
        return float("nan"), float("nan")
    first, last = x[: x.size // 10], x[x.size // 2:]
    se = math.hypot(_batch_se(first), _batch_se(last))
    diff = float(first.mean() - last.mean())
    if se == 0:
        return (0.0, 1.0) if diff == 0 else (math.copysign(math.inf, diff), 0.0)
    z = diff / se
    return z, float(2 * _st.norm.sf(abs(z)))


def _too_short(n: int, need: int, method: str) -> WarmupResult | None:
    if n >= need:
        return None
    warnings.warn(f"a run of {n} iterations is too short to detect a warm-up (needs {need}): none "
                  "dropped", RuntimeWarning, stacklevel=3)
    nan = float("nan")
    return WarmupResult(0, method, False, np.zeros(1, dtype=np.intp), np.full(1, np.nan), nan, nan, n)


def _finish(x: np.ndarray, n_warmup: int, steady: bool, limit: int, method: str, candidates,
            statistic, *, bias: tuple[float, float] = (math.nan, math.nan)) -> WarmupResult:
    if not steady:
        warnings.warn(f"warm-up reaches the end of the search range ({limit} of {x.size} iterations): "
                      "the run may never reach a steady state", RuntimeWarning, stacklevel=3)
    z, p = _geweke(x[n_warmup:])
    return WarmupResult(int(n_warmup), method, steady, np.asarray(candidates, dtype=np.intp),
                        np.asarray(statistic, dtype=float), z, p, int(x.size), *bias)


def _mser_curve(z: np.ndarray, d_max: int) -> np.ndarray:
    """``MSER(d) = sum_{j>=d} (z_j - mean_d)^2 / (m - d)^2`` for ``d = 0 .. d_max``."""
    m = z.size
    zc = z - z.mean()  # centred: the sum-of-squares identity below stays accurate
    s1 = np.cumsum(zc[::-1])[::-1]
    s2 = np.cumsum((zc * zc)[::-1])[::-1]
    rest = m - np.arange(m)
    ss = np.maximum(s2 - s1 * s1 / rest, 0.0)
    return (ss / rest**2)[: d_max + 1]


#: The bias check's null model: Gaussian AR(1) noise with this lag-1 autocorrelation.  Iterations
#: of a run are often auto-dependent (seed 000 s.4.1), and a run of 20 iterations is too short to
#: estimate how much; a critical value that holds at 0.5 holds for anything less dependent.
_NULL_PHI = 0.5
#: Clipping of the check, in robust standard deviations of the second half around its median: the
#: means at ``_LOC_CLIP`` (an iteration of warm-up stays far from the steady state, an isolated
#: spike cannot pull a mean by more), the spread at ``_SCALE_CLIP`` (the steady state's own).
_LOC_CLIP, _SCALE_CLIP = 8.0, 3.0
#: Monte Carlo draws of the null, and the longest series simulated (longer runs are tested on
#: batch means, which are less auto-dependent, so the critical value stays conservative).
_NULL_DRAWS, _NULL_MAX_N = 4000, 1000
#: Second halves at least this long also estimate the long-run variance (about 10 batch means).
_LRV_MIN_TAIL = 100


def _bias_statistics(x: np.ndarray) -> np.ndarray:
    """``T_c`` for every cut ``c = 1 .. n // 2`` of each row of ``x`` (shape ``(..., n)``).

    ``T_c = (mean(x[:c]) - mean(x[h:])) / (sd(x[h:]) sqrt(1 / c + 1 / (n - h)))`` with ``h = n // 2``:
    the first ``c`` iterations against the second half, the steady state by MSER's premise.  The
    means are of values clipped at :data:`_LOC_CLIP`, the standard deviation of values clipped at
    :data:`_SCALE_CLIP` robust standard deviations of the second half around its median; when
    the second half has at least :data:`_LRV_MIN_TAIL` iterations, the square root of their
    long-run variance (batch means) if that is larger.
    """
    n = x.shape[-1]
    h = n // 2
    tail = x[..., h:]
    med = np.median(tail, axis=-1, keepdims=True)
    sd = _MAD * np.median(np.abs(tail - med), axis=-1, keepdims=True)
    sd = np.where(sd == 0, tail.std(axis=-1, keepdims=True), sd)  # coarse timer: ties
    lo, hi = med - _LOC_CLIP * sd, med + _LOC_CLIP * sd
    loc = np.where(sd > 0, np.clip(x, lo, hi), x) - med  # centred: timings of 1e6 keep their digits
    spread = np.where(sd > 0, np.clip(tail, med - _SCALE_CLIP * sd, med + _SCALE_CLIP * sd), tail)
    cut = np.arange(1, h + 1)
    diff = np.cumsum(loc[..., :h], axis=-1) / cut - loc[..., h:].mean(axis=-1, keepdims=True)
    var = spread.var(axis=-1, ddof=1, keepdims=True)
    m = n - h
    if m >= _LRV_MIN_TAIL:
        # Long enough to estimate the long-run variance (batch means of about sqrt(m)): strongly
        # auto-dependent noise, beyond what the null allows, then widens the error itself.
        k = math.isqrt(m)
        size = m // k
        means = spread[..., : k * size].reshape(*spread.shape[:-1], k, size).mean(axis=-1)
        var = np.maximum(var, size * means.var(axis=-1, ddof=1, keepdims=True))
    se = np.sqrt(var) * np.sqrt(1 / cut + 1 / m)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, diff / np.where(se > 0, se, 1.0),
                        np.where(diff == 0, 0.0, np.copysign(np.inf, diff)))


@functools.lru_cache(maxsize=64)
def _bias_critical(n: int, alpha: float) -> float:
    """The ``1 - alpha`` quantile of ``max_c |T_c|`` under the null, by Monte Carlo.

    The null: no warm-up, Gaussian AR(1) noise with autocorrelation :data:`_NULL_PHI`
    (stationary from the first iteration).  ``T_c`` is scale-free, so the quantile depends on
    ``n`` only; the draws use a fixed seed, so it is the same number on every call.  The largest
    ``|T_c|`` over every cut bounds ``|T|`` at whichever cut MSER chooses, so the choice does not
    inflate the error rate.
    """
    rng = np.random.default_rng(0x5EED_0001)
    phi, innov = _NULL_PHI, math.sqrt(1 - _NULL_PHI**2)
    maxima = []
    for start in range(0, _NULL_DRAWS, 500):  # chunks keep memory at a few MB for n = 1000
        e = rng.standard_normal((min(500, _NULL_DRAWS - start), n))
        for t in range(1, n):
            e[:, t] = phi * e[:, t - 1] + innov * e[:, t]
        maxima.append(np.abs(_bias_statistics(e)).max(axis=-1))
    return float(np.quantile(np.concatenate(maxima), 1 - alpha))


def _bias_test(x: np.ndarray, cut: int, alpha: float) -> tuple[float, float]:
    """The largest ``|T_c|`` for ``c <= cut`` and its critical value.

    The largest, not ``|T_cut|``: MSER may cut well past a short warm-up (its curve is flat
    there), and the truncated stretch is then diluted by steady iterations; it differs from the
    steady state if any leading part of it does.
    """
    b = -(-x.size // _NULL_MAX_N)  # ceil: batch means of b iterations for long runs
    if b > 1:
        m = x.size // b
        x = x[: m * b].reshape(m, b).mean(axis=1)
        cut = min(max(1, round(cut / b)), m // 2)
    return float(np.abs(_bias_statistics(x)[:cut]).max()), _bias_critical(x.size, alpha)


def warmup_mser(series, *, batch_size: int = 5, refine: bool = True, bias_check: bool = True,
                alpha: float = 0.01, clip: float | None = 5.0) -> WarmupResult:
    """Warm-up of one run by MSER-5 (seed 001 s.2.2: detected, not set by trial and error).

    The run's iterations are grouped in batches of ``batch_size`` (5: MSER-5); for each
    truncation of ``d`` batches ``MSER(d) = sum_{j>=d} (Z_j - mean)^2 / (m - d)^2`` estimates the
    squared standard error of the mean of the batch means that remain, plus the bias the warm-up
    leaves in it.  The truncation that minimises it, searched over the first half of the run (past
    it the estimate rests on too few batches and is unstable), ends the warm-up, if the bias check
    confirms that there is one.

    Parameters
    ----------
    series : array_like, 1-D
        The iterations of one run, in order.
    batch_size : int, keyword-only
        ``b``; 5 is the published MSER-5.
    refine : bool, keyword-only
        Refine the answer to single iterations: MSER on the raw iterations (batch size 1),
        within one batch either side of MSER-5's truncation.  MSER-5 locates the end of the
        warm-up robustly but only to a multiple of ``b``; the refinement keeps its location and
        recovers the resolution (a warm-up of 37 iterations gives 37, not 40).
    bias_check : bool, keyword-only
        Keep MSER's truncation ``c`` only if the truncated iterations really differ from the
        retained ones, by a test whose error rate on runs without warm-up is at most ``alpha``
        (below); otherwise report no warm-up.  MSER always has a minimum, and on a run without
        warm-up its curve is nearly flat at the start, so the minimum lands a few batches in by
        chance, on short runs mostly at the end of the search range: textbook MSER-5 cuts
        something from about half the runs of 20 iterations that have no warm-up.
    alpha : float, keyword-only
        Error rate of the bias check: the probability of cutting a run that has no warm-up, for
        Gaussian noise with lag-1 autocorrelation up to 0.5 (less dependent or independent noise
        is cut less often).
    clip : float or None, keyword-only
        Winsorise at ``median +- clip * 1.4826 MAD`` of the second half before the search, so
        that an isolated outlier is not taken for the end of the warm-up; ``None`` and
        ``bias_check=False`` (and ``refine=False``) for the textbook MSER-5.

    Returns
    -------
    WarmupResult
        A run shorter than ``4 * batch_size`` gives ``n_warmup = 0``, ``steady_state = False``
        and a :class:`RuntimeWarning`.

    Notes
    -----
    The bias check.  MSER's statistic is the squared standard error of the retained mean plus
    the squared bias the truncated part leaves in it; Franklin and White (2008) read the
    truncation rule as a test of stationarity.  Here that test is made explicit.  With ``m`` and
    ``s`` the median and robust standard deviation (1.4826 MAD) of the second half of the run
    (the steady state, by MSER's own premise),

    ``T_c = (mean(x[:c]) - mean(x[c:])) / (sd(x[c:]) sqrt(1 / c + 1 / (n - c)))``

    where the means are of values clipped at ``m +- 8 s`` (an iteration of warm-up counts up to
    8 standard deviations, an isolated spike no more) and the standard deviation of values
    clipped at ``m +- 3 s`` (the spread of the steady state, not of its outliers).  The cut is
    kept when ``|T_c|`` exceeds the ``1 - alpha`` quantile of ``max_c |T_c|`` over every cut
    ``c = 1 .. n // 2`` for a run without warm-up whose noise is Gaussian AR(1) with
    autocorrelation 0.5, found by Monte Carlo (4,000 series, a fixed seed; once per run length).
    Taking the maximum over every cut makes the level hold whichever cut MSER chose; allowing
    autocorrelation 0.5 makes it hold for auto-dependent iterations (seed 000 s.4.1), whose
    amount a short run cannot estimate; when the second half has 100 iterations or more, its
    long-run variance (batch means) replaces the variance if it is larger, so that stronger
    dependence than that widens the error too (AR(1) 0.9, 1000 iterations: 4 of 200 runs cut).
    Runs longer than 1,000 iterations are tested on batch means (of ``ceil(n / 1000)``
    iterations).

    Measured (``tests/test_stats_warmup.py::test_auto_warmup_rates``; the table is in
    ``docs/statistics.md``): on runs of 20 iterations without warm-up, noise about 1% (normal,
    skewed with a floor, AR(1) 0.5, rare outliers), the former check (``|z| > 3`` against
    batch-means standard errors of the retained part) cut 44-47% of runs; this one cuts 0-2.7%
    (0-2.0% at 30 and 50 iterations).  Warm-ups of 10-100% over 3-15 iterations are cut more than
    one batch short in at most 3.3% of runs (before: up to 10.7%).

    References
    ----------
    seed 001 (001_0c28a3a14a5fab8a.txt) s.2.2; seed 000 (000_833974a369fcaf36.txt) s.4.1;
    White (1997); White, Cobb, Spratt (2000); Franklin, White, "Stationarity tests and MSER-5:
    exploring the intuition behind mean-squared-error-reduction in warm-up period
    determination", WSC 2008.
    """
    x = as_1d(series, "series")
    check_positive_int(batch_size, "batch_size")
    if not isinstance(alpha, numbers.Real) or not 0 < alpha < 1:
        raise ValueError("`alpha` must be in (0, 1)")
    clip = _check_clip(clip)
    short = _too_short(x.size, 4 * batch_size, "mser")
    if short is not None:
        return short
    w = _winsorise(x, clip)
    m = w.size // batch_size
    z = w[: m * batch_size].reshape(m, batch_size).mean(axis=1)
    d_max = m // 2
    curve = _mser_curve(z, d_max)
    d = int(np.argmin(curve))
    steady = d < d_max
    n_warmup = d * batch_size
    if refine and batch_size > 1 and steady:
        # Not at the end of the search range: there the warm-up may go on past it, and a
        # single-iteration MSER, noisier than MSER-5, would move the cut back into the warm-up.
        lo = max(0, n_warmup - batch_size)
        hi = min(n_warmup + batch_size, w.size // 2)
        raw = _mser_curve(w, hi)
        n_warmup = lo + int(np.argmin(raw[lo: hi + 1]))
    stat = crit = float("nan")
    if bias_check and n_warmup > 0:
        # Also at the end of the search range: on short runs noise puts MSER's minimum there
        # as often as not, and only a confirmed cut says the run may never settle.
        stat, crit = _bias_test(x, n_warmup, float(alpha))
        if not stat > crit:
            n_warmup, steady = 0, True
    return _finish(x, n_warmup, steady, d_max * batch_size, "mser", np.arange(d_max + 1) * batch_size, curve,
                   bias=(stat, crit))


def warmup_changepoint(series, *, penalty: float | None = None, clip: float | None = 5.0) -> WarmupResult:
    """Warm-up of one run by forward change-point search on the mean.

    The best single change of mean in the series (least squares: the split ``t`` that maximises
    the cost reduction ``t (n - t) / n * (mean_left - mean_right)^2``, searched over the first
    half) is accepted when the reduction exceeds ``penalty``; the search then restarts on what
    lies right of it, until no change is accepted.  The last accepted change ends the warm-up:
    a decaying warm-up becomes a staircase of changes and the search walks down it.

    Parameters
    ----------
    series : array_like, 1-D
        The iterations of one run, in order.
    penalty : float, keyword-only
        Cost reduction needed to accept a change, in squared units of the series; default the
        BIC ``2 s^2 log(n)`` with ``s^2`` the long-run variance of the second half of the run
        (by batch means, so that auto-dependent noise is not taken for changes).  On white
        noise it accepts a false change in about 3% of runs of 1000 iterations (measured over
        200 seeds); a larger penalty misses short warm-ups under auto-dependent noise.
    clip : float or None, keyword-only
        As in :func:`warmup_mser`.

    Returns
    -------
    WarmupResult
        A run shorter than 20 iterations gives ``n_warmup = 0``, ``steady_state = False`` and a
        :class:`RuntimeWarning`.

    References
    ----------
    seed 001 (001_0c28a3a14a5fab8a.txt) s.2.2; Killick, Eckley, "changepoint: an R package for
    changepoint analysis", J. Stat. Softw. 58 (2014) (penalised cost, single change in mean).
    """
    x = as_1d(series, "series")
    if penalty is not None and (not isinstance(penalty, numbers.Real) or not penalty > 0):
        raise ValueError("`penalty` must be positive")
    clip = _check_clip(clip)
    short = _too_short(x.size, 20, "changepoint")
    if short is not None:
        return short
    w = _winsorise(x, clip)
    limit = w.size // 2
    if penalty is None:
        # BIC: a change adds two parameters (its place and the new mean), each costing log(n)
        # in units of the (long-run) variance.
        penalty = 2 * _long_run_variance(w[limit:]) * math.log(w.size)
    start, accepted, gains = 0, [], []
    while start < limit and penalty > 0:
        seg = w[start:] - w[start:].mean()
        n = seg.size
        t = np.arange(1, n)
        left = np.cumsum(seg)[:-1]  # sum of the first t centred values; the right sum is -left
        gain = left * left * n / (t * (n - t))  # = t (n - t) / n * (mean_l - mean_r)^2
        gain = gain[: limit - start]  # splits within the first half of the run only
        best = int(np.argmax(gain))
        if gain[best] <= penalty:
            break
        start += best + 1
        accepted.append(start)
        gains.append(float(gain[best]))
    return _finish(x, start, start < limit, limit, "changepoint", accepted, gains)


_METHODS = {"mser": warmup_mser, "changepoint": warmup_changepoint}


def detect_warmup(runs: Sequence[np.ndarray], *, method: str = "mser", quantile: float = 0.9,
                  clip: float | None = 5.0) -> WarmupSummary:
    """Warm-up of each run and how many iterations to drop from all of them (seed 001 s.2.2).

    Parameters
    ----------
    runs : sequence of 1-D arrays
        The iterations of each run, in order, warm-up included.
    method : {"mser", "changepoint"}, keyword-only
        :func:`warmup_mser` (default) or :func:`warmup_changepoint`.
    quantile : float, keyword-only
        Of the per-run warm-ups, taken as the warm-up of all (``"higher"`` interpolation: an
        observed count, never below what that share of runs needs).  1.0 gives the largest.
    clip : float or None, keyword-only
        As in :func:`warmup_mser`.

    Returns
    -------
    WarmupSummary

    References
    ----------
    seed 001 (001_0c28a3a14a5fab8a.txt) s.2.2.
    """
    if method not in _METHODS:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, METHODS))}")
    if not isinstance(quantile, numbers.Real) or not 0 <= quantile <= 1:
        raise ValueError("`quantile` must be in [0, 1]")
    if isinstance(runs, np.ndarray) and runs.ndim == 1:
        raise ValueError("`runs` must be a sequence of runs (1-D arrays), not one run")
    arrays = [as_1d(r, "runs") for r in runs]
    if not arrays:
        raise ValueError("`runs` must contain at least one run")
    results = tuple(_METHODS[method](a, clip=clip) for a in arrays)
    per_run = np.array([r.n_warmup for r in results], dtype=np.intp)
    n = int(np.quantile(per_run, quantile, method="higher"))
    return WarmupSummary(n, per_run, results, method, float(quantile))
