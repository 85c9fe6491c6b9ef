"""What the command line says: options that do not go together, and bad option values, are usage
errors, exit status 2 with click's ``Usage:`` and one ``Error:`` line, found before anything is
read or written (docs/cli.md, "Exit statuses"), while status 3 stays for errors of the
configuration, input files and the store; help text that names every mode an option is for; and
table cells printed as text, not as rich markup."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.model import RunRecord
from regbench.store import Store

CASES = {
    "run --plan optimized --runs": (["run", "--plan", "optimized", "--runs", "3"],
                                    "give --runs or --plan optimized, not both"),
    "run --versions --releases": (["run", "--versions", "HEAD", "--releases", "foo==1..2"],
                                  "give --versions (git) or --releases (a package's releases), not both"),
    "run --suite --no-suite": (["run", "--suite", "s.toml", "--no-suite"], "give --suite FILE or --no-suite, not both"),
    "run --suite --configuration": (["run", "--suite", "s.toml", "--configuration", "foo"],
                                    "a suite names its own (give --no-suite to run one configuration)"),
    "run --suite --plan optimized": (["run", "--suite", "s.toml", "--plan", "optimized"],
                                     "--plan optimized is not offered with a suite"),
    "detect --executor dask --jobs": (["detect", "--executor", "dask", "--jobs", "2"],
                                      "--jobs is for --executor local"),
    "detect --incremental ci-overlap": (["detect", "--incremental", "--method", "ci-overlap"],
                                        "--incremental: method 'ci-overlap' has no incremental mode"),
    "run --machine --executor dask": (["run", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9", "--machine", "m"],
                                      "--machine names the runs made here; with --executor dask a run is stored"),
    "run --scheduler without dask": (["run", "--scheduler", "tcp://127.0.0.1:9"], "--scheduler is for --executor dask"),
    "run --executor dask without a scheduler": (["run", "--executor", "dask"],
                                                "--executor dask needs --scheduler ADDRESS"),
    "detect --scheduler without dask": (["detect", "--scheduler", "tcp://127.0.0.1:9"],
                                        "--scheduler is for --executor dask"),
    "detect --executor dask without a scheduler": (["detect", "--executor", "dask"],
                                                   "--executor dask needs --scheduler ADDRESS"),
    "detect --notify --dry-run": (["detect", "--notify", "--dry-run"],
                                  "--dry-run records no alerts, so --notify would have nothing to send"),
    "screen --design doptimal --generator": (["screen", "--design", "doptimal", "--size", "12", "--generator", "D = ABC"],
                                             "--generator and --resolution are options of --design fractional"),
    "screen --design doptimal without --size": (["screen", "--design", "doptimal"],
                                                "--design doptimal needs --size RUNS"),
    "screen --design doptimal --order 3": (["screen", "--design", "doptimal", "--size", "12", "--order", "3"],
                                           "--design doptimal: --order 3: the model is of main effects"),
    "screen --design full --size": (["screen", "--design", "full", "--size", "8"],
                                    "--generator, --size and --resolution are options of --design fractional"),
    "screen --important without suite": (["screen", "--important", "a"], "--design suite needs --important OPTION"),
    "screen --design suite without --important": (["screen", "--design", "suite"],
                                                  "--design suite needs --important OPTION"),
    "screen --save-suite without suite": (["screen", "--save-suite", "out.toml"],
                                          "--save-suite is for --design suite (without --augment)"),
    "screen --term without --augment": (["screen", "--term", "a*b"],
                                        "--term names the model of a follow-up: give --augment N too"),
    "evaluate --shape with a real corpus": (["evaluate", "--corpus", "real", "--shape", "few-runs"],
                                            "--shape applies to the synthetic corpus only"),
    "evaluate --first-runs with the synthetic corpus": (["evaluate", "--first-runs", "3"],
                                                        "--first-runs applies to real corpora only"),
    "optimize --threshold": (["optimize", "--threshold", "1.5"],
                             "Invalid value for '--threshold': 1.5 is not in the range 0<x<1"),
    "optimize --min-runs": (["optimize", "--min-runs", "0"], "Invalid value for '--min-runs'"),
    "push without a token": (["push", "regbench.toml", "--server", "http://127.0.0.1:9", "--format", "jsonl"],
                             "give the API token with one of --token-env VAR or --token-file PATH"),
    "push with two tokens": (["push", "regbench.toml", "--server", "http://127.0.0.1:9", "--format", "jsonl",
                              "--token-env", "X", "--token-file", "t"],
                             "give the API token with one of --token-env VAR or --token-file PATH"),
    # Bad option values, known to be bad from the command line alone (they were status 3, some
    # after the store was created).
    "screen --design unknown": (["screen", "--design", "taguchi"],
                                "Invalid value for '--design': unknown design 'taguchi' (known: doptimal, fractional, "
                                "full, plackett-burman, suite)"),
    "screen --size not a power of two": (["screen", "--size", "6"],
                                         "--size 6: a fraction's size is a power of two of at least 4"),
    "screen --generator with --size": (["screen", "--generator", "D = ABC", "--size", "8"],
                                       "give --generator (the fraction) or --size (a fraction searched for), not both"),
    "screen --generator without =": (["screen", "--generator", "D ABC"],
                                     "--generator 'D ABC': expected the form 'D = ABC'"),
    "evaluate --methods unknown": (["evaluate", "--methods", "ci-overlap,nope"],
                                   "Invalid value for '--methods': unknown method 'nope' (known: auto, "),
    "evaluate --methods empty": (["evaluate", "--methods", ","],
                                 "Invalid value for '--methods': ',': give method names separated by commas, or 'all'"),
    "evaluate --shape unknown": (["evaluate", "--shape", "noisy"],
                                 "Invalid value for '--shape': unknown shape 'noisy' (known: default, "),
    "evaluate --seeds not integers": (["evaluate", "--seeds", "1,x"],
                                      "'x' is not a non-negative integer (give seeds separated by commas)"),
    "evaluate --corpus blank": (["evaluate", "--corpus", " "],
                                "Invalid value for '--corpus': ' ' is blank: give synthetic, real or a folder"),
    "detect --option without =": (["detect", "--option", "nonsense"], "--option 'nonsense': expected NAME=VALUE"),
    "detect --option unknown": (["detect", "--method", "talos-ttest", "--option", "window=3"],
                                "--option window: talos-ttest has no such option (its options: "),
    "detect --option of the wrong type": (["detect", "--method", "talos-ttest", "--option", "threshold=high"],
                                          "--option threshold=high: expected a number"),
    "detect --option refused": (["detect", "--method", "forecast", "--option", "min_history=2"],
                                "--option min_history=2: `min_history` must be an integer of at least 3"),
    "detect --option twice": (["detect", "--method", "forecast", "--option", "reverted=drop", "--option",
                               "reverted=report"], "--option reverted: given twice"),
    "detect --option of the command": (["detect", "--option", "confidence_level=0.9"],
                                       "--option confidence_level: use --confidence"),
    "diagnose --option unknown": (["diagnose", "f", "--option", "nope=1"], "--option nope: auto has no such option"),
    "detect --confidence nan": (["detect", "--confidence", "nan"],
                                "Invalid value for '--confidence': 'nan' is not a finite number"),
    "detect --min-change inf": (["detect", "--min-change", "inf"],
                                "Invalid value for '--min-change': 'inf' is not a finite number"),
    "diagnose --target nan": (["diagnose", "f", "--target", "nan"],
                              "Invalid value for '--target': 'nan' is not a finite number"),
    "summary --confidence nan": (["summary", "--confidence", "nan"],
                                 "Invalid value for '--confidence': 'nan' is not a finite number"),
    "optimize --threshold nan": (["optimize", "--threshold", "nan"],
                                 "Invalid value for '--threshold': 'nan' is not a finite number"),
    "compare --threshold inf": (["compare", "v1", "v2", "--threshold", "inf"],
                                "Invalid value for '--threshold': 'inf' is not a finite number"),
    "compare --alpha nan": (["compare", "v1", "v2", "--variance", "--alpha", "nan"],
                            "Invalid value for '--alpha': 'nan' is not a finite number"),
    "compare --run --location with instructions": (["compare", "v1", "v2", "--run", "--measure", "instructions",
                                                    "--location", "low"],
                                                   "--location low applies to time, not to --measure instructions"),
    "bisect --location with instructions": (["bisect", "v1", "v2", "--benchmark", "f", "--measure", "instructions",
                                             "--location", "low"],
                                            "--location low applies to time, not to --measure instructions"),
    "bisect --threshold nan": (["bisect", "v1", "v2", "--benchmark", "f", "--threshold", "nan"],
                               "Invalid value for '--threshold': 'nan' is not a finite number"),
    "run --pin": (["run", "--pin", "x-y"], "--pin must be a list of CPU numbers or a CPU list"),
    "run --env-size too large": (["run", "--env-size", "200000"],
                                 "--env-size must be a positive integer of at most 131072, got 200000"),
    "run --quiet-wait more than a week": (["run", "--quiet-wait", "1e9"],
                                          "--quiet-wait must be a non-negative number of seconds of at most 604800"),
    "run --quiet-load nan": (["run", "--quiet-load", "nan"],
                             "Invalid value for '--quiet-load': 'nan' is not a finite number"),
    "run --releases without ==": (["run", "--releases", "foo"],
                                  "--releases 'foo': expected PACKAGE==A..B or PACKAGE==A,B,C"),
    "run --releases bad version": (["run", "--releases", "foo==1..zz"], "--releases 'foo==1..zz': Invalid version"),
    "run --configuration like a file": (["run", "--configuration", "other.toml"],
                                        "Invalid value for '--configuration': 'other.toml' looks like a file, not a "
                                        "configuration name"),
    "run --configuration blank": (["run", "--configuration", " "],
                                  "Invalid value for '--configuration': ' ' is blank: give a configuration name"),
    "run --config after the command": (["run", "--config", "other.toml"],
                                       "--config other.toml: a configuration file is given before the command"),
    "compare --b-config after the command": (["compare", "v1", "v1", "--variance", "--b-config", "x"],
                                             "--b-config x: the configuration's name is --b-configuration NAME"),
    "import --format unknown": (["import", "s.toml", "--format", "nope"],
                                "Invalid value for '--format': unknown format 'nope' (known: auto, csv, jsonl, "),
    "import --timestamp": (["import", "s.toml", "--format", "go", "--version", "v1", "--timestamp", "yesterday"],
                           "Invalid value for '--timestamp': 'yesterday' is not ISO 8601"),
    "import --configuration like a file": (["import", "s.toml", "--format", "go", "--version", "v1",
                                            "--configuration", "a/b.yaml"],
                                           "Invalid value for '--configuration': 'a/b.yaml' looks like a file"),
    "token create --scope unknown": (["token", "create", "--name", "ci", "--scope", "root"],
                                     "Invalid value for '--scope': unknown token scope 'root' (known: read, triage, "
                                     "submit, admin)"),
    "token create --name blank": (["token", "create", "--name", " "],
                                  "Invalid value for '--name': ' ' is blank: a token needs a name"),
    "push --server not a URL": (["push", "regbench.toml", "--server", "127.0.0.1:8000", "--format", "jsonl",
                                 "--token-env", "X"],
                                "Invalid value for '--server': '127.0.0.1:8000' is not a server's URL"),
    "push --server port out of range": (["push", "regbench.toml", "--server", "http://127.0.0.1:99999", "--format",
                                         "jsonl", "--token-env", "X"],
                                        "Invalid value for '--server': 'http://127.0.0.1:99999' is not a server's URL"),
    "push --timeout nan": (["push", "regbench.toml", "--server", "http://127.0.0.1:9", "--format", "jsonl",
                            "--token-env", "X", "--timeout", "nan"],
                           "Invalid value for '--timeout': 'nan' is not a finite number"),
}


@pytest.fixture
def regbench(capsys, monkeypatch):
    """``regbench(args, cwd)``: the command line run by ``main`` in this process from ``cwd``, as a
    CompletedProcess (its exit status, what it wrote to stdout and to stderr).  The console entry
    point in a fresh interpreter exits with the status ``main`` returns; its usage errors (2,
    ``Usage:`` and one ``Error:`` line) and errors of status 3 as a real process are checked by
    tests/test_cli.py::test_errors_are_one_line."""
    def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        status = main(list(args))
        out = capsys.readouterr()
        return subprocess.CompletedProcess(["regbench", *args], status, out.out, out.err)
    return run


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "regbench.toml").write_text(
        '[project]\nname = "x"\nstore = "r.db"\n'
        f'[[benchmark]]\nname = "f"\ncommand = ["{sys.executable}", "-c", "pass"]\n')
    (tmp_path / "s.toml").write_text("")  # never read: the usage error comes first
    return tmp_path


@pytest.mark.parametrize("args, message", CASES.values(), ids=list(CASES))
def test_options_that_do_not_go_together_exit_2(project, args, message, regbench):
    out = regbench(args, project)
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and message in errors[0], out.stderr
    assert out.stderr.startswith(f"Usage: regbench {args[0]} ")
    assert "error:" not in out.stderr and "Traceback" not in out.stderr
    assert not (project / "r.db").exists()  # found before the store is opened


def test_runs_conflict_is_reported_before_the_missing_plan(project, regbench):
    # A store without optimized plans: --plan optimized alone is an error of the store (3), but
    # with --runs the options' conflict is what is reported, and as a usage error.
    with Store(project / "r.db") as store:
        store.add_runs([RunRecord("f", "v1", r, np.array([1.0, 1.1])) for r in range(3)])
    out = regbench(["run", "--plan", "optimized", "--runs", "3"], project)
    assert out.returncode == 2 and "Error: give --runs or --plan optimized, not both" in out.stderr
    assert "no optimized plan" not in out.stderr


def test_machine_with_the_configurations_dask_executor_is_a_usage_error_too(project, regbench):
    # The executor of [run] in regbench.toml, not an option: the conflict is found once the file
    # is read, still before the store is opened or the scheduler is asked.
    with (project / "regbench.toml").open("a") as fh:
        fh.write('[run]\nexecutor = "dask"\nscheduler = "tcp://127.0.0.1:9"\n')
    out = regbench(["run", "--machine", "m"], project)
    assert out.returncode == 2 and "Error: --machine names the runs made here" in out.stderr, out.stderr
    assert not (project / "r.db").exists()


def test_a_bad_configuration_file_is_still_status_3(project, regbench):
    (project / "regbench.toml").write_text("[project\n")
    out = regbench(["run", "--runs", "3"], project)
    assert out.returncode == 3 and out.stderr.startswith("error: ") and out.stderr.count("\n") == 1, out.stderr


@pytest.mark.parametrize("args, message", [
    (["screen", "--generator", "X = ABC", "--dry-run"], "unknown factor 'X'"),
    (["screen", "--design", "suite", "--important", "zz", "--dry-run"], "unknown option 'zz'"),
])
def test_values_that_name_what_the_configuration_holds_stay_status_3(project, args, message, regbench):
    # Whether a generator's factor or an option exists is known once regbench.toml is read: an
    # error of the configuration's kind (3), not a usage error.
    with (project / "regbench.toml").open("a") as fh:
        fh.write("[screen]\n" + "".join(f'[[screen.option]]\nname = "{n}"\nlevels = ["x", "y"]\nenv = "{n.upper()}"\n'
                                        for n in "abcd"))
    out = regbench(args, project)
    assert out.returncode == 3 and out.stderr.startswith("error: ") and message in out.stderr, out.stderr
    assert not (project / "r.db").exists()


def test_compare_help_says_alpha_is_also_for_run(regbench):
    out = regbench(["compare", "--help"], Path.cwd())
    assert out.returncode == 0
    alpha = out.stdout.split("--alpha", 1)[1].split("\n  --", 1)[0]
    assert "--variance" in alpha and "--run" in alpha, alpha


def test_system_check_table_keeps_brackets(tmp_path):
    # A machine with ASLR on (advice: "aslr = false in [noise]") and a governor whose value has
    # brackets, rendered by the table printer of `regbench system check`, in a pipe (plain
    # columns) and in a terminal (a rich table).
    root = tmp_path / "root"
    for rel, text in {"proc/sys/kernel/randomize_va_space": "2\n",
                      "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "[odd]\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    script = ("import sys; from pathlib import Path\n"
              "from regbench.run.system_check import system_check\n"
              "from regbench.report.diagnosis import print_system_check\n"
              "print_system_check(system_check(Path(sys.argv[1]), busy_interval=0.01))\n")
    for env in ({"COLUMNS": "400"}, {"COLUMNS": "400", "FORCE_COLOR": "1"}):
        out = subprocess.run([sys.executable, "-c", script, str(root)], capture_output=True, text=True, timeout=60,
                             env={**os.environ, **env})
        assert out.returncode == 0, out.stderr
        text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout)
        assert "(or aslr = false in [noise])" in text and "[odd]" in text, text
