"""Run detectors over labelled corpora and score them; each method's worst row over several corpora.

:func:`evaluate` runs every method over every series of one corpus (in worker processes with
``jobs > 1``), matches the detections to the true changes (:mod:`.score`) and returns an
:class:`EvaluationResult`.  A method that raises on a series gets an error row, not a crash; a
registered method whose module is not there yet, or a baseline whose package is not installed,
is skipped with a note; a series a method cannot analyse (too short for it: its
:meth:`~regbench.detect.Detector.not_analysable` says why, or it tests no pair of versions) is
counted as not analysed, with the reason.  :func:`evaluate_corpora` does this for several
corpora (shapes, seeds, real measurements) one after the other and adds each method's worst
row (:func:`worst_rows`): the default is the method whose worst row is best, not whose average
is.  :mod:`.tables` renders the result.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field

from ..detect import BUILTIN, Change, Detector, available_methods, get_detector
from ..errors import MissingDependency
from ..model import Series
from .baselines import BASELINES, make_baseline
from .corpus import Corpus
from .score import DEFAULT_TOLERANCE, Score, error_score, match_series, score

#: Version of the evaluation JSON (:meth:`Evaluation.to_json`).  2: several corpora (a ``corpus``
#: name on every score), each method's worst row, series not analysed.
FORMAT_VERSION = 2

#: ``progress(method, series_done, series_total)``, called in the calling process.
Progress = Callable[[str, int, int], None]


def all_methods() -> list[str]:
    """Every registered detector, then every baseline."""
    return [*available_methods(), *BASELINES]


@dataclass(frozen=True)
class NotAnalysed:
    """A series a method could not analyse, and why (in :attr:`EvaluationResult.detections`)."""

    reason: str


@dataclass(frozen=True)
class EvaluationResult:
    """Scores of several methods on one corpus.

    ``name`` is the corpus' (:attr:`Corpus.name`), ``corpus`` its parameters and counts,
    ``notes`` one line per skipped method, ``seconds`` the wall time of the evaluation;
    ``detections`` maps each scored method to its per-series changes (or :class:`NotAnalysed`).
    """

    corpus: dict
    scores: tuple[Score, ...]
    notes: tuple[str, ...] = ()
    tolerance: int = DEFAULT_TOLERANCE
    seconds: float = float("nan")
    jobs: int = 1
    detections: dict = field(default_factory=dict, repr=False, compare=False)
    name: str = "synthetic"

    def score_of(self, method: str) -> Score:
        for s in self.scores:
            if s.method == method:
                return s
        raise KeyError(method)

    def to_json(self) -> dict:
        """This corpus alone, in the layout of :meth:`Evaluation.to_json`."""
        return Evaluation.of(self).to_json()


@dataclass(frozen=True)
class WorstRow:
    """One method's worst scores over several corpora, and on which corpus each was.

    Attributes
    ----------
    method : str
    recall_relevant, recall_corpus : float, str
        The lowest recall of relevant changes, and the corpus it was on.
    f1, f1_corpus : float, str
        The lowest F1 and its corpus.
    false_alarms_per_1000, false_alarms_corpus : float, str
        The highest false alarm rate and its corpus.
    n_corpora : int
        Corpora the method was scored on (not skipped, not failed).
    n_not_analysed, n_series : int
        Series it could not analyse, and series it was given, over those corpora.
    failed : tuple of str
        Corpora on which it raised (an error row); such a method is ranked after every other.

    A rate that is undefined on every corpus (no relevant change, no detection) is NaN with the
    corpus ``""``.
    """

    method: str
    recall_relevant: float
    recall_corpus: str
    f1: float
    f1_corpus: str
    false_alarms_per_1000: float
    false_alarms_corpus: str
    n_corpora: int
    n_not_analysed: int = 0
    n_series: int = 0
    failed: tuple[str, ...] = ()

    def to_json(self) -> dict:
        d = asdict(self)
        d["failed"] = list(self.failed)
        return {k: _finite(v) if isinstance(v, float) else v for k, v in d.items()}


@dataclass(frozen=True)
class Evaluation:
    """Scores of several methods on several corpora (:func:`evaluate_corpora`), and each
    method's worst row, best first (:func:`worst_rows`)."""

    results: tuple[EvaluationResult, ...]
    worst: tuple[WorstRow, ...]
    tolerance: int = DEFAULT_TOLERANCE
    jobs: int = 1
    seconds: float = float("nan")

    @classmethod
    def of(cls, result: EvaluationResult) -> Evaluation:
        """The evaluation of one corpus."""
        return cls((result,), worst_rows((result,)), tolerance=result.tolerance, jobs=result.jobs,
                   seconds=result.seconds)

    @property
    def notes(self) -> tuple[str, ...]:
        """The notes of every corpus, each once, in order."""
        return tuple(dict.fromkeys(n for r in self.results for n in r.notes))

    def to_json(self) -> dict:
        """``format_version``, ``tolerance``, ``jobs``, ``seconds`` (wall time), ``corpora`` (one
        object per corpus: ``name``, its parameters and counts), ``scores`` (one object per corpus
        and method, with the corpus' ``name`` as ``corpus``), ``worst`` (one object per method,
        best first) and ``notes``; undefined numbers are null."""
        return {"format_version": FORMAT_VERSION, "tolerance": self.tolerance, "jobs": self.jobs,
                "seconds": _finite(self.seconds),
                "corpora": [{"name": r.name, **r.corpus} for r in self.results],
                "scores": [{"corpus": r.name, **s.to_json()} for r in self.results for s in r.scores],
                "worst": [w.to_json() for w in self.worst], "notes": list(self.notes)}


def _finite(x: float):
    return x if isinstance(x, float) and math.isfinite(x) else None


def resolve(name: str) -> Detector:
    """The detector (or baseline) called ``name``, built with its defaults.

    Raises :class:`ModuleNotFoundError` when a registered method's module is not there, and
    :class:`~regbench.errors.MissingDependency` when a baseline's package is not installed.
    """
    if name in BASELINES:
        return make_baseline(name)
    return get_detector(name)


def _skip_note(name: str, exc: BaseException) -> str:
    if isinstance(exc, MissingDependency):
        return f"{name}: skipped, {exc}"
    missing = getattr(exc, "name", None) or str(exc)
    if name in BUILTIN and missing == f"regbench.detect.{BUILTIN[name]}":
        return f"{name}: skipped, not available yet (no module {missing})"
    return f"{name}: skipped, needs module {missing!r}"


# Worker side ---------------------------------------------------------------------------------

_CORPUS: Corpus | None = None


def _init_worker(corpus: Corpus) -> None:
    global _CORPUS
    _CORPUS = corpus


Outcome = list[Change] | NotAnalysed | BaseException


def _analyse(detector: Detector, series: Series) -> list[Change] | NotAnalysed:
    reason = detector.not_analysable(series)
    if reason is not None:
        return NotAnalysed(reason)
    changes, n_tests = detector.detect_counted(series)
    if n_tests == 0 and not changes:
        usable = sum(1 for r in series.runs if len(r))
        return NotAnalysed(f"tested no pair of versions ({usable} versions with data)")
    return list(changes)


def _run_chunk(detector: Detector, start: int, stop: int, corpus: Corpus | None = None
               ) -> tuple[list[Outcome], float]:
    """Detections for series ``start:stop``: (per-series list of changes, not analysed, or an
    error; seconds)."""
    corpus = corpus if corpus is not None else _CORPUS
    # Called here with the corpus, or in a worker process whose initializer (_init_worker) set it.
    assert corpus is not None
    out: list[Outcome] = []
    t0 = time.perf_counter()
    for labelled in corpus.series[start:stop]:
        try:
            with warnings.catch_warnings():
                # Degenerate versions (outliers, one-value runs) warn inside detectors; the
                # evaluation scores what they return.
                warnings.simplefilter("ignore")
                out.append(_analyse(detector, labelled.series))
        except Exception as exc:  # a failing detector is a result (an error row), not a crash
            out.append(exc if _picklable(exc) else RuntimeError(f"{type(exc).__name__}: {exc}"))
    return out, time.perf_counter() - t0


def _picklable(exc: BaseException) -> bool:
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


# Driver ------------------------------------------------------------------------------------------

def evaluate(corpus: Corpus, methods: Sequence[str | Detector], *, jobs: int = 1, tolerance: int = DEFAULT_TOLERANCE,
             progress: Progress | None = None, chunk: int | None = None) -> EvaluationResult:
    """Run ``methods`` over ``corpus`` and score them.

    Parameters
    ----------
    corpus : Corpus
        From :func:`~.corpus.make_corpus`, :func:`~.real.load_real_corpus`, or hand-made.
    methods : sequence of str or Detector
        Names of registered detectors (:func:`regbench.detect.available_methods`) or baselines
        (:data:`.baselines.BASELINES`), or detector objects (scored under their ``name``).
    jobs : int, keyword-only
        Worker processes (1 = run here).  Detector objects are pickled to the workers, so their
        classes must be importable.
    tolerance : int, keyword-only
        Versions a detection may come after a true change (see :mod:`.score`).
    progress : callable, keyword-only
        ``progress(method, done, total)`` after each chunk of series.
    chunk : int, keyword-only
        Series per task (default: about four tasks per worker and method).

    Returns
    -------
    EvaluationResult
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError("`jobs` must be a positive integer")
    t_start = time.perf_counter()
    notes: list[str] = []
    detectors: dict[str, Detector] = {}
    failed: dict[str, str] = {}
    order: list[str] = []
    for m in methods:
        if isinstance(m, Detector):
            label = m.name or type(m).__name__
            detectors[label] = m
            order.append(label)
            continue
        if m in order:
            continue
        if m not in BASELINES and m not in available_methods():
            raise ValueError(f"unknown method {m!r} (known: {', '.join(all_methods())})")
        try:
            detectors[m] = resolve(m)
            order.append(m)
        except (ModuleNotFoundError, MissingDependency) as exc:
            notes.append(_skip_note(m, exc))
        except Exception as exc:
            failed[m] = f"{type(exc).__name__}: {exc}"
            order.append(m)

    n = len(corpus.series)
    size = chunk or max(1, math.ceil(n / (4 * jobs)))
    bounds = [(a, min(a + size, n)) for a in range(0, n, size)]
    results: dict[str, list] = {m: [None] * n for m in detectors}
    seconds = dict.fromkeys(detectors, 0.0)
    done = dict.fromkeys(detectors, 0)

    def collect(method: str, start: int, out, elapsed: float) -> None:
        results[method][start:start + len(out)] = out
        seconds[method] += elapsed
        done[method] += len(out)
        if progress is not None:
            progress(method, done[method], n)

    if jobs == 1 or not detectors:
        for method, det in detectors.items():
            for a, b in bounds:
                out, elapsed = _run_chunk(det, a, b, corpus)
                collect(method, a, out, elapsed)
    else:
        import multiprocessing

        # spawn: no fork of a process that may run a progress-bar thread; the corpus travels once
        # per worker.
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_init_worker,
                                 initargs=(corpus,)) as pool:
            futures = {pool.submit(_run_chunk, det, a, b): (method, a)
                       for method, det in detectors.items() for a, b in bounds}
            for fut in as_completed(futures):
                method, a = futures[fut]
                out, elapsed = fut.result()
                collect(method, a, out, elapsed)

    scores = []
    detections: dict[str, list] = {}
    for method in order:
        if method in failed:
            scores.append(error_score(method, failed[method]))
            continue
        per_series = results[method]
        errors = [(k, r) for k, r in enumerate(per_series) if isinstance(r, BaseException)]
        if errors:
            k, first = errors[0]
            scores.append(error_score(
                method, f"{type(first).__name__}: {first} (on {corpus.series[k].series.benchmark}; "
                        f"{len(errors)} of {n} series failed)", seconds=seconds[method]))
            continue
        outcomes = [match_series(s, r, tolerance=tolerance) for s, r in zip(corpus.series, per_series, strict=True)
                    if not isinstance(r, NotAnalysed)]
        skipped = [r.reason for r in per_series if isinstance(r, NotAnalysed)]
        scores.append(score(method, outcomes, seconds=seconds[method], not_analysed=skipped))
        detections[method] = per_series
    info = {**corpus.params, **corpus.counts()}
    return EvaluationResult(corpus=info, scores=tuple(scores), notes=tuple(notes), tolerance=tolerance,
                            seconds=time.perf_counter() - t_start, jobs=jobs, detections=detections,
                            name=corpus.name)


def evaluate_corpora(corpora: Iterable[Corpus], methods: Sequence[str | Detector], *, jobs: int = 1,
                     tolerance: int = DEFAULT_TOLERANCE, progress: Progress | None = None,
                     chunk: int | None = None) -> Evaluation:
    """Run ``methods`` over each corpus in turn, score them, and find each method's worst row.

    Parameters
    ----------
    corpora : iterable of Corpus
        Taken one at a time (a generator may make each when it is wanted, so that only one is
        in memory); their names (:attr:`Corpus.name`) label the rows and should differ.
    methods, jobs, tolerance, progress, chunk
        As for :func:`evaluate`.

    Returns
    -------
    Evaluation
        One :class:`EvaluationResult` per corpus and the worst rows (:func:`worst_rows`).

    Raises
    ------
    ValueError
        For an unknown method, or no corpus at all.
    """
    t_start = time.perf_counter()
    results = tuple(evaluate(c, methods, jobs=jobs, tolerance=tolerance, progress=progress, chunk=chunk)
                    for c in corpora)
    if not results:
        raise ValueError("`corpora` must hold at least one corpus")
    return Evaluation(results, worst_rows(results), tolerance=tolerance, jobs=jobs,
                      seconds=time.perf_counter() - t_start)


def _extreme(scores: list[tuple[str, Score]], attr: str, worst) -> tuple[float, str]:
    values = [(getattr(s, attr), name) for name, s in scores if math.isfinite(getattr(s, attr))]
    if not values:
        return float("nan"), ""
    return worst(values, key=lambda v: v[0])


def worst_rows(results: Sequence[EvaluationResult]) -> tuple[WorstRow, ...]:
    """Each method's worst row over ``results``, best first.

    The worst recall of relevant changes, the worst F1 and the highest false alarm rate are
    taken separately (each with the corpus it was on), so one row may name three corpora.
    Methods are sorted by their worst F1, best first (ties: the higher worst recall, then the
    lower highest false alarm rate); a method that failed on some corpus, or has no F1 anywhere,
    comes after every other.
    """
    order = list(dict.fromkeys(s.method for r in results for s in r.scores))
    rows = []
    for method in order:
        scored = [(r.name, s) for r in results for s in r.scores if s.method == method and not s.error]
        failed = tuple(r.name for r in results for s in r.scores if s.method == method and s.error)
        recall, recall_at = _extreme(scored, "recall_relevant", min)
        f1, f1_at = _extreme(scored, "f1", min)
        fa, fa_at = _extreme(scored, "false_alarms_per_1000", max)
        rows.append(WorstRow(method, recall, recall_at, f1, f1_at, fa, fa_at, n_corpora=len(scored),
                             n_not_analysed=sum(s.n_not_analysed for _, s in scored),
                             n_series=sum(s.n_series + s.n_not_analysed for _, s in scored), failed=failed))

    def rank(w: WorstRow):
        ok = not w.failed and math.isfinite(w.f1)
        return (not ok, -w.f1 if ok else 0.0,
                -w.recall_relevant if math.isfinite(w.recall_relevant) else math.inf,
                w.false_alarms_per_1000 if math.isfinite(w.false_alarms_per_1000) else math.inf)

    return tuple(sorted(rows, key=rank))


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))




__all__ = ["Evaluation", "EvaluationResult", "NotAnalysed", "WorstRow", "all_methods", "default_jobs", "evaluate",
           "evaluate_corpora", "resolve", "worst_rows"]
