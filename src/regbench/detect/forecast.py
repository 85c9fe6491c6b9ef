"""``forecast``: prediction intervals of simple exponential smoothing (seed 003 s.5.2).

seed 003 (003_17e43d4a143bef6e.txt) s.5.2 proposes, instead of Talos' windows (s.5.1), to forecast
each new result from the ones before it by simple exponential smoothing,
``s_1 = x_0, s_t = s_{t-1} + alpha (x_{t-1} - s_{t-1})``, with ``alpha`` chosen "to minimize the
squared one-step prediction error", and to flag a new value that falls outside the prediction
interval of the forecast (Yar and Chatfield 1990, as in R's ``HoltWinters``).  A change is then
seen at once, from its first version, and a short-lived change that is reverted soon is not
averaged away (s.5.3).

Here one "result" is one version: the mean of its run means (seed 000 s.2); versions without a
successful run are skipped.  At every version ``t`` the smoothing factor is fitted on the
versions before it only (no peeking): ``alpha`` minimises the sum of squared one-step errors
``x_i - s_i`` of the history, the level starting at its first value as in ``HoltWinters``.  For
``h = 1`` the Yar-Chatfield interval is ``s_t +- q sigma``, sigma^2 being the one-step error
variance; here ``sigma^2 = SSE / (n - 1)`` over the ``n`` one-step errors of the history (one
parameter fitted) and ``q`` the Student quantile on ``n - 1`` degrees of freedom, not the normal
one ``HoltWinters`` uses, so that short histories do not give liberal p-values.  The p-value of a
change is ``2 F_{n-1}(-|x_t - s_t| / sigma)``, the two-sided tail of the new value under that
predictive distribution, and a value is a change when ``p < 1 - confidence_level`` (it lies
outside the interval) and ``|x_t / s_t - 1| >= min_change``.  The reported change is
``x_t / s_t - 1`` with the interval ``(x_t - s_t +- q sigma) / s_t``: the one-step error is the
error of ``x_t - s_t`` as an estimate of the shift.

After a change the level restarts at the new value and the smoothing factor is fitted afresh on
the new regime, so a step is reported once; the first ``min_history - 1`` versions after it are
not tested (there is no history to forecast from).

Short jumps that revert (``reverted``).  seed 003 s.5.3 counts them among the genuine changes: the
big jumps of August 2010 and February 2011 "go undetected by the current method since they are
followed by equally big jumps back soon after", and the prediction intervals find them; s.5.2
adds that such values, once reverted, are better left out of "the ones that are used for future
predictions to avoid intervals that are unnecessarily wide" (fig. 5b).  A value outside the
interval whose next version is back (the next value would not be a change against the same
forecast) is therefore, by default (``"report"``), reported, with ``detail`` "reverted at
<version>", and left out of the history: the level does not restart at it.  ``"drop"`` leaves it
out and does not report it (regbench's former default); ``"restart"`` treats it as any change.  A
step is reported at its first version in every mode; when its second version falls back inside
the old interval by chance, ``"report"`` reports the first as reverted and the step again a
version or two later, ``"drop"`` only later.  The newest version cannot be known to revert yet
and is reported as a change.

Measured on seeded series of 120 versions with iid normal noise and 99% intervals (300 series
per row; ``python tests/test_detect_forecast.py``, table in docs/detection.md): every value outside
the interval is reported, so a quiet series gets about 1.2 false changes without
false-discovery-rate control (``"drop"``: 0.05; ``"restart"``: 0.74), of which the
Benjamini-Hochberg control across series that ``regbench detect`` applies (``--fdr``) kept one
in 300 series; a 10 sd jump lasting one version is reported at its version in 98% of series
(``"drop"``: 0%), jumps of two or three versions in 98-100% (every mode finds those: the second
version is still out); steps of 4, 5, 7 and 10 sd at their version in 90%, 96%, 99% and 97%
(``"drop"``: 77%, 94%, 99%, 97%).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ..model import Series
from .base import Change, Detector, kind_of, register
from .talos_ttest import version_means

#: Smoothing factors tried at every prefix: 0 (the level stays at the first value, the lower
#: bound of R's and statsmodels' fits) and 97 log-spaced from 0.001 to 1, refined by a parabola.
ALPHAS = np.concatenate([[0.0], np.logspace(-3.0, 0.0, 97)])
_LOG_STEP = float(np.log(ALPHAS[2] / ALPHAS[1]))
#: What becomes of a short jump that reverts (see :class:`ForecastDetector`).
REVERTED = ("report", "drop", "restart")
#: Versions forecast per vectorised pass: a change ends the pass, so a long pass wastes work.
_CHUNK = 128


@dataclass(frozen=True)
class Forecasts:
    """One-step forecasts of a series by simple exponential smoothing (:func:`one_step_forecasts`).

    Element ``j`` forecasts ``values[j]`` from ``values[:j]`` (element 0 is NaN).

    Attributes
    ----------
    alpha : numpy.ndarray
        Smoothing factor minimising the squared one-step errors of ``values[:j]``.
    level : numpy.ndarray
        The forecast (the smoothed level after ``values[:j]``).
    sse : numpy.ndarray
        Sum of the ``j - 1`` squared one-step errors of ``values[:j]`` at ``alpha``.
    sigma : numpy.ndarray
        ``sqrt(sse / (j - 2))``: the one-step error's standard deviation (NaN for ``j < 3``).
    df : numpy.ndarray
        Degrees of freedom of ``sigma``, ``j - 2``.
    p_value : numpy.ndarray
        Two-sided p-value of ``values[j]`` under the Student predictive distribution.
    """

    alpha: np.ndarray
    level: np.ndarray
    sse: np.ndarray
    sigma: np.ndarray
    df: np.ndarray
    p_value: np.ndarray


@dataclass
class _State:
    """Smoothed level and SSE for every smoothing factor in :data:`ALPHAS` after a history."""

    level: np.ndarray
    sse: np.ndarray
    n_errors: int  # one-step errors in the SSE (history length - 1)

    @classmethod
    def start(cls, first: float) -> _State:
        return cls(np.full(ALPHAS.size, first), np.zeros(ALPHAS.size), 0)


@dataclass(frozen=True)
class _Chunk:
    level: np.ndarray  # (G, m): forecast of y[j] for every alpha (the level before y[j])
    sse: np.ndarray  # (G, m): SSE of the history before y[j] for every alpha
    alpha: np.ndarray  # (m,): the fitted alpha for y[j]
    forecast: np.ndarray  # (m,): the forecast of y[j] at the fitted alpha
    sse_min: np.ndarray  # (m,): the SSE of the history at the fitted alpha


def _forecast_chunk(state: _State, y: np.ndarray) -> _Chunk:
    """Forecasts of ``y[j]`` from the history plus ``y[:j]``, every ``alpha`` fitted afresh.

    Why by hand: statsmodels' ``SimpleExpSmoothing`` takes about 8 ms per fit, and fitting
    ``alpha`` at every prefix of a 500-version history (no peeking at later versions) would take
    4 s per series; this takes 5-12 ms.  Here the level recursion ``l_j = (1 - a) l_{j-1} + a y_j`` runs for all
    98 smoothing factors at once as a parallel prefix scan (log2(m) numpy steps), the SSE of every
    prefix is a cumulative sum, and the best factor per prefix is the grid minimum refined by a
    parabola through its neighbours in ``log(alpha)`` (tested against statsmodels).
    """
    a = ALPHAS[:, None]
    m = y.size
    # l_j = sum_{i<=j} (1-a)^(j-i) a y_i + (1-a)^(j+1) l_start, by Hillis-Steele doubling.
    s = a * y[None, :]
    decay = 1.0 - a
    step = 1
    while step < m:
        s[:, step:] = s[:, step:] + decay * s[:, :-step]
        decay = decay * decay
        step *= 2
    after = s + np.cumprod(np.broadcast_to(1.0 - a, (ALPHAS.size, m)), axis=1) * state.level[:, None]
    before = np.concatenate([state.level[:, None], after[:, :-1]], axis=1)
    err2 = (y[None, :] - before) ** 2
    sse = np.concatenate([state.sse[:, None], state.sse[:, None] + np.cumsum(err2[:, :-1], axis=1)], axis=1)
    best = np.argmin(sse, axis=0)
    cols = np.arange(m)
    # The parabola needs log-spaced neighbours: at alpha = 0, 0.001 or 1 keep the grid point.
    inner = (best > 1) & (best < ALPHAS.size - 1)
    g = np.clip(best, 1, ALPHAS.size - 2)
    f0, fm, fp = sse[g, cols], sse[g - 1, cols], sse[g + 1, cols]
    curv = fm - 2 * f0 + fp
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(inner & (curv > 0), np.clip(0.5 * (fm - fp) / curv, -0.5, 0.5), 0.0)
    l0, lm, lp = before[g, cols], before[g - 1, cols], before[g + 1, cols]
    forecast = np.where(delta != 0, l0 + delta * (lp - lm) / 2 + delta**2 * (lp - 2 * l0 + lm) / 2,
                        before[best, cols])
    sse_min = np.where(delta != 0, np.minimum(f0 - 0.25 * (fm - fp) * delta, f0), sse[best, cols])
    alpha = ALPHAS[best] * np.exp(delta * _LOG_STEP)
    return _Chunk(before, sse, alpha, forecast, np.maximum(sse_min, 0.0))


def _p_values(y: np.ndarray, forecast: np.ndarray, sse: np.ndarray, n_errors: np.ndarray):
    """Student predictive p-value and sigma of each ``y`` (NaN with fewer than two errors)."""
    from scipy.special import stdtr

    df = n_errors - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.where(df >= 1, np.sqrt(sse / np.maximum(df, 1)), np.nan)
        dev = np.abs(y - forecast)
        p = np.where(sigma > 0, 2 * stdtr(np.maximum(df, 1), -dev / sigma), np.where(dev == 0, 1.0, 0.0))
    return np.where(df >= 1, p, np.nan), sigma, df


def one_step_forecasts(values) -> Forecasts:
    """Simple exponential smoothing forecast of every value from the ones before it.

    The smoothing factor is fitted at every prefix, as :class:`ForecastDetector` does between
    changes; the level starts at ``values[0]`` (R's ``HoltWinters``; statsmodels'
    ``SimpleExpSmoothing(values[:j], initialization_method="known", initial_level=values[0])``).

    Parameters
    ----------
    values : array_like, 1-D
        Finite values in history order.

    Returns
    -------
    Forecasts

    References
    ----------
    seed 003 (003_17e43d4a143bef6e.txt) s.5.2.
    """
    from ..stats._validate import as_1d

    x = as_1d(values, "values")
    n = x.size
    nan = np.full(n, np.nan)
    out = {k: nan.copy() for k in ("alpha", "level", "sse", "sigma", "df", "p_value")}
    if n >= 2:
        state = _State.start(float(x[0]))
        for lo in range(1, n, _CHUNK):
            y = x[lo:lo + _CHUNK]
            c = _forecast_chunk(state, y)
            n_err = state.n_errors + np.arange(y.size)
            p, sigma, df = _p_values(y, c.forecast, c.sse_min, n_err)
            sl = slice(lo, lo + y.size)
            out["alpha"][sl], out["level"][sl], out["sse"][sl] = c.alpha, c.forecast, c.sse_min
            out["sigma"][sl], out["df"][sl], out["p_value"][sl] = sigma, np.where(df >= 1, df, np.nan), p
            state = _advance(state, c, y, y.size)
    return Forecasts(**out)


def _advance(state: _State, c: _Chunk, y: np.ndarray, j: int) -> _State:
    """The state after consuming ``y[:j]`` of a chunk (``1 <= j <= len(y)``)."""
    if j < y.size:
        return _State(c.level[:, j].copy(), c.sse[:, j].copy(), state.n_errors + j)
    # After the whole chunk: one more step past its last column.
    last = c.level[:, -1]
    a = ALPHAS
    return _State(last + a * (y[-1] - last), c.sse[:, -1] + (y[-1] - last) ** 2, state.n_errors + j)


@register
class ForecastDetector(Detector):
    """Values outside the exponential-smoothing prediction interval (seed 003 s.5.2).

    Parameters
    ----------
    confidence_level : float, keyword-only
        Of the prediction interval (a value outside it is a change) and of the change's interval.
    min_change : float, keyword-only
        Smallest relative deviation from the forecast reported (0: the paper has none).
    min_history : int, keyword-only
        Versions in the current regime before its values are tested (10; at least 3).  The
        predictive distribution accounts for a short history (Student quantile), but a
        smoothing factor fitted on fewer values is erratic.
    reverted : {"report", "drop", "restart"}, keyword-only
        What becomes of a short jump that reverts, a single out-of-interval value whose next
        version is back: ``"report"`` (default) reports it and leaves it out of later forecasts;
        ``"drop"`` leaves it out and does not report it; ``"restart"`` treats it as any change
        (reported, and the level restarts at it).  See the module docstring.
    """

    name = "forecast"
    p_values = True

    def __init__(self, *, confidence_level: float = 0.99, min_change: float = 0.0, min_history: int = 10,
                 reverted: str = "report"):
        super().__init__(confidence_level=confidence_level, min_change=min_change)
        if not isinstance(min_history, numbers.Integral) or isinstance(min_history, bool) or min_history < 3:
            raise ValueError("`min_history` must be an integer of at least 3")
        if reverted not in REVERTED:
            raise ValueError(f"`reverted` must be one of {', '.join(map(repr, REVERTED))}")
        # Annotated: after the isinstance check against numbers.Integral above, mypy cannot infer
        # these attributes' types in time for the methods that read them ([has-type]).
        self.min_history: int = int(min_history)
        self.reverted: str = reverted

    def detect(self, series: Series) -> list[Change]:
        return self.detect_counted(series)[0]

    def detect_counted(self, series: Series) -> tuple[list[Change], int]:
        """Changes and the number of versions tested against a forecast (one hypothesis each)."""
        from scipy.special import stdtrit

        index, x = version_means(series)
        n = x.size
        changes: list[Change] = []
        tested = 0
        if n <= self.min_history:
            return changes, tested
        state = _State.start(float(x[0]))
        pos = 1
        while pos < n:
            y = x[pos:pos + _CHUNK]
            c = _forecast_chunk(state, y)
            n_err = state.n_errors + np.arange(y.size)
            p, sigma, df = _p_values(y, c.forecast, c.sse_min, n_err)
            history = n_err + 1
            hits = np.flatnonzero(self._flags(y, c.forecast, p, history))
            if hits.size == 0:
                tested += int(np.count_nonzero(history >= self.min_history))
                state = _advance(state, c, y, y.size)
                pos += y.size
                continue
            j = int(hits[0])
            tested += int(np.count_nonzero(history[:j + 1] >= self.min_history))
            t = pos + j
            if j:
                state = _advance(state, c, y, j)
            back = False
            if self.reverted != "restart" and t + 1 < n:
                nxt = x[t + 1:t + 2]
                p_next, _, _ = _p_values(nxt, c.forecast[j:j + 1], c.sse_min[j:j + 1], n_err[j:j + 1])
                back = not self._flags(nxt, c.forecast[j:j + 1], p_next, n_err[j:j + 1] + 1)[0]
            if not (back and self.reverted == "drop"):
                level, s = float(c.forecast[j]), float(sigma[j])
                q = float(stdtrit(df[j], 0.5 + self.confidence_level / 2)) if np.isfinite(s) else 0.0
                change = x[t] / level - 1.0
                lo, hi = sorted(((x[t] - level - q * s) / level, (x[t] - level + q * s) / level))
                changes.append(Change(
                    benchmark=series.benchmark, config=series.config, machine=series.machine,
                    version=series.versions[index[t]].name, previous=series.versions[index[t - 1]].name,
                    change=float(change), ci_low=float(lo), ci_high=float(hi),
                    kind=kind_of(float(change), series.direction), method=self.name, p_value=float(p[j]),
                    detail=f"reverted at {series.versions[index[t + 1]].name}" if back else None))
            if back:
                pos = t + 1  # x[t] is left out: the state stays that of the history before it
                continue
            # The level restarts at the new regime.
            state = _State.start(float(x[t]))
            pos = t + 1
        return changes, tested

    def _flags(self, y, forecast, p, history) -> np.ndarray:
        """Whether each value is a change: tested, outside the interval and at least ``min_change``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(y / forecast - 1.0)
        ok = (history >= self.min_history) & np.isfinite(p) & np.isfinite(rel)
        return ok & (np.where(ok, p, 1.0) < 1 - self.confidence_level) & (np.where(ok, rel, 0.0) >= self.min_change)
