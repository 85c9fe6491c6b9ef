"""A change that brings a noisier regime with it: the stretch after it is tested on its own scale
(``regbench.stats.segments.noisier_variance``)."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.detect import get_detector
from regbench.model import Series, VersionInfo
from regbench.stats.runs import VersionStats
from regbench.stats.segments import NOISIER_LEVEL, noisier_variance, version_variance


def one_run_stats(x: np.ndarray) -> VersionStats:
    n = x.size
    return VersionStats(np.arange(n), x, np.full(n, np.nan), np.ones(n, dtype=int), True)


def test_a_stretch_as_noisy_as_the_whole_keeps_the_wholes_scale_at_about_the_level():
    # Homoscedastic histories: the variance-ratio test calls the second half noisier about as
    # often as its level says (the degrees of freedom are Qn's approximate ones, so within 2x).
    rng = np.random.default_rng(0)
    took = 0
    trials = 2000
    for _ in range(trials):
        vs = one_run_stats(rng.normal(0, 0.03, 120))
        whole = version_variance(vs)
        took += noisier_variance(vs, 60, 120, whole) is not whole
    assert took / trials < 2 * NOISIER_LEVEL


def test_a_stretch_three_times_as_noisy_is_told_apart_in_almost_every_history():
    rng = np.random.default_rng(2)
    took = 0
    for _ in range(500):
        vs = one_run_stats(np.r_[rng.normal(0, 0.03, 60), rng.normal(0, 0.09, 60)])
        whole = version_variance(vs, [60])
        took += noisier_variance(vs, 60, 120, whole, [60]) is not whole
    assert took / 500 > 0.95


def test_a_noisier_stretch_takes_its_own_scale_and_a_quieter_one_does_not():
    rng = np.random.default_rng(1)
    x = np.r_[rng.normal(0, 0.01, 60), rng.normal(0, 0.08, 60)]
    vs = one_run_stats(x)
    whole = version_variance(vs, [60])
    own = noisier_variance(vs, 60, 120, whole, [60])
    assert own is not whole and own[0] > 4 * whole[0]
    # Its scale: half the squared standard deviation of successive differences, 0.08^2.
    assert own[0] == pytest.approx(0.08 ** 2, rel=0.35)
    assert noisier_variance(vs, 0, 60, whole, [60]) is whole


def _speed_up_then_noise(seed: int) -> Series:
    """5x faster at v00030, then 25% noise with 10% of runs 2x slower (a probe's shape)."""
    rng = np.random.default_rng(seed)
    s = Series("b", "default", "m", "ms", "lower")
    for k, level in enumerate([1.0] * 30 + [0.2] * 70):
        s.versions.append(VersionInfo(name=f"v{k:05d}", id=k + 1))
        runs = []
        for _ in range(3):
            if level >= 1.0:
                runs.append(level * np.exp(rng.normal(0, 0.03, 5)))
            else:
                runs.append(level * (2.0 if rng.random() < 0.1 else 1.0) * np.exp(rng.normal(0, 0.25, 5)))
        s.runs.append(runs)
        s.failed.append(0)
        s.warmup.append(0)
    return s


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_a_speed_up_into_a_noisier_regime_is_one_change(seed):
    # Before: false pairs in the noisy stretch in seeds 0 and 1 (the fastest runs' search, tested
    # against a scale between the two regimes).
    found = get_detector("auto").detect(_speed_up_then_noise(seed))
    assert [c.version for c in found] == ["v00030"] and -0.85 < found[0].change < -0.7
