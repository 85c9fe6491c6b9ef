"""``regbench system check``: what on this machine adds noise to benchmark results."""

from __future__ import annotations

import click

from ..errors import ExitStatus


@click.group("system")
def command() -> None:
    """The machine benchmarks run on."""


@command.command("check")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--strict", is_flag=True, help="Exit with status 1 when any check warns.")
def check_command(fmt: str, strict: bool) -> None:
    """Check the noise sources of Larres et al. 2013, s.3 and Bulej et al. 2005, s.3.1: CPU governor, turbo, SMT,
    address-space randomization, load and busy processes, swap, isolated CPUs, power source and
    virtualization. Each says ok, warn (with what to do) or unknown (with why). Reads only."""
    from ..report.diagnosis import print_system_check
    from ..run.system_check import system_check

    findings = system_check()
    print_system_check(findings, fmt=fmt)
    if strict and any(f.status == "warn" for f in findings):
        raise click.exceptions.Exit(ExitStatus.FOUND)
