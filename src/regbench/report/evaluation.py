"""Evaluation of detectors on the labelled corpus (``regbench evaluate``,
:mod:`regbench.evaluate`): progress bars while it runs, then the score table with its notes, or
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

    from ..evaluate import EvaluationResult


class EvaluationProgress:
    """Progress bars on stderr, in a terminal only: one while the corpus is made, then one per method.

    A context manager; call :meth:`corpus` around making the corpus, and the object itself as
    :func:`regbench.evaluate.evaluate`'s ``progress(method, done, total)``.
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
    def corpus(self) -> Iterator[None]:
        """An open-ended bar while the corpus is made (left to the display's end on an error)."""
        bar = self._progress
        task = bar.add_task("corpus", total=None) if bar is not None else None
        yield
        if bar is not None and task is not None:
            bar.remove_task(task)

    def __call__(self, method: str, done: int, total: int) -> None:
        if self._progress is None:
            return
        if method not in self._bars:
            self._bars[method] = self._progress.add_task(method, total=total)
        self._progress.update(self._bars[method], completed=done)


def print_evaluation_table(result: EvaluationResult) -> None:
    """The score table (every method side by side), its notes and the wall time."""
    from ..evaluate.runner import COLUMNS, RIGHT, describe_corpus, table_rows

    emit_table(f"Detectors on the labelled corpus ({describe_corpus(result)})", list(COLUMNS),
               table_rows(result), right=set(RIGHT))
    for note in result.notes:
        console.print(f"note: {note}", markup=False)
    console.print(f"recall by kind is of relevant changes (>= 3%); wall time {result.seconds:.1f} s "
                  f"with {result.jobs} job(s)", markup=False)


def evaluation_text(result: EvaluationResult, fmt: str) -> str:
    """The result as a whole text: ``json``, ``markdown`` or plain aligned ``text``."""
    if fmt == "json":
        return json.dumps(result.to_json(), indent=1) + "\n"
    from ..evaluate import render

    return render(result, fmt)
