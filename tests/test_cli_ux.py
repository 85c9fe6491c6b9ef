"""The command line as a person meets it: failures told with their causes and retried, one way
to find the store, options that say what they take, messages that name what is wrong."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.model import RunRecord
from regbench.store import Store

PY = sys.executable
# Two benchmarks that fail until their environment is fixed (a data file, a module written in
# the folder they run in), without an edit of what they run: an edited benchmark supersedes its
# runs (test_definition_superseded.py) instead of retrying them.
FAILS = [PY, "-c", "import os, sys\nif not os.path.exists('data.bin'):\n"
         "    sys.stderr.write('reading data.bin\\nboom: missing data file\\n'); sys.exit(1)\n"
         "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print(1.0)"]
MISSING = [PY, "-c", "import nosuchmodule_for_regbench"]
MODULE = "import os\nfor _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print(1.0)\n"
PRINTS = [PY, "-c", "import os\nfor _ in range(int(os.environ['REGBENCH_ITERATIONS'])): print(1.0)"]


def write_config(folder: Path, benchmarks: dict[str, list[str]], *, runs: int = 2, extra: str = "") -> Path:
    text = (f'[project]\nname = "p"\nstore = "results/r.db"\n{extra}'
            f"[defaults]\nruns = {runs}\niterations = 2\nwarmup = 0\n")
    for name, command in benchmarks.items():
        text += f"[[benchmark]]\nname = {json.dumps(name)}\ncommand = {json.dumps(command)}\n"
    cfg = folder / "regbench.toml"
    cfg.write_text(text, encoding="utf-8")
    return cfg


def statuses(store_path: Path, benchmark: str) -> list[tuple[int, str]]:
    with Store(store_path, create=False) as store:
        return sorted((r.run_index, r.status) for r in store.runs(benchmark=benchmark))


# ------------------------------------------------------------------ failures: visible, retryable
def test_failed_campaign_exits_4_with_one_line_per_cause_then_retries(tmp_path, capsys):
    cfg = write_config(tmp_path, {"a": FAILS, "b": MISSING})
    assert main(["--config", str(cfg), "run"]) == 4
    out = capsys.readouterr().out
    assert "4 runs stored (0 ok, 4 failed)" in out
    assert "4 runs failed, for 2 causes:\n" in out
    assert "  2 runs of a: failed (exit status 1): boom: missing data file\n" in out
    assert "  2 runs of b: failed (exit status 1): ModuleNotFoundError: No module named " in out
    assert "--retry-failed" in out

    # `show` finds the store of regbench.toml and shows the benchmark's own stderr.
    assert main(["--config", str(cfg), "show"]) == 0
    shown = capsys.readouterr().out
    assert "failed (exit status 1): boom: missing data file" in shown
    assert "  reading data.bin\n  boom: missing data file\n  [regbench] exit status 1\n" in shown
    assert "stderr of 2 runs (a@" in shown  # runs that failed alike are printed once

    # Without --retry-failed nothing is run again, and the account says how to.
    assert main(["--config", str(cfg), "run"]) == 0
    out = capsys.readouterr().out
    assert "0 runs stored" in out and "4 runs that failed earlier were not run again: add --retry-failed" in out

    # b is fixed: --retry-failed runs the lacking runs under new indices and keeps the failed ones.
    (tmp_path / "nosuchmodule_for_regbench.py").write_text(MODULE)
    assert main(["--config", str(cfg), "run", "--retry-failed"]) == 4  # a still fails
    out = capsys.readouterr().out
    assert "4 runs stored (2 ok, 2 failed)" in out and "4 runs ran again for earlier runs that had failed" in out
    store_path = tmp_path / "results" / "r.db"
    assert statuses(store_path, "b") == [(0, "failed"), (1, "failed"), (2, "ok"), (3, "ok")]
    # show lists the failures still open (a's, of both campaigns), not b's, run again with success.
    assert main(["--config", str(cfg), "show"]) == 0
    shown = capsys.readouterr().out
    assert "2 failed runs not listed: run again with success since (--retry-failed)" in shown
    assert "stderr of 4 runs (a@" in shown and "b@" not in shown.split("Failed runs")[1]
    # b has its two successful runs now: only a's are run again.
    (tmp_path / "data.bin").write_bytes(b"")
    assert main(["--config", str(cfg), "run", "--retry-failed"]) == 0
    out = capsys.readouterr().out
    assert "2 runs stored (2 ok)" in out and "runs failed" not in out
    assert statuses(store_path, "b") == [(0, "failed"), (1, "failed"), (2, "ok"), (3, "ok")]
    assert [s for _, s in statuses(store_path, "a")] == ["failed"] * 4 + ["ok"] * 2
    assert main(["--config", str(cfg), "show"]) == 0
    shown = capsys.readouterr().out
    assert "Failed runs" not in shown and "6 failed runs not listed" in shown
    assert main(["--config", str(cfg), "show", "--runs"]) == 0
    assert capsys.readouterr().out.count("failed (retried since)") == 6
    # A failure retried with success since fills no slot: 3 runs each is one more ok run each,
    # and nothing is said to be left failed.
    assert main(["--config", str(cfg), "run", "--runs", "3"]) == 0
    out = capsys.readouterr().out
    assert "2 runs stored (2 ok)" in out and "failed earlier" not in out
    assert [s for _, s in statuses(store_path, "b")] == ["failed"] * 2 + ["ok"] * 3


def test_show_full_prints_all_of_the_stderr_kept(tmp_path, capsys):
    tail = "\n".join(f"line {k}" for k in range(12)) + "\n[regbench] exit status 2"
    with Store(tmp_path / "r.db") as store:
        store.add_run(RunRecord("b", "v1", 0, np.empty(0), status="failed", exit_code=2, stderr_tail=tail))
        store.add_run(RunRecord("b", "v1", 1, np.array([1.0, 2.0]), stderr_tail="a warning"))
    assert main(["--store", str(tmp_path / "r.db"), "show"]) == 0
    short = capsys.readouterr().out
    assert "  line 11\n  [regbench] exit status 2\n" in short and "line 7" not in short and "line 8" in short
    assert "a warning" not in short  # only failed runs without --runs
    assert main(["--store", str(tmp_path / "r.db"), "show", "--runs", "--full"]) == 0
    full = capsys.readouterr().out
    assert "  line 0\n  line 1\n" in full and "  a warning\n" in full


# ------------------------------------------------------------------ one way to open the store
@pytest.fixture
def configured_store(tmp_path) -> Path:
    """A regbench.toml whose `store` holds two versions of one benchmark (and no default store)."""
    cfg = write_config(tmp_path, {"b": PRINTS})
    path = tmp_path / "results" / "r.db"
    rng = np.random.default_rng(1)
    with Store(path) as store:
        for v in ("v1", "v2"):
            store.add_runs([RunRecord("b", v, r, rng.normal(1.0, 0.01, 10)) for r in range(4)])
    return cfg


@pytest.mark.parametrize("args", [
    ["show"], ["summary"], ["export"], ["compare", "v1", "v2"], ["diagnose", "b", "--no-plots"],
    ["alerts", "list"], ["alerts", "show", "1"], ["detect", "--dry-run"],
])
def test_every_command_reads_the_store_of_the_configuration(configured_store, args, capsys, monkeypatch):
    monkeypatch.chdir(configured_store.parent)
    monkeypatch.delenv("REGBENCH_STORE", raising=False)
    code = main(args)
    err = capsys.readouterr().err
    assert "no results store" not in err
    if args[:2] == ["alerts", "show"]:
        assert code == 3 and err == "error: no alert #1 in the store\n"  # the store was opened
    elif args[0] != "diagnose" or "statsmodels" not in err:
        assert code == 0, err


def test_store_option_wins_over_the_configuration(configured_store, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(configured_store.parent)
    assert main(["--store", str(tmp_path / "other.db"), "show"]) == 3
    assert "no results store at " + str(tmp_path / "other.db") in capsys.readouterr().err


def test_from_a_subfolder_the_default_store_is_the_projects(tmp_path, capsys, monkeypatch):
    """Without a ``store`` key, the default store is in the configuration file's folder, so a
    command run from a subfolder reads the project's store instead of starting a second one."""
    (tmp_path / "regbench.toml").write_text(
        '[project]\nname = "p"\n[[benchmark]]\nname = "b"\ncommand = ["true"]\n', encoding="utf-8")
    with Store(tmp_path / ".regbench" / "results.db") as store:
        store.add_runs([RunRecord("b", "v1", r, np.full(3, 1.0 + r)) for r in range(2)])
    sub = tmp_path / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    monkeypatch.delenv("REGBENCH_STORE", raising=False)
    assert main(["show"]) == 0, capsys.readouterr().err
    assert "2 runs" in capsys.readouterr().out
    assert not (sub / ".regbench").exists()
    monkeypatch.chdir(tmp_path.parent)  # outside the project, no configuration: the current folder
    assert main(["show"]) == 3
    assert "no results store at" in capsys.readouterr().err


def test_a_store_made_under_a_subfolder_before_is_still_used_and_said(tmp_path, capsys, monkeypatch):
    """Before the default store followed regbench.toml, a run from a subfolder made one there:
    while the project has none, that one is used (with a warning), not silently left behind."""
    (tmp_path / "regbench.toml").write_text(
        '[project]\nname = "p"\n[[benchmark]]\nname = "b"\ncommand = ["true"]\n', encoding="utf-8")
    sub = tmp_path / "sub"
    with Store(sub / ".regbench" / "results.db") as store:
        store.add_runs([RunRecord("b", "v1", r, np.full(3, 1.0 + r)) for r in range(3)])
    monkeypatch.chdir(sub)
    monkeypatch.delenv("REGBENCH_STORE", raising=False)
    assert main(["show"]) == 0
    captured = capsys.readouterr()
    assert "3 runs" in captured.out
    assert captured.err == (f"warning: using the store at {sub / '.regbench' / 'results.db'}; the default store "
                            f"is now beside regbench.toml ({tmp_path / '.regbench' / 'results.db'}): move it "
                            "there, or set [project] store\n")
    assert not (tmp_path / ".regbench").exists()


# ------------------------------------------------------------------ the demo's hint works as written
def test_the_command_printed_for_regbench_works_as_written_without_an_activated_venv(tmp_path):
    import os
    import subprocess

    from regbench.report.demo import regbench_command

    bare = {**os.environ, "PATH": "/usr/bin:/bin"}  # a shell where the venv is not activated
    script = Path(sys.executable).parent / "regbench"
    cases = [regbench_command("-c", path=bare["PATH"])]  # run as `python -m ...`
    if script.is_file():
        cases.append(regbench_command(str(script), path=bare["PATH"]))
        assert cases[-1] == str(script)
        assert regbench_command(str(script), path=str(script.parent)) == "regbench"  # on PATH: as short as that
    assert cases[0] == f"{sys.executable} -m regbench"
    for command in cases:
        out = subprocess.run(f"cd {tmp_path} && {command} --version", shell=True, env=bare,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "regbench, version" in out.stdout, out.stderr


# ------------------------------------------------------------------ --config FILE and --configuration NAME
@pytest.mark.parametrize("name", ["other.toml", "other.JSON", "cfg.yaml", "a/b", "conf.yml"])
def test_a_configuration_name_that_looks_like_a_file_is_refused(tmp_path, capsys, monkeypatch, name):
    cfg = write_config(tmp_path, {"b": PRINTS}, runs=1)
    monkeypatch.chdir(tmp_path)
    if name == "a/b":  # a path with a separator is a file's when the file is there
        (tmp_path / "a").mkdir()
        (tmp_path / "a" / "b").write_text("[project]\n")
    assert main(["--config", str(cfg), "run", "--configuration", name]) == 2  # a usage error
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (f"Error: Invalid value for '--configuration': {name!r} looks like a file, not a "
                                    f"configuration name; a configuration file is given before the command: "
                                    f"regbench --config {name} run ...")
    assert not (tmp_path / "results").exists()  # nothing stored, no store created


@pytest.mark.parametrize("args", [["run", "--config", "other.toml"], ["compare", "v1", "v2", "--config", "x"],
                                  ["compare", "v1", "v1", "--variance", "--b-config", "x"],
                                  ["import", "--config", "x", "f.csv"]])
def test_the_old_spelling_after_the_command_says_where_it_went(tmp_path, capsys, args):
    cfg = write_config(tmp_path, {"b": PRINTS}, runs=1)
    assert main(["--config", str(cfg), *args]) == 2  # a usage error
    err = capsys.readouterr().err
    new = "--b-configuration" if "--b-config" in args else "--configuration"
    assert err.startswith(f"Usage: regbench {args[0]} ")
    assert err.splitlines()[-1].startswith("Error: ") and f"the configuration's name is {new} NAME" in err
    if "--b-config" not in args:
        assert f"a configuration file is given before the command (regbench --config FILE {args[0]} ...)" in err
    assert not (tmp_path / "results").exists()


def test_runs_are_stored_under_the_configuration_name(tmp_path, capsys):
    cfg = write_config(tmp_path, {"b": PRINTS}, runs=1)
    assert main(["--config", str(cfg), "run", "--configuration", "quiet"]) == 0
    with Store(tmp_path / "results" / "r.db", create=False) as store:
        assert {r.config for r in store.runs()} == {"quiet"}


# ------------------------------------------------------------------ where a bad value was written
@pytest.mark.parametrize("defaults, bench, message", [
    ({"runs": "3"}, {}, "[defaults] `runs` must be a positive integer, got '3'"),
    ({"timeout": -1}, {}, "[defaults] `timeout` must be a positive"),
    ({"warmup": -2}, {}, "[defaults] `warmup` must be a non-negative integer"),
    ({"direction": "up"}, {}, "[defaults] `direction` must be 'lower' or 'higher'"),
    ({"runs": 3}, {"runs": "4"}, "[[benchmark]] #1 ('a') `runs` must be a positive integer, got '4'"),
    ({"runs": "3"}, {"runs": 4, "iterations": 0}, "[[benchmark]] #1 ('a') `iterations` must be a positive"),
])
def test_a_bad_value_is_reported_in_the_table_it_was_written_in(tmp_path, defaults, bench, message):
    from regbench.config import parse_config
    from regbench.errors import ConfigError

    data = {"project": {"name": "p"}, "defaults": defaults,
            "benchmark": [{"name": "a", "command": ["true"], **bench}]}
    with pytest.raises(ConfigError) as err:
        parse_config(data, path=tmp_path / "regbench.toml")
    assert str(err.value).startswith(f"{tmp_path / 'regbench.toml'}: {message}")


@pytest.mark.parametrize("data, message", [
    ({"project": {"name": "p"}, "benchmark": [{"name": "a", "command": ["true"], "formt": "jmh"}]},
     "[[benchmark]] #1 ('a'): unknown key `formt`; did you mean `format`?"),
    ({"project": {"nme": "p"}}, "[project]: unknown key `nme`; did you mean `name`?"),
    ({"project": {"name": "p"}, "run": {"duets": True}},
     "[run]: unknown key `duets` (expected duet, executor, scheduler); did you mean `duet`?"),
    ({"project": {"name": "p"}, "alerts": {"colour": 1}}, "[alerts]: unknown key `colour`"),  # nothing near it
])
def test_an_unknown_key_names_the_nearest_known_one(tmp_path, data, message):
    from regbench.config import parse_config
    from regbench.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_config(data, path=tmp_path / "regbench.toml")
    assert str(err.value) == f"{tmp_path / 'regbench.toml'}: {message}"


# ------------------------------------------------------------------ names that are not stored
def test_an_unknown_benchmark_is_named_with_the_nearest_stored_ones(tmp_path, capsys):
    with Store(tmp_path / "r.db") as store:
        for name in ("parse_json", "parse_xml", "render"):
            store.add_runs([RunRecord(name, "v1", r, np.array([1.0, 1.1, 1.2])) for r in range(3)])
    base = ["--store", str(tmp_path / "r.db")]
    for command in (["diagnose", "parse_jsn", "--no-plots"], ["summary", "--benchmark", "parse_jsn"],
                    ["show", "--benchmark", "parse_jsn"], ["compare", "v1", "v1", "--benchmark", "parse_jsn"],
                    ["detect", "--dry-run", "--benchmark", "parse_jsn"]):
        assert main([*base, *command]) == 3
        assert capsys.readouterr().err == ("error: no benchmark named 'parse_jsn' in the store "
                                           "(did you mean 'parse_json', 'parse_xml'?)\n")
    assert main([*base, "diagnose", "NOSUCH", "--no-plots"]) == 3
    assert capsys.readouterr().err == ("error: no benchmark named 'NOSUCH' in the store "
                                       "(it holds 3 benchmarks: `regbench show` lists them)\n")


def test_a_tool_series_is_suggested_for_the_name_the_tool_gave_it(tmp_path, capsys):
    # A JMH method is stored as `NAME/pkg.Class.method`: `join` or `Lang3Bench.join` names it.
    with Store(tmp_path / "r.db") as store:
        for name in ("jmh/probe.Lang3Bench.join", "jmh/probe.Lang3Bench.split"):
            store.add_runs([RunRecord(name, "v1", r, np.array([1.0, 1.1, 1.2])) for r in range(3)])
    base = ["--store", str(tmp_path / "r.db")]
    for wrong in ("join", "Lang3Bench.join"):
        for command in (["summary", "--benchmark", wrong], ["detect", "--dry-run", "--benchmark", wrong]):
            assert main([*base, *command]) == 3
            assert capsys.readouterr().err == (f"error: no benchmark named {wrong!r} in the store "
                                               "(did you mean 'jmh/probe.Lang3Bench.join'?)\n")


def test_a_file_of_no_known_format_lists_every_format(tmp_path, capsys):
    from regbench.adapters.base import available_formats

    odd = tmp_path / "odd.txt"
    odd.write_text("hello\n")
    # A file sniffed as no format is an error of the file (3); --format NAME unknown, a usage error (2).
    for args, status in ((["import", str(odd)], 3), (["import", "--format", "nope", str(odd)], 2)):
        assert main(["--store", str(tmp_path / "r.db"), *args]) == status
        err = capsys.readouterr().err
        assert err.count("\n") == 1 if status == 3 else err.startswith("Usage: regbench import ")
        listed = err.splitlines()[-1].split("known: ")[1].rstrip(")").split(", ")
        assert set(listed) >= {"csv", "jsonl", *available_formats()}
    assert not (tmp_path / "r.db").exists()


# ------------------------------------------------------------------ citations the docs resolve
def test_every_citation_in_the_docs_and_the_help_is_on_the_references_page():
    from click.testing import CliRunner

    from regbench.cli.main import _register, cli

    root = Path(__file__).resolve().parents[1]
    references = (root / "docs" / "references.md").read_text()
    listed = set(re.findall(r"^\| ([A-Z]\w+ et al\. \d{4}) \|", references, flags=re.M))
    assert len(listed) == 5
    _register()
    texts = {p.name: p.read_text() for p in [*(root / "docs").glob("*.md"), root / "README.md"]
             if p.name != "references.md"}

    def helps(group, path):
        for name, command in getattr(group, "commands", {}).items():
            texts[f"{path} {name} --help"] = CliRunner().invoke(cli, [*path.split()[1:], name, "--help"]).output
            helps(command, f"{path} {name}")

    helps(cli, "regbench")
    from regbench.config import EXAMPLE

    texts["regbench init"] = EXAMPLE
    cited = set()
    for where, text in texts.items():
        assert not re.search(r"\bseeds? 00\d", text), f"{where} cites a paper by its number"
        assert "shared/seeds" not in text, f"{where} points at a folder not in the repository"
        cited |= set(re.findall(r"[A-Z]\w+ et al\. \d{4}", text))
    assert cited <= listed and len(cited) >= 4


# ------------------------------------------------------------------ help and hints that stay true
def test_init_names_the_project_after_its_folder(tmp_path, capsys):
    from regbench.config import load_config

    folder = tmp_path / "my-lib"
    folder.mkdir()
    assert main(["--config", str(folder / "regbench.toml"), "init"]) == 0
    text = (folder / "regbench.toml").read_text()
    assert 'name = "my-lib"' in text and "myproject" not in text
    assert load_config(folder / "regbench.toml").name == "my-lib"


def test_the_commented_benchmarks_of_init_load_once_uncommented(tmp_path):
    """Each commented-out ``[[benchmark]]`` of ``regbench init``'s file is what a user uncomments:
    it must load as it stands (quotes escaped right, keys that exist)."""
    from regbench.config import EXAMPLE, load_config

    blocks = re.findall(r"^# \[\[benchmark\]\]\n(?:#.*\n)+", EXAMPLE, flags=re.M)
    assert len(blocks) >= 2
    for block in blocks:
        toml = "\n".join(line[2:] for line in block.splitlines())
        path = tmp_path / "regbench.toml"
        path.write_text('[project]\nname = "p"\n' + toml + "\n")
        (bench,) = load_config(path).benchmarks
        assert bench.name in toml


def test_compare_help_says_versions_are_stored_and_system_check_suggests_no_aslr(tmp_path):
    from click.testing import CliRunner

    from regbench.cli.main import _register, cli
    from regbench.run.system_check import check_aslr

    _register()
    text = " ".join(CliRunner().invoke(cli, ["compare", "--help"]).output.split())
    assert "A and B are stored versions (of runs in the store), by name, tag or git revision" in text
    (tmp_path / "proc" / "sys" / "kernel").mkdir(parents=True)
    (tmp_path / "proc" / "sys" / "kernel" / "randomize_va_space").write_text("2\n")
    finding = check_aslr(tmp_path)
    assert finding.status == "warn" and "regbench run --no-aslr" in finding.advice and "setarch" not in finding.advice


def test_the_readme_range_says_what_it_leaves_out():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "--versions v1.0^..main" in readme and "leaves v1.0 itself out" in readme


def test_a_panic_is_the_cause_said_not_the_line_a_tool_wrote_after_it():
    """cargo prints `error: bench failed, to rerun pass ...` after a Rust panic's message, and Go
    a goroutine trace after `panic: ...`: the account of a campaign quotes the panic."""
    from regbench.report.campaign import failure_cause

    rust = ("   Compiling hexbench\nthread 'main' (11955) panicked at vendor-hex/src/lib.rs:280:37:\n"
            "PLANTED PANIC in encode_upper\nnote: run with `RUST_BACKTRACE=1` environment variable to display a "
            "backtrace\nerror: bench failed, to rerun pass `--bench hex`\n[regbench] exit status 101")
    assert failure_cause("failed", rust) == "failed (exit status 101): panicked: PLANTED PANIC in encode_upper"
    go = "panic: nil tree\n\ngoroutine 7 [running]:\nexample.com/x.f()\n\t/src/x.go:3 +0x1d\n[regbench] exit status 2"
    assert failure_cause("failed", go) == "failed (exit status 2): panic: nil tree"
    py = "Traceback (most recent call last):\n  File \"b.py\", line 1\nValueError: boom\n[regbench] exit status 1"
    assert failure_cause("failed", py) == "failed (exit status 1): ValueError: boom"
    # JMH's filter that matches nothing: its error, not the advice it prints after it.
    jmh = ("No matching benchmarks. Miss-spelled regexp?\nUse EXTRA verbose mode to debug the pattern matching.\n"
           "[regbench] exit status 1")
    assert failure_cause("failed", jmh) == "failed (exit status 1): No matching benchmarks. Miss-spelled regexp?"


# ------------------------------------------------------------------ why a build failed
MAVEN_LOG = ("\x1b[0m\x1b[0m[ERROR] COMPILATION ERROR : \n"
             "[ERROR] /w/src/main/java/probe/Bench.java:[36,45] ';' expected\n"
             "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile "
             "(default-compile) on project b: Compilation failure\n"
             "[ERROR] -> [Help 1]\n[ERROR] \n"
             "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException\n"
             "\x1b[0m\x1b[0m\n[regbench] build exit status 1")


def test_a_failed_build_is_shown_with_the_builders_error_not_regbenchs_note(tmp_path, capsys):
    # Maven prints its error first and help after it, in colour codes even into a file; the last
    # line kept is regbench's own note, which only repeats the exit status.
    from regbench.model import VersionInfo

    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("a", "v1", r, np.array([1.0, 1.1])) for r in range(2)])
        store.record_build(VersionInfo("v2"), "k", status="failed", exit_code=1, log_tail=MAVEN_LOG, duration=1.0)
    assert main(["--store", str(tmp_path / "r.db"), "show"]) == 0
    out = capsys.readouterr().out
    assert "build failed at v2 (exit status 1): [ERROR] /w/src/main/java/probe/Bench.java:[36,45] ';' expected\n" in out
    assert "build exit status" not in out and "\x1b" not in out
    assert main(["--store", str(tmp_path / "r.db"), "show", "--full"]) == 0
    out = capsys.readouterr().out  # the whole log kept, without colour codes and notes
    assert "  [ERROR] COMPILATION ERROR :\n" in out and "  [ERROR] [Help 1] http://cwiki" in out
    assert "build exit status" not in out and "\x1b" not in out


@pytest.mark.parametrize(("log", "cause"), [
    ("   Compiling x v0.1.0\nerror[E0425]: cannot find value `y` in this scope\n --> src/lib.rs:3:5\n"
     "error: could not compile `x`\n[regbench] build exit status 101", "error[E0425]: cannot find value `y` in this scope"),
    ("# example.com/x\n./x.go:12:3: undefined: foo\n[regbench] build exit status 1", "./x.go:12:3: undefined: foo"),
    ("x.c: In function 'main':\nx.c:3:5: error: expected ';' before '}' token\nmake: *** [x] Error 1\n",
     "x.c:3:5: error: expected ';' before '}' token"),
    ("[regbench] build exit status 2", ""),
])
def test_build_cause_of_other_builders(log, cause):
    from regbench.failures import build_cause

    assert build_cause(log) == cause
