"""A benchmark whose every run failed, from the first version it ran at on (a new benchmark broken
from the day it was added), is a failure alert too, as one that ran and then stopped working is
(tests/test_failure_alerts.py): opened once by ``detect``, saying that it never succeeded, with the
error of its runs, told through the sinks once (not again while it stays broken, whichever commit
runs next), and fixed by its first successful run, or when it is no longer run.  It does not gate
``detect --fail-on-regression`` (no version worked: there is no breakage to bisect or gate on;
``regbench run`` exits 4 for its runs).  End to end with real command benchmarks in a real git
repository that exit 1 while a file of the commit says so."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.errors import ExitStatus

PY = sys.executable
T0 = datetime(2025, 4, 1, 9, 0, tzinfo=UTC)
#: Prints its iterations' times, unless the file named by its argument exists in the commit: then
#: it reads a fixture it cannot check and exits 1, as a harness reports a benchmark's exception.
PROGRAM = ("import os, sys\n"
           "if os.path.exists(sys.argv[1]):\n"
           "    sys.stderr.write('loading fixture data.bin\\nValueError: checksum 41 != 42\\n')\n"
           "    sys.exit(1)\n"
           "for i in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
           "    print(1.0 + 0.001 * i)\n")
ERROR = "failed (exit status 1): ValueError: checksum 41 != 42"


def toml(*names: str) -> str:
    """regbench.toml with a JSON and a Markdown sink and one benchmark per name, each broken while
    the file ``NAME.broken`` exists."""
    return ('[project]\nname = "p"\nstore = "results/r.db"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
            + "".join(f'[[benchmark]]\nname = "{n}"\ncommand = {json.dumps([PY, "bench.py", n + ".broken"])}\n'
                      for n in names)
            + '[[notify]]\ntype = "json"\npath = "sent/alerts.json"\n'
              '[[notify]]\ntype = "markdown"\npath = "sent/pr.md"\n')


def make_repo(path: Path, files: list[dict[str, str | None]]) -> list[str]:
    git_init(path)
    return [git_commit(path, f, f"commit {k}", when=T0 + timedelta(hours=k)) for k, f in enumerate(files, 1)]


def cli(repo: Path, capsys, *args: str, code: int = 0) -> str:
    """``regbench --config REPO/regbench.toml ARGS...`` in this process, its exit status checked;
    its output on one line (rich wraps long lines)."""
    capsys.readouterr()
    assert main(["--config", str(repo / "regbench.toml"), *args]) == code
    return " ".join(capsys.readouterr().out.split())


def alerts(repo: Path, capsys) -> list[dict]:
    capsys.readouterr()
    assert main(["--config", str(repo / "regbench.toml"), "alerts", "list", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def history(repo: Path, capsys, alert: dict) -> list[str]:
    """The ``why`` of each step of an alert's history."""
    capsys.readouterr()
    assert main(["--config", str(repo / "regbench.toml"), "alerts", "show", str(alert["id"]), "--format",
                 "json"]) == 0
    return [e["why"] for e in json.loads(capsys.readouterr().out)["history"]]


def sent(repo: Path) -> list[dict]:
    return json.loads((repo / "sent" / "alerts.json").read_text())["alerts"]


def test_a_benchmark_broken_from_its_first_run_is_one_alert_told_once_and_fixed_by_its_first_success(
        tmp_path, capsys):
    repo = tmp_path / "repo"
    # Commits 1-3 carry parse.broken; commit 4 repairs it.
    shas = make_repo(repo, [{"bench.py": PROGRAM, "regbench.toml": toml("parse"), "parse.broken": "x"},
                            {"notes/2": "2"}, {"notes/3": "3"}, {"parse.broken": None}])

    cli(repo, capsys, "run", "--versions", shas[1], "--seed", "1", code=ExitStatus.FAILED)
    out = cli(repo, capsys, "detect", "--notify", "--jobs", "1")
    assert "Alerts: 1 new alert(s) (1 for a benchmark that starts failing)" in out
    [alert] = alerts(repo, capsys)
    assert (alert["kind"], alert["benchmark"], alert["status"]) == ("failure", "parse", "new")
    # The keys and values of any failure alert; no version before it worked: previous is version.
    assert shas[1].startswith(alert["version"]) and alert["previous"] == alert["version"]
    assert alert["error"] == ERROR
    assert (alert["change"], alert["ci_low"], alert["ci_high"], alert["p_value"], alert["methods"]) == (
        None, None, None, None, [])
    assert history(repo, capsys, alert) == [
        f"failing: every run failed from {alert['version']} on (2 failed runs at {alert['version']}, the newest), "
        f"it never succeeded: {ERROR}"]
    # Told, saying it never succeeded.
    [told] = sent(repo)
    assert (told["kind"], told["key"], told["error"], told["previous"]) == (
        "failure", alert["key"], ERROR, alert["version"])
    md = (repo / "sent" / "pr.md").read_text()
    assert "1 new alert(s): 0 regression(s), 0 improvement(s), 1 failing benchmark(s)." in md
    assert f"| {alert['version']} | never succeeded | — | — | {ERROR} |" in md
    capsys.readouterr()
    assert main(["--config", str(repo / "regbench.toml"), "alerts", "show", "1"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"failure in parse on {alert['machine']} at {alert['version']} (never succeeded), "
                            f"alert #1: {ERROR}")
    assert "it never succeeded)" in shown and "last ok" not in shown and "last successful" not in shown
    # It does not gate: no version worked (regbench run said so, exit status 4).
    cli(repo, capsys, "detect", "--jobs", "1", "--fail-on-regression")

    # Still broken at a newer commit, then at an older one (its stretch now starts earlier): the
    # same alert, told once.
    for sha in (shas[2], shas[0]):
        cli(repo, capsys, "run", "--versions", sha, "--seed", "1", code=ExitStatus.FAILED)
        out = cli(repo, capsys, "detect", "--notify", "--jobs", "1")
        assert "Alerts: 0 new alert(s)" in out
        assert [(a["id"], a["version"], a["status"]) for a in alerts(repo, capsys)] == [
            (1, alert["version"], "new")]
        assert [a["key"] for a in sent(repo)] == [alert["key"]]
    assert len(history(repo, capsys, alert)) == 1

    # Repaired: its first successful run fixes it, once.
    cli(repo, capsys, "run", "--versions", shas[3], "--seed", "1")
    out = cli(repo, capsys, "detect", "--notify", "--jobs", "1")
    assert "1 earlier alert(s) now fixed" in out
    [fixed] = alerts(repo, capsys)
    assert (fixed["id"], fixed["status"], fixed["fixed_by_alert"]) == (1, "fixed", None)
    assert shas[3].startswith(fixed["fixed_by"])
    assert history(repo, capsys, fixed)[-1] == f"succeeds: its first successful run at {fixed['fixed_by']}"
    out = cli(repo, capsys, "detect", "--notify", "--jobs", "1")
    assert "Alerts: 0 new alert(s)" in out and "now fixed" not in out
    assert len(alerts(repo, capsys)) == 1 and len(history(repo, capsys, fixed)) == 2


def test_a_benchmark_that_worked_then_failed_keeps_its_alert_beside_one_that_never_worked(tmp_path, capsys):
    """``parse`` runs at commit 1 and fails at commit 2, as before: its alert says where it was last
    ok, it is listed among the failing benchmarks, gates, and is fixed when it runs again.  ``fresh``,
    added broken at commit 1, has an alert of its own that says it never succeeded, stays open while
    ``parse`` is fixed, and does not gate."""
    repo = tmp_path / "repo"
    shas = make_repo(repo, [{"bench.py": PROGRAM, "regbench.toml": toml("parse", "fresh"), "fresh.broken": "x"},
                            {"parse.broken": "x"}, {"parse.broken": None}])

    cli(repo, capsys, "run", "--versions", ",".join(shas[:2]), "--seed", "1", code=ExitStatus.FAILED)
    out = cli(repo, capsys, "detect", "--notify", "--jobs", "1", "--fail-on-regression", code=ExitStatus.FOUND)
    assert "Alerts: 2 new alert(s) (2 for a benchmark that starts failing)" in out
    # Only the benchmark that stopped working is listed as failing (and gates).
    assert "Failing at the newest version they ran at, which no detector sees: parse on " in out
    assert "fresh on" not in out
    by_name = {a["benchmark"]: a for a in alerts(repo, capsys)}
    parse, fresh = by_name["parse"], by_name["fresh"]
    assert shas[1].startswith(parse["version"]) and shas[0].startswith(parse["previous"])
    assert shas[0].startswith(fresh["version"]) and fresh["previous"] == fresh["version"]
    assert (parse["kind"], parse["error"], fresh["kind"], fresh["error"]) == ("failure", ERROR, "failure", ERROR)
    assert set(parse) == set(fresh)  # one shape
    assert history(repo, capsys, parse) == [
        f"failing: every run failed from {parse['version']} on (2 failed runs at {parse['version']}, the newest), "
        f"last ok at {parse['previous']}: {ERROR}"]
    assert history(repo, capsys, fresh)[0].endswith(f", it never succeeded: {ERROR}")
    assert sorted(a["benchmark"] for a in sent(repo)) == ["fresh", "parse"]
    md = (repo / "sent" / "pr.md").read_text()
    assert "2 failing benchmark(s)" in md
    assert f"| {parse['version']} | {parse['previous']} | — | — | {ERROR} |" in md
    assert f"| {fresh['version']} | never succeeded | — | — | {ERROR} |" in md
    capsys.readouterr()
    assert main(["--config", str(repo / "regbench.toml"), "alerts", "show", str(parse["id"])]) == 0
    assert capsys.readouterr().out.startswith(
        f"failure in parse on {parse['machine']} at {parse['version']} (last ok at {parse['previous']}), "
        f"alert #{parse['id']}: {ERROR}")

    # parse runs again at commit 3: its alert is fixed as before; fresh's stays open, told once.
    cli(repo, capsys, "run", "--versions", shas[2], "--seed", "1", code=ExitStatus.FAILED)
    out = cli(repo, capsys, "detect", "--notify", "--jobs", "1", "--fail-on-regression")
    assert "Alerts: 0 new alert(s)" in out and "1 earlier alert(s) now fixed" in out
    by_name = {a["benchmark"]: a for a in alerts(repo, capsys)}
    assert (by_name["parse"]["status"], by_name["fresh"]["status"]) == ("fixed", "new")
    assert shas[2].startswith(by_name["parse"]["fixed_by"]) and by_name["fresh"]["fixed_by"] is None
    assert history(repo, capsys, parse)[-1] == f"runs again: a successful run at {by_name['parse']['fixed_by']}"
    assert len(sent(repo)) == 2


def test_a_benchmark_broken_from_its_first_run_then_removed_from_the_suite_is_fixed_as_no_longer_run(
        tmp_path, capsys):
    repo = tmp_path / "repo"
    shas = make_repo(repo, [{"bench.py": PROGRAM, "regbench.toml": toml("parse", "fresh"), "fresh.broken": "x"},
                            {"notes/2": "2"}])

    cli(repo, capsys, "run", "--versions", shas[0], "--seed", "1", code=ExitStatus.FAILED)
    cli(repo, capsys, "detect", "--jobs", "1")
    [alert] = alerts(repo, capsys)
    assert (alert["benchmark"], alert["status"], alert["previous"]) == ("fresh", "new", alert["version"])

    (repo / "regbench.toml").write_text(toml("parse"))
    cli(repo, capsys, "run", "--versions", shas[1], "--seed", "1")
    assert "1 earlier alert(s) now fixed" in cli(repo, capsys, "detect", "--jobs", "1")
    [fixed] = alerts(repo, capsys)
    assert (fixed["id"], fixed["status"], fixed["fixed_by"], fixed["fixed_by_alert"]) == (
        alert["id"], "fixed", None, None)
    assert history(repo, capsys, fixed)[-1].startswith("no longer run: the suite of campaign #2 at ")
    assert "Alerts: 0 new alert(s)" in cli(repo, capsys, "detect", "--jobs", "1")
