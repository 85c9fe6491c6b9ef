"""``regbench demo``: the generated project before its campaign, and afterwards the campaign, the
changes found, which commit introduced each, and where to look next
(:func:`regbench.pipeline.run_demo`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .campaign import campaign_summary
from .changes import change_table
from .console import console

if TYPE_CHECKING:
    from ..demo_project import DemoRepo
    from ..pipeline import DemoOutcome


def regbench_command(argv0: str | None = None, *, path: str | None = None) -> str:
    """How to call this very regbench from a shell, as a person can paste it.

    ``regbench`` when the ``regbench`` found on ``path`` (default: ``$PATH``) is the script
    running now; else that script's absolute path (a virtual environment that is not
    activated); else ``PYTHON -m regbench`` with this interpreter (run as a module).
    """
    argv0 = sys.argv[0] if argv0 is None else argv0
    script = Path(argv0)
    if script.name == "regbench" and script.is_file():
        found = shutil.which("regbench", path=path if path is not None else os.environ.get("PATH"))
        if found is not None and Path(found).resolve() == script.resolve():
            return "regbench"
        return shlex.quote(str(script.absolute()))
    return f"{shlex.quote(sys.executable)} -m regbench"


def print_demo_created(demo: DemoRepo, subjects: tuple[str, ...]) -> None:
    """The repository and its commits, and what happens next."""
    console.print(f"[bold]regbench demo[/bold]: a git repository of {len(demo.commits)} commits in {demo.path}")
    for k, (sha, subject) in enumerate(zip(demo.commits, subjects, strict=True)):
        console.print(f"  {k + 1}. {sha[:7]}  {subject}")
    console.print("Building each commit and running its benchmark as fresh processes, "
                  "in randomized interleaved order...")


def print_demo(outcome: DemoOutcome) -> None:
    """The campaign, the change table, the commit behind each change, and the next commands."""
    demo = outcome.demo
    console.print(campaign_summary(outcome.campaign, str(outcome.store_path)))
    change_table(outcome.changes, method=outcome.method, confidence=outcome.confidence_level,
                 min_change=outcome.min_change)
    by_sha = {sha[:7]: (k, subj) for k, (sha, subj) in enumerate(zip(demo.commits, outcome.subjects, strict=True))}
    for c in outcome.changes:
        k, subject = by_sha.get(c.version[:7], (None, ""))
        where = f"commit {k + 1} ({c.version}: {subject})" if k is not None else c.version
        console.print(f"  {c.kind} of {c.change:+.1%} introduced by {where}")
    verdict = "both planted changes were found" if outcome.planted_found else "not every planted change was found"
    console.print(f"{len(outcome.changes)} change(s) found in {outcome.seconds:.0f} s; {verdict}.")
    regbench, root = regbench_command(), shlex.quote(str(demo.root))
    console.print(f"Results are stored in {outcome.store_path}. Explore them with:\n"
                  f"  cd {root} && {regbench} summary\n"
                  f"  cd {root} && {regbench} compare {demo.commits[demo.slower_index - 1][:7]} "
                  f"{demo.commits[demo.slower_index][:7]}", markup=False)
