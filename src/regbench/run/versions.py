"""Versions from git: resolve revisions in history order, check them out, build them.

Each commit gets its own ``git worktree`` (detached) under a cache folder, reused by later
campaigns, so the user's working tree is never touched.  A commit is built there once per build
command: the result is recorded in the store (``build`` table) keyed by a short hash of the build
argv, so an ``ok`` build is not run again and a failed one is not retried unless asked.  A commit
that fails to build is a recorded result, not an error: its runs are skipped and the campaign goes
on (DESIGN.md "Principles").

Without ``--versions`` the working tree is benchmarked in place (:func:`working_tree_version`).

Version order comes from history (DESIGN.md "Data"): a range is listed oldest first in
topological order (``git rev-list --reverse --topo-order``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import VersionError
from ..model import VersionInfo
from .process import STDERR_TAIL, read_tail, run_process, with_note

if TYPE_CHECKING:
    from ..store import Store

#: Abbreviated commit names have a fixed minimum length so that a version keeps its name while
#: the repository grows (git's automatic length grows with the number of objects).
ABBREV = 10
BUILD_STATUSES = ("ok", "failed", "timeout")
_FIELDS = "%H%x1f%h%x1f%ct%x1f%cI%x1f%s"


@dataclass(frozen=True)
class Commit:
    """A commit to benchmark.

    ``timestamp`` is the committer date in UTC (naive), used to order versions in the store;
    ``timestamp_text`` is the same date as git prints it (ISO 8601 with its offset).
    """

    sha: str
    short: str
    timestamp: datetime
    timestamp_text: str
    subject: str

    def version_info(self) -> dict:
        """What git says of the commit: the keyword arguments of :class:`~regbench.model.VersionInfo`."""
        return {"commit": self.sha, "timestamp": self.timestamp, "timestamp_text": self.timestamp_text}

    def version(self) -> VersionInfo:
        """The commit as the store's version record (named by its short hash)."""
        return VersionInfo(self.short, **self.version_info())


@dataclass(frozen=True)
class WorkingTree:
    """The working tree as a version: ``name`` is ``<short HEAD>``, ``<short HEAD>-dirty`` or
    ``worktree`` (not a git repository); ``head`` is None outside git."""

    name: str
    path: Path
    head: Commit | None
    dirty: bool

    def version(self) -> VersionInfo:
        """The working tree as the store's version record."""
        return VersionInfo(self.name, **self.version_info())

    def version_info(self) -> dict:
        """The keyword arguments of :class:`~regbench.model.VersionInfo` (see :meth:`Commit.version_info`)."""
        if self.head is None or self.dirty:
            # Uncommitted state is newer than its HEAD: it sorts after it.
            now = datetime.now(UTC).replace(tzinfo=None, microsecond=0)
            return {"commit": self.head.sha if self.head else None, "timestamp": now,
                    "timestamp_text": now.isoformat() + "Z"}
        return self.head.version_info()


@dataclass(frozen=True)
class BuildResult:
    """The build of one version: ``status`` in :data:`BUILD_STATUSES`; ``cached`` when an earlier
    result was reused instead of building."""

    version: str
    status: str
    cached: bool
    exit_code: int | None = None
    log_tail: str | None = None
    duration: float | None = None


# ------------------------------------------------------------------------------ git
def git(repo: Path, *args: str) -> str:
    """Run ``git -C repo ARGS`` and return stdout; a failure is a one-line :class:`VersionError`."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    try:
        res = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                             env=env, stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError as exc:
        raise VersionError("git is not installed (needed to benchmark versions)") from exc
    if res.returncode != 0:
        lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
        msg = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), lines[0] if lines else "")
        raise VersionError(f"git {args[0]} in {repo}: {msg or f'exit status {res.returncode}'}")
    return res.stdout


def _toplevel(repo: Path) -> Path:
    try:
        return Path(git(repo, "rev-parse", "--show-toplevel").strip())
    except VersionError as exc:
        raise VersionError(f"{repo}: not a git repository") from exc


def _verify(repo: Path, rev: str) -> str:
    if rev.startswith("-"):  # would be read as an option
        raise VersionError(f"{repo}: unknown revision {rev!r}")
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
    except VersionError:
        raise VersionError(f"{repo}: unknown revision {rev!r}") from None


def resolve_revisions(repo: Path, spec: str) -> list[Commit]:
    """The commits named by ``spec``, oldest first.

    Parameters
    ----------
    repo : Path
        A git repository (or a folder inside one).
    spec : str
        ``A..B`` (commits reachable from B and not from A, oldest first in topological order,
        as ``git rev-list --reverse --topo-order A..B``; ``A..`` means ``A..HEAD``), a single
        revision (``HEAD``, a tag, a sha), or a comma-separated list of revisions (put in
        committer-date order, duplicates removed).

    Raises
    ------
    VersionError
        ``repo`` is not a git repository, a revision is unknown, or a range is empty.
    """
    repo = Path(repo)
    spec = spec.strip()
    if not spec:
        raise VersionError("empty revision list")
    _toplevel(repo)
    if "..." in spec:
        raise VersionError(f"{spec!r}: symmetric ranges A...B are not supported; use A..B")
    if "," in spec:
        revs = [r.strip() for r in spec.split(",")]
        if not all(revs):
            raise VersionError(f"{spec!r}: empty revision in the comma-separated list")
        shas = list(dict.fromkeys(_verify(repo, r) for r in revs))
        commits = _describe(repo, shas)
        # Stable sort: committer-date ties keep the order they were given in.
        return sorted(commits, key=lambda c: c.timestamp)
    if ".." in spec:
        start, _, end = spec.partition("..")
        start_sha = _verify(repo, start or "HEAD")
        end_sha = _verify(repo, end or "HEAD")
        out = git(repo, "rev-list", "--reverse", "--topo-order", end_sha, f"^{start_sha}")
        shas = out.split()
        if not shas:
            raise VersionError(f"{spec!r}: no commits in this range (is it reversed?)")
        return _describe(repo, shas)
    return _describe(repo, [_verify(repo, spec)])


def _describe(repo: Path, shas: Sequence[str]) -> list[Commit]:
    commits: list[Commit] = []
    for k in range(0, len(shas), 500):  # stay well under argv length limits
        out = git(repo, "log", "--no-walk=unsorted", f"--abbrev={ABBREV}", f"--format={_FIELDS}",
                  *shas[k:k + 500], "--")
        for line in out.splitlines():
            if line:
                sha, short, ct, iso, subject = line.split("\x1f", 4)
                stamp = datetime.fromtimestamp(int(ct), UTC).replace(tzinfo=None)
                commits.append(Commit(sha, short, stamp, iso, subject))
    return commits


def working_tree_version(path: Path, *, ignore: Iterable[Path] = ()) -> WorkingTree:
    """The working tree at ``path`` as a version.

    Its name is ``git rev-parse --short HEAD`` (:data:`ABBREV` characters at least), with
    ``-dirty`` appended when ``git status --porcelain`` lists anything outside ``ignore``
    (regbench's own store and worktree cache must not make a tree dirty), or ``worktree`` when
    ``path`` is not in a git repository (or has no commit yet).
    """
    path = Path(path).resolve()
    try:
        top = _toplevel(path)
        sha = git(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except VersionError:
        return WorkingTree("worktree", path, None, True)
    head = _describe(path, [sha])[0]
    pathspecs = [":/"]
    for p in ignore:
        p = Path(p).resolve()
        if p.is_relative_to(top) and p != top:
            pathspecs.append(f":(top,exclude){p.relative_to(top).as_posix()}")
    dirty = bool(git(path, "status", "--porcelain", "--", *pathspecs).strip())
    if not dirty:
        return WorkingTree(head.short, path, head, False)
    return WorkingTree(f"{head.short}-dirty-{_changes_digest(top, pathspecs)}", path, head, True)


def _changes_digest(top: Path, pathspecs: list[str]) -> str:
    """A short hash of the uncommitted changes (tracked diff and untracked files' contents).

    Two different edits of the same commit are two versions: without it, re-running after an
    edit would skip every run as "already stored" under one ``-dirty`` name.
    """
    h = hashlib.sha256(git(top, "diff", "HEAD", "--binary", "--", *pathspecs).encode())
    untracked = git(top, "ls-files", "--others", "--exclude-standard", "-z", "--", *pathspecs).split("\0")
    untracked = sorted(u for u in untracked if u)
    if untracked:
        blobs = subprocess.run(["git", "-C", str(top), "hash-object", "--stdin-paths"],
                               input="\n".join(untracked), capture_output=True, text=True, check=True).stdout
        h.update("\n".join(untracked).encode())
        h.update(blobs.encode())
    return h.hexdigest()[:8]


# -------------------------------------------------------------------------- worktrees
def prepare_tree(repo: Path, commit: Commit, cache_dir: Path) -> Path:
    """A detached ``git worktree`` of ``commit`` at ``cache_dir / commit.sha``, reused if present.

    A folder left behind in a broken state (interrupted checkout, deleted ``.git`` file) is
    removed and checked out again.
    """
    cache_dir = Path(cache_dir).resolve()
    target = cache_dir / commit.sha
    if target.is_dir():
        try:
            if git(target, "rev-parse", "HEAD").strip() == commit.sha and \
                    Path(git(target, "rev-parse", "--show-toplevel").strip()).resolve() == target:
                return target
        except VersionError:
            pass
        shutil.rmtree(target)
    cache_dir.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "prune")  # forget worktrees whose folders were deleted
    git(repo, "worktree", "add", "--detach", "--force", str(target), commit.sha)
    return target


def build_key(argv: Sequence[str]) -> str:
    """A short, stable hash of a build command: builds are cached per (version, key)."""
    return hashlib.sha256(json.dumps(list(argv)).encode()).hexdigest()[:16]


def build_version(store: Store, *, version: str, tree: Path, argv: Sequence[str], timeout: float,
                  version_info: VersionInfo | None = None, rebuild: bool = False,
                  use_cache: bool = True) -> BuildResult:
    """Build ``version`` in ``tree`` with ``argv`` (no shell) unless a recorded result applies.

    Parameters
    ----------
    store : regbench.store.Store
        Where the build result is recorded (``record_build``) and looked up (``get_build``).
    version : str
        The version's name in the store.
    tree : Path
        Its source tree; the build runs there, in its own process group, killed on timeout.
    argv : sequence of str
        The build command, never modified.
    timeout : float
        Seconds before the build's process group is killed; the build is then ``timeout``.
    version_info : VersionInfo, optional
        The version row to create with the record if it is not stored yet (named ``version``).
    rebuild : bool
        Build even if a result is recorded (failures are otherwise not retried).
    use_cache : bool
        False when the recorded result cannot describe ``tree`` (a fresh checkout, an
        uncommitted working tree): build anyway.

    Returns
    -------
    BuildResult
    """
    key = build_key(argv)
    if use_cache and not rebuild:
        previous = store.get_build(version, key)
        if previous is not None:
            return BuildResult(version, previous.status, True, previous.exit_code,
                               previous.log_tail, previous.duration)
    with tempfile.TemporaryFile() as log:
        proc = run_process(argv, cwd=Path(tree), env=os.environ, timeout=timeout, stdout=log,
                           stderr=subprocess.STDOUT)
        tail = read_tail(log, STDERR_TAIL)
    if proc.start_error is not None:
        status, note = "failed", proc.start_error
    elif proc.timed_out:
        status, note = "timeout", f"build killed after {timeout:g} s (timeout)"
    elif proc.returncode != 0:
        status, note = "failed", f"build exit status {proc.returncode}"
    else:
        status, note = "ok", None
    tail = with_note(tail, note)
    store.record_build(version_info or VersionInfo(version), key, status=status, exit_code=proc.returncode,
                       log_tail=tail, duration=proc.duration)
    return BuildResult(version, status, False, proc.returncode, tail, proc.duration)
