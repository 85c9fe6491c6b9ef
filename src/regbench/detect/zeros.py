"""The driver's pre-pass for counts that are exactly 0: a step from 0 to above 0 (or back) is
found here, once for every detector, and the detector searches the stretches between such steps.

A count such as Go's ``allocs/op`` of an allocation-free loop is exactly 0 in every run; one
allocation added per operation makes it 1 in every run.  The detectors cannot see that step: the
default one compares logarithms, which 0 has not, and a history whose runs are all identical has
no run-to-run variance to test against (``auto`` placed a step back to 0 two versions early, at
-67%, and did not report a step from 0 at all).  ``regbench compare`` calls such a comparison
certain (:func:`regbench.stats.compare_runs`: +inf, or no change against 0); detection follows it,
with the exact test of :func:`regbench.stats.zeros.zero_steps`, which a flaky count (0 in most
runs, 1 in some) does not pass: it needs every run of the versions before to be exactly 0 and
every run of those after to be above 0, over enough runs that chance cannot arrange them so.

The pre-pass is the driver's (STYLE.md habit 19: the driver knows only the
:class:`~regbench.detect.base.Detector` contract): :func:`detect_series` cuts a series at the
steps it finds, hands each stretch that is not all zeros to :meth:`Detector.detect_with_state`
(a stretch of versions exactly 0 has nothing to find), and reports the steps as changes of the
detector's (+inf from 0, -100% back to 0).  It applies to series where lower is better (counts,
times, bytes); a series where higher is better is left to the detector, for which a throughput of
0 measured nothing (``auto`` leaves such samples out).

Incremental detection: a saved state remembers (under :data:`STATE_KEY`) where the last stretch
began and whether it holds a run exactly 0.  A series whose last stretch holds one, or whose new
versions do, is searched again in full by the driver (:func:`needs_full_pass`), and only what is
new is reported (:func:`new_since`): the steps are not something a detector's state can go on
from, and a full pass is what makes the incremental answer the full pass's.  Other series go on
from the detector's own state, as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..model import Series
from ..stats.zeros import NO_DATA, POSITIVE, ZERO, ZeroStep, ZeroSteps, run_kinds, zero_steps
from .base import Change, Detector, kind_of

#: Where a saved state keeps what the pre-pass needs of it (the rest is the detector's).
STATE_KEY = "zero_counts"

#: The level a step's p-value must be below: the default ``alpha`` of ``auto``'s splits, whose
#: p-values are as conservative (Bonferroni over the positions searched).
ALPHA = 0.001

#: How a step's change says its versions were compared (:attr:`Change.estimator`, shown under the
#: change table), followed by the runs on either side; :func:`new_since` knows a step by it.
ESTIMATOR = "whether each run is exactly 0"


def detect_series(detector: Detector, series: Series) -> tuple[list[Change], int, dict | None]:
    """A full pass of one series: :meth:`Detector.detect_with_state` of the stretches between the
    steps from and to exactly 0, and the steps as changes.

    Returns the changes (history order), the hypotheses tested (the detector's and one per pair
    of stretches the exact test compared) and the state to save (the detector's of the last
    stretch, with :data:`STATE_KEY`).
    """
    return detect_series_steps(detector, series)[:3]


def detect_series_steps(detector: Detector, series: Series
                        ) -> tuple[list[Change], int, dict | None, ZeroSteps | None]:
    """:func:`detect_series`, and what the exact test found (None where higher is better), so
    that the driver's notes read it rather than test the history again
    (:func:`~regbench.detect.notes.unsure_zero_steps`)."""
    if series.direction != "lower":
        return (*detector.detect_with_state(series), None)
    found = zero_steps(series.runs, alpha=ALPHA)
    bounds = [0, *(s.index for s in found.steps), len(series)]
    changes: list[Change] = [_change(detector, series, s) for s in found.steps]
    # Hypotheses for the false-discovery-rate control: one per pair of neighbouring versions with
    # data in a series with versions exactly 0 and versions above 0 (where a step can be), not
    # only the pairs whose runs happened to separate: counting those alone would let which pairs
    # enter depend on the data. A series never exactly 0 (times), or exactly 0 throughout, has
    # none: its count is the detector's alone, as before.
    both = (found.kinds == ZERO).any() and (found.kinds == POSITIVE).any()
    n_tests = max(0, int((found.kinds != NO_DATA).sum()) - 1) if both else 0
    state: dict | None = None
    for start, stop in zip(bounds, bounds[1:], strict=False):
        kinds = found.kinds[start:stop]
        state = None
        if all(k in (ZERO, NO_DATA) for k in kinds):
            continue  # every run exactly 0: nothing to find (and nothing the detector could test)
        # Versions exactly 0 in every run are left out of what the detector searches: a step from
        # them, if any, is this pre-pass's to find (not significant yet, when they are still here),
        # and a detector on the log scale has no level for them (auto reported changes of a few
        # percent at p = 0 among the noisy counts after a stretch of zeros, none without it).
        keep = [k for k in range(start, stop) if found.kinds[k] != ZERO]
        piece_changes, piece_tests, state = detector.detect_with_state(_piece(series, keep))
        changes += piece_changes
        n_tests += piece_tests
    changes.sort(key=lambda c: series.index(c.version))
    last = bounds[-2]
    assert found.zero_runs is not None
    zeros = bool(found.zero_runs[last:].any())
    with_data = [k for k in range(len(series)) if found.kinds[k] != NO_DATA]
    if not detector.incremental or not with_data or (state is None and not zeros):
        return changes, n_tests, state, found
    info = {"since": series.versions[last].name if last else None, "zeros": zeros}
    if state is None:  # a last stretch exactly 0: the driver searches it again in full (needs_full_pass)
        state = {"last_version": series.versions[with_data[-1]].name}
    return changes, n_tests, {**state, STATE_KEY: info}, found


def needs_full_pass(state: dict, tail: Series) -> bool:
    """Whether an incremental pass must search the series of ``state`` again in full: its last
    stretch holds a run exactly 0, or its new versions (``tail``) do."""
    info = state.get(STATE_KEY) or {}
    if info.get("zeros"):
        return True
    return tail.direction == "lower" and bool((run_kinds([r for version in tail.runs for r in version]) == ZERO).any())


def detector_state(state: dict) -> dict:
    """The part of a saved state that is the detector's."""
    return {k: v for k, v in state.items() if k != STATE_KEY}


def keep_key(saved: dict, new: dict) -> dict:
    """The detector's new state after :meth:`Detector.check_new`, with the pre-pass's part of the
    saved one (its last stretch goes on, without a run exactly 0)."""
    return {**new, STATE_KEY: saved[STATE_KEY]} if STATE_KEY in saved else new


def new_since(changes: Sequence[Change], series: Series, state: dict) -> list[Change]:
    """The changes of a full pass (:func:`detect_series`) that an incremental pass from ``state``
    reports: the detector's at versions after the last one checked, and the steps from and to 0
    after the start of the last stretch then (a step there, found now that more runs of a new
    level have come, was not one before: a stretch ends at a step)."""
    order = {v.name: k for k, v in enumerate(series.versions)}
    last = order.get(state.get("last_version", ""), -1)
    since = (state.get(STATE_KEY) or {}).get("since")
    start = order.get(since, -1) if since is not None else -1
    return [c for c in changes if order[c.version] > (start if is_step(c) else last)]


def is_step(change: Change) -> bool:
    """Whether ``change`` is a step from or to exactly 0 found by the pre-pass."""
    return (change.estimator or "").startswith(ESTIMATOR + ":")


def _change(detector: Detector, series: Series, step: ZeroStep) -> Change:
    before, after = ("all 0", "all above 0") if step.upward else ("all above 0", "all 0")
    return Change(benchmark=series.benchmark, config=series.config, machine=series.machine,
                  version=series.versions[step.index].name, previous=series.versions[step.previous].name,
                  change=step.change, ci_low=step.change, ci_high=step.change,
                  kind=kind_of(step.change, series.direction), method=detector.name,
                  # A detector that decides without p-values (ci-overlap) gets none here either.
                  p_value=step.p_value if detector.p_values else None,
                  estimator=f"{ESTIMATOR}: {step.runs_before} runs of {step.versions_before} version(s) {before}, "
                            f"then {step.runs_after} runs of {step.versions_after} {after}")


def _piece(series: Series, keep: Sequence[int]) -> Series:
    """``series`` with only the versions at the indices ``keep`` (in order)."""
    return Series(series.benchmark, series.config, series.machine, series.unit, series.direction,
                  [series.versions[k] for k in keep], [series.runs[k] for k in keep],
                  [series.failed[k] for k in keep], [series.warmup[k] for k in keep])
