"""RAM-disk copies of version trees (``[noise] ramdisk``, seed 003 s.3.2).

A benchmark that reads or writes files is timed against the disk's cache and its I/O
scheduler; run from a tmpfs, those are gone.  A campaign copies each version's tree (what its
benchmarks need of it) once, before the first run (:func:`ramdisk_trees`); a single run outside
a campaign gets its own copy (:func:`run_tree`).  Only a tmpfs mounted without ``noexec`` will
do: benchmarks may run programs from their copy.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ..config import BenchmarkSpec, NoiseControl
from ..errors import ConfigError

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

    top = os.path.abspath(path)

    def retry(func, name, exc) -> None:
        # A folder the benchmark made read-only is made writable again, but only inside ``path``:
        # never ``path``'s own parent (/dev/shm, the temporary folder), whose mode is not ours to
        # change, and not for a file that is already gone.
        error = exc[1] if isinstance(exc, tuple) else exc
        parent = os.path.dirname(os.path.abspath(name))
        if isinstance(error, FileNotFoundError) or not (parent == top or parent.startswith(top + os.sep)):
            return
        try:
            os.chmod(parent, 0o700)
            func(name)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


@contextlib.contextmanager
def run_tree(tree: Path, spec: BenchmarkSpec, noise: NoiseControl) -> Iterator[Path]:
    """The tree the run uses: ``tree``, or with ``ramdisk`` a fresh copy of what the run needs on
    a tmpfs (unless it is on one already), removed afterwards."""
    if not noise.ramdisk or on_tmpfs(tree / spec.cwd):
        yield tree
        return
    base = find_tmpfs()
    if base is None:
        raise ConfigError("[noise] `ramdisk` (--ramdisk): no tmpfs to run in (neither /dev/shm nor "
                          "$XDG_RUNTIME_DIR is a writable tmpfs mounted without noexec)")
    copy = ramdisk_copy(tree, [ramdisk_dir(spec)], base=base)
    try:
        yield copy
    finally:
        remove_tree(copy)


def ramdisk_dir(spec: BenchmarkSpec) -> str:
    """What of a version's tree a ramdisk run needs: its ``cwd``, or the whole tree for a Python
    benchmark (the worker imports the benchmark from the tree)."""
    return "." if spec.kind == "python" else spec.cwd


def ramdisk_trees(trees: Mapping[str, Path], specs: Sequence[BenchmarkSpec], base: Path,
                  cleanup: contextlib.ExitStack) -> dict[str, Path]:
    """Each distinct version tree (by name) copied once to the tmpfs ``base``, with what the
    benchmarks need of it; the copies are removed when ``cleanup`` closes."""
    dirs = sorted({ramdisk_dir(s) for s in specs})
    copies: dict[Path, Path] = {}
    out = {}
    for name, tree in trees.items():
        key = Path(os.path.realpath(tree))
        if key not in copies:
            copies[key] = ramdisk_copy(key, dirs, base=base)
            cleanup.callback(remove_tree, copies[key])
        out[name] = copies[key]
    return out
