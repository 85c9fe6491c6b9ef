"""Run detectors over a labelled corpus, score them, and render the side-by-side table.

:func:`evaluate` runs every method over every series (in worker processes with ``jobs > 1``),
matches the detections to the true changes (:mod:`.score`) and returns an
:class:`EvaluationResult`.  A method that raises on a series gets an error row, not a crash; a
registered method whose module is not there yet, or a baseline whose package is not installed,
is skipped with a note.  :func:`render` turns the result into plain text or Markdown (the CLI
draws the terminal table itself).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

from ..detect import BUILTIN, Change, Detector, available_methods, get_detector
from ..errors import MissingDependency
from .baselines import BASELINES, make_baseline
from .corpus import Corpus
from .score import DEFAULT_TOLERANCE, Score, error_score, match_series, score

FORMAT_VERSION = 1

#: ``progress(method, series_done, series_total)``, called in the calling process.
Progress = Callable[[str, int, int], None]


def all_methods() -> list[str]:
    """Every registered detector, then every baseline."""
    return [*available_methods(), *BASELINES]


@dataclass(frozen=True)
class EvaluationResult:
    """Scores of several methods on one corpus.

    ``corpus`` holds the corpus parameters and counts, ``notes`` one line per skipped method,
    ``seconds`` the wall time of the whole evaluation.
    """

    corpus: dict
    scores: tuple[Score, ...]
    notes: tuple[str, ...] = ()
    tolerance: int = DEFAULT_TOLERANCE
    seconds: float = float("nan")
    jobs: int = 1
    detections: dict = field(default_factory=dict, repr=False, compare=False)

    def score_of(self, method: str) -> Score:
        for s in self.scores:
            if s.method == method:
                return s
        raise KeyError(method)

    def to_json(self) -> dict:
        return {"format_version": FORMAT_VERSION, "corpus": self.corpus, "tolerance": self.tolerance,
                "jobs": self.jobs, "seconds": _finite(self.seconds),
                "scores": [s.to_json() for s in self.scores], "notes": list(self.notes)}


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


def _run_chunk(detector: Detector, start: int, stop: int, corpus: Corpus | None = None
               ) -> tuple[list[list[Change] | BaseException], float]:
    """Detections for series ``start:stop``: (per-series list of changes or an error, seconds)."""
    corpus = corpus if corpus is not None else _CORPUS
    # Called here with the corpus, or in a worker process whose initializer (_init_worker) set it.
    assert corpus is not None
    out: list[list[Change] | BaseException] = []
    t0 = time.perf_counter()
    for labelled in corpus.series[start:stop]:
        try:
            with warnings.catch_warnings():
                # Degenerate versions (outliers, one-value runs) warn inside detectors; the
                # evaluation scores what they return.
                warnings.simplefilter("ignore")
                out.append(list(detector.detect(labelled.series)))
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
        From :func:`~.corpus.make_corpus` (or hand-made).
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
        outcomes = [match_series(s, r, tolerance=tolerance) for s, r in zip(corpus.series, per_series, strict=True)]
        scores.append(score(method, outcomes, seconds=seconds[method]))
        detections[method] = per_series
    info = {**corpus.params, **corpus.counts()}
    return EvaluationResult(corpus=info, scores=tuple(scores), notes=tuple(notes), tolerance=tolerance,
                            seconds=time.perf_counter() - t_start, jobs=jobs, detections=detections)


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


# Rendering --------------------------------------------------------------------------------------

KIND_COLUMNS = ("step", "revert", "creep", "bimodal")
COLUMNS = ("method", "recall ≥3%", "recall <3%", "precision", "F1", "false alarms /1000 pairs",
           "delay mean/median", *(f"{k}" for k in KIND_COLUMNS), "time (s)")
RIGHT = frozenset(COLUMNS[1:])


def _num(x: float, digits: int = 3) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def table_rows(result: EvaluationResult) -> list[list[str]]:
    """One row of cells per method (plain text; the columns are :data:`COLUMNS`)."""
    rows = []
    for s in result.scores:
        if s.error:
            rows.append([s.method, f"error: {s.error}", *[""] * (len(COLUMNS) - 2)])
            continue
        rows.append([
            s.method,
            f"{_num(s.recall_relevant)} ({s.n_relevant_found}/{s.n_relevant})",
            f"{_num(s.recall_small, 2)} ({s.n_small_found}/{s.n_small})",
            _num(s.precision),
            _num(s.f1),
            f"{_num(s.false_alarms_per_1000, 2)} ({s.n_false_alarms})",
            f"{_num(s.delay_mean, 2)} / {_num(s.delay_median, 0)}",
            *(_num(s.recall_by_kind.get(k, float("nan")), 2) for k in KIND_COLUMNS),
            _num(s.seconds, 1),
        ])
    return rows


def describe_corpus(result: EvaluationResult) -> str:
    c = result.corpus
    seed = c.get("seed")
    return (f"{c.get('series')} series x {c.get('n_versions')} versions x {c.get('n_runs')} runs x "
            f"{c.get('n_iterations')} iterations (+{c.get('warmup')} warm-up), seed {seed}: "
            f"{c.get('version_pairs')} version pairs, {c.get('true_changes')} true changes "
            f"({c.get('relevant')} relevant >= 3%, {c.get('small')} small); tolerance {result.tolerance} versions")


def render(result: EvaluationResult, fmt: str = "text") -> str:
    """The table as plain aligned text (``text``) or Markdown (``markdown``), with the corpus
    line and the notes."""
    rows = table_rows(result)
    if fmt == "markdown":
        lines = [f"Corpus: {describe_corpus(result)}.", "",
                 "| " + " | ".join(COLUMNS) + " |",
                 "|" + "|".join("---" if c == "method" else "---:" for c in COLUMNS) + "|"]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |" for r in rows]
        lines.append("")
        lines.append(f"Recall by kind is of relevant changes; times are detector seconds summed over "
                     f"{result.jobs} worker(s); wall time {result.seconds:.0f} s.")
        lines += [f"- {n}" for n in result.notes]
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ValueError("`fmt` must be 'text' or 'markdown'")
    widths = [max([len(col), *(len(r[k]) for r in rows)]) for k, col in enumerate(COLUMNS)]

    def line(cells):
        return "  ".join(c.rjust(w) if COLUMNS[k] in RIGHT else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [f"Corpus: {describe_corpus(result)}", line(COLUMNS), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    out += [f"note: {n}" for n in result.notes]
    out.append(f"wall time {result.seconds:.1f} s with {result.jobs} job(s)")
    return "\n".join(out) + "\n"


__all__ = ["EvaluationResult", "all_methods", "default_jobs", "evaluate", "render", "resolve", "table_rows"]
