"""The one exception tree of regbench.

::

    RegbenchError                 every error regbench reports to a person
     ├── ConfigError              regbench.toml or a command-line option is wrong
     ├── InputError               a file given to regbench is wrong (carries file and line)
     ├── StoreError               the results store cannot be opened or is inconsistent
     │    └── DuplicateRunError      a run with the same key is already stored
     ├── VersionError             a git revision cannot be resolved or checked out
     ├── ExecutorLostError        the executor lost its cluster (the Dask scheduler) before its runs came back
     ├── NotFoundError            a benchmark, version or other named thing is not in the store
     ├── AlertError               an alert cannot take the status asked for
     ├── SinkError                a notification sink could not deliver
     ├── RequestError             a request to the dashboard is malformed (a query parameter, a form field)
     │    ├── ConflictError          a submission id already used for another body (HTTP 409)
     │    ├── TooLargeError          a request body over the server's limit (HTTP 413)
     │    └── RateLimitError         a token over its rate limit (HTTP 429; carries the wait)
     ├── AuthError                a write to the dashboard without credentials, or with unknown ones
     │    └── ForbiddenError         credentials without the scope, or a CSRF token missing or wrong
     └── MissingDependency        an optional package a feature needs is not installed

The CLI catches :class:`RegbenchError` once, prints ``str(error)`` on one line and exits with
status 3 (:data:`ExitStatus.ERROR`).  A failing *benchmark* (crash, hang, garbage output) is not an
error: it is a recorded result (see :mod:`regbench.run.execute`), and a command whose runs failed
exits with status 4 (:data:`ExitStatus.FAILED`).
"""

from __future__ import annotations

import enum
import reprlib

#: Characters of a value from the input that a message shows at most (:func:`shown`).
SHOWN_CHARS = 80
#: Characters of the reason in an :class:`InputError` at most (the location comes on top).
REASON_CHARS = 500
#: Characters of any error message at most.
MESSAGE_CHARS = 1000


class _Shown(reprlib.Repr):
    """Values as the input file wrote them where Python's spelling differs: ``true``/``false`` (TOML
    and JSON), not ``True``/``False`` (a user who wrote ``runs = true`` was told "got True")."""

    def repr_bool(self, x: bool, level: int) -> str:
        return "true" if x else "false"


_REPR = _Shown()
_REPR.maxlevel = 3
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxstring = _REPR.maxlong = _REPR.maxother = SHOWN_CHARS


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for an error message: at most ``limit`` characters, on one line.

    Values come from hostile input (a 900-level nested array, an 8 MB string): reprlib shows
    at most a few levels and elements of containers without recursing into the rest, and the
    text is cut with ``...`` (``repr`` of a string already escapes its line breaks).
    """
    text = _REPR.repr(value).replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def one_line(message: str, limit: int) -> str:
    """``message`` with its line breaks escaped, cut to ``limit`` characters."""
    text = message.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def collapsed(message: object) -> str:
    """``str(message)`` with every run of white space (line breaks, tabs) made one space.

    For the messages of libraries regbench quotes, a database driver's above all: PostgreSQL's
    ``Connection refused`` is followed by a line break and a tab before its hint, which
    :func:`one_line` would show as a literal ``\\n`` and a tab.
    """
    return " ".join(str(message).split())


class ExitStatus(enum.IntEnum):
    """The exit statuses of the ``regbench`` command, the same for every command (docs/cli.md).

    A CI job can tell a gate's answer (1) from a mistake in the call (2), a problem regbench
    reports (3) and benchmarks or deliveries that failed (4).
    """

    #: Done, and nothing a gate asked about was found.
    OK = 0
    #: Done, and what a gate asks about was found: a regression (``compare``, ``detect
    #: --fail-on-regression``), no culprit (``bisect``), a warning (``system check --strict``).
    FOUND = 1
    #: The command line is wrong (click's usage errors: an unknown option, a bad value).
    USAGE = 2
    #: A :class:`RegbenchError`: the configuration, an input file, the store, a version or a
    #: name that is not stored.
    ERROR = 3
    #: Work was done but some of it failed: runs or builds of a campaign, a sink's delivery.
    FAILED = 4
    #: Interrupted by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
    INTERRUPTED = 130


class RegbenchError(Exception):
    """Base of every error regbench reports to a person as a one-line message.

    The message is made one line (line breaks escaped) of at most :data:`MESSAGE_CHARS`
    characters, whatever value from the input it quotes.
    """

    def __init__(self, *args: object):
        if args and isinstance(args[0], str):
            args = (one_line(args[0], MESSAGE_CHARS), *args[1:])
        super().__init__(*args)

    #: What the command exits with when this error ends it.
    exit_status = ExitStatus.ERROR


class ConfigError(RegbenchError):
    """The configuration (``regbench.toml`` or an option) is invalid."""


class InputError(RegbenchError):
    """A file handed to regbench is invalid.

    The message has the form ``FILE:LINE: what is wrong`` when the line is known.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        self.path = path
        self.line = line
        self.reason = one_line(message, REASON_CHARS)
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + self.reason)


class StoreError(RegbenchError):
    """The results store cannot be opened, migrated or is inconsistent."""


class DuplicateRunError(StoreError):
    """A run with the same (benchmark, version, config, machine, run index) is already stored."""


class VersionError(RegbenchError):
    """A version (git revision, range) cannot be resolved or checked out."""


class ExecutorLostError(RegbenchError):
    """The executor lost what makes its runs (the connection to the Dask scheduler) before every
    run came back.

    Not a failure of any run: the runs that came back are stored, those that did not leave
    nothing, and the campaign is marked ``interrupted`` as after Ctrl-C
    (:func:`regbench.run.core.campaign_status`), so that the same command, once the cluster is
    back, makes exactly the runs missing.
    """


class NotFoundError(RegbenchError):
    """A named benchmark, version, configuration or machine is not in the store."""


class AlertError(RegbenchError):
    """An alert cannot take the status asked for (e.g. it already has it)."""


class RequestError(RegbenchError):
    """A request to the dashboard is malformed: a query parameter or a form field (HTTP 400)."""


class ConflictError(RequestError):
    """A submission conflicts with what is stored: its id was used for another body (HTTP 409)."""


class TooLargeError(RequestError):
    """A request body over the server's size limit (HTTP 413)."""


class RateLimitError(RequestError):
    """A token sent more requests than its rate limit allows (HTTP 429); ``retry_after`` in seconds."""

    def __init__(self, message: str, *, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


class AuthError(RegbenchError):
    """A write to the dashboard without credentials, or with unknown ones (HTTP 401)."""


class ForbiddenError(AuthError):
    """Credentials without the scope the write needs, or a CSRF token missing or wrong (HTTP 403)."""


class SinkError(RegbenchError):
    """A sink could not deliver (the message says what, on one line, without secrets)."""


class MissingDependency(RegbenchError):
    """A feature needs an optional package that is not installed; the message says how to install it."""
