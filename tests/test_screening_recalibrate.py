"""Recalibration of effects between versions (seed 002 s.4.8): coverage by simulation."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.errors import ConfigError
from regbench.screening.base import get_design
from regbench.screening.effects import estimate_effects
from regbench.screening.recalibrate import compare_effects
from regbench.screening.terms import design_terms

DESIGN = get_design("fractional", generators=["E = ABCD"]).build([2] * 5)
TERMS = design_terms(DESIGN, order=2)  # 15 effects: Lenth needs many small ones


def effects_of(betas, rng, runs=3, sigma=1.0):
    y = [list(10 + DESIGN.coded[i] @ np.asarray(betas) / 2 + rng.normal(0, sigma, runs)) for i in range(DESIGN.runs)]
    return estimate_effects(DESIGN.coded, y, TERMS)


def test_a_changed_option_is_caught_and_the_others_are_not():
    rng = np.random.default_rng(8)
    before = effects_of([4, 0, 2, 0, 0], rng)
    after = effects_of([4, 0, 2, 3, 0], rng)  # option D starts to matter
    changes = {c.name: c for c in compare_effects(before, after)}
    assert changes["D"].significant and changes["D"].importance_changed
    assert changes["D"].change == pytest.approx(3, abs=1)
    assert not any(c.significant for n, c in changes.items() if n != "D")


def test_without_a_change_few_effects_are_flagged():
    """Coverage by simulation: with no change, the unadjusted t-test rejects about 5% of the
    effects, and the Benjamini-Hochberg decision even fewer."""
    rng = np.random.default_rng(9)
    p_values, flagged, total = [], 0, 0
    for _ in range(300):
        changes = compare_effects(effects_of([4, 1, 2, 0, 0], rng), effects_of([4, 1, 2, 0, 0], rng))
        p_values += [c.p_value for c in changes]
        flagged += sum(c.significant for c in changes)
        total += len(changes)
    rate = np.mean(np.array(p_values) < 0.05)
    assert 0.03 < rate < 0.07, rate
    assert flagged / total <= rate


def test_unreplicated_effects_use_lenths_pse():
    rng = np.random.default_rng(10)
    before, after = effects_of([4, 0, 2, 0, 0], rng, runs=1), effects_of([4, 0, 2, 0, 0], rng, runs=1)
    c = compare_effects(before, after)[0]
    assert c.std_error == pytest.approx(np.hypot(before.lenth.pse, after.lenth.pse))
    with pytest.raises(ConfigError, match="alpha"):
        compare_effects(before, after, alpha=0)
