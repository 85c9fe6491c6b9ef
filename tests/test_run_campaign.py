"""Campaigns end to end with real processes and real git: faults, resume after kill -9, RMIT, order."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from rich.console import Console
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from regbench.cli import cmd_init, cmd_run
from regbench.cli.main import Context
from regbench.config import EXAMPLE, load_config
from regbench.demo_project import git_commit, git_init
from regbench.report.campaign import ProgressReporter
from regbench.errors import ConfigError, VersionError
from regbench.model import RunRecord
from regbench.run.campaign import NullReporter, Trial, rmit_order, run_campaign
from regbench.store import Store, decode_samples
from regbench.store import schema as t

from proctools import wait_dead

PY = sys.executable
T0 = datetime(2024, 1, 1, 8, 0, tzinfo=UTC)


def write_config(path: Path, project: str, benchmarks: list[dict], defaults: str = "") -> Path:
    """A regbench.toml; benchmark values are written as JSON, which TOML reads the same."""
    text = "[project]\n" + textwrap.dedent(project) + "\n[defaults]\n" + textwrap.dedent(defaults)
    for b in benchmarks:
        text += "\n[[benchmark]]\n" + "".join(
            f"{k} = {{ {', '.join(f'{ek} = {json.dumps(ev)}' for ek, ev in v.items())} }}\n" if isinstance(v, dict)
            else f"{k} = {json.dumps(v)}\n" for k, v in b.items())
    cfg = path / "regbench.toml"
    cfg.write_text(text, encoding="utf-8")
    return cfg


def printer(n: str = "1.0") -> list[str]:
    return [PY, "-c", f"import os\nfor _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print({n})"]


class Recorder(NullReporter):
    def __init__(self):
        self.events = []
        self.build_logs = {}

    def build_done(self, version, status, cached, log_tail=None):
        self.events.append(("build", version, status, cached))
        self.build_logs[version] = log_tail

    def trials_started(self, total, skipped):
        self.events.append(("trials", total, skipped))

    def trial_done(self, benchmark, version, run_index, status):
        self.events.append(("trial", benchmark, version, run_index, status))

    def finished(self):
        self.events.append(("finished",))


# ------------------------------------------------------------------------------ faults
HANG = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
name = os.environ["REGBENCH_VERSION"] + "-" + os.environ["REGBENCH_RUN_INDEX"] + ".pid"
tmp = os.environ["PID_DIR"] + "-" + name  # beside the folder, renamed into it once written:
with open(tmp, "w") as f:                  # the test never reads a half-written file
    f.write(str(child.pid))
os.replace(tmp, os.path.join(os.environ["PID_DIR"], name))
print(1.0, flush=True)
time.sleep(120)
"""


@pytest.fixture
def faulty_project(tmp_path):
    """A git project whose second commit does not build, with one benchmark per kind of fault."""
    repo = tmp_path / "proj"
    git_init(repo)
    work = "def work():\n    return sum(range(200))\n"
    shas = [
        git_commit(repo, {"pyb.py": work}, "first", when=T0),
        git_commit(repo, {"broken.py": "def f(:\n"}, "break the build", when=T0 + timedelta(hours=1)),
        git_commit(repo, {"broken.py": "def f():\n    pass\n"}, "fix the build", when=T0 + timedelta(hours=2)),
    ]
    benches = tmp_path / "benches"
    benches.mkdir()
    (benches / "hang.py").write_text(HANG)
    pids = tmp_path / "pids"
    pids.mkdir()
    cfg = write_config(tmp_path, f"""\
        repo = "proj"
        build = {json.dumps([PY, "-m", "compileall", "-q", "."])}
        """, [
        {"name": "good", "command": printer("0.25"), "runs": 2},
        {"name": "fails", "command": [PY, "-c", "import sys; print(1.0); sys.exit('bad input')"]},
        {"name": "crashes", "command": [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"]},
        {"name": "hangs", "command": [PY, str(benches / "hang.py")], "timeout": 1, "env": {"PID_DIR": str(pids)}},
        {"name": "garbage", "command": [PY, "-c", "print(1.0); print('Segmentation fault?')"]},
        {"name": "pyfunc", "python": "pyb:work", "iterations": 3, "min_time": 0.001},
    ], defaults="runs = 1\niterations = 4\nwarmup = 1\n")
    return load_config(cfg), shas, pids


def test_every_fault_is_recorded_and_the_campaign_finishes(faulty_project, tmp_path):
    config, shas, pids = faulty_project
    store = Store(tmp_path / "store" / "results.db")
    rec = Recorder()
    result = run_campaign(config, store, revisions=f"{shas[0]},{shas[1]},{shas[2]}", seed=7,
                          machine="m1", reporter=rec)
    short = [s[:10] for s in shas]
    assert result.versions == tuple(short)
    assert result.builds_failed == (short[1],)
    assert result.trials_unbuilt == 7  # good x2 + five benchmarks x1 on the broken commit
    assert dict(result.counts) == {"ok": 6, "failed": 2, "crashed": 2, "timeout": 2, "garbage": 2}
    assert ("build", short[1], "failed", False) in rec.events
    assert rec.events[-1] == ("finished",)
    # The campaign is told why the build failed, and says it (the progress display's line).
    assert "SyntaxError" in rec.build_logs[short[1]] and rec.build_logs[short[0]] is None
    console = Console(record=True, width=200)
    ProgressReporter(console).build_done(short[1], "failed", False, rec.build_logs[short[1]])
    said = console.export_text()
    assert said.startswith(f"build of {short[1]}: failed (exit status 1): *** Error compiling './broken.py'") and "its runs are skipped" in said

    runs = {(r.benchmark, r.version, r.run_index): r for r in store.runs()}
    assert len(runs) == 14
    assert {v for _, v, _ in runs} == {short[0], short[2]}
    expect = {"good": "ok", "pyfunc": "ok", "fails": "failed", "crashes": "crashed",
              "hangs": "timeout", "garbage": "garbage"}
    for (bench, _, _), row in runs.items():
        assert row.status == expect[bench], row.stderr_tail
        assert row.campaign_id == result.campaign_id and row.machine == "m1"
    assert "bad input" in runs["fails", short[0], 0].stderr_tail
    assert runs["crashes", short[2], 0].exit_code == -signal.SIGKILL
    assert "stdout line 2: not a number" in runs["garbage", short[0], 0].stderr_tail
    assert runs["good", short[2], 1].n_samples == 5 and runs["good", short[2], 1].warmup == 1
    [series] = store.load_series("good")
    assert [v.name for v in series.versions] == [short[0], short[2]]
    np.testing.assert_array_equal(series.runs[0][0], [0.25] * 4)  # warm-up dropped by the store
    assert store.load_series("pyfunc")[0].runs[0][0].shape == (3,)

    builds = {b.version: b for b in store.builds()}
    assert builds[short[1]].status == "failed" and "SyntaxError" in builds[short[1]].log_tail
    assert builds[short[0]].status == builds[short[2]].status == "ok"
    [campaign] = store.campaigns()
    assert campaign.status == "finished" and campaign.seed == 7 and campaign.machine == "m1"
    assert campaign.fingerprint["logical_cores"] == os.cpu_count()
    assert campaign.plan["benchmarks"]["hangs"]["timeout"] == 1.0

    if Path("/proc").is_dir():
        pid_files = sorted(pids.glob("*.pid"))
        assert len(pid_files) == 2
        for f in pid_files:
            assert wait_dead(int(f.read_text())), f"{f.name}: the hung benchmark's child survived"

    # Resume: everything is stored, so nothing runs; the failed build is not retried...
    rec2 = Recorder()
    again = run_campaign(config, store, revisions=f"{shas[0]},{shas[1]},{shas[2]}", machine="m1", reporter=rec2)
    assert again.runs_stored == 0 and again.trials_skipped == 14
    assert ("build", short[1], "failed", True) in rec2.events
    assert ("build", short[0], "ok", True) in rec2.events
    assert len(store.runs()) == 14
    # ...unless asked.
    rec3 = Recorder()
    run_campaign(config, store, revisions=shas[1], machine="m1", reporter=rec3, rebuild=True)
    assert rec3.events[0] == ("build", short[1], "failed", False)


def test_resume_counts_any_status_as_done_and_other_machines_separately(faulty_project, tmp_path):
    config, shas, _ = faulty_project
    store = Store(tmp_path / "r.db")
    first = run_campaign(config, store, revisions=shas[0], benchmarks=["fails", "garbage"], machine="a")
    assert first.runs_stored == 2
    again = run_campaign(config, store, revisions=shas[0], benchmarks=["fails", "garbage"], machine="a")
    assert (again.runs_stored, again.trials_skipped) == (0, 2)
    other = run_campaign(config, store, revisions=shas[0], benchmarks=["fails"], machine="b")
    assert other.runs_stored == 1
    more = run_campaign(config, store, revisions=shas[0], benchmarks=["fails"], machine="a", runs=3)
    assert (more.runs_stored, more.trials_skipped) == (2, 1)


def test_bad_arguments_write_nothing(faulty_project, tmp_path):
    config, _, _ = faulty_project
    store = Store(tmp_path / "r.db")
    with pytest.raises(ConfigError, match="no benchmark named 'nope'"):
        run_campaign(config, store, benchmarks=["nope"])
    with pytest.raises(ConfigError, match="`runs` must be a positive integer"):
        run_campaign(config, store, runs=0)
    with pytest.raises(VersionError, match="unknown revision"):
        run_campaign(config, store, revisions="v9.9")
    assert store.campaigns() == [] and store.runs() == []


# ------------------------------------------------------------------- order and history
@pytest.fixture
def three_versions(tmp_path):
    """Three commits, the last one dated before its parent (a skewed committer clock)."""
    repo = tmp_path / "repo"
    git_init(repo)
    shas = [git_commit(repo, {"x": str(k)}, f"c{k}", when=T0 + timedelta(hours=h))
            for k, h in enumerate([0, 5, 2])]
    cfg = write_config(tmp_path, 'repo = "repo"\n', [
        {"name": "alpha", "command": printer()}, {"name": "beta", "command": printer()},
    ], defaults="runs = 3\niterations = 1\n")
    return load_config(cfg), shas


def test_rmit_order_is_reproduced_by_the_recorded_seed_and_interleaves(three_versions, tmp_path):
    config, shas = three_versions
    store = Store(tmp_path / "r.db")
    result = run_campaign(config, store, revisions=f"{shas[0]}~0..{shas[2]}", seed=None)
    # The range excludes its start: two versions, two benchmarks, three runs.
    assert len(result.order) == 12
    stored = [Trial(r.benchmark, r.version, r.run_index) for r in store.runs()]  # in id order
    assert stored == list(result.order)
    seed = store.campaigns()[0].seed
    assert seed == result.seed
    assert rmit_order(set(stored), seed) == stored
    # Rounds: every experiment once per round, in a shuffled position.
    experiments = {(t.benchmark, t.version) for t in stored}
    rounds = [stored[4 * r: 4 * r + 4] for r in range(3)]
    for r, block in enumerate(rounds):
        assert {t.run_index for t in block} == {r}
        assert {(t.benchmark, t.version) for t in block} == experiments


def test_rmit_order_shuffles_rounds_with_the_seed():
    trials = [Trial(b, v, r) for b in "abcd" for v in ("v1", "v2", "v3") for r in range(4)]
    first = rmit_order(trials, 123)
    assert first == rmit_order(reversed(trials), 123)  # only the set and the seed matter
    assert first != rmit_order(trials, 124)
    assert [t.run_index for t in first] == sorted(t.run_index for t in trials)
    patterns = {tuple((t.benchmark, t.version) for t in first[12 * r: 12 * r + 12]) for r in range(4)}
    assert len(patterns) == 4  # each round has its own order
    canonical = [(b, v) for b in "abcd" for v in ("v1", "v2", "v3")]
    assert all(p != tuple(canonical) for p in patterns)


def test_versions_follow_git_history_not_clocks(three_versions, tmp_path):
    config, shas = three_versions
    store = Store(tmp_path / "r.db")
    # Given newest first in a list, and with a skewed clock, the order is still history.
    result = run_campaign(config, store, revisions=f"{shas[0]}^{{}}..{shas[2]}", runs=1)
    assert result.versions == (shas[1][:10], shas[2][:10])
    assert [v.name for v in store.versions()] == [shas[1][:10], shas[2][:10]]
    assert [v.timestamp_text for v in store.versions()] == ["2024-01-01T13:00:00+00:00",
                                                            "2024-01-01T10:00:00+00:00"]
    for s in store.load_series():
        assert [v.name for v in s.versions] == [shas[1][:10], shas[2][:10]]


def test_commits_of_one_committer_second_follow_history_when_the_tip_was_run_first(tmp_path):
    """A rebased series shares one committer date; its tip benchmarked alone first (CI on the
    tip), then its history (a back-fill): the store still orders the commits as git does, in
    show's table, the series detection reads, and after the tip's own later campaign."""
    repo = tmp_path / "repo"
    git_init(repo)
    shas = [git_commit(repo, {"x": str(k)}, f"c{k}", when=T0) for k in range(4)]
    cfg = load_config(write_config(tmp_path, 'repo = "repo"\n', [{"name": "b", "command": printer()}],
                                   defaults="runs = 1\niterations = 1\n"))
    store = Store(tmp_path / "r.db")
    run_campaign(cfg, store, revisions=shas[3], seed=1)
    assert [v.generation for v in store.versions()] == [None]  # alone: no tie, git not asked
    run_campaign(cfg, store, revisions=f"{shas[0]}..{shas[3]}", seed=2)
    names = [s[:10] for s in shas[1:]]
    assert [v.name for v in store.versions()] == names
    assert [v.generation for v in store.versions()] == [2, 3, 4]  # the tip's filled in
    (series,) = store.load_series()
    assert [v.name for v in series.versions] == names
    run_campaign(cfg, store, revisions=shas[0], seed=3)  # the root, stored last, ties too
    assert [v.name for v in store.versions()] == [s[:10] for s in shas]


def test_working_tree_campaign_outside_git(tmp_path):
    cfg = write_config(tmp_path, "", [{"name": "b", "command": printer("2.5")}], "runs = 2\niterations = 3\n")
    store = Store(tmp_path / ".regbench" / "results.db")
    result = run_campaign(load_config(cfg), store, seed=1)
    assert result.versions == ("worktree",) and result.counts["ok"] == 2
    assert {r.version for r in store.runs()} == {"worktree"}


def test_a_trial_stored_meanwhile_by_another_campaign_is_kept_not_a_crash(tmp_path):
    cfg = write_config(tmp_path, "", [{"name": "b", "command": printer("2.5")}], "runs = 3\niterations = 3\n")
    store = Store(tmp_path / ".regbench" / "results.db")
    other = Store(tmp_path / ".regbench" / "results.db")

    class Racer(NullReporter):
        """Another campaign on the same store stores run 1 while this one is executing it."""

        def trial_started(self, benchmark, version, run_index):
            if run_index == 1:
                other.add_run(RunRecord(benchmark, version, 1, np.array([9.0, 9.0, 9.0]), machine="m1"))

    result = run_campaign(load_config(cfg), store, seed=1, machine="m1", reporter=Racer())
    assert result.counts["ok"] == 2 and result.trials_skipped == 1
    runs = {r.run_index: r for r in store.runs()}
    assert sorted(runs) == [0, 1, 2] and runs[1].campaign_id is None  # the other campaign's run stays
    other.close()


WARMING = (
    "import os, random\n"
    "random.seed(int(os.environ['REGBENCH_RUN_INDEX']))\n"
    "n = int(os.environ['REGBENCH_ITERATIONS'])\n"
    "assert os.environ['REGBENCH_WARMUP'] == '0'\n"
    "for i in range(n):\n"
    "    slow = 3.0 if i < 12 else 1.0  # 12 warm-up iterations, then a steady state\n"
    "    print(slow * (1 + random.gauss(0, 0.01)))\n"
)


def test_warmup_auto_detects_each_runs_warmup_and_keeps_the_samples(tmp_path):
    cfg = write_config(tmp_path, "", [{"name": "w", "command": [PY, "-c", WARMING], "warmup": "auto"}],
                       "runs = 3\niterations = 80\n")
    config = load_config(cfg)
    assert config.benchmarks[0].warmup_auto and config.benchmarks[0].warmup == 0
    store = Store(tmp_path / ".regbench" / "results.db")
    run_campaign(config, store, seed=1, machine="m1")
    runs = store.runs()
    assert [r.n_samples for r in runs] == [80, 80, 80]  # every sample is kept
    # Never short (no warm-up sample reaches the analyses); MSER-5 may cut later on a flat
    # steady state, but not past half the run (its search range).
    assert all(12 <= r.warmup <= 40 for r in runs), [r.warmup for r in runs]
    (series,) = store.load_series()
    assert all(abs(x.mean() - 1.0) < 0.02 for x in series.runs[0])  # analyses see the steady state only
    assert store.campaigns()[0].plan["benchmarks"]["w"]["warmup"] == "auto"


def test_warmup_must_be_a_count_or_auto(tmp_path):
    cfg = write_config(tmp_path, "", [{"name": "w", "command": printer(), "warmup": "some"}])
    with pytest.raises(ConfigError, match=r"`warmup` must be a non-negative integer or \"auto\""):
        load_config(cfg)


# ------------------------------------------------------------------------------- CLI
def cli(*args: str, cwd: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "regbench.cli.main", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, **kw)


def stored_rows(store: Store) -> dict:
    q = sa.select(t.run.c.id, t.run.c.benchmark_id, t.run.c.version_id, t.run.c.run_index,
                  t.run.c.status, t.run.c.encoding, t.run.c.samples, t.run.c.started_at)
    with store.engine.connect() as conn:
        return {(r.benchmark_id, r.version_id, r.run_index): (r.id, r.status, r.started_at,
                                                              decode_samples(r.samples, r.encoding).tolist())
                for r in conn.execute(q)}


SLOW = """\
import os, random, sys, time
open(os.path.join(sys.argv[1], str(os.getpid())), "w").close()
time.sleep(0.15)  # a slow benchmark, so that the campaign can be killed in the middle
for _ in range(int(os.environ["REGBENCH_ITERATIONS"])):
    print(random.random())
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see processes")
def test_kill_9_then_the_same_command_resumes(tmp_path):
    (tmp_path / "slow.py").write_text(SLOW)
    pids = tmp_path / "pids"
    pids.mkdir()
    write_config(tmp_path, "", [
        {"name": "one", "command": [PY, str(tmp_path / "slow.py"), str(pids)]},
        {"name": "two", "command": [PY, str(tmp_path / "slow.py"), str(pids)]},
    ], "runs = 5\niterations = 3\n")
    db = tmp_path / ".regbench" / "results.db"
    store = Store(db)  # created first, so that polling it never races its creation
    proc = cli("run", "--seed", "5", cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while len(store.runs()) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no runs stored within 60 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate()
    before = stored_rows(store)
    assert 3 <= len(before) < 10
    # The run in flight died with regbench (PR_SET_PDEATHSIG).
    for f in pids.iterdir():
        assert wait_dead(int(f.name)), "a benchmark outlived the killed campaign"

    again = cli("run", "--seed", "5", cwd=tmp_path)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    after = stored_rows(store)
    assert len(after) == 10 == len(store.runs())  # every trial once: the key is unique
    assert {k: after[k] for k in before} == before  # runs stored before the kill are untouched
    assert f"{len(before)} runs already stored were not run again" in out  # 3 <= len(before) < 10
    n = 10 - len(before)
    assert f"{n} run{'s' if n != 1 else ''} stored ({n} ok)" in out
    # The killed campaign's lease went with its process: the next campaign marked it interrupted.
    assert [c.status for c in store.campaigns()] == ["interrupted", "finished"]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see processes")
def test_ctrl_c_kills_the_run_and_marks_the_campaign_interrupted(tmp_path):
    (tmp_path / "hang.py").write_text(HANG)
    pids = tmp_path / "pids"
    pids.mkdir()
    write_config(tmp_path, "", [{"name": "hangs", "command": [PY, str(tmp_path / "hang.py")],
                                 "timeout": 60, "env": {"PID_DIR": str(pids)}}], "runs = 2\n")
    store = Store(tmp_path / ".regbench" / "results.db")
    # Started as from an interactive shell, with SIGINT at its default: a process inherits an
    # ignored SIGINT, and Python then leaves it ignored.  Within the whole test suite, something
    # in this process (a library's thread from an earlier test) sometimes had SIGINT ignored
    # when the run started, and the run never saw the Ctrl-C (its faulthandler dump showed it
    # waiting for the benchmark).  PYTHONFAULTHANDLER: if regbench does not end, SIGABRT makes it
    # print where each thread is.
    trampoline = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                  "os.execv(sys.executable, [sys.executable, '-m', 'regbench.cli.main', 'run'])")
    proc = subprocess.Popen([PY, "-c", trampoline], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    try:
        deadline = time.monotonic() + 30
        while not list(pids.iterdir()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGABRT)
            pytest.fail("regbench did not end within 30 s of SIGINT; where it was:\n" + proc.communicate(timeout=10)[1])
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "interrupted: 0 runs stored; run the same command again to resume" in err
    [pid_file] = pids.iterdir()
    assert wait_dead(int(pid_file.read_text()))
    assert [c.status for c in store.campaigns()] == ["interrupted"]
    assert store.runs() == []


def test_cli_run_prints_a_summary(tmp_path):
    cfg = write_config(tmp_path, "", [{"name": "b", "command": printer()},
                                      {"name": "c", "command": [PY, "-c", "import sys; sys.exit(2)"]}],
                       "runs = 2\niterations = 2\n")
    db = tmp_path / "store.db"
    result = CliRunner().invoke(cmd_run.command, ["--seed", "3", "--machine", "box", "--runs", "1"],
                                obj=Context(str(db), str(cfg)))
    assert result.exit_code == 4, result.output  # a run failed
    assert f"(seed 3): 2 runs stored (1 ok, 1 failed) over 1 version. Results are in {db}." in result.output
    assert "\n  1 run of c: failed (exit status 2)\n" in result.output
    assert "c@worktree run 0: failed" in result.output  # reported as it happens (stderr)
    assert {r.machine for r in Store(db).runs()} == {"box"}
    only = CliRunner().invoke(cmd_run.command, ["--benchmark", "b", "--runs", "2", "--machine", "box"], obj=Context(str(db), str(cfg)))
    assert "1 run stored (1 ok)" in only.output and "1 run already stored was not run again" in only.output


def test_cli_run_help_names_every_option():
    text = CliRunner().invoke(cmd_run.command, ["--help"]).output
    for option in ("--versions REV_RANGE", "--benchmark NAME", "--seed INT", "--machine NAME",
                   "--runs INT", "--rebuild"):
        assert option in text


def test_cli_init_writes_the_example_and_refuses_to_overwrite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(cmd_init.command, [], obj=Context(None, None))
    assert first.exit_code == 0 and "wrote" in first.output
    assert (tmp_path / "regbench.toml").read_text() == EXAMPLE.replace("myproject", tmp_path.name)
    assert load_config(tmp_path / "regbench.toml").benchmarks[0].name == "example-sort"
    (tmp_path / "regbench.toml").write_text("# mine\n")
    second = runner.invoke(cmd_init.command, [], obj=Context(None, None))
    assert isinstance(second.exception, ConfigError)
    assert "already exists (use --force" in str(second.exception)
    assert (tmp_path / "regbench.toml").read_text() == "# mine\n"
    forced = runner.invoke(cmd_init.command, ["--force"], obj=Context(None, None))
    assert forced.exit_code == 0 and (tmp_path / "regbench.toml").read_text() == EXAMPLE.replace("myproject", tmp_path.name)
    assert [p.name for p in tmp_path.iterdir()] == ["regbench.toml"]  # no temporary file left


def test_cli_errors_are_one_line(tmp_path):
    write_config(tmp_path, "", [{"name": "b", "command": printer()}])
    proc = cli("run", "--versions", "HEAD", cwd=tmp_path)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3
    assert err.strip().count("\n") == 0 and err.startswith("error: ") and "not a git repository" in err
