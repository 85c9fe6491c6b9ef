"""A command refused for its input writes nothing: exit status 3 with one ``error:`` line, and no
store file where there was none (nor its folders), no rows added to an existing store, nor the
schema of an older one upgraded (docs/cli.md, "Exit statuses").

The commands that may create the store (``run``, ``bisect``, ``compare --run``, ``screen``) open
it at its first use, after their checks (:class:`regbench.store.Store`'s ``lazy``); ``run
--suite`` checks its first campaign before it stores the suite's configurations.  Each case is a
real git project and real SQLite files; one case of each command (``PROCESS_CASES``) is a real
``regbench`` process, the others run the same entry point, :func:`regbench.cli.main.main`, in this
process (where the refusal is decided; a fresh interpreter costs each case about 2 s of imports).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.model import RunRecord
from regbench.store import Store
from regbench.store import schema as t

from storetools import downgrade_to

#: Refused before anything is read or written: the arguments after ``--store PATH``, and what the
#: one error line says.
CASES = {
    "run --benchmark unknown": (["run", "--benchmark", "nope"], "no benchmark named 'nope'"),
    "run --versions unknown": (["run", "--versions", "nosuchref"], "unknown revision 'nosuchref'"),
    "run --versions empty range": (["run", "--versions", "HEAD..HEAD"], "no commits in this range"),
    "run --pin a CPU not offered": (["run", "--pin", "65535"], "CPU 65535 is not available to regbench"),
    "run --env-size too small": (["run", "--env-size", "10"], "`env_size` (--env-size) is 10 bytes"),
    "run --suite --versions unknown": (["run", "--suite", "s.toml", "--versions", "nosuchref"],
                                       "unknown revision 'nosuchref'"),
    "run --suite --benchmark unknown": (["run", "--suite", "s.toml", "--benchmark", "nope"],
                                        "no benchmark named 'nope'"),
    # Checked for each configuration of the suite before any is stored (a review found the
    # suite's configurations stored before its first campaign refused the size).
    "run --suite --env-size too small": (["run", "--suite", "s.toml", "--env-size", "10"],
                                         "`env_size` (--env-size) is 10 bytes"),
    "bisect GOOD unknown": (["bisect", "nosuchref", "HEAD", "--benchmark", "f"], "unknown revision 'nosuchref'"),
    "bisect --benchmark unknown": (["bisect", "HEAD~1", "HEAD", "--benchmark", "nope"], "no benchmark named 'nope'"),
    "compare --run A unknown": (["compare", "nosuchref", "HEAD", "--run"], "unknown revision 'nosuchref'"),
    "compare --run the same commit": (["compare", "HEAD", "HEAD", "--run"], "are the same commit"),
    "compare --run --benchmark unknown": (["compare", "HEAD~1", "HEAD", "--run", "--benchmark", "nope"],
                                          "no benchmark named 'nope'"),
    "screen --benchmark unknown": (["screen", "--benchmark", "nope"], "no benchmark named 'nope'"),
    "screen --versions unknown": (["screen", "--versions", "nosuchref"], "unknown revision 'nosuchref'"),
    # Plans are read from the store: one that does not exist holds none, and is not created.
    "run --plan optimized": (["run", "--plan", "optimized"], "no results store at"),
}

#: The cases run as a real ``regbench`` process by ``test_no_store_file_is_created``: one of each
#: command (and of ``run --suite`` and ``run --plan``, which open the store on other paths).
PROCESS_CASES = {"run --benchmark unknown", "run --suite --versions unknown", "bisect GOOD unknown",
                 "compare --run A unknown", "screen --benchmark unknown", "run --plan optimized"}

#: The cases whose refusal needs no store at all (reading the optimized plans needs one at the
#: current schema).
STORELESS = [name for name in CASES if name != "run --plan optimized"]

#: The schema revision the older store is at.
OLDER = "0012"

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def regbench(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The real console entry point, in a fresh interpreter (the store from the arguments or
    regbench.toml, never from the environment)."""
    env = {k: v for k, v in os.environ.items() if k != "REGBENCH_STORE"}
    return subprocess.run([sys.executable, "-m", "regbench.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


@pytest.fixture
def regbench_here(monkeypatch, capsys):
    """``regbench_here(args, cwd)``: what :func:`regbench` does, by the console entry point's
    ``main`` in this process (in ``cwd``, without ``REGBENCH_STORE``), as a CompletedProcess."""
    def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        monkeypatch.delenv("REGBENCH_STORE", raising=False)
        capsys.readouterr()
        code = main(args)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out.out, out.err)
    return run


def refused(out: subprocess.CompletedProcess, message: str) -> None:
    """Exit status 3, one ``error:`` line saying ``message``, no traceback."""
    assert out.returncode == 3, out.stderr
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr, out.stderr


def rows(db: Path) -> dict[str, int]:
    """Rows of every table of the SQLite file ``db``, and its schema revision."""
    with sqlite3.connect(db) as con:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        counts = {name: con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in tables}
        counts["revision"] = con.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    con.close()
    return counts


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A git project of two commits, its benchmark `f`, a `[screen]` table and a suite of it
    (s.toml), and two stores beside it: current.db (runs of `f`) and older.db (the same, at
    schema revision OLDER)."""
    root = tmp_path_factory.mktemp("nohalf") / "proj"
    git_init(root)
    toml = ('[project]\nname = "p"\nstore = "r.db"\n'
            f'[[benchmark]]\nname = "f"\ncommand = {json.dumps([sys.executable, "-c", "print(1.0)"])}\n'
            'runs = 2\niterations = 1\nwarmup = 0\n[screen]\n'
            + "".join(f'[[screen.option]]\nname = "{n}"\nlevels = ["x", "y"]\nenv = "{n.upper()}"\n' for n in "ab"))
    git_commit(root, {"regbench.toml": toml, ".gitignore": "*.db\n*.db-*\ns.toml\n.regbench/\nworktrees/\n"},
               "one", when=T0)
    git_commit(root, {"notes.txt": "two"}, "two", when=T0 + timedelta(hours=1))
    out = regbench(["screen", "--design", "suite", "--important", "a", "--save-suite", "s.toml", "--dry-run"], root)
    assert out.returncode == 0, out.stderr
    with Store(root / "current.db") as store:
        store.add_runs([RunRecord("f", "v1", r, np.array([1.0, 1.1])) for r in range(3)])
    shutil.copy(root / "current.db", root / "older.db")
    engine = sa.create_engine(f"sqlite:///{root / 'older.db'}")
    with engine.begin() as conn:
        downgrade_to(conn, OLDER)
    engine.dispose()
    assert not (root / "r.db").exists() and rows(root / "older.db")["revision"] == OLDER
    return root


@pytest.fixture
def project(template, tmp_path) -> Path:
    """A fresh copy of the template project, for one command to run in."""
    return Path(shutil.copytree(template, tmp_path / "proj", symlinks=True))


@pytest.mark.parametrize("case", list(CASES))
def test_no_store_file_is_created(project, case, regbench_here):
    args, message = CASES[case]
    run = regbench if case in PROCESS_CASES else regbench_here
    refused(run(["--store", "new/results.db", *args], project), message)
    assert not (project / "new").exists()  # neither the file nor its folder


@pytest.mark.parametrize("args, message", [CASES[name] for name in STORELESS], ids=STORELESS)
def test_an_older_store_is_neither_written_nor_upgraded(project, args, message, regbench_here):
    before = rows(project / "older.db")
    refused(regbench_here(["--store", "older.db", *args], project), message)
    assert rows(project / "older.db") == before


@pytest.mark.parametrize("db", ["older.db", "current.db"])
def test_run_plan_optimized_refuses_a_store_without_plans_before_upgrading_it(project, db, regbench_here):
    # The store exists but holds no plan: refused before it is opened, so an older one keeps its
    # schema revision (it used to be upgraded first, then refused).
    before = rows(project / db)
    refused(regbench_here(["--store", db, "run", "--plan", "optimized"], project), "no optimized plan is stored")
    assert rows(project / db) == before


def test_run_plan_optimized_refuses_an_older_store_with_only_other_machines_plans_as_it_is(project, regbench_here):
    # Plans of another machine are not plans of this one: refused before the store is opened.
    from regbench.store.plans import NewPlan, save_plans

    with Store(project / "current.db", create=False) as store:
        cid = store.start_campaign(seed=1, machine="elsewhere", fingerprint={}, command="x", plan={})
        save_plans(store, [NewPlan("f", "default", "elsewhere", cid, "v1", 2, 1, 0, 3, 1, "rmad", 0.01,
                                   0.004, 0.001, True, 1.5, 3.0)])
    engine = sa.create_engine(f"sqlite:///{project / 'current.db'}")
    with engine.begin() as conn:
        downgrade_to(conn, OLDER)
    engine.dispose()
    before = rows(project / "current.db")
    assert before["plan"] == 1 and before["revision"] == OLDER
    refused(regbench_here(["--store", "current.db", "run", "--plan", "optimized", "--machine", "here"], project),
            "no optimized plan is stored for configuration 'default' on machine 'here'")
    assert rows(project / "current.db") == before


def sql(db: Path, statement: str) -> list[tuple]:
    """``statement`` run on the SQLite file ``db`` (committed), and the rows it returns."""
    with sqlite3.connect(db) as con:
        found = con.execute(statement).fetchall()
    con.close()
    return found


def test_run_plan_optimized_refuses_a_newer_store_as_newer(project, regbench_here):
    sql(project / "current.db", "UPDATE alembic_version SET version_num = '9999'")
    before = rows(project / "current.db")
    refused(regbench_here(["--store", "current.db", "run", "--plan", "optimized"], project),
            "has schema revision 9999, newer than this regbench knows")
    assert rows(project / "current.db") == before


def test_run_plan_optimized_refuses_a_database_that_is_no_store_as_such(project, regbench_here):
    sql(project / "other.db", "CREATE TABLE t (x)")
    refused(regbench_here(["--store", "other.db", "run", "--plan", "optimized"], project), "is not a regbench store")
    assert sql(project / "other.db", "SELECT name FROM sqlite_master") == [("t",)]


def test_a_refused_suite_stores_none_of_its_configurations(project, regbench_here):
    # The suite's configurations were stored before its first campaign found the revision unknown.
    before = rows(project / "current.db")
    out = regbench_here(["--store", "current.db", "run", "--suite", "s.toml", "--versions", "nosuchref"], project)
    refused(out, "unknown revision 'nosuchref'")
    assert rows(project / "current.db") == before
    with Store(project / "current.db", create=False) as store, store.engine.connect() as conn:
        assert conn.execute(sa.select(t.config.c.name)).scalars().all() == ["default"]


def test_a_suite_refused_for_its_environment_size_stores_none_of_its_configurations(project, regbench_here):
    before = rows(project / "current.db")
    out = regbench_here(["--store", "current.db", "run", "--suite", "s.toml", "--env-size", "10"], project)
    refused(out, "`env_size` (--env-size) is 10 bytes")
    assert rows(project / "current.db") == before


def test_the_configured_store_is_not_created(project, regbench_here):
    # `store` of regbench.toml, rather than --store.
    refused(regbench_here(["run", "--benchmark", "nope"], project), "no benchmark named 'nope'")
    assert not (project / "r.db").exists()


def test_a_lazy_store_is_created_at_its_first_use(tmp_path):
    # How the commands above leave nothing: the store the command line may create is opened at
    # its first use, and one never used is never created; one used is a store like any other.
    unused = Store(tmp_path / "unused" / "results.db", lazy=True)
    unused.close()
    path = tmp_path / "used" / "results.db"
    with Store(path, lazy=True) as store:
        assert not path.parent.exists()
        store.add_runs([RunRecord("f", "v1", 0, np.array([1.0, 1.1]))])
    assert not (tmp_path / "unused").exists()
    with Store(path, create=False) as store:
        assert [(r.benchmark, r.version) for r in store.runs()] == [("f", "v1")]
