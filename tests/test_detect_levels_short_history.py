"""`auto` on a short history whose runs land at two levels, 1.5 times apart (a loaded CI machine
made a probe's real runs so): four steps of 60-120% among 12 versions of 16 runs, each run at its
version's level or 1.5 times it.  Before, `auto` reported none of them (and `detect
--fail-on-regression` passed a +66% regression that `compare` showed plainly), because

- the versions' fastest runs, which follow the steps within 3%, were not searched at all: the
  newest version, a step, stood alone against the median of the last three, and in a history of
  12 versions the rule "at most 5% of the versions stand alone" allowed none;
- once searched, the +67% step and the -60% revert four versions later were dropped as "a slower
  stretch in a benchmark whose runs land at levels", a draw of the runs' levels, though all 64 runs
  of the stretch were at the slow level where most of their neighbours' runs were at the fast one.

A quiet history of 3 runs a version where two versions' six runs all drew the slow level (as
often happens somewhere in 100 versions) is still not a change."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.detect import get_detector

from test_detect_odd_data import series_of

LEVELS = [3.2, 3.0, 3.0, 5.0, 5.0, 5.0, 5.2, 2.0, 2.0, 3.7, 3.5, 7.7]  # ms; steps at 3, 7, 9, 11


def two_level_history(rng, levels, *, runs=16, fast_share=0.35, last_runs=6):
    out = []
    for k, level in enumerate(levels):
        n = last_runs if k == len(levels) - 1 else runs
        version = []
        for _ in range(n):
            run_level = level * (1.0 if k == len(levels) - 1 or rng.random() < fast_share else 1.5)
            run_level *= rng.uniform(0.95, 1.05)
            version.append(run_level * rng.uniform(1.0, 1.08, 5) / 1000)
        out.append(version)
    return series_of(out)


@pytest.mark.parametrize("seed", [3, pytest.param(4, marks=pytest.mark.xfail(strict=True, reason=(
    "still missed: the fastest runs' search tests one split at a time, and among 11 versions with three "
    "steps of 60-80% the version-to-version scale from their successive differences is 10% (the steps "
    "inflate it): the best split's p-value, 3e-4, does not pass its Bonferroni factor"))), 5])
def test_steps_of_a_short_history_of_runs_at_two_levels_are_found(seed):
    s = two_level_history(np.random.default_rng(seed), LEVELS)
    found = {c.version: c.change for c in get_detector("auto").detect(s)}
    # The three steps with versions on both sides; the newest version (a step seen by one
    # version of 6 runs) waits for the next, as a lone newest version does.
    for version, sign in (("v00003", 1), ("v00007", -1), ("v00009", 1)):
        assert version in found and np.sign(found[version]) == sign, found
    assert set(found) <= {"v00003", "v00006", "v00007", "v00009", "v00011"}, found  # v6: a real +4%


def test_a_quiet_history_where_two_versions_drew_only_the_slow_level_raises_nothing():
    rng = np.random.default_rng(11)
    versions = []
    for k in range(100):
        version = []
        for _ in range(3):
            slow = k in (14, 15) or rng.random() < 0.31
            version.append(0.0123 * (1.18 if slow else 1.0) * rng.lognormal(0, 0.01) * rng.lognormal(0, 0.01, 10))
        versions.append(version)
    s = series_of(versions)
    assert get_detector("auto").detect(s) == []
