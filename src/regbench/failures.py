"""Why a run or a build failed, in one line, from what the store keeps of it (its status and the
tail of its output).

A failed run is a result, stored with its status and the end of its standard error, into which
regbench writes notes of its own (lines starting with :data:`NOTE`: the exit status, a signal, a
timeout, an unreadable output).  :func:`failure_cause` reads that tail back as one line: the
campaign's account of its failed runs (:mod:`regbench.report.campaign`), ``regbench show``, and
the message of a failure alert (:func:`regbench.inventory.scan_failures`) say the same thing.
A failed build is stored alike, the end of its log closed by regbench's note (the exit status,
the command that could not be started, the timeout), and :func:`build_failure_cause` says it
the same way: the campaign, ``regbench show``, ``compare`` and ``screen`` report a failed build
with it (or with its two parts, :func:`build_note` and :func:`build_cause`).
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


# ------------------------------------------------------------------------------------- builds
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: A compiler's diagnostic: ``File.java:[36,45]``, ``x.c:3:5:``, ``File.kt:(12, 3)``.
_FILE_LINE = re.compile(r"\S\.\w+(?::\[?|\(|\[)\d+")
_ERROR = re.compile(r"\berror\b|^error\[", re.IGNORECASE)
#: How regbench's note on a build starts where a run's would not (``build exit status 2``).
_BUILD = "build "


def build_lines(log_tail: str | None) -> list[str]:
    """What a build printed (the end that was kept), without regbench's notes, blank lines and
    terminal colour codes (Maven writes them even to a file)."""
    own, _ = stderr_lines(_ANSI.sub("", log_tail or ""))
    return [line for line in own if line.strip()]


def build_cause(log_tail: str | None, *, width: int = 160) -> str:
    """The builder's own account of why a build failed, on one line: its first error naming a
    file and line (Maven: ``[ERROR] /src/X.java:[36,45] ';' expected``), else its first line
    saying error (cargo: ``error[E0425]: ...``), else its last line; empty when it printed
    nothing.  Never regbench's note, which :func:`build_note` reads."""
    lines = [line.strip() for line in build_lines(log_tail)]
    if not lines:
        return ""
    errors = [line for line in lines if _ERROR.search(line)]
    line = next((e for e in errors if _FILE_LINE.search(e)), errors[0] if errors else lines[-1])
    return line if len(line) <= width else line[:width - 1] + "…"


def build_note(exit_code: int | None, log_tail: str | None) -> str:
    """regbench's own account of how a build ended, as a run's is said (:func:`failure_cause`):
    ``exit status 2``, ``cannot start 'make': No such file or directory``, ``killed after 600 s
    (timeout)``; from ``exit_code`` when the log holds no note (a build recorded without one),
    else empty (a release's environment that could not be made: its log says why)."""
    _, notes = stderr_lines(log_tail)
    if notes:
        note = notes[-1].strip()
        return note[len(_BUILD):] if note.startswith(_BUILD) else note
    return "" if exit_code is None else f"exit status {exit_code}"


def build_failure_cause(status: str, exit_code: int | None, log_tail: str | None, *, width: int = 160) -> str:
    """Why a build did not succeed, on one line, as :func:`failure_cause` says it of a run: its
    status, how it ended (:func:`build_note`) and the builder's error (:func:`build_cause`):
    ``failed (exit status 2): x.c:3:5: error: expected ';' before '}' token``, ``failed (cannot
    start 'nosuchtool': No such file or directory)``, ``timeout (killed after 1 s (timeout)):
    compiling``."""
    note, cause = build_note(exit_code, log_tail), build_cause(log_tail, width=width)
    return status + (f" ({note})" if note else "") + (f": {cause}" if cause else "")
