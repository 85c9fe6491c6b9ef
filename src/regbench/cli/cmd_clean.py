"""``regbench clean``: remove the worktrees, caches and stale temporary folders regbench made."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import DURATION


@click.command("clean")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.option("--older-than", type=DURATION, default=86400.0, metavar="DURATION",
              show_default="1 day",
              help="Temporary folders younger than this are kept (a run may be using them), e.g. 2h.")
@click.pass_obj
def command(ctx, dry_run: bool, older_than: float) -> None:
    """Remove what regbench leaves on disk: git worktrees of benchmarked commits still registered
    in the project's repository, the worktree and release caches beside the store, and stale
    temporary folders of killed runs. The store is never touched.

    Do not run it while a campaign, bisect or compare --run is running on this project.
    """
    from ..config import find_config
    from ..report.clean import print_clean
    from ..run.clean import clean
    from ..store.db import resolve_url

    config = ctx.load_config() if (ctx.config_path or find_config()) else None
    location = ctx.store_location
    if location is None and config is not None and config.store:
        location = str(config.root / config.store) if "://" not in config.store else config.store
    url = resolve_url(location)
    base = config.root / ".regbench" if config is not None else Path.cwd() / ".regbench"
    if url.startswith("sqlite:///") and not url.endswith(":memory:"):
        base = Path(url[len("sqlite:///"):]).parent  # worktrees and venvs go beside a SQLite store
    repo = (config.repo or config.root) if config is not None else Path.cwd()
    print_clean(clean(repo=repo, cache_dirs=[base / "worktrees", base / "venvs"], dry_run=dry_run,
                      older_than=older_than))
