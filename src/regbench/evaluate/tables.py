"""The tables of an evaluation: every method on every corpus, and each method's worst row.

:func:`table_rows` and :func:`worst_table_rows` give the cells as plain text (the columns are
:data:`COLUMNS` and :data:`WORST_COLUMNS`), :func:`describe_corpus` one line per corpus and
:func:`notes` the lines under the tables; :func:`render` puts them together as aligned text or
Markdown.  The terminal table (rich) is drawn by :mod:`regbench.report.evaluation` from the same
cells.
"""

from __future__ import annotations

import math
from collections import Counter

from .runner import Evaluation, EvaluationResult, WorstRow

KIND_COLUMNS = ("step", "revert", "creep", "bimodal")
COLUMNS = ("corpus", "method", "recall ≥3%", "recall <3%", "precision", "F1", "false alarms /1000 pairs",
           "delay mean/median", *KIND_COLUMNS, "not analysed", "time (s)")
RIGHT = frozenset(COLUMNS[2:])
WORST_COLUMNS = ("method", "worst recall ≥3%", "worst F1", "most false alarms /1000 pairs", "not analysed",
                 "corpora")
WORST_RIGHT = frozenset({"not analysed", "corpora"})
#: Reasons for series not analysed listed per method and corpus; the rest are counted.
MAX_REASONS = 3


def _num(x: float | None, digits: int = 3) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _as_evaluation(result: Evaluation | EvaluationResult) -> Evaluation:
    return result if isinstance(result, Evaluation) else Evaluation.of(result)


def table_rows(result: Evaluation | EvaluationResult) -> list[list[str]]:
    """One row of cells per corpus and method (plain text; the columns are :data:`COLUMNS`)."""
    rows = []
    for r in _as_evaluation(result).results:
        for s in r.scores:
            if s.error:
                rows.append([r.name, s.method, f"error: {s.error}", *[""] * (len(COLUMNS) - 3)])
                continue
            total = s.n_series + s.n_not_analysed
            rows.append([
                r.name,
                s.method,
                f"{_num(s.recall_relevant)} ({s.n_relevant_found}/{s.n_relevant})",
                f"{_num(s.recall_small, 2)} ({s.n_small_found}/{s.n_small})",
                _num(s.precision),
                _num(s.f1),
                f"{_num(s.false_alarms_per_1000, 2)} ({s.n_false_alarms}"
                + (f"; {s.n_early} early)" if s.n_early else ")"),
                f"{_num(s.delay_mean, 2)} / {_num(s.delay_median, 0)}",
                *(_num(s.recall_by_kind.get(k, float("nan")), 2) for k in KIND_COLUMNS),
                f"{s.n_not_analysed} of {total}" if s.n_not_analysed else "0",
                _num(s.seconds, 1),
            ])
    return rows


def _at(value: float, corpus: str, digits: int = 3) -> str:
    return _num(value, digits) if not corpus else f"{_num(value, digits)} ({corpus})"


def worst_row_cells(w: WorstRow) -> list[str]:
    """The cells of one worst row (:data:`WORST_COLUMNS`)."""
    corpora = str(w.n_corpora) + (f"; failed on {', '.join(w.failed)}" if w.failed else "")
    return [w.method, _at(w.recall_relevant, w.recall_corpus), _at(w.f1, w.f1_corpus),
            _at(w.false_alarms_per_1000, w.false_alarms_corpus, 2),
            f"{w.n_not_analysed} of {w.n_series}" if w.n_not_analysed else "0", corpora]


def worst_table_rows(result: Evaluation | EvaluationResult) -> list[list[str]]:
    """One row of cells per method, best worst F1 first (:data:`WORST_COLUMNS`)."""
    return [worst_row_cells(w) for w in _as_evaluation(result).worst]


def describe_corpus(result: EvaluationResult) -> str:
    """``NAME: sizes, version pairs, true changes`` of one corpus."""
    c = result.corpus
    where = ""
    header = c.get("header")
    if isinstance(header, dict):
        machine = header.get("machine")
        host = machine.get("hostname") if isinstance(machine, dict) else None
        when = str(header.get("started") or "")[:10]
        where = "".join([f", measured {when}" if when else "", f" on {host}" if host else ""])
    return (f"{result.name}: {c.get('series')} series x {c.get('n_versions')} versions x {c.get('n_runs')} runs x "
            f"{c.get('n_iterations')} iterations (+{c.get('warmup')} warm-up){where}: "
            f"{c.get('version_pairs')} version pairs, {c.get('true_changes')} true changes "
            f"({c.get('relevant')} relevant >= 3%, {c.get('small')} small)")


def notes(result: Evaluation | EvaluationResult) -> list[str]:
    """Skipped methods, then series not analysed (per method and corpus, with the reasons)."""
    ev = _as_evaluation(result)
    out = list(ev.notes)
    for r in ev.results:
        for s in r.scores:
            if not s.n_not_analysed:
                continue
            reasons = Counter(s.not_analysed).most_common()
            shown = "; ".join(f"{reason} ({n})" for reason, n in reasons[:MAX_REASONS])
            more = f"; {len(reasons) - MAX_REASONS} other reasons" if len(reasons) > MAX_REASONS else ""
            out.append(f"{s.method} on {r.name}: {s.n_not_analysed} of {s.n_series + s.n_not_analysed} series "
                       f"not analysed, left out of its scores: {shown}{more}")
    return out


def worst_title(result: Evaluation | EvaluationResult) -> str:
    n = len(_as_evaluation(result).results)
    return (f"Worst row of each method over {n} {'corpus' if n == 1 else 'corpora'} "
            f"(the corpus in parentheses), sorted by the worst F1, best first")


def render(result: Evaluation | EvaluationResult, fmt: str = "text") -> str:
    """The corpora, the score table, the worst-row table and the notes, as plain aligned text
    (``text``) or Markdown (``markdown``)."""
    ev = _as_evaluation(result)
    rows, worst = table_rows(ev), worst_table_rows(ev)
    footer = (f"tolerance {ev.tolerance} versions; recall by kind is of relevant changes (>= 3%); times are "
              f"detector seconds summed over {ev.jobs} worker(s); wall time {ev.seconds:.0f} s")
    if fmt == "markdown":
        lines = ["Corpora:", "", *(f"- {describe_corpus(r)}" for r in ev.results), ""]
        lines += _markdown(COLUMNS, RIGHT, rows)
        lines += ["", f"{worst_title(ev)}:", ""]
        lines += _markdown(WORST_COLUMNS, WORST_RIGHT, worst)
        lines += ["", footer[0].upper() + footer[1:] + "."]
        lines += [f"- {n}" for n in notes(ev)]
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ValueError("`fmt` must be 'text' or 'markdown'")
    out = [f"Corpus {describe_corpus(r)}" for r in ev.results]
    out += _aligned(COLUMNS, RIGHT, rows)
    out += ["", f"{worst_title(ev)}:"]
    out += _aligned(WORST_COLUMNS, WORST_RIGHT, worst)
    out += [f"note: {n}" for n in notes(ev)]
    out.append(footer)
    return "\n".join(out) + "\n"


def _markdown(columns, right, rows) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |",
             "|" + "|".join("---:" if c in right else "---" for c in columns) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in r) + " |" for r in rows]
    return lines


def _aligned(columns, right, rows) -> list[str]:
    widths = [max([len(col), *(len(r[k]) for r in rows)]) for k, col in enumerate(columns)]

    def line(cells):
        return "  ".join(c.rjust(w) if columns[k] in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return [line(columns), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


__all__ = ["COLUMNS", "KIND_COLUMNS", "RIGHT", "WORST_COLUMNS", "WORST_RIGHT", "describe_corpus", "notes", "render",
           "table_rows", "worst_row_cells", "worst_table_rows", "worst_title"]
