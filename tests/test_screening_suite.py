"""Screening suites (seed 002 s.4.6-4.7) on synthetic truth: a space whose performance is decided
by two options, the full factorial's values known."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from regbench.errors import ConfigError
from regbench.screening.base import get_design
from regbench.screening.suite import validate_suite


def truth(levels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Options 0 and 3 matter (5 and 3 units), the six others barely (0.1 each)."""
    coded = 2 * levels - 1
    return 20 + 5 * coded[:, 0] + 3 * coded[:, 3] + 0.1 * coded[:, [1, 2, 4, 5, 6, 7]].sum(axis=1) \
        + rng.normal(0, 0.2, len(levels))


def test_a_suite_is_every_combination_of_the_important_options():
    d = get_design("suite", important=[0, 3], rng=1).build([2] * 8)
    assert d.runs == 4
    assert {tuple(r) for r in d.levels[:, [0, 3]]} == {(0, 0), (1, 0), (0, 1), (1, 1)}
    again = get_design("suite", important=[0, 3], rng=1).build([2] * 8)
    np.testing.assert_array_equal(d.levels, again.levels)  # a seed gives the same suite


def test_a_suite_respects_constraints():
    d = get_design("suite", important=[0], rng=2, valid=lambda row: not (row[1] == 1 and row[2] == 1)).build([2] * 4)
    assert all(not (r[1] == 1 and r[2] == 1) for r in d.levels)
    with pytest.raises(ConfigError, match="no combination of the important options has a configuration the constraints allow"):
        get_design("suite", important=[0], valid=lambda row: False).build([2] * 3)


def test_the_suite_stands_for_the_full_set_better_than_random_samples():
    rng = np.random.default_rng(2007)
    full_levels = get_design("full").build([2] * 8).levels
    full = truth(full_levels, rng)
    suite = truth(get_design("suite", important=[0, 3], rng=3).build([2] * 8).levels, rng)
    v = validate_suite(suite, full, samples=400, rng=4)
    assert v.mann_whitney_p > 0.5  # the suite's values look like the full set's
    assert v.mann_whitney_p == pytest.approx(stats.mannwhitneyu(suite, full).pvalue)
    assert v.ks_distance == pytest.approx(stats.ks_2samp(suite, full).statistic)
    # random samples of four configurations are usually further from the full set than the suite
    assert v.suite_rank > 0.7
    assert np.median(v.random_ks) > v.ks_distance
    np.testing.assert_allclose(v.qq_full, np.quantile(full, [0.125, 0.375, 0.625, 0.875]))


def test_bad_input():
    with pytest.raises(ConfigError, match="distinct important options"):
        get_design("suite", important=[])
    with pytest.raises(ConfigError, match="at least two finite values"):
        validate_suite([1.0], [1.0, 2.0])


def test_a_combination_the_constraints_forbid_is_left_out_not_an_error():
    """``not (a == 0 and b == 0 and c == 1)`` forbids one combination of three important options
    whatever the others are: the suite has the other seven, and says which was left out."""
    def valid(row):
        return not (row[0] == 0 and row[1] == 0 and row[2] == 1)

    d = get_design("suite", important=[0, 1, 2], rng=5, valid=valid).build([2, 2, 2, 2, 3])
    combos = {tuple(r[:3]) for r in d.levels.tolist()}
    assert len(d.levels) == 7 and (0, 0, 1) not in combos and all(valid(r) for r in d.levels)
    assert "1 combination(s)" in d.note and "[0, 0, 1]" in d.note
    # A valid configuration that random draws rarely hit is still found (by trying every level).
    rare = get_design("suite", important=[0], rng=1,
                      valid=lambda r: r[0] == 1 or tuple(r[1:]) == (1, 0, 2, 1, 1, 0, 1, 2)).build([2, 2, 2, 3, 2, 2, 2, 2, 3])
    assert [r[1:] for r in rare.levels.tolist() if r[0] == 0] == [[1, 0, 2, 1, 1, 0, 1, 2]]
    with pytest.raises(ConfigError, match="no combination of the important options"):
        get_design("suite", important=[0], valid=lambda r: False).build([2, 2])
