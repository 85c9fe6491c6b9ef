"""`regbench system check`: each check read from a file tree laid out like /, and live on this machine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from regbench.run import system_check as checks


def tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_a_quiet_well_set_machine_is_all_ok(tmp_path):
    root = tree(tmp_path, {
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
        "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance\n",
        "sys/devices/system/cpu/intel_pstate/no_turbo": "1\n",
        "sys/devices/system/cpu/smt/control": "off\n",
        "proc/sys/kernel/randomize_va_space": "0\n",
        "proc/loadavg": "0.02 0.05 0.01 1/100 42\n",
        "proc/meminfo": "MemTotal: 1000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n",
        "sys/devices/system/cpu/isolated": "2-3\n",
        "sys/class/power_supply/AC/type": "Mains\n",
        "proc/cpuinfo": "processor : 0\nflags : fpu vme sse\n",
    })
    found = {f.name: f for f in checks.system_check(root, busy_interval=0.01)}
    assert {n: f.status for n, f in found.items() if n != "busy processes"} == {
        "cpu frequency governor": "ok", "turbo boost": "ok", "simultaneous multithreading": "ok",
        "address-space randomization": "ok", "load": "ok", "swap": "ok", "isolated CPUs": "ok",
        "power source": "ok", "virtualization": "ok"}
    assert found["busy processes"].status == "unknown"  # no process table in this tree


def test_a_noisy_machine_gets_advice(tmp_path):
    root = tree(tmp_path, {
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "powersave\n",
        "sys/devices/system/cpu/cpufreq/boost": "1\n",
        "sys/devices/system/cpu/smt/control": "on\n",
        "proc/sys/kernel/randomize_va_space": "2\n",
        "proc/loadavg": "3.50 2.0 1.0 5/300 99\n",
        "proc/meminfo": "SwapTotal: 2097152 kB\nSwapFree: 1048576 kB\n",
        "sys/devices/system/cpu/isolated": "\n",
        "sys/class/power_supply/BAT0/type": "Battery\n",
        "sys/class/power_supply/BAT0/status": "Discharging\n",
        "proc/cpuinfo": "flags : fpu hypervisor sse\n",
    })
    found = {f.name: f for f in checks.system_check(root, busy_interval=0.01)}
    for name in ("cpu frequency governor", "turbo boost", "simultaneous multithreading", "address-space randomization",
                 "swap", "isolated CPUs", "power source", "virtualization"):
        assert found[name].status == "warn" and found[name].advice, name
    assert found["cpu frequency governor"].value == "powersave"
    assert found["swap"].value == "1024 MiB in use of 2048 MiB"
    assert checks.check_load(root, cores=2).status == "warn"
    assert checks.check_load(root, cores=64).status == "ok"


def test_missing_files_are_unknown_with_a_reason(tmp_path):
    for f in checks.system_check(tmp_path, busy_interval=0.01):
        assert f.status == "unknown" and f.value, f


def test_a_busy_process_is_named(tmp_path):
    # A real process burning CPU on this machine, seen through the real /proc.
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        found = checks.check_busy_processes(Path("/"), interval=0.5)
    finally:
        burner.kill()
        burner.wait()
    assert found.status == "warn" and f"pid {burner.pid}" in found.value


def test_the_command_on_this_machine():
    out = subprocess.run([sys.executable, "-m", "regbench.cli.main", "system", "check", "--format", "json"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    findings = json.loads(out.stdout)
    assert len(findings) == 10 and all(f["status"] in checks.STATUSES for f in findings)
    aslr = next(f for f in findings if f["name"] == "address-space randomization")
    expected = {"0": "ok"}.get(Path("/proc/sys/kernel/randomize_va_space").read_text().strip(), "warn")
    assert aslr["status"] == expected
    if aslr["status"] == "warn":  # a warning that does not come and go with the load
        strict = subprocess.run([sys.executable, "-m", "regbench.cli.main", "system", "check", "--strict"],
                                capture_output=True, text=True, timeout=60)
        assert strict.returncode == 1
