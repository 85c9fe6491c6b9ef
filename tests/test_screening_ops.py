"""Screening in operation: recalibration told once as alerts (seed 002 s.4.8), and a screening
suite as what `regbench run` benchmarks per version (s.4.6).  Real benchmark processes, real git
repositories, a real SQLite store."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from regbench.cli.main import main
from regbench.demo_project import git_commit, git_init
from regbench.store import Store
from regbench.store import schema as t
from tests.test_screening_campaign import BENCH, CONFIG

PY = sys.executable
SLOWER_D = BENCH.format(delay="").replace("+ 1 * c", "+ 1 * c + 2 * (os.environ['OPT_D'] == '1')")


def two_versions(tmp_path: Path, *, second: str, extra: str = "") -> Path:
    """A repository of two commits of the screened benchmark (the second's bench.py is
    ``second``); returns its regbench.toml (``extra`` appended, not committed)."""
    repo = tmp_path / "repo"
    git_init(repo)
    cfg_text = CONFIG.format(py=f'"{PY}"', env="", constraints="")
    files = {"bench.py": BENCH.format(delay=""), "settings.in": "c=$c\n", "regbench.toml": cfg_text}
    git_commit(repo, files, "v1", when=datetime(2024, 1, 1, tzinfo=UTC))
    git_commit(repo, {"bench.py": second}, "v2", when=datetime(2024, 1, 2, tzinfo=UTC))
    cfg = repo / "regbench.toml"
    if extra:
        cfg.write_text(cfg_text + extra)
    return cfg


# ------------------------------------------------------------------------- recalibration alerts
def test_a_changed_effect_is_one_alert_told_once(tmp_path, capsys):
    sent = tmp_path / "sent" / "alerts.json"
    cfg = two_versions(tmp_path, second=SLOWER_D, extra=f'\n[[notify]]\ntype = "json"\npath = "{sent}"\n')
    db = tmp_path / "results.db"
    base = ["--config", str(cfg), "--store", str(db)]
    screen = [*base, "screen", "--generator", "D = ABC", "--runs", "2", "--seed", "3", "--versions", "HEAD~1,HEAD"]
    assert main(screen) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "recalibration alerts: 1 new (#1), 0 already known; `regbench alerts notify` sends them" in out

    with Store(db) as store:
        (v1, v2) = [v.name for v in store.versions()]
    from regbench.store.alerts import list_alerts

    with Store(db) as store:
        alerts = list_alerts(store)
        with store.engine.connect() as conn:
            params = {r.name: r.params for r in conn.execute(sa.select(t.config))}
    assert len(alerts) == 1
    a = alerts[0]
    assert (a.benchmark, a.config, a.version, a.previous, a.kind, a.methods, a.status) == (
        "work", "effect:d", v2, v1, "regression", ("recalibration",), "new")
    assert params["effect:d"] == {"effect": "d"}
    # d costs 2 units more at v2; the level at v1 is 10 + 3/2 - 2/2 + 1/2 = 11 units
    assert a.change == pytest.approx(2 / 11, rel=0.1)
    assert a.ci_low is not None and a.ci_high is not None and 0 < a.ci_low < a.change < a.ci_high
    assert a.p_value is not None and a.p_value < 1e-6

    # Screening the same versions again runs nothing and makes no second alert
    assert main(screen) == 0
    again = capsys.readouterr().out
    assert "no run stored; 32 already stored" in again
    assert "recalibration alerts: 0 new, 1 already known" in again
    with Store(db) as store:
        assert [x.id for x in list_alerts(store)] == [1]

    # Told once, like every alert: the second notify sends nothing
    assert main([*base, "alerts", "notify"]) == 0
    assert "json (json): 1 sent" in capsys.readouterr().out
    assert main([*base, "alerts", "notify"]) == 0
    assert "json (json): 0 sent" in capsys.readouterr().out
    doc = json.loads(sent.read_text())
    assert [(x["id"], x["config"], x["methods"]) for x in doc["alerts"]] == [(1, "effect:d", ["recalibration"])]
    # ... with the same lifecycle
    assert main([*base, "alerts", "ack", "1", "--by", "Ana", "--reason", "d is the new cache"]) == 0
    capsys.readouterr()
    assert main([*base, "alerts", "show", "1", "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["status"] == "acknowledged"
    assert shown["history"][0]["why"].startswith("detected by recalibration: +")
    # a re-screen after the triage leaves the alert as it is, and --notify does not send it again
    assert main([*screen, "--notify"]) == 0
    out = capsys.readouterr().out
    assert "recalibration alerts: 0 new, 1 already known" in out and "json (json): 0 sent" in out
    with Store(db) as store:
        assert [x.status for x in list_alerts(store)] == ["acknowledged"]


def test_no_change_no_alert_suppressed_effects_not_stored_held_ones_not_told(tmp_path, capsys):
    # the same benchmark at both versions: no effect changes, nothing is recorded
    cfg = two_versions(tmp_path, second=BENCH.format(delay="") + "\n# a comment\n")
    args = ["--config", str(cfg), "--store", str(tmp_path / "a.db"), "screen", "--generator", "D = ABC",
            "--runs", "2", "--seed", "3", "--versions", "HEAD~1,HEAD"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "no effect changed significantly" in out and "recalibration alerts" not in out
    # a changed effect of a benchmark whose alerts are suppressed is counted, not stored
    cfg2 = two_versions(tmp_path / "b", second=SLOWER_D, extra='\n[alerts]\nsuppress = ["work"]\n')
    db = tmp_path / "b.db"
    assert main(["--config", str(cfg2), "--store", str(db), *args[4:]]) == 0
    assert "recalibration alerts: 0 new, 0 already known, 1 suppressed" in capsys.readouterr().out
    from regbench.store.alerts import list_alerts

    with Store(db) as store:
        assert list_alerts(store) == []
    # [alerts] require_machines holds it like any alert: stored, not notified
    cfg3 = two_versions(tmp_path / "c", second=SLOWER_D, extra="\n[alerts]\nrequire_machines = 2\n")
    db = tmp_path / "c.db"
    assert main(["--config", str(cfg3), "--store", str(db), *args[4:]]) == 0
    out = capsys.readouterr().out
    assert "recalibration alerts: 1 new (#1), 0 already known, 1 held ([alerts] require_machines)\n" in out
    with Store(db) as store:
        assert [a.held for a in list_alerts(store)] == [True]


# ----------------------------------------------------------------------- a suite, run per version
def truth(levels: dict) -> float:
    """What BENCH prints for these levels (without noise) at the first version."""
    return 10 + 3 * (levels["a"] == "on") - 2 * (levels["b"] == "fast") + 1 * (levels["c"] == "big")


def test_a_saved_suite_is_what_run_benchmarks_per_version(tmp_path, capsys):
    cfg = two_versions(tmp_path, second=SLOWER_D)
    db = tmp_path / "results.db"
    base = ["--config", str(cfg), "--store", str(db)]
    suite = tmp_path / "suite.toml"
    assert main([*base, "screen", "--design", "suite", "--important", "a", "--important", "b", "--seed", "5",
                 "--save-suite", str(suite), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"suite of 4 configurations written to {suite}" in out
    assert not db.exists()  # a dry run writes the suite, nothing else
    text = suite.read_text()
    assert 'important = ["a", "b"]' in text and text.count("[[config]]") == 4

    builds = tmp_path / "builds.txt"
    cfg.write_text(cfg.read_text().replace(
        '[project]\n', f'[project]\nbuild = ["{PY}", "-c", "import sys; open(sys.argv[1], \'a\').write(\'x\')", '
                       f'"{builds}"]\n', 1))
    assert main([*base, "run", "--suite", str(suite), "--versions", "HEAD~1,HEAD", "--runs", "2",
                 "--seed", "1"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.count("configuration a=") == 4
    assert builds.read_text() == "xx"  # each version checked out and built once for the 4 configurations
    with Store(db) as store:
        (v1, v2) = [v.name for v in store.versions()]
        series = {s.config: s for s in store.load_series("work")}
        with store.engine.connect() as conn:
            params = {r.name: r.params for r in conn.execute(sa.select(t.config))}
    # one series per configuration of the suite, each with its runs at both versions, stored
    # under the configuration's name with its levels; the levels reached the benchmark (env,
    # argument, template): the values are the truth of each configuration
    assert len(series) == 4
    assert {tuple(p[k] for k in "ab") for name, p in params.items() if name in series} == {
        ("off", "slow"), ("on", "slow"), ("off", "fast"), ("on", "fast")}
    for name, s in series.items():
        assert [v.name for v in s.versions] == [v1, v2]
        assert [len(runs) for runs in s.runs] == [2, 2]
        level = params[name]
        first = float(np.mean([np.mean(r) for r in s.runs[0]]))
        second = float(np.mean([np.mean(r) for r in s.runs[1]]))
        assert first == pytest.approx(truth(level), abs=0.2)
        assert second == pytest.approx(truth(level) + 2 * (level["d"] == 1), abs=0.2)

    # [screen] suite makes it what a plain `regbench run` runs: everything is stored already
    cfg.write_text(cfg.read_text().replace("[screen]\n", f'[screen]\nsuite = "{suite}"\n', 1))
    assert main([*base, "run", "--versions", "HEAD~1,HEAD", "--runs", "2"]) == 0
    again = capsys.readouterr().out
    assert again.count("configuration a=") == 4
    assert again.count("0 runs stored (0 ok) over 2 versions. 4 runs already stored were not run again") == 4
    with Store(db) as store:
        assert len(store.runs()) == 16
    # detection sees one series per configuration: those with d = 1 regressed at v2
    assert main([*base, "detect"]) == 0
    found = capsys.readouterr().out
    assert "in 4 series" in found
    changed = {line.split("[", 1)[1].split("]", 1)[0] for line in found.splitlines() if "regression" in line}
    assert changed and changed == {name for name in series if params[name]["d"] == 1}
    # --no-suite runs the one configuration, as before: no option is set (and this benchmark
    # needs them: its run fails, and is stored under "default")
    assert main([*base, "run", "--no-suite", "--versions", "HEAD", "--runs", "1"]) == 4
    assert "KeyError: 'OPT_A'" in capsys.readouterr().out
    with Store(db) as store:
        assert {r.config for r in store.runs()} == set(series) | {"default"}


def test_bad_suites_are_one_line_errors_before_anything_is_written(tmp_path, capsys):
    cfg = two_versions(tmp_path, second=SLOWER_D)
    db = tmp_path / "results.db"
    base = ["--config", str(cfg), "--store", str(db)]
    suite = tmp_path / "suite.toml"
    good = ('[[config]]\nname = "a=on,b=slow,c=small,d=0"\n'
            'levels = { a = "on", b = "slow", c = "small", d = 0 }\n')
    cases = {
        good.replace('a = "on"', 'a = "maybe"'): "[[config]] #1: option 'a' has no level 'maybe'",
        good.replace(', d = 0', ''): "[[config]] #1: no level given for option 'd'",
        good.replace('name = "a=on', 'name = "a=off'): "is not its levels' name 'a=on,b=slow,c=small,d=0'",
        good + good: "[[config]] #2: a=on,b=slow,c=small,d=0 is in the suite twice",
        "seed = 1\n": "no [[config]] entry",
        "[[config]\n": "not TOML",
    }
    for text, message in cases.items():
        suite.write_text(text)
        assert main([*base, "run", "--suite", str(suite), "--versions", "HEAD"]) == 3
        err = capsys.readouterr().err
        assert message in err and str(suite) in err and err.count("\n") == 1, err
    assert main([*base, "run", "--suite", str(tmp_path / "none.toml")]) == 3
    assert "no such suite file" in capsys.readouterr().err
    suite.write_text(good)
    assert main([*base, "run", "--suite", str(suite), "--configuration", "x"]) == 2  # usage
    assert "a suite names its own" in capsys.readouterr().err
    assert main([*base, "screen", "--save-suite", str(suite)]) == 2  # usage
    assert "Error: --save-suite is for --design suite" in capsys.readouterr().err
    assert not db.exists()
    cfg.write_text(cfg.read_text().replace("[screen]\n", "[screen]\nsuite = 3\n", 1))
    assert main([*base, "run"]) == 3
    assert "[screen] `suite` must be the path of a suite file" in capsys.readouterr().err


def test_a_suite_file_reads_back_every_kind_of_level(tmp_path):
    from regbench.screening.campaign import plan_points
    from regbench.screening.full_factorial import FullFactorial
    from regbench.screening.space import parse_space
    from regbench.screening.suite_file import read_suite, write_suite

    space = parse_space({"option": [
        {"name": "s", "levels": ['a "quoted" \\ one', "é😀\x7f\ttab"], "env": "S"},
        {"name": "f", "levels": [0.5, 1e100], "env": "F"},
        {"name": "b", "levels": [True, False], "env": "B"},
        {"name": "i", "levels": [-3, 7], "env": "I"}]})
    points = plan_points(space, FullFactorial().build([2, 2, 2, 2]))
    path = tmp_path / "deep" / "suite.toml"
    assert write_suite(path, space, points, important=["s", "f"], seed=2) == 16
    back = read_suite(path, space)
    assert [(p.name, dict(p.levels)) for p in back] == [(p.name, dict(p.levels)) for p in points]
    assert all(type(p.levels["b"]) is bool and type(p.levels["i"]) is int for p in back)
