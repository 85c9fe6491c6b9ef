"""The command shell: help, documentation, one-line errors and exit statuses."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import COMMAND_MODULES, _register, cli, main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def commands():
    _register()
    return sorted(cli.commands)


def run(args, cwd=None, env_store=None):
    """Run the real console entry point in a fresh interpreter."""
    cmd = [sys.executable, "-m", "regbench.cli.main", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def run_here(capsys):
    """``run_here(args)``: what :func:`run` does, by ``main`` in this process (for the tests that
    run a command many times: a fresh interpreter costs each a second or more of imports; the
    tests that run each command as a process are the others)."""
    def run_(args):
        capsys.readouterr()
        code = main(args)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out.out, out.err)
    return run_


def test_every_command_module_is_registered(commands):
    assert len(commands) == len(COMMAND_MODULES)
    for name in ("init", "run", "import", "export", "show", "summary", "compare", "detect", "demo"):
        assert name in commands


def test_every_command_has_help_and_is_documented(commands, run_here):
    doc = (ROOT / "docs" / "cli.md").read_text()
    for name in commands:
        assert f"## `regbench {name}`" in doc, f"docs/cli.md does not document `regbench {name}`"
        out = run_here([name, "--help"])
        assert out.returncode == 0
        assert f"Usage: regbench {name}" in out.stdout
        # every option the command has is named in the docs
        for opt in re.findall(r"^\s+(--[a-z][a-z-]*)", out.stdout, flags=re.M):
            if opt != "--help":
                assert opt in doc, f"docs/cli.md does not mention {opt} of `regbench {name}`"


def test_top_level_help_lists_commands():
    out = run(["--help"])
    assert out.returncode == 0 and "compare" in out.stdout and "detect" in out.stdout


def write_csv(path: Path, levels, runs=5, iters=20, seed=0, bench="fft"):
    rng = np.random.default_rng(seed)
    rows = ["benchmark,version,run,iteration,value"]
    for v, level in enumerate(levels):
        for r in range(runs):
            mu = level * (1 + rng.normal(0, 0.003))
            rows += [f"{bench},v{v},{r},{i},{mu * (1 + rng.normal(0, 0.01))!r}" for i in range(iters)]
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture(scope="module")
def step_store_template(tmp_path_factory) -> Path:
    """The store ``store_with_step`` copies: a 20% step at v2, imported by the real console entry
    point once per module (not once per test: a fresh interpreter and an import each time)."""
    root = tmp_path_factory.mktemp("step")
    csv = root / "m.csv"
    write_csv(csv, [1.0, 1.0, 1.2, 1.2])
    store = root / "r.db"
    out = run(["--store", str(store), "import", str(csv)])
    assert out.returncode == 0, out.stderr
    return store


@pytest.fixture
def store_with_step(step_store_template, tmp_path):
    """A copy of that store of this test's own (detect writes its series' states and alerts to it)."""
    for part in step_store_template.parent.glob(step_store_template.name + "*"):  # with a -wal, if any
        shutil.copy(part, tmp_path / part.name)
    return tmp_path / step_store_template.name


def test_detect_json_and_table(store_with_step, run_here):
    out = run(["--store", str(store_with_step), "detect", "--format", "json"])
    assert out.returncode == 0
    changes = json.loads(out.stdout)
    assert [(c["version"], c["previous"], c["kind"]) for c in changes] == [("v2", "v1", "regression")]
    assert 0.18 < changes[0]["change"] < 0.22
    # The table and the gate by main in this process (the command as a process: above).
    table = run_here(["--store", str(store_with_step), "detect"])
    assert "v2" in table.stdout and "regression" in table.stdout
    gate = run_here(["--store", str(store_with_step), "detect", "--fail-on-regression"])
    assert gate.returncode == 1


def test_detector_options_reach_the_detector(tmp_path, store_with_step, capsys):
    # --option NAME=VALUE round trip: each option changes what the detector reports.  The
    # commands run by main in this process (what reaches the detector is decided there; the
    # console entry point as a process is run by the tests above and below).
    csv = tmp_path / "long.csv"
    levels = [1.0] * 40 + [1.2] * 20
    levels[25] = 1.5  # a one-version jump of +50%, reverted at the next version
    write_csv(csv, levels, runs=3, iters=10)
    store = tmp_path / "long.db"
    assert main(["--store", str(store), "import", str(csv)]) == 0

    def found(*args):
        capsys.readouterr()
        status = main(["--store", str(store), "detect", "--dry-run", "--format", "json", *args])
        out = capsys.readouterr()
        assert status == 0, out.err
        return [c["version"] for c in json.loads(out.out)]

    assert found("--method", "talos-ttest") == ["v40"]
    assert found("--method", "talos-ttest", "--option", "threshold=1e6") == []
    assert found("--method", "talos-ttest", "--option", "back_window=12", "--option", "min_back_window=12") == ["v40"]
    # seed 003 s.5.3: short jumps are caught by default (and, at 99% per version, a few
    # excursions of noise too: here two of 32 versions tested, +0.9% and -0.6%).
    report, drop = found("--method", "forecast"), found("--method", "forecast", "--option", "reverted=drop")
    assert "v25" in report and "v40" in report
    assert "v25" not in drop and "v40" in drop
    capsys.readouterr()
    assert main(["--store", str(store_with_step), "detect", "--dry-run", "--format", "json", "--method", "ci-overlap",
                 "--option", "interval=robust"]) == 0
    (change,) = json.loads(capsys.readouterr().out)
    assert list(change) == ["benchmark", "config", "machine", "version", "previous", "change", "ci_low", "ci_high",
                            "kind", "method"]
    assert (change["version"], change["method"]) == ("v2", "ci-overlap") and 0.18 < change["change"] < 0.22


def test_every_option_of_every_builtin_detector_is_documented():
    import inspect

    from regbench.detect import BUILTIN, get_detector

    doc = (ROOT / "docs" / "cli.md").read_text()
    assert "--option NAME=VALUE" in doc
    for method in BUILTIN:
        params = inspect.signature(type(get_detector(method))).parameters
        for name, p in params.items():
            assert p.kind is p.KEYWORD_ONLY
            if name not in ("confidence_level", "min_change"):  # --confidence, --min-change
                assert f"| `{method}` | `{name}` |" in doc, f"docs/cli.md does not list {method}'s option {name}"


def test_compare_exit_status_gates_on_regression(store_with_step, run_here):
    same = run(["--store", str(store_with_step), "compare", "v0", "v1"])
    assert same.returncode == 0, same.stdout + same.stderr
    assert "no change" in same.stdout
    worse = run(["--store", str(store_with_step), "compare", "v1", "v2", "--format", "json"])
    assert worse.returncode == 1
    assert json.loads(worse.stdout)[0]["verdict"] == "regression"
    # a 20% regression is below a 25% threshold: significant, but "no change" for the gate (these
    # two by main in this process: the exit statuses of the command as a process are those above)
    lenient = run_here(["--store", str(store_with_step), "compare", "v1", "v2", "--threshold", "0.25"])
    assert lenient.returncode == 0 and "no change" in lenient.stdout
    better = run_here(["--store", str(store_with_step), "compare", "v2", "v1"])
    assert better.returncode == 0 and "improvement" in better.stdout


def test_summary_json_has_the_precision_fields(store_with_step):
    out = run(["--store", str(store_with_step), "summary", "--format", "json", "--warmup-cost", "3"])
    rows = json.loads(out.stdout)
    assert [r["version"] for r in rows] == ["v0", "v1", "v2", "v3"]
    for r in rows:
        assert r["runs"] == 5 and r["iterations"] == 20
        assert r["half_width"] > 0 and r["robust_half_width"] > 0 and r["impact_factor"] > 0
        assert r["n_opt"] is None or r["n_opt"] > 0


@pytest.mark.parametrize("args, message", [
    (["compare", "v0", "nope"], "error: no version named 'nope' in the store"),
    (["summary", "--benchmark", "nope"], "error: no benchmark named 'nope' in the store"),
    (["detect", "--method", "nope"], "Invalid value for '--method'"),
    (["detect", "--method", "forecast", "--option", "min_history=2"],
     "Error: --option min_history=2: `min_history` must be an integer of at least 3"),
    (["detect", "--method", "ci-overlap", "--option", "interval=median"],
     "Error: --option interval=median: `interval` must be one of 'plain', 'robust'"),
    (["detect", "--method", "talos-ttest", "--option", "back_window=20", "--option", "min_back_window=25"],
     "Error: --option back_window=20 --option min_back_window=25: `min_back_window` must not exceed `back_window`"),
    (["detect", "--method", "talos-ttest", "--option", "threshold=high"],
     "Error: --option threshold=high: expected a number"),
    (["detect", "--method", "talos-ttest", "--option", "window=3"],
     "Error: --option window: talos-ttest has no such option "
     "(its options: back_window, fore_window, threshold, min_back_window, locate)"),
    (["detect", "--method", "forecast", "--option", "reverted=drop", "--option", "reverted=report"],
     "Error: --option reverted: given twice"),
    (["detect", "--method", "ci-overlap", "--option", "confidence_level=0.9"],
     "Error: --option confidence_level: use --confidence"),
    (["detect", "--option", "nonsense"], "Error: --option 'nonsense': expected NAME=VALUE"),
])
def test_errors_are_one_line(store_with_step, args, message, run_here):
    # What the store holds is an error (3, one line); a bad option value, --option's included, is
    # a usage error (2, one Error: line after the usage).  By main in this process: the tests
    # above and below run compare, summary and detect as processes.
    out = run_here(["--store", str(store_with_step), *args])
    assert out.returncode == (3 if message.startswith("error:") else 2), out.stderr
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    if message.startswith("error:"):
        assert out.stderr.strip().count("\n") == 0
    else:
        assert [line for line in out.stderr.splitlines() if line.startswith("Error: ")] == [
            out.stderr.strip().splitlines()[-1]]


def test_bad_csv_is_one_line_and_imports_nothing(tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("benchmark,version,run,iteration,value\nfft,v0,0,0,1.0\nfft,v0,0,1,oops\n")
    store = tmp_path / "r.db"
    out = run(["--store", str(store), "import", str(csv)])
    assert out.returncode == 3
    assert out.stderr.strip() == f"error: {csv}:3: `value` is not a number: 'oops'"
    assert not store.exists()  # the file is checked before the store is opened, or created


def test_missing_store_is_a_clear_error(tmp_path):
    out = run(["--store", str(tmp_path / "none.db"), "summary"])
    assert out.returncode == 3
    assert "no results store at" in out.stderr and out.stderr.count("\n") == 1


def test_main_returns_exit_codes_without_exiting(store_with_step, capsys):
    assert main(["--store", str(store_with_step), "compare", "v1", "v2"]) == 1
    assert main(["--store", str(store_with_step), "compare", "v0", "v1"]) == 0
    capsys.readouterr()


def _no_nan(text: str):
    def refuse(token):
        raise ValueError(f"not JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_compare_json_is_strict_when_a_side_has_no_successful_run(tmp_path):
    from regbench.model import RunRecord
    from regbench.store import Store

    store_path = tmp_path / "r.db"
    with Store(store_path) as store:
        for r in range(3):
            store.add_run(RunRecord("b", "v1", r, np.array([1.0, 1.1]), warmup=1))
            store.add_run(RunRecord("b", "v2", r, np.empty(0), status="failed", exit_code=3, warmup=1))
    out = run(["--store", str(store_path), "compare", "v1", "v2", "--format", "json"])
    assert out.returncode == 1  # every run of B failed: the benchmark no longer runs, which gates
    (row,) = _no_nan(out.stdout)
    assert row["verdict"] == "failed" and row["mean_b"] is None and row["runs_b"] == 0
    shown = run(["--store", str(store_path), "show"])
    failed = [line.split() for line in shown.stdout.splitlines() if line.startswith("b ") and "failed" in line]
    assert len(failed) == 3 and all(cols[5] == "0" for cols in failed)  # samples: 0, not -1


def test_export_into_a_missing_folder_is_one_line(store_with_step, tmp_path):
    out = run(["--store", str(store_with_step), "export", "-o", str(tmp_path / "nope" / "x.csv")])
    assert out.returncode == 3
    assert out.stderr.strip() == f"error: {tmp_path / 'nope' / 'x.csv'}: no folder {tmp_path / 'nope'}"


def test_reading_commands_do_not_turn_a_foreign_file_into_a_store(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    out = run(["--store", str(empty), "summary"])
    assert out.returncode == 3 and "is not a regbench store" in out.stderr
    assert empty.read_bytes() == b""


def test_command_names_follow_their_modules():
    """The lazy group finds a command by its module's name (cmd_foo_bar is foo-bar), without importing it."""
    import importlib

    from regbench.cli.main import command_name

    for module in COMMAND_MODULES:
        assert importlib.import_module(f"regbench.cli.{module}").command.name == command_name(module)


def test_a_command_imports_only_its_own_module():
    code = ("import sys\n"
            "from regbench.cli.main import main\n"
            "main(['detect', '--help'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('regbench.cli.cmd_')))\n"
            "print(sorted(m for m in ('numpy', 'scipy', 'pandas', 'sqlalchemy', 'rich', 'sklearn', 'matplotlib') "
            "if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    modules, heavy = out.stdout.splitlines()[-2:]
    assert modules == "['regbench.cli.cmd_detect']"
    assert heavy == "[]"  # --help needs none of them
    # An unknown command is still click's usage error.
    assert run(["nosuch"]).returncode == 2


def test_an_incremental_detect_imports_none_of_the_heavy_packages_it_does_not_use(store_with_step, tmp_path):
    """The re-check a CI job runs after each new version pays for numpy, SQLAlchemy and
    scipy.special only: not pandas, scikit-learn, matplotlib, dask or alembic (other commands')."""
    assert run(["--store", str(store_with_step), "detect"]).returncode == 0  # saves each series' state
    more = tmp_path / "more.csv"
    write_csv(more, [1.0, 1.0, 1.2, 1.2, 1.5], seed=1)
    lines = more.read_text().splitlines()
    more.write_text("\n".join([lines[0]] + [ln for ln in lines[1:] if ",v4," in ln]) + "\n")
    assert run(["--store", str(store_with_step), "import", str(more)]).returncode == 0
    code = ("import json, sys\n"
            "from regbench.cli.main import main\n"
            f"status = main(['--store', {str(store_with_step)!r}, 'detect', '--incremental', '--dry-run', "
            "'--format', 'json'])\n"
            "print(json.dumps([status, sorted(m for m in ('pandas', 'sklearn', 'matplotlib', 'dask', 'alembic') "
            "if m in sys.modules)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    changes = json.loads(out.stdout[:out.stdout.rindex("\n[")])
    assert [(c["version"], c["kind"]) for c in changes] == [("v4", "regression")]  # the new version was checked
    assert json.loads(out.stdout.splitlines()[-1]) == [0, []]
