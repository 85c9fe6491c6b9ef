"""Versions from git: resolve revisions in history order, check them out, build them.

Each commit gets its own ``git worktree`` (detached) under a cache folder for the length of one
campaign or session (:class:`Worktrees`), so the user's working tree is never touched; once it
ends, only the trees built with success stay registered in the user's repository, kept (up to
``[project] build_cache`` of them) for the next campaign of the same commit.  A commit is built
there once per build command: the result is recorded in the store (``build`` table) keyed by a
short hash of the build argv, so an ``ok`` build is not run again and a failed one is not retried
unless asked.  A commit
that fails to build is a recorded result, not an error: its runs are skipped and the campaign goes
on (DESIGN.md "Principles").

Without ``--versions`` the working tree is benchmarked in place (:func:`working_tree_version`);
what regbench's build writes there does not make it dirty (:class:`BuildOutputs`).

Version order comes from history (DESIGN.md "Data"): a range is listed oldest first in
topological order (``git rev-list --reverse --topo-order``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import VersionError
from ..locks import locked_folder
from ..model import VersionAlias, VersionInfo
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
    #: The tags and local branches pointing at it (names people use: ``v10.5.0``, ``main``).
    aliases: tuple[VersionAlias, ...] = ()

    def version_info(self) -> dict:
        """What git says of the commit: the keyword arguments of :class:`~regbench.model.VersionInfo`."""
        return {"commit": self.sha, "timestamp": self.timestamp, "timestamp_text": self.timestamp_text}

    def version(self) -> VersionInfo:
        """The commit as the store's version record (named by its short hash)."""
        return VersionInfo(self.short, **self.version_info())


@dataclass(frozen=True)
class WorkingTree:
    """The working tree as a version: ``name`` is ``<short HEAD>``, ``<short HEAD>-dirty-<digest>``
    or ``worktree`` (not a git repository); ``head`` is None outside git."""

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
            # Uncommitted state is newer than its HEAD: it sorts after it.  Written as git writes
            # a commit's date (``+00:00``, as the other versions' timestamps are shown).
            now = datetime.now(UTC).replace(microsecond=0)
            return {"commit": self.head.sha if self.head else None, "timestamp": now.replace(tzinfo=None),
                    "timestamp_text": now.isoformat()}
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


def with_generations(repo: Path, store: Store, infos: Sequence[VersionInfo]) -> list[VersionInfo]:
    """What :meth:`Store.ensure_versions` should record for ``infos`` so that history order
    holds where committer dates tie.

    Commits written in one second share their timestamp (a rebase, ``git am`` of a series, a
    hosting service's "rebase and merge"), and the store orders ties by first appearance: a tip
    benchmarked before its ancestors (CI on the tip, then a bisection or a back-fill) would come
    first.  Each commit among ``infos`` whose timestamp another version shares (one of ``infos``
    or a stored one) gets its generation (``git rev-list --count``: an ancestor always reaches
    fewer commits), and the stored versions of those timestamps that have none yet are added
    with theirs (the store fills a missing generation, never changes one).  Nothing is asked of
    git when no timestamp ties, so a long history costs nothing; a commit this repository does
    not have keeps None.
    """
    stored = store.versions()
    seen: dict[datetime, set[str]] = {}
    for v in (*stored, *infos):
        if v.timestamp is not None:
            seen.setdefault(v.timestamp, set()).add(v.name)
    tied = {when for when, names in seen.items() if len(names) > 1}
    if not tied:
        return list(infos)
    counts: dict[str, int | None] = {}

    def generation(v: VersionInfo) -> int | None:
        if v.commit is None:
            return None
        if v.commit not in counts:
            try:
                counts[v.commit] = int(git(repo, "rev-list", "--count", v.commit).strip())
            except (VersionError, ValueError):
                counts[v.commit] = None
        return counts[v.commit]

    def needs(v: VersionInfo) -> bool:
        return v.generation is None and v.timestamp in tied

    out = [replace(v, generation=generation(v)) if needs(v) else v for v in infos]
    given = {v.name for v in infos}
    for v in stored:
        if v.name not in given and needs(v) and (g := generation(v)) is not None:
            out.append(replace(v, generation=g))
    return out


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
        raise VersionError(f"{repo}: unknown revision {rev!r}{remote_hint(repo, rev)}") from None


def remote_hint(repo: Path, rev: str) -> str:
    """What to say of an unknown ``rev`` whose branch name only a remote has (a CI checkout of
    one commit has ``origin/main`` and no local ``main``): the names to give instead, or ``""``."""
    name = re.match(r"[^~^:@]*", rev)
    branch = name.group(0) if name else ""
    if not branch or "/" in branch and branch.split("/", 1)[0] in _remotes(repo):
        return ""
    try:
        found = git(repo, "for-each-ref", "--format=%(refname:short)", f"refs/remotes/*/{branch}").split()
    except VersionError:
        return ""
    if not found:
        return ""
    instead = ", ".join(f"{r}{rev[len(branch):]}" for r in found)
    return (f": there is no local branch {branch!r}, only the remote-tracking "
            f"branch{'es' if len(found) > 1 else ''} {', '.join(found)}: name {instead}, or make the local "
            f"branch (git branch {branch} {found[0]}; a CI checkout often has none)")


def _remotes(repo: Path) -> set[str]:
    try:
        return set(git(repo, "remote").split())
    except VersionError:
        return set()


def _root_parent(repo: Path, start: str) -> bool:
    """Whether ``start`` is ``A^`` (``A^1``, ``A~``, ``A~1``) of a root commit ``A``.

    The documented way to include ``A`` in a range, ``A^..B``, names the parent of ``A``, which
    the first commit of a repository does not have; the range then means every commit up to
    ``B``.  Any other spelling (or an ``A`` that has a parent) is left to git.
    """
    for suffix in ("^1", "~1", "^", "~"):
        if start.endswith(suffix) and len(start) > len(suffix):
            base = start[: -len(suffix)]
            break
    else:
        return False
    try:
        _verify(repo, start)
        return False  # it has a parent: an ordinary range
    except VersionError:
        pass
    sha = _verify(repo, base)  # an unknown A is still an unknown revision
    parents = git(repo, "rev-list", "--parents", "-n", "1", sha).split()
    return len(parents) == 1


def resolve_revisions(repo: Path, spec: str) -> list[Commit]:
    """The commits named by ``spec``, oldest first.

    Parameters
    ----------
    repo : Path
        A git repository (or a folder inside one).
    spec : str
        ``A..B`` (commits reachable from B and not from A, oldest first in topological order,
        as ``git rev-list --reverse --topo-order A..B``; ``A..`` means ``A..HEAD``; ``A^..B`` with
        ``A`` the repository's first commit means every commit up to B), a single
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
        end_sha = _verify(repo, end or "HEAD")
        start_sha: str | None = None
        root = _root_parent(repo, start)
        if root:  # ``A^..B`` with A a root commit: everything up to B, A included
            out = git(repo, "rev-list", "--reverse", "--topo-order", end_sha)
        else:
            start_sha = _verify(repo, start or "HEAD")
            out = git(repo, "rev-list", "--reverse", "--topo-order", end_sha, f"^{start_sha}")
        shas = out.split()
        if not shas and start_sha == end_sha:
            raise VersionError(f"{spec!r}: both ends are the same commit ({end_sha[:10]}): no commits in this range")
        if not shas:
            raise VersionError(f"{spec!r}: no commits in this range (is it reversed?)")
        return _describe(repo, shas)
    return _describe(repo, [_verify(repo, spec)])


def _describe(repo: Path, shas: Sequence[str]) -> list[Commit]:
    refs = _refs(repo)
    commits: list[Commit] = []
    for k in range(0, len(shas), 500):  # stay well under argv length limits
        out = git(repo, "log", "--no-walk=unsorted", f"--abbrev={ABBREV}", f"--format={_FIELDS}",
                  *shas[k:k + 500], "--")
        for line in out.splitlines():
            if line:
                sha, short, ct, iso, subject = line.split("\x1f", 4)
                stamp = datetime.fromtimestamp(int(ct), UTC).replace(tzinfo=None)
                commits.append(Commit(sha, short, stamp, iso, subject, tuple(refs.get(sha, ()))))
    return commits


def _refs(repo: Path) -> dict[str, list[VersionAlias]]:
    """The tags and local branches of ``repo`` by the commit they point at (annotated tags peeled)."""
    out = git(repo, "for-each-ref", "--format=%(objectname)%09%(*objectname)%09%(refname)", "refs/tags", "refs/heads")
    refs: dict[str, list[VersionAlias]] = {}
    for line in out.splitlines():
        obj, peeled, ref = line.split("\t", 2)
        if ref.startswith("refs/tags/"):
            alias = VersionAlias(ref[len("refs/tags/"):], "tag")
        else:
            alias = VersionAlias(ref[len("refs/heads/"):], "branch")
        if len(alias.name) <= 200:
            refs.setdefault(peeled or obj, []).append(alias)
    return refs


def revision_resolver(repo: Path | None, *, remember: bool = True):
    """A :data:`regbench.store.db.RevisionResolver` over ``repo``: ``rev`` -> its full commit sha,
    or None (not a revision there, or ``repo`` is not a git repository).  Answers are remembered,
    unless ``remember`` is false: a server's resolver, asked while branches move (``main``,
    ``HEAD~1`` name another commit after a fetch), which then keeps nothing (every name a
    request brings would stay for as long as the server runs)."""

    def ask(rev: str) -> str | None:
        if repo is None or not rev or rev.startswith("-"):
            return None
        try:
            return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip() or None
        except VersionError:
            return None

    if not remember:
        return ask
    memo: dict[str, str | None] = {}

    def resolve(rev: str) -> str | None:
        if rev not in memo:
            memo[rev] = ask(rev)
        return memo[rev]

    return resolve


#: Where the main branch is looked for when neither the command line nor regbench.toml names it,
#: after ``origin/HEAD``'s target: the local branches first, then the remote's (a CI checkout of
#: a pull request often has only ``origin/main``).
MAIN_BRANCH_CANDIDATES = ("main", "master", "origin/main", "origin/master")


def main_branch(repo: Path, configured: str | None = None) -> str:
    """The branch pull requests merge into: ``configured`` when given, else the branch
    ``origin/HEAD`` points at, else the first of :data:`MAIN_BRANCH_CANDIDATES` that exists.

    Raises
    ------
    VersionError
        ``configured`` is not a revision of ``repo``, or none of the fallbacks exists.
    """
    if configured is not None:
        _verify(repo, configured)
        return configured
    try:
        target = git(repo, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD").strip()
    except VersionError:
        target = ""
    for name in ([target] if target else []) + list(MAIN_BRANCH_CANDIDATES):
        if revision_resolver(repo)(name) is not None:
            return name
    raise VersionError(f"{repo}: no main branch found (neither origin/HEAD nor "
                       f"{', '.join(MAIN_BRANCH_CANDIDATES)}); name it with --base-branch or "
                       "[project] branch in regbench.toml")


def merge_base(repo: Path, branch: str, head: str) -> str:
    """The full sha of the best common ancestor of ``branch`` and ``head`` (``git merge-base``):
    the commit a pull request from ``head`` into ``branch`` started from.

    Raises
    ------
    VersionError
        Either is not a revision of ``repo``, or they have no common ancestor.
    """
    a, b = _verify(repo, branch), _verify(repo, head)
    try:
        return git(repo, "merge-base", a, b).strip()
    except VersionError:  # exit status 1 and no output: unrelated histories
        raise VersionError(f"{repo}: {branch} and {head} have no common ancestor "
                           "(is the history shallow? check out with fetch-depth 0)") from None


def first_parent_line(repo: Path, rev: str = "HEAD") -> list[str]:
    """The full shas of ``rev``'s first-parent history, oldest first: the line a branch's
    history is read along (commits merged in from side branches are not on it).

    Raises
    ------
    VersionError
        ``repo`` is not a git repository or ``rev`` is unknown.
    """
    sha = _verify(repo, rev)
    return git(repo, "rev-list", "--first-parent", "--reverse", sha).split()


def _pathspecs(top: Path, ignore: Iterable[Path]) -> list[str]:
    """The pathspecs of the whole tree at ``top`` but the folders ``ignore`` inside it."""
    pathspecs = [":/"]
    for p in ignore:
        p = Path(p).resolve()
        if p.is_relative_to(top) and p != top:
            pathspecs.append(f":(top,exclude){p.relative_to(top).as_posix()}")
    return pathspecs


def working_tree_version(path: Path, *, ignore: Iterable[Path] = ()) -> WorkingTree:
    """The working tree at ``path`` as a version.

    Its name is ``git rev-parse --short HEAD`` (:data:`ABBREV` characters at least), with
    ``-dirty-<digest>`` appended when ``git status --porcelain`` lists anything outside ``ignore``
    (regbench's own store and worktree cache must not make a tree dirty) that is not an output of
    regbench's build of the tree in place (:class:`BuildOutputs`), or ``worktree`` when ``path``
    is not in a git repository (or has no commit yet).
    """
    path = Path(path).resolve()
    try:
        top = _toplevel(path)
        sha = git(path, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    except VersionError:
        return WorkingTree("worktree", path, None, True)
    head = _describe(path, [sha])[0]
    pathspecs = _pathspecs(top, ignore)
    if not git(path, "status", "--porcelain", "--", *pathspecs).strip():
        return WorkingTree(head.short, path, head, False)
    changes = _tree_changes(top, pathspecs)
    outputs = BuildOutputs.read(top)
    built = [p for p, blob in changes.tracked.items() if outputs.made(p, blob)]
    untracked = {p: b for p, b in changes.untracked.items() if p not in outputs.untracked}
    if built or len(untracked) < len(changes.untracked):
        if not untracked and len(built) == len(changes.tracked):
            return WorkingTree(head.short, path, head, False)  # nothing but what the build wrote
        pathspecs += [f":(top,exclude,literal){p}" for p in built]
    return WorkingTree(f"{head.short}-dirty-{_changes_digest(top, pathspecs, untracked)}", path, head, True)


def _changes_digest(top: Path, pathspecs: list[str], untracked: Mapping[str, str]) -> str:
    """A short hash of the uncommitted changes (tracked diff and untracked files' contents, by
    their blobs).

    Two different edits of the same commit are two versions: without it, re-running after an
    edit would skip every run as "already stored" under one ``-dirty`` name.
    """
    h = hashlib.sha256(git(top, "diff", "HEAD", "--binary", "--", *pathspecs).encode())
    if untracked:
        names = sorted(untracked)
        h.update("\n".join(names).encode())
        h.update("".join(untracked[n] + "\n" for n in names).encode())
    return h.hexdigest()[:8]


@dataclass(frozen=True)
class TreeChanges:
    """What differs from HEAD in a working tree, by path from its top: each tracked file changed,
    with the blob of its content (None: deleted; ``""``: a folder, a submodule, whose content is
    not read), and each untracked file that git does not ignore, with its blob (``""`` for a
    folder git lists whole, a repository inside)."""

    tracked: Mapping[str, str | None]
    untracked: Mapping[str, str]


def _tree_changes(top: Path, pathspecs: Sequence[str]) -> TreeChanges:
    tracked = git(top, "diff", "HEAD", "--name-only", "--no-renames", "-z", "--", *pathspecs).split("\0")
    untracked = git(top, "ls-files", "--others", "--exclude-standard", "-z", "--", *pathspecs).split("\0")
    blobs = _blobs(top, [p for p in (*tracked, *untracked) if p and (top / p).is_file()])
    return TreeChanges({p: blobs.get(p, "" if (top / p).is_dir() else None) for p in tracked if p},
                       {p: blobs.get(p, "") for p in untracked if p})


def _blobs(top: Path, files: Sequence[str]) -> dict[str, str]:
    """The git blob of each file's content (``git hash-object``)."""
    if not files:
        return {}
    out = subprocess.run(["git", "-C", str(top), "hash-object", "--stdin-paths"], input="\n".join(files),
                         capture_output=True, text=True, check=True).stdout.split()
    return dict(zip(files, out, strict=True))


def working_tree_changes(path: Path, *, ignore: Iterable[Path] = ()) -> TreeChanges | None:
    """What differs from HEAD in the working tree at ``path`` (outside ``ignore``); None outside
    git or without a commit: what :func:`note_build_outputs` compares after a build."""
    try:
        top = _toplevel(Path(path).resolve())
        git(top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except VersionError:
        return None
    return _tree_changes(top, _pathspecs(top, ignore))


#: The file, in the repository's git folder (``git rev-parse --git-path``, a linked worktree's
#: own), where :class:`BuildOutputs` are kept.
BUILD_OUTPUTS = "regbench-build-outputs.json"
#: The version of its format (DESIGN.md: every persisted format is versioned).
BUILD_OUTPUTS_FORMAT = 1


@dataclass(frozen=True)
class BuildOutputs:
    """What regbench's builds of a working tree in place wrote where git sees it, so that it does
    not make the tree dirty (:func:`working_tree_version`): a build that leaves an untracked
    binary would otherwise make the next campaign of the same commit a new version (a probe).

    ``untracked`` are the untracked files (not ignored) a build created or changed: whatever
    their content now, since every build of another edit writes them anew.  ``tracked`` are the
    tracked files a build changed where they were as committed, each with the blob the build
    left (None: deleted): one that differs from it is an edit.  A file the user had changed
    before the build stays the user's.  ``built`` is the version and build key (:func:`build_key`)
    of the last build that succeeded there: the only build a recorded result can stand for (a
    tree built for an edit since reverted holds that edit's outputs).
    """

    untracked: frozenset[str] = frozenset()
    tracked: Mapping[str, str | None] = field(default_factory=dict)
    built: tuple[str, str] | None = None

    def made(self, path: str, blob: str | None) -> bool:
        """Whether the tracked file ``path``, whose content is ``blob``, is as a build left it."""
        return path in self.tracked and self.tracked[path] == blob

    @staticmethod
    def location(top: Path) -> Path:
        return Path(top, git(top, "rev-parse", "--git-path", BUILD_OUTPUTS).strip())

    @classmethod
    def read(cls, top: Path) -> BuildOutputs:
        """Those of the repository at ``top`` (none when the file is missing or unreadable)."""
        try:
            doc = json.loads(cls.location(top).read_text(encoding="utf-8"))
            if doc.get("format_version") != BUILD_OUTPUTS_FORMAT:
                return cls()
            built = doc.get("built")
            return cls(frozenset(doc["untracked"]), dict(doc["tracked"]),
                       (str(built[0]), str(built[1])) if built else None)
        except (OSError, VersionError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            return cls()

    def write(self, top: Path) -> None:
        """Replace the file at once; a repository regbench cannot write keeps the old one."""
        doc = {"format_version": BUILD_OUTPUTS_FORMAT, "untracked": sorted(self.untracked),
               "tracked": dict(sorted(self.tracked.items())), "built": list(self.built) if self.built else None}
        with contextlib.suppress(OSError, VersionError):
            target = self.location(top)
            temp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            temp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
            os.replace(temp, target)


def note_build_outputs(path: Path, before: TreeChanges, *, built: tuple[str, str] | None,
                       ignore: Iterable[Path] = ()) -> None:
    """After a build of the working tree at ``path`` in place: remember what it wrote where git
    sees it (:class:`BuildOutputs`), ``before`` being what differed from HEAD before it
    (:func:`working_tree_changes`), and ``built`` the version and build key it succeeded for
    (None: it failed).  What no longer differs from HEAD is forgotten."""
    try:
        top = _toplevel(Path(path).resolve())
    except VersionError:
        return
    after = _tree_changes(top, _pathspecs(top, ignore))
    old = BuildOutputs.read(top)
    untracked = frozenset(p for p, blob in after.untracked.items()
                          if p in old.untracked or before.untracked.get(p) != blob)
    tracked = {p: blob for p, blob in after.tracked.items()
               if blob != "" and (p not in before.tracked or old.made(p, before.tracked[p]))}
    BuildOutputs(untracked, tracked, built).write(top)


def working_tree_built(path: Path) -> tuple[str, str] | None:
    """The version and build key of the last build regbench made with success in the working tree
    at ``path`` (:attr:`BuildOutputs.built`); None when there is none or outside git."""
    try:
        return BuildOutputs.read(_toplevel(Path(path).resolve())).built
    except VersionError:
        return None


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


class Worktrees:
    """The git worktrees of one campaign or session, removed from the user's repository when it
    ends (normally, on an error or on Ctrl-C: use it as a context manager), except the built ones
    it is told to keep.

    Each checkout goes to a folder of its own under ``cache_dir`` (``<cache_dir>/<pid>-<random>/
    <sha>``), so that campaigns running at the same time never remove each other's trees.
    Opening it runs ``git worktree prune`` (forgets worktrees whose folders are gone, left by a
    killed campaign); closing it runs ``git worktree remove --force`` on each of its trees, then
    removes its folder.

    **Kept builds** (``keep`` > 0, ``[project] build_cache``): a tree whose build succeeded
    (:meth:`mark_built`) is moved, when the campaign ends, to ``<cache_dir>/kept/<sha>`` with the
    build command's key beside it, and the next campaign that checks that commit out for the same
    build command takes the tree (moves it into its own folder) with its build, so an unchanged
    commit is not built again campaign after campaign (asv keeps its builds the same way, a fixed
    number of them).  A tree kept for another build command, or asked for with ``rebuild``, is
    left where it is and the commit checked out afresh.  Before a tree is kept it is put back as
    its build left it (:meth:`_restore`): what the runs added is removed and the tracked files
    they changed are restored, so a benchmark that writes into its working folder does not find
    an earlier campaign's files.  A kept tree belongs to one campaign at a time: one taken is no
    longer under ``kept/``, and a second campaign wanting the same commit meanwhile checks it out
    afresh.  Only the ``keep`` trees used last are kept; the others are removed, and so are all of
    them with ``keep`` 0.  Moving in and out, and pruning, hold the lock of ``kept/``.  A
    recorded failure is kept whatever the tree (:func:`build_version`).
    """

    def __init__(self, repo: Path, cache_dir: Path, *, keep: int = 0):
        self.repo = Path(repo)
        self.cache_dir = Path(cache_dir).resolve()
        self.keep = max(0, int(keep))
        self.folder: Path | None = None
        self.trees: dict[str, Path] = {}
        #: sha -> the key (:func:`build_key`) of the build command that succeeded in its tree.
        self.built: dict[str, str] = {}
        #: sha -> what ``git status`` listed in its tree once built (:meth:`_status`).
        self.snapshots: dict[str, frozenset[str]] = {}

    @property
    def kept_dir(self) -> Path:
        return self.cache_dir / "kept"

    def __enter__(self) -> Worktrees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def checkout(self, commit: Commit, *, key: str | None = None, rebuild: bool = False) -> Path:
        """A detached worktree of ``commit``, made once per campaign: a kept one built with the
        build command of key ``key`` is taken if there is one (never with ``rebuild``)."""
        if commit.sha in self.trees:
            return self.trees[commit.sha]
        if self.folder is None:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(VersionError, OSError), self._kept_lock():
                git(self.repo, "worktree", "prune")  # dead entries of campaigns killed earlier
            self.folder = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=self.cache_dir))
        if self.keep and key is not None and not rebuild and self._take_kept(commit.sha, key):
            return self.trees[commit.sha]
        self.trees[commit.sha] = prepare_tree(self.repo, commit, self.folder)
        return self.trees[commit.sha]

    def building(self, sha: str) -> None:
        """A build is about to run in ``sha``'s tree: whatever was built there is not known to be
        good until :meth:`mark_built` says so (a failed build leaves the tree unkept)."""
        self.built.pop(sha, None)
        self.snapshots.pop(sha, None)

    def mark_built(self, sha: str, key: str) -> None:
        """The build command of key ``key`` succeeded in ``sha``'s tree: it may be kept, put back
        as it is now."""
        self.built[sha] = key
        if self.keep and sha in self.trees:
            self.snapshots[sha] = self._status(self.trees[sha])

    def built_with(self, sha: str) -> str | None:
        """The key of the build that succeeded in ``sha``'s tree (this campaign's or a kept one's)."""
        return self.built.get(sha)

    def _kept_lock(self):
        return locked_folder(self.kept_dir)

    @staticmethod
    def _status(tree: Path) -> frozenset[str]:
        """``git status`` of a tree, untracked and ignored entries included (folders collapsed)."""
        out = git(tree, "status", "--porcelain=v1", "-z", "--ignored=matching", "--untracked-files=normal")
        return frozenset(e for e in out.split("\0") if e)

    def _restore(self, sha: str, tree: Path) -> bool:
        """Put ``tree`` back as its build left it: entries the runs added (untracked or ignored
        files and folders not there after the build) are removed, tracked files they changed are
        checked out again.  A file the runs changed inside a folder that the build made is not
        seen (the folder is one entry).  False when git could not say."""
        before = self.snapshots.get(sha)
        try:
            now = self._status(tree)
        except VersionError:
            return False
        if before is None:
            return False  # its state once built is not known: not kept
        changed = []
        for entry in now - before:
            code, path = entry[:2], entry[3:]
            target = tree / path
            if code in ("??", "!!"):
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        target.unlink()
            else:
                changed.append(path)
        if changed:
            try:
                git(tree, "checkout", "--", *changed)
            except VersionError:
                return False
        return True

    def _take_kept(self, sha: str, key: str) -> bool:
        assert self.folder is not None
        try:
            with self._kept_lock():
                source, marker = self.kept_dir / sha, self.kept_dir / f"{sha}.key"
                if not (source.is_dir() and marker.is_file()) or marker.read_text().strip() != key:
                    return False  # none, or built with another command: left kept for it
                target = self.folder / sha
                try:
                    git(self.repo, "worktree", "move", str(source), str(target))
                    ok = git(target, "rev-parse", "HEAD").strip() == sha
                except VersionError:
                    ok = False
                marker.unlink(missing_ok=True)
                if not ok:  # not a usable tree any more: check out afresh
                    remove_worktrees(self.repo, [p for p in (source, target) if p.exists()])
                    return False
        except OSError:
            return False
        self.trees[sha] = target
        self.built[sha] = key
        with contextlib.suppress(VersionError):  # as it was kept: what this campaign adds is undone
            self.snapshots[sha] = self._status(target)
        return True

    def _keep_built(self) -> None:
        """Move the trees built with success to ``kept/`` (put back as built), then remove all but
        the ``keep`` used last, anything there without its key (a move that was interrupted) and
        keys without their tree."""
        with self._kept_lock():
            for sha, key in list(self.built.items()) if self.keep else []:
                tree = self.trees.get(sha)
                dest, marker = self.kept_dir / sha, self.kept_dir / f"{sha}.key"
                if tree is None or dest.exists() or not self._restore(sha, tree):
                    continue  # another campaign kept this commit meanwhile, or not restorable
                try:
                    git(self.repo, "worktree", "move", str(tree), str(dest))
                except VersionError:
                    continue  # git cannot move it (a tree with submodules): removed below
                marker.write_text(key + "\n")  # its time is the tree's last use
                del self.trees[sha]
            markers = [m for m in self.kept_dir.glob("*.key") if (self.kept_dir / m.name[:-len(".key")]).is_dir()]
            for m in set(self.kept_dir.glob("*.key")) - set(markers):
                m.unlink(missing_ok=True)
            markers.sort(key=lambda m: m.stat().st_mtime_ns, reverse=True)
            keep = {m.name[:-len(".key")] for m in markers[:self.keep]}
            for m in markers[self.keep:]:
                m.unlink(missing_ok=True)
            stale = [p for p in self.kept_dir.iterdir() if p.is_dir() and p.name not in keep]
            remove_worktrees(self.repo, stale)

    def close(self) -> None:
        """Keep the trees built with success (``keep`` > 0; with ``keep`` 0, remove any kept
        before), remove every other worktree made (and its registration in the repository)."""
        try:
            if (self.keep and self.built) or self.kept_dir.is_dir():  # a smaller cache shrinks now
                with contextlib.suppress(OSError, VersionError):
                    self._keep_built()
        finally:
            remove_worktrees(self.repo, list(self.trees.values()))
            self.trees.clear()
            self.built.clear()
            self.snapshots.clear()
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
                self.folder = None


def remove_worktrees(repo: Path, trees: Sequence[Path]) -> None:
    """``git worktree remove --force`` each tree (its folder is deleted if git could not), then
    ``git worktree prune``; never raises for a tree already gone."""
    for tree in trees:
        with contextlib.suppress(VersionError):
            git(repo, "worktree", "remove", "--force", "--force", str(tree))
        if Path(tree).exists():
            shutil.rmtree(tree, ignore_errors=True)
    if trees:
        with contextlib.suppress(VersionError):
            git(repo, "worktree", "prune")


def registered_worktrees(repo: Path) -> list[Path]:
    """The linked worktrees registered in ``repo`` (``git worktree list``), the main one left out."""
    out = git(repo, "worktree", "list", "--porcelain")
    paths = [Path(line[len("worktree "):]) for line in out.splitlines() if line.startswith("worktree ")]
    return paths[1:]


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
        False when a recorded ``ok`` build cannot describe ``tree`` (a fresh checkout has none
        of its output): build anyway.  A recorded failure is kept all the same (the same
        sources fail again) unless ``rebuild``.

    Returns
    -------
    BuildResult
    """
    key = build_key(argv)
    if not rebuild:
        previous = store.get_build(version, key)
        if previous is not None and (use_cache or previous.status != "ok"):
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
