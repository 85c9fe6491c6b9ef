"""Entry point of the ``regbench`` command.

Every :class:`~regbench.errors.RegbenchError` is caught here, once, and printed as one line on
stderr (STYLE.md habit 6).  What the command exits with is decided here too, from one table,
:class:`~regbench.errors.ExitStatus` (docs/cli.md, "Exit statuses"): a command returns or raises
``click.exceptions.Exit(ExitStatus.X)`` and never a bare number.  Commands live one per module in
this package, and a command's module is imported only when that command runs (or ``--help``
lists them all): ``regbench detect`` does not pay for the imports of ``regbench screen``.

A reader that goes away (``regbench show | head -1``) does not change what a command does or the
status it exits with: see :func:`reader_may_leave`.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
from collections.abc import Iterator

import click

from .. import __version__
from ..errors import ExitStatus, RegbenchError
from ._common import Context

COMMAND_MODULES = (
    "cmd_init", "cmd_run", "cmd_import", "cmd_export", "cmd_show", "cmd_summary", "cmd_compare",
    "cmd_detect", "cmd_diagnose", "cmd_demo", "cmd_alerts", "cmd_evaluate", "cmd_system", "cmd_bisect",
    "cmd_clean", "cmd_optimize", "cmd_screen", "cmd_report", "cmd_serve", "cmd_token", "cmd_push",
)


def command_name(module: str) -> str:
    """The command module ``module`` defines: ``cmd_`` taken off, ``_`` as ``-`` (``cmd_foo_bar``
    is ``regbench foo-bar``); a test checks it against every module's ``command.name``."""
    return module.removeprefix("cmd_").replace("_", "-")


class LazyGroup(click.Group):
    """A click group whose commands are the modules of :data:`COMMAND_MODULES`, each imported on
    first use (click's documented pattern for lazy subcommands, "Advanced Groups")."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *(command_name(m) for m in COMMAND_MODULES)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        known = super().get_command(ctx, cmd_name)
        if known is not None:
            return known
        module = next((m for m in COMMAND_MODULES if command_name(m) == cmd_name), None)
        if module is None:
            return None
        command = importlib.import_module(f".{module}", __package__).command
        self.add_command(command, cmd_name)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="regbench")
@click.option("--store", envvar="REGBENCH_STORE", metavar="PATH|URL",
              help="Results store: a SQLite path or a SQLAlchemy URL "
                   "[env REGBENCH_STORE; default .regbench/results.db beside regbench.toml].")
@click.option("--config", "config_path", metavar="FILE",
              help="Configuration file [default: the nearest regbench.toml].")
@click.pass_context
def cli(ctx: click.Context, store: str | None, config_path: str | None) -> None:
    """Regression benchmarking: run benchmarks across versions, keep every measurement,
    and find the real performance changes.

    \b
    Start with `regbench demo`, then `regbench init` in your project.
    """
    ctx.obj = Context(store, config_path)
    ctx.call_on_close(ctx.obj.close)


def _register() -> None:
    """Import every command now (a listing of all of them, as tests and docs checks want)."""
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        cli.get_command(ctx, name)


class _DropWhenReaderGone(io.RawIOBase):
    """The file descriptor ``fd`` as a raw stream that never fails for want of a reader: at the
    first ``BrokenPipeError`` it points ``fd`` at :data:`os.devnull` (what the Python docs advise
    on SIGPIPE, "Note on SIGPIPE" of the ``signal`` module), and what is written from then on is
    dropped."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data) -> int:
        try:
            return os.write(self._fd, data)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._fd)
            finally:
                os.close(devnull)
            return memoryview(data).nbytes


@contextlib.contextmanager
def reader_may_leave() -> Iterator[None]:
    """Within it, ``sys.stdout`` and ``sys.stderr`` write to their descriptors through
    :class:`_DropWhenReaderGone`: when the reader of a pipe goes away (``regbench detect
    --fail-on-regression | head -1``), the command does all its work and exits with the status it
    would have had (a gate's answer, not 1), its further output dropped.  Without it, a write to a
    closed pipe raises ``BrokenPipeError``, which click's ``main`` turns into ``sys.exit(1)`` even
    with ``standalone_mode=False`` (it catches EPIPE before the caller can): under ``set -o
    pipefail`` a clean gate failed, and the command stopped half-way.  A stream without a
    descriptor (a test capturing it) is left as it is."""
    made: dict[str, tuple[object, io.TextIOWrapper]] = {}
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            fd = stream.fileno()
            stream.flush()
        except (AttributeError, OSError, ValueError):  # no descriptor (captured), or closed
            continue
        made[name] = stream, io.TextIOWrapper(
            io.BufferedWriter(_DropWhenReaderGone(fd)), encoding=stream.encoding, errors=stream.errors,
            line_buffering=stream.line_buffering, write_through=getattr(stream, "write_through", False))
        setattr(sys, name, made[name][1])
    try:
        yield
    finally:
        for name, (stream, guarded) in made.items():
            setattr(sys, name, stream)
            # Flushed, not closed: the descriptor is the process's own (and a handler that kept
            # the stream, a logger's, may still write through it).
            with contextlib.suppress(OSError, ValueError):
                guarded.flush()


def main(argv: list[str] | None = None) -> int:
    with reader_may_leave():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    try:
        rv = cli.main(args=argv, prog_name="regbench", standalone_mode=False)
    except RegbenchError as exc:
        click.echo(f"error: {exc}", err=True)
        return int(exc.exit_status)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return ExitStatus.INTERRUPTED
    except click.UsageError as exc:
        exc.show()
        return ExitStatus.USAGE
    except click.ClickException as exc:  # click's other errors are about files it was to open
        exc.show()
        return ExitStatus.ERROR
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except OSError as exc:
        # What the machine refused (a path under a file, a folder that cannot be written, a full
        # disk): one line naming the path, not a traceback (every writer of regbench writes
        # beside its target and renames, so nothing is left half-written).
        where = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        what = exc.strerror or str(exc) or type(exc).__name__
        click.echo(f"error: {where + ': ' if where else ''}{what}", err=True)
        return ExitStatus.ERROR
    # With standalone_mode=False click returns the code given to ctx.exit() (or a command's value).
    return rv if isinstance(rv, int) else ExitStatus.OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
