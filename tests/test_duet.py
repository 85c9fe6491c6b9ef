"""Duet runs (regbench.run.duet): A and B of a pair at the same time, each pinned to its own CPU.

Real processes: the benchmark reads its own ``Cpus_allowed_list`` from ``/proc/self/status``,
records it, and (in the duet test) waits for the partner of its pair to have started, which only
happens when the two really run at the same time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from regbench.config import BenchmarkSpec, NoiseControl, load_config
from regbench.demo_project import create_step_repo
from regbench.run.duet import DuetCores, DuetExecutor, duet_cores
from regbench.run.sequential import SessionReporter, compare_live
from regbench.store import Store

SRC = str(Path(__file__).resolve().parents[1] / "src")

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity needs Linux")

# A benchmark that writes which CPUs it may run on, then (with DUET_WAIT) waits for the run of the
# other version with the same run index to have started: only a duet's partner starts in time.
PROGRAM = r"""
import os, pathlib, random, time
log = pathlib.Path(os.environ['DUET_LOG'])
v, i = os.environ['REGBENCH_VERSION'], os.environ['REGBENCH_RUN_INDEX']
cpus = [line.split(':', 1)[1].strip() for line in open('/proc/self/status') if line.startswith('Cpus_allowed_list')][0]
(log / f'{v}.{i}.cpus').write_text(cpus)
met = None
if os.environ.get('DUET_WAIT'):
    deadline = time.monotonic() + 20
    met = False
    while time.monotonic() < deadline:
        if len(list(log.glob(f'*.{i}.cpus'))) >= 2:
            met = True
            break
        time.sleep(0.002)
    (log / f'{v}.{i}.met').write_text(str(met))
level = float(open('level.txt').read())
r = random.Random(v + '/' + i)
run = r.lognormvariate(0, 0.02)
for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):
    print(level * run * r.lognormvariate(0, 0.02))
"""


def two_cpus() -> bool:
    return len(os.sched_getaffinity(0)) >= 2


def make_repo(path: Path, extra: str = 'pass_env = ["DUET_LOG", "DUET_WAIT"]\n') -> list[str]:
    return list(create_step_repo(path, commits=3, steps={3: 1.2}, program=PROGRAM, extra=extra).commits)


class Notes(SessionReporter):
    def __init__(self):
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)


@pytest.mark.skipif(not two_cpus(), reason="duet runs need two CPUs regbench may use")
def test_duet_runs_a_and_b_together_each_pinned_to_its_own_cpu(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shas = make_repo(repo)
    log = tmp_path / "log"
    log.mkdir()
    monkeypatch.setenv("DUET_LOG", str(log))
    monkeypatch.setenv("DUET_WAIT", "1")
    notes = Notes()
    config = load_config(repo / "regbench.toml")
    (res,) = compare_live(config, Store(tmp_path / "r.db"), shas[0], shas[-1], threshold=0.03, seed=3,
                          duet=True, reporter=notes)
    cores = duet_cores()
    assert notes.notes == [cores.describe()] and cores.usable
    assert res.pairing == "duet" and res.stopped == "settled" and res.verdict == "regression"
    assert 0.15 < res.decision.change < 0.25
    a, b = shas[0][:len(res.a)], shas[-1][:len(res.b)]
    assert (res.a, res.b) == (a, b)
    for i in range(res.pairs):
        # Each run saw one CPU, the two of a pair different ones; each found its partner running.
        pinned = {(log / f"{v}.{i}.cpus").read_text() for v in (a, b)}
        assert pinned == {str(c) for c in cores.cores}
        assert all((log / f"{v}.{i}.met").read_text() == "True" for v in (a, b))


@pytest.mark.skipif(not two_cpus(), reason="duet runs need two CPUs regbench may use")
def test_a_multithreaded_benchmark_runs_interleaved_saying_why(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shas = make_repo(repo, extra='pass_env = ["DUET_LOG"]\nthreads = 4\n')
    log = tmp_path / "log"
    log.mkdir()
    monkeypatch.setenv("DUET_LOG", str(log))
    notes = Notes()
    config = load_config(repo / "regbench.toml")
    (res,) = compare_live(config, Store(tmp_path / "r.db"), shas[0], shas[-1], threshold=0.03, seed=3,
                          duet=True, reporter=notes)
    assert notes.notes[-1] == ("b: duet mode cannot be used: benchmark 'b' is declared multi-threaded "
                               "(threads = 4); running interleaved pairs instead")
    assert res.pairing == "interleaved" and res.verdict == "regression"
    # Not pinned: every run may use every CPU regbench may.
    assert len({p.read_text() for p in log.glob("*.cpus")}) == 1


def test_one_allowed_cpu_falls_back_to_interleaved_pairs_and_says_so(tmp_path):
    repo = tmp_path / "repo"
    shas = make_repo(repo)
    log = tmp_path / "log"
    log.mkdir()
    cpu = min(os.sched_getaffinity(0))
    # The real CLI, in a process that may only use one CPU (as `taskset -c 0 regbench ...`).
    code = (f"import os, sys; os.sched_setaffinity(0, {{{cpu}}})\n"
            "from regbench.cli.main import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    env = dict(os.environ, PYTHONPATH=SRC, DUET_LOG=str(log), COLUMNS="200")
    proc = subprocess.run([sys.executable, "-c", code, "--store", str(tmp_path / "r.db"), "--config",
                           str(repo / "regbench.toml"), "compare", shas[0], shas[-1], "--run", "--duet", "--seed", "2",
                           "--format", "json"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr  # a 20% regression gates
    assert (f"duet mode cannot be used: only one CPU is available to regbench (CPU {cpu}); "
            "running interleaved pairs instead") in proc.stderr
    (row,) = json.loads(proc.stdout)
    assert row["pairing"] == "interleaved" and row["verdict"] == "regression"
    assert {p.read_text() for p in log.glob("*.cpus")} == {str(cpu)}


def test_duet_cores_says_why_not():
    assert duet_cores([BenchmarkSpec(name="t", kind="command", threads=2)]).reason == \
        "benchmark 't' is declared multi-threaded (threads = 2)"
    one = min(os.sched_getaffinity(0))
    assert duet_cores((), NoiseControl(pin=(one,))).reason == f"only one CPU is available to regbench (CPU {one})"
    with pytest.raises(ValueError, match="`cores` must name at least two CPUs"):
        DuetExecutor([0])


def test_run_duet_table_is_validated(tmp_path):
    from regbench.errors import ConfigError

    toml = tmp_path / "regbench.toml"
    toml.write_text('[project]\nname = "p"\n[run]\nduet = "yes"\n')
    with pytest.raises(ConfigError, match=r"\[run\] `duet` must be true or false"):
        load_config(toml)
    toml.write_text('[project]\nname = "p"\n[run]\nduet = true\n')
    assert load_config(toml).run.duet is True
    toml.write_text('[project]\nname = "p"\n[run]\nduets = true\n')
    with pytest.raises(ConfigError, match=r"\[run\]: unknown key `duets`"):
        load_config(toml)


# Each run lands in one of two levels 25% apart (decided per run, as a hash seed would), with
# small noise around its level: a bimodal benchmark made on purpose.  Its draws are seeded by the
# version's level and the run, not by the commit: the commit's hash depends on the interpreter's
# path written into regbench.toml, and so would the draws and the test's outcome on another
# checkout.
BIMODAL = r"""
import os, random
text = open('level.txt').read()
level = float(text)
r = random.Random(text + '/' + os.environ['REGBENCH_RUN_INDEX'])
run = (1.25 if r.random() < 0.5 else 1.0) * r.lognormvariate(0, 0.005)
for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):
    print(level * run * r.lognormvariate(0, 0.005))
"""


def test_by_mode_settles_a_bimodal_benchmark_that_plain_pairs_cannot(tmp_path):
    repo = tmp_path / "repo"
    shas = list(create_step_repo(repo, commits=3, steps={3: 1.05}, program=BIMODAL).commits)
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    (plain,) = compare_live(config, store, shas[0], shas[-1], threshold=0.03, seed=8, max_pairs=40)
    (moded,) = compare_live(config, store, shas[0], shas[-1], threshold=0.03, seed=8, max_pairs=40, by_mode=True)
    assert plain.stopped == "max-pairs" and plain.verdict == "inconclusive"
    assert moded.stopped == "settled" and moded.verdict == "regression" and 12 <= moded.pairs < 40
    assert moded.modes is not None and moded.modes.modes == 2 and 0.02 < moded.decision.change < 0.08
    assert 2 * len(moded.log_ratios) + moded.modes.unmatched == 2 * moded.pairs  # matches, not pairs
    assert moded.compared_by.startswith("mode by mode (interleaved runs)")


@pytest.mark.skipif(not two_cpus(), reason="duet runs need two CPUs regbench may use")
def test_bisect_runs_good_and_bad_as_duets_and_says_when_a_triple_cannot(tmp_path, monkeypatch):
    from regbench.run.bisect import bisect

    repo = tmp_path / "repo"
    shas = list(create_step_repo(repo, commits=6, steps={4: 1.2}, program=PROGRAM,
                                 extra='pass_env = ["DUET_LOG"]\n').commits)
    log = tmp_path / "log"
    log.mkdir()
    monkeypatch.setenv("DUET_LOG", str(log))
    notes = Notes()
    store = Store(tmp_path / "r.db")
    result = bisect(load_config(repo / "regbench.toml"), store, shas[0], shas[-1], benchmark="b", seed=4,
                    duet=True, reporter=notes)
    assert result.status == "found" and shas[3].startswith(result.culprit)
    assert result.total.pairing == "duet"
    cores = duet_cores()
    assert notes.notes[0] == cores.describe()
    if len(os.sched_getaffinity(0)) < 3:
        # Told once, however many steps ran interleaved.
        assert notes.notes[1:] == ["b: duet mode cannot be used: 3 versions at once need 3 CPUs; "
                                   "running interleaved groups instead"]
    pinned = {p.read_text() for p in log.glob("*.cpus")}
    assert {str(c) for c in cores.cores} <= pinned
    (campaign,) = store.campaigns()
    assert campaign.plan["duet"] == list(cores.cores)


@pytest.mark.skipif(not two_cpus(), reason="duet runs need two CPUs regbench may use")
def test_detect_confirm_follows_run_duet_of_the_configuration(tmp_path):
    from regbench.detect.base import Change
    from regbench.run.campaign import run_campaign
    from regbench.run.confirm import ConfirmOptions, confirm_changes
    from regbench.run.fingerprint import default_machine_name

    repo = create_step_repo(tmp_path / "repo", commits=4, steps={3: 1.25}, extra="[run]\nduet = true\n")
    config = load_config(repo.config_path)
    assert config.run.duet is True
    store = Store(tmp_path / "r.db")
    run_campaign(config, store, revisions=",".join(repo.commits), seed=1)
    names = {v.commit: v.name for v in store.versions()}
    versions = [names[c] for c in repo.commits]
    change = Change("b", "default", default_machine_name(), versions[2], versions[1], 0.25, 0.2, 0.3,
                    "regression", "test")
    notes = Notes()
    (conf,) = confirm_changes(config, store, [change], threshold=0.05, options=ConfirmOptions(seed=3),
                              reporter=notes)
    assert conf.status == "confirmed"
    assert notes.notes == [duet_cores().describe()]
    session = [c for c in store.campaigns() if "confirm" in c.plan]
    assert session and session[0].plan["duet"] == list(duet_cores().cores)


# A C loop whose length is read at build time from level.txt; it prints wall-clock seconds.
LOOP_C = r"""
#include <stdio.h>
#include <time.h>
int main(void) {
    volatile unsigned long h = 0;
    for (int r = 0; r < 3; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < (long)(LEVEL * 200000); i++) h = h * 31 + i;
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%.9f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9);
    }
    return h == 42;
}
"""


def c_repo(path: Path, levels: list[float]) -> list[str]:
    from regbench.demo_project import STEP_START, git_commit, git_init
    from datetime import timedelta

    git_init(path)
    toml = ('[project]\nname = "c"\nbuild = ["sh", "-c", "gcc -O1 -DLEVEL=$(cat level.txt) -o loop loop.c"]\n'
            '[defaults]\niterations = 3\nwarmup = 0\n[[benchmark]]\nname = "loop"\ncommand = ["./loop"]\n')
    return [git_commit(path, {"regbench.toml": toml, "loop.c": LOOP_C, "level.txt": repr(level)}, f"level {level}",
                       when=STEP_START + timedelta(hours=k)) for k, level in enumerate(levels)]


def test_instruction_counts_settle_a_comparison_and_say_they_are_not_time(tmp_path):
    import shutil

    from regbench.run import measures

    if shutil.which("gcc") is None:
        pytest.skip("needs gcc to build the benchmark")
    if measures.instruction_counter() is None:
        pytest.skip("no instruction counter here: perf cannot count instructions and valgrind is missing")
    repo = tmp_path / "repo"
    shas = c_repo(repo, [1.0, 1.0, 1.1])
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    (up,) = compare_live(config, store, shas[0], shas[2], threshold=0.03, seed=1, measure="instructions")
    assert up.measure == "instructions" and up.counter == measures.instruction_counter()
    assert up.stopped == "settled" and up.verdict == "regression" and 0.05 < up.decision.change < 0.15
    assert "instructions are not time" in up.compared_by
    (same,) = compare_live(config, store, shas[0], shas[1], threshold=0.03, seed=2, measure="instructions")
    assert same.stopped == "settled" and same.verdict == "no change" and abs(same.decision.change) < 0.01
    # The counts are stored as the measure's own series, beside the timed samples.
    assert {"loop", "loop:instructions"} <= {b.name for b in store.benchmarks()}
    with pytest.raises(Exception, match="`measure` must be 'instructions'"):
        compare_live(config, store, shas[0], shas[1], measure="cycles")


def test_location_low_compares_each_runs_floor(tmp_path, monkeypatch):
    from regbench.errors import ConfigError

    repo = tmp_path / "repo"
    shas = make_repo(repo)
    log = tmp_path / "log"
    log.mkdir()
    monkeypatch.setenv("DUET_LOG", str(log))
    config = load_config(repo / "regbench.toml")
    store = Store(tmp_path / "r.db")
    (res,) = compare_live(config, store, shas[0], shas[-1], threshold=0.03, seed=3, location="low")
    assert res.location == "low" and res.verdict == "regression" and 0.15 < res.decision.change < 0.25
    assert "10% quantiles" in res.compared_by
    (campaign,) = store.campaigns()
    assert campaign.plan["location"] == "low"
    with pytest.raises(ConfigError, match="`location` must be one of mean, median, low, got 'min'"):
        compare_live(config, store, shas[0], shas[-1], location="min")
    with pytest.raises(ConfigError, match="`location` applies to time, not to instruction counts"):
        compare_live(config, store, shas[0], shas[-1], location="low", measure="instructions")
    assert len(store.campaigns()) == 1  # refused before anything was written


def test_a_duet_that_takes_every_cpu_of_the_machine_says_what_that_costs():
    """On a machine of two CPUs a duet leaves none to anything else: one busy process then slows
    one run of a pair, which the duet does not cancel (measured: 6x the spread of interleaved
    pairs); the line that announces the duet says so, and only there."""
    spare = "it takes every CPU of this machine"
    assert spare in DuetCores((0, 1), spare=0).describe()
    assert spare not in DuetCores((0, 1), spare=2).describe()
    assert spare not in DuetCores((0, 1)).describe()
    assert spare not in DuetCores((), "only one CPU is available to regbench (CPU 0)").describe()
    cores = duet_cores()
    if cores.usable:
        assert (spare in cores.describe()) == ((os.cpu_count() or 0) <= 2)
