"""Scoring detections against the true changes of a labelled corpus.

Matching rule (one series at a time):

* A detection is the :class:`~regbench.detect.Change` a detector reports; its position is the
  index of its ``version`` (the first version that shows the change).
* It *can match* a true change of the same series when it has the same sign (``change`` and
  ``magnitude`` both positive or both negative; the corpus is all lower-is-better, so this is also
  the same ``kind``) and its index lies in ``[index, end_index + tolerance]``: not before the
  change (that blames an innocent version) and at most ``tolerance`` versions after it, or after
  the end of a creep.  The default tolerance is 2 versions.
* One detection matches at most one true change and one true change at most one detection.
  Detections are taken in version order and each goes to the open true change whose window ends
  first, which gives the largest possible number of matches (the greedy rule for points and
  intervals).
* A detection that matches nothing is a *false alarm*, including a second report of a change
  already matched, except inside a creep: a same-sign detection within a creep's window that the
  creep has already matched reports one more of its real small steps, and is counted as
  *redundant* (neither a match nor a false alarm).
* A false alarm 1 to ``tolerance`` versions *before* a true change of the same sign that no
  detection matched is also counted as *early*: that change placed too soon, which blames an
  innocent version (still a false alarm, and the change still missed; the count says how many
  of the false alarms are misplaced changes rather than noise taken for a change).
* The *delay* of a match is ``detected index - index`` (0 = the right version; for a creep it is
  counted from its first version).

Scores (:class:`Score`): recall of relevant true changes (``|magnitude| >= 3%``, seed 004 s.4.5),
recall of small ones, precision (matched detections over matched plus false alarms; finding a
small real change is not a false alarm), F1 of that precision and the recall of relevant changes,
false alarms per 1,000 consecutive version pairs, mean and median delay, recall of relevant
changes by series kind and false alarm rate by series kind.

A series a method cannot analyse (too short for its windows: it tests no pair of versions) is
left out of its scores and counted, with the reason, in ``n_not_analysed`` and ``not_analysed``:
its true changes are neither found nor missed and its version pairs are not in the false alarm
rate, and the count says how much of the corpus the rates cover.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from ..detect import Change
from .corpus import KINDS, LabelledSeries, TrueChange

DEFAULT_TOLERANCE = 2


@dataclass(frozen=True)
class Match:
    """A detection matched to a true change."""

    truth: TrueChange
    change: Change
    detected_index: int

    @property
    def delay(self) -> int:
        return self.detected_index - self.truth.index


@dataclass(frozen=True)
class SeriesMatch:
    """Outcome of matching one series' detections to its true changes."""

    kind: str
    n_pairs: int
    matches: tuple[Match, ...]
    missed: tuple[TrueChange, ...]
    false_alarms: tuple[Change, ...]
    redundant: tuple[Change, ...]
    #: The false alarms that are early: 1 to ``tolerance`` versions before a true change of the
    #: same sign that was missed (a subset of ``false_alarms``).
    early: tuple[Change, ...] = ()


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def match_series(labelled: LabelledSeries, changes: Sequence[Change], *,
                 tolerance: int = DEFAULT_TOLERANCE) -> SeriesMatch:
    """Match the detections of one series to its true changes (rule in the module docstring)."""
    if not isinstance(tolerance, (int, np.integer)) or isinstance(tolerance, bool) or tolerance < 0:
        raise ValueError("`tolerance` must be a non-negative integer")
    where = {v.name: k for k, v in enumerate(labelled.series.versions)}
    detections = sorted(((where.get(c.version, -1), n, c) for n, c in enumerate(changes)), key=lambda d: d[:2])
    truths = list(labelled.truth)
    taken = [False] * len(truths)
    matches: list[Match] = []
    false_alarms: list[Change] = []
    redundant: list[Change] = []
    for index, _, change in detections:
        best = None
        for t, truth in enumerate(truths):
            if taken[t] or index < 0 or _sign(change.change) != _sign(truth.magnitude):
                continue
            if truth.index <= index <= truth.end_index + tolerance:
                if best is None or truth.end_index < truths[best].end_index:
                    best = t
        if best is not None:
            taken[best] = True
            matches.append(Match(truths[best], change, index))
        elif any(t.shape == "creep" and _sign(change.change) == _sign(t.magnitude)
                 and t.index <= index <= t.end_index + tolerance for t in truths):
            redundant.append(change)
        else:
            false_alarms.append(change)
    missed = tuple(t for t, done in zip(truths, taken, strict=True) if not done)
    early = [c for c in false_alarms if any(
        _sign(c.change) == _sign(t.magnitude) and t.index - tolerance <= where.get(c.version, -1) < t.index
        for t in missed)]
    return SeriesMatch(labelled.kind, labelled.n_pairs, tuple(matches), missed, tuple(false_alarms),
                       tuple(redundant), tuple(early))


@dataclass(frozen=True)
class Score:
    """How one method did on a corpus.

    Counts come with every rate so that its uncertainty can be judged (a recall of 0.95 from
    20 changes is not one from 2,000); ``recall_relevant_ci`` is a 95% Wilson interval.

    Attributes
    ----------
    method : str
    recall_relevant : float
        Matched relevant true changes / relevant true changes.
    recall_small : float
        The same for true changes below 3%.
    precision : float
        Matched detections / (matched detections + false alarms); NaN with no detection.
    f1 : float
        Harmonic mean of ``precision`` and ``recall_relevant``.
    false_alarms_per_1000 : float
        False alarms per 1,000 consecutive version pairs.
    delay_mean, delay_median : float
        Versions from a true change to the version reported for it, over matches.
    recall_by_kind : dict
        Recall of relevant true changes in the series of each kind (``step``, ``revert``,
        ``creep``, ``bimodal``).
    false_alarms_by_kind : dict
        False alarms per 1,000 version pairs in the series of each kind.
    n_relevant, n_relevant_found, n_small, n_small_found, n_detections, n_false_alarms,
    n_redundant, n_pairs : int
    n_early : int
        The false alarms that are a missed true change placed 1 to ``tolerance`` versions too
        early (counted in ``n_false_alarms`` too).
    seconds : float
        Time spent in the detector, summed over worker processes.
    error : str or None
        Set when the method failed; the other fields are then NaN or 0.
    n_series : int
        Series scored (analysed).
    n_not_analysed : int
        Series the method could not analyse, left out of every rate above.
    not_analysed : dict
        Reason -> series not analysed for it.
    """

    method: str
    recall_relevant: float
    recall_small: float
    precision: float
    f1: float
    false_alarms_per_1000: float
    delay_mean: float
    delay_median: float
    recall_by_kind: Mapping[str, float] = field(default_factory=dict)
    false_alarms_by_kind: Mapping[str, float] = field(default_factory=dict)
    recall_relevant_ci: tuple[float, float] = (float("nan"), float("nan"))
    n_relevant: int = 0
    n_relevant_found: int = 0
    n_small: int = 0
    n_small_found: int = 0
    n_detections: int = 0
    n_false_alarms: int = 0
    n_redundant: int = 0
    n_pairs: int = 0
    n_early: int = 0
    seconds: float = float("nan")
    error: str | None = None
    n_series: int = 0
    n_not_analysed: int = 0
    not_analysed: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict:
        """Plain JSON values; NaN (undefined) becomes null."""
        return _clean(asdict(self))


def _clean(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (95% by default)."""
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def score(method: str, outcomes: Sequence[SeriesMatch], *, seconds: float = float("nan"),
          not_analysed: Sequence[str] = ()) -> Score:
    """Aggregate the per-series outcomes of one method into a :class:`Score`.

    ``outcomes`` are those of the series it analysed; ``not_analysed`` holds one reason per
    series it could not analyse (counted, not scored).
    """
    rel_total = rel_found = small_total = small_found = fa = red = pairs = early = 0
    delays: list[int] = []
    kind_rel: dict[str, list[int]] = {}
    kind_fa: dict[str, list[int]] = {}
    for o in outcomes:
        found_rel = sum(m.truth.relevant for m in o.matches)
        missed_rel = sum(t.relevant for t in o.missed)
        rel_found += found_rel
        rel_total += found_rel + missed_rel
        small_found += sum(not m.truth.relevant for m in o.matches)
        small_total += sum(not m.truth.relevant for m in o.matches) + sum(not t.relevant for t in o.missed)
        fa += len(o.false_alarms)
        early += len(o.early)
        red += len(o.redundant)
        pairs += o.n_pairs
        delays.extend(m.delay for m in o.matches)
        kr = kind_rel.setdefault(o.kind, [0, 0])
        kr[0] += found_rel
        kr[1] += found_rel + missed_rel
        kf = kind_fa.setdefault(o.kind, [0, 0])
        kf[0] += len(o.false_alarms)
        kf[1] += o.n_pairs
    matched = len(delays)
    recall = _ratio(rel_found, rel_total)
    precision = _ratio(matched, matched + fa)
    if math.isfinite(precision) and math.isfinite(recall):
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    else:
        f1 = 0.0 if recall == 0 else float("nan")  # no detection at all: nothing found
    order = [k for k in KINDS if k in kind_rel] + sorted(set(kind_rel) - set(KINDS))
    return Score(
        method=method, recall_relevant=recall, recall_small=_ratio(small_found, small_total),
        precision=precision, f1=f1, false_alarms_per_1000=1000 * _ratio(fa, pairs),
        delay_mean=float(np.mean(delays)) if delays else float("nan"),
        delay_median=float(np.median(delays)) if delays else float("nan"),
        recall_by_kind={k: _ratio(*kind_rel[k]) for k in order if kind_rel[k][1]},
        false_alarms_by_kind={k: 1000 * _ratio(*kind_fa[k]) for k in order if kind_fa[k][1]},
        recall_relevant_ci=wilson(rel_found, rel_total),
        n_relevant=rel_total, n_relevant_found=rel_found, n_small=small_total, n_small_found=small_found,
        n_detections=matched + fa + red, n_false_alarms=fa, n_redundant=red, n_pairs=pairs, n_early=early, seconds=seconds,
        n_series=len(outcomes), n_not_analysed=len(not_analysed), not_analysed=dict(Counter(not_analysed)))


def error_score(method: str, error: str, *, seconds: float = float("nan")) -> Score:
    """The row of a method that failed."""
    nan = float("nan")
    return Score(method, nan, nan, nan, nan, nan, nan, nan, seconds=seconds, error=error)
