"""Review of the one-run rules (``regbench.detect.lone``): defects found, each reproduced."""

from __future__ import annotations

import numpy as np

from regbench.detect import get_detector
from regbench.detect.driver import detect_changes, save_detection_state
from regbench.detect.lone import STATE_KEY
from regbench.detect.notes import series_notes
from regbench.model import Series, VersionInfo
from regbench.report.changes import note_lines
from regbench.store import Store
from test_detect_one_run import _push


def one_run(values, direction: str) -> Series:
    s = Series("bench", "default", "m1", "ops/s", direction)
    for k, v in enumerate(values):
        s.versions.append(VersionInfo(name=f"v{k:05d}", id=k + 1))
        s.runs.append([np.atleast_1d(np.asarray(v, dtype=float))])
        s.failed.append(0)
        s.warmup.append(0)
    return s


def test_a_throughput_searched_as_it_is_calls_its_drops_slower():
    # A throughput with one sample below 0 is searched as it is, not as its reciprocal: there a
    # version higher than its neighbours is faster.  The note called two 30% drops of throughput
    # (slowdowns) "faster".
    rng = np.random.default_rng(7)
    levels = np.full(300, 100.0)
    levels[[100, 200]] = 70.0
    values = [[v] for v in levels * np.exp(rng.normal(0, 0.02, 300))]
    values[50] = [values[50][0], -1.0, values[50][0]]  # no reciprocal scale: searched as it is
    s = one_run(values, "higher")
    detector = get_detector("auto")
    changes, n_tests, state = detector.detect_with_state(s)
    assert not state.get("reciprocal")
    said = state[STATE_KEY]
    assert "faster" not in said and said["slower"]["alone"] == 2
    reason = series_notes(detector, s, changes, n_tests, state)[0].reason
    assert reason.startswith("2 version(s) slower than both neighbours")


def test_the_note_does_not_send_people_to_detect_confirm():
    # `detect --confirm` runs again only the changes that would become alerts
    # (alerts.known_alerts); the versions this note is about are not reported, so it never sees
    # them.
    levels = [1.0] * 300
    levels[100] = levels[200] = 1.3
    s = one_run(np.asarray(levels) * np.exp(np.random.default_rng(7).normal(0, 0.02, 300)), "lower")
    detector = get_detector("auto")
    changes, n_tests, state = detector.detect_with_state(s)
    (line,) = note_lines(series_notes(detector, s, changes, n_tests, state), {})
    assert "confirm with `detect --confirm`" not in line and "compare --run" in line


def test_incremental_passes_report_the_step_their_own_full_pass_finds(store_url):
    # A CI job times each commit once, 10% of them slowed by 40%; the benchmark gets 13% faster at
    # v080.  check_new lets v080 and v081 into the segment (one run each, not significant alone);
    # at v082 it sees a change at a one-run version, so the driver searches the history in full,
    # which finds the improvement at v080, and reported only what was after v081: nothing (it now
    # reports what is after the segment's start, `Auto.reported_through`).  The full pass after
    # every push reports v080 from the first push on.
    rng = np.random.default_rng(2)
    base = np.exp(rng.normal(0, 0.03, 80)) * np.where(rng.random(80) < 0.1, 1.4, 1.0)
    new = 0.87 * np.exp(rng.normal(0, 0.03, 12)) * np.where(rng.random(12) < 0.1, 1.4, 1.0)
    reported = []
    with Store(store_url) as s:
        _push(s, base, 0)
        first = detect_changes(s)
        assert first.changes == ()
        save_detection_state(s, first)
        for k, v in enumerate(new[:4]):
            _push(s, [v], 80 + k)
            inc = detect_changes(s, incremental=True)
            reported += [(c.version, c.kind) for c in inc.changes]
            save_detection_state(s, inc)
        full = detect_changes(s)
    assert [(c.version, c.kind) for c in full.changes] == [("v080", "improvement")]
    assert reported == [("v080", "improvement")]
