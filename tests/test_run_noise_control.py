"""Noise control of runs (seed 003 s.3, seed 001 s.3.1): pinning, ASLR, ramdisk, environment
size and the quiet-system gate, on real processes; settings from regbench.toml and the CLI, and
their record in the campaign's plan."""

from __future__ import annotations

import json
import math
import os
import sys
import textwrap
from pathlib import Path

import pytest
from regbench.cli.main import main
from regbench.config import NoiseControl, noise_control, parse_config, parse_cpu_list
from regbench.errors import ConfigError
from regbench.run import noise, quiet, ramdisk
from regbench.run.campaign import run_campaign
from regbench.run.execute import execute_run
from regbench.store import Store

PY = sys.executable
LINUX = sys.platform.startswith("linux")
needs_linux = pytest.mark.skipif(not LINUX, reason="Linux only (sched_setaffinity, personality, /proc)")

#: A benchmark that prints one sample and writes what it saw of its process to seen.json (in
#: its cwd, or in $SEEN_DIR when set).
PROBE = """\
import json, os, sys
stack = [l.split()[0] for l in open("/proc/self/maps") if l.rstrip().endswith("[stack]")]
seen = {
    "stack": stack[0] if stack else None,
    "personality": int(open("/proc/self/personality").read(), 16),
    "cpus": sorted(os.sched_getaffinity(0)),
    "cwd": os.getcwd(),
    "env_bytes": sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in os.environ.items()),
    "files": sorted(os.listdir(".")),
}
where = os.environ.get("SEEN_DIR", ".")
name = "seen-%s-%s.json" % (os.environ["REGBENCH_VERSION"], os.environ["REGBENCH_RUN_INDEX"])
with open(os.path.join(where, name), "w") as f:
    json.dump(seen, f)
open("written-by-the-run", "w").close()
print(1.0)
"""


@pytest.fixture
def tree(tmp_path) -> Path:
    tree = tmp_path / "tree"
    (tree / "bench").mkdir(parents=True)
    (tree / "bench" / "probe.py").write_text(PROBE)
    (tree / "bench" / "data.txt").write_text("data")
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tree / ".regbench").mkdir()
    (tree / ".regbench" / "results.db").write_text("not to be copied")
    return tree


def probe_spec(**kw):
    from regbench.config import BenchmarkSpec

    return BenchmarkSpec(name=kw.pop("name", "probe"), kind="command", command=(PY, "probe.py"),
                         cwd=kw.pop("cwd", "bench"), **kw)


def probe(tree: Path, noise_: NoiseControl | None, *, run_index=0, version="v1", seen_dir: Path | None = None,
          spec=None) -> dict:
    spec = spec or probe_spec(env={"SEEN_DIR": str(seen_dir)} if seen_dir else {})
    out = execute_run(spec, tree=tree, python=PY, run_index=run_index, version=version, noise=noise_)
    assert out.status == "ok", out.stderr_tail
    where = seen_dir or tree / "bench"
    return json.loads((where / f"seen-{version}-{run_index}.json").read_text())


# ----------------------------------------------------------------------------- config
def test_noise_is_off_by_default():
    cfg = parse_config({})
    assert cfg.noise == NoiseControl()
    assert not cfg.noise.active
    assert cfg.noise.to_json() == {"pin": None, "aslr": True, "ramdisk": False, "env_size": None,
                                   "quiet_load": None}


def test_noise_table_is_parsed():
    cfg = parse_config({"noise": {"pin": [1], "aslr": False, "ramdisk": True, "env_size": 4096,
                                  "quiet_load": 0.5, "quiet_wait": 30, "quiet": "warn"}})
    assert cfg.noise == NoiseControl(pin=(1,), aslr=False, ramdisk=True, env_size=4096, quiet_load=0.5,
                                     quiet_wait=30.0, quiet="warn")
    assert cfg.noise.active
    assert cfg.noise.to_json()["quiet"] == "warn"


@pytest.mark.parametrize(("value", "cpus"), [
    ([1], (1,)), (2, (2,)), ("0,1", (0, 1)), ("1-3", (1, 2, 3)), ("0-1, 4", (0, 1, 4)), ([3, 1, 3], (1, 3)),
    ("none", None),
])
def test_cpu_lists(value, cpus):
    assert parse_cpu_list(value) == cpus


@pytest.mark.parametrize(("table", "match"), [
    ({"pin": "3-1"}, r"\[noise\] `pin` must be a list of CPU numbers or a CPU list such as \"0,1\""),
    ({"pin": []}, "`pin` must be a list of CPU numbers"),
    ({"pin": [-1]}, "`pin` must be a list of CPU numbers"),
    ({"pin": "a"}, "`pin` must be"),
    ({"aslr": "no"}, r"\[noise\] `aslr` must be true or false, got 'no'"),
    ({"ramdisk": 1}, "`ramdisk` must be true or false"),
    ({"env_size": 0}, "`env_size` must be a positive integer, got 0"),
    ({"env_size": 10.5}, "`env_size` must be a positive integer"),
    ({"quiet_load": 0}, "`quiet_load` must be a positive number"),
    ({"quiet_wait": -1}, "`quiet_wait` must be a non-negative number of seconds"),
    ({"quiet": "sleep"}, "`quiet` must be one of wait, warn, got 'sleep'"),
    ({"pinning": [1]}, r"\[noise\] `pinning`: unknown key"),
])
def test_bad_noise_settings_are_one_line_errors(tmp_path, table, match):
    with pytest.raises(ConfigError, match=match) as info:
        parse_config({"noise": table}, path=tmp_path / "regbench.toml")
    assert str(info.value).startswith(str(tmp_path / "regbench.toml") + ": ")
    assert "\n" not in str(info.value)


def test_command_line_overrides_the_file():
    base = NoiseControl(pin=(0,), aslr=False, quiet_load=0.5)
    got = noise_control({"pin": "none", "ramdisk": True, "quiet_wait": 5.0}, base=base,
                        label=lambda k: "--" + k.replace("_", "-"))
    assert got == NoiseControl(pin=None, aslr=False, ramdisk=True, quiet_load=0.5, quiet_wait=5.0)
    with pytest.raises(ConfigError, match="^--pin must be"):
        noise_control({"pin": "x"}, label=lambda k: "--" + k)


@needs_linux
def test_pinning_a_cpu_regbench_cannot_use_is_an_error():
    bad = max(os.sched_getaffinity(0)) + 1000
    with pytest.raises(ConfigError, match=rf"`pin` \(--pin\): CPU {bad} is not available to regbench "
                                          r"\(it may use CPUs [0-9,-]+\)"):
        noise.check_noise(NoiseControl(pin=(bad,)))


def test_no_tmpfs_is_an_error():
    mounts = "/dev/sda1 / ext4 rw 0 0\n"
    with pytest.raises(ConfigError, match=r"`ramdisk` \(--ramdisk\): no tmpfs to run in"):
        noise.check_noise(NoiseControl(ramdisk=True), mounts_text=mounts)


def test_tmpfs_is_found_from_proc_mounts(tmp_path):
    shm = tmp_path / "shm"
    run = tmp_path / "run user"
    shm.mkdir()
    run.mkdir()
    mounts = (f"/dev/sda1 / ext4 rw 0 0\n"
              f"tmpfs {shm} tmpfs rw,nosuid,nodev,noexec 0 0\n"
              f"tmpfs {str(run).replace(' ', chr(92) + '040')} tmpfs rw,nosuid,nodev 0 0\n")
    assert ramdisk.find_tmpfs([str(shm), str(run)], mounts_text=mounts) == run  # noexec is no use
    assert ramdisk.find_tmpfs([str(shm)], mounts_text=mounts) is None
    assert ramdisk.on_tmpfs(run / "a" / "b", mounts_text=mounts)
    assert not ramdisk.on_tmpfs(tmp_path, mounts_text=mounts)


# ---------------------------------------------------------------------- pin and ASLR
@needs_linux
def test_pinned_run_sees_only_its_cpus(tree):
    cpu = max(os.sched_getaffinity(0))
    assert probe(tree, NoiseControl(pin=(cpu,)))["cpus"] == [cpu]
    assert probe(tree, None, run_index=1)["cpus"] == sorted(os.sched_getaffinity(0))
    assert os.sched_getaffinity(0) != {cpu} or len(os.sched_getaffinity(0)) == 1  # regbench not pinned


@needs_linux
def test_aslr_off_sets_the_personality_flag_and_fixes_the_layout(tree):
    off = NoiseControl(aslr=False)
    a, b = probe(tree, off, run_index=0), probe(tree, off, run_index=1)
    assert a["personality"] & noise.ADDR_NO_RANDOMIZE
    assert a["stack"] == b["stack"]
    c, d = probe(tree, None, run_index=2), probe(tree, None, run_index=3)
    assert not c["personality"] & noise.ADDR_NO_RANDOMIZE
    if Path("/proc/sys/kernel/randomize_va_space").read_text().strip() != "0":
        assert c["stack"] != d["stack"]


@needs_linux
def test_pin_and_aslr_together(tree):
    cpu = min(os.sched_getaffinity(0))
    seen = probe(tree, NoiseControl(pin=(cpu,), aslr=False))
    assert seen["cpus"] == [cpu] and seen["personality"] & noise.ADDR_NO_RANDOMIZE


@needs_linux
def test_controls_reach_a_process_started_by_the_spawner(tree):
    """With measures, the benchmark is started by a small spawner process: pinning, ASLR and the
    environment's size must still be the benchmark's."""
    cpu = max(os.sched_getaffinity(0))
    size = noise.environment_size(os.environ) + 2500
    seen = probe(tree, NoiseControl(pin=(cpu,), aslr=False, env_size=size),
                 spec=probe_spec(measures=("cpu", "maxrss")))
    assert seen["cpus"] == [cpu]
    assert seen["personality"] & noise.ADDR_NO_RANDOMIZE
    assert seen["env_bytes"] == size


# ---------------------------------------------------------------------------- env_size
def test_environment_is_padded_to_the_exact_size(tree):
    size = noise.environment_size(os.environ) + 2000
    short = probe(tree, NoiseControl(env_size=size), version="v1")
    long = probe(tree, NoiseControl(env_size=size), version="a-much-longer-version-name", run_index=12)
    assert short["env_bytes"] == long["env_bytes"] == size
    unpadded = probe(tree, None, version="v2")
    assert unpadded["env_bytes"] < size


def test_pad_environment():
    env = {"A": "1", "BB": "22", noise.PAD_VARIABLE: "old"}
    padded = noise.pad_environment(env, 100)
    assert noise.environment_size(padded) == 100
    assert padded["A"] == "1" and env[noise.PAD_VARIABLE] == "old"
    exact = noise.environment_size({"A": "1", "BB": "22"}) + len(noise.PAD_VARIABLE) + 2
    assert noise.pad_environment(env, exact)[noise.PAD_VARIABLE] == ""
    with pytest.raises(ConfigError, match=rf"`env_size` \(--env-size\) is {exact - 1} bytes, but the run's "
                                          rf"environment needs {exact}"):
        noise.pad_environment(env, exact - 1)


# ----------------------------------------------------------------------------- ramdisk
@needs_linux
def test_ramdisk_run_works_on_a_fresh_tmpfs_copy_removed_after(tree, tmp_path):
    if ramdisk.find_tmpfs() is None:
        pytest.skip("no tmpfs here")
    seen_dir = tmp_path / "seen"
    seen_dir.mkdir()
    seen = probe(tree, NoiseControl(ramdisk=True), seen_dir=seen_dir)
    cwd = Path(seen["cwd"])
    assert ramdisk.on_tmpfs(cwd) and cwd.name == "bench"
    assert seen["files"] == ["data.txt", "probe.py"]  # a fresh copy of the cwd only
    assert not cwd.exists() and not cwd.parent.exists()  # removed after the run
    assert not (tree / "bench" / "written-by-the-run").exists()  # the tree is left alone


@needs_linux
def test_ramdisk_copy_of_the_whole_tree_leaves_out_git_and_regbench(tree):
    base = ramdisk.find_tmpfs()
    if base is None:
        pytest.skip("no tmpfs here")
    copy = ramdisk.ramdisk_copy(tree, [".", "bench"], base=base)
    try:
        assert sorted(p.name for p in copy.iterdir()) == ["bench"]
        assert (copy / "bench" / "data.txt").read_text() == "data"
    finally:
        ramdisk.remove_tree(copy)
    assert not copy.exists()


def test_ramdisk_copy_that_does_not_fit_is_an_error(tree, tmp_path, monkeypatch):
    monkeypatch.setattr(ramdisk.shutil, "disk_usage", lambda p: type("U", (), {"free": 10})())
    with pytest.raises(ConfigError, match=r"`ramdisk`: .* needs 0 MiB, but only 0 MiB are free"):
        ramdisk.ramdisk_copy(tree, ["bench"], base=tmp_path)


def test_remove_tree_removes_read_only_folders(tmp_path):
    d = tmp_path / "x" / "ro"
    d.mkdir(parents=True)
    (d / "f").write_text("1")
    d.chmod(0o500)
    ramdisk.remove_tree(tmp_path / "x")
    assert not (tmp_path / "x").exists()


# -------------------------------------------------------------------------- quiet gate
class FakeMachine:
    """/proc/stat and the load average of a machine whose busy share follows ``busy`` per check."""

    def __init__(self, busy: list[float], load: float = 0.0):
        self.busy = list(busy)
        self.load = load
        self.now = 0.0
        self.ticks = [0, 0]  # busy, idle
        self.slept: list[float] = []
        self._reads = 0

    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s

    def read_stat(self) -> str:
        self._reads += 1
        if self._reads % 2 == 0:  # the second snapshot of a measurement: advance by 100 ticks
            share = self.busy[min(self._reads // 2 - 1, len(self.busy) - 1)]
            self.ticks[0] += round(100 * share)
            self.ticks[1] += 100 - round(100 * share)
        b, i = self.ticks
        return f"cpu  {b} 0 0 {i} 0 0 0 0 0 0\ncpu0 {b} 0 0 {i} 0 0 0 0 0 0\n"

    def read_load(self):
        return (self.load, 0.0, 0.0)

    def gate(self, limit=0.5, **kw) -> quiet.QuietGate:
        return quiet.QuietGate(limit, clock=self.clock, sleep=self.sleep, read_stat=self.read_stat,
                               read_load=self.read_load, own_load=quiet.OwnLoad(), ncpu=2, **kw)


def test_quiet_machine_passes_at_once_without_a_note():
    m = FakeMachine([0.1], load=0.4)
    result = m.gate().check()
    assert result.passed and result.checks == 1 and result.note is None
    assert result.last == quiet.Quietness(busy=0.1, load=0.2)
    assert m.slept == [0.2]  # the two snapshots only


def test_gate_waits_until_quiet_and_says_how_long():
    m = FakeMachine([0.9, 0.8, 0.2])
    result = m.gate(wait=60, poll=1.0).check()
    assert result.passed and result.checks == 3
    assert result.waited == pytest.approx(0.2 * 3 + 1.0 * 2)
    assert result.note == ("quiet gate: waited 2.6 s for a quiet machine (20% of the CPUs busy, "
                           "load 0.00 per CPU; limit 0.5)")


def test_gate_gives_up_after_quiet_wait_and_the_run_goes_ahead():
    m = FakeMachine([1.0])
    result = m.gate(wait=5, poll=1.0).check()
    assert not result.passed
    assert result.waited <= 5
    assert m.now <= 5
    assert "not quiet after waiting" in result.note and "100% of the CPUs busy" in result.note


def test_high_load_average_alone_keeps_the_gate_shut():
    m = FakeMachine([0.0], load=3.0)
    result = m.gate(wait=2).check()
    assert not result.passed and result.last.load == 1.5


def test_warn_mode_checks_once():
    m = FakeMachine([1.0])
    result = m.gate(mode="warn").check()
    assert not result.passed and result.checks == 1
    assert result.note.endswith('ran anyway (quiet = "warn")')


def test_gate_watches_the_pinned_cpus_only():
    text0 = "cpu  100 0 0 100 0 0 0 0\ncpu0 100 0 0 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\n"
    assert quiet.cpu_ticks(text0) == (100, 200)
    assert quiet.cpu_ticks(text0, [1]) == (0, 100)
    assert quiet.cpu_ticks(text0, [0, 1]) == (100, 200)
    # iowait is idle; steal (another guest on the host) is busy.
    assert quiet.cpu_ticks("cpu 0 0 0 10 5 0 0 7 3 0\n") == (7, 22)


def test_own_runs_are_left_out_of_the_load_average():
    own = quiet.OwnLoad()
    own.add(0.0, 60.0, 60.0)  # one busy process for the last minute
    assert own.estimate(60.0) == pytest.approx(1 - math.exp(-1))
    own.add(60.0, 70.0, 0.0)  # a sleeping one adds nothing
    assert own.estimate(60.0) == pytest.approx(0.6321, abs=1e-4)
    m = FakeMachine([0.0], load=1.0)
    gate = m.gate()
    gate.own_load = own
    m.now = 60.0
    own_then = math.exp(-0.2 / 60) - math.exp(-60.2 / 60)  # measured after the 0.2 s interval
    assert gate.measure().load == pytest.approx((1.0 - own_then) / 2)


@needs_linux
def test_gate_note_lands_in_the_stderr_tail_before_the_status_note(tree, monkeypatch):
    monkeypatch.setattr(quiet.QuietGate, "check",
                        lambda self: quiet.GateResult(False, 3.0, 4, quiet.Quietness(0.9, 0.7), self.limit, self.mode))
    ok = execute_run(probe_spec(), tree=tree, python=PY, run_index=0, version="v1",
                     noise=NoiseControl(quiet_load=0.5, quiet_wait=3))
    assert ok.status == "ok"
    assert ok.stderr_tail.endswith("[regbench] quiet gate: the machine was not quiet after waiting 3.0 s "
                                   "(90% of the CPUs busy, load 0.70 per CPU; limit 0.5); ran anyway")
    from regbench.config import BenchmarkSpec

    failing = BenchmarkSpec(name="f", kind="command", command=(PY, "-c", "raise SystemExit(2)"))
    out = execute_run(failing, tree=tree, python=PY, run_index=0, version="v1",
                      noise=NoiseControl(quiet_load=0.5, quiet_wait=3))
    assert out.status == "failed"
    assert "[regbench] quiet gate: the machine was not quiet" in out.stderr_tail
    assert out.stderr_tail.endswith("\n[regbench] exit status 2")


def test_no_gate_no_note(tree):
    out = execute_run(probe_spec(), tree=tree, python=PY, run_index=0, version="v1", noise=NoiseControl())
    assert "[regbench]" not in out.stderr_tail


# ------------------------------------------------------------------------------ campaign
def write_config(root: Path, noise_table: str, runs: int = 2) -> Path:
    cfg = root / "regbench.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [project]
        name = "p"
        [[benchmark]]
        name = "probe"
        command = [{json.dumps(PY)}, "probe.py"]
        cwd = "bench"
        runs = {runs}
        env = {{ SEEN_DIR = {json.dumps(str(root / "seen"))} }}
        [noise]
        {noise_table}
    """))
    (root / "seen").mkdir(exist_ok=True)
    return cfg


@needs_linux
def test_campaign_records_noise_and_runs_each_version_from_one_ramdisk_copy(tree):
    if ramdisk.find_tmpfs() is None:
        pytest.skip("no tmpfs here")
    from regbench.config import load_config

    cpu = max(os.sched_getaffinity(0))
    size = noise.environment_size(os.environ) + 3000
    cfg = load_config(write_config(tree, f"pin = [{cpu}]\naslr = false\nramdisk = true\nenv_size = {size}"))
    with Store(tree / "results.db") as store:
        result = run_campaign(cfg, store, seed=3, machine="m")
        assert result.counts["ok"] == 2
        plan = store.campaigns()[0].plan
    assert plan["noise"] == {"pin": [cpu], "aslr": False, "ramdisk": True, "env_size": size,
                             "quiet_load": None, "ramdisk_dir": str(ramdisk.find_tmpfs()),
                             "system_aslr": Path("/proc/sys/kernel/randomize_va_space").read_text().strip()}
    seen = [json.loads(p.read_text()) for p in sorted((tree / "seen").glob("seen-*.json"))]
    assert len(seen) == 2
    assert seen[0]["cwd"] == seen[1]["cwd"]  # one copy per version and campaign
    assert ramdisk.on_tmpfs(seen[0]["cwd"]) and not Path(seen[0]["cwd"]).exists()
    # run 1 (RMIT round 1) sees what run 0 left in the shared copy, as runs do in a tree; the
    # tree itself is left alone
    assert "written-by-the-run" not in seen[0]["files"] and "written-by-the-run" in seen[1]["files"]
    assert not (tree / "bench" / "written-by-the-run").exists()
    for s in seen:
        assert s["cpus"] == [cpu] and s["personality"] & noise.ADDR_NO_RANDOMIZE
        assert s["env_bytes"] == size
    assert seen[0]["stack"] == seen[1]["stack"]


def test_campaign_refuses_an_env_size_that_is_too_small_before_writing_anything(tree):
    from regbench.config import load_config

    cfg = load_config(write_config(tree, "env_size = 100"))
    with Store(tree / "results.db") as store:
        with pytest.raises(ConfigError, match=r"benchmark 'probe' at version .*: \[noise\] `env_size`"):
            run_campaign(cfg, store, seed=1, machine="m")
        assert store.campaigns() == []


def test_campaign_noise_argument_overrides_the_config(tree):
    from regbench.config import load_config

    cfg = load_config(write_config(tree, "quiet_load = 100\nquiet = \"warn\"", runs=1))
    with Store(tree / "results.db") as store:
        run_campaign(cfg, store, seed=1, machine="m", noise=NoiseControl())
        run_campaign(cfg, store, seed=1, machine="n")
        plans = [c.plan["noise"] for c in store.campaigns()]
    assert plans[0]["quiet_load"] is None
    assert plans[1]["quiet_load"] == 100 and plans[1]["quiet"] == "warn" and plans[1]["quiet_wait"] == 60


@needs_linux
def test_cli_options_reach_the_campaign(tree, capsys):
    cfg = write_config(tree, "", runs=1)
    cpu = min(os.sched_getaffinity(0))
    args = ["--config", str(cfg), "--store", str(tree / "r.db"), "run"]
    assert main([*args, "--pin", str(cpu), "--no-aslr", "--env-size", str(noise.environment_size(os.environ) + 4000),
                 "--quiet-load", "50", "--quiet-wait", "0", "--quiet", "warn"]) == 0
    with Store(tree / "r.db") as store:
        plan = store.campaigns()[0].plan["noise"]
    assert plan["pin"] == [cpu] and plan["aslr"] is False and plan["quiet_load"] == 50
    assert plan["quiet_wait"] == 0 and plan["quiet"] == "warn"
    capsys.readouterr()
    assert main([*args, "--pin", "9999"]) == 3
    err = capsys.readouterr().err
    assert "CPU 9999 is not available to regbench" in err and len(err.strip().splitlines()) == 1
    assert main([*args, "--pin", "x-y"]) == 2  # a usage error: the value alone is wrong
    assert "Error: --pin must be a list of CPU numbers" in capsys.readouterr().err


def test_remove_tree_never_changes_the_mode_of_the_folder_holding_it(tmp_path):
    # A tree already removed by someone else: rmtree fails on the tree itself, and the retry must
    # not "fix" its parent (run as root on /dev/shm, that once made the tmpfs 0700 for everyone).
    parent = tmp_path / "shm"
    parent.mkdir()
    parent.chmod(0o1777)
    ramdisk.remove_tree(parent / "gone")
    assert (parent.stat().st_mode & 0o7777) == 0o1777
    inner = parent / "tree" / "sub"
    inner.mkdir(parents=True)
    (inner / "f").write_text("x")
    inner.chmod(0o500)
    ramdisk.remove_tree(parent / "tree")
    assert not (parent / "tree").exists() and (parent.stat().st_mode & 0o7777) == 0o1777
