"""What on this machine adds noise to benchmark results, and what regbench does about it.

Seed 003 (003_17e43d4a143bef6e.txt) s.3 measured the noise sources of Mozilla's Talos machines
(CPU frequency scaling, address-space randomization, other processes, ...) and seed 001
(001_0c28a3a14a5fab8a.txt) s.3.1 lists the platform settings a benchmark must control.  Each
check here reads the kernel's own files (``/sys``, ``/proc``) and says ``ok``, ``warn`` (with what
to change) or ``unknown`` (with why it could not tell: no such file here, a virtual machine, no
permission), never a guess.  Reading only: nothing is changed, and no root is needed.

``root`` lets the checks read another file tree laid out like ``/`` (tests use one).

The second half applies the opt-in controls of ``[noise]`` (:class:`regbench.config.NoiseControl`)
to the benchmark process only, again without root:

=================  ==========================================================================
control            how
=================  ==========================================================================
``pin``            ``sched_setaffinity`` in the child, between fork and exec
``aslr = false``   ``personality(persona | ADDR_NO_RANDOMIZE)`` in the child, as ``setarch -R``
``ramdisk``        the run's working directory copied to a tmpfs (:func:`ramdisk_copy`)
``env_size``       the environment padded to a fixed size (:func:`pad_environment`)
``quiet_load``     a quiet-system gate before each run (:class:`QuietGate`)
=================  ==========================================================================
"""

from __future__ import annotations

import collections
import functools
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from ..config import NoiseControl
from ..errors import ConfigError

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


def _read(root: Path, rel: str) -> str | None:
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
    no_turbo = _read(root, "sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        ok = no_turbo == "1"
        return Finding("turbo boost", "ok" if ok else "warn", "off" if ok else "on",
                       "" if ok else "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo")
    boost = _read(root, "sys/devices/system/cpu/cpufreq/boost")
    if boost is not None:
        ok = boost == "0"
        return Finding("turbo boost", "ok" if ok else "warn", "off" if ok else "on",
                       "" if ok else "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost")
    return Finding("turbo boost", "unknown", "no intel_pstate/no_turbo or cpufreq/boost in /sys",
                   "the boost setting is not exposed here")


def check_smt(root: Path) -> Finding:
    control = _read(root, "sys/devices/system/cpu/smt/control")
    if control is None:
        return Finding("simultaneous multithreading", "unknown", "no smt/control in /sys", "")
    if control in ("off", "forceoff", "notsupported", "notimplemented"):
        return Finding("simultaneous multithreading", "ok", control)
    return Finding("simultaneous multithreading", "warn", control,
                   "sibling threads share a core: echo off | sudo tee /sys/devices/system/cpu/smt/control, "
                   "or pin benchmarks to one thread per core")


def check_aslr(root: Path) -> Finding:
    value = _read(root, "proc/sys/kernel/randomize_va_space")
    if value is None:
        return Finding("address-space randomization", "unknown", "no /proc/sys/kernel/randomize_va_space", "")
    ok = value == "0"
    return Finding("address-space randomization", "ok" if ok else "warn", {"0": "off", "1": "partial", "2": "full"}
                   .get(value, value),
                   "" if ok else "layout changes from run to run add between-run variance (seed 003 s.3): run "
                                 "benchmarks under `setarch -R`, or sudo sysctl kernel.randomize_va_space=0")


def check_load(root: Path, *, cores: int | None = None) -> Finding:
    text = _read(root, "proc/loadavg")
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
    text = _read(root, "proc/meminfo")
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
    text = _read(root, "sys/devices/system/cpu/isolated")
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
        if _read(root, str(s.relative_to(root) / "type")) == "Battery":
            status = _read(root, str(s.relative_to(root) / "status")) or "unknown"
            if status.lower() == "discharging":
                return Finding("power source", "warn", f"battery ({status})",
                               "on battery the CPU may be throttled: plug the machine in")
    return Finding("power source", "ok", "mains")


def check_virtualization(root: Path) -> Finding:
    cpuinfo = _read(root, "proc/cpuinfo") or ""
    hypervisor = any(line.startswith("flags") and " hypervisor" in line for line in cpuinfo.splitlines())
    container = (root / ".dockerenv").exists() or "docker" in (_read(root, "proc/1/cgroup") or "")
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


# =========================================================================== noise control
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
        value = _read(Path("/"), "proc/sys/kernel/randomize_va_space")
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


# ----------------------------------------------------------------------------- ramdisk
def _unescape_mount(field: str) -> str:
    # /proc/mounts writes space, tab, newline and backslash as octal escapes.
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def mount_table(text: str | None = None) -> list[tuple[str, str, frozenset[str]]]:
    """``(mount point, file system type, options)`` of every line of ``/proc/mounts``."""
    if text is None:
        try:
            text = Path("/proc/mounts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.append((_unescape_mount(parts[1]), parts[2], frozenset(parts[3].split(","))))
    return out


def filesystem_of(path: str | os.PathLike, *, mounts_text: str | None = None
                  ) -> tuple[str, str, frozenset[str]] | None:
    """The mount holding ``path`` (the longest mount point above it; the last such mount wins)."""
    p = os.path.realpath(path)
    best = None
    for point, fstype, opts in mount_table(mounts_text):
        inside = p == point or p.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fstype, opts)
    return best


def on_tmpfs(path: str | os.PathLike, *, mounts_text: str | None = None) -> bool:
    fs = filesystem_of(path, mounts_text=mounts_text)
    return fs is not None and fs[1] == "tmpfs"


def find_tmpfs(candidates: Iterable[str | None] | None = None, *, mounts_text: str | None = None) -> Path | None:
    """The first of ``/dev/shm`` and ``$XDG_RUNTIME_DIR`` that is a writable tmpfs mounted
    without ``noexec`` (benchmarks may run programs from their copy), or None."""
    if candidates is None:
        candidates = ("/dev/shm", os.environ.get("XDG_RUNTIME_DIR"))
    for c in candidates:
        if not c or not os.path.isdir(c) or not os.access(c, os.W_OK | os.X_OK):
            continue
        fs = filesystem_of(c, mounts_text=mounts_text)
        if fs is not None and fs[1] == "tmpfs" and "noexec" not in fs[2]:
            return Path(c)
    return None


#: Top-level entries of a version's tree never copied to the ramdisk: git's data, and regbench's
#: own store and worktrees (``.regbench/`` of a working tree holds every benchmarked commit).
RAMDISK_SKIP = frozenset({".git", ".regbench"})


def ramdisk_copy(tree: Path, dirs: Iterable[str], *, base: Path) -> Path:
    """Copy ``tree / d`` for each ``d`` in ``dirs`` into a fresh directory under ``base``.

    Returns the copy's root, laid out like ``tree``: ``root / d`` is the copy of ``tree / d``.
    Folders that do not exist are not copied (the run then fails to start, as it would in the
    tree); a folder inside another one of ``dirs`` is copied once.  Symbolic links are copied as
    links; :data:`RAMDISK_SKIP` at the top of the tree is left out.  Remove the copy with
    :func:`remove_tree`.

    Raises
    ------
    ConfigError
        The copy would not fit in ``base``, or a file cannot be copied.
    """
    tree = Path(tree)
    wanted = sorted({os.path.normpath(d) for d in dirs}, key=lambda d: (d.count(os.sep), d))
    outer: list[str] = []
    for d in wanted:
        if not any(o == "." or d == o or d.startswith(o + os.sep) for o in outer):
            outer.append(d)
    sources = [(d, tree / d) for d in outer if (tree / d).is_dir()]

    def ignore(folder: str, names: list[str]) -> set[str]:
        return set(names) & RAMDISK_SKIP if Path(folder) == tree else set()

    need = sum(_bytes(src, tree) for _, src in sources)
    free = shutil.disk_usage(base).free
    if need > 0.9 * free:
        raise ConfigError(f"[noise] `ramdisk`: {tree} needs {need / 2**20:.0f} MiB, but only "
                          f"{free / 2**20:.0f} MiB are free on the tmpfs {base}")
    root = Path(tempfile.mkdtemp(prefix="regbench-ramdisk-", dir=base))
    try:
        for d, src in sources:
            shutil.copytree(src, root / d, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    except (OSError, shutil.Error) as exc:
        remove_tree(root)
        detail = exc.args[0][0][2] if isinstance(exc, shutil.Error) and exc.args and exc.args[0] else exc
        raise ConfigError(f"[noise] `ramdisk`: cannot copy {tree} to {base}: {detail}") from exc
    except BaseException:
        remove_tree(root)
        raise
    return root


def _bytes(folder: Path, tree: Path) -> int:
    total = 0
    for here, dirs, files in os.walk(folder):
        if Path(here) == tree:
            dirs[:] = [d for d in dirs if d not in RAMDISK_SKIP]
        for f in files:
            try:
                total += os.lstat(os.path.join(here, f)).st_size
            except OSError:
                pass
    return total


def remove_tree(path: Path) -> None:
    """Remove ``path`` whatever a benchmark left in it (read-only folders included)."""

    def retry(func, name, _exc) -> None:
        try:
            os.chmod(os.path.dirname(name), 0o700)
            func(name)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


# -------------------------------------------------------------------------- quiet gate
class OwnLoad:
    """regbench's own share of the 1-minute load average, estimated from its recent processes.

    The kernel's load average is an exponentially weighted average (time constant 60 s) of the
    number of runnable tasks, so a campaign of CPU-bound runs holds it near one by itself: a
    gate on the raw load average would wait for regbench's own runs to fade.  Each process
    regbench ran is counted as ``cpu time / wall time`` runnable tasks (1 for a single-threaded
    busy loop, about 0 for one that sleeps) over its lifetime, weighted as the kernel weights
    the past.  It is an estimate: a process that waits on a disk (state D) counts in the load
    average but not here.
    """

    TAU = 60.0

    def __init__(self, maxlen: int = 4096):
        self._runs: collections.deque = collections.deque(maxlen=maxlen)

    def add(self, start: float, end: float, cpu: float | None) -> None:
        """A process that ran from ``start`` to ``end`` (``time.monotonic``) using ``cpu`` s."""
        if cpu is None or end <= start:
            return
        self._runs.append((start, end, cpu / (end - start)))

    def estimate(self, now: float) -> float:
        """The estimated runnable tasks regbench's processes still add to the load average."""
        while self._runs and now - self._runs[0][1] > 10 * self.TAU:
            self._runs.popleft()
        return sum(tasks * (math.exp(-max(now - end, 0.0) / self.TAU) - math.exp(-max(now - start, 0.0) / self.TAU))
                   for start, end, tasks in list(self._runs))  # a snapshot: other threads may add


#: regbench's own processes (:func:`regbench.run.execute.run_process` records each one).
OWN_LOAD = OwnLoad()


@dataclass(frozen=True)
class Quietness:
    """How busy the machine is: ``busy`` share of the CPUs (0 to 1, over a short interval; of
    the pinned CPUs when pinned) and ``load``, the 1-minute load average per CPU with
    regbench's own processes left out (:class:`OwnLoad`)."""

    busy: float
    load: float

    def describe(self) -> str:
        return f"{self.busy:.0%} of the CPUs busy, load {self.load:.2f} per CPU"


@dataclass(frozen=True)
class GateResult:
    """What the quiet-system gate saw before one run.

    Attributes
    ----------
    passed : bool
        Whether the machine was quiet when the run started.
    waited : float
        Seconds from the first check to the start of the run (at least the one measurement).
    checks : int
        Measurements taken.
    last : Quietness
        The last measurement.
    limit : float
    mode : str
        ``"wait"`` or ``"warn"``.
    """

    passed: bool
    waited: float
    checks: int
    last: Quietness
    limit: float
    mode: str

    @property
    def note(self) -> str | None:
        """The ``[regbench]`` note for the run's stderr tail; None when it was quiet at once."""
        if self.passed and self.checks == 1:
            return None
        what = f"{self.last.describe()}; limit {self.limit:g}"
        if self.passed:
            return f"quiet gate: waited {self.waited:.1f} s for a quiet machine ({what})"
        if self.mode == "warn":
            return f"quiet gate: the machine was not quiet ({what}); ran anyway (quiet = \"warn\")"
        return f"quiet gate: the machine was not quiet after waiting {self.waited:.1f} s ({what}); ran anyway"


def _read_proc_stat() -> str:
    return Path("/proc/stat").read_text(encoding="ascii", errors="replace")


def cpu_ticks(text: str, cpus: Iterable[int] | None = None) -> tuple[int, int]:
    """``(busy, total)`` clock ticks from ``/proc/stat``: of the ``cpu`` line, or summed over the
    ``cpuN`` lines of ``cpus``.  Idle and I/O wait are not busy; steal (a hypervisor running
    another guest) is."""
    wanted = None if cpus is None else {f"cpu{c}" for c in cpus}
    busy = total = 0
    for line in text.splitlines():
        parts = line.split()
        if not parts or not parts[0].startswith("cpu"):
            continue
        if (wanted is None and parts[0] != "cpu") or (wanted is not None and parts[0] not in wanted):
            continue
        ticks = [int(x) for x in parts[1:9]]  # user nice system idle iowait irq softirq steal (guest is in user)
        ticks += [0] * (8 - len(ticks))
        total += sum(ticks)
        busy += sum(ticks) - ticks[3] - ticks[4]
    return busy, total


class QuietGate:
    """Wait, before a run, until the machine is quiet (seed 003 s.3: other processes are a
    source of noise; seed 001 s.3.1).

    Quiet means both the busy share of the CPUs over ``interval`` seconds (two ``/proc/stat``
    snapshots; of the pinned CPUs when ``cpus`` is given) and the 1-minute load average per CPU,
    less regbench's own processes (:class:`OwnLoad`), are at most ``limit``.  With
    ``mode="wait"`` it measures every ``poll`` seconds until quiet or ``wait`` seconds are over;
    with ``mode="warn"`` it measures once.  The run goes ahead either way: the result says what
    was seen, and a note in the run's stderr tail keeps it.

    ``clock``, ``sleep``, ``read_stat``, ``read_load`` and ``own_load`` are injectable for tests.
    """

    def __init__(self, limit: float, *, wait: float = 60.0, mode: str = "wait",
                 cpus: Iterable[int] | None = None, interval: float = 0.2, poll: float = 1.0,
                 clock: Callable[[], float] | None = None, sleep: Callable[[float], None] | None = None,
                 read_stat: Callable[[], str] | None = None, read_load: Callable[[], tuple] | None = None,
                 own_load: OwnLoad | None = None, ncpu: int | None = None):
        if mode not in ("wait", "warn"):
            raise ValueError(f"`mode` must be 'wait' or 'warn', got {mode!r}")
        self.limit, self.wait, self.mode = float(limit), float(wait), mode
        self.cpus = tuple(cpus) if cpus is not None else None
        self.interval, self.poll = interval, poll
        self.clock = clock or time.monotonic
        self.sleep = sleep or time.sleep
        self.read_stat = read_stat or _read_proc_stat
        self.read_load = read_load or os.getloadavg
        self.own_load = own_load if own_load is not None else OWN_LOAD
        self.ncpu = ncpu or os.cpu_count() or 1

    @classmethod
    def from_noise(cls, noise: NoiseControl, **kw) -> QuietGate:
        return cls(noise.quiet_load, wait=noise.quiet_wait, mode=noise.quiet, cpus=noise.pin, **kw)

    def measure(self) -> Quietness:
        b0, t0 = cpu_ticks(self.read_stat(), self.cpus)
        self.sleep(self.interval)
        b1, t1 = cpu_ticks(self.read_stat(), self.cpus)
        busy = (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0
        load = max(0.0, self.read_load()[0] - self.own_load.estimate(self.clock())) / self.ncpu
        return Quietness(busy=min(max(busy, 0.0), 1.0), load=load)

    def check(self) -> GateResult:
        """Measure (and wait) until quiet, out of time, or once for ``mode="warn"``."""
        start = self.clock()
        checks = 0
        while True:
            q = self.measure()
            checks += 1
            quiet = q.busy <= self.limit and q.load <= self.limit
            waited = self.clock() - start
            left = self.wait - waited - self.interval  # the next measurement takes `interval` too
            if quiet or self.mode == "warn" or left < 0:
                return GateResult(quiet, waited, checks, q, self.limit, self.mode)
            self.sleep(min(self.poll, left))
