"""What several commands share that is not rendering (that is in :mod:`regbench.report`): the
:class:`Context` every command gets (the one way to find the configuration file and open the
store), the ``DURATION``, finite number and configuration-name option types, and SIGTERM
handled as Ctrl-C."""

from __future__ import annotations

import contextlib
import math
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..store import Store


class Context:
    """What every command gets: the global ``--store`` and ``--config``, and the one way to open
    the store.

    The store is, in this order: ``--store`` (or ``REGBENCH_STORE``); the ``store`` key of the
    configuration file (``--config FILE``, else the nearest ``regbench.toml``, if there is one),
    relative to that file's folder; ``.regbench/results.db`` in that file's folder (the project's
    root, wherever in the project the command is run, as ``git`` finds its repository); and only
    without a configuration file, ``.regbench/results.db`` under the current directory.
    """

    def __init__(self, store: str | None, config: str | None):
        self.store_location = store
        self.config_path = config
        self.stores: list[Store] = []
        self._config: ProjectConfig | None = None
        self._looked_up = False
        self._said_moved = False

    def load_config(self) -> ProjectConfig:
        """The configuration file, which the command needs (a one-line error when there is none)."""
        from ..config import load_config

        if self._config is None:
            self._config = load_config(self.config_path)
            self._looked_up = True
        return self._config

    def config_if_any(self) -> ProjectConfig | None:
        """The configuration file when one is given or found, else None."""
        from ..config import find_config

        if not self._looked_up:
            self._looked_up = True
            if self.config_path is not None or find_config() is not None:
                self.load_config()
        return self._config

    def store_location_for(self, config: ProjectConfig | None) -> str | None:
        """Where the store is (None: the default), after ``--store``, then ``config``'s ``store``."""
        if self.store_location is not None:
            return self.store_location
        if config is not None and config.store:
            return config.store if "://" in config.store else str(config.root / config.store)
        if config is not None:  # from a subfolder, the project's store, not a second one there
            from ..store.db import DEFAULT_LOCATION

            project, here = config.root / DEFAULT_LOCATION, Path.cwd() / DEFAULT_LOCATION
            if not project.exists() and here.exists() and here.resolve() != project.resolve():
                # A store made under the current folder before the default followed the
                # configuration file: used rather than silently left behind, and said.
                if not self._said_moved:
                    click.echo(f"warning: using the store at {here}; the default store is now beside "
                               f"regbench.toml ({project}): move it there, or set [project] store", err=True)
                    self._said_moved = True
                return str(here)
            return str(project)
        return None

    def open_store(self, *, create: bool = True, config: ProjectConfig | None = None,
                   lazy: bool | None = None) -> Store:
        """The results store (closed when the command ends); ``create=False`` for commands that
        only read it, so that a mistyped path is an error rather than an empty store.

        A store that may be created is opened at its first use (``lazy``): a command that finds
        its input wrong before it reads or writes the store (an unknown benchmark, a revision git
        does not know) leaves no new store file behind, and writes nothing to an existing one.

        ``lazy`` (default: ``create``) opens an existing store at its first use too, for a command
        that may refuse it before it reads it through the current schema.

        ``config`` is the configuration the command has loaded already; without it, the
        configuration file is read for its ``store`` key when ``--store`` is not given.
        """
        from ..store import Store

        if config is None and self.store_location is None:
            config = self.config_if_any()
        store = Store(self.store_location_for(config), create=create, lazy=create if lazy is None else lazy)
        self.stores.append(store)
        store.revisions = self._revisions(config)  # versions named as git names them (HEAD~1, v1.2)
        return store

    def _revisions(self, config: ProjectConfig | None):
        """Git revisions of the project's repository (:meth:`project_repo`)."""
        from ..run.versions import revision_resolver

        return revision_resolver(self.project_repo(config))

    def project_repo(self, config: ProjectConfig | None = None) -> Path:
        """The project's git repository: regbench.toml's `repo` (``config``, else the file found,
        if it is valid), else the configuration file's folder, else the current folder."""
        from ..errors import ConfigError

        if config is None:
            try:
                config = self.config_if_any()
            except ConfigError:
                config = None  # a reading command works without a valid configuration
        return config.repo or config.root if config is not None else Path.cwd()

    def close(self) -> None:
        for store in self.stores:
            store.close()

class DurationType(click.ParamType):
    """``90``, ``90s``, ``10m`` or ``1.5h`` as seconds (:func:`regbench.config.duration_seconds`,
    which reads the durations of ``regbench.toml`` too)."""

    name = "DURATION"

    def convert(self, value, param, ctx):
        from ..config import duration_seconds

        if isinstance(value, int | float):
            return float(value)
        seconds = duration_seconds(str(value))
        if seconds is None:
            self.fail(f"{value!r} is not a duration such as 90s, 10m or 1h", param, ctx)
        return seconds


DURATION = DurationType()


class FiniteFloatRange(click.FloatRange):
    """:class:`click.FloatRange` that refuses ``nan`` and the infinities, which click lets
    through every range (``nan`` compares false with both bounds): a usage error, exit status 2,
    rather than a number no computation can use."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number

#: What a configuration *file* is called; a configuration *name* never ends so.
FILE_SUFFIXES = (".toml", ".json", ".yaml", ".yml")


def configuration_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Callback of the options that take a configuration's name (``--configuration``): a name
    that looks like a file (a configuration file's suffix, or a path to a file that is there), or
    a blank one, is a usage error (exit status 2), so that a configuration file given in the
    wrong place is not taken for a name under which runs are stored.  A name with a ``/`` that
    names no file is a name: the HTTP API and canonical files store such names (``gcc/O2``), and
    the commands must be able to select them (a probe: one pushed as ``a/b`` could not be)."""
    if value is None:
        return value
    if value.lower().endswith(FILE_SUFFIXES) or (("/" in value or "\\" in value) and Path(value).is_file()):
        raise click.BadParameter(f"{value!r} looks like a file, not a configuration name; a configuration file is "
                                 f"given before the command: regbench --config {value} {ctx.info_name} ...")
    if not value.strip():
        raise click.BadParameter(f"{value!r} is blank: give a configuration name")
    return value


def moved_option(old: str, new: str):
    """A hidden option ``old`` that tells, as a usage error (exit status 2), that it is spelled
    ``new`` now (and, for ``--config``, that the configuration *file* is the global option given
    before the command)."""

    def fail(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        file = (f"a configuration file is given before the command (regbench --config FILE {ctx.info_name} ...); "
                if old == "--config" else "")
        raise click.UsageError(f"{old} {value}: {file}the configuration's name is {new} NAME")

    # A name of its own: ``--b-config`` would otherwise share ``b_config`` with ``--b-configuration``.
    return click.option(old, "moved_" + old.strip("-").replace("-", "_"), hidden=True, expose_value=False,
                        callback=fail)


def check_benchmark(store: Store, name: str | None) -> None:
    """A one-line error when no benchmark ``name`` is stored, suggesting the nearest names.

    Raises
    ------
    NotFoundError
        ``name`` is not a stored benchmark (None, meaning every benchmark, is always fine).
    """
    if name is None:
        return
    names = [b.name for b in store.benchmarks()]
    if name not in names:
        _not_stored("benchmark", name, names, f"it holds {len(names)} benchmark{'' if len(names) == 1 else 's'}: "
                    "`regbench show` lists them")


def check_configuration(store: Store, name: str | None) -> None:
    """A one-line error when no runs are stored under the configuration ``name``, suggesting the
    nearest names (as :func:`check_benchmark` does for benchmarks).

    Raises
    ------
    NotFoundError
        ``name`` names no configuration with stored runs (None, meaning every one, is always fine).
    """
    if name is None:
        return
    names = sorted({config for _, config, _ in store.series_keys()})
    if name not in names:
        _not_stored("configuration", name, names, f"it holds {', '.join(repr(n) for n in names)}")


def _not_stored(what: str, name: str, names: list[str], listing: str) -> NoReturn:
    """``no WHAT named NAME in the store``, with the nearest stored names, else ``listing``."""
    import difflib

    from ..errors import NotFoundError

    near = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if not near:  # a different case, or a prefix, is near too, and so is the end of a tool's series
        # (`join` or `Bench.join` for the JMH method `jmh/pkg.Bench.join`)
        near = [n for n in names if n.lower() == name.lower() or n.startswith(name)
                or n.endswith(("/" + name, "." + name))][:3]
    hint = (f"did you mean {', '.join(repr(n) for n in near)}?" if near else listing if names else "it holds none yet")
    raise NotFoundError(f"no {what} named {name!r} in the store ({hint})")


@contextlib.contextmanager
def sigterm_as_interrupt():
    """Within the block, SIGTERM raises KeyboardInterrupt (in the main thread only)."""
    # `kill PID` then cleans up like Ctrl-C: the run's process group is killed and the campaign
    # is marked interrupted.
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: ``--rebuild`` and ``--retry-failed`` of the commands that run campaigns (``run``, ``screen``):
#: one meaning, that of :func:`regbench.run.campaign.run_campaign`'s ``rebuild`` and ``retry_failed``.
def _once(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    """The one value of an option that takes one: given twice, click kept the last silently, and
    a CI gate written ``compare --benchmark a --benchmark b`` compared ``b`` alone (a first-user
    probe), so a repeat is a usage error."""
    if len(value) > 1:
        names = ", ".join(dict.fromkeys(value))
        raise click.BadParameter(f"given {len(value)} times ({names}): this command takes one benchmark, or all "
                                 "of them without the option", ctx=ctx, param=param)
    return value[0] if value else None


#: ``--benchmark NAME`` of a command that looks at one benchmark or at all (repeats refused).
one_benchmark_option = click.option("--benchmark", multiple=True, callback=_once, metavar="NAME",
                                    help="Only this benchmark.")
rebuild_option = click.option("--rebuild", is_flag=True, help="Build every version again, even if a build is recorded.")
retry_failed_option = click.option(
    "--retry-failed", is_flag=True,
    help="Also run again the runs that failed earlier (once their cause is fixed): each experiment gets new runs for "
         "its failed ones; the failed runs stay stored.")


#: The help of ``--executor`` and ``--scheduler`` says where their defaults come from.
EXECUTOR_DEFAULT = "[default: `executor` of [run] in regbench.toml, else local]"
SCHEDULER_DEFAULT = "[default: `scheduler` of [run] in regbench.toml]"


def where_to_run(click_ctx: click.Context, config, executor: str | None,
                 scheduler: str | None) -> tuple[str, str | None]:
    """``--executor`` and ``--scheduler`` over the ``[run]`` table of ``config`` (None: no
    configuration): the executor's name and the scheduler's address.

    Raises
    ------
    click.UsageError
        ``--scheduler`` with the local executor (given, or the configuration's): options that do
        not go together, exit status 2.
    """
    settings = config.run if config is not None else None
    name = executor or (settings.executor if settings is not None else "local")
    if scheduler is not None and name != "dask":
        raise click.UsageError("--scheduler is for --executor dask", ctx=click_ctx)
    if scheduler is None and name == "dask" and settings is not None:
        scheduler = settings.scheduler
    return name, scheduler


def dask_scheduler(click_ctx: click.Context, scheduler: str | None) -> str:
    """The scheduler's address of ``--executor dask`` (:func:`where_to_run`'s), or a usage error
    (exit status 2) when neither ``--scheduler`` nor ``[run]`` gives one.  Called where the
    command is about to connect, so that other usage errors of the command are said first."""
    if not scheduler:
        raise click.UsageError("--executor dask needs --scheduler ADDRESS (such as tcp://127.0.0.1:8786), or "
                               "`scheduler` of [run] in regbench.toml", ctx=click_ctx)
    return scheduler
