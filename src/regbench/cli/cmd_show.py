"""``regbench show``: benchmarks, versions, runs and their status."""

from __future__ import annotations

from collections import Counter

import click


@click.command("show")
@click.option("--runs", "list_runs", is_flag=True, help="List every run, not only failed ones.")
@click.option("--benchmark", help="Only this benchmark.")
@click.option("--version", "version_name", help="Only this version.")
@click.pass_obj
def command(ctx, list_runs: bool, benchmark: str | None, version_name: str | None) -> None:
    """List benchmarks, versions (in history order), builds and runs with their status."""
    from rich.table import Table

    from ._output import console

    store = ctx.open_store(create=False)
    if version_name:
        version_name = store.resolve_version(version_name)
    runs = store.runs(benchmark=benchmark, version=version_name)
    by_bench = Counter((r.benchmark, r.status) for r in runs)
    by_version = Counter((r.version, r.status) for r in runs)

    t = Table(title="Benchmarks", title_justify="left")
    for col in ("benchmark", "unit", "direction", "runs ok", "runs failed"):
        t.add_column(col, justify="right" if col.startswith("runs") else "left")
    for b in store.benchmarks():
        if benchmark and b["name"] != benchmark:
            continue
        ok = by_bench[(b["name"], "ok")]
        bad = sum(n for (name, st), n in by_bench.items() if name == b["name"] and st != "ok")
        t.add_row(b["name"], b["unit"], b["direction"], str(ok), str(bad))
    console.print(t)

    builds = {}
    for bld in store.builds():
        builds[bld["version"]] = bld
    t = Table(title="Versions (history order)", title_justify="left")
    for col in ("version", "commit", "timestamp", "build", "runs ok", "runs failed"):
        t.add_column(col, justify="right" if col.startswith("runs") else "left")
    for v in store.versions():
        if version_name and v.name != version_name:
            continue
        ok = by_version[(v.name, "ok")]
        bad = sum(n for (name, st), n in by_version.items() if name == v.name and st != "ok")
        bld = builds.get(v.name)
        t.add_row(v.name, (v.commit or "")[:10], v.timestamp_text or (str(v.timestamp) if v.timestamp else ""),
                  bld["status"] if bld else "", str(ok), str(bad))
    console.print(t)

    failed_builds = [b for b in builds.values() if b["status"] != "ok"]
    for b in failed_builds:
        tail = (b["log_tail"] or "").strip().splitlines()
        console.print(f"[red]build failed[/red] at {b['version']} (exit {b['exit_code']}): "
                      f"{tail[-1] if tail else ''}")

    shown = runs if list_runs else [r for r in runs if r.status != "ok"]
    if shown:
        t = Table(title="Runs" if list_runs else "Failed runs", title_justify="left")
        for col in ("benchmark", "version", "run", "status", "exit", "samples", "seconds", "stderr (last line)"):
            t.add_column(col)
        for r in shown:
            tail = (r.stderr_tail or "").strip().splitlines()
            t.add_row(r.benchmark, r.version, str(r.run_index), r.status,
                      "" if r.exit_code is None else str(r.exit_code), str(r.n_samples - r.warmup),
                      "" if r.duration is None else f"{r.duration:.2f}", tail[-1][:80] if tail else "")
        console.print(t)
    console.print(f"{len(runs)} runs in {store.url}")
