"""``regbench import FILE``: load measurements from the canonical CSV or JSON lines, or from
another benchmark tool's output (go test, JMH, Google Benchmark, criterion, pytest-benchmark, ...)."""

from __future__ import annotations

import click

from ._common import configuration_name, moved_option

CANONICAL = ("csv", "jsonl")


def _format_name(ctx: click.Context, param: click.Parameter, fmt: str) -> str:
    """Callback of ``--format``: a format regbench does not know is a usage error (exit status 2),
    said before the file is read.  The tools' formats are looked up here, not at import, as
    adapters of other packages (entry points) are loaded with them."""
    if fmt != "auto":
        known = known_formats()
        if fmt not in known:
            raise click.BadParameter(f"unknown format {fmt!r} (known: auto, {', '.join(known)})")
    return fmt


def _directions(ctx: click.Context, param: click.Parameter, items: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``--direction PATTERN=DIRECTION`` items as pairs, a malformed one a usage error."""
    from ..config import parse_directions
    from ..errors import ConfigError

    try:
        return parse_directions(items)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def _timestamp(ctx: click.Context, param: click.Parameter, text: str | None) -> str | None:
    """Callback of ``--timestamp``: text that is not ISO 8601 is a usage error (exit status 2)."""
    from ..errors import InputError
    from ..ingest import parse_timestamp

    if text:
        try:
            parse_timestamp(text, path="")
        except InputError:
            raise click.BadParameter(f"{text!r} is not ISO 8601 (such as 2024-05-01T12:00:00Z)") from None
    return text


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("--format", "fmt", default="auto", show_default=True, metavar="NAME", callback=_format_name,
              help="File format: auto (sniffed from the content), csv or jsonl (canonical), or a tool's "
                   "format (see `regbench import --list-formats`).")
@click.option("--version", "version", metavar="NAME",
              help="The version a tool's output measured (needed for every format but the canonical ones, "
                   "whose rows name their versions).")
@click.option("--timestamp", metavar="ISO-8601", callback=_timestamp,
              help="When that version was made (orders versions).")
@click.option("--configuration", "config_name", default=None, metavar="NAME", callback=configuration_name,
              help="Configuration the tool's output belongs to [default: default].")
@moved_option("--config", "--configuration")
@click.option("--machine", default=None, help="Machine the tool's output was measured on [default: local].")
@click.option("--direction", "directions", multiple=True, metavar="PATTERN=lower|higher", callback=_directions,
              help="Which way is better for the tool's benchmarks whose names match PATTERN (* and ? match "
                   "any text and one character), over what the tool says; repeatable, the first match wins "
                   "(a Google Benchmark counter that is a rate: --direction '* [FLOPS]=higher').")
@click.option("--list-formats", is_flag=True, is_eager=True, expose_value=False,
              callback=lambda ctx, _p, value: _list_formats(ctx) if value else None,
              help="List the formats and exit.")
@click.pass_obj
def command(ctx, file: str, fmt: str, version: str | None, timestamp: str | None, config_name: str,
            machine: str, directions: tuple[tuple[str, str], ...]) -> None:
    """Import measurements from FILE, in one transaction: on any error nothing is stored and the
    error names the line (FILE:LINE: what is wrong). A canonical run already stored (the same
    samples) is skipped; runs measured again under numbers the store has are stored after them.

    \b
    Canonical CSV columns: benchmark,version,run,iteration,value
    optional: timestamp,config,machine,unit,direction,commit,tags,status,error,
    processes,warmup_seconds,iteration_seconds,weight (what a tool said of a run)
    Another tool's output is imported as runs of --version: each invocation of the tool is one
    run (a JMH fork is one), every sample it reports is kept, and runs are added after those
    already stored for that version.
    """
    from ..errors import InputError
    from ..ingest import import_file, import_tool_file, order_conflict, parse_tool_file
    from ..report.console import console

    fmt = _format(file, fmt)
    if fmt in CANONICAL:
        if version or timestamp or config_name or machine or directions:
            raise InputError("--version, --timestamp, --configuration, --machine and --direction are for other tools' "
                             "output; canonical rows name their versions (and config, machine and direction "
                             "columns)", path=file)
        from ..adapters import parse_file

        batch = parse_file(file, fmt=fmt)  # every error before the store is touched (or created)
        store = ctx.open_store()
        rep = import_file(store, file, fmt=fmt, batch=batch)
        conflict = order_conflict(batch)
    else:
        conflict = None
        runs = parse_tool_file(file, fmt=fmt, version=version)  # every error before the store is touched
        store = ctx.open_store()
        rep = import_tool_file(store, file, fmt=fmt, version=version, config=config_name or "default",
                               machine=machine or "local", timestamp=timestamp or None, runs=runs,
                               directions=directions)
    console.print(f"imported {rep.samples} samples in {rep.runs} runs of {rep.benchmarks} benchmarks "
                  f"and {rep.versions} versions ({fmt}) into {store.shown_url}")
    if conflict is not None:
        c = conflict
        console.print(f"warning: {file}:{c.line}: without timestamps, versions are ordered by first appearance, "
                      f"and benchmark {c.benchmark!r} measured {c.before!r} before {c.after!r}, which appears first "
                      f"(line {c.first_line}, benchmark {c.first_benchmark!r}) and is ordered first: the order is "
                      "ambiguous; add a timestamp column to say it", markup=False)
    if rep.skipped:
        console.print(f"{rep.skipped} run{' of the file is' if rep.skipped == 1 else 's of the file are'} already in "
                      "the store (the same samples, or the same failure): skipped", markup=False)
    for again in rep.remeasured[:5]:
        console.print(f"{again.runs} run{'' if again.runs == 1 else 's'} of {again.benchmark!r} at {again.version!r} "
                      f"({again.config}, {again.machine}) measured again what the store has runs of: numbered "
                      "after them", markup=False)
    if len(rep.remeasured) > 5:
        more = sum(again.runs for again in rep.remeasured[5:])
        console.print(f"... and {more} more run{'' if more == 1 else 's'} of {len(rep.remeasured) - 5} other "
                      "benchmarks and versions, numbered after the stored ones", markup=False)
    if rep.tags:
        one = rep.tags == 1
        console.print(f"{rep.tags} git tag{'' if one else 's'} added to {'its version' if one else 'their versions'}",
                      markup=False)
    for kept in rep.kept_tags:
        console.print(f"note: tag {kept.tag!r} names version {kept.stored_on!r} in the store and stays there "
                      f"(the file gives it to {kept.file_version!r}; an import never moves a tag)", markup=False)
    if rep.failed and fmt in CANONICAL:
        console.print(f"{rep.failed} of the runs did not end ok (`status` {'column' if fmt == 'csv' else 'field'}): "
                      f"stored as {'a failed run' if rep.failed == 1 else 'failed runs'} with their error "
                      "(`regbench show`)", markup=False)
    elif rep.failed:
        console.print(f"{rep.failed} benchmark{'' if rep.failed == 1 else 's'} the file reports as failed "
                      f"{'is' if rep.failed == 1 else 'are'} stored as a failed run each, with the tool's "
                      "message (`regbench show`)", markup=False)
    if fmt not in CANONICAL and version:
        from collections import Counter

        # This file's benchmarks only, in its configuration and machine: the others of the version
        # (another tool's, imported before) are not this file's to advise on.
        mine = {r.benchmark for r in runs}
        where = (config_name or "default", machine or "local")
        ok = Counter(r.benchmark for r in store.runs(version=version)
                     if r.status == "ok" and r.benchmark in mine and (r.config, r.machine) == where)
        single = sorted(name for name, n in ok.items() if n == 1)
        if single:
            console.print(f"note: {len(single)} benchmark{'' if len(single) == 1 else 's'} of {version} "
                          f"{'has' if len(single) == 1 else 'have'} one run, so `regbench summary` shows no "
                          "interval (± —) for them: intervals are over runs, and one invocation of the tool is "
                          "one run however many times it measured. Run the tool again and import each output "
                          f"with --version {version} (each adds a run), or benchmark it as a command with "
                          f"`format = \"{fmt}\"` in regbench.toml, which regbench repeats as fresh processes.",
                          markup=False)


def known_formats() -> list[str]:
    """Every format ``--format`` takes: the canonical ones, then each tool's."""
    from ..adapters.base import available_formats

    return [*CANONICAL, *available_formats()]


def _format(file: str, fmt: str) -> str:
    """The format to read ``file`` in: ``fmt`` (known: :func:`_format_name` checked it), or the one
    sniffed from its content for ``auto``; a file of no format regbench knows is an error listing
    every format."""
    from ..errors import InputError
    from ..ingest import sniff_file

    if fmt != "auto":
        return fmt
    known = known_formats()
    try:
        return sniff_file(file)
    except InputError as exc:
        # The adapters know only the tools' formats: list the canonical ones too.
        if exc.reason.startswith("not a format regbench knows"):
            raise InputError(f"not a format regbench knows (give --format; known: {', '.join(known)})",
                             path=file) from None
        raise


def _list_formats(ctx: click.Context) -> None:
    from ..adapters.base import REGISTRY, available_formats

    click.echo("csv\tcanonical CSV (docs/formats.md)")
    click.echo("jsonl\tcanonical JSON lines (docs/formats.md)")
    for name in available_formats():
        click.echo(f"{name}\t{REGISTRY[name].description}")
    ctx.exit(0)
