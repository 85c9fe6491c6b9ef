"""`regbench screen` end to end: real benchmark processes, a real SQLite store, resume after kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.config import load_config
from regbench.screening.base import get_design
from regbench.screening.campaign import plan_points, run_screen
from regbench.store import Store
from regbench.store import schema as t

PY = sys.executable

# Known truth: A (env) adds 3, B (argument) takes 2 away, C (template) adds 1, D does nothing;
# the noise is small, so the important options are A, B and C.
BENCH = """\
import os, random, sys
a = os.environ["OPT_A"] == "on"
b = "--b=fast" in sys.argv
c = open(os.environ["SCREEN_FILE"]).read().strip() == "c=big"
# Seeded by the configuration and the run: the verdicts are the same on every machine and load
# (unseeded, D was declared important about once in 20 runs: Lenth's test at its 5% level).
rng = random.Random(f"{{a}}{{b}}{{c}}{{os.environ.get('OPT_D')}}/{{os.environ.get('REGBENCH_RUN_INDEX')}}")
if os.environ.get("OPT_D") == "1" and os.environ.get("CRASH_WHEN_D"):
    sys.exit(3)
{delay}
for _ in range(int(os.environ["REGBENCH_ITERATIONS"])):
    print(10 + 3 * a - 2 * b + 1 * c + rng.gauss(0, 0.05))
"""

CONFIG = """\
[project]
name = "screened"
[[benchmark]]
name = "work"
command = [{py}, "bench.py"]
iterations = 4
{env}
[screen]
template = {{ source = "settings.in", env = "SCREEN_FILE" }}
{constraints}
[[screen.option]]
name = "a"
levels = ["off", "on"]
env = "OPT_A"
[[screen.option]]
name = "b"
levels = ["slow", "fast"]
arg = "--b={{value}}"
[[screen.option]]
name = "c"
levels = ["small", "big"]
template = true
[[screen.option]]
name = "d"
levels = [0, 1]
env = "OPT_D"
"""


def project(tmp_path: Path, *, env: str = "", constraints: str = "", delay: str = "") -> Path:
    (tmp_path / "bench.py").write_text(BENCH.format(delay=delay))
    (tmp_path / "settings.in").write_text("c=$c\n")
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(CONFIG.format(py=f'"{PY}"', env=env, constraints=constraints))
    return cfg


def screen(cfg: Path, *args: str) -> int:
    return main(["--config", str(cfg), "--store", str(cfg.parent / "results.db"), "screen",
                 "--generator", "D = ABC", "--seed", "4", *args])


def test_screen_finds_the_important_options_and_resumes(tmp_path, capsys):
    cfg = project(tmp_path)
    assert screen(cfg, "--runs", "2", "--plot", str(tmp_path / "plots")) == 0
    out = capsys.readouterr().out
    assert "design: 2^(4-1) resolution IV, 8 runs" in out
    assert "defining relation: I = ABCD" in out
    assert "16 ok stored; 0 already stored" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line and line.split()[0] in "abcd"}
    assert "yes" in lines["a"] and "yes" in lines["b"] and "yes" in lines["c"]
    assert " no " in lines["d"]
    assert "a*b*c" in lines["d"]  # D is aliased with ABC
    png = next((tmp_path / "plots").glob("*.png"))
    svg = next((tmp_path / "plots").glob("*.svg"))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in svg.read_text()

    store = Store(tmp_path / "results.db")
    with store.engine.connect() as conn:
        configs = {r.name: r.params for r in conn.execute(sa.select(t.config))}
    assert configs["a=off,b=slow,c=small,d=0"] == {"a": "off", "b": "slow", "c": "small", "d": 0}
    assert len(store.runs()) == 16

    # resume: everything is stored, nothing runs again, the estimates are the same
    assert screen(cfg, "--runs", "2") == 0
    again = capsys.readouterr().out
    assert "no run stored; 16 already stored" in again
    assert len(store.runs()) == 16
    # a third run per configuration adds only the 8 missing runs
    assert screen(cfg, "--runs", "3") == 0
    assert "8 ok stored; 16 already stored" in capsys.readouterr().out
    assert len(store.runs()) == 24


def test_effects_match_the_truth_and_failures_are_recorded(tmp_path):
    cfg = project(tmp_path, env='env = { CRASH_WHEN_D = "1" }',
                  constraints="constraints = ['not (a == \"on\" and b == \"fast\" and c == \"big\")']")
    config = load_config(cfg)
    assert config.screen is not None
    design = get_design("fractional", generators=["D = ABC"]).build([2] * 4)
    points = plan_points(config.screen, design)
    assert [p.valid for p in points].count(False) == 1
    with Store(tmp_path / "results.db") as store:
        result = run_screen(config, store, design, runs=2, seed=1)
        names = {r.config for r in store.runs()}
    # the configuration breaking the constraint never ran; those with d = 1 crashed, recorded
    assert "a=on,b=fast,c=big,d=1" not in names
    assert result.counts["failed"] == 2 * 3 and result.counts["ok"] == 2 * 4
    assert not result.ok
    effects = result.effects[0].effects
    assert effects is not None
    # d is constant among the points that ran (d = 0 only): it cannot be estimated, and says so
    assert "d" not in {e.term.name for e in effects.effects}
    assert "not estimable" in result.effects[0].reason
    assert effects.effect("a").estimate == pytest.approx(3, abs=0.2)
    assert effects.effect("b").estimate == pytest.approx(-2, abs=0.2)


def test_build_flags_need_a_build_command_and_versions_and_missing_space_is_an_error(tmp_path, capsys):
    cfg = project(tmp_path)
    text = cfg.read_text().replace('env = "OPT_D"', 'build = "-DD={value}"')
    cfg.write_text(text)
    assert screen(cfg) == 3
    err = capsys.readouterr().err
    assert "'d' is applied as a build flag (`build`), but [project] has no `build` command" in err
    assert err.count("\n") == 1
    cfg.write_text(text.replace('name = "screened"', f'name = "screened"\nbuild = ["{PY}", "-c", "pass"]'))
    assert screen(cfg) == 3
    assert "give --versions (git revisions), not the working tree" in capsys.readouterr().err
    with Store(tmp_path / "results.db") as store:  # nothing was started
        assert store.campaigns() == [] and store.runs() == []
    cfg.write_text("[[benchmark]]\nname = 'x'\ncommand = ['true']\n")
    assert screen(cfg) == 3
    assert "no [screen] table" in capsys.readouterr().err


def test_dry_run_prints_the_configurations_and_runs_nothing(tmp_path, capsys):
    cfg = project(tmp_path, constraints="constraints = ['not (a == \"on\" and d == 1)']")
    assert screen(cfg, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "   2  a=on,b=slow,c=small,d=1   (not run: breaks not (a == \"on\" and d == 1))" in out
    assert not (tmp_path / "results.db").exists()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_kill_9_then_the_same_command_resumes(tmp_path):
    cfg = project(tmp_path, delay="import time; time.sleep(0.1)")
    db = tmp_path / "results.db"
    store = Store(db)
    args = [PY, "-m", "regbench.cli.main", "--config", str(cfg), "--store", str(db), "screen",
            "--generator", "D = ABC", "--seed", "9", "--runs", "2"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while len(store.runs()) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.02)  # polling the store, not waiting for a result
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate()
    before = {(r.config, r.run_index) for r in store.runs()}
    assert 3 <= len(before) < 16
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    after = [(r.config, r.run_index) for r in store.runs()]
    assert len(after) == len(set(after)) == 16  # every run once
    assert before <= set(after)
    assert f"{16 - len(before)} ok stored; {len(before)} already stored" in out.stdout
    # The killed campaign's lease went with its process: the next one marked it interrupted.
    assert [c.status for c in store.campaigns()] == ["interrupted", "finished"]
    store.close()


def test_screen_is_documented():
    text = (Path(__file__).parents[1] / "docs" / "cli.md").read_text()
    assert "## regbench screen" in text or "`regbench screen`" in text


def test_a_d_optimal_follow_up_reuses_the_runs_and_separates_aliased_interactions(tmp_path, capsys):
    cfg = project(tmp_path)
    assert screen(cfg, "--runs", "1") == 0
    capsys.readouterr()
    # In the 2^(4-1) fraction a*b and c*d share a column; 4 added runs separate them.
    assert screen(cfg, "--runs", "1", "--augment", "4", "--term", "a*b", "--term", "c*d") == 0
    out = capsys.readouterr().out
    assert "design: d-optimal, 12 runs (8 valid runs of 2^(4-1) resolution IV, 8 runs + 4 added" in out
    assert "ok stored; 8 already stored" in out  # the fraction's runs are reused
    assert "Type III sums of squares" in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.split()[:1] in (["a*b"], ["c*d"])}
    assert set(lines) == {"a*b", "c*d"}
    assert screen(cfg, "--term", "a*b") == 2  # usage
    assert "Error: --term names the model of a follow-up" in capsys.readouterr().err


def test_a_suite_of_the_important_options_is_validated_against_the_full_set(tmp_path, capsys):
    cfg = project(tmp_path)

    def run(*args: str) -> int:
        return main(["--config", str(cfg), "--store", str(tmp_path / "results.db"), "screen", *args])

    assert run("--design", "suite", "--important", "a", "--validate", "--runs", "1") == 0
    assert "not validated (2 of the 16 valid configurations are measured: run `regbench screen --design full` first)" \
        in capsys.readouterr().out
    assert run("--design", "full", "--runs", "1") == 0
    assert "14 ok stored; 2 already stored" in capsys.readouterr().out  # the suite's configurations are reused
    assert run("--design", "suite", "--important", "a", "--important", "b", "--validate", "--runs", "1",
               "--plot", str(tmp_path / "plots")) == 0
    out = capsys.readouterr().out
    assert "design: suite, 4 runs (all 4 combinations of 2 important options, the others at random)" in out
    assert "against the 16 configurations of the full set: Mann-Whitney p = " in out
    assert "no run stored; 4 already stored" in out  # every configuration of the suite is in the full set
    assert len(list((tmp_path / "plots").glob("qq-*.svg"))) == 1
    assert run("--important", "a") == 2  # usage
    assert "Error: --design suite needs --important" in capsys.readouterr().err


def test_a_new_version_where_an_option_starts_to_matter_is_caught_by_recalibration(tmp_path, capsys):
    from datetime import UTC, datetime

    from regbench.demo_project import git_commit, git_init

    repo = tmp_path / "repo"
    git_init(repo)
    cfg_text = CONFIG.format(py=f'"{PY}"', env="", constraints="")
    files = {"bench.py": BENCH.format(delay=""), "settings.in": "c=$c\n", "regbench.toml": cfg_text}
    git_commit(repo, files, "v1", when=datetime(2024, 1, 1, tzinfo=UTC))
    # the "new version": option d now costs 2 units
    slower = BENCH.format(delay="").replace("+ 1 * c", "+ 1 * c + 2 * (os.environ['OPT_D'] == '1')")
    git_commit(repo, {"bench.py": slower}, "v2", when=datetime(2024, 1, 2, tzinfo=UTC))
    cfg = repo / "regbench.toml"
    assert main(["--config", str(cfg), "--store", str(tmp_path / "results.db"), "screen", "--generator", "D = ABC",
                 "--runs", "2", "--seed", "3", "--versions", "HEAD~1,HEAD"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "recalibration" in out and "effects that changed" in out
    text, alerts = out.split("effects that changed", 1)[1].split("recalibration alerts:", 1)
    table = [line.split() for line in text.splitlines()[3:] if line.strip()]
    assert alerts.startswith(" 1 new (#1)")  # stored as an alert (tests/test_screening_ops.py)
    assert table[0][0] == "d" and float(table[0][3]) == pytest.approx(2, abs=0.3)  # the change, in units
    assert float(table[0][4]) < 1e-6  # its Benjamini-Hochberg q-value
    assert len(table) == 1  # no other effect changed significantly


def test_a_multi_level_option_runs_in_the_full_design_and_is_refused_by_a_fraction(tmp_path, capsys):
    cfg = project(tmp_path, constraints="constraints = ['a == \"off\" and b == \"slow\"']")  # 6 of 24 run
    cfg.write_text(cfg.read_text().replace('levels = [0, 1]\nenv = "OPT_D"', 'levels = [0, 1, 2]\nenv = "OPT_D"'))
    assert screen(cfg) == 3
    assert "'d' has 3 levels: --design fractional needs two-level options" in capsys.readouterr().err
    assert main(["--config", str(cfg), "--store", str(tmp_path / "results.db"), "screen", "--design", "full",
                 "--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "design: full, 24 runs" in out and "6 ok stored" in out
    # the constraint fixed a and b: their other levels were never run, which the analysis says in a line
    line = next(x for x in out.splitlines() if x.startswith("worktree: no effects"))
    assert "no run was made at a = on; b = fast (a constraint left it out, or its runs failed)" in line


LEVELS_BENCH = """\
import os, random
cache, page = os.environ["CACHE"], os.environ["PAGE"]
rng = random.Random(f"{cache}/{page}/{os.environ.get('REGBENCH_RUN_INDEX')}")
for _ in range(int(os.environ["REGBENCH_ITERATIONS"])):
    print(10 + {"0": 0.0, "2000": 1.5, "-64000": -1.0}[cache] + rng.gauss(0, 0.05))
"""

LEVELS_CONFIG = """\
[project]
name = "levels"
[[benchmark]]
name = "work"
command = [{py}, "bench.py"]
iterations = 3
[[screen.option]]
name = "cache"
levels = ["0", "2000", "-64000"]
env = "CACHE"
[[screen.option]]
name = "page"
levels = [1024, 4096, 16384]
env = "PAGE"
"""


def test_options_of_three_levels_are_judged_by_an_analysis_of_variance(tmp_path, capsys):
    """Truth: cache (3 levels) moves the response by 0, +1.5, -1; page (3 levels) does nothing."""
    import json

    (tmp_path / "bench.py").write_text(LEVELS_BENCH)
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(LEVELS_CONFIG.format(py=f'"{PY}"'))
    args = ["--config", str(cfg), "--store", str(tmp_path / "results.db"), "screen", "--design", "full",
            "--runs", "2", "--seed", "1"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Type III analysis of variance, options as factors" in out
    anova, level_means = out.split("level means on", 1)
    rows = {line.split()[0]: line.split() for line in anova.splitlines() if line.split()[:1] in
            (["cache"], ["page"], ["cache*page"])}
    assert rows["cache"][1] == "2" and rows["cache"][6] == "yes"  # df, important
    assert rows["page"][6] == "no" and rows["cache*page"][6] == "no"
    means = {(w[0], w[1]): float(w[2]) for w in (line.split() for line in level_means.splitlines())
             if len(w) >= 5 and w[0] in ("cache", "page") and w[1] in ("0", "2000", "-64000", "1024")}
    assert means[("cache", "2000")] - means[("cache", "0")] == pytest.approx(1.5, abs=0.1)
    assert means[("cache", "-64000")] - means[("cache", "0")] == pytest.approx(-1.0, abs=0.1)
    assert "Benjamini-Hochberg across the 3 F-tests" in out

    assert main([*args, "--format", "json", "--order", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["already_stored"] == 18 and doc["design"]["name"] == "full"
    (version,) = doc["versions"]
    assert version["effects"] is None
    levels = version["levels"]
    terms = {t["term"]: t for t in levels["terms"]}
    assert set(terms) == {"cache", "page"}  # --order 1: no interaction
    assert terms["cache"]["important"] and not terms["page"]["important"]
    assert terms["cache"]["q"] < 1e-6 and terms["cache"]["spread"] == pytest.approx(2.5, abs=0.1)
    assert [m["level"] for m in levels["level_means"]["page"]] == ["1024", "4096", "16384"]
    assert all(m["runs"] == 6 and m["ci_low"] < m["mean"] < m["ci_high"] for m in levels["level_means"]["cache"])


def test_a_d_optimal_design_from_scratch_runs_only_valid_configurations(tmp_path, capsys):
    import json

    cfg = project(tmp_path, constraints="constraints = ['not (a == \"on\" and b == \"fast\" and c == \"big\")']")

    def run(*args: str) -> int:
        return main(["--config", str(cfg), "--store", str(tmp_path / "results.db"), "screen", "--design",
                     "doptimal", *args])

    assert run("--size", "10") == 3
    err = capsys.readouterr().err
    assert err == ("error: design 'doptimal': 10 runs cannot estimate a model of 11 parameters (the intercept, "
                   "4 main effects and 6 two-option interactions); the smallest size that works is 11\n")
    assert run("--order", "1") == 2  # usage
    assert "Error: --design doptimal needs --size RUNS" in capsys.readouterr().err
    assert run("--size", "12", "--dry-run") == 0
    out = capsys.readouterr().out
    assert out.startswith("design: doptimal, 12 runs (D-optimal for the intercept, 4 main effects and 6 two-option")
    listed = [line.split()[1] for line in out.splitlines()[1:]]
    assert len(listed) == len(set(listed)) == 12 and "not run" not in out
    assert "a=on,b=fast,c=big,d=0" not in listed and "a=on,b=fast,c=big,d=1" not in listed
    assert run("--size", "12", "--dry-run", "--format", "json") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [x["configuration"] for x in lines] == listed and all(x["valid"] for x in lines)
    assert run("--size", "12", "--runs", "1", "--seed", "0", "--format", "json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["counts"]["ok"] == 12 and sorted(c["configuration"] for c in doc["configurations"]) == sorted(listed)
    (version,) = doc["versions"]
    effects = {e["effect"]: e for e in version["effects"]["effects"]}
    assert len(effects) == 10  # every main effect and two-option interaction
    assert effects["a"]["estimate"] == pytest.approx(3, abs=0.2)
    assert effects["b"]["estimate"] == pytest.approx(-2, abs=0.2)
    assert effects["c"]["estimate"] == pytest.approx(1, abs=0.2)
    assert version["type3"] is not None and len(version["type3"]["terms"]) == 10
    # the table output of the same runs: effects, then their Type III analysis
    assert run("--size", "12", "--runs", "1") == 0
    out = capsys.readouterr().out
    assert "no run stored; 12 already stored" in out and "Type III sums of squares" in out


#: A build that writes its flags where the benchmark reads them: "-O2" makes the work half as long.
BUILD = """\
import sys
open("built.txt", "w").write(" ".join(sys.argv[1:]))
"""
BUILT_BENCH = """\
import os, random
flags = open("built.txt").read().split()
level = 10 * (0.5 if "-O2" in flags else 1.0) + (1 if os.environ["OPT_B"] == "on" else 0)
rng = random.Random(" ".join(flags) + os.environ["OPT_B"] + os.environ["REGBENCH_RUN_INDEX"])
for _ in range(int(os.environ["REGBENCH_ITERATIONS"])):
    print(level + rng.gauss(0, 0.05))
"""


def test_an_option_applied_as_a_build_flag_builds_each_variant_in_its_own_checkout(tmp_path, capsys):
    """``build = "{value}"``: each level of the option is a build variant, checked out and built
    for every version on its own (recorded under its own command), and its configurations run in
    that build; the build flag's effect is found like any other."""
    from datetime import UTC, datetime

    from regbench.demo_project import git_commit, git_init

    repo = tmp_path / "repo"
    git_init(repo)
    toml = f"""\
[project]
name = "flags"
build = ["{PY}", "build.py", "-g"]

[[benchmark]]
name = "work"
command = ["{PY}", "bench.py"]
iterations = 3

[[screen.option]]
name = "opt"
levels = ["-O0", "-O2"]
build = "{{value}}"

[[screen.option]]
name = "b"
levels = ["off", "on"]
env = "OPT_B"
"""
    git_commit(repo, {"build.py": BUILD, "bench.py": BUILT_BENCH, "regbench.toml": toml}, "v1",
               when=datetime(2024, 1, 1, tzinfo=UTC))
    store_path = tmp_path / "results.db"
    rc = main(["--config", str(repo / "regbench.toml"), "--store", str(store_path), "screen", "--design", "full",
               "--runs", "2", "--seed", "1", "--versions", "HEAD"])
    out = capsys.readouterr().out
    assert rc == 0, out
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] in (["opt"], ["b"])}
    assert abs(float(lines["opt"][1]) + 5) < 0.2 and abs(float(lines["b"][1]) - 1) < 0.2  # -O2 halves 10
    with Store(store_path) as store:
        plan = store.campaigns()[0].plan
        assert plan["builds"] == [[PY, "build.py", "-g", "-O0"], [PY, "build.py", "-g", "-O2"]]
        with store.engine.connect() as conn:
            builds = conn.execute(sa.select(t.build.c.build_key, t.build.c.status)).all()
        assert len({key for key, _ in builds}) == 2 and {status for _, status in builds} == {"ok"}
        assert len(store.runs()) == 8 and {r.status for r in store.runs()} == {"ok"}
    assert not (repo / "built.txt").exists()  # built in checkouts, never in the user's tree
