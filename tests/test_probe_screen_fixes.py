"""Defects found by a first user's probe of screening and the Dask executor (/tmp/probe-screen),
each checked on real processes, real git and, for the Dask executor, a real ``dask scheduler``
and ``dask worker`` on loopback:

1. a scheduler killed mid-campaign stored every run not back (queued ones too) as a ``failed``
   run, "for 4 causes" (one line per task key), marked the campaign ``finished``, exited 4 with a
   Dask traceback, and the same command then made no run (docs/dask.md s.2);
2. levels of an option that Python holds equal (``[1, 1.0]``, ``[true, 1]``) were accepted as
   distinct, and a constraint took them for one (``not (a == 1.0 and b == True)`` left no
   configuration); they are refused when the file is loaded (docs/screening.md s.1);
3. an option (or the template) applied through ``env = "PYTHONPATH"`` with ``[project]
   benchmark_dir`` set never reached a run: regbench sets PYTHONPATH to the folder after the
   options' variables, so every run saw the folder and the option came out inert; it is a
   one-line error when the file is loaded, as ``env = "REGBENCH_ITERATIONS"`` is;
4. messages: the same ``--term`` twice (``a*b`` and ``b*a``) was "not estimable (D-efficiency
   0)", ``--design suite --augment 1`` named "the model ( beside the main effects)", and a
   constraint writing TOML's ``true`` got "unknown option 'true'".
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.errors import ExitStatus
from regbench.store import Store

from test_run_dask import _scheduler_address

PY = sys.executable


def git_project(tmp_path: Path, toml: str) -> Path:
    """A git repository ``tmp_path/p`` of one commit holding ``regbench.toml`` (``toml``)."""
    repo = tmp_path / "p"
    repo.mkdir()
    cfg = repo / "regbench.toml"
    cfg.write_text(toml, encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "init", "-q", "-b", "main"], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "regbench.toml"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "one"],
                   check=True)
    return cfg


# --------------------------------------------------------------- 1: a scheduler lost mid-campaign

class Scheduler:
    """A ``dask scheduler`` and one ``dask worker`` (offering ``benchmark=1``), processes on
    loopback with ports chosen by the system; :meth:`kill` is ``kill -9`` of both groups."""

    def __init__(self, tmp_path: Path, name: str):
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "REGBENCH_MACHINE": "loop"}
        info = tmp_path / f"{name}.json"
        self.scheduler = self._start(tmp_path, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                                     "0", "--dashboard-address", ":0", "--scheduler-file", str(info))
        self.worker: subprocess.Popen | None = None
        try:
            deadline = time.monotonic() + 120
            while not _scheduler_address(info):  # the scheduler's file, once whole
                assert time.monotonic() < deadline, "no scheduler within 120 s"
                time.sleep(0.05)
            self.address = _scheduler_address(info)
            self.worker = self._start(tmp_path, "distributed.cli.dask_worker", self.address, "--nthreads", "1",
                                      "--no-nanny", "--resources", "benchmark=1", "--dashboard-address", ":0")
        except BaseException:  # the caller gets no object to kill: nothing is left running
            self.kill()
            raise

    def _start(self, cwd: Path, *args: str) -> subprocess.Popen:
        return subprocess.Popen([PY, "-m", *args], env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True, cwd=cwd)

    def kill_scheduler(self) -> None:
        os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait()

    def kill(self) -> None:
        for p in (self.scheduler, self.worker):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            if p is not None:
                p.wait()


NAP = ("import os, sys, time; time.sleep(0.6); "
       "[print(1.0) for _ in range(int(os.environ['REGBENCH_ITERATIONS']))]")
BROKEN = "import sys, time; time.sleep(0.3); sys.exit('boom: the benchmark failed')"


@pytest.mark.slow
def test_a_lost_scheduler_interrupts_the_campaign_and_the_same_command_makes_exactly_the_runs_missing(tmp_path):
    pytest.importorskip("distributed")
    cfg = git_project(tmp_path, '[project]\nname = "lost"\n\n[defaults]\nruns = 3\niterations = 2\n\n'
                                f'[[benchmark]]\nname = "nap"\ncommand = {json.dumps([PY, "-c", NAP])}\n\n'
                                f'[[benchmark]]\nname = "broken"\ncommand = {json.dumps([PY, "-c", BROKEN])}\n')
    db = tmp_path / "results.db"

    def regbench(address: str) -> subprocess.Popen:
        return subprocess.Popen([PY, "-m", "regbench.cli.main", "--config", str(cfg), "--store", str(db), "run",
                                 "--seed", "1", "--executor", "dask", "--scheduler", address],
                                env=first.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)

    first = Scheduler(tmp_path, "first")
    second = None
    try:
        store = Store(db)
        run = regbench(first.address)
        deadline = time.monotonic() + 120
        while not store.runs():
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no run stored"
            time.sleep(0.02)  # polling the store
        # One run is back; the next is running on the worker and four wait in its queue.
        first.kill_scheduler()
        out, err = run.communicate(timeout=120)
        assert run.returncode == ExitStatus.ERROR, (out, err)
        assert "Traceback" not in err, err
        (line,) = [x for x in err.splitlines() if x.startswith("error:")]
        assert line.startswith(f"error: lost the connection to the Dask scheduler at {first.address} with ")
        assert line.endswith("not back (not stored; the campaign is interrupted): start the scheduler and its "
                             "workers again, then run the same command to resume"), line
        (campaign,) = store.campaigns()
        assert campaign.status == "interrupted"
        kept = store.runs()
        assert 1 <= len(kept) < 6
        # Only runs that came back are stored: a broken run is its own failure, never a cancellation.
        for r in kept:
            assert (r.benchmark, r.status) in {("nap", "ok"), ("broken", "failed")}, r
            assert "cancel" not in (r.stderr_tail or "").lower(), r.stderr_tail
        first.kill()

        second = Scheduler(tmp_path, "second")  # the cluster is back, at another address
        again = regbench(second.address)
        out, err = again.communicate(timeout=180)
        # The broken benchmark's runs failed: status 4, and the account has one cause for them.
        assert again.returncode == ExitStatus.FAILED, (out, err)
        assert f"{6 - len(kept)} runs stored" in out, out
        assert "of broken: failed (exit status 1): boom: the benchmark failed" in out and "cancel" not in out, out
        runs = store.runs()
        keys = [(r.benchmark, r.run_index) for r in runs]
        assert sorted(keys) == sorted((b, k) for b in ("nap", "broken") for k in range(3))  # each once
        assert {(r.benchmark, r.status) for r in runs} == {("nap", "ok"), ("broken", "failed")}
        assert all("boom: the benchmark failed" in (r.stderr_tail or "") for r in runs if r.status == "failed")
        assert [c.status for c in store.campaigns()] == ["interrupted", "finished"]
        store.close()
    finally:
        first.kill()
        if second is not None:
            second.kill()


# ------------------------------------------------------------- 2: levels Python holds equal

def screen_toml(levels_a: str, levels_b: str, constraints: str = "") -> str:
    return ('[project]\nname = "s"\n\n[[benchmark]]\nname = "b"\ncommand = ["python3", "-c", "print(1)"]\n\n'
            + (f"[screen]\nconstraints = [{constraints}]\n\n" if constraints else "")
            + f'[[screen.option]]\nname = "a"\nlevels = {levels_a}\nenv = "A"\n\n'
            f'[[screen.option]]\nname = "b"\nlevels = {levels_b}\nenv = "B"\n')


@pytest.mark.parametrize(("levels_a", "levels_b", "message"), [
    ("[1, 1.0]", '["x", "y"]', "[[screen.option]] 'a': `levels` 1 and 1.0 are equal as Python compares them (a "
                               "constraint `a == 1.0` would hold at both): give distinct values, or the strings "
                               '"1" and "1.0" to give the benchmark both spellings'),
    ('["x", "y"]', "[true, 1]", "[[screen.option]] 'b': `levels` true and 1 are equal as Python compares them (a "
                                "constraint `b == 1` would hold at both)"),
    ("[0, 2, false]", '["x", "y"]', "[[screen.option]] 'a': `levels` 0 and false are equal as Python compares them "
                                    "(a constraint `a == False` would hold at both)"),
])
def test_levels_python_holds_equal_are_refused_when_the_file_is_loaded(tmp_path, capsys, levels_a, levels_b,
                                                                      message):
    cfg = tmp_path / "regbench.toml"
    for constraints in ("", "'not (a == 1.0 and b == True)'"):  # the probe's, and none
        if constraints and "1.0" not in levels_a:
            continue
        cfg.write_text(screen_toml(levels_a, levels_b, constraints), encoding="utf-8")
        rc = main(["--config", str(cfg), "--store", str(tmp_path / "r.db"), "screen", "--design", "full",
                   "--dry-run"])
        err = capsys.readouterr().err
        assert rc == ExitStatus.ERROR
        assert err.startswith(f"error: {cfg}: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "r.db").exists()


def test_two_spellings_of_one_value_are_kept_apart_as_strings_and_a_constraint_tells_them_apart(tmp_path, capsys):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(screen_toml('["1", "1.0"]', '["true", "1"]', """'not (a == "1.0" and b == "true")'"""),
                   encoding="utf-8")
    rc = main(["--config", str(cfg), "--store", str(tmp_path / "r.db"), "screen", "--design", "full", "--dry-run"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert [line.split()[1] for line in out.splitlines()[1:5]] == ["a=1,b=true", "a=1.0,b=true", "a=1,b=1",
                                                                   "a=1.0,b=1"]
    assert [("not run" in line) for line in out.splitlines()[1:5]] == [False, True, False, False]


# ------------------------------------------------- 3: PYTHONPATH beside [project] benchmark_dir

SHOWS_PATH = ("import os, sys; sys.stderr.write('PYTHONPATH=' + os.environ.get('PYTHONPATH', '') + '\\n'); "
              "[print(1.0) for _ in range(int(os.environ['REGBENCH_ITERATIONS']))]")


def path_project(tmp_path: Path, *, benchmark_dir: bool, template: bool = False) -> Path:
    (tmp_path / "bd").mkdir(exist_ok=True)
    (tmp_path / "t.in").write_text("${a}\n", encoding="utf-8")
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nname = "pp"\n' + ('benchmark_dir = "bd"\n' if benchmark_dir else "")
                   + f'\n[defaults]\nruns = 1\niterations = 2\nwarmup = 0\n\n'
                   f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([PY, "-c", SHOWS_PATH])}\n\n'
                   + ('[screen]\ntemplate = { source = "t.in", env = "PYTHONPATH" }\n\n' if template else "")
                   + '[[screen.option]]\nname = "a"\nlevels = ["p1", "p2"]\n'
                   + ("template = true\n" if template else 'env = "PYTHONPATH"\n')
                   + '\n[[screen.option]]\nname = "b"\nlevels = [1, 2]\nenv = "B"\n', encoding="utf-8")
    return cfg


def test_pythonpath_as_an_option_beside_benchmark_dir_is_a_one_line_error_when_the_file_is_loaded(tmp_path,
                                                                                                  capsys):
    db = tmp_path / "r.db"
    for template, message in ((False, "[[screen.option]] 'a': `env` PYTHONPATH is set by regbench itself in every run "
                                      "when [project] `benchmark_dir` is set (the folder first on the path), which "
                                      "would override the level: apply the option through another variable (which "
                                      "the benchmark puts on its path) or `arg`"),
                              (True, "[screen] `template`: `env` PYTHONPATH is set by regbench itself in every run "
                                     "when [project] `benchmark_dir` is set (the folder first on the path), which "
                                     "would override the rendered file's path: give it another variable")):
        cfg = path_project(tmp_path, benchmark_dir=True, template=template)
        for command in (["screen", "--design", "full", "--dry-run"], ["run"]):
            rc = main(["--config", str(cfg), "--store", str(db), *command])
            err = capsys.readouterr().err
            assert rc == ExitStatus.ERROR and err == f"error: {cfg}: {message}\n", err
    assert not db.exists()


@pytest.mark.slow
def test_without_benchmark_dir_a_pythonpath_option_reaches_every_run(tmp_path):
    """The refusal is of the combination only: without benchmark_dir the level is the runs' PYTHONPATH."""
    cfg = path_project(tmp_path, benchmark_dir=False)
    db = tmp_path / "r.db"
    done = subprocess.run([PY, "-m", "regbench.cli.main", "--config", str(cfg), "--store", str(db), "screen",
                           "--design", "full", "--runs", "1", "--seed", "1"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    store = Store(db)
    seen = {(r.config, (r.stderr_tail or "").strip()) for r in store.runs()}
    store.close()
    assert seen == {(f"a={a},b={b}", f"PYTHONPATH={a}") for a in ("p1", "p2") for b in (1, 2)}


# ------------------------------------------------------------------------------ 4: messages

def three_options(tmp_path: Path, constraint: str | None = None) -> Path:
    cfg = tmp_path / "regbench.toml"
    cfg.write_text((f"[screen]\nconstraints = [{json.dumps(constraint)}]\n\n" if constraint else "")
                   + '[project]\nname = "m"\n\n[[benchmark]]\nname = "b"\ncommand = ["python3", "-c", "print(1)"]\n\n'
                   '[[screen.option]]\nname = "threads"\nlevels = [1, 2]\nenv = "T"\n\n'
                   '[[screen.option]]\nname = "size"\nlevels = ["s", "l"]\nenv = "S"\n\n'
                   '[[screen.option]]\nname = "fast"\nlevels = [false, true]\nenv = "F"\n', encoding="utf-8")
    return cfg


def screen_error(cfg: Path, capsys, *args: str) -> str:
    capsys.readouterr()
    rc = main(["--config", str(cfg), "--store", str(cfg.parent / "r.db"), "screen", "--dry-run", *args])
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR and err.count("\n") == 1, err
    assert not (cfg.parent / "r.db").exists()
    return err.strip()


def test_the_same_term_twice_in_either_order_is_said_to_be_a_duplicate(tmp_path, capsys):
    cfg = three_options(tmp_path)
    base = ["--generator", "C = AB", "--augment", "2"]
    assert main(["--config", str(cfg), "--store", str(tmp_path / "r.db"), "screen", "--dry-run", *base,
                 "--term", "threads*size"]) == 0  # once: estimable
    assert screen_error(cfg, capsys, *base, "--term", "threads*size", "--term", "size*threads") == (
        "error: term 'size*threads' is the interaction 'threads*size' again (the order of the options does not "
        "matter): give each --term once")


def test_a_follow_up_of_main_effects_alone_names_its_model_and_the_augment_that_can_estimate_it(tmp_path, capsys):
    cfg = three_options(tmp_path)
    # The suite: both levels of threads, 2 configurations; the model is the mean and 3 main effects.
    err = screen_error(cfg, capsys, "--design", "suite", "--important", "threads", "--augment", "1")
    assert err == ("error: --augment 1: the model (the main effects) has 4 parameters with the mean, more than the "
                   "design's 2 valid configurations and 1 more: give --augment 2 at least")
    assert "( beside" not in err
    capsys.readouterr()
    assert main(["--config", str(cfg), "--store", str(tmp_path / "r.db"), "screen", "--dry-run", "--design", "suite",
                 "--important", "threads", "--augment", "2"]) == 0
    assert "2 valid runs of suite, 2 runs + 2 added, D-optimal for 3 terms" in capsys.readouterr().out


def test_a_constraint_writing_tomls_true_is_told_constraints_are_python(tmp_path, capsys):
    cfg = three_options(tmp_path, 'not (fast == true and size == "l")')
    assert screen_error(cfg, capsys) == (
        f"error: {cfg}: [screen] constraint 1: `true` in 'not (fast == true and size == \"l\")' is not an option: a "
        "constraint is a Python expression, where the booleans are written True (TOML's true is for the levels)")
    cfg = three_options(tmp_path, 'not (fast == True and size == "l")')
    capsys.readouterr()
    assert main(["--config", str(cfg), "--store", str(tmp_path / "r.db"), "screen", "--design", "full",
                 "--dry-run"]) == 0
    assert capsys.readouterr().out.count("(not run: breaks") == 2
