"""``regbench compare --format github``: the comparison as a Markdown pull-request comment.

A verdict line first (``2 regressions, 1 improvement, 40 unchanged``), under an icon that says
whether the gate failed (``:x:``), passed (``:white_check_mark:``), or passed while benchmarks
could not be decided (``:warning:``, ``:grey_question:`` when none could), then why B did not build
when it did not (its benchmarks are ``failed``), then every benchmark in a collapsible
``<details>`` table, the worst change first, each change with its interval.  The
same text serves as the GitHub Actions job summary (``GITHUB_STEP_SUMMARY``); writing it is the
command's job, this module only renders.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..failures import build_failure_cause
from ..notify.markdown import cell

if TYPE_CHECKING:
    from ..analysis import BenchmarkComparison
    from ..model import BuildInfo

#: How the verdicts are counted in the verdict line, in its order (singular, plural).
_COUNTED = {"failed": ("failed", "failed"), "regression": ("regression", "regressions"),
            "improvement": ("improvement", "improvements"), "no change": ("unchanged", "unchanged"),
            "inconclusive": ("inconclusive", "inconclusive")}
#: The marker of a verdict in the table (a regression or a benchmark that no longer runs stands out).
_MARK = {"regression": "**regression**", "improvement": "improvement", "inconclusive": "inconclusive",
         "no change": "no change", "failed": "**failed** (no run of B ok)"}


def verdict_line(rows: Sequence[BenchmarkComparison]) -> str:
    """``2 regressions, 1 improvement, 40 unchanged``: each verdict that occurs, with its count
    (regressions, improvements and unchanged are always named; failed and inconclusive when there is one)."""
    counts = {v: sum(r.verdict == v for r in rows) for v in _COUNTED}
    parts = [f"{n} {_COUNTED[v][0] if n == 1 else _COUNTED[v][1]}" for v, n in counts.items()
             if n or v not in ("inconclusive", "failed")]
    return ", ".join(parts)


def _heading(rows: Sequence[BenchmarkComparison]) -> tuple[str, str, str | None]:
    """The icon of the comment, the words before its verdict line, and a sentence under it.

    A regression or a benchmark that no longer runs is ``:x:`` (the gate fails); a comparison
    where no benchmark could be decided is ``:grey_question:`` and says so, where one where some
    could not is ``:warning:``: neither may look like a green check, since a regression can hide
    in an interval too wide to decide.  Only then ``:white_check_mark:``.
    """
    undecided = sum(r.verdict == "inconclusive" for r in rows)
    if any(r.verdict in ("regression", "failed") for r in rows):
        return ":x:", "", None
    more = "more runs of each version narrow the intervals (`[defaults] runs` in regbench.toml)"
    if undecided == len(rows):
        return (":grey_question:", "inconclusive: ",
                f"No benchmark could be decided: {more}. No regression was shown, so the gate passes.")
    if undecided:
        which = "1 benchmark" if undecided == 1 else f"{undecided} benchmarks"
        return ":warning:", "", f"{which} could not be decided: {more}."
    return ":white_check_mark:", "", None


def worse_first(rows: Sequence[BenchmarkComparison]) -> list[BenchmarkComparison]:
    """``rows`` by change, the worst first: benchmarks that failed on B lead, then the largest
    rise of a lower-is-better benchmark (or fall of a higher-is-better one; a rise from exactly 0,
    ``+inf``, is the largest), the best improvement comes last, undefined changes after all; ties
    by name, so the order is the same on every run."""
    def key(r: BenchmarkComparison) -> tuple[int, float, str, str, str]:
        c = r.comparison.change
        if r.verdict == "failed":
            return (0, 0.0, r.benchmark, r.config, r.machine)
        if c is None or math.isnan(c):
            return (2, 0.0, r.benchmark, r.config, r.machine)
        if r.scale == "difference" and r.comparison.mean_a:
            c = c / abs(r.comparison.mean_a)  # a difference, in A's size: comparable with a ratio
        return (1, -c if r.direction != "higher" else c, r.benchmark, r.config, r.machine)

    return sorted(rows, key=key)


def code_span(text: str) -> str:
    """``text`` on one line as a Markdown code span, shown as it is whatever it holds (``*``,
    ``_``, ``<``, ``[``): its fence is one backtick longer than the longest run of backticks in
    it, and a space pads a text that starts or ends with one (CommonMark, "Code spans")."""
    text = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def comparison_markdown(rows: Sequence[BenchmarkComparison], *, confidence: float, threshold: float,
                        labels: Mapping[str, str] | None = None, location: str | None = None,
                        unbuilt: BuildInfo | None = None) -> str:
    """The comment: a heading with the verdict line, then the table in ``<details>``.

    With ``location`` (``compare --location``), a column names what each run contributed.
    With ``unbuilt``, B's failed build (its benchmarks are ``failed``), a line under the heading
    says why it failed, as the table of ``compare`` does: how it ended and the builder's error
    (:func:`~regbench.failures.build_failure_cause`), as a code span.

    Cells from the store (benchmark, configuration and machine names, version names) are
    escaped for a Markdown table: a ``|`` in a benchmark's name stays in its cell.  Versions are
    shown by their ``labels`` (tags, :func:`~regbench.report.console.version_labels`), means in
    the unit that suits each benchmark, as the table of ``compare`` shows them.
    """
    from .results import change_cells, compared_statistic, comparison_units, location_words, signed_note
    from .units import fmt_scaled

    labels = labels or {}
    a, b = (labels.get(v, v) for v in (rows[0].a, rows[0].b))
    units = comparison_units(rows)
    icon, headline, note = _heading(rows)
    where = [("config", len({r.config for r in rows}) > 1), ("machine", len({r.machine for r in rows}) > 1)]
    shown = [name for name, differs in where if differs]
    located = ["location"] if location is not None else []
    header = ["benchmark", *shown, cell(a), cell(b), "change", f"{confidence:.0%} CI", "runs", *located, "verdict"]
    align = ["---", *["---"] * len(shown), "---:", "---:", "---:", "---:", "---:", *["---"] * len(located), "---"]
    built = ([f"{cell(b)} did not build: "
              f"{code_span(build_failure_cause(unbuilt.status, unbuilt.exit_code, unbuilt.log_tail))}.", ""]
             if unbuilt is not None else [])
    lines = [f"### {icon} regbench: {headline}{verdict_line(rows)}", "", *([note, ""] if note else []), *built,
             f"{cell(b)} against {cell(a)}: change of {compared_statistic(rows, location)}, "
             f"{confidence:.0%} bootstrap interval over runs, threshold {threshold:.1%}.", "",
             "<details><summary>All " + (f"{len(rows)} benchmarks" if len(rows) != 1 else "1 benchmark")
             + ", the worst change first</summary>", "",
             "| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    for r in worse_first(rows):
        c = r.comparison
        cells = [cell(r.benchmark), *[cell(getattr(r, name)) for name in shown],
                 cell(fmt_scaled(c.mean_a, units[r.benchmark])), cell(fmt_scaled(c.mean_b, units[r.benchmark])),
                 *(cell(x) for x in change_cells(r, units[r.benchmark])), f"{c.runs_a}/{c.runs_b}",
                 *([location_words(r)] if located else []), _MARK[r.verdict]]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "</details>"]
    signed = sorted({r.benchmark for r in rows if r.scale == "difference"})
    if signed:
        lines += ["", cell(signed_note(signed, threshold)) + "."]
    return "\n".join(lines) + "\n"
