"""Sequential comparison with the t-mixture confidence sequence (Lai 1976; Wang and Ramdas 2024)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import integrate, stats

from regbench.stats.sequential import (
    DECISIONS,
    DEFAULT_C,
    NOISES,
    ConfidenceSequence,
    SequentialDecision,
    _noise,
    _simulate_log_ratios,
    sequential_decision,
    simulate_error_rates,
    t_mixture_cs,
    t_mixture_path,
)


def margin(alpha: float, n_sim: int) -> float:
    """Upper limit for a simulated rate whose true value is at most ``alpha`` (3 binomial sd)."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / n_sim)


# ------------------------------------------------------------------------------------------
# 1. The closed form against a direct numerical integration of the two mixtures
# ------------------------------------------------------------------------------------------


def mixture_ratio_by_quadrature(x: np.ndarray, mu: float, c: float) -> float:
    """M_n(mu) as the ratio of the mixture likelihood to the null likelihood, integrated numerically.

    With ``y = x - mu``, alternative ``y_i ~ N(theta sigma, sigma^2)``, ``theta ~ N(0, 1/c)``, null
    ``theta = 0``, and the right Haar measure ``d sigma / sigma`` on the scale (by Wijsman's
    representation this is the likelihood ratio of the maximal invariant of ``y`` under scaling).
    Integrated over ``t = log(sigma)`` and ``theta``; nothing of the closed form is used.
    """
    y = np.asarray(x, dtype=float) - mu
    n = y.size
    s, v = float(y.sum()), float((y * y).sum())
    t0 = 0.5 * math.log(v / n)  # mode of the null integrand; exponents are taken relative to it
    top = -n * t0 - n / 2
    lo_t, hi_t = t0 - 12, t0 + 80 / n

    def log_lik(theta: float, t: float) -> float:
        # log of sigma^-n exp(-sum (y - theta sigma)^2 / (2 sigma^2)), sigma = e^t
        return -n * t - (v * math.exp(-2 * t) - 2 * theta * s * math.exp(-t) + n * theta**2) / 2 - top

    prior = math.sqrt(c / (2 * math.pi))
    opts = dict(epsabs=0.0, epsrel=1e-11, limit=200)

    def inner(t: float) -> float:
        centre = s * math.exp(-t) / (n + c)  # where theta's integrand peaks
        width = 14 / math.sqrt(n + c)
        return integrate.quad(lambda th: math.exp(log_lik(th, t) - c * th**2 / 2) * prior,
                              centre - width, centre + width, **opts)[0]

    num = integrate.quad(inner, lo_t, hi_t, **opts)[0]
    den = integrate.quad(lambda t: math.exp(log_lik(0.0, t)), lo_t, hi_t, **opts)[0]
    return num / den


def mixture_ratio_closed_form(x: np.ndarray, mu: float, c: float) -> float:
    y = np.asarray(x, dtype=float) - mu
    n, s, v = y.size, y.sum(), (y * y).sum()
    return math.sqrt(c / (n + c)) * (v / (v - s * s / (n + c))) ** (n / 2)


@pytest.mark.parametrize("n, c, alpha", [(5, 1.0, 0.05), (12, 0.5, 0.01), (30, 3.0, 0.1), (8, DEFAULT_C, 0.2)])
def test_endpoints_solve_the_mixture_martingale_by_quadrature(n, c, alpha):
    x = np.random.default_rng(n).normal(0.03, 0.02, n)
    cs = t_mixture_cs(x, alpha=alpha, c=c)
    assert np.isfinite(cs.low) and np.isfinite(cs.high)
    for end in (cs.low, cs.high):
        assert mixture_ratio_by_quadrature(x, end, c) == pytest.approx(1 / alpha, rel=1e-6)
    # Inside the interval the statistic is below 1/alpha, outside above it.
    assert mixture_ratio_by_quadrature(x, cs.estimate, c) < 1 / alpha
    width = cs.high - cs.low
    assert mixture_ratio_by_quadrature(x, cs.high + 0.1 * width, c) > 1 / alpha
    # The stated closed form of the statistic is the same integral (a check of the check).
    mu = cs.estimate + 0.3 * width
    assert mixture_ratio_closed_form(x, mu, c) == pytest.approx(mixture_ratio_by_quadrature(x, mu, c),
                                                                 rel=1e-7)


@pytest.mark.parametrize("c, alpha", [(1.0, 0.05), (0.1, 0.05), (5.0, 0.01), (0.002, 0.2)])
def test_interval_is_bounded_exactly_when_the_supremum_exceeds_one_over_alpha(c, alpha):
    # As |mu| -> infinity, M_n(mu) -> ((n + c) / c)^((n - 1) / 2); below 1/alpha every mu stays in.
    x = np.random.default_rng(0).normal(size=60)
    for n in range(1, 61):
        cs = t_mixture_cs(x[:n], alpha=alpha, c=c)
        bounded = (n - 1) / 2 * math.log1p(n / c) > math.log(1 / alpha)
        assert np.isfinite(cs.high) == bounded, n
        assert np.isfinite(cs.low) == bounded, n
        if not bounded:
            assert (cs.low, cs.high) == (-np.inf, np.inf)
    # One observation carries no information about the scale: M_1 = 1 < 1/alpha for every c.
    assert t_mixture_cs([0.5], alpha=0.5, c=1e-9).high == np.inf


def test_the_default_c_is_tightest_near_a_dozen_pairs():
    # Half-width in units of the sample sd: h / s = sqrt(q (n + c) (n - 1) / (n (n - q (n + c)))).
    def relative_width(n, c, alpha=0.05):
        q = 1 - (math.sqrt((n + c) / c) / alpha) ** (-2 / n)
        den = n - q * (n + c)
        return math.sqrt(q * (n + c) * (n - 1) / (n * den)) if den > 0 else math.inf

    cs = np.logspace(-2, 2, 801)
    best = {n: min(relative_width(n, c) for c in cs) for n in (8, 10, 13, 20, 30)}
    for n, w in best.items():
        assert relative_width(n, DEFAULT_C) <= 1.03 * w, n
    assert cs[np.argmin([relative_width(13, c) for c in cs])] == pytest.approx(DEFAULT_C, rel=0.1)
    # And the formula above is the function's.
    x = np.random.default_rng(3).normal(size=20)
    got = t_mixture_cs(x, c=DEFAULT_C)
    assert (got.high - got.low) / 2 == pytest.approx(relative_width(20, DEFAULT_C) * x.std(ddof=1), rel=1e-12)


# ------------------------------------------------------------------------------------------
# 2. The vectorised path against the single interval
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("loc, scale, c, alpha", [(0.0, 1.0, 1.0, 0.05), (5.0, 0.01, 0.3, 0.01),
                                                  (-0.02, 0.02, 4.0, 0.1)])
def test_path_agrees_with_the_interval_of_every_prefix(loc, scale, c, alpha):
    # loc = 5 with sd 0.01 would lose digits with raw second moments; the path must not.
    x = np.random.default_rng(11).normal(loc, scale, 80)
    low, high = t_mixture_path(x, alpha=alpha, c=c)
    assert low.shape == high.shape == (80,)
    for n in range(1, 81):
        cs = t_mixture_cs(x[:n], alpha=alpha, c=c)
        if np.isfinite(cs.high):
            assert low[n - 1] == pytest.approx(cs.low, rel=1e-9, abs=1e-12 * scale)
            assert high[n - 1] == pytest.approx(cs.high, rel=1e-9, abs=1e-12 * scale)
        else:
            assert (low[n - 1], high[n - 1]) == (-np.inf, np.inf)
    assert t_mixture_path([])[0].shape == (0,)


# ------------------------------------------------------------------------------------------
# 3. Coverage under continuous monitoring, and the naive interval for contrast
# ------------------------------------------------------------------------------------------


def test_coverage_under_continuous_monitoring_and_the_naive_t_interval_does_not_hold():
    alpha, n_sim, length, mu = 0.05, 2000, 200, 0.01
    x = np.random.default_rng(2024).normal(mu, 0.02, (n_sim, length))
    ever_missed = np.empty(n_sim, dtype=bool)
    for i, row in enumerate(x):
        low, high = t_mixture_path(row, alpha=alpha)
        ever_missed[i] = np.any((low > mu) | (high < mu))
    assert 0 < ever_missed.mean() <= margin(alpha, n_sim)

    # The fixed-n 95% t interval, recomputed after every observation from n = 2 on.
    n = np.arange(2, length + 1)
    csum = np.cumsum(x, axis=1)[:, 1:]
    mean = csum / n
    sd = np.sqrt((np.cumsum(x * x, axis=1)[:, 1:] - n * mean**2) / (n - 1))
    half = stats.t.ppf(1 - alpha / 2, n - 1) * sd / np.sqrt(n)
    naive_missed = (np.abs(mean - mu) > half).any(axis=1)
    assert naive_missed.mean() > 2 * alpha  # it misses in about half of the sequences
    assert naive_missed.mean() > 5 * ever_missed.mean()


# ------------------------------------------------------------------------------------------
# 4. Error rates of the decision rule by simulation
# ------------------------------------------------------------------------------------------

THRESHOLD = 0.03
CASES = [
    # (effect, threshold, what a wrong decision is)
    (0.0, THRESHOLD, "changed"),
    (0.0, 0.0, "changed"),  # threshold 0: monitored to max_n, wrong = ever excluding 0
    (THRESHOLD, THRESHOLD, "no change"),
    (-THRESHOLD, THRESHOLD, "no change"),
    (-THRESHOLD / (1 + THRESHOLD), THRESHOLD, "no change"),  # exactly on the log-scale band edge
]


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("effect, threshold, wrong", CASES)
def test_error_rates_hold_under_continuous_monitoring(noise, effect, threshold, wrong):
    alpha, n_sim = 0.05, 2000
    r = simulate_error_rates(effect=effect, threshold=threshold, alpha=alpha, n_sim=n_sim, noise=noise,
                             rng=7)
    assert r.rate_changed + r.rate_no_change + r.rate_undecided == pytest.approx(1.0)
    assert r.wrong_rate <= margin(alpha, n_sim)
    assert r.coverage_miss_rate <= margin(alpha, n_sim)
    # A wrong decision needs the confidence sequence to miss at that moment.
    assert r.wrong_rate <= r.coverage_miss_rate
    if wrong == "changed":  # effect 0: every "changed" is wrong, every "no change" right
        assert r.wrong_rate == r.rate_changed
    else:  # |effect| at or beyond the band: every "no change" is wrong (and a wrong-signed "changed")
        assert r.rate_no_change <= r.wrong_rate
    if threshold == 0:
        assert r.rate_no_change == 0.0
        assert r.wrong_rate == r.rate_changed  # every "changed" here is an exclusion of the true 0


def test_simulation_matches_the_decision_function_pair_by_pair():
    # The vectorised simulation against the plain function called after every pair.
    kw = dict(effect=0.02, sigma=0.03, n_sim=25, max_n=40, noise="t5")
    r = simulate_error_rates(threshold=0.03, min_n=4, rng=np.random.default_rng(5), **kw)
    x = _simulate_log_ratios(np.random.default_rng(5), **kw)
    for i, row in enumerate(x):
        decision, n_used = "undecided", 40
        for n in range(1, 41):
            d = sequential_decision(row[:n], threshold=0.03, min_n=4)
            if d.decision != "undecided":
                decision, n_used = d.decision, n
                break
        assert (r.decisions[i], r.n_used[i]) == (decision, n_used)
    assert set(r.decisions) <= set(DECISIONS)
    assert r.mean_n == pytest.approx(r.n_used.mean())


@pytest.mark.parametrize("noise", NOISES)
def test_noise_models_have_unit_sd_and_are_symmetric(noise):
    z = _noise(np.random.default_rng(1), noise, (1000, 1000)).ravel()
    assert z.std() == pytest.approx(1.0, rel=0.01)
    assert abs(z.mean()) < 0.005
    if noise == "t5":  # heavy tails: excess kurtosis 6 in theory
        assert stats.kurtosis(z) > 3


def test_simulation_is_reproducible():
    a = simulate_error_rates(effect=0.0, threshold=0.03, rng=3)
    b = simulate_error_rates(effect=0.0, threshold=0.03, rng=3)
    assert a.wrong_rate == b.wrong_rate and np.array_equal(a.n_used, b.n_used)
    assert (a.n_sim, a.max_n, a.noise, a.sigma) == (2000, 200, "normal", 0.02)


# ------------------------------------------------------------------------------------------
# 5. Decisions
# ------------------------------------------------------------------------------------------


def first_decision(x, **kw) -> SequentialDecision:
    for n in range(1, len(x) + 1):
        d = sequential_decision(x[:n], **kw)
        if d.decision != "undecided":
            return d
    return d


@pytest.mark.parametrize("effect", [0.2, -0.2])
def test_a_big_effect_settles_changed_fast_with_the_right_sign(effect):
    x = np.log1p(effect) + np.random.default_rng(8).normal(0, 0.02, 50)
    d = first_decision(x, threshold=0.03)
    assert d.decision == "changed"
    assert d.n <= 8
    assert np.sign(d.change) == np.sign(effect)
    assert d.ci_low < effect < d.ci_high
    assert d.change == pytest.approx(math.expm1(np.mean(x[:d.n])))
    assert d.ci_low == pytest.approx(math.expm1(d.cs.low)) and d.ci_high == pytest.approx(math.expm1(d.cs.high))


def test_a_zero_effect_settles_no_change():
    x = np.random.default_rng(9).normal(0, 0.005, 50)
    d = first_decision(x, threshold=0.05)
    assert d.decision == "no change"
    assert d.n <= 8
    assert -math.log1p(0.05) < d.cs.low < d.cs.high < math.log1p(0.05)


def test_a_real_change_smaller_than_the_threshold_is_reported_changed():
    x = 0.01 + np.random.default_rng(10).normal(0, 1e-4, 10)
    d = sequential_decision(x, threshold=0.05)
    # Both conditions hold: the interval excludes 0 and lies inside the band.
    assert 0 < d.cs.low < d.cs.high < math.log1p(0.05)
    assert d.decision == "changed" and d.change > 0


def test_threshold_zero_never_decides_no_change_and_min_n_is_respected():
    x = np.random.default_rng(12).normal(0, 0.01, 200)
    assert sequential_decision(x, threshold=0.0).decision == "undecided"
    assert sequential_decision(x, threshold=0.1).decision == "no change"
    # With a tiny c the interval is bounded at n = 2; min_n still holds the decision back.
    y = [0.5, 0.5001]
    assert np.isfinite(t_mixture_cs(y, c=0.001).high)
    assert sequential_decision(y, threshold=0.03, c=0.001, min_n=3).decision == "undecided"
    assert sequential_decision(y, threshold=0.03, c=0.001, min_n=2).decision == "changed"


def test_unbounded_empty_and_degenerate_sequences_are_undecided():
    d = sequential_decision([0.1, 0.2, 0.15], threshold=0.03)
    assert d.decision == "undecided" and (d.ci_low, d.ci_high) == (-1.0, math.inf)
    assert d.cs.n == 3 and d.n == 3

    empty = sequential_decision([], threshold=0.03)
    assert empty.decision == "undecided" and empty.n == 0 and math.isnan(empty.change)
    cs = t_mixture_cs([])
    assert isinstance(cs, ConfidenceSequence) and math.isnan(cs.estimate)
    assert (cs.n, cs.low, cs.high, cs.alpha, cs.c) == (0, -np.inf, np.inf, 0.05, DEFAULT_C)

    with pytest.warns(RuntimeWarning, match="all observations are equal"):
        tied = sequential_decision([0.1] * 10, threshold=0.03)
    assert tied.decision == "undecided" and math.isnan(tied.ci_low) and math.isnan(tied.cs.high)
    with pytest.warns(RuntimeWarning, match="all observations are equal"):
        low, high = t_mixture_path([0.0] * 6 + [0.01, -0.01])
    assert np.isnan(low[4]) and np.isfinite(low[7]) and low[0] == -np.inf


# ------------------------------------------------------------------------------------------
# 6. Validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call, match", [
    (lambda: t_mixture_cs([1.0, 2.0], alpha=0.0), "`alpha` must be in \\(0, 1\\)"),
    (lambda: t_mixture_cs([1.0, 2.0], alpha=1.5), "`alpha` must be in \\(0, 1\\)"),
    (lambda: t_mixture_cs([1.0, 2.0], c=0.0), "`c` must be a positive finite number"),
    (lambda: t_mixture_cs([1.0, 2.0], c=np.inf), "`c` must be a positive finite number"),
    (lambda: t_mixture_cs(np.ones((2, 3))), "`x` must be one-dimensional"),
    (lambda: t_mixture_cs([1.0, np.nan]), "`x` must contain only finite numbers"),
    (lambda: t_mixture_path([1.0, np.inf]), "`x` must contain only finite numbers"),
    (lambda: t_mixture_path([1.0, 2.0], alpha=-1), "`alpha` must be in \\(0, 1\\)"),
    (lambda: sequential_decision([0.1], threshold=-0.01), "`threshold` must be a non-negative finite number"),
    (lambda: sequential_decision([0.1], threshold=np.nan), "`threshold` must be a non-negative finite number"),
    (lambda: sequential_decision([0.1], threshold=0.03, min_n=1), "`min_n` must be an integer >= 2"),
    (lambda: sequential_decision([0.1], threshold=0.03, min_n=2.5), "`min_n` must be an integer >= 2"),
    (lambda: sequential_decision([0.1], threshold=0.03, alpha=1), "`alpha` must be in \\(0, 1\\)"),
    (lambda: sequential_decision([0.1], threshold=0.03, c=-1), "`c` must be a positive finite number"),
    (lambda: sequential_decision([[0.1]], threshold=0.03), "`log_ratios` must be one-dimensional"),
    (lambda: sequential_decision([0.1, np.inf], threshold=0.03), "`log_ratios` must contain only finite"),
    (lambda: simulate_error_rates(effect=-1.0, threshold=0.03), "`effect` must be a finite number > -1"),
    (lambda: simulate_error_rates(effect=0.0, threshold=0.03, sigma=0), "`sigma` must be a positive finite"),
    (lambda: simulate_error_rates(effect=0.0, threshold=0.03, n_sim=0), "`n_sim` must be a positive integer"),
    (lambda: simulate_error_rates(effect=0.0, threshold=0.03, max_n=2.0), "`max_n` must be a positive integer"),
    (lambda: simulate_error_rates(effect=0.0, threshold=0.03, noise="cauchy"), "`noise` must be one of"),
    (lambda: simulate_error_rates(effect=0.0, threshold=-1), "`threshold` must be a non-negative"),
    (lambda: simulate_error_rates(effect=0.0, threshold=0.03, min_n=0), "`min_n` must be an integer >= 2"),
])
def test_validation_messages_name_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------------------------------
# 7. Layering
# ------------------------------------------------------------------------------------------


def test_stats_module_imports_neither_scipy_stats_nor_the_store():
    code = ("import sys, regbench.stats.sequential as m; m.sequential_decision([0.01, 0.02, 0.0, 0.01], "
            "threshold=0.03); m.simulate_error_rates(effect=0.0, threshold=0.03, n_sim=10, rng=0); "
            "print(any(k in sys.modules for k in ('scipy.stats', 'sqlalchemy', 'rich', 'dask')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_lazy_export_from_the_stats_package():
    import regbench.stats as rs

    assert rs.sequential_decision is sequential_decision
    assert rs.t_mixture_cs is t_mixture_cs
