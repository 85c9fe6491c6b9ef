"""Why a run failed, in one line, from what the store keeps of it (its status and stderr tail).

A failed run is a result, stored with its status and the end of its standard error, into which
regbench writes notes of its own (lines starting with :data:`NOTE`: the exit status, a signal, a
timeout, an unreadable output).  :func:`failure_cause` reads that tail back as one line: the
campaign's account of its failed runs (:mod:`regbench.report.campaign`), ``regbench show``, and
the message of a failure alert (:func:`regbench.inventory.scan_failures`) say the same thing.
It lives below the run package, the reports and the inventory, which all need it; it imports
nothing of regbench.
"""

from __future__ import annotations

import re

#: How a line regbench adds to a run's stderr tail starts.
NOTE = "[regbench] "


def stderr_lines(tail: str | None) -> tuple[list[str], list[str]]:
    """A run's stderr tail as (the benchmark's own non-blank lines, regbench's notes without
    their ``[regbench]`` prefix)."""
    lines = [line.rstrip() for line in (tail or "").splitlines() if line.strip()]
    return ([line for line in lines if not line.startswith(NOTE)],
            [line[len(NOTE):] for line in lines if line.startswith(NOTE)])


def failure_cause(status: str, stderr_tail: str | None, *, width: int = 160) -> str:
    """Why a run did not succeed, on one line: its status, regbench's last note on it (exit
    status, signal, timeout, unreadable output) and the last line the benchmark wrote on stderr
    (``failed (exit status 1): ModuleNotFoundError: No module named 'numpy'``)."""
    own, notes = stderr_lines(stderr_tail)
    head = status + (f" ({notes[-1]})" if notes else "")
    if not own:
        return head
    last = _panic(own) or _exception(own) or _tool_error(own) or own[-1].strip()
    return f"{head}: {last if len(last) <= width else last[:width - 1] + '…'}"


def _panic(lines: list[str]) -> str | None:
    """The message of a panic the output holds, which the lines after it do not say: Rust prints
    ``thread 'main' panicked at FILE:LINE:COL:`` then the message, then cargo's ``error: bench
    failed, to rerun pass ...``; Go prints ``panic: MESSAGE`` then the goroutines' traces."""
    for k, line in enumerate(lines):
        text = line.strip()
        if text.startswith("panic: "):
            return text
        if " panicked at " in text:
            message = lines[k + 1].strip() if k + 1 < len(lines) and text.endswith(":") else ""
            return f"panicked: {message}" if message else text
    return None


#: A frame of a Java stack trace, ``at pkg.Class.method(File.java:12)``, or its ``... 5 more``.
_JAVA_FRAME = re.compile(r"^(?:at [\w$.<>/-]+\(.*\)|\.\.\. \d+ more)$")

#: Lines a tool prints to say what went wrong, before a last line of advice that would hide it
#: (JMH: ``No matching benchmarks. Miss-spelled regexp?`` then ``Use EXTRA verbose mode to debug
#: the pattern matching.``).
_TOOL_ERRORS = ("No matching benchmarks",)


def _tool_error(lines: list[str]) -> str | None:
    """The last line of ``lines`` that starts with one of :data:`_TOOL_ERRORS`."""
    return next((line.strip() for line in reversed(lines) if line.strip().startswith(_TOOL_ERRORS)), None)


def _exception(lines: list[str]) -> str | None:
    """The first exception of a Java stack trace the output holds (JMH prints a benchmark's
    exception, then its frames, whose last is the least telling line): the line before its first
    frame, or the last ``Caused by:`` of that trace (the root cause)."""
    text = [line.strip() for line in lines]
    for k in range(1, len(text)):
        if _JAVA_FRAME.match(text[k]) and not _JAVA_FRAME.match(text[k - 1]):
            found = text[k - 1]
            for line in text[k:]:
                if line.startswith("Caused by: "):
                    found = line
                elif not _JAVA_FRAME.match(line):
                    break
            return found
    return None
