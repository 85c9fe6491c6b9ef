"""Effects (seed 002 eq. 1-4), Lenth's pseudo standard error, and the half-normal plot, checked
against the paper's definitions computed directly and against statsmodels' OLS."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from regbench.errors import ConfigError
from regbench.screening.base import get_design
from regbench.screening.effects import (Term, estimable_terms, estimate_effects, half_normal_points, lenth,
                                        model_columns)
from regbench.screening.terms import design_terms


def _responses(coded, truth, rng, sigma=0.5, runs=3):
    y = []
    for row in coded:
        mean = truth["mu"] + sum(b * np.prod(row[list(f)]) for f, b in truth["terms"].items())
        y.append(list(mean + rng.normal(0, sigma, runs)))
    return y


def test_main_effects_and_interactions_are_eq_1_to_3():
    rng = np.random.default_rng(7)
    d = get_design("full").build([2] * 3)
    coded = d.coded
    y = _responses(coded, {"mu": 10, "terms": {(0,): 1.5, (1,): -1.0, (0, 1): 0.4}}, rng)
    result = estimate_effects(coded, y, design_terms(d, order=2))
    means = np.array([np.mean(r) for r in y])
    for j, name in enumerate("ABC"):
        # eq. 1 with the usual sign: the mean at + minus the mean at -
        me = means[coded[:, j] == 1].mean() - means[coded[:, j] == -1].mean()
        assert result.effect(name).estimate == pytest.approx(me, abs=1e-12)
    a, b = coded[:, 0], coded[:, 1]

    def me_b(level):
        rows = a == level
        return means[rows & (b == 1)].mean() - means[rows & (b == -1)].mean()

    def me_a(level):
        rows = b == level
        return means[rows & (a == 1)].mean() - means[rows & (a == -1)].mean()

    interaction = result.effect("A*B").estimate
    assert interaction == pytest.approx(0.5 * (me_b(1) - me_b(-1)), abs=1e-12)  # eq. 2
    assert interaction == pytest.approx(0.5 * (me_a(1) - me_a(-1)), abs=1e-12)  # eq. 3


def test_intervals_and_tests_agree_with_statsmodels_ols():
    """A saturated model of a replicated 2^3: OLS residuals are then the pure error, so
    statsmodels' coefficient, standard error, p-value and interval, doubled, are ours."""
    rng = np.random.default_rng(11)
    d = get_design("full").build([2] * 3)
    y = _responses(d.coded, {"mu": 5, "terms": {(0,): 2.0, (2,): 0.3, (0, 2): -0.5}}, rng, runs=4)
    terms = design_terms(d, order=3)
    result = estimate_effects(d.coded, y, terms, confidence_level=0.9)
    x = np.repeat(model_columns(d.coded, terms), 4, axis=0)
    fit = sm.OLS(np.concatenate(y), sm.add_constant(x)).fit()
    ci = fit.conf_int(alpha=0.1)
    assert result.df_error == int(fit.df_resid) == 24
    for j, t in enumerate(terms):
        e = result.effect(t.name)
        assert e.estimate == pytest.approx(2 * fit.params[j + 1], rel=1e-10)
        assert e.std_error == pytest.approx(2 * fit.bse[j + 1], rel=1e-10)
        assert e.p_value == pytest.approx(fit.pvalues[j + 1], rel=1e-8)
        assert (e.ci_low, e.ci_high) == pytest.approx((2 * ci[j + 1, 0], 2 * ci[j + 1, 1]), rel=1e-10)
    assert result.effect("A").important and result.effect("A").p_value < 1e-6


def test_lost_points_are_fitted_by_least_squares_like_statsmodels():
    rng = np.random.default_rng(3)
    d = get_design("fractional", generators=["D = ABC"]).build([2] * 4)
    y = _responses(d.coded, {"mu": 1, "terms": {(0,): 1.0, (3,): -0.7}}, rng, runs=2)
    y[1] = []  # a configuration that broke a constraint, or lost every run
    terms = estimable_terms(d.coded[[i for i in range(8) if y[i]]], design_terms(d))
    assert [t.name for t in terms][:4] == ["A", "B", "C", "D"] and len(terms) < 7
    result = estimate_effects(d.coded, y, terms)
    rows = [i for i in range(8) if y[i]]
    x = np.repeat(model_columns(d.coded[rows], terms), 2, axis=0)
    fit = sm.OLS(np.concatenate([y[i] for i in rows]), sm.add_constant(x)).fit()
    for j, t in enumerate(terms):
        assert result.effect(t.name).estimate == pytest.approx(2 * fit.params[j + 1], rel=1e-9)


def test_aliases_are_reported_next_to_each_effect():
    d = get_design("fractional", generators=["D = ABC"]).build([2] * 4)
    terms = {t.name: t.aliases for t in design_terms(d, ["journal", "sync", "cache", "temp"])}
    assert terms["sync"] == ("journal*cache*temp",)
    assert terms["journal*sync"] == ("cache*temp",)
    assert len(terms) == 7  # 4 main effects and 3 chains of two-option interactions


def test_half_normal_points_are_eq_4():
    effects = np.array([0.1, -3.0, 0.4, 1.2, -0.05])
    hn = half_normal_points(effects, ["a", "b", "c", "d", "e"])
    i = np.arange(1, 6)
    np.testing.assert_allclose(hn.x, stats.halfnorm.ppf((i - 0.5) / 5))
    np.testing.assert_allclose(hn.y, np.sort(np.abs(effects)))
    assert hn.names == ("e", "a", "c", "d", "b")


def test_lenth_on_a_hand_computed_case():
    c = np.array([10.0, -8.0, 1.0, -1.0, 0.5, 0.2, -0.3, 0.7, -0.1, 0.4, 0.6, -0.9, 0.05, 0.35, -0.45])
    s0 = 1.5 * np.median(np.abs(c))
    pse = 1.5 * np.median(np.abs(c)[np.abs(c) < 2.5 * s0])
    r = lenth(c)
    assert r.pse == pytest.approx(pse)
    assert r.margin == pytest.approx(stats.t.ppf(0.975, 5) * pse)
    gamma = (1 + 0.95 ** (1 / 15)) / 2
    assert r.simultaneous_margin == pytest.approx(stats.t.ppf(gamma, 5) * pse)


def test_lenth_under_the_null_matches_published_critical_values():
    """Coverage by simulation: for 15 null contrasts (a 16-run design), the 90% and 95% quantiles
    of |c| / PSE are the individual-error-rate critical values of Ye and Hamada (2000, Table 1:
    1.71 and 2.16); Lenth's own margin t(0.975, 5) = 2.57 is therefore conservative, erring on
    about 3% of null effects rather than 5%."""
    rng = np.random.default_rng(2026)
    ratios = []
    for _ in range(4000):
        c = rng.normal(size=15)
        ratios.append(np.abs(c) / lenth(c).pse)
    t = np.concatenate(ratios)
    assert np.quantile(t, 0.90) == pytest.approx(1.71, abs=0.04)
    assert np.quantile(t, 0.95) == pytest.approx(2.16, abs=0.06)
    assert 0.02 < np.mean(t > stats.t.ppf(0.975, 5)) < 0.04


def test_bad_input_is_a_one_line_error():
    d = get_design("full").build([2] * 2)
    terms = design_terms(d)
    with pytest.raises(ConfigError, match="one entry per design point"):
        estimate_effects(d.coded, [[1.0]] * 3, terms)
    with pytest.raises(ConfigError, match="cannot estimate"):
        estimate_effects(d.coded, [[1.0], [2.0], [], []], terms)
    with pytest.raises(ConfigError, match="confidence_level"):
        estimate_effects(d.coded, [[1.0]] * 4, terms, confidence_level=1.5)
    with pytest.raises(ConfigError, match="at least two effects"):
        estimate_effects(d.coded, [[1.0]] * 4, [Term((0,), "A")])


def test_type3_sums_of_squares_agree_with_statsmodels_anova_lm():
    """An unbalanced follow-up (a fraction plus added runs, unequal replication): statsmodels'
    ``anova_lm(typ=3)`` on the same ±1 regressors gives the same sums of squares, F and p."""
    import pandas as pd
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    from regbench.screening.effects import type3_anova

    rng = np.random.default_rng(5)
    base = get_design("fractional", generators=["D = ABC"]).build([2] * 4).coded
    coded = np.vstack([base, [[1, 1, -1, 1], [-1, 1, 1, 1], [1, -1, 1, 1]]])
    terms = [Term((i,), "ABCD"[i]) for i in range(4)] + [Term((0, 1), "A*B"), Term((2, 3), "C*D")]
    y = _responses(coded, {"mu": 3, "terms": {(0,): 1.0, (0, 1): 0.6, (2, 3): -0.2}}, rng, runs=2)
    y[4] = y[4][:1]  # unequal replication
    result = type3_anova(coded, y, terms)
    rows = [dict(zip("abcd", row, strict=True), y=v) for row, r in zip(coded, y, strict=True) for v in r]
    fit = ols("y ~ a + b + c + d + a:b + c:d", data=pd.DataFrame(rows)).fit()
    table = anova_lm(fit, typ=3)
    for r, name in zip(result.rows, ["a", "b", "c", "d", "a:b", "c:d"], strict=True):
        assert r.sum_sq == pytest.approx(table.loc[name, "sum_sq"], rel=1e-9)
        assert r.f == pytest.approx(table.loc[name, "F"], rel=1e-9)
        assert r.p_value == pytest.approx(table.loc[name, "PR(>F)"], rel=1e-7)
    assert result.residual_df == int(fit.df_resid)
