"""A throw-away git repository with a known performance history, for the demo and the tests.

:func:`create_demo_repo` writes, under a folder ``ROOT``::

    ROOT/
      regbench.toml      the demo's configuration (outside the repository: it names this
                         machine's interpreter, which does not belong in history)
      repo/              a git repository of a small stdlib-only program, ``pageviews.py``
      .regbench/         where `regbench run` keeps results and worktrees (created by it)

``pageviews.py`` reports how often each page of a site was viewed, in order of first view, over
a generated log of 80 000 views.  It prints one timing per iteration (``time.perf_counter``
seconds, ``REGBENCH_ITERATIONS`` iterations, default 20), each some milliseconds long.  Its eight
commits, with known truth for change detection (ruptures-style synthetic data, STYLE.md):

== =========================================================================== ===============
 #  change                                                                      performance
== =========================================================================== ===============
 1  the program: a set for pages seen, a dict of counts                         baseline
 2  README                                                                      same
 3  a unit test                                                                 same
 4  "simpler": first views found by ``page not in order`` (a list scan)         slower (+40..100%)
 5  README: usage                                                               same
 6  a renamed variable                                                          same
 7  ``collections.Counter``: one pass in C, insertion order = first views       faster (-50..75%)
 8  a comment and a changelog                                                   same
== =========================================================================== ===============

Commits get fixed author, committer and increasing dates, so no git identity is needed and the
history (hence version order) is the same everywhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

BENCHMARK = "page-views"
PROGRAM = "pageviews.py"
START = datetime(2024, 3, 4, 9, 30, tzinfo=UTC)


@dataclass(frozen=True)
class DemoRepo:
    """What :func:`create_demo_repo` made.

    Attributes
    ----------
    root : Path
        The folder holding ``regbench.toml`` and ``repo/``.
    path : Path
        The git repository.
    config_path : Path
        ``root / "regbench.toml"``.
    commits : tuple of str
        The full shas of the eight commits, oldest first.
    slower_index, faster_index : int
        Indices into ``commits`` of the commit that makes the program slower (3) and of the one
        that makes it faster than ever before (6).
    """

    root: Path
    path: Path
    config_path: Path
    commits: tuple[str, ...]
    slower_index: int = 3
    faster_index: int = 6
    benchmark: str = BENCHMARK


def create_demo_repo(path: Path) -> DemoRepo:
    """Create the demo repository and its ``regbench.toml`` under ``path`` (new or empty)."""
    root = Path(path).resolve()
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root}: not empty")
    repo = root / "repo"
    git_init(repo)
    shas = []
    for k, (message, files) in enumerate(_HISTORY):
        shas.append(git_commit(repo, files, message, when=START + timedelta(days=k, minutes=7 * k)))
    config_path = root / "regbench.toml"
    config_path.write_text(demo_config(sys.executable), encoding="utf-8")
    return DemoRepo(root=root, path=repo, config_path=config_path, commits=tuple(shas))


def demo_config(python: str) -> str:
    """The demo's ``regbench.toml`` text, with ``python`` (absolute path) running the program."""
    q = json.dumps  # a JSON string is a valid TOML basic string
    return f"""\
# The regbench demo: {PROGRAM} over eight commits (see regbench.demo_project).
[project]
name = "pageviews-demo"
repo = "repo"
build = [{q(python)}, "-m", "compileall", "-q", "."]
build_timeout = 120
store = ".regbench/results.db"

[defaults]
runs = 10
iterations = 20
warmup = 3
timeout = 60

[[benchmark]]
name = "{BENCHMARK}"
command = [{q(python)}, "{PROGRAM}"]
output = "lines"
unit = "s"
direction = "lower"
"""


# ------------------------------------------------------------------------------- git
def _git_env(when: datetime | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # Neither the user's identity nor their configuration (signing, hooks, templates) applies.
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               GIT_AUTHOR_NAME="Regbench Demo", GIT_AUTHOR_EMAIL="demo@regbench.invalid",
               GIT_COMMITTER_NAME="Regbench Demo", GIT_COMMITTER_EMAIL="demo@regbench.invalid")
    if when is not None:
        stamp = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    return env


def git_init(path: Path) -> None:
    """``git init`` a new repository at ``path`` (branch ``main``)."""
    Path(path).mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", str(path)],
                   check=True, capture_output=True, env=_git_env())


def git_commit(repo: Path, files: Mapping[str, str | None], message: str, *, when: datetime) -> str:
    """Write ``files`` (path -> text; None deletes) in ``repo``, commit them at ``when``, return the sha."""
    repo = Path(repo)
    for name, text in files.items():
        target = repo / name
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    env = _git_env(when)

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], check=True, capture_output=True, text=True, env=env, cwd=repo)

    git("add", "-A", "--", *files)
    git("-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return git("rev-parse", "HEAD").stdout.strip()


# ------------------------------------------------------------------ step repositories
#: A benchmark whose level is read from its tree (``level.txt``) and printed, not timed: each
#: process draws its own run effect (3%) and per-iteration noise (5%), as a real benchmark's
#: fresh processes do (seed 000 s.2), seeded by the version and the run index, so the numbers
#: are the same on every machine and every time.
PRINTED_PROGRAM = ("import os, random\n"
                   "level = float(open('level.txt').read())\n"
                   "r = random.Random(os.environ['REGBENCH_VERSION'] + '/' + os.environ['REGBENCH_RUN_INDEX'])\n"
                   "run = r.lognormvariate(0, 0.03)\n"
                   "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
                   "    print(level * run * r.lognormvariate(0, 0.05))\n")
#: A benchmark that is really timed: each iteration sums the squares of ``level * 200000``
#: integers and prints its ``time.perf_counter`` seconds; its noise is the machine's.
TIMED_PROGRAM = ("import os, time\n"
                 "n = int(float(open('level.txt').read()) * 200000)\n"
                 "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
                 "    t = time.perf_counter(); sum(i * i for i in range(n)); print(time.perf_counter() - t)\n")
STEP_START = datetime(2024, 1, 1, 8, 0, tzinfo=UTC)


@dataclass(frozen=True)
class StepRepo:
    """What :func:`create_step_repo` made.

    Attributes
    ----------
    path : Path
        The repository, with its ``regbench.toml`` (benchmark ``b``).
    commits : tuple of str
        Full shas, oldest first.
    levels : tuple of float
        The benchmark's level (its work, relative to the first commit) at each commit.
    """

    path: Path
    commits: tuple[str, ...]
    levels: tuple[float, ...]

    @property
    def config_path(self) -> Path:
        return self.path / "regbench.toml"

    @property
    def changed(self) -> tuple[int, ...]:
        """Indices into ``commits`` of the commits that change the level (the truth)."""
        return tuple(k for k in range(1, len(self.levels)) if self.levels[k] != self.levels[k - 1])


def create_step_repo(path: Path, *, commits: int = 30, steps: Mapping[int, float], program: str = PRINTED_PROGRAM,
                     runs: int = 3, iterations: int = 5, extra: str = "") -> StepRepo:
    """A repository of ``commits`` commits whose benchmark's level changes at known commits.

    Parameters
    ----------
    path : Path
        Where to create it (a new or empty folder).
    commits : int
        How many commits (each adds a note; the first adds the benchmark).
    steps : mapping of int to float
        Commit number (1-based) -> factor multiplying the level from that commit on.
    program : str
        The benchmark's program, ``bench.py``; it reads its level from ``level.txt``
        (:data:`PRINTED_PROGRAM`, :data:`TIMED_PROGRAM`).
    runs, iterations : int
        ``[defaults]`` of the generated ``regbench.toml`` (no warm-up).
    extra : str
        More TOML appended to the configuration.

    Returns
    -------
    StepRepo
    """
    path = Path(path)
    bad = [k for k in steps if not 1 < k <= commits]
    if bad:
        raise ValueError(f"`steps`: commit {bad[0]} is not in 2..{commits}")
    git_init(path)
    toml = ('[project]\nname = "p"\n[defaults]\n'
            f'runs = {runs}\niterations = {iterations}\nwarmup = 0\n'
            f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([sys.executable, "bench.py"])}\n{extra}')
    (path / "regbench.toml").write_text(toml, encoding="utf-8")
    shas, levels, level = [], [], 1.0
    for k in range(1, commits + 1):
        files = {f"notes/{k}.txt": f"commit {k}\n"}
        if k == 1:
            files |= {"bench.py": program, "level.txt": "1.0", "regbench.toml": toml}
        if k in steps:
            level *= steps[k]
            files["level.txt"] = repr(level)
        levels.append(level)
        shas.append(git_commit(path, files, f"commit {k}", when=STEP_START + timedelta(hours=k)))
    return StepRepo(path, tuple(shas), tuple(levels))


# --------------------------------------------------------------------------- history
_HEAD = '''\
"""Page-view report: how often each page was viewed, in order of first view.

Run it as `python pageviews.py`: it prints one timing per iteration, in seconds.
"""

import os
import random
import time

PAGES = 14
VIEWS = 80_000


def make_views(n=VIEWS, pages=PAGES, seed=42):
    """A reproducible log of page views: one page number per view."""
    rng = random.Random(seed)
    return [rng.randrange(pages) for _ in range(n)]

'''

_FIRST_SET = '''
def first_views(views):
    """Pages in the order they were first viewed."""
    seen = set()
    order = []
    for page in views:
        if page not in seen:
            seen.add(page)
            order.append(page)
    return order
'''

_FIRST_LIST = '''
def first_views(views):
    """Pages in the order they were first viewed."""
    order = []
    for page in views:
        if page not in order:  # one list is simpler than a list and a set
            order.append(page)
    return order
'''

_COUNTS = '''

def view_counts(views):
    """Number of views of each page."""
    {c} = {{}}
    for page in views:
        {c}[page] = {c}.get(page, 0) + 1
    return {c}


def report(views):
    """(page, views) pairs in order of first view."""
    {c} = view_counts(views)
    return [(page, {c}[page]) for page in first_views(views)]
'''

_COUNTER_REPORT = '''

def view_counts(views):
    """Number of views of each page."""
    return Counter(views)


def report(views):
    """(page, views) pairs in order of first view."""
    # One counting pass in C; a Counter keeps keys in insertion order, which is the order of
    # first view, so no second pass is needed.
    return list(Counter(views).items())
'''

_MAIN = '''

def main():
    iterations = int(os.environ.get("REGBENCH_ITERATIONS", "20"))
    views = make_views()
    for _ in range(iterations):
        start = time.perf_counter()
        report(views)
        print(time.perf_counter() - start, flush=True)


if __name__ == "__main__":
    main()
'''

_TEST = '''\
import unittest

from pageviews import make_views, report


class ReportTest(unittest.TestCase):
    def test_counts_every_view_in_first_view_order(self):
        views = make_views(1000, 7, seed=1)
        got = report(views)
        self.assertEqual(sum(n for _, n in got), 1000)
        self.assertEqual([p for p, _ in got], sorted(set(views), key=views.index))


if __name__ == "__main__":
    unittest.main()
'''

_README = "# pageviews\n\nHow often each page of a site was viewed, in order of first view.\n"
_USAGE = _README + "\n## Usage\n\n    python pageviews.py     # prints one timing per iteration\n\n" \
    "Set `REGBENCH_ITERATIONS` to change the number of iterations (default 20).\n"


def _program(first: str, counts: str, name: str = "counts", comment: str = "") -> str:
    head = _HEAD if "Counter" not in counts else _HEAD.replace("import time\n", "import time\nfrom collections import Counter\n")
    return head + comment + first + counts.format(c=name) + _MAIN


_HISTORY: list[tuple[str, dict[str, str | None]]] = [
    ("Add the page-view report", {PROGRAM: _program(_FIRST_SET, _COUNTS), ".gitignore": "__pycache__/\n"}),
    ("Add a README", {"README.md": _README}),
    ("Test the report", {"test_pageviews.py": _TEST}),
    ("Simplify first_views: one list instead of a list and a set", {PROGRAM: _program(_FIRST_LIST, _COUNTS)}),
    ("Document usage", {"README.md": _USAGE}),
    ("Rename counts to totals", {PROGRAM: _program(_FIRST_LIST, _COUNTS, "totals")}),
    ("Count with collections.Counter in one pass", {PROGRAM: _program(_FIRST_LIST, _COUNTER_REPORT)}),
    ("Add a changelog and a comment", {
        PROGRAM: _program(_FIRST_LIST, _COUNTER_REPORT, comment="\n# first_views is kept for callers that only need the order.\n"),
        "CHANGELOG.md": "# Changes\n\n- Counting uses collections.Counter (several times faster).\n",
    }),
]
