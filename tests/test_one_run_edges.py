"""One edge of an excursion in a history of one run a version (``regbench.detect.lone.excursions``):
which stretch an edge the search reported alone belongs to, and where the search's own pair wins.

Each unit test gives ``excursions`` a history and the changes a search reported, so the rule is
tested on its own; the last tests run ``auto`` on busy histories (10% of the commits slowed) where
each rule made the one false change of the history."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.detect import get_detector
from regbench.detect.base import Change
from regbench.detect.lone import excursions
from regbench.model import Series

from test_detect_one_run import spiky
from test_review_one_run import one_run


def quiet(n: int, seed: int = 0, noise: float = 0.01) -> list[float]:
    return list(1.0 + noise * np.random.default_rng(seed).standard_normal(n))


def change(s: Series, at: int, value: float) -> Change:
    """What the search reports between ``at - 1`` and ``at``."""
    return Change(s.benchmark, s.config, s.machine, s.versions[at].name, s.versions[at - 1].name, value,
                  value - 0.02, value + 0.02, "regression" if value > 0 else "improvement", "auto", p_value=1e-9)


def test_a_spikes_end_next_to_a_version_that_read_low_is_the_spikes_end():
    # The version after the spike reads 3% low: the change out of the spike fits both "the end of
    # a one-version slowdown" and "the start of a one-version speed-up".  The slowdown stood 22%
    # apart, the speed-up 3%: the change is the spike's end (before: the speed-up, alone on its
    # side, was reported as a change).
    values = quiet(60)
    values[30], values[31] = 1.22, 0.97
    s = one_run(values, "lower")
    (x,) = excursions(s, [change(s, 31, -0.2)], 5)
    assert x.up and x.width == 1


def test_a_speed_up_that_stood_further_apart_than_a_spike_before_it_is_the_speed_up():
    # The mirror: the version before reads 3% high, the one after 20% low.
    values = quiet(60)
    values[30], values[31] = 1.03, 0.80
    s = one_run(values, "lower")
    (x,) = excursions(s, [change(s, 31, -0.2)], 5)
    assert not x.up and x.width == 1


def test_the_level_after_a_spike_is_read_without_the_next_excursion():
    # A spike at 30, then two spikes at 34-35 whose both edges the search reported: the median of
    # the five versions after the first spike held two of them and read 5% high, so the first
    # spike's rise did not come back (before).  Without the paired versions it does.
    values = quiet(60)
    values[30], values[33], values[34], values[35] = 1.19, 1.06, 1.49, 1.28
    s = one_run(values, "lower")
    rise, into, out = change(s, 30, 0.2), change(s, 34, 0.4), change(s, 36, -0.25)
    found = excursions(s, [rise, into, out], 5)
    assert [(x.up, x.width, x.changes) for x in found] == [(True, 1, (rise,)), (True, 2, (into, out))]


def test_a_revert_the_search_reported_is_not_read_as_a_short_stretchs_end():
    # The search reported a rise at 20 and its revert 9 versions later, over a cluster of slowed
    # commits ending in two: the revert is the rise's, not the end of the cluster's last two
    # versions (before: it was, and the rise was reported alone, a regression the history shows
    # undone).
    values = quiet(60)
    values[20:29] = (1.0, 1.01, 1.22, 1.0, 0.99, 1.02, 1.0, 1.52, 1.6)
    s = one_run(values, "lower")
    assert excursions(s, [change(s, 20, 0.2), change(s, 29, -0.17)], 5) == []


def test_a_spikes_end_after_a_step_the_history_stayed_at_is_no_revert():
    # A real 10% step at 20, a spike at 26: the spike's end (27) goes against the step and is
    # near it, but the history did not come back to the level before the step, so the end is
    # the spike's, not the step's revert.
    values = quiet(60, seed=3)
    values[20:] = [v * 1.1 for v in values[20:]]
    values[26] = 1.45
    s = one_run(values, "lower")
    found = excursions(s, [change(s, 20, 0.1), change(s, 27, -0.25)], 5)
    assert [(x.up, x.width, x.changes[0].version) for x in found] == [(True, 1, s.versions[27].name)]


def test_a_lone_edge_far_from_the_last_change_is_still_a_stretchs_end():
    # The rule above pairs a change with its revert only where the history came back: a spike's
    # end after an unrelated slowdown that the history stayed at is still the spike's end.
    values = quiet(80, seed=2)
    values[:10] = [v * 0.9 for v in values[:10]]
    values[40] = 1.3
    s = one_run(values, "lower")
    found = excursions(s, [change(s, 10, 0.1), change(s, 41, -0.25)], 5)
    assert [(x.up, x.width, len(x.changes)) for x in found] == [(True, 1, 1)]
    assert found[0].changes[0].version == s.versions[41].name


@pytest.mark.parametrize("seed", [9021, 9027])
def test_busy_flat_histories_raise_nothing(seed):
    # 500 commits timed once, 10% of them slowed by 20-60%: each of these histories had one false
    # change, each from one of the rules above (9021: the level after a spike; 9027: the spike's
    # end read as a speed-up).
    s = spiky([1.0] * 500, seed, rate=0.10)
    assert get_detector("auto").detect(s) == []


def test_the_one_run_note_gives_its_reason_once_for_many_series():
    # The note of each series was a sentence with the reason and the advice: with three series
    # the line said it three times.
    from regbench.detect.notes import series_notes
    from regbench.report.changes import note_lines

    auto = get_detector("auto")
    notes = []
    for k in range(3):
        s = spiky([1.0] * 300, k)
        s.benchmark = f"bench{k}"
        changes, n_tests, state = auto.detect_with_state(s)
        notes += series_notes(auto, s, changes, n_tests, state)
    (line,) = note_lines(notes, {})
    assert line.startswith("One run a version (3 series), not reported as changes: bench0 [m1]: ")
    assert line.count("compare --run") == 1 and line.count("cannot tell interference") == 1
    assert all(f"bench{k} [m1]: " in line for k in range(3))
