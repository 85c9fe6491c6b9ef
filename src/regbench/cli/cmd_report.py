"""``regbench report -o DIR``: the dashboard as a static site (:mod:`regbench.web.static_site`)."""

from __future__ import annotations

import click


@click.command("report")
@click.option("-o", "--output", "directory", required=True, type=click.Path(file_okay=False),
              help="Folder to write the report into (created; an earlier report there is replaced).")
@click.option("--diagnosis/--no-diagnosis", default=True, show_default=True,
              help="Draw each benchmark's diagnosis page (needs the `diagnose` extra; the first 50 benchmarks).")
@click.pass_obj
def command(ctx, directory: str, diagnosis: bool) -> None:
    """Write the dashboard as static files: every series with its history and intervals, the
    changes, the alerts (read-only), a comparison of the last two versions, diagnoses and an
    Atom feed of the alerts.

    The report needs no server and no network: open DIR/index.html from disk (file://) or put
    the folder on any static host. `regbench serve` shows the same pages live and lets
    people triage alerts.
    """
    from ..report.web import print_report_written
    from ..web.data import Dashboard
    from ..web.static_site import write_report

    config = ctx.config_if_any()
    store = ctx.open_store(create=False, config=config)
    dash = Dashboard(store, project=config.name if config else "regbench", url=config.url if config else None,
                     config=config).load()
    print_report_written(write_report(dash, directory, diagnosis=diagnosis))
