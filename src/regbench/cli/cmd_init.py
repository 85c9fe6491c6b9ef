"""``regbench init``: write an example ``regbench.toml`` to start from."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..config import CONFIG_NAME, EXAMPLE
from ..errors import ConfigError


def example_for(target: Path) -> str:
    """The example configuration, its project named after the folder ``target`` is written in
    (the default name of the project: docs/configuration.md)."""
    import json

    name = target.absolute().parent.name or "project"
    # A JSON string is a TOML basic string (the same escapes).
    return EXAMPLE.replace('name = "myproject"', f"name = {json.dumps(name, ensure_ascii=False)}", 1)


@click.command("init")
@click.option("--force", is_flag=True, help=f"Overwrite an existing {CONFIG_NAME}.")
@click.pass_obj
def command(ctx, force: bool) -> None:
    """Write an example regbench.toml in the current directory.

    The file documents every key; edit its [[benchmark]] tables, then run `regbench run`.
    With the global --config FILE, the example is written to FILE instead.  The project is
    named after the file's folder.
    """
    target = Path(ctx.config_path) if ctx is not None and ctx.config_path else Path.cwd() / CONFIG_NAME
    if target.exists() and not force:
        raise ConfigError(f"{target}: already exists (use --force to overwrite it)")
    # Written beside the target and renamed: never a half-written configuration.
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        tmp.write_text(example_for(target), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigError(f"{target}: cannot write ({exc.strerror or exc})") from exc
    click.echo(f"wrote {target}: edit its [[benchmark]] tables, then run `regbench run`")
    from ..config import find_config

    outer = find_config(target.parent.parent) if target.parent.parent != target.parent else None
    if outer is not None and not (ctx is not None and ctx.config_path):
        # The nearest regbench.toml is the one commands read: from here on this one, not the
        # project's (a user who ran `init` in a subfolder lost the project's configuration there).
        click.echo(f"note: {outer} is above it: commands run in {target.parent} or below now read this one "
                   "instead (`--config` chooses)", err=True)
