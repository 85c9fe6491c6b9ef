"""`regbench screen` defects found by a probe, each fixed and kept fixed: a version with one build
variant that did not build got no effects at all, and `regbench show` marked its build failed
beside its ok runs; levels containing `,` or `=` could give two configurations one name;
`--rebuild` rebuilt every variant of every version, even those with nothing left to run; and a
run requiring a tag no Dask worker offered was stored as failed, for good.

Small spaces (two or three two-level options) and `sh` benchmarks: each test makes a few dozen
processes at most; the Dask tests use a real `LocalCluster` on loopback.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.errors import ExitStatus
from regbench.store import Store

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)

#: Prints the time 0.00XY (x moves it by 0.01 s, y by 0.001 s); a run's index spreads the
#: samples a little, so that replicated runs give a pure error.
BENCH = """#!/bin/sh
i=0; while [ $i -lt "$REGBENCH_ITERATIONS" ]; do echo 0.0$X$Y$REGBENCH_RUN_INDEX; i=$((i+1)); done
"""

#: Three two-level options, the third applied as a build flag; the build appends its flag to
#: BUILD_LOG and fails for -DB=2 while the file BROKEN exists.
SPACE = """\
[project]
name = "r"
build = ["sh", "-c", "echo \\"$1\\" >> {log}; [ -e {broken} ] && [ \\"$1\\" = -DB=2 ] && {{ echo broken >&2; exit 1; }}; true", "sh"]

[defaults]
runs = 2
iterations = 3
warmup = 0

[[benchmark]]
name = "bench"
command = ["sh", "bench.sh"]

[screen]
[[screen.option]]
name = "x"
levels = [1, 2]
env = "X"

[[screen.option]]
name = "y"
levels = [1, 2]
env = "Y"

[[screen.option]]
name = "b"
levels = [1, 2]
build = "-DB={{value}}"
"""


def _variant_repo(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """The repository, its `broken` switch (created: the variant b = 2 does not build), the build
    log, and the commit's short name."""
    repo = tmp_path / "repo"
    git_init(repo)
    broken, log = tmp_path / "broken", tmp_path / "builds.log"
    broken.touch()
    git_commit(repo, {"bench.sh": BENCH, "regbench.toml": SPACE.format(log=log, broken=broken),
                      ".gitignore": "*.db\n"}, "c1", when=T0)
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                         text=True, check=True).stdout.strip()
    return repo / "regbench.toml", broken, log, sha


def _screen(cfg: Path, *args: str) -> int:
    return main(["--config", str(cfg), "--store", str(cfg.parent / "results.db"), "screen", "--design", "full",
                 "--runs", "2", "--seed", "1", "--versions", "HEAD", *args])


# ----------------------------------------------------------- 1. effects from the variants built
def test_a_version_with_a_failed_build_variant_gets_the_effects_of_the_configurations_run(tmp_path, capsys):
    cfg, _, _, sha = _variant_repo(tmp_path)
    assert _screen(cfg) == ExitStatus.FAILED  # a build failed: not a clean screen
    out = capsys.readouterr().out
    assert "8 ok stored" in out  # the 4 configurations of b = 1, 2 runs each
    assert f"not built (not run): {sha} (b=2): build failed" in out
    # The configurations missing are named, with the variant that did not build...
    assert (f"at {sha}, 4 of the 8 configurations were not run ({sha} (b=2) did not build): "
            "x=1,y=1,b=2; x=2,y=1,b=2; x=1,y=2,b=2; x=2,y=2,b=2; the effects are fitted to the configurations run"
            ) in out
    # ...and the effects of the others estimated: x and y, by least squares on the runs made.
    assert f"effects on bench at {sha}" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1] in (["x"], ["y"])}
    assert float(rows["x"][1]) == pytest.approx(0.01, abs=1e-9)
    assert float(rows["y"][1]) == pytest.approx(0.001, abs=1e-9)
    # What the configurations run cannot separate is named with what it is confounded with.
    assert ("3 effects not estimable from the configurations run: b (confounded with the mean), "
            "x*b (confounded with x), y*b (confounded with y)") in out

    assert _screen(cfg, "--format", "json") == ExitStatus.FAILED
    doc = json.loads(capsys.readouterr().out)
    (version,) = doc["versions"]
    assert [m["configuration"] for m in version["missing"]] == ["x=1,y=1,b=2", "x=2,y=1,b=2", "x=1,y=2,b=2",
                                                                "x=2,y=2,b=2"]
    assert {m["build"] for m in version["missing"]} == {f"{sha} (b=2)"}
    effects = {e["effect"]: e for e in version["effects"]["effects"]}
    assert set(effects) == {"x", "y", "x*y"}
    assert effects["x"]["aliases"] == ["x*b"]  # in the configurations run, x's column is x*b's too
    assert version["effects"]["points"] == 4 and version["effects"]["runs"] == 8


def test_estimates_of_a_reduced_design_are_the_least_squares_fit_of_its_runs(tmp_path, capsys):
    """The effects and their p-values from the configurations run are those of an ordinary
    least-squares fit of every run (statsmodels), with the pure error of the replicated runs."""
    sm = pytest.importorskip("statsmodels.api")
    import numpy as np

    cfg, _, _, sha = _variant_repo(tmp_path)
    assert _screen(cfg, "--format", "json") == ExitStatus.FAILED
    version = json.loads(capsys.readouterr().out)["versions"][0]
    with Store(cfg.parent / "results.db") as store:
        series = {s.config: [float(np.mean(r)) for r in s.runs[0]] for s in store.load_series("bench")}
    rows, ys = [], []
    for name, values in series.items():
        levels = dict(part.split("=") for part in name.split(","))
        x, y = (1.0 if levels["x"] == "2" else -1.0), (1.0 if levels["y"] == "2" else -1.0)
        for v in values:
            rows.append([1.0, x, y, x * y])
            ys.append(v)
    fit = sm.OLS(np.array(ys), np.array(rows)).fit()  # saturated in the 4 points: residual = pure error
    effects = {e["effect"]: e for e in version["effects"]["effects"]}
    for j, name in enumerate(("x", "y", "x*y"), start=1):
        assert effects[name]["estimate"] == pytest.approx(2 * fit.params[j], abs=1e-12)
        assert effects[name]["p"] == pytest.approx(fit.pvalues[j], rel=1e-6)


def test_recalibration_compares_a_reduced_version_on_the_configurations_both_versions_ran(tmp_path, capsys):
    """x interacts with the build flag b; at v2 the variant b = 2 does not build.  v2's x is then
    x at b = 1, v1's the average over b: compared as they are, x would seem to change (an alert
    for nothing).  Compared on the configurations both ran, nothing changed."""
    repo = tmp_path / "repo"
    git_init(repo)
    bench = ('#!/bin/sh\nB=$(cat built.txt); V=$X; [ "$B" = -DB=2 ] && V=$((X*X))\n'
             'i=0; while [ $i -lt "$REGBENCH_ITERATIONS" ]; do echo 0.0$V$Y$REGBENCH_RUN_INDEX; i=$((i+1)); done\n')
    toml = SPACE.replace('build = ["sh", "-c", "echo \\"$1\\" >> {log}; [ -e {broken} ]',
                         'build = ["sh", "-c", "echo \\"$1\\" > built.txt; [ -e broken ]').format()
    git_commit(repo, {"bench.sh": bench, "regbench.toml": toml, ".gitignore": "*.db\nbuilt.txt\n"}, "v1", when=T0)
    git_commit(repo, {"broken": ""}, "v2", when=datetime(2024, 3, 2, tzinfo=UTC))
    cfg = repo / "regbench.toml"
    assert main(["--config", str(cfg), "--store", str(repo / "results.db"), "screen", "--design", "full", "--runs",
                 "2", "--seed", "1", "--versions", "HEAD~1,HEAD", "--format", "json"]) == ExitStatus.FAILED
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    v1, v2 = doc["versions"]
    assert not v1["missing"] and len(v2["missing"]) == 4
    x1 = next(e for e in v1["effects"]["effects"] if e["effect"] == "x")["estimate"]
    x2 = next(e for e in v2["effects"]["effects"] if e["effect"] == "x")["estimate"]
    assert x1 == pytest.approx(0.02, abs=1e-9) and x2 == pytest.approx(0.01, abs=1e-9)  # the average; at b = 1
    (recalibration,) = doc["recalibration"]
    assert recalibration["changed"] == []  # the software did not change: no effect did
    assert "recalibration alerts" not in captured.err  # and no alert was stored for it


# ---------------------------------------------------------------- 2. show counts the variants
def test_show_says_how_many_build_variants_failed_and_names_them(tmp_path, capsys):
    cfg, _, _, sha = _variant_repo(tmp_path)
    assert _screen(cfg) == ExitStatus.FAILED
    capsys.readouterr()
    assert main(["--store", str(cfg.parent / "results.db"), "show"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith(sha))
    # version, commit, timestamp, build, runs ok, runs failed: the 8 runs of the variant built
    assert "1 of 2 variants failed" in row and row.split()[-2:] == ["8", "0"], row
    assert f"build failed at {sha} in the build variant -DB=2 (exit status 1): broken" in out


# ------------------------------------------------------------- 3. levels with `,` and `=`
def test_levels_containing_commas_or_equals_signs_never_give_two_configurations_one_name(tmp_path, capsys):
    (tmp_path / "bench.sh").write_text("#!/bin/sh\necho 1\n")
    cfg = tmp_path / "regbench.toml"
    # Written plainly, a=x with b="y,b=y" and a="x,b=y" with b=y are both a=x,b=y,b=y.
    cfg.write_text('[project]\nname = "r"\n[defaults]\nruns = 1\niterations = 1\nwarmup = 0\n'
                   '[[benchmark]]\nname = "bench"\ncommand = ["sh", "bench.sh"]\n'
                   '[screen]\n[[screen.option]]\nname = "a"\nlevels = ["x", "x,b=y"]\nenv = "A"\n'
                   '[[screen.option]]\nname = "b"\nlevels = ["y,b=y", "y"]\nenv = "B"\n')
    db = tmp_path / "results.db"
    assert main(["--config", str(cfg), "--store", str(db), "screen", "--design", "full", "--seed", "1"]) == 0
    capsys.readouterr()
    with Store(db) as store:
        names = sorted({r.config for r in store.runs()})
    assert len(names) == 4, names
    # Plain levels are written as before; the others quoted, so a name reads back one way only.
    assert names == sorted(['a=x,b=y', 'a=x,b="y,b=y"', 'a="x,b=y",b=y', 'a="x,b=y",b="y,b=y"'])


# ------------------------------------------------------- 4. --rebuild, only what has runs to do
def test_rebuild_rebuilds_only_the_variants_with_runs_left_to_do(tmp_path, capsys):
    cfg, broken, log, sha = _variant_repo(tmp_path)
    assert _screen(cfg) == ExitStatus.FAILED
    capsys.readouterr()
    assert sorted(log.read_text().split()) == ["-DB=1", "-DB=2"]
    broken.unlink()  # fixed: the variant b = 2 builds now
    assert _screen(cfg, "--rebuild") == 0
    out = capsys.readouterr().out
    assert "8 ok stored; 8 already stored" in out and "not built" not in out
    # b = 1 had all its runs: it was not built again; b = 2 was.
    assert sorted(log.read_text().split()) == ["-DB=1", "-DB=2", "-DB=2"]
    # And a screen with nothing left to run builds nothing, --rebuild or not.
    assert _screen(cfg, "--rebuild") == 0
    assert "no run stored; 16 already stored" in capsys.readouterr().out
    assert sorted(log.read_text().split()) == ["-DB=1", "-DB=2", "-DB=2"]


# ------------------------------------------------ 5. a tag no Dask worker offers: not stored
distributed = pytest.importorskip("distributed")


def _tagged_project(tmp_path: Path, requires: dict[str, str]) -> Path:
    (tmp_path / "bench.sh").write_text(BENCH)
    text = '[project]\nname = "r"\n[defaults]\nruns = 1\niterations = 2\nwarmup = 0\n'
    for name in ("bench", "other"):
        text += f'[[benchmark]]\nname = "{name}"\ncommand = ["sh", "bench.sh"]\nenv = {{ X = "1", Y = "1" }}\n'
        if name in requires:
            text += f'requires = ["{requires[name]}"]\n'
    text += ('[screen]\n[[screen.option]]\nname = "x"\nlevels = [1, 2]\nenv = "X"\n'
             '[[screen.option]]\nname = "y"\nlevels = [1, 2]\nenv = "Y"\n')
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(text)
    return cfg


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"benchmark": 1},
                                  dashboard_address=":0") as c:
        yield c


@pytest.fixture
def dask_wait_1s(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's executor waits 30 s for a worker offering what runs need; 1 s here."""
    from regbench.run.dask_executor import DaskExecutor

    monkeypatch.setitem(DaskExecutor.__init__.__kwdefaults__, "wait", 1.0)


def test_a_screen_whose_benchmark_requires_a_tag_no_worker_offers_stores_nothing(tmp_path, capsys, cluster,
                                                                                  dask_wait_1s):
    cfg = _tagged_project(tmp_path, {"bench": "gpu"})
    db = tmp_path / "results.db"
    rc = main(["--config", str(cfg), "--store", str(db), "screen", "--benchmark", "bench", "--design", "full",
               "--seed", "1", "--executor", "dask", "--scheduler", cluster.scheduler_address])
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR
    assert ("error: benchmark 'bench' requires gpu: no Dask worker offers gpu (waited 1 s; the workers offer "
            'benchmark); start a worker with --resources "benchmark=1 gpu=1" on a machine that has it '
            "(docs/dask.md): nothing was run or stored") in err
    assert err.strip().count("\n") == 0
    with Store(db) as store:
        assert store.runs() == [] and store.campaigns() == []


def test_a_run_whose_tag_no_worker_offers_is_not_stored_and_runs_once_a_worker_offers_it(tmp_path, capsys,
                                                                                        cluster, dask_wait_1s):
    cfg = _tagged_project(tmp_path, {"bench": "gpu"})
    db = tmp_path / "results.db"

    def run(address: str) -> int:
        return main(["--config", str(cfg), "--store", str(db), "run", "--seed", "1", "--executor", "dask",
                     "--scheduler", address])

    assert run(cluster.scheduler_address) == ExitStatus.FAILED  # not all done
    out = capsys.readouterr().out
    assert ("Not run (nothing stored; the same command runs it once a worker offers it): benchmark 'bench' "
            "requires gpu: no Dask worker offers gpu") in out
    with Store(db) as store:
        assert [(r.benchmark, r.status) for r in store.runs()] == [("other", "ok")]  # not a failed run of bench
    # A worker offering the tag: the same command makes the run it could not make.
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  resources={"benchmark": 1, "gpu": 1}, dashboard_address=":0") as tagged:
        assert run(tagged.scheduler_address) == 0
    assert "1 run stored (1 ok)" in capsys.readouterr().out
    with Store(db) as store:
        assert sorted((r.benchmark, r.status) for r in store.runs()) == [("bench", "ok"), ("other", "ok")]
    # Without that worker again, nothing is left to run: done, nothing named as not run.
    assert run(cluster.scheduler_address) == 0
    assert "Not run" not in capsys.readouterr().out
    # With no benchmark any worker can run, nothing starts.
    cfg.write_text(cfg.read_text().replace('name = "other"\ncommand = ["sh", "bench.sh"]\nenv = { X = "1", Y = "1" }\n',
                                           'name = "other"\ncommand = ["sh", "bench.sh"]\nenv = { X = "1", Y = "1" }\n'
                                           'requires = ["gpu"]\n'))
    capsys.readouterr()
    db.unlink()
    assert run(cluster.scheduler_address) == ExitStatus.ERROR
    err = capsys.readouterr().err
    assert "benchmark 'bench' requires gpu" in err and "benchmark 'other' requires gpu" in err
    assert err.strip().count("\n") == 0
    with Store(db) as store:
        assert store.runs() == [] and store.campaigns() == []
