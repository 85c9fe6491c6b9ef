"""End to end: runs of three machines imported as canonical CSV, ``regbench detect`` with the default
method, then ``regbench alerts``: a step on all three machines is one alert with three machines'
evidence, a step on one machine of three is machine-specific, and ``[alerts] require_machines = 2``
holds that one (listed, not notified).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.errors import ExitStatus

MACHINES = ("m1", "m2", "m3")
N_VERSIONS = 6
STEP_AT = 3  # v3 is the first version that shows each step


def write_runs(path: Path, *, seed: int = 0, machines=MACHINES, versions=range(N_VERSIONS)) -> None:
    """Canonical CSV: ``everywhere`` is 20% slower from v3 on every machine; ``one-box`` only on m2;
    ``flat`` never changes.  5 runs of 20 iterations per version, 1% noise within a run and 0.3%
    between runs; each machine has its own level (another CPU)."""
    rng = np.random.default_rng(seed)
    rows = ["benchmark,version,run,iteration,value,machine,timestamp"]
    for machine in machines:
        base = 1.0 + 0.25 * MACHINES.index(machine)
        for bench in ("everywhere", "one-box", "flat"):
            steps = bench == "everywhere" or (bench == "one-box" and machine == "m2")
            for v in versions:
                level = base * (1.2 if steps and v >= STEP_AT else 1.0)
                for r in range(5):
                    mu = level * (1 + rng.normal(0, 0.003))
                    rows += [f"{bench},v{v},{r},{i},{mu * (1 + rng.normal(0, 0.01))!r},{machine},"
                             f"2024-05-0{v + 1}T12:00:00Z" for i in range(20)]
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture
def imported(tmp_path: Path) -> Path:
    csv = tmp_path / "runs.csv"
    write_runs(csv)
    store = tmp_path / "r.db"
    assert main(["--store", str(store), "import", str(csv)]) == 0
    return store


def alerts_json(store: Path, capsys) -> list[dict]:
    capsys.readouterr()
    assert main(["--store", str(store), "alerts", "list", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_step_on_three_machines_is_one_alert_and_one_on_a_single_machine_is_machine_specific(
        imported, tmp_path, capsys):
    config = tmp_path / "regbench.toml"
    config.write_text(f'[[notify]]\ntype = "json"\npath = "{tmp_path / "sent.json"}"\n')
    args = ["--store", str(imported), "--config", str(config)]
    capsys.readouterr()
    assert main([*args, "detect", "--jobs", "1", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted((r["benchmark"], r["machine"], r["version"]) for r in rows) == [
        ("everywhere", "m1", "v3"), ("everywhere", "m2", "v3"), ("everywhere", "m3", "v3"), ("one-box", "m2", "v3")]
    assert len({r["alert"]["id"] for r in rows if r["benchmark"] == "everywhere"}) == 1

    everywhere, one_box = sorted(alerts_json(imported, capsys), key=lambda a: a["benchmark"])
    assert (everywhere["benchmark"], everywhere["spread"], everywhere["held"]) == ("everywhere", "several", False)
    evidence = everywhere["machines"]
    assert [e["machine"] for e in evidence] == ["m1", "m2", "m3"]
    for e in evidence:  # each machine's own change, interval, p-value and versions
        assert (e["version"], e["previous"]) == ("v3", "v2")
        assert e["ci_low"] <= e["change"] <= e["ci_high"] and 0.17 < e["change"] < 0.23
        assert e["p_value"] is not None and e["p_value"] < 0.01 and e["methods"] == ["auto"]
    assert len({e["change"] for e in evidence}) == 3  # three measurements, not one copied
    assert (one_box["machine"], one_box["spread"], one_box["unchanged_on"]) == ("m2", "machine-specific", ["m1", "m3"])

    assert main(["--store", str(imported), "alerts", "show", str(everywhere["id"])]) == 0
    shown = capsys.readouterr().out
    assert "in everywhere on m1 (also on m2, m3)" in shown and "machines: seen on 3 machines: m1 +" in shown
    assert main(["--store", str(imported), "alerts", "show", str(one_box["id"]), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["spread"] == "machine-specific"
    assert main(["--store", str(imported), "alerts", "list"]) == 0
    listed = capsys.readouterr().out
    assert "3 machines" in listed and "machine-specific" in listed

    # both are told (require_machines is 1 by default), each once, with its machines
    assert main([*args, "alerts", "notify"]) == 0
    sent = json.loads((tmp_path / "sent.json").read_text())["alerts"]
    assert sorted(a["benchmark"] for a in sent) == ["everywhere", "one-box"]
    assert next(a for a in sent if a["benchmark"] == "everywhere")["machines"][2]["machine"] == "m3"

    # a second full pass finds the same changes: nothing new, no duplicate evidence
    assert main([*args, "detect", "--jobs", "1"]) == 0
    assert "Alerts: 0 new alert(s), 2 already known" in capsys.readouterr().out
    again = sorted(alerts_json(imported, capsys), key=lambda a: a["benchmark"])
    assert [len(a["machines"]) for a in again] == [3, 1]


def test_require_machines_two_holds_the_single_machine_alert(imported, tmp_path, capsys):
    config = tmp_path / "regbench.toml"
    config.write_text(f'[alerts]\nrequire_machines = 2\n\n[[notify]]\ntype = "json"\n'
                      f'path = "{tmp_path / "sent.json"}"\n')
    args = ["--store", str(imported), "--config", str(config)]
    capsys.readouterr()
    assert main([*args, "detect", "--jobs", "1", "--fail-on-regression", "--benchmark", "one-box"]) == 0
    out = capsys.readouterr().out  # a held regression does not fail the gate: nobody is told of it
    assert "1 held, not notified" in out
    assert "machine-specific: seen on m2 only; measured without it on m1, m3; held, not notified" in out
    assert main([*args, "detect", "--jobs", "1", "--notify"]) == 0
    (held,) = [a for a in alerts_json(imported, capsys) if a["benchmark"] == "one-box"]
    assert held["held"] is True and held["hold_machines"] == 2 and held["status"] == "new"
    sent = json.loads((tmp_path / "sent.json").read_text())["alerts"]
    assert [a["benchmark"] for a in sent] == ["everywhere"]  # the step on all three machines only
    assert main(["--store", str(imported), "alerts", "list"]) == 0
    assert "held (1/2 machines)" in capsys.readouterr().out


def test_a_bad_require_machines_is_one_line(imported, tmp_path, capsys):
    config = tmp_path / "regbench.toml"
    config.write_text("[alerts]\nrequire_machines = 0\n")
    assert main(["--store", str(imported), "--config", str(config), "detect", "--jobs", "1"]) == ExitStatus.ERROR
    err = capsys.readouterr().err.strip()
    assert err.endswith("[alerts] `require_machines` must be an integer of at least 1 (machines that must show "
                        "a change before it is notified), got 0") and "\n" not in err


def test_an_incremental_pass_adds_a_machine_that_reports_later_to_the_alert(tmp_path, capsys, store_url):
    store = store_url
    first, later = tmp_path / "first.csv", tmp_path / "later.csv"
    write_runs(first, machines=("m1", "m2"))
    assert main(["--store", str(store), "import", str(first)]) == 0
    config = tmp_path / "regbench.toml"
    config.write_text("[alerts]\nrequire_machines = 3\n")
    args = ["--store", str(store), "--config", str(config), "detect", "--jobs", "1", "--incremental"]
    assert main(args) == 0
    (alert,) = [a for a in alerts_json(store, capsys) if a["benchmark"] == "everywhere"]
    assert [m["machine"] for m in alert["machines"]] == ["m1", "m2"] and alert["held"] is True
    # m3 reports later, with v0..v6; m1 and m2 add v6
    write_runs(later, seed=1, machines=("m1", "m2", "m3"), versions=[6])
    extra = tmp_path / "m3.csv"
    write_runs(extra, seed=2, machines=("m3",))
    for path in (later, extra):
        assert main(["--store", str(store), "import", str(path)]) == 0
    capsys.readouterr()
    assert main(args) == 0
    assert "1 raised (now seen on enough machines)" in capsys.readouterr().out
    (now,) = [a for a in alerts_json(store, capsys) if a["benchmark"] == "everywhere"]
    assert now["id"] == alert["id"] and [m["machine"] for m in now["machines"]] == ["m1", "m2", "m3"]
    assert now["held"] is False and now["status"] == "new"
    assert len(alerts_json(store, capsys)) == 2  # no new alert for m3's step


# ------------------------------------------------------------- a team's history pushed at once
def write_history(path: Path, *, machines=("m1", "m2"), versions=range(8), seed: int = 0) -> None:
    """Canonical CSV of two CI machines: ``checksum`` is 20% slower from v3 and back from v6 (a
    regression and the commit that undid it), ``sort`` never changes; 5 runs of 20 iterations."""
    rng = np.random.default_rng(seed)
    rows = ["benchmark,version,run,iteration,value,machine,timestamp"]
    for k, machine in enumerate(machines):
        for bench in ("checksum", "sort"):
            for v in versions:
                level = (1.0 + 0.25 * k) * (1.2 if bench == "checksum" and 3 <= v < 6 else 1.0)
                for r in range(5):
                    mu = level * (1 + rng.normal(0, 0.003))
                    rows += [f"{bench},v{v},{r},{i},{mu * (1 + rng.normal(0, 0.01))!r},{machine},"
                             f"2024-05-{v + 1:02d}T12:00:00Z" for i in range(20)]
    path.write_text("\n".join(rows) + "\n")


def test_a_backfill_tells_the_regression_that_the_same_pass_found_undone(tmp_path, capsys):
    """docs/realworld.md, a team's setup: with the whole history at once, `detect --notify` found
    the regression and the improvement that undid it in one pass; the regression was fixed at
    once and never sent, and the only message said `restores alert #1`."""
    csv, store = tmp_path / "runs.csv", tmp_path / "r.db"
    write_history(csv)
    assert main(["--store", str(store), "import", str(csv)]) == 0
    sent = tmp_path / "sent.json"
    config = tmp_path / "regbench.toml"
    config.write_text(f'[[notify]]\ntype = "json"\npath = "{sent}"\n\n[[notify]]\ntype = "terminal"\n')
    args = ["--store", str(store), "--config", str(config)]
    capsys.readouterr()
    assert main([*args, "detect", "--jobs", "1", "--notify"]) == 0
    out = capsys.readouterr().out
    assert "Alerts: 2 new alert(s), 0 already known, 1 of the new already fixed by a later change" in out
    # both told, in history order: the regression first, saying what undid it
    told = json.loads(sent.read_text())["alerts"]
    assert [(a["id"], a["kind"], a["status"], a["fixed_by"], a["fixed_by_alert"], a["restores"]) for a in told] == [
        (1, "regression", "fixed", "v6", 2, None), (2, "improvement", "new", None, None, 1)]
    assert [m["machine"] for m in told[0]["machines"]] == ["m1", "m2"]
    lines = [line for line in out.splitlines() if line.lstrip().startswith(("FIXED", "NEW"))]
    assert len(lines) == 2
    assert lines[0].startswith("FIXED  regression +") and lines[0].endswith("alert #1, already undone at v6 by alert #2")
    assert lines[1].lstrip().startswith("NEW  improvement -") and lines[1].endswith("alert #2, restores alert #1")
    assert "json (json): 2 sent" in out and "terminal (terminal): 2 sent" in out
    # told once: nothing is due afterwards, from `alerts notify` or from a second pass
    assert main([*args, "alerts", "notify"]) == 0
    assert "json (json): 0 sent" in capsys.readouterr().out
    assert main([*args, "detect", "--jobs", "1", "--notify"]) == 0
    assert "json (json): 0 sent" in capsys.readouterr().out
    assert [a["id"] for a in json.loads(sent.read_text())["alerts"]] == [1, 2]


def test_the_change_table_names_the_machine_when_the_store_has_several(tmp_path, capsys):
    """docs/realworld.md, a team's setup: an incremental pass whose changes were all on one
    machine of two printed `checksum  839d651179  cbd43d8169  -65.49%`, without the machine."""
    store = tmp_path / "r.db"
    first, later = tmp_path / "first.csv", tmp_path / "later.csv"
    write_history(first, versions=range(6))
    write_history(later, machines=("m1",), versions=range(6, 8), seed=1)
    args = ["--store", str(store), "detect", "--jobs", "1", "--incremental"]
    assert main(["--store", str(store), "import", str(first)]) == 0
    assert main(args) == 0
    assert main(["--store", str(store), "import", str(later)]) == 0  # only m1 measured v6 and v7
    capsys.readouterr()
    assert main(args) == 0
    out = capsys.readouterr().out
    (row,) = [line for line in out.splitlines() if line.startswith("checksum")]
    assert row.split()[:4] == ["checksum", "[m1]", "v6", "v5"] and "improvement" in row
    assert "  checksum [m1]: versions compared by" in out
