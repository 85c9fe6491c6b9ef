"""Go's benchmark output: ``go test -bench`` text (``go``) and ``go test -json`` events (``go-json``).

The text is what ``go test -run '^$' -bench . -count N -benchmem`` prints: per package a header
(``goos:``, ``goarch:``, ``pkg:``, ``cpu:``), then one result line per benchmark and repetition::

    BenchmarkJoin-8   	 1000000	       103.4 ns/op	      16 B/op	       1 allocs/op

that is the name (with the ``-GOMAXPROCS`` suffix, omitted when it is 1), ``b.N`` and then pairs
of value and unit: ``ns/op``, ``MB/s`` (``b.SetBytes``), ``B/op`` and ``allocs/op``
(``-benchmem``) and the custom metrics of ``b.ReportMetric`` (units never hold blanks).
``go test -json`` wraps the same text in ``{"Action": "output", "Package": ..., "Output": ...}``
events; a result line is often split over two events (the name is printed before the benchmark
runs, the numbers after) and the repetitions after the first carry no ``Test``, so the text is
reassembled per ``Package`` in event order, then read like the plain text.

Mapping to runs (one invocation is one run; the ``-count`` repetitions are its samples):

* the benchmark is the name as printed, ``-GOMAXPROCS`` suffix kept: it is part of the
  configuration (``-cpu 1,8`` gives two benchmarks);
* but a benchmark function that two or more packages of the output report (``go test -bench .
  ./...`` over a module with ``BenchmarkParse`` in two packages) is named with its package, in
  every package that reports it: ``BenchmarkParse-8 (example.com/mod/json)``, and so are its
  sub-benchmarks (``BenchmarkParse/small-8 (example.com/mod/json)``); see "Packages" below;
* ``ns/op`` is the primary value, ``NAME``; every other unit is ``NAME [UNIT]``
  (``NAME [B/op]``, ``NAME [allocs/op]``, ``NAME [MB/s]``, ``NAME [bytes/iter]``; with a package,
  ``BenchmarkParse-8 (example.com/mod/json) [B/op]``);
* units ending in ``/s`` are higher-is-better, every other one lower-is-better;
* ``params`` keep the package, ``b.N`` of each sample and the header (goos, goarch, cpu);
* a second header (text) or ``start`` event (JSON) of a package already seen starts a new run.

Failed benchmarks (:meth:`GoTextAdapter.failures`): ``go test`` exits with status 1 when a
benchmark fails, after printing the other benchmarks' results and, for the failed one, a
``--- FAIL: NAME`` line with the benchmark's log lines (``b.Fatal``, ``b.Error``), or, for a panic,
``panic: ...`` and a trace.  Each such block is a :class:`~regbench.adapters.base.ToolFailure` of
the series its results would have gone to (``NAME-8``, or ``NAME-8 (PACKAGE)``; see
:meth:`_Results.tool_failures`).

Packages: a package *reports* a benchmark function (``BenchmarkParse``) when it prints a result
of it or of one of its sub-benchmarks, or a failure of it (``--- FAIL:``, a panic while it ran);
a skipped benchmark does not count, nor the bare name ``-v`` prints as a benchmark starts, so
that ``go`` and ``go-json`` name alike.  A function reported by one package only keeps its names
as printed (a file of one package reads as it always did); one reported by two or more has
``" (PACKAGE)"`` after each of its names (before a metric's ``" [UNIT]"``), the import path as
``pkg:`` (or the event's ``Package``) gives it.  The rule is the function's, not each full name's,
so that all the names of a function carry its package or none do: a failure on a first call is
printed as the bare function (``--- FAIL: BenchmarkParse``), and a re-run selects whole
functions.  Go writes no blank in a benchmark's name (a sub-benchmark's blanks become ``_``), so the
first blank of a series' name starts its package or its metric, without doubt.  Which names carry
their package depends only on what the output reports, never on how many packages it holds: the
same command reports the same functions in the same packages each time, so its series keep their
names from run to run, and a re-run of some benchmarks (``REGBENCH_SELECT``, a ``-bench`` regex
of function names) runs a function in every package of the command that has it, so it is
reported by the same packages too.  The limit: a package that reports nothing of the function in
one run (its test binary did not build, or the benchmark panicked on its first call without
``-v``, which prints no name) leaves the function to the other package alone, whose series of
that run is then named bare; and a change of what the command covers (another package pattern or
``-bench`` regex, a package with a function of the same name added, removed or renamed) renames
the series of that function, whose history then goes on under the new name.

A result line that cannot be read (a value that is no number, a value without unit, a line cut
short) is an :class:`~regbench.errors.InputError` with its line (for ``go-json``, the line of the
event that starts it).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import InputError
from . import jsonsafe
from .base import Adapter, ToolFailure, ToolRun, anchored_alternation, register

_RESULT = re.compile(r"Benchmark\S*\s+\d+(?:\s|$)")
_HEADER = re.compile(r"(goos|goarch|pkg|cpu): (.*)")
_SNIFF_RESULT = re.compile(r"^Benchmark\S*[ \t]+\d+[ \t]+\S+ \S+", re.MULTILINE)
_SNIFF_HEADER = re.compile(r"^goos: \S+\s*^goarch: \S+", re.MULTILINE)
_PROCS = re.compile(r"-[0-9]+$")
PRIMARY_UNIT = "ns/op"
# A failed benchmark: ``--- FAIL: NAME`` (after the padded ``NAME-8 \t`` of its result line when
# it failed in a repetition), or a panic while it ran (``NAME-8 \tpanic: ...``).
_FAIL = re.compile(r"(?:(Benchmark\S*)[ \t]+)?--- FAIL: (Benchmark\S*)")
_PANIC = re.compile(r"(?:(Benchmark\S*)[ \t]+)?(panic: .*)")
_ANNOUNCED = re.compile(r"Benchmark\S*")  # -v and -json: the bare name, before it runs
_NOT_RUN = re.compile(r"(Benchmark\S*)[ \t]+0[ \t]")  # b.N 0: printed before a panic's trace
_PANIC_END = re.compile(r"exit status \d+|FAIL\b|ok\s|PASS$")
#: Lines of a panic's trace kept in its failure's message: the head says where it happened.
PANIC_LINES = 20


def direction_of(unit: str) -> str:
    """``higher`` for rates (units ending in ``/s``), ``lower`` for everything else."""
    return "higher" if unit.endswith("/s") else "lower"


@dataclass
class _Series:
    package: str
    name: str  # as printed, -GOMAXPROCS suffix kept
    run: int
    unit: str
    values: list[float] = field(default_factory=list)
    ns: list[int] = field(default_factory=list)


@dataclass
class _Failure:
    """A failure block: ``--- FAIL: NAME`` and its log lines, or a panic and its trace."""

    package: str
    run: int
    name: str | None  # None: a panic before any name was printed (Go names none)
    exact: bool  # printed with its result line's padded name: the series' name as it is
    lines: list[str]
    panic: bool = False


@dataclass
class _Watch:
    """What the failure reader has seen of one package's output."""

    indented: list[str] = field(default_factory=list)  # log lines since the last other line
    open: _Failure | None = None  # the block still taking lines
    # The benchmark that started on the line before (-v's bare name, unsuffixed; or a padded
    # name with b.N 0), which a panic on the next line does not repeat: (name, exact).
    announced: tuple[str, bool] | None = None


@dataclass
class _Results:
    """Result lines read so far, in order; fed line by line by both adapters."""

    where: str
    # (package, name, unit, run) -> values
    series: dict[tuple[str, str, str, int], _Series] = field(default_factory=dict)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)  # package -> goos, goarch, cpu
    runs: dict[str, int] = field(default_factory=dict)  # package -> current run index
    failed: list[_Failure] = field(default_factory=list)
    watch: dict[str, _Watch] = field(default_factory=dict)  # package -> failure reader's state
    # (package, run) -> the bare names -v printed as each benchmark started (none without -v)
    bare: dict[tuple[str, int], set[str]] = field(default_factory=dict)

    def start(self, package: str) -> None:
        """A new invocation of ``package``'s test binary."""
        self.runs[package] = self.runs[package] + 1 if package in self.runs else 0
        self.watch.pop(package, None)

    def line(self, text: str, package: str, lineno: int, *, complete: bool = True) -> None:
        text = text.rstrip("\r")
        self._watch_failures(text, package)
        if not _RESULT.match(text):
            return
        if not complete:
            raise InputError("result line cut short (the file is truncated)", path=self.where, line=lineno)
        fields = text.split()
        name = fields[0]
        if len(fields[1]) > 19:  # b.N is an int64; int() of thousands of digits is refused anyway
            raise InputError(f"{name}: b.N is not a count: {fields[1][:30]}...", path=self.where, line=lineno)
        n = int(fields[1])
        if n == 0:  # nothing was measured: Go prints ``0  NaN ns/op`` for a benchmark that panicked
            return
        pairs = fields[2:]
        if not pairs:
            raise InputError(f"{name}: no measurement after b.N ({n})", path=self.where, line=lineno)
        if len(pairs) % 2:
            raise InputError(f"{name}: value {pairs[-1]!r} has no unit", path=self.where, line=lineno)
        run = self.runs.setdefault(package, 0)
        for value, unit in zip(pairs[::2], pairs[1::2], strict=True):
            try:
                x = float(value)
            except ValueError:
                raise InputError(f"{name}: {value!r} before {unit!r} is not a number",
                                 path=self.where, line=lineno) from None
            if not math.isfinite(x):
                raise InputError(f"{name}: {value!r} before {unit!r} is not finite", path=self.where, line=lineno)
            s = self.series.setdefault((package, name, unit, run), _Series(package, name, run, unit))
            s.values.append(x)
            s.ns.append(n)

    def _watch_failures(self, text: str, package: str) -> None:
        """Collect the failure blocks of ``go test``'s output.  Without ``-v``, a benchmark that
        fails on its first call prints ``--- FAIL: NAME`` (no ``-GOMAXPROCS`` suffix) then its
        log lines, indented; one that fails in a later repetition prints it after the padded
        name of its result line, suffixed.  With ``-v`` (and ``-json``) the log lines come
        first, after the bare name.  A panic follows the padded name (or the bare one) and ends
        the test binary."""
        w = self.watch.setdefault(package, _Watch())
        block = w.open
        if block is not None and block.panic:
            if _PANIC_END.match(text):
                w.open = None
            elif len(block.lines) < PANIC_LINES:
                block.lines.append(text)
            return
        if text.startswith((" ", "\t")) and text.strip():
            (block.lines if block is not None else w.indented).append(text)
            return
        before, w.indented, w.open = w.indented, [], None
        announced, w.announced = w.announced, None
        run = self.runs.get(package, 0)
        m = _FAIL.match(text)
        if m:
            padded, name = m.groups()
            # -v: the log lines came before the FAIL line (a parent's FAIL has none of its own).
            w.open = _Failure(package, run, name, exact=padded is not None,
                              lines=[text[m.start(2) - len("--- FAIL: "):], *before])
            self.failed.append(w.open)
            return
        if text.startswith("--- "):  # --- BENCH: or --- SKIP:, whose log lines are not a failure's
            w.open = _Failure(package, run, None, exact=False, lines=[])
            return
        m = _PANIC.match(text)
        if m and (m.group(1) is not None or text.startswith("panic: ")):
            padded, what = m.groups()
            # Without -v, a panic on a benchmark's first call follows the previous benchmark's
            # results: no name is printed, and the panic is the invocation's, not a benchmark's.
            name, exact = (padded, True) if padded is not None else announced or (None, False)
            w.open = _Failure(package, run, name, exact=exact, lines=[what], panic=True)
            self.failed.append(w.open)
            return
        if _ANNOUNCED.fullmatch(text):
            w.announced = (text, False)
            self.bare.setdefault((package, run), set()).add(text)
        elif m := _NOT_RUN.match(text):
            w.announced = (m.group(1), True)

    def tool_failures(self) -> list[ToolFailure]:
        """The failure blocks, each under the name of the series its results would have gone to
        (with its package when two packages report its function, :func:`_qualified`).

        A benchmark that failed on its first call is named without the ``-GOMAXPROCS`` suffix:
        the suffix is the one of the other top-level benchmarks of the same invocation (every
        suffix when ``-cpu`` gave several; none when GOMAXPROCS is 1).  A failure whose suffix
        cannot be told (nothing else reported a result), and a panic printed without a name
        (on a benchmark's first call, without ``-v``), are the invocation's (``benchmark``
        None); a parent's ``--- FAIL`` that only repeats a sub-benchmark's failure is left out.
        """
        names: dict[tuple[str, int], set[str]] = {}
        for s in self.series.values():
            names.setdefault((s.package, s.run), set()).add(s.name)
        shared = self._shared()
        merged: dict[tuple[str | None, int], list[str]] = {}
        for f in self.failed:
            if f.name is not None and len(f.lines) == 1 and not f.panic and any(
                    g.name is not None and g.name.startswith(f.name + "/") for g in self.failed
                    if (g.package, g.run) == (f.package, f.run)):
                continue
            named: list[str | None] = []
            if f.name is not None:
                named += [_qualified(n, f.package, shared) for n in self._series_names(
                    f, names.get((f.package, f.run), set()), self.bare.get((f.package, f.run), set()))]
            for series in named or [None]:
                merged.setdefault((series, f.run), []).append("\n".join(f.lines))
        return [ToolFailure(series, "\n".join(blocks), PRIMARY_UNIT, direction_of(PRIMARY_UNIT), run=run)
                for (series, run), blocks in merged.items()]

    @staticmethod
    def _series_names(f: _Failure, reported: set[str], bare: set[str]) -> list[str]:
        """The series ``f`` is of.  Without ``-v`` a failure printed without a result line's
        padded name is a first call's, unsuffixed; with ``-v`` (``bare``: the names printed as
        benchmarks started) a later repetition's failure is printed suffixed, after its bare
        name.  A sub-benchmark's own name may end in ``-N`` (``workers-2``), so the suffix is
        recognised by the bare name it extends, not by the name's ending."""
        assert f.name is not None
        if f.exact or f.name in reported:
            return [f.name]
        top = [n for n in reported if "/" not in n]  # an identifier: a trailing -N is the suffix
        suffixes = {m.group(0) if (m := _PROCS.search(n)) else "" for n in top or reported}
        if not top and len(suffixes) != 1:
            return []
        if f.name not in bare and any(s and f.name.endswith(s) and f.name[:-len(s)] in bare for s in suffixes):
            return [f.name]  # -v prints a repetition's failure suffixed
        return sorted(f.name + s for s in suffixes)

    def header(self, key: str, value: str, package: str) -> None:
        if key == "pkg":  # already params["package"]
            return
        self.headers.setdefault(package, {})[key] = value

    def _shared(self) -> set[str]:
        """The benchmark functions (``BenchmarkX``) that more than one package reports, by a
        result of it or of a sub-benchmark of it, or by a failure of it; a skipped benchmark,
        and a bare name that ``-v`` and ``-json`` print as a benchmark starts, do not count (so
        that both formats name alike: the plain text prints neither for a skipped one)."""
        packages: dict[str, set[str]] = {}
        for s in self.series.values():
            packages.setdefault(_function_of(s.name), set()).add(s.package)
        for f in self.failed:
            if f.name is not None:
                packages.setdefault(_function_of(f.name), set()).add(f.package)
        return {fn for fn, where in packages.items() if len(where) > 1}

    def tool_runs(self) -> list[ToolRun]:
        shared = self._shared()
        out = []
        for s in self.series.values():
            name = _qualified(s.name, s.package, shared)
            bench = name if s.unit == PRIMARY_UNIT else f"{name} [{s.unit}]"
            params = {"package": s.package, **self.headers.get(s.package, {}), "iterations": s.ns}
            out.append(ToolRun(bench, np.asarray(s.values, dtype=np.float64), s.unit, direction_of(s.unit),
                               run=s.run, params=params))
        return out


def _function_of(name: str) -> str:
    """The top-level benchmark function of a name as printed: ``BenchmarkX`` of
    ``BenchmarkX/sub-8``.  The function's name is an identifier, so a trailing ``-N`` on it is
    the ``-GOMAXPROCS`` suffix without doubt."""
    return _PROCS.sub("", name.split("/", 1)[0])


def _qualified(name: str, package: str, shared: set[str]) -> str:
    """``name`` as its series is named: with its package, ``NAME (PACKAGE)``, when its function
    is in ``shared`` (reported by more than one package of the output)."""
    return f"{name} ({package})" if _function_of(name) in shared else name


def _open_text(path: Path):
    try:
        return open(path, encoding="utf-8", errors="replace", newline="")  # noqa: SIM115
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=str(path)) from None


class _GoSelection:
    """``-bench`` selection, shared by both Go formats.

    ``go test -bench`` splits its regex on ``/`` and matches each part against one level of a
    benchmark's name (``BenchmarkX``, then its sub-benchmarks), so a set of sub-benchmarks
    cannot be written as one pattern (``^(X|Y)$/^(a|b)$`` also runs ``X/b``).  The unit of
    selection is therefore the top-level benchmark function, which is an identifier (no ``-``,
    no ``/``): the ``-GOMAXPROCS`` suffix is cut from it without doubt, and every sub-benchmark
    of it runs in the invocation that selects it, with the most runs and iterations of their
    plans.

    A name qualified with its package (``BenchmarkParse-8 (example.com/mod/json) [B/op]``) is
    selected by its bare function too (``BenchmarkParse``): ``-bench`` cannot name a package,
    and ``go test`` runs the selected function in every package of the command that has it.
    That is as it should be: those packages' series are measured again with the plan of the one
    that asked (the most runs and iterations of them all, as for sub-benchmarks), and the
    function is reported by the same packages as in a full run, so every name keeps its
    package."""

    selection = "go test -bench (RE2, split on /): ^(BenchmarkA|BenchmarkB)$"

    def selection_unit(self, reported: str) -> str | None:
        # A name as printed holds no blank (Go writes a sub-benchmark's blanks as _, and a result
        # line is split on them), so the first blank starts `` (PACKAGE)`` or `` [UNIT]``.
        return _function_of(reported.partition(" ")[0]) or None

    def render_selection(self, units) -> str:
        return anchored_alternation(units)


@register
class GoTextAdapter(_GoSelection, Adapter):
    name = "go"
    description = "go test -bench text output; each -count repetition is a sample"

    def sniff(self, head: str, path: Path) -> bool:
        if head.lstrip().startswith(("{", "[")):
            return False
        return bool(_SNIFF_RESULT.search(head) or _SNIFF_HEADER.search(head))

    def parse(self, path: Path) -> list[ToolRun]:
        return self._read(path).tool_runs()

    def failures(self, path: Path) -> list[ToolFailure]:
        return self._read(path).tool_failures()

    def _read(self, path: Path) -> _Results:
        results = _Results(str(path))
        package = ""
        early: dict[str, str] = {}  # goos and goarch come before the pkg line they belong to
        with _open_text(path) as fh:
            for lineno, raw in enumerate(fh, 1):
                text = raw.rstrip("\n")
                m = _HEADER.fullmatch(text.rstrip("\r"))
                if m:
                    key, value = m.groups()
                    if key == "pkg":
                        package = value
                        results.start(package)
                        for k, v in early.items():
                            results.header(k, v, package)
                        early.clear()
                    elif key == "cpu":
                        results.header(key, value, package)
                    else:
                        early[key] = value
                    continue
                results.line(text, package, lineno, complete=raw.endswith("\n"))
        return results


@register
class GoJsonAdapter(_GoSelection, Adapter):
    name = "go-json"
    description = "go test -bench -json events; each -count repetition is a sample"

    def sniff(self, head: str, path: Path) -> bool:
        first = head.lstrip().split("\n", 1)[0].strip()
        if not first.startswith("{"):
            return False
        try:
            obj = jsonsafe.loads(first)
        except ValueError:
            return False
        return isinstance(obj, dict) and isinstance(obj.get("Action"), str) and (
            "Package" in obj or "Time" in obj)

    def parse(self, path: Path) -> list[ToolRun]:
        return self._read(path).tool_runs()

    def failures(self, path: Path) -> list[ToolFailure]:
        return self._read(path).tool_failures()

    def _read(self, path: Path) -> _Results:
        where = str(path)
        results = _Results(where)
        pending: dict[str, tuple[str, int]] = {}  # package -> (text of an unfinished line, its line)
        with _open_text(path) as fh:
            for lineno, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                if not raw.endswith("\n") and not raw.rstrip().endswith("}"):
                    raise InputError("event cut short (the file is truncated)", path=where, line=lineno)
                try:
                    event = jsonsafe.loads(raw)
                except json.JSONDecodeError as exc:
                    raise InputError(f"not a go test -json event: {exc.msg}", path=where, line=lineno) from None
                if not isinstance(event, dict) or not isinstance(event.get("Action"), str):
                    raise InputError("not a go test -json event (no `Action`)", path=where, line=lineno)
                package = event.get("Package", "")
                if not isinstance(package, str):
                    raise InputError("`Package` is not a string", path=where, line=lineno)
                action = event["Action"]
                if action == "start":
                    results.start(package)
                    continue
                if action != "output":
                    continue
                output = event.get("Output")
                if not isinstance(output, str):
                    raise InputError("output event without a string `Output`", path=where, line=lineno)
                before, first_line = pending.pop(package, ("", lineno))
                pieces = (before + output).split("\n")
                for i, piece in enumerate(pieces[:-1]):
                    m = _HEADER.fullmatch(piece.rstrip("\r"))
                    if m:
                        results.header(m.group(1), m.group(2), package)
                    else:
                        results.line(piece, package, first_line if i == 0 else lineno)
                if pieces[-1]:
                    pending[package] = (pieces[-1], first_line if len(pieces) == 1 else lineno)
        for package, (text, line) in pending.items():
            results.line(text, package, line, complete=False)
        return results
