"""What the reading commands show of a store measured as a Go user measures: a tool's invocation
storing a run per reported benchmark, two configurations, tagged versions, times per operation,
counts that are exactly zero, and versions measured with 1-iteration plans."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.model import RunRecord, VersionAlias, VersionInfo
from regbench.store import Store

T0 = datetime(2024, 3, 1, 9, 0)


def _store(path: Path, *, configs=("default", "race"), tags=True) -> Path:
    """Versions v1, v2 (tagged v0.1.0, v0.2.0), each run 3 times per configuration by one campaign,
    every invocation reporting two Go benchmarks (``go/A`` about 4 ms/op, ``go/B`` 0 allocs/op)."""
    with Store(path) as store:
        store.ensure_versions([VersionInfo("aaaa111111", commit="aaaa111111" * 4, timestamp=T0),
                               VersionInfo("bbbb222222", commit="bbbb222222" * 4, timestamp=T0 + timedelta(hours=1))],
                              aliases={"aaaa111111": [VersionAlias("v0.1.0")], "bbbb222222": [VersionAlias("v0.2.0")]}
                              if tags else None)
        campaign = store.start_campaign(seed=1, machine="box", fingerprint={}, command="regbench run")
        gen = np.random.default_rng(0)
        for k, version in enumerate(("aaaa111111", "bbbb222222")):
            for config in configs:
                for r in range(3):
                    start = T0 + timedelta(minutes=10 * k + r, seconds=configs.index(config))
                    level = 4_157_530.0 * (1.0 + 0.1 * k)
                    store.add_runs([
                        RunRecord("go/A", version, r, level * (1 + 0.001 * gen.standard_normal(5)),
                                  config=config, machine="box", campaign_id=campaign, started_at=start),
                        RunRecord("go/B [allocs/op]", version, r, np.zeros(5), config=config, machine="box",
                                  campaign_id=campaign, started_at=start)],
                        benchmarks={"go/A": {"unit": "ns/op", "direction": "lower"},
                                    "go/B [allocs/op]": {"unit": "allocs/op", "direction": "lower"}})
        store.finish_campaign(campaign, "finished")
    return path


def _run(capsys, *args) -> tuple[int, str, str]:
    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


def _row(out: str, *starts: str) -> list[str]:
    """The cells of the first table row whose cells begin with ``starts`` (cells are two spaces
    apart or more in a pipe; a cell such as ``4.158 ms/op`` holds one)."""
    for line in out.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells[:len(starts)] == list(starts):
            return cells
    raise AssertionError(f"no row {starts} in:\n{out}")


# ------------------------------------------------------------------------ 1. show --runs
def test_show_runs_names_each_run_s_configuration_where_they_differ(tmp_path, capsys):
    db = _store(tmp_path / "r.db")
    status, out, _ = _run(capsys, "--store", db, "show", "--runs", "--benchmark", "go/A")
    assert status == 0
    runs = out[out.index("Runs"):]
    assert re.split(r"\s{2,}", runs.splitlines()[1]) == ["benchmark", "version", "config", "run", "status", "exit",
                                                         "samples", "warm-up", "seconds", "why"]
    assert {_row(runs, "go/A", "v0.1.0", c)[2] for c in ("default", "race")} == {"default", "race"}
    one = _store(tmp_path / "one.db", configs=("default",))
    status, out, _ = _run(capsys, "--store", one, "show", "--runs")
    assert status == 0 and "config" not in out[out.index("Runs"):].splitlines()[1]


# --------------------------------------------------------- 2. summary/diagnose --configuration
def test_summary_and_diagnose_select_a_configuration(tmp_path, capsys):
    db = _store(tmp_path / "r.db")
    status, out, _ = _run(capsys, "--store", db, "summary", "--benchmark", "go/A", "--configuration", "race")
    assert status == 0
    rows = [line for line in out.splitlines() if line.startswith("go/A")]
    assert len(rows) == 2 and "default" not in out  # one configuration: no config column, no default rows
    status, out, _ = _run(capsys, "--store", db, "diagnose", "go/A", "--configuration", "race", "--no-plots")
    assert status == 0 and out.splitlines()[0].startswith("go/A at v0.2.0 (race, box)")
    status, out, _ = _run(capsys, "--store", db, "diagnose", "go/A", "--no-plots")
    assert status == 0 and "(default, box)" in out.splitlines()[0]


@pytest.mark.parametrize("command", [["summary"], ["diagnose", "go/A", "--no-plots"], ["compare", "v0.1.0", "v0.2.0"]])
def test_an_unknown_configuration_is_named_with_the_nearest_stored_ones(tmp_path, capsys, command):
    db = _store(tmp_path / "r.db")
    status, _, err = _run(capsys, "--store", db, *command, "--configuration", "rac")
    assert status == 3
    assert err == "error: no configuration named 'rac' in the store (did you mean 'race'?)\n"
    status, _, err = _run(capsys, "--store", db, *command, "--configuration", "zzz")
    assert status == 3 and err == "error: no configuration named 'zzz' in the store (it holds 'default', 'race')\n"
    status, _, err = _run(capsys, "--store", db, *command, "--configuration", "fast.toml")
    assert status == 2 and "looks like a file, not a configuration name" in err


# ------------------------------------------------------------------ 3. invocations, not runs
def test_show_counts_invocations_and_series_runs(tmp_path, capsys):
    db = _store(tmp_path / "r.db")
    status, out, _ = _run(capsys, "--store", db, "show")
    assert status == 0
    # 2 versions x 2 configurations x 3 runs = 12 invocations, each storing 2 series-runs.
    assert out.splitlines()[-1].startswith("12 invocations, 24 series-runs ")
    assert _row(out, "aaaa111111", "v0.1.0")[-3:] == ["6", "12", "0"]  # invocations, series-runs ok, failed
    status, out, _ = _run(capsys, "--store", db, "show", "--benchmark", "go/A")
    assert status == 0 and out.splitlines()[-1].startswith("12 runs in ")  # one run per invocation: no split


def test_imported_runs_count_one_invocation_each(tmp_path, capsys):
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord(name, "v1", r, np.ones(3)) for name in ("a/x", "a/y") for r in range(2)])
    status, out, _ = _run(capsys, "--store", tmp_path / "r.db", "show")
    assert status == 0 and out.splitlines()[-1].startswith("4 runs in ")


# ------------------------------------------------------------------------------- 4. tags
def test_tagged_versions_are_shown_by_their_tags(tmp_path, capsys):
    db = _store(tmp_path / "r.db")
    status, out, _ = _run(capsys, "--store", db, "compare", "aaaa111111", "bbbb222222", "--benchmark", "go/A",
                          "--configuration", "default")
    assert status == 1  # +10%: a regression
    assert out.splitlines()[0].startswith("v0.2.0 against v0.1.0 ")
    assert re.split(r"\s{2,}", out.splitlines()[1].strip())[1:3] == ["v0.1.0", "v0.2.0"]
    status, out, _ = _run(capsys, "--store", db, "summary", "--benchmark", "go/A")
    assert _row(out, "go/A", "v0.2.0", "race")
    status, out, _ = _run(capsys, "--store", db, "show")
    assert _row(out, "bbbb222222", "v0.2.0", "bbbb222222")  # version, tags, commit
    status, out, _ = _run(capsys, "--store", db, "compare", "v0.1.0", "v0.2.0", "--format", "json")
    assert {(row["a"], row["b"]) for row in json.loads(out)} == {("aaaa111111", "bbbb222222")}
    untagged = _store(tmp_path / "plain.db", tags=False)
    status, out, _ = _run(capsys, "--store", untagged, "show")
    assert "tags" not in out and _row(out, "aaaa111111", "aaaa111111")


def test_the_change_and_alert_tables_show_tags(tmp_path, capsys):
    db = _store(tmp_path / "r.db")
    status, out, err = _run(capsys, "--store", db, "detect", "--benchmark", "go/A")
    assert status == 0, err
    assert _row(out, "go/A", "v0.2.0", "v0.1.0")
    status, out, _ = _run(capsys, "--store", db, "alerts", "list")
    assert status == 0
    assert any(re.split(r"\s{2,}", line.strip())[6:8] == ["v0.2.0", "v0.1.0"] for line in out.splitlines())
    status, out, _ = _run(capsys, "--store", db, "alerts", "show", "1")
    assert status == 0 and " at v0.2.0 (since v0.1.0), alert #1" in out.splitlines()[0]


# --------------------------------------------------------------------- 5. compare's units
def test_compare_scales_a_time_per_operation_as_summary_does(tmp_path, capsys):
    db = _store(tmp_path / "r.db")
    status, out, _ = _run(capsys, "--store", db, "compare", "v0.1.0", "v0.2.0", "--benchmark", "go/A",
                          "--configuration", "default")
    row = _row(out, "go/A")
    assert re.fullmatch(r"4\.1\d\d ms/op", row[1]) and re.fullmatch(r"4\.5\d\d ms/op", row[2])
    status, out, _ = _run(capsys, "--store", db, "compare", "v0.1.0", "v0.2.0", "--benchmark", "go/B [allocs/op]",
                          "--configuration", "default")
    assert _row(out, "go/B [allocs/op]")[1:3] == ["0 allocs/op", "0 allocs/op"]
    # The pull-request comment (--format github) names the tags and scales the means the same way.
    status, out, _ = _run(capsys, "--store", db, "compare", "v0.1.0", "v0.2.0", "--benchmark", "go/A",
                          "--configuration", "default", "--format", "github")
    assert "v0.2.0 against v0.1.0" in out and "| v0.1.0 | v0.2.0 |" in out
    [line] = [ln for ln in out.splitlines() if ln.startswith("| go/A ")]
    assert re.search(r"\| 4\.1\d\d ms/op \| 4\.5\d\d ms/op \|", line), line


# ----------------------------------------------------------- 6. diagnose's default version
def test_diagnose_defaults_to_the_latest_version_it_can_diagnose(tmp_path, capsys):
    db = tmp_path / "r.db"
    with Store(db) as store:
        store.ensure_versions([VersionInfo("v1", timestamp=T0), VersionInfo("v2", timestamp=T0 + timedelta(hours=1))])
        gen = np.random.default_rng(1)
        store.add_runs([RunRecord("b", "v1", r, 1 + 0.01 * gen.standard_normal(8)) for r in range(3)])
        # v2 measured with a 1-iteration plan: two runs, one measured sample each.
        store.add_runs([RunRecord("b", "v2", r, 1 + 0.01 * gen.standard_normal(1)) for r in range(3)])
    status, out, err = _run(capsys, "--store", db, "diagnose", "b", "--no-plots")
    assert status == 0, err
    assert out.splitlines()[0].startswith("b at v1 ")
    status, _, err = _run(capsys, "--store", db, "diagnose", "b", "--version", "v2", "--no-plots")
    assert status == 3
    assert err.rstrip().endswith("(0 found); the latest that can be is 'v1' (--version v1)")


# ------------------------------------------------------------ 7. all-zero series, no warnings
def test_diagnose_of_an_all_zero_count_writes_no_warning(tmp_path):
    path = tmp_path / "r.db"
    with Store(path) as store:
        for v in ("v1", "v2"):
            for r in range(3):
                store.add_run(RunRecord("get [allocs/op]", v, r, np.zeros(10)))
    run = subprocess.run([sys.executable, "-W", "always", "-m", "regbench.cli.main", "--store", str(path), "diagnose",
                          "get [allocs/op]", "--no-plots"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stderr == ""


# ------------------------------------------------------------- the whole loop with real Go
GO = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
GO_TEST = """package tiny

import (
	"strings"
	"testing"
)

var sink string
var total int

func BenchmarkJoin(b *testing.B) {
	parts := []string{"a", "b", "c"}
	for i := 0; i < b.N; i++ {
		sink = strings.Join(parts, ",")
	}
}

func BenchmarkAdd(b *testing.B) {
	b.ReportAllocs()
	t := 0
	for i := 0; i < b.N; i++ {
		t += i
	}
	total = t
}
"""


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.mark.slow
@pytest.mark.skipif(GO is None, reason="go is not installed")
def test_a_go_module_with_two_configurations_and_tags(tmp_path, capsys, monkeypatch, go_cache):
    repo = tmp_path / "proj"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "go.mod").write_text("module example.com/tiny\n\ngo 1.20\n")
    (repo / "tiny_test.go").write_text(GO_TEST)
    (repo / ".gitignore").write_text(".regbench/\n")
    command = ["sh", "-c", f"{GO} test -run '^$' -bench . -benchtime 200x -count \"$REGBENCH_ITERATIONS\" ."]
    (repo / "regbench.toml").write_text('[project]\nname = "tiny"\n[[benchmark]]\nname = "go"\n'
                                        f"command = {json.dumps(command)}\n"
                                        'format = "go"\nruns = 2\niterations = 3\nwarmup = 0\ntimeout = 300\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "v0.1.0")
    (repo / "tiny_test.go").write_text(GO_TEST.replace('"a", "b", "c"', '"a", "b", "c", "d"'))
    _git(repo, "commit", "-qam", "two")
    _git(repo, "tag", "v0.2.0")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("GOCACHE", str(go_cache))
    for config in ("default", "gomaxprocs1"):
        status, _, err = _run(capsys, "run", "--versions", "v0.1.0,v0.2.0", "--seed", "1", "--configuration", config)
        assert status == 0, err
    status, out, _ = _run(capsys, "show")
    # 2 versions x 2 configurations x 2 runs, each invocation reporting Join, Add, Add's B/op and allocs/op.
    assert status == 0 and out.splitlines()[-1].startswith("8 invocations, 32 series-runs ")
    assert any(re.split(r"\s{2,}", line.strip())[1:2] == ["v0.1.0"] for line in out.splitlines())  # its tag
    status, out, _ = _run(capsys, "show", "--runs")
    assert "gomaxprocs1" in out[out.index("Runs"):]
    status, out, _ = _run(capsys, "summary", "--configuration", "gomaxprocs1")
    assert status == 0 and "default" not in out and "v0.2.0" in out
    status, out, _ = _run(capsys, "compare", "v0.1.0", "v0.2.0")
    assert status in (0, 1) and out.splitlines()[0].startswith("v0.2.0 against v0.1.0")
    adds = [line for line in out.splitlines() if "allocs/op]" in line]
    assert len(adds) == 2 and all("0 allocs/op" in line and "no change" in line for line in adds)
    with Store(repo / ".regbench" / "results.db", create=False) as store:
        allocs = next(b.name for b in store.benchmarks() if b.name.startswith("go/BenchmarkAdd")
                      and b.name.endswith("[allocs/op]"))
    status, out, err = _run(capsys, "diagnose", allocs, "--no-plots", "--configuration", "gomaxprocs1")
    assert status == 0, err
    assert out.splitlines()[0].startswith(f"{allocs} at ") and "(gomaxprocs1, " in out.splitlines()[0]
