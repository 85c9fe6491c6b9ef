"""``regbench clean``: what regbench leaves on disk that can go.

Three kinds of things, found by :func:`find_leftovers` and removed by :func:`remove_leftovers`:

- ``worktree``: git worktrees regbench made (under its worktree cache, ``worktrees/`` beside a
  SQLite store) that are still registered in the project's repository: the built commits kept
  for later campaigns (``kept/``, ``[project] build_cache``), and trees a campaign killed with
  ``kill -9`` left (a campaign removes its others when it ends).  They are removed with ``git worktree remove --force``, and
  ``git worktree prune`` forgets those whose folder is gone.
- ``cache``: the worktree cache folder itself and ``venvs/`` (the virtual environments of
  releases, ``regbench run --releases``), made again when needed.
- ``temp``: temporary folders of runs, probes and RAM-disk copies (``regbench-run-*``,
  ``regbench-probe-*``, ``regbench-ramdisk-*`` in the temporary folder and on the tmpfs)
  older than ``older_than`` seconds: those a killed run could not remove.  A younger one may
  belong to a run in flight and is kept, and so is one a live process holds the lock of
  (:mod:`.scratch`: a campaign's start removes the others by itself).

The store is never touched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import VersionError
from .scratch import in_use
from .versions import git, registered_worktrees, remove_worktrees

#: Prefixes of the temporary folders regbench makes (:mod:`.execute`, :mod:`.measures`, :mod:`.ramdisk`).
TEMP_PREFIXES = ("regbench-run-", "regbench-probe-", "regbench-ramdisk-")
#: Temporary folders younger than this (seconds) are kept by default: a run may be using them.
DEFAULT_OLDER_THAN = 24 * 3600.0
KINDS = ("worktree", "cache", "temp")


@dataclass(frozen=True)
class Leftover:
    """One thing :func:`remove_leftovers` removes: ``kind`` is one of :data:`KINDS`; ``size`` in
    bytes (None for a worktree whose folder is gone: only its registration is left)."""

    kind: str
    path: Path
    size: int | None


@dataclass(frozen=True)
class CleanResult:
    """What ``regbench clean`` found (and removed unless ``dry_run``); ``repo`` is None when
    the project is not a git repository (no worktree to look for)."""

    leftovers: tuple[Leftover, ...]
    dry_run: bool
    repo: Path | None

    @property
    def size(self) -> int:
        return sum(x.size or 0 for x in self.leftovers)


def find_leftovers(*, repo: Path | None, cache_dirs: Sequence[Path], temp_dirs: Iterable[Path] | None = None,
                   older_than: float = DEFAULT_OLDER_THAN, now: float | None = None) -> list[Leftover]:
    """What can go: regbench's worktrees registered in ``repo`` under one of ``cache_dirs``, the
    cache folders, and stale temporary folders in ``temp_dirs`` (default: the system's
    temporary folder and ``/dev/shm``).

    Raises
    ------
    ValueError
        ``older_than`` is negative or not a number.
    """
    if not isinstance(older_than, int | float) or not older_than >= 0:
        raise ValueError(f"`older_than` must be a number of seconds >= 0, got {older_than!r}")
    caches = [Path(c).resolve() for c in cache_dirs]
    out: list[Leftover] = []
    if repo is not None:
        for tree in registered_worktrees(repo):
            if any(tree.resolve().is_relative_to(c) for c in caches):
                out.append(Leftover("worktree", tree, _size(tree) if tree.exists() else None))
    for c in caches:
        if c.is_dir():
            out.append(Leftover("cache", c, _size(c)))
    now = time.time() if now is None else now
    folders = temp_dirs if temp_dirs is not None else _temp_dirs()
    for folder in dict.fromkeys(Path(f) for f in folders):
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            try:
                stale = (entry.name.startswith(TEMP_PREFIXES) and entry.is_dir() and not entry.is_symlink()
                         and entry.stat().st_uid == os.getuid() and now - entry.stat().st_mtime >= older_than
                         and not in_use(entry))  # a long run's folder, however old, is kept
            except OSError:
                continue
            if stale:
                out.append(Leftover("temp", entry, _size(entry)))
    return out


def remove_leftovers(leftovers: Sequence[Leftover], *, repo: Path | None) -> None:
    """Remove what :func:`find_leftovers` found: worktrees through git first (their registration
    goes too), then folders."""
    trees = [x.path for x in leftovers if x.kind == "worktree"]
    if repo is not None:
        remove_worktrees(repo, trees)
        try:
            git(repo, "worktree", "prune")
        except VersionError:
            pass
    for x in leftovers:
        if x.kind != "worktree" and x.path.exists():
            shutil.rmtree(x.path, ignore_errors=True)


def clean(*, repo: Path | None, cache_dirs: Sequence[Path], dry_run: bool = False,
          older_than: float = DEFAULT_OLDER_THAN, temp_dirs: Iterable[Path] | None = None) -> CleanResult:
    """Find regbench's leftovers and remove them (only list them with ``dry_run``)."""
    if repo is not None:
        try:
            git(repo, "rev-parse", "--git-dir")
        except VersionError:
            repo = None  # not a git repository: no worktrees
    found = find_leftovers(repo=repo, cache_dirs=cache_dirs, temp_dirs=temp_dirs, older_than=older_than)
    if not dry_run:
        remove_leftovers(found, repo=repo)
    return CleanResult(tuple(found), dry_run, repo)


def _temp_dirs() -> list[Path]:
    return [Path(tempfile.gettempdir()), Path("/dev/shm")]


def _size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total
