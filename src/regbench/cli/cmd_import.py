"""``regbench import FILE``: load measurements from the canonical CSV or JSON lines."""

from __future__ import annotations

import click


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["auto", "csv", "jsonl"]), default="auto",
              show_default=True, help="File format (auto: by extension or content).")
@click.pass_obj
def command(ctx, file: str, fmt: str) -> None:
    """Import measurements from FILE (canonical CSV or JSON lines).

    \b
    Required columns: benchmark,version,run,iteration,value
    Optional columns: timestamp,config,machine,unit,direction
    The whole file is imported in one transaction: on any error nothing is stored and the
    error names the line (FILE:LINE: what is wrong).
    """
    from ..ingest import import_file
    from ._output import console

    store = ctx.open_store()
    rep = import_file(store, file, fmt=fmt)
    console.print(f"imported {rep.samples} samples in {rep.runs} runs of {rep.benchmarks} benchmarks "
                  f"and {rep.versions} versions into {store.url}")
