"""`auto`'s `ramp_relevance`: a ramp (small splits of one sign joined into one creep) is judged
relevant by its point estimate (the default since 2026-12-01), or by its interval as any other
change with `ramp_relevance = "interval"` (the default before)."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.detect.auto import Auto
from regbench.model import Series, VersionInfo


def creep(seed: int, total: float = 0.028, n: int = 40, start: int = 20, length: int = 6) -> Series:
    """A quiet history whose level creeps up by ``total`` over ``length`` versions from ``start``."""
    rng = np.random.default_rng(seed)
    level = [1.0 + total * min(max(k - start + 1, 0), length) / length for k in range(n)]
    runs = [[level[k] * (1 + rng.normal(0, 0.004)) * (1 + rng.normal(0, 0.01, 20)) for _ in range(5)]
            for k in range(n)]
    return Series("b", "default", "m", "s", "lower", [VersionInfo(f"v{k:02d}") for k in range(n)], runs,
                  [0] * n, [0] * n)


@pytest.mark.parametrize("seed", [0, 4])
def test_a_creep_measured_below_the_minimum_is_reported_by_its_interval_not_by_its_estimate(seed):
    s = creep(seed)
    (c,) = Auto(ramp_relevance="interval").detect(s)
    assert c.until is not None and c.change < 0.03 <= c.ci_high  # a ramp, relevant by its interval alone
    assert Auto().detect(s) == []
    # A creep whose estimate reaches the minimum is reported either way.
    big = creep(seed, total=0.05)
    assert [c.until is not None for c in Auto().detect(big)] == [True]


def test_ramp_relevance_is_checked():
    with pytest.raises(ValueError, match="`ramp_relevance` must be one of estimate, interval"):
        Auto(ramp_relevance="far-end")
