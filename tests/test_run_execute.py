"""One run as one real process: statuses, output formats, environment, timeouts, the Python worker."""

from __future__ import annotations

import copy
import json
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from regbench.config import BenchmarkSpec
from regbench.model import RUN_STATUSES
from regbench.run import worker
from regbench.run.execute import execute_run, parse_samples
from regbench.run.process import STDERR_TAIL, with_note

from proctools import wait_dead


def script(tmp_path: Path, body: str, name: str = "bench.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def command(path: Path, **kw) -> BenchmarkSpec:
    return BenchmarkSpec(name=kw.pop("name", "b"), kind="command", command=(sys.executable, str(path)), **kw)


def run(spec: BenchmarkSpec, tree: Path, **kw):
    return execute_run(spec, tree=tree, python=sys.executable, run_index=kw.get("run_index", 0),
                       version=kw.get("version", "v1"))


def test_ok_run_gets_environment_cwd_and_keeps_warmup_samples(tmp_path):
    (tmp_path / "sub").mkdir()
    path = script(tmp_path, """\
        import json, os
        keys = ["REGBENCH_ITERATIONS", "REGBENCH_WARMUP", "REGBENCH_RUN_INDEX", "REGBENCH_VERSION",
                "FOO", "HOME"]
        with open("seen.json", "w") as f:
            json.dump({"cwd": os.getcwd(), **{k: os.environ.get(k) for k in keys}}, f)
        for i in range(int(os.environ["REGBENCH_ITERATIONS"])):
            print(0.5 + i)
            if i == 2:
                print()  # blank lines are ignored
    """)
    spec = command(path, cwd="sub", env={"FOO": "bar"}, iterations=4, warmup=2)
    before = copy.deepcopy(spec)
    out = execute_run(spec, tree=tmp_path, python=sys.executable, run_index=3, version="abc")
    assert out.status == "ok", out.stderr_tail
    assert out.exit_code == 0
    np.testing.assert_array_equal(out.samples, [0.5, 1.5, 2.5, 3.5, 4.5, 5.5])
    assert out.duration > 0 and out.started_at.tzinfo is None
    seen = json.loads((tmp_path / "sub" / "seen.json").read_text())
    assert seen == {"cwd": str((tmp_path / "sub").resolve()), "REGBENCH_ITERATIONS": "6",
                    "REGBENCH_WARMUP": "2", "REGBENCH_RUN_INDEX": "3", "REGBENCH_VERSION": "abc",
                    "FOO": "bar", "HOME": os.environ.get("HOME")}
    assert spec == before and spec.env == {"FOO": "bar"}


def test_jsonl_accepts_objects_and_bare_numbers(tmp_path):
    path = script(tmp_path, """\
        print('{"value": 1.5, "unit": "s"}')
        print('2')
        print('  {"value": 3e-3}  ')
    """)
    out = run(command(path, output="jsonl"), tmp_path)
    assert out.status == "ok", out.stderr_tail
    np.testing.assert_array_equal(out.samples, [1.5, 2.0, 0.003])


@pytest.mark.parametrize(("fmt", "text", "line", "what"), [
    ("lines", "1.0\nhello\n3.0\n", 2, "not a number: 'hello'"),
    ("lines", "1.0\nnan\n", 2, "not a finite number"),
    ("lines", "inf\n", 1, "not a finite number"),
    ("jsonl", '{"value": 1}\n{"x": 2}\n', 2, 'without a "value"'),
    ("jsonl", "true\n", 1, "not a number"),
    ("jsonl", '{"value": "7"}\n', 1, "not a number"),
    ("jsonl", "{oops\n", 1, "not JSON"),
    ("jsonl", "NaN\n", 1, "not a finite number"),
])
def test_garbage_output_names_the_bad_line(tmp_path, fmt, text, line, what):
    path = script(tmp_path, f"import sys\nsys.stdout.write({text!r})\n")
    out = run(command(path, output=fmt), tmp_path)
    assert out.status == "garbage"
    assert out.exit_code == 0
    assert f"[regbench] stdout line {line}: " in out.stderr_tail
    assert what in out.stderr_tail
    assert out.samples.size == line - 1  # what came before the bad line is kept


def test_no_samples_is_garbage(tmp_path):
    path = script(tmp_path, "print()\nprint('   ')\n")
    out = run(command(path), tmp_path)
    assert out.status == "garbage"
    assert out.stderr_tail.endswith("[regbench] no samples on stdout")


def test_nonzero_exit_is_failed_with_stderr_tail(tmp_path):
    path = script(tmp_path, """\
        import sys
        print(1.0)
        sys.stderr.write("x" * 5000 + "\\nthe real error is here\\n")
        sys.exit(3)
    """)
    out = run(command(path), tmp_path)
    assert out.status == "failed"
    assert out.exit_code == 3
    assert len(out.stderr_tail) <= STDERR_TAIL
    assert "the real error is here\n[regbench] exit status 3" in out.stderr_tail
    np.testing.assert_array_equal(out.samples, [1.0])


def test_killed_by_signal_is_crashed(tmp_path):
    path = script(tmp_path, "import os, signal\nprint(1.0, flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    out = run(command(path), tmp_path)
    assert out.status == "crashed"
    assert out.exit_code == -signal.SIGSEGV
    assert "killed by signal SIGSEGV" in out.stderr_tail


def test_program_that_cannot_start_is_failed(tmp_path):
    spec = BenchmarkSpec(name="b", kind="command", command=(str(tmp_path / "no-such-program"),))
    out = run(spec, tmp_path)
    assert out.status == "failed"
    assert out.exit_code is None
    assert "cannot start" in out.stderr_tail
    missing_cwd = BenchmarkSpec(name="b", kind="command", command=(sys.executable, "-c", "1"), cwd="nowhere")
    assert "nowhere" in run(missing_cwd, tmp_path).stderr_tail


HANGS = """\
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    with open(sys.argv[1], "w") as f:
        f.write(str(child.pid))
    print(1.0, flush=True)
    time.sleep(120)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see processes")
def test_timeout_kills_the_whole_process_group(tmp_path):
    path = script(tmp_path, HANGS)
    pid_file = tmp_path / "child.pid"
    spec = BenchmarkSpec(name="hang", kind="command", timeout=1.0,
                         command=(sys.executable, str(path), str(pid_file)))
    t0 = time.monotonic()
    out = run(spec, tmp_path)
    assert time.monotonic() - t0 < 10
    assert out.status == "timeout"
    assert out.exit_code is None
    assert 1.0 <= out.duration < 10
    assert "killed after 1 s (timeout)" in out.stderr_tail
    child = int(pid_file.read_text())
    assert wait_dead(child), f"grandchild {child} survived the timeout"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to see processes")
def test_processes_left_behind_by_a_finished_run_are_killed(tmp_path):
    path = script(tmp_path, """\
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open(sys.argv[1], "w").write(str(child.pid))
        print(2.0)
    """)
    pid_file = tmp_path / "child.pid"
    out = run(BenchmarkSpec(name="b", kind="command", command=(sys.executable, str(path), str(pid_file))), tmp_path)
    assert out.status == "ok"
    assert wait_dead(int(pid_file.read_text()))


def test_statuses_are_the_model_statuses():
    assert set(RUN_STATUSES) == {"ok", "failed", "crashed", "timeout", "garbage"}


def test_parse_samples_rejects_unknown_format():
    with pytest.raises(ValueError, match="`fmt` must be"):
        parse_samples("1", "csv")


def test_with_note_keeps_the_note_within_the_limit():
    text = with_note("e" * 5000, "exit status 1", limit=100)
    assert len(text) <= 100 and text.endswith("\n[regbench] exit status 1")
    assert with_note("abc", None) == "abc"


# ------------------------------------------------------------------------------- worker
@pytest.fixture
def tree(tmp_path):
    """A version's tree with a Python benchmark module that prints and shadows a regbench name."""
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "bench.py").write_text(textwrap.dedent("""\
        import os
        print("import-time noise on stdout")
        with open(os.path.join(os.getcwd(), "imported-from.txt"), "w") as f:
            f.write(os.getcwd())

        def work():
            print("noise")
            return sum(range(300))

        def broken():
            raise RuntimeError("the benchmark is broken")
    """))
    # Named like a module of regbench.run: the tree must win over the worker's own folder.
    (tree / "execute.py").write_text("def work():\n    return 1\n")
    return tree


def test_python_benchmark_gets_calibrated_per_call_times(tree):
    spec = BenchmarkSpec(name="py", kind="python", target="pkg.bench:work", iterations=5, warmup=2,
                         min_time=0.002)
    out = run(spec, tree)
    assert out.status == "ok", out.stderr_tail
    assert out.samples.shape == (7,)
    assert np.all(out.samples > 0)
    # Calibrated: many calls per timed batch, so one call is far below min_time.
    assert np.median(out.samples) < 0.002 / 4
    assert (tree / "imported-from.txt").read_text() == str(tree.resolve())


def test_python_benchmark_tree_shadows_regbench_modules(tree):
    spec = BenchmarkSpec(name="py", kind="python", target="execute:work", iterations=2, min_time=0.001)
    out = run(spec, tree)
    assert out.status == "ok", out.stderr_tail


@pytest.mark.parametrize(("target", "message"), [
    ("pkg.bench:broken", "RuntimeError: the benchmark is broken"),
    ("no_such_module:f", "ModuleNotFoundError"),
    ("pkg.bench:missing", "AttributeError"),
])
def test_python_benchmark_errors_are_failed_runs(tree, target, message):
    out = run(BenchmarkSpec(name="py", kind="python", target=target, iterations=2, min_time=0.001), tree)
    assert out.status == "failed"
    assert out.exit_code == 1
    assert message in out.stderr_tail


class FakeClock:
    """A timer that advances 100 microseconds per call of :meth:`work` (an injected clock)."""

    def __init__(self):
        self.calls = 0

    def work(self):
        self.calls += 1

    def __call__(self) -> float:
        return self.calls * 1e-4


def test_calibration_doubles_until_min_time():
    clock = FakeClock()
    loops, dt = worker.calibrate(clock.work, 0.01, timer=clock)
    assert loops == 128  # 64 calls last 6.4 ms < 10 ms; 128 calls last 12.8 ms
    assert dt == pytest.approx(0.0128)
    assert clock.calls == 255  # 1 + 2 + ... + 128


def test_measure_does_not_count_calibration_and_returns_per_call_times():
    clock = FakeClock()
    loops, values = worker.measure(clock.work, iterations=4, warmup=1, min_time=0.01, timer=clock)
    assert loops == 128
    assert values == pytest.approx([1e-4] * 5)
    assert clock.calls == 255 + 5 * 128


def test_slow_function_gets_one_call_per_batch():
    clock = FakeClock()
    slow = lambda: [clock.work() for _ in range(300)]  # noqa: E731  (30 ms a call)
    assert worker.calibrate(slow, 0.01, timer=clock)[0] == 1


def test_worker_target_must_name_a_function():
    with pytest.raises(ValueError, match="module:function"):
        worker.load_target("just_a_module")


# ------------------------------------------------------------------- reaping with wait4
@pytest.mark.parametrize("spawner", [False, True])
@pytest.mark.parametrize("pidfd", [True, False])
def test_run_process_reaps_with_wait4_and_reports_rusage(tmp_path, monkeypatch, pidfd, spawner):
    from regbench.run import process

    if not pidfd:  # an old kernel or not Linux: reaped while waiting, by polling wait4
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    with open(tmp_path / "out", "w+b") as out:
        done = process.run_process([sys.executable, "-c", "import sys; sum(range(10**6)); sys.exit(4)"],
                                   cwd=tmp_path, env=os.environ, timeout=30, stdout=out, stderr=out,
                                   spawner=spawner)
        assert done.returncode == 4 and not done.timed_out
        assert 0 < done.cpu_time <= done.duration + 0.05
        assert (done.max_rss > 1e6) if spawner else done.max_rss is None
        hung = process.run_process([sys.executable, "-c", "import time; time.sleep(30)"], cwd=tmp_path,
                                   env=os.environ, timeout=0.3, stdout=out, stderr=out, spawner=spawner)
        assert hung.timed_out and hung.returncode is None and hung.cpu_time is not None
        assert 0.3 <= hung.duration < 10


def test_spawner_reports_the_process_s_own_peak_memory_not_regbench_s(tmp_path):
    from regbench.run import process

    ballast = bytearray(b"\x01") * 200_000_000  # regbench grown big: a forked child starts at this peak
    with open(tmp_path / "out", "w+b") as out:
        spawned = process.run_process(["true"], cwd=tmp_path, env=os.environ, timeout=30, stdout=out,
                                      stderr=out, spawner=True)
    assert spawned.returncode == 0 and spawned.max_rss < 50e6
    del ballast


def test_spawner_passes_the_environment_exactly_and_reports_start_errors(tmp_path):
    from regbench.run import process

    env = {"PATH": os.environ["PATH"], "ONLY": "this", "EMPTY": "", "EQ": "a=b"}
    with open(tmp_path / "out", "w+b") as out, open(tmp_path / "err", "w+b") as err:
        # `env` prints its environment; a Python would add LC_CTYPE to its own (PEP 538).
        done = process.run_process(["env"], cwd=tmp_path, env=env, timeout=30, stdout=out, stderr=err,
                                   spawner=True)
        assert done.returncode == 0
        out.seek(0)
        assert dict(line.split("=", 1) for line in out.read().decode().splitlines()) == env
        missing = process.run_process([str(tmp_path / "nothing")], cwd=tmp_path, env=env, timeout=30,
                                      stdout=out, stderr=err, spawner=True)
        assert missing.start_error == f"cannot start {str(tmp_path / 'nothing')!r}: No such file or directory"
        crash = process.run_process(["sh", "-c", "kill -SEGV $$"], cwd=tmp_path, env=env, timeout=30,
                                    stdout=out, stderr=err, spawner=True)
        assert crash.returncode == -signal.SIGSEGV


def test_a_run_inherits_only_the_documented_variables_and_what_the_benchmark_names(tmp_path):
    from regbench.run.execute import INHERITED_ENV, run_environment

    outside = {"PATH": "/bin", "HOME": "/home/x", "LC_ALL": "C", "OMP_NUM_THREADS": "8",
               "CI_SECRET_TOKEN": "hunter2", "MYAPP_MODE": "fast"}
    spec = BenchmarkSpec(name="b", kind="command", command=("true",), env={"PYTHONHASHSEED": "0"})
    env = run_environment(spec, run_index=3, version="v1", inherited=outside)
    assert {"PATH", "HOME", "LC_ALL"} <= set(env) and "PATH" in INHERITED_ENV
    assert "OMP_NUM_THREADS" not in env and "CI_SECRET_TOKEN" not in env and "MYAPP_MODE" not in env
    assert env["PYTHONHASHSEED"] == "0" and env["REGBENCH_RUN_INDEX"] == "3" and env["REGBENCH_VERSION"] == "v1"
    wider = BenchmarkSpec(name="b", kind="command", command=("true",), pass_env=("MYAPP_*", "OMP_NUM_THREADS"),
                          env={"MYAPP_MODE": "slow"})
    env = run_environment(wider, run_index=0, version="v1", inherited=outside)
    assert env["OMP_NUM_THREADS"] == "8" and env["MYAPP_MODE"] == "slow"  # `env` wins over what is inherited
    assert "CI_SECRET_TOKEN" not in env


def test_a_real_run_does_not_see_a_variable_it_did_not_ask_for(tmp_path, monkeypatch):
    monkeypatch.setenv("REGBENCH_TEST_LEAK", "yes")
    code = "import os\nfor _ in range(3): print(1.0 if 'REGBENCH_TEST_LEAK' in os.environ else 2.0)\n"
    spec = BenchmarkSpec(name="b", kind="command", command=(sys.executable, "-c", code), iterations=3)
    assert execute_run(spec, tree=tmp_path, python=sys.executable, run_index=0, version="v").samples.tolist() == [2.0] * 3
    asked = BenchmarkSpec(name="b", kind="command", command=(sys.executable, "-c", code), iterations=3,
                          pass_env=("REGBENCH_TEST_*",))
    assert execute_run(asked, tree=tmp_path, python=sys.executable, run_index=0, version="v").samples.tolist() == [1.0] * 3


def test_pass_env_is_validated_with_the_key_named():
    from regbench.config import parse_config
    from regbench.errors import ConfigError

    base = {"benchmark": [{"name": "b", "command": ["true"]}]}
    assert parse_config({**base, "defaults": {"pass_env": ["OMP_*"]}}).benchmarks[0].pass_env == ("OMP_*",)
    for bad in ("OMP_NUM_THREADS", ["A=1"], [""], [3]):
        with pytest.raises(ConfigError, match="`pass_env` must be a list of variable names"):
            parse_config({"benchmark": [{"name": "b", "command": ["true"], "pass_env": bad}]})


def test_the_local_executor_runs_requests_in_order_and_says_when_each_starts(tmp_path):
    from regbench.errors import ConfigError
    from regbench.run.core import RunRequest, Trial
    from regbench.run.executor import LocalExecutor, get_executor

    spec = BenchmarkSpec(name="b", kind="command", iterations=2,
                         command=(sys.executable, "-c", "import os\nfor _ in range(2): print(os.environ['REGBENCH_RUN_INDEX'])"))
    requests = [RunRequest(spec, Trial("b", "v1", k), tmp_path, sys.executable) for k in (2, 0, 1)]
    started = []
    with get_executor("local") as executor:
        assert isinstance(executor, LocalExecutor)
        done = list(executor.map(requests, started=lambda r: started.append(r.trial.run_index)))
    assert started == [2, 0, 1] and [r.trial.run_index for r, _ in done] == [2, 0, 1]
    assert [o.samples.tolist() for _, o in done] == [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    with pytest.raises(ConfigError, match="unknown executor 'grid'"):
        get_executor("grid")
