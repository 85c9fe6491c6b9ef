"""The fingerprint of the machine a campaign runs on.

A *machine* in regbench's vocabulary is where a run happened, described by what is known to move
benchmark results: the CPU and its frequency governor, the number of cores, the operating system
and kernel, address-space layout randomization (seed 003, "ASLR" and "CPU frequency scaling" among
the external noise sources of Firefox's Talos machines), the interpreter, and how busy the machine
was when the campaign started.  The fingerprint is stored with every campaign so that a change in
results can be traced to a change of machine.

Everything that cannot be read on this platform is an honest ``None``, never a guess.
"""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

#: Bump when a key changes meaning (stored fingerprints are compared across campaigns).
FINGERPRINT_VERSION = 1

_GOVERNOR = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
_ASLR = Path("/proc/sys/kernel/randomize_va_space")
_CPUINFO = Path("/proc/cpuinfo")
_OS_RELEASE = Path("/etc/os-release")


def machine_fingerprint() -> dict:
    """Describe this machine as a JSON-serialisable dict.

    Returns
    -------
    dict
        ``cpu_model`` (str or None), ``logical_cores`` (int or None), ``usable_cores`` (cores
        this process may run on, int or None), ``arch``, ``os``, ``os_release`` (the
        distribution's pretty name or None), ``kernel``, ``python_version``,
        ``python_implementation``, ``governor`` (CPU0 frequency governor or None), ``aslr``
        (``randomize_va_space``: 0 off, 1 partial, 2 full; None if unreadable),
        ``load_avg_1m`` (float or None), ``hostname`` and ``fingerprint_version``.

    References
    ----------
    Seed 003 ("Larres et al."), sections on ASLR and CPU frequency scaling as noise sources.
    """
    aslr = _read_text(_ASLR)
    try:
        load = round(os.getloadavg()[0], 3)
    except (OSError, AttributeError):
        load = None
    try:
        usable = len(os.sched_getaffinity(0))
    except (OSError, AttributeError):
        usable = None
    return {
        "fingerprint_version": FINGERPRINT_VERSION,
        "cpu_model": _cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "arch": platform.machine() or None,
        "os": platform.system() or None,
        "os_release": _os_release(),
        "kernel": platform.release() or None,
        "python_version": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "governor": _read_text(_GOVERNOR),
        "aslr": int(aslr) if aslr is not None and aslr.isdigit() else None,
        "load_avg_1m": load,
        "hostname": default_machine_name(),
    }


def default_machine_name() -> str:
    """The name a machine gets when ``--machine`` is not given: its host name."""
    return socket.gethostname() or platform.node() or "local"


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def _cpu_model() -> str | None:
    text = _read_text(_CPUINFO)
    if text is not None:
        # x86 says "model name"; ARM and others say "Hardware", "Processor" or "cpu model".
        wanted = ("model name", "hardware", "processor", "cpu model", "cpu")
        found: dict[str, str] = {}
        for line in text.splitlines():
            key, sep, value = line.partition(":")
            key = key.strip().lower()
            value = value.strip()
            if sep and key in wanted and value and key not in found:
                found[key] = value
        for key in wanted:
            # "processor" is the CPU index on x86 ("0"): only a name counts.
            if key in found and not found[key].isdigit():
                return found[key]
    return platform.processor() or None


def _os_release() -> str | None:
    text = _read_text(_OS_RELEASE)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"') or None
    return None
