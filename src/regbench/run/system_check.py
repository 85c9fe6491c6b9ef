"""``regbench system check``: what on this machine adds noise to benchmark results.

Seed 003 (003_17e43d4a143bef6e.txt) s.3 measured the noise sources of Mozilla's Talos machines
(CPU frequency scaling, address-space randomization, other processes, ...) and seed 001
(001_0c28a3a14a5fab8a.txt) s.3.1 lists the platform settings a benchmark must control.  Each
check here reads the kernel's own files (``/sys``, ``/proc``) and says ``ok``, ``warn`` (with what
to change) or ``unknown`` (with why it could not tell: no such file here, a virtual machine, no
permission), never a guess.  Reading only: nothing is changed, and no root is needed.

``root`` lets the checks read another file tree laid out like ``/`` (tests use one).  What
regbench does about noise, per run, is :mod:`regbench.run.noise`.
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

STATUSES = ("ok", "warn", "unknown")


@dataclass(frozen=True)
class Finding:
    """One check: ``name``, ``status`` (ok, warn, unknown), what was read (``value``) and what to do."""

    name: str
    status: str
    value: str
    advice: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def read_system_file(root: Path, rel: str) -> str | None:
    try:
        return (root / rel.lstrip("/")).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def check_governor(root: Path) -> Finding:
    cpus = sorted((root / "sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor"))
    if not cpus:
        return Finding("cpu frequency governor", "unknown", "no cpufreq in /sys",
                       "no frequency-scaling driver is exposed here (common in virtual machines)")
    govs = sorted({p.read_text().strip() for p in cpus})
    ok = govs == ["performance"]
    return Finding("cpu frequency governor", "ok" if ok else "warn", ", ".join(govs),
                   "" if ok else "set the performance governor: sudo cpupower frequency-set -g performance")


def check_turbo(root: Path) -> Finding:
    no_turbo = read_system_file(root, "sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        ok = no_turbo == "1"
        return Finding("turbo boost", "ok" if ok else "warn", "off" if ok else "on",
                       "" if ok else "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo")
    boost = read_system_file(root, "sys/devices/system/cpu/cpufreq/boost")
    if boost is not None:
        ok = boost == "0"
        return Finding("turbo boost", "ok" if ok else "warn", "off" if ok else "on",
                       "" if ok else "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost")
    return Finding("turbo boost", "unknown", "no intel_pstate/no_turbo or cpufreq/boost in /sys",
                   "the boost setting is not exposed here")


def check_smt(root: Path) -> Finding:
    control = read_system_file(root, "sys/devices/system/cpu/smt/control")
    if control is None:
        return Finding("simultaneous multithreading", "unknown", "no smt/control in /sys", "")
    if control in ("off", "forceoff", "notsupported", "notimplemented"):
        return Finding("simultaneous multithreading", "ok", control)
    return Finding("simultaneous multithreading", "warn", control,
                   "sibling threads share a core: echo off | sudo tee /sys/devices/system/cpu/smt/control, "
                   "or pin benchmarks to one thread per core")


def check_aslr(root: Path) -> Finding:
    value = read_system_file(root, "proc/sys/kernel/randomize_va_space")
    if value is None:
        return Finding("address-space randomization", "unknown", "no /proc/sys/kernel/randomize_va_space", "")
    ok = value == "0"
    return Finding("address-space randomization", "ok" if ok else "warn", {"0": "off", "1": "partial", "2": "full"}
                   .get(value, value),
                   "" if ok else "layout changes from run to run add between-run variance (Larres et al. 2013, s.3): "
                                 "`regbench run --no-aslr` (or aslr = false in [noise]) turns it off for the "
                                 "benchmark processes only; sudo sysctl kernel.randomize_va_space=0 for the "
                                 "whole machine")


def check_load(root: Path, *, cores: int | None = None) -> Finding:
    text = read_system_file(root, "proc/loadavg")
    if text is None:
        return Finding("load", "unknown", "no /proc/loadavg", "")
    load = float(text.split()[0])
    cores = cores or os.cpu_count() or 1
    ok = load < 0.1 * cores + 0.1
    return Finding("load", "ok" if ok else "warn", f"{load:.2f} (1 min) on {cores} CPUs",
                   "" if ok else "other work is running: wait for a quiet machine (see busy processes)")


def _cpu_times(root: Path) -> dict[int, tuple[str, int]]:
    out = {}
    for stat in (root / "proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.find("(") + 1:text.rfind(")")]
        fields = text[text.rfind(")") + 2:].split()
        try:
            out[int(stat.parent.name)] = (name, int(fields[11]) + int(fields[12]))
        except (IndexError, ValueError):
            continue
    return out


def check_busy_processes(root: Path, *, interval: float = 0.5, threshold: float = 0.05) -> Finding:
    """Processes (other than this one) that used more than ``threshold`` of a CPU over ``interval``."""
    before = _cpu_times(root)
    if not before:
        return Finding("busy processes", "unknown", "no process table in /proc", "")
    time.sleep(interval)  # two snapshots of the process table make a rate
    after = _cpu_times(root)
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    me = os.getpid()
    busy = []
    for pid, (name, t1) in after.items():
        if pid == me or pid not in before:
            continue
        share = (t1 - before[pid][1]) / ticks / interval
        if share > threshold:
            busy.append((share, pid, name))
    busy.sort(reverse=True)
    if not busy:
        return Finding("busy processes", "ok", f"none above {threshold:.0%} of a CPU")
    shown = ", ".join(f"{name} (pid {pid}, {share:.0%})" for share, pid, name in busy[:5])
    return Finding("busy processes", "warn", shown, "stop them, or pin benchmarks to CPUs they do not use")


def check_swap(root: Path) -> Finding:
    text = read_system_file(root, "proc/meminfo")
    if text is None:
        return Finding("swap", "unknown", "no /proc/meminfo", "")
    info = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if rest.strip():
            info[key] = int(rest.split()[0])
    used = info.get("SwapTotal", 0) - info.get("SwapFree", 0)
    if info.get("SwapTotal", 0) == 0:
        return Finding("swap", "ok", "no swap")
    ok = used == 0
    return Finding("swap", "ok" if ok else "warn", f"{used // 1024} MiB in use of {info['SwapTotal'] // 1024} MiB",
                   "" if ok else "pages being swapped make times jump: free memory or turn swap off (sudo swapoff -a)")


def check_isolated(root: Path) -> Finding:
    text = read_system_file(root, "sys/devices/system/cpu/isolated")
    if text is None:
        return Finding("isolated CPUs", "unknown", "no cpu/isolated in /sys", "")
    if text:
        return Finding("isolated CPUs", "ok", text, "pin benchmark processes to these CPUs")
    return Finding("isolated CPUs", "warn", "none",
                   "boot with isolcpus= (and nohz_full=) to keep the scheduler and interrupts off benchmark CPUs")


def check_power(root: Path) -> Finding:
    supplies = sorted((root / "sys/class/power_supply").glob("*"))
    if not supplies:
        return Finding("power source", "unknown", "no power supply in /sys",
                       "nothing reported (a server, a desktop or a virtual machine)")
    for s in supplies:
        if read_system_file(root, str(s.relative_to(root) / "type")) == "Battery":
            status = read_system_file(root, str(s.relative_to(root) / "status")) or "unknown"
            if status.lower() == "discharging":
                return Finding("power source", "warn", f"battery ({status})",
                               "on battery the CPU may be throttled: plug the machine in")
    return Finding("power source", "ok", "mains")


def check_virtualization(root: Path) -> Finding:
    cpuinfo = read_system_file(root, "proc/cpuinfo") or ""
    hypervisor = any(line.startswith("flags") and " hypervisor" in line for line in cpuinfo.splitlines())
    container = (root / ".dockerenv").exists() or "docker" in (read_system_file(root, "proc/1/cgroup") or "")
    if hypervisor or container:
        what = " and ".join(x for x, on in (("virtual machine", hypervisor), ("container", container)) if on)
        return Finding("virtualization", "warn", what,
                       "other guests share the hardware: compare results only from the same kind of machine, "
                       "and expect more between-run variance")
    if not cpuinfo:
        return Finding("virtualization", "unknown", "no /proc/cpuinfo", "")
    return Finding("virtualization", "ok", "bare metal")


def system_check(root: str | os.PathLike = "/", *, busy_interval: float = 0.5) -> list[Finding]:
    """Every check, in a fixed order."""
    root = Path(root)
    return [check_governor(root), check_turbo(root), check_smt(root), check_aslr(root), check_load(root),
            check_busy_processes(root, interval=busy_interval), check_swap(root), check_isolated(root),
            check_power(root), check_virtualization(root)]
