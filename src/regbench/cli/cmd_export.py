"""``regbench export``: write the store as canonical CSV."""

from __future__ import annotations

import sys

import click


@click.command("export")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default="-",
              show_default=True, help="Output file ('-' for standard output).")
@click.pass_obj
def command(ctx, output: str) -> None:
    """Export every measured sample as canonical CSV.

    Warm-up iterations and failed runs (which have no samples) are left out, so a re-import
    reproduces every analysed sample (but not the warm-up count: give `summary --warmup-cost`
    for n_opt); exporting the re-imported store gives the same bytes.
    """
    import os
    import tempfile

    from ..adapters import write_csv
    from ..report.console import err_console

    store = ctx.open_store(create=False)
    if output == "-":
        n = write_csv(store.iter_raw_runs(), sys.stdout)
        return
    # Write beside the target and rename: an interrupted export never leaves half a file.
    from ..errors import InputError

    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise InputError(f"no folder {folder}", path=output)
    fd, tmp = tempfile.mkstemp(prefix=".regbench-export-", dir=folder)
    os.close(fd)
    try:
        n = write_csv(store.iter_raw_runs(), tmp)
        os.replace(tmp, output)
    except BaseException:
        os.unlink(tmp)
        raise
    err_console.print(f"exported {n} samples to {output}")
