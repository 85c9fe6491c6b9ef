"""Options with more than two levels: the Type III analysis of variance (statsmodels, sum-to-zero
contrasts) checked against scipy's one-way F and against the textbook sums of squares of a
balanced two-way layout computed with numpy; a synthetic truth with one active option."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from regbench.errors import ConfigError
from regbench.screening.base import get_design
from regbench.screening.levels import level_anova


def labels(*counts: int) -> list[list[str]]:
    return [[f"L{m}" for m in range(n)] for n in counts]


def test_one_option_is_scipy_f_oneway_and_its_level_means_are_the_group_means():
    rng = np.random.default_rng(4)
    groups = [rng.normal(mu, 1.0, size) for mu, size in [(0.0, 5), (0.4, 3), (1.5, 6), (0.2, 4)]]
    result = level_anova(np.arange(4)[:, None], [list(g) for g in groups], ["opt"], labels(4),
                         confidence_level=0.9)
    reference = stats.f_oneway(*groups)
    term = result.term("opt")
    assert term.f == pytest.approx(reference.statistic, rel=1e-9)
    assert term.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    assert term.df == 3 and result.residual_df == sum(map(len, groups)) - 4
    # one factor: the least-squares means are the groups' means, the intervals t with the pooled sd
    mse = result.residual_sum_sq / result.residual_df
    q = stats.t.ppf(0.95, result.residual_df)
    for g, lm in zip(groups, result.levels_of("opt"), strict=True):
        assert lm.mean == pytest.approx(g.mean(), rel=1e-12)
        assert lm.runs == len(g)
        half = q * np.sqrt(mse / len(g))
        assert (lm.ci_low, lm.ci_high) == pytest.approx((g.mean() - half, g.mean() + half), rel=1e-9)


def test_a_balanced_two_way_layout_has_the_textbook_sums_of_squares():
    rng = np.random.default_rng(9)
    na, nb, r = 3, 4, 2
    design = get_design("full").build([na, nb])
    y = rng.normal(0, 1, (design.runs, r)) + design.levels[:, [0]] * 0.8
    cells = np.zeros((na, nb, r))
    for row, values in zip(design.levels, y, strict=True):
        cells[row[0], row[1]] = values
    grand = cells.mean()
    a_means, b_means, cell_means = cells.mean(axis=(1, 2)), cells.mean(axis=(0, 2)), cells.mean(axis=2)
    ss_a = nb * r * ((a_means - grand) ** 2).sum()
    ss_b = na * r * ((b_means - grand) ** 2).sum()
    ss_ab = r * ((cell_means - a_means[:, None] - b_means[None, :] + grand) ** 2).sum()
    ss_within = ((cells - cell_means[:, :, None]) ** 2).sum()
    ss_total = ((cells - grand) ** 2).sum()

    both = level_anova(design.levels, y.tolist(), ["a", "b"], labels(na, nb), order=2)
    df_within = na * nb * (r - 1)
    assert both.residual_df == df_within
    assert both.residual_sum_sq == pytest.approx(ss_within, rel=1e-9)
    for name, ss, df in [("a", ss_a, na - 1), ("b", ss_b, nb - 1), ("a*b", ss_ab, (na - 1) * (nb - 1))]:
        term = both.term(name)
        assert term.sum_sq == pytest.approx(ss, rel=1e-9) and term.df == df
        assert term.f == pytest.approx((ss / df) / (ss_within / df_within), rel=1e-9)
        assert term.p_value == pytest.approx(stats.f.sf(term.f, df, df_within), rel=1e-7)
    # the level means of a balanced design are the raw means
    assert [m.mean for m in both.levels_of("a")] == pytest.approx(a_means, rel=1e-12)

    additive = level_anova(design.levels, y.tolist(), ["a", "b"], labels(na, nb), order=1)
    df_res = na * nb * r - 1 - (na - 1) - (nb - 1)
    assert additive.residual_sum_sq == pytest.approx(ss_total - ss_a - ss_b, rel=1e-9)
    assert additive.term("a").f == pytest.approx((ss_a / (na - 1)) / ((ss_total - ss_a - ss_b) / df_res), rel=1e-9)
    # Benjamini-Hochberg across the terms: q = min over the larger p of p * m / rank
    p = np.array([t.p_value for t in both.terms])
    order = np.argsort(p)
    bh = np.minimum.accumulate((p[order] * len(p) / np.arange(1, len(p) + 1))[::-1])[::-1]
    assert [both.terms[i].q_value for i in order] == pytest.approx(np.minimum(bh, 1), rel=1e-12)


def test_the_active_option_is_found_and_the_null_ones_are_not_even_when_a_constraint_unbalances():
    """Truth: cache (3 levels) shifts the response by 0, +1.5, -1; sync (2 levels) by +2 at its
    second level; page (3 levels) does nothing.  A constraint leaves out cache's third level
    with sync at its second: the raw mean of that level is then biased by sync's effect, the
    least-squares mean is not."""
    rng = np.random.default_rng(2026)
    cache_truth = np.array([0.0, 1.5, -1.0])
    full = get_design("full").build([3, 3, 2])
    rows = np.array([r for r in full.levels if not (r[0] == 2 and r[2] == 1)])
    y = [list(10 + cache_truth[r[0]] + 2.0 * r[2] + rng.normal(0, 0.3, 3)) for r in rows]
    result = level_anova(rows, y, ["cache", "page", "sync"], labels(3, 3, 2), order=2)
    assert result.term("cache").important and result.term("sync").important
    assert not result.term("page").important
    assert result.term("cache").q_value < 1e-6 and result.term("page").q_value > 0.05
    means = np.array([m.mean for m in result.levels_of("cache")])
    assert means - means[0] == pytest.approx(cache_truth, abs=0.25)
    for m in result.levels_of("cache"):
        assert m.ci_low < m.mean < m.ci_high
    raw = [np.mean([v for r, vs in zip(rows, y, strict=True) if r[0] == level for v in vs]) for level in range(3)]
    assert raw[2] - raw[0] < cache_truth[2] - 0.5  # biased by the missing (cache = L2, sync = L1) cells
    # cache*sync has an empty cell (the constraint): it cannot be estimated, and is named
    assert {t.name for t in result.terms} == {"cache", "page", "sync", "cache*page", "page*sync"}
    assert result.not_estimable == ("cache*sync",)


def test_interactions_that_would_leave_no_residual_are_named_not_fitted():
    design = get_design("full").build([3, 3])
    y = [[float(i)] for i in range(design.runs)]  # one run each: a*b would use the last 4 df
    result = level_anova(design.levels, y, ["a", "b"], labels(3, 3), order=2)
    assert result.not_estimable == ("a*b",)
    assert [t.name for t in result.terms] == ["a", "b"] or [t.name for t in result.terms] == ["b", "a"]
    assert result.residual_df == 4


def test_a_level_never_run_and_no_residual_are_one_line_errors():
    design = get_design("full").build([3, 2])
    y = [[1.0, 1.1] if row[0] != 2 else [] for row in design.levels]  # level L2 of a lost every run
    with pytest.raises(ConfigError) as exc:
        level_anova(design.levels, y, ["a", "b"], labels(3, 2))
    assert "no run was made at a = L2" in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match="leave no residual"):
        level_anova(np.arange(3)[:, None], [[1.0], [2.0], [3.0]], ["a"], labels(3))
    with pytest.raises(ConfigError, match="`order` must be 1 or 2"):
        level_anova(np.arange(3)[:, None], [[1.0]] * 3, ["a"], labels(3), order=3)


def test_every_run_is_a_response_and_points_without_runs_are_left_out():
    design = get_design("full").build([3, 2])
    y = [[float(a + b)] * 2 + [float(a + b) + 0.1] for a, b in itertools.product(range(3), range(2))]
    y[0] = []
    y.append([])  # not a point of the design: the lengths must match
    with pytest.raises(ConfigError, match="one entry per design point"):
        level_anova(design.levels, y, ["a", "b"], labels(3, 2))
    result = level_anova(design.levels, y[:-1], ["a", "b"], labels(3, 2))
    assert result.points == 5 and result.runs == 15
