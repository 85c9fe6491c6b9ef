"""Evaluation of detectors on labelled corpora (``regbench evaluate``, :mod:`regbench.evaluate`):
progress bars while it runs, then the score table and each method's worst row with the notes, or
the result as JSON, Markdown or plain text (:func:`regbench.evaluate.render`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .console import console, emit_table, err_console

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from ..evaluate import Evaluation


class EvaluationProgress:
    """Progress bars on stderr, in a terminal only: one while a corpus is made, then one per method.

    A context manager; call :meth:`corpus` around making each corpus, and the object itself as
    :func:`regbench.evaluate.evaluate_corpora`'s ``progress(method, done, total)``.  A method's
    bar goes when it is complete, so that the next corpus starts a new one.
    """

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._bars: dict[str, TaskID] = {}

    def __enter__(self) -> EvaluationProgress:
        if err_console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(TextColumn("{task.description:<20}"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), console=err_console, transient=True)
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    @contextlib.contextmanager
    def corpus(self, name: str = "corpus") -> Iterator[None]:
        """An open-ended bar while a corpus is made (left to the display's end on an error)."""
        bar = self._progress
        task = bar.add_task(name, total=None) if bar is not None else None
        yield
        if bar is not None and task is not None:
            bar.remove_task(task)

    def __call__(self, method: str, done: int, total: int) -> None:
        if self._progress is None:
            return
        if method not in self._bars:
            self._bars[method] = self._progress.add_task(method, total=total)
        self._progress.update(self._bars[method], completed=done)
        if done >= total:
            self._progress.remove_task(self._bars.pop(method))


def print_evaluation_table(result: Evaluation) -> None:
    """The score table (every method on every corpus), each method's worst row, the notes and
    the wall time."""
    from ..evaluate.tables import (
        COLUMNS,
        RIGHT,
        WORST_COLUMNS,
        WORST_RIGHT,
        describe_corpus,
        notes,
        table_rows,
        worst_table_rows,
        worst_title,
    )

    for r in result.results:
        console.print(f"Corpus {describe_corpus(r)}", markup=False)
    emit_table("Detectors on the labelled corpora", list(COLUMNS), table_rows(result), right=set(RIGHT))
    emit_table(worst_title(result), list(WORST_COLUMNS), worst_table_rows(result), right=set(WORST_RIGHT))
    for note in notes(result):
        console.print(f"note: {note}", markup=False)
    console.print(f"tolerance {result.tolerance} versions; recall by kind is of relevant changes (>= 3%); wall time "
                  f"{result.seconds:.1f} s with {result.jobs} job(s)", markup=False)


def evaluation_text(result: Evaluation, fmt: str) -> str:
    """The result as a whole text: ``json``, ``markdown`` or plain aligned ``text``."""
    if fmt == "json":
        return json.dumps(result.to_json(), indent=1) + "\n"
    from ..evaluate import render

    return render(result, fmt)
