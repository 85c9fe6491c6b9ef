"""libtest's benchmark output: ``cargo +nightly bench`` with ``#![feature(test)]``.

Format
------
Text; each benchmark is one line::

    test nested::sum_1000 ... bench:       1,026.85 ns/iter (+/- 470.14)
    test copy             ... bench:          25 ns/iter (+/- 1) = 4096 MB/s

The number is libtest's median over its own samples of nanoseconds per iteration (thousands
separated by ``,``; recent toolchains add two decimals); ``+/-`` is the range of those samples
after winsorising; ``= N MB/s`` appears when the benchmark sets ``b.bytes``.  Everything else
(``running 3 tests``, ``test result: ...``, cargo's ``Compiling``/``Running`` lines on stderr, unit
tests' ``test x ... ok``) is ignored.

Mapping to runs
---------------
* Each benchmark line is one sample of one run: libtest prints only its median, so a run of
  this adapter has one value, in ``ns/iter``, lower is better, no warm-up.
* The *k*-th line of the same benchmark in the file is its run *k*: the output of several
  invocations concatenated (``for i in 1 2 3; do cargo bench >> FILE; done``) gives several runs
  of each benchmark.  Runs from several files are appended by the import command.  (Two bench
  targets with a benchmark of the same name would also count as two runs: libtest's output does
  not name the target.)
* ``params`` keep ``plus_minus`` (the ``+/-`` range, ns) and ``mb_per_s`` when printed.
* A benchmark reported ``FAILED`` (it panicked) makes the file an error: its other runs cannot
  be told apart from a complete set.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import InputError
from .base import Adapter, ToolRun, register

_NUM = r"[0-9][0-9,]*(?:\.[0-9]+)?"
_BENCH = re.compile(rf"^test (\S+) +\.\.\. bench: +({_NUM}) ns/iter \(\+/- ({_NUM})\)(?: = ({_NUM}) MB/s)? *$")
#: A line that starts like a benchmark result (checked fully by ``_BENCH``).
_BENCH_START = re.compile(r"^test \S+ +\.\.\. bench:")
_FAILED = re.compile(r"^test (\S+) +\.\.\. FAILED *$")
_SNIFF = re.compile(rf"^test \S+ +\.\.\. bench: +{_NUM} ns/iter \(\+/- ", re.MULTILINE)


@register
class CargoBenchAdapter(Adapter):
    """libtest ``cargo bench`` text: one sample (the median ns/iter) per benchmark line."""

    name = "cargo-bench"
    description = "libtest cargo bench text (test NAME ... bench: N ns/iter (+/- D)): each line one run"
    selection = "cargo bench -- --exact NAME... (libtest's filters, unquoted: names separated by blanks)"

    def selection_unit(self, reported: str) -> str | None:
        # libtest's filters are plain names (no regex); a blank would split one in two.
        return reported if reported and not any(c.isspace() for c in reported) else None

    def render_selection(self, units) -> str:
        return " ".join(units)

    def sniff(self, head: str, path: Path) -> bool:
        return _SNIFF.search(head) is not None

    def parse(self, path: Path) -> list[ToolRun]:
        where = str(path)
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", path=where) from exc
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason})", path=where) from None
        seen: dict[str, int] = {}
        runs: list[ToolRun] = []
        for n, raw in enumerate(text.splitlines(), start=1):
            line = raw.rstrip("\r")
            if not line.startswith("test "):
                continue
            m = _BENCH.match(line)
            if m is None:
                if _BENCH_START.match(line):
                    raise InputError("a benchmark line that is cut short or garbled (expected "
                                     "`test NAME ... bench: N ns/iter (+/- D)`)", path=where, line=n)
                failed = _FAILED.match(line)
                if failed:
                    raise InputError(f"benchmark {failed.group(1)!r} FAILED", path=where, line=n)
                continue  # a unit test's "ok" or "ignored"
            name, value, spread, rate = m.groups()
            run = seen.get(name, 0)
            seen[name] = run + 1
            params = {"plus_minus": _number(spread)}
            if rate is not None:
                params["mb_per_s"] = _number(rate)
            runs.append(ToolRun(benchmark=name, samples=np.array([_number(value)]), unit="ns/iter",
                                direction="lower", run=run, warmup=0, params=params))
        if not runs:
            raise InputError("no benchmark results (lines `test NAME ... bench: N ns/iter (+/- D)`)",
                             path=where)
        return runs


def _number(text: str) -> float:
    return float(text.replace(",", ""))
