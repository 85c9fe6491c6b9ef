"""What the detection driver says of a series beside its changes: why it was not analysed, or
that a throughput fell to exactly 0, which detection leaves out as no measurement.

A series a detector can test no pair of versions of is "not analysed", with the reason
(:meth:`regbench.detect.base.Detector.not_analysable`, as ``regbench evaluate`` counts it), rather
than shown as one where nothing changed.  Beside the detector's own reason, the driver knows
three that hold for every detector, whose changes are relative to the level (``new / old - 1``):

* runs below 0 on average (a latency delta, a score): a ratio of such values has no direction, -10 to -5
  is -50% and -5 to +5 is -200%, though both rose;
* fewer than 3 runs in all: no run-to-run spread to test a change against;
* no hypothesis tested at all (but for a series of one value throughout, which did not change).

Beside those, a detector's state can say what it left out: ``auto`` leaves out versions timed by
one run that stand alone where the history holds others like them (:mod:`regbench.detect.lone`),
and the note says how many and how long a step there must hold to be reported.

A throughput (higher is better) of exactly 0 measured nothing, so detection leaves such samples
out (:mod:`regbench.detect.auto`); where every sample of the newest versions is 0 after versions
above 0, the operation may have stopped completing, the worst regression there is, and the note
gates ``detect --fail-on-regression`` as ``regbench compare`` gates its -100%.

The notes are computed for the series searched in full; an incremental pass notes those it searches
again in full, and a throughput whose new versions end at 0 (read in full for that note).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Series
from ..stats.zeros import ZeroSteps, zero_steps
from .base import Change, Detector
from .lone import STATE_KEY as LONE_KEY
from .lone import note as lone_note

#: The kinds of note, in the order they are shown.
NOTE_KINDS = ("negative", "too few runs", "detector", "untested", "fell to zero", "one run", "zero step")

#: Runs in all a series needs for a run-to-run spread on one side of a split at least.
MIN_RUNS = 3


@dataclass(frozen=True)
class SeriesNote:
    """What the driver says of one series.

    Attributes
    ----------
    benchmark, config, machine : str
        The series.
    kind : str
        One of :data:`NOTE_KINDS`: why it was not analysed, ``"fell to zero"``, or ``"one run"``
        (excursions of one-run versions not reported, :mod:`regbench.detect.lone`).
    reason : str
        In words, for people.
    zero_from : str or None
        With ``"fell to zero"``: the first of the newest versions whose samples are all 0.
    last_above : str or None
        With ``"fell to zero"``: the last version before it with samples above 0.
    """

    benchmark: str
    config: str
    machine: str
    kind: str
    reason: str
    zero_from: str | None = None
    last_above: str | None = None

    @property
    def gates(self) -> bool:
        """Whether the note fails ``detect --fail-on-regression``: a throughput fallen to 0."""
        return self.kind == "fell to zero"


def series_notes(detector: Detector, series: Series, changes: Sequence[Change], n_tests: int,
                 state: dict | None = None, zero: ZeroSteps | None = None) -> list[SeriesNote]:
    """The notes of one series searched in full, which gave ``changes`` after ``n_tests``
    hypotheses and the detector's ``state``."""
    def note(kind: str, reason: str, **more: str) -> SeriesNote:
        return SeriesNote(series.benchmark, series.config, series.machine, kind, reason, **more)

    out = []
    samples = [np.asarray(r, dtype=float) for runs in series.runs for r in runs]
    with_data = [k for k, runs in enumerate(series.runs) if any(np.size(r) for r in runs)]
    if any(np.mean(x) < 0 for x in samples if x.size):  # a run below 0, as compare says it
        out.append(note("negative", "runs below 0 on average, where a change relative to the level has no "
                                    "direction (-10 to -5 is -50%, though it rose); `regbench compare` judges "
                                    "such a benchmark by the difference B - A"))
    out += zero_notes(series, changes) + unsure_zero_steps(series, zero)
    said = lone_note((state or {}).get(LONE_KEY) or {})
    if said is not None:
        out.append(note("one run", said))
    if changes or out and out[0].kind == "negative":
        return out
    reason = detector.not_analysable(series)
    n_runs = sum(1 for runs in series.runs for r in runs if np.size(r))
    if reason is not None:
        out.append(note("detector", reason))
    elif n_runs < MIN_RUNS:
        out.append(note("too few runs", f"{n_runs} runs in all, one per version: no run-to-run spread to test a "
                                        f"change against (at least {MIN_RUNS} runs, 2 of one version)"))
    elif n_tests == 0 and len(with_data) >= 2 and not _constant(samples):
        # A series of one value throughout (a count always 0) had nothing to test: it is known
        # not to have changed, which is no reason to name it.
        out.append(note("untested", "no pair of versions could be tested"))
    return out


def zero_notes(series: Series, changes: Sequence[Change]) -> list[SeriesNote]:
    """The ``"fell to zero"`` note of a throughput whose newest versions are 0 in every sample
    after a version above 0, unless a change was reported there; else none."""
    with_data = [k for k, runs in enumerate(series.runs) if any(np.size(r) for r in runs)]
    zero = _fell_to_zero(series, with_data)
    if zero is None or any(series.index(c.version) >= series.index(zero[0]) for c in changes):
        return []
    first, last = zero
    return [SeriesNote(series.benchmark, series.config, series.machine, "fell to zero",
                       f"every sample 0 from {first} on, after {last} above 0: a throughput of 0 measured no "
                       "operation, and detection leaves it out", zero_from=first, last_above=last)]


#: The p-value under which a step from or to exactly 0 that the driver's level does not report is
#: named (:func:`unsure_zero_steps`).
SUGGESTIVE = 0.05


def unsure_zero_steps(series: Series, found: ZeroSteps | None = None) -> list[SeriesNote]:
    """The ``"zero step"`` notes of a count (lower is better) that went from exactly 0 in every
    run to above 0 in every run, or back, with too few runs for the driver's exact test
    (:func:`regbench.stats.zeros.zero_steps`) to report it: ``compare`` calls such a pair certain
    (+inf), so silence here read as "nothing changed" (a probe: 0 -> 1 s, three runs of two
    versions a side, p = 0.0032 against the level 0.001).  ``found``: the driver's exact test of
    the series (:func:`~regbench.detect.zeros.detect_series_steps`), made here when not given."""
    if series.direction != "lower":
        return []
    from .zeros import ALPHA

    if found is None:
        found = zero_steps(series.runs, alpha=ALPHA)
    out = []
    for st in found.tested:
        # Only where the runs suggest it (the conventional 5%): a flaky count, 0 in one version's
        # run and 1 in the next's, is no step to run again.
        if not ALPHA <= st.p_value < SUGGESTIVE:
            continue
        what = "from 0 to above 0" if st.upward else "from above 0 to 0"
        out.append(SeriesNote(series.benchmark, series.config, series.machine, "zero step",
                              f"every run {what} at {series.versions[st.index].name} (since "
                              f"{series.versions[st.previous].name}), {st.runs_before} runs before against "
                              f"{st.runs_after} after: p = {st.p_value:.2g}, "
                              f"not below {ALPHA:g}; more runs of these versions settle it (`regbench compare` "
                              "calls it certain)"))
    return out


def ends_at_zero(series: Series) -> bool:
    """Whether ``series`` (new versions of an incremental pass) is a throughput whose newest
    version with data is 0 in every sample: its whole history then says whether it fell to 0."""
    if series.direction != "higher":
        return False
    last = next((runs for runs in reversed(series.runs) if any(np.size(r) for r in runs)), None)
    return last is not None and all(np.all(np.asarray(r, dtype=float) == 0) for r in last if np.size(r))


def _constant(samples: list[np.ndarray]) -> bool:
    """Whether every sample (NaN aside) has one value."""
    values = np.concatenate([x[np.isfinite(x)] for x in samples]) if samples else np.empty(0)
    return bool(values.size == 0 or np.ptp(values) == 0)


def _fell_to_zero(series: Series, with_data: list[int]) -> tuple[str, str] | None:
    """``(first zero version, last version above 0)`` of a throughput whose newest versions have
    only samples of exactly 0 after a version with samples above 0; else None."""
    if series.direction != "higher" or not with_data:
        return None

    def all_zero(k: int) -> bool:
        values = [np.asarray(r, dtype=float) for r in series.runs[k] if np.size(r)]
        return bool(values) and all(np.all(v == 0) for v in values)

    k = len(with_data)
    while k > 0 and all_zero(with_data[k - 1]):
        k -= 1
    if k == len(with_data) or k == 0:
        return None
    last = with_data[k - 1]
    if not any(np.any(np.asarray(r, dtype=float) > 0) for r in series.runs[last]):
        return None
    return series.versions[with_data[k]].name, series.versions[last].name
