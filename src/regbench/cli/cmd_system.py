"""``regbench system check``: what on this machine adds noise to benchmark results."""

from __future__ import annotations

import json

import click


@click.group("system")
def command() -> None:
    """The machine benchmarks run on."""


@command.command("check")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--strict", is_flag=True, help="Exit with status 1 when any check warns.")
def check_command(fmt: str, strict: bool) -> None:
    """Check the noise sources of seed 003 s.3 and seed 001 s.3.1: CPU governor, turbo, SMT,
    address-space randomization, load and busy processes, swap, isolated CPUs, power source and
    virtualization. Each says ok, warn (with what to do) or unknown (with why). Reads only."""
    from ..run.system_check import system_check
    from ._output import console, emit_table

    findings = system_check()
    if fmt == "json":
        click.echo(json.dumps([f.to_json() for f in findings], indent=1))
    else:
        colour = {"ok": "green", "warn": "yellow", "unknown": "dim"}
        emit_table("System check", ["check", "status", "value", "what to do"],
                   [[f.name, f"[{colour[f.status]}]{f.status}[/]", f.value, f.advice] for f in findings])
        warns = sum(f.status == "warn" for f in findings)
        console.print(f"{warns} warning(s), {sum(f.status == 'unknown' for f in findings)} unknown")
    if strict and any(f.status == "warn" for f in findings):
        raise SystemExit(1)
