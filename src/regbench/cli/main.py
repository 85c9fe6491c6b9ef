"""Entry point of the ``regbench`` command.

Every :class:`~regbench.errors.RegbenchError` is caught here, once, and printed as one line on
stderr with exit status 1 (STYLE.md habit 6).  Commands live one per module in this package.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__
from ..errors import RegbenchError

COMMAND_MODULES = (
    "cmd_init", "cmd_run", "cmd_import", "cmd_export", "cmd_show", "cmd_summary", "cmd_compare",
    "cmd_detect", "cmd_diagnose", "cmd_demo", "cmd_alerts", "cmd_evaluate", "cmd_system", "cmd_bisect",
    "cmd_clean",
)


class Context:
    """What every command gets: the store location given on the command line, if any."""

    def __init__(self, store: str | None, config: str | None):
        self.store_location = store
        self.config_path = config
        self.stores: list = []

    def open_store(self, *, create: bool = True, config=None):
        from ..store import Store

        location = self.store_location
        if location is None and config is not None and config.store:
            location = str((config.root / config.store)) if "://" not in config.store else config.store
        store = Store(location, create=create)
        self.stores.append(store)
        store.revisions = self._revisions(config)  # versions named as git names them (HEAD~1, v1.2)
        return store

    def _revisions(self, config):
        """Git revisions of the project's repository (regbench.toml's `repo`, else the current folder)."""
        from ..config import find_config
        from ..errors import ConfigError
        from ..run.versions import revision_resolver

        if config is None and (self.config_path or find_config()):
            try:
                config = self.load_config()
            except ConfigError:
                config = None  # a reading command works without a valid configuration
        return revision_resolver(config.repo or config.root if config is not None else Path.cwd())

    def close(self) -> None:
        for store in self.stores:
            store.close()

    def load_config(self):
        from ..config import load_config

        return load_config(self.config_path)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="regbench")
@click.option("--store", envvar="REGBENCH_STORE", metavar="PATH|URL",
              help="Results store: a SQLite path or a SQLAlchemy URL "
                   "[env REGBENCH_STORE; default .regbench/results.db].")
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
    import importlib

    for name in COMMAND_MODULES:
        module = importlib.import_module(f".{name}", __package__)
        cli.add_command(module.command)


def main(argv: list[str] | None = None) -> int:
    _register()
    try:
        rv = cli.main(args=argv, prog_name="regbench", standalone_mode=False)
    except RegbenchError as exc:
        click.echo(f"error: {exc}", err=True)
        return 1
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    # With standalone_mode=False click returns the code given to ctx.exit() (or a command's value).
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
