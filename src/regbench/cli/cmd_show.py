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
    from rich.markup import escape

    from ._output import console, emit_table

    store = ctx.open_store(create=False)
    if version_name:
        version_name = store.resolve_version(version_name)
    runs = store.runs(benchmark=benchmark, version=version_name)
    by_bench = Counter((r.benchmark, r.status) for r in runs)
    by_version = Counter((r.version, r.status) for r in runs)

    rows = []
    for b in store.benchmarks():
        if benchmark and b.name != benchmark:
            continue
        ok = by_bench[(b.name, "ok")]
        bad = sum(n for (name, st), n in by_bench.items() if name == b.name and st != "ok")
        rows.append([escape(b.name), escape(b.unit), b.direction, str(ok), str(bad)])
    emit_table("Benchmarks", ["benchmark", "unit", "direction", "runs ok", "runs failed"], rows,
               right={"runs ok", "runs failed"})

    builds = {}
    for bld in store.builds():
        builds[bld.version] = bld
    rows = []
    for v in store.versions():
        if version_name and v.name != version_name:
            continue
        ok = by_version[(v.name, "ok")]
        bad = sum(n for (name, st), n in by_version.items() if name == v.name and st != "ok")
        bld = builds.get(v.name)
        rows.append([escape(v.name), (v.commit or "")[:10],
                     escape(v.timestamp_text or (str(v.timestamp) if v.timestamp else "")),
                     bld.status if bld else "", str(ok), str(bad)])
    emit_table("Versions (history order)", ["version", "commit", "timestamp", "build", "runs ok", "runs failed"],
               rows, right={"runs ok", "runs failed"})

    failed_builds = [b for b in builds.values() if b.status != "ok"]
    for b in failed_builds:
        tail = (b.log_tail or "").strip().splitlines()
        console.print(f"[red]build failed[/red] at {escape(b.version)} (exit {b.exit_code}): "
                      f"{escape(tail[-1]) if tail else ''}")

    shown = runs if list_runs else [r for r in runs if r.status != "ok"]
    if shown:
        rows = []
        for r in shown:
            tail = (r.stderr_tail or "").strip().splitlines()
            rows.append([escape(r.benchmark), escape(r.version), str(r.run_index), r.status,
                         "" if r.exit_code is None else str(r.exit_code), str(max(0, r.n_samples - r.warmup)),
                         str(r.warmup), "" if r.duration is None else f"{r.duration:.2f}",
                         escape(tail[-1][:80]) if tail else ""])
        emit_table("Runs" if list_runs else "Failed runs",
                   ["benchmark", "version", "run", "status", "exit", "samples", "warm-up", "seconds",
                    "stderr (last line)"], rows, right={"run", "exit", "samples", "warm-up", "seconds"})
    console.print(f"{len(runs)} runs in {store.url}")
