"""``regbench export``: write the store as canonical CSV."""

from __future__ import annotations

import sys

import click


@click.command("export")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default="-",
              show_default=True, help="Output file ('-' for standard output).")
@click.option("--version", "versions", multiple=True, metavar="NAME",
              help="Only this version (a name, tag or git revision; repeatable) [default: all].")
@click.option("--campaign", "campaigns", multiple=True, type=int, metavar="ID",
              help="Only the runs of this campaign: the number `regbench run` printed at its end "
                   "(`Campaign 3 on ...`; repeatable) [default: all].")
@click.option("--sessions/--no-sessions", "with_sessions", default=False,
              help="Also export the runs of sessions (`compare --run`, `bisect`, `detect --confirm`), which "
                   "`detect` and `diagnose` leave out of a history: the file comes back as history runs, so "
                   "with them a re-import is analysed with those runs in it [default: --no-sessions].")
@click.pass_obj
def command(ctx, output: str, versions: tuple[str, ...], campaigns: tuple[int, ...], with_sessions: bool) -> None:
    """Export every measured sample, and every failed run, as canonical CSV.

    Warm-up iterations are left out, so a re-import reproduces every analysed sample (but not
    the warm-up count: give `summary --warmup-cost` for n_opt); exporting the re-imported store
    gives the same bytes. A run that did not end ok is one row with its status and error, so a
    server the file is pushed to sees a benchmark that started failing. Each version's commit
    and git tags are written too, so that server reads the branch's history and names versions
    by their tags, and what a tool said of each run (a JMH fork's timing, its sample-mode
    iterations' weights), so that server shows JMH's own score. --version and --campaign export
    only part of the store: what a CI machine just measured, to push it. Runs of sessions
    (`compare --run`, `bisect`, `detect --confirm`) are left out, so that a re-import is analysed
    as the store's history is (a file has no sessions: imported, they would be history runs);
    --sessions exports them too. Superseded runs (measured before their benchmark's definition changed) are left
    out, as every analysis leaves them out.
    """
    import os
    import tempfile

    from ..adapters import write_csv
    from ..model import SUPERSEDED
    from ..report.console import err_console

    store = ctx.open_store(create=False)
    wanted = {store.resolve_version(v) for v in versions} or None
    if campaigns:
        known = {c.id for c in store.campaigns()}
        missing = [c for c in campaigns if c not in known]
        if missing:
            from ..errors import NotFoundError

            raise NotFoundError(f"no campaign {missing[0]} in the store (`regbench run` prints the number of "
                                "its campaign at its end)")

    failed = superseded = left_sessions = 0
    # A session asked for by --campaign is exported: only unasked ones are left out.
    sessions = frozenset() if with_sessions else frozenset(store.session_campaigns()) - set(campaigns)

    def runs():
        nonlocal failed, superseded, left_sessions
        for r in store.iter_raw_runs():
            if (wanted is None or r.version in wanted) and (not campaigns or r.campaign_id in campaigns):
                if r.campaign_id in sessions:
                    left_sessions += 1
                    continue
                if r.status == SUPERSEDED:  # measured an old definition: no analysis's, nor a file's
                    superseded += 1
                    continue
                failed += r.failed
                yield r

    if output == "-":
        n = write_csv(runs(), sys.stdout)
        return
    from ..errors import InputError

    if os.path.exists(output) and not os.path.isfile(output):
        if os.path.isdir(output):
            raise InputError("is a folder: give the path of the file to write", path=output)
        # A device or a pipe (/dev/stdout, a named pipe): written as it is, never replaced by a
        # file of the same name (a probe's `-o /dev/full` replaced the device with the export
        # and said it exported).
        try:
            n = write_csv(runs(), output)
        except OSError as exc:
            raise InputError(f"cannot write: {exc.strerror or exc}", path=output) from None
        err_console.print(f"exported {n} samples to {output}")
        return
    # Write beside the target and rename: an interrupted export never leaves half a file.
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise InputError(f"no folder {folder}", path=output)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".regbench-export-", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write in {folder}: {exc.strerror or exc}", path=output) from None
    os.close(fd)
    try:
        n = write_csv(runs(), tmp)
        os.replace(tmp, output)
    except OSError as exc:  # a full disk, a folder that went away: nothing half-written is left
        os.unlink(tmp)
        raise InputError(f"cannot write: {exc.strerror or exc}", path=output) from None
    except BaseException:
        os.unlink(tmp)
        raise
    also = f" and {failed} failed run{'' if failed == 1 else 's'}" if failed else ""
    left = (f" ({superseded} superseded run{'' if superseded == 1 else 's'} left out: measured before their "
            "benchmark's definition changed)") if superseded else ""
    if left_sessions:
        left += (f" ({left_sessions} run{'' if left_sessions == 1 else 's'} of sessions left out: compare --run, "
                 "bisect and detect --confirm; --sessions exports them)")
    err_console.print(f"exported {n} samples{also} to {output}{left}")
