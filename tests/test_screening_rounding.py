"""Screening on measurements that do not scatter (a count, a size, an instruction count): the
rounding of floating point is neither an effect nor a certain change (effects.rounding_floor)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from regbench.screening.base import get_design
from regbench.screening.effects import estimate_effects, model_columns, rounding_floor, type3_anova
from regbench.screening.recalibrate import compare_effects
from regbench.screening.terms import design_terms

DESIGN = get_design("full").build([2] * 3)
TERMS = design_terms(DESIGN, order=2)


def exact(offset: float, effect_a: float = 0.2, runs: int = 2) -> list[list[float]]:
    """Every run of a point prints the same value: ``0.1 + offset``, plus ``effect_a`` at A's +
    level; B and C do nothing.  Values like 0.17 and 0.37 do not add up exactly in binary."""
    return [[0.1 + offset + (effect_a if row[0] > 0 else 0.0)] * runs for row in DESIGN.coded]


def test_rounding_is_not_an_effect_when_runs_do_not_scatter():
    result = estimate_effects(DESIGN.coded, exact(0.07), TERMS)
    assert result.sigma == 0.0 and result.df_error == 8
    a = result.effect("A")
    assert a.estimate == pytest.approx(0.2, abs=1e-15) and a.p_value == 0.0 and a.important
    for e in result.effects:
        if e.term.name != "A":
            assert (e.estimate, e.p_value, e.important) == (0.0, 1.0, False), e
    # What rounding left before it was taken as 0 (the bug: p = 0 for each of these).
    raw = 2 * np.linalg.lstsq(np.column_stack([np.ones(8), model_columns(DESIGN.coded, TERMS)]),
                              np.array([r[0] for r in exact(0.07)]), rcond=None)[0][1:]
    assert np.any((raw != 0) & (np.abs(raw) < 1e-15)) and np.abs(raw).max() > 0.1
    assert np.all((np.abs(raw) <= result.resolution) | (np.abs(raw) > 0.1))


def test_a_version_that_moves_every_point_alike_changes_no_effect_but_a_changed_one_does():
    before = estimate_effects(DESIGN.coded, exact(0.0), TERMS)
    after = estimate_effects(DESIGN.coded, exact(0.07), TERMS)
    changes = compare_effects(before, after)
    assert not any(c.significant for c in changes)
    assert {c.change for c in changes} == {0.0}
    doubled = estimate_effects(DESIGN.coded, exact(0.07, effect_a=0.4), TERMS)
    (moved,) = [c for c in compare_effects(before, doubled) if c.significant]
    assert moved.name == "A" and moved.change == pytest.approx(0.2)


def test_the_floor_leaves_noisy_runs_as_statsmodels_reads_them():
    """With real scatter nothing is near the floor: estimates and p-values are OLS's."""
    rng = np.random.default_rng(5)
    y = [list(0.1 + (0.2 if row[0] > 0 else 0.0) + rng.normal(0, 1e-3, 3)) for row in DESIGN.coded]
    result = estimate_effects(DESIGN.coded, y, TERMS)
    assert result.resolution < 1e-14
    fit = sm.OLS(np.concatenate(y), sm.add_constant(np.repeat(model_columns(DESIGN.coded, TERMS), 3, axis=0))).fit()
    for j, term in enumerate(TERMS):
        e = result.effect(term.name)
        assert e.estimate == pytest.approx(2 * fit.params[j + 1], rel=1e-9)
    # The pure error (runs minus points) differs from OLS's residual (model terms): compare
    # estimates only, and check no estimate was floored.
    assert all(e.estimate != 0.0 for e in result.effects)


def test_three_level_anova_of_runs_that_do_not_scatter():
    design = get_design("full").build([2] * 2)
    terms = design_terms(design, order=1)
    y = [[0.1 + 0.07 + (0.2 if row[0] > 0 else 0.0)] * 3 for row in design.coded]
    rows = {r.term.name: r for r in type3_anova(design.coded, y, terms).rows}
    assert rows["A"].p_value == 0.0 and rows["A"].sum_sq > 0
    assert (rows["B"].sum_sq, rows["B"].f, rows["B"].p_value) == (0.0, 0.0, 1.0)


def test_rounding_floor_scales_with_the_values_and_the_count():
    assert rounding_floor(np.array([0.5, -2.0]), 10) == pytest.approx(4 * 10 * np.finfo(float).eps / 2 * 2.0)
    assert rounding_floor(np.array([np.nan]), 3) == 0.0
