"""Noise control for the benchmark process (``[noise]``, seed 003 s.3), applied without root.

=================  ==========================================================================
control            how
=================  ==========================================================================
``pin``            ``sched_setaffinity`` in the child, between fork and exec
``aslr = false``   ``personality(persona | ADDR_NO_RANDOMIZE)`` in the child, as ``setarch -R``
``ramdisk``        the run's working directory copied to a tmpfs (:mod:`regbench.run.ramdisk`)
``env_size``       the environment padded to a fixed size (:func:`pad_environment`)
``quiet_load``     a quiet-system gate before each run (:mod:`regbench.run.quiet`)
=================  ==========================================================================

:func:`check_noise` says, before anything is written, whether this machine can apply the
controls asked for; what the machine itself adds is :mod:`regbench.run.system_check`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..config import NoiseControl
from ..errors import ConfigError
from .ramdisk import find_tmpfs
from .system_check import read_system_file

#: The personality flag of ``setarch -R`` (linux/personality.h).
ADDR_NO_RANDOMIZE = 0x0040000
#: The variable :func:`pad_environment` adds.
PAD_VARIABLE = "REGBENCH_ENV_PAD"


def check_noise(noise: NoiseControl, *, mounts_text: str | None = None) -> dict:
    """Check that this machine can apply ``noise``; return facts to record with the campaign.

    Returns
    -------
    dict
        ``ramdisk_dir`` (the tmpfs runs are copied to) with ``ramdisk``, and ``system_aslr``
        (``/proc/sys/kernel/randomize_va_space``) with ``aslr = false``.

    Raises
    ------
    ConfigError
        A pinned CPU regbench may not use, no ``personality()`` for ``aslr = false``, or no tmpfs
        for ``ramdisk``: one line naming the setting.
    """
    facts: dict = {}
    if noise.pin is not None:
        if not hasattr(os, "sched_getaffinity"):
            raise ConfigError("[noise] `pin` (--pin): pinning to CPUs needs Linux (sched_setaffinity)")
        allowed = os.sched_getaffinity(0)
        missing = [c for c in noise.pin if c not in allowed]
        if missing:
            raise ConfigError(f"[noise] `pin` (--pin): CPU {missing[0]} is not available to regbench "
                              f"(it may use CPUs {format_cpu_list(allowed)})")
        _affinity_setter(noise.pin)
    if not noise.aslr:
        _aslr_disabler()
        value = read_system_file(Path("/"), "proc/sys/kernel/randomize_va_space")
        facts["system_aslr"] = value
    if noise.ramdisk:
        base = find_tmpfs(mounts_text=mounts_text)
        if base is None:
            raise ConfigError("[noise] `ramdisk` (--ramdisk): no tmpfs to run in: neither /dev/shm nor "
                              "$XDG_RUNTIME_DIR is a writable tmpfs mounted without noexec (see /proc/mounts)")
        facts["ramdisk_dir"] = str(base)
    return facts


def format_cpu_list(cpus: Iterable[int]) -> str:
    """``{0, 1, 2, 5}`` as ``"0-2,5"`` (taskset's notation)."""
    ranges: list[list[int]] = []
    for c in sorted(set(cpus)):
        if ranges and ranges[-1][1] == c - 1:
            ranges[-1][1] = c
        else:
            ranges.append([c, c])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


# ----------------------------------------------------------------- between fork and exec
def child_setup(noise: NoiseControl | None) -> Callable[[], None] | None:
    """A function to call in the benchmark process between fork and exec, or None.

    It pins the process (``pin``) and turns address-space randomization off (``aslr = false``,
    kept across exec as ``setarch -R`` does), calling only C functions resolved here, in the
    parent: code run between fork and exec must not take locks another thread may hold.  When
    a call fails in the child it writes one line on the run's stderr and exits with status 126
    (a ``failed`` run that says why).
    """
    if noise is None:
        return None
    steps = []
    if noise.pin is not None:
        steps.append(_affinity_setter(noise.pin))
    if not noise.aslr:
        steps.append(_aslr_disabler())
    if not steps:
        return None
    if len(steps) == 1:
        return steps[0]
    first, second = steps

    def both() -> None:
        first()
        second()

    return both


@functools.cache
def _libc():
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, ImportError):
        return None


@functools.cache
def _affinity_setter(cpus: tuple[int, ...]) -> Callable[[], None]:
    import ctypes

    libc = _libc()
    fn = getattr(libc, "sched_setaffinity", None) if libc is not None and sys.platform.startswith("linux") else None
    if fn is None:
        raise ConfigError("[noise] `pin` (--pin): pinning to CPUs needs Linux (sched_setaffinity)")
    word = 8 * ctypes.sizeof(ctypes.c_ulong)
    mask = (ctypes.c_ulong * max(1024 // word, max(cpus) // word + 1))()  # glibc's cpu_set_t is 1024 bits
    for c in cpus:
        mask[c // word] |= 1 << (c % word)
    size = ctypes.sizeof(mask)
    fn.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ulong)]
    fn.restype = ctypes.c_int
    message = f"[regbench] cannot pin the benchmark to CPUs {format_cpu_list(cpus)}\n".encode()

    def pin() -> None:
        if fn(0, size, mask) != 0:
            os.write(2, message)
            os._exit(126)

    return pin


@functools.cache
def _aslr_disabler() -> Callable[[], None]:
    import ctypes

    libc = _libc()
    fn = getattr(libc, "personality", None) if libc is not None and sys.platform.startswith("linux") else None
    if fn is None:
        raise ConfigError("[noise] `aslr` (--no-aslr): turning address-space randomization off needs "
                          "Linux (personality)")
    fn.argtypes = [ctypes.c_ulong]
    fn.restype = ctypes.c_int
    current = fn(0xFFFFFFFF)  # reads the persona without changing it
    if current == -1:
        raise ConfigError("[noise] `aslr` (--no-aslr): personality() failed here")
    wanted = (current & 0xFFFFFFFF) | ADDR_NO_RANDOMIZE  # keep the other persona bits
    message = b"[regbench] cannot turn address-space randomization off (personality)\n"

    def no_aslr() -> None:
        if fn(wanted) == -1:
            os.write(2, message)
            os._exit(126)

    return no_aslr


# ------------------------------------------------------------------------- environment
def environment_size(env: Mapping[str, str]) -> int:
    """Bytes of the environment block a process gets: ``KEY=VALUE\\0`` per variable."""
    return sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in env.items())


def pad_environment(env: Mapping[str, str], size: int) -> dict[str, str]:
    """``env`` with :data:`PAD_VARIABLE` set so that its :func:`environment_size` is ``size``.

    The environment sits at the top of the stack of a new process, so its size moves the stack
    and everything placed relative to it; a longer user name, path or version name then changes
    the memory layout, and with it the measured time (Mytkowicz et al., "Producing wrong data
    without doing anything obviously wrong", ASPLOS 2009; seed 003 s.3 and seed 001 s.3.1 on
    controlling the platform).  A fixed size removes that effect.

    Raises
    ------
    ConfigError
        The environment, with the pad variable's own ``REGBENCH_ENV_PAD=`` and terminating byte, is
        larger than ``size``.
    """
    out = {k: v for k, v in env.items() if k != PAD_VARIABLE}
    used = environment_size(out) + len(PAD_VARIABLE) + 2
    if used > size:
        raise ConfigError(f"[noise] `env_size` (--env-size) is {size} bytes, but the run's environment needs "
                          f"{used} (with {PAD_VARIABLE}): raise it, or run with a smaller environment")
    out[PAD_VARIABLE] = "x" * (size - used)
    return out
