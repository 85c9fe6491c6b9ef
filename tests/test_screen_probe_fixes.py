"""`regbench screen` defects found by probing, each fixed and kept fixed: failed runs and builds that
could never be retried, levels written alike, versions stored without their tags, an option set
through a variable regbench overrides, a size larger than the space, a full factorial headed as a
searched fraction, and a failed build variant reported without its levels.

Small spaces (two or three two-level options, one run per configuration) and `sh` benchmarks:
each test makes a few dozen processes at most.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.demo_project import git_commit, git_init
from regbench.errors import ConfigError
from regbench.model import RUN_VARIABLES
from regbench.run.execute import FORKS_ENV, SELECT_ENV, run_environment
from regbench.run.noise import PAD_VARIABLE
from regbench.screening.base import get_design
from regbench.screening.space import parse_space
from regbench.store import Store

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)

#: Prints X and Y as the time (the effect of x is 0.001 s a level); fails while FLAKY exists
#: and x is at its high level (a transient cause: a full disk, a missing mount).
BENCH = """#!/bin/sh
[ -e "$FLAKY" ] && [ "$X" = 2 ] && { echo "transient: disk full" >&2; exit 1; }
i=0; while [ $i -lt "$REGBENCH_ITERATIONS" ]; do echo 0.00$X$Y; i=$((i+1)); done
"""

SPACE = """\
[defaults]
runs = 1
iterations = 3
warmup = 0

[[benchmark]]
name = "bench"
command = ["sh", "bench.sh"]
env = {{ FLAKY = "{flaky}" }}

[screen]
[[screen.option]]
name = "x"
levels = [1, 2]
env = "X"

[[screen.option]]
name = "y"
levels = [1, 2]
env = "Y"
"""


def _screen(cfg: Path, *args: str) -> int:
    return main(["--config", str(cfg), "--store", str(cfg.parent / "results.db"), "screen", "--runs", "1",
                 "--seed", "1", *args])


def _runs(cfg: Path) -> list[tuple[str, str]]:
    with Store(cfg.parent / "results.db") as store:
        return sorted((r.config, r.status) for r in store.runs())

def _variant_repo(tmp_path: Path, build_fails: str) -> Path:
    """A repository whose build fails for the variant ``-DB=2`` while ``build_fails`` exists."""
    repo = tmp_path / "repo"
    git_init(repo)
    toml = ('[project]\nname = "r"\n'
            f'build = ["sh", "-c", "[ -e {build_fails} ] && [ \\"$1\\" = -DB=2 ] && '
            '{ echo transient >&2; exit 1; }; true", "sh"]\n'
            + SPACE.format(flaky=tmp_path / "never")
            + '\n[[screen.option]]\nname = "b"\nlevels = [1, 2]\nbuild = "-DB={value}"\n')
    git_commit(repo, {"bench.sh": BENCH, "regbench.toml": toml, ".gitignore": "*.db\n"}, "c1", when=T0)
    return repo / "regbench.toml"


def _write(tmp_path: Path, text: str) -> Path:
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(text)
    return cfg


# ------------------------------------------------------------------------------ 3. tags recorded
def test_screen_records_the_tags_of_the_versions_it_screens(tmp_path, capsys):
    repo = tmp_path / "repo"
    git_init(repo)
    toml = '[project]\nname = "r"\n' + SPACE.format(flaky=tmp_path / "never")
    # one committer second: the generations tell the two apart, as a campaign records them
    git_commit(repo, {"bench.sh": BENCH, "regbench.toml": toml}, "c1", when=T0)
    git_commit(repo, {"f": "2"}, "c2", when=T0)
    for name, rev in (("v1", "HEAD~1"), ("v2", "HEAD")):
        subprocess.run(["git", "-C", str(repo), "tag", name, rev], check=True, capture_output=True)
    assert _screen(repo / "regbench.toml", "--versions", "v1,v2") == 0
    with Store(repo / "results.db") as store:
        names = [v.name for v in store.versions()]
        aliases = {name: [a.name for a in got if a.kind == "tag"] for name, got in store.aliases().items()}
    assert len(names) == 2
    assert aliases[names[0]] == ["v1"] and aliases[names[1]] == ["v2"]


# ------------------------------------------------------------------------ 4d. the variant is named
def test_a_failed_build_variant_is_named_with_its_levels(tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.touch()
    cfg = _variant_repo(tmp_path, str(broken))
    sha = subprocess.run(["git", "-C", str(cfg.parent), "rev-parse", "--short=10", "HEAD"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert _screen(cfg, "--design", "full", "--versions", "HEAD") == 4
    out = capsys.readouterr().out
    assert f"not built (not run): {sha} (b=2): build failed (exit status 1): transient" in out
    assert f"{sha} (b=1)" not in out


# --------------------------------------------------------------------- 1. --retry-failed, --rebuild
def test_retry_failed_runs_again_the_failed_runs_of_a_screen(tmp_path, capsys):
    flaky = tmp_path / "flaky"
    flaky.touch()
    (tmp_path / "bench.sh").write_text(BENCH)
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nname = "r"\n' + SPACE.format(flaky=flaky))
    assert _screen(cfg) == 4  # the runs at x = 2 failed
    assert "2 ok, 2 failed stored; 0 already stored" in capsys.readouterr().out

    flaky.unlink()  # the cause is fixed: the same command runs nothing, and says what would
    assert _screen(cfg) == 0
    out = capsys.readouterr().out
    assert "no run stored; 4 already stored (2 of them failed: add --retry-failed to run them again)" in out
    assert len(_runs(cfg)) == 4

    assert _screen(cfg, "--retry-failed") == 0
    out = capsys.readouterr().out
    assert "2 ok stored; 2 already stored; 2 ran again for earlier runs that had failed" in out
    assert "effects on bench" in out  # every configuration has its run now
    # the failed runs stay stored, as history; the retries are new runs
    assert _runs(cfg) == [("x=1,y=1", "ok"), ("x=1,y=2", "ok"), ("x=2,y=1", "failed"), ("x=2,y=1", "ok"),
                          ("x=2,y=2", "failed"), ("x=2,y=2", "ok")]
    # retried once is enough: nothing left to retry, and no hint either
    assert _screen(cfg, "--retry-failed") == 0
    out = capsys.readouterr().out
    assert "no run stored; 4 already stored\n" in out
    assert len(_runs(cfg)) == 6


def test_rebuild_builds_a_failed_build_variant_of_a_screen_again(tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.touch()
    cfg = _variant_repo(tmp_path, str(broken))
    assert _screen(cfg, "--design", "full", "--versions", "HEAD") == 4
    assert "4 ok stored" in capsys.readouterr().out  # the 4 configurations of b = 1

    broken.unlink()  # fixed; the failed build is recorded, so it is not tried again...
    assert _screen(cfg, "--design", "full", "--versions", "HEAD") == 4
    assert "(recorded earlier; --rebuild builds it again)" in capsys.readouterr().out
    # ...until --rebuild, as `regbench run --rebuild`
    assert _screen(cfg, "--design", "full", "--versions", "HEAD", "--rebuild") == 0
    out = capsys.readouterr().out
    assert "4 ok stored; 4 already stored" in out and "not built" not in out
    assert [status for _, status in _runs(cfg)] == ["ok"] * 8


# ------------------------------------------------------------------------ 2. levels written alike
@pytest.mark.parametrize("levels, shown", [([1, "1"], "1 and '1' are both written '1'"),
                                           ([True, "true"], "true and 'true' are both written 'true'"),
                                           (["0.5", 0.5, 2], "'0.5' and 0.5 are both written '0.5'")])
def test_levels_written_alike_are_a_one_line_error(tmp_path, levels, shown):
    table = {"option": [{"name": "x", "levels": [1, 2], "env": "X"}, {"name": "y", "levels": levels, "env": "Y"}]}
    with pytest.raises(ConfigError, match=r"^f\.toml: \[\[screen\.option\]\] 'y': `levels` " + shown) as info:
        parse_space(table, where="f.toml")
    assert "\n" not in str(info.value)


def test_levels_written_alike_are_refused_by_screen_with_the_file_named(tmp_path, capsys):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nname = "r"\n' + SPACE.format(flaky="x").replace("levels = [1, 2]\nenv = \"Y\"",
                                                                                 'levels = [1, "1"]\nenv = "Y"'))
    assert _screen(cfg, "--dry-run") == 3
    err = capsys.readouterr().err
    assert err == (f"error: {cfg}: [[screen.option]] 'y': `levels` 1 and '1' are both written '1' (in the "
                   "configuration's name and in `env`): give distinct levels\n")


# -------------------------------------------------------------- 4a. a variable regbench sets itself
@pytest.mark.parametrize("variable", sorted(RUN_VARIABLES))
def test_an_option_set_through_a_variable_regbench_sets_is_a_one_line_error(variable):
    table = {"option": [{"name": "iters", "levels": [1, 50], "env": variable}]}
    with pytest.raises(ConfigError, match=rf"^f\.toml: \[\[screen\.option\]\] 'iters': `env` {variable} is a "
                                          "variable regbench sets in the environment of the runs itself"):
        parse_space(table, where="f.toml")


def test_a_variable_set_twice_by_the_space_is_a_one_line_error():
    two = {"option": [{"name": "a", "levels": [1, 2], "env": "X"}, {"name": "b", "levels": [1, 2], "env": "X"}]}
    with pytest.raises(ConfigError, match=r"^f\.toml: \[\[screen\.option\]\] 'b': `env` X is set by option 'a' too"):
        parse_space(two, where="f.toml")
    templated = {"template": {"source": "t.in", "env": "X"},
                 "option": [{"name": "a", "levels": [1, 2], "env": "X"}, {"name": "b", "levels": [1, 2],
                                                                         "template": True}]}
    with pytest.raises(ConfigError, match=r"'a': `env` X is the \[screen\] `template`'s variable too"):
        parse_space(templated, where="f.toml")
    reserved = {"template": {"source": "t.in", "env": "REGBENCH_VERSION"},
                "option": [{"name": "b", "levels": [1, 2], "template": True}]}
    with pytest.raises(ConfigError, match=r"`template`: `env` REGBENCH_VERSION is a variable regbench sets"):
        parse_space(reserved, where="f.toml")


def test_the_variables_refused_are_those_regbench_sets_for_a_run(tmp_path):
    config = load_config(_write(tmp_path, '[[benchmark]]\nname = "b"\ncommand = ["true"]\n'))
    env = run_environment(config.benchmarks[0], run_index=0, version="v", inherited={})
    assert {k for k in env if k.startswith("REGBENCH_")} <= RUN_VARIABLES
    assert {PAD_VARIABLE, SELECT_ENV, FORKS_ENV, "REGBENCH_BENCHMARK_DIR"} <= RUN_VARIABLES


# ---------------------------------------------------------- 4b, 4c. sizes and the full factorial
def test_a_size_larger_than_the_space_is_a_one_line_error(tmp_path, capsys):
    with pytest.raises(ConfigError, match="design 'fractional': 3 two-level options have only 8 configurations, "
                                          "fewer than the 64 runs asked for: a size of 8"):
        get_design("fractional", runs=64).build([2] * 3)
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nname = "r"\n' + SPACE.format(flaky="x"))
    assert _screen(cfg, "--size", "8", "--dry-run") == 3
    err = capsys.readouterr().err
    assert "2 two-level options have only 4 configurations, fewer than the 8 runs asked for" in err
    assert err.count("\n") == 1
    assert _screen(cfg, "--size", "4", "--dry-run") == 0  # the whole space is a size that works


def test_a_fraction_without_generators_is_headed_as_the_full_factorial():
    for design, note in ((get_design("fractional").build([2] * 3),
                          "every configuration: no fraction of 3 options reaches resolution IV"),
                         (get_design("fractional", runs=4).build([2] * 2),
                          "every configuration: the 4 runs asked hold all of them")):
        assert design.generators is not None and not design.generators.p
        assert design.label() == f"2^{design.k} full factorial, {design.runs} runs"
        assert design.note == note
    searched = get_design("fractional", runs=4, resolution=3).build([2] * 3)
    assert searched.label() == "2^(3-1) resolution III, 4 runs" and "searched" in searched.note
