"""Histories of one run a version, as a CI job that times each commit once makes them: spikes of
interference are not changes where the history has several (``regbench.detect.lone``)."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.detect import get_detector
from regbench.detect.driver import detect_changes, save_detection_state
from regbench.detect.lone import STATE_KEY, chance, lone_versions
from regbench.detect.notes import series_notes
from regbench.model import RunRecord, Series, VersionInfo
from regbench.store import Store


def spiky(levels, seed, *, rate=0.05, noise=0.03, runs=1):
    """One run (of one sample) a version by default; each run slowed by 20-60% with ``rate``."""
    rng = np.random.default_rng(seed)
    s = Series("bench", "default", "m1", "ms", "lower")
    for k, level in enumerate(levels):
        s.versions.append(VersionInfo(name=f"v{k:05d}", id=k + 1))
        s.runs.append([level * np.exp(rng.normal(0, noise, 1)) * (1 + (rng.random() < rate) * rng.uniform(0.2, 0.6))
                       for _ in range(runs)])
        s.failed.append(0)
        s.warmup.append(0)
    return s


@pytest.mark.parametrize(("n", "rate", "width"), [(500, 0.05, 1), (500, 0.05, 2), (500, 0.05, 3), (200, 0.1, 3)])
def test_the_chance_of_a_stretch_of_spikes_agrees_with_a_simulation(n, rate, width):
    # The Poisson approximation of the runs of successes against Bernoulli sequences counted.
    rng = np.random.default_rng(1)
    hits = rng.random((20000, n)) < rate
    run = np.zeros(hits.shape[0], dtype=int)
    longest = np.zeros(hits.shape[0], dtype=int)
    for j in range(n):
        run = np.where(hits[:, j], run + 1, 0)
        longest = np.maximum(longest, run)
    simulated = float(np.mean(longest >= width))
    assert chance(n, rate, width) == pytest.approx(simulated, abs=0.04 + 0.1 * simulated)


@pytest.mark.parametrize("seed", range(5))
def test_a_flat_history_of_one_run_a_version_with_spikes_raises_nothing(seed):
    # Before: every spike was a regression and its revert (40-64 changes per 500 versions).
    s = spiky([1.0] * 300, seed)
    changes, _, state = get_detector("auto").detect_with_state(s)
    assert changes == []
    said = state[STATE_KEY]
    assert said["slower"]["alone"] >= 5 and said["versions"] == 300


@pytest.mark.parametrize("seed", range(5))
def test_a_step_among_spikes_is_found_within_two_versions(seed):
    s = spiky([1.0] * 150 + [1.1] * 150, 100 + seed)
    found = get_detector("auto").detect(s)
    assert len(found) == 1 and found[0].kind == "regression"
    assert abs(s.index(found[0].version) - 150) <= 2 and 0.06 < found[0].change < 0.14


def test_a_lone_revert_in_a_quiet_history_is_still_reported():
    # No other version stands alone: the search's own test decides, as before.
    levels = [1.0] * 300
    levels[150] = 1.3
    s = spiky(levels, 7, rate=0.0, noise=0.02)
    found = get_detector("auto").detect(s)
    assert [(c.version, c.kind) for c in found] == [("v00150", "regression"), ("v00151", "improvement")]


def test_two_lone_slowdowns_are_not_reported_and_the_note_says_why():
    # The rule's cost, stated in the note: two one-version slowdowns of one run are exchangeable
    # with each other, and neither is more of a change than interference would be.
    levels = [1.0] * 300
    levels[100] = levels[200] = 1.3
    s = spiky(levels, 7, rate=0.0, noise=0.02)
    detector = get_detector("auto")
    changes, n_tests, state = detector.detect_with_state(s)
    assert changes == []
    notes = series_notes(detector, s, changes, n_tests, state)
    assert [n.kind for n in notes] == ["one run"]
    assert "2 version(s) slower than both neighbours" in notes[0].reason and "timed by one run" in notes[0].reason
    # A speed-up of one version is weighed on its own side: the two slowdowns do not explain it.
    levels[250] = 0.7
    found = detector.detect(spiky(levels, 7, rate=0.0, noise=0.02))
    assert [c.version for c in found] == ["v00250", "v00251"]


def test_versions_of_two_runs_are_not_weighed():
    # With a second run, a spike is one run of two, which the runs' spread judges.
    s = spiky([1.0] * 120, 3, runs=2)
    assert lone_versions(s, z=5.0, alpha=0.001)[0] == []
    _, _, state = get_detector("auto").detect_with_state(s)
    assert STATE_KEY not in state


def _push(store: Store, values, start: int) -> None:
    versions = [VersionInfo(f"v{k:03d}") for k in range(start, start + len(values))]
    store.add_runs([RunRecord(benchmark="b", version=f"v{start + k:03d}", run_index=0, samples=np.array([v]))
                    for k, v in enumerate(values)], versions=versions)


def test_incremental_passes_give_the_full_pass_answer_one_version_at_a_time(store_url):
    # A CI job pushes one run a commit and runs `detect --incremental`: the spikes raise nothing,
    # and a 10% step is reported once it has held longer than the spikes do, at its own version.
    rng = np.random.default_rng(11)
    base = np.exp(rng.normal(0, 0.03, 200)) * np.where(rng.random(200) < 0.05, 1.4, 1.0)
    new = list(1.1 * np.exp(rng.normal(0, 0.03, 12)))
    new[5] *= 1.4  # a spike after the step
    reported = []
    with Store(store_url) as s:
        _push(s, base, 0)
        save_detection_state(s, detect_changes(s))
        for k, v in enumerate(new):
            _push(s, [v], 200 + k)
            inc = detect_changes(s, incremental=True)
            reported += [(c.version, c.kind) for c in inc.changes]
            save_detection_state(s, inc)
        full = detect_changes(s)
    # Where the step's first versions read low, the full pass at the end may place it a version
    # apart from where the passes saw it first; one regression each, nothing for the spikes.
    assert [kind for _, kind in reported] == ["regression"] and reported[0][0] in ("v200", "v201")
    assert [c.kind for c in full.changes] == ["regression"] and full.changes[0].version in ("v200", "v201")


@pytest.mark.parametrize("seed", [5004, 5007])
def test_a_slowed_first_version_is_not_a_step_at_the_second(seed):
    # The history's first version, one run slowed by interference, among others like it: it was
    # reported as a -17% to -21% "step" at the second version (seeds of benchmarks/one_run_spikes.py).
    s = spiky([1.0] * 500, seed, rate=0.10)
    s.runs[0] = [np.array([1.45])]
    assert get_detector("auto").detect(s) == []
