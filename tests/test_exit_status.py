"""The exit statuses of the ``regbench`` command: one table (``regbench.errors.ExitStatus``), the
same for every command, and documented as it is (docs/cli.md, "Exit statuses")."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.errors import ExitStatus
from regbench.model import RunRecord
from regbench.store import Store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def stepped(tmp_path_factory) -> Path:
    """v1 then v2, 20% slower: a regression any gate sees."""
    path = tmp_path_factory.mktemp("exit") / "r.db"
    rng = np.random.default_rng(0)
    with Store(path) as store:
        for v, level in (("v1", 1.0), ("v2", 1.2)):
            store.add_runs([RunRecord("b", v, r, rng.normal(level, 0.005, 10)) for r in range(6)])
    return path


def status(args: list[str], capsys) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().err


def test_each_status(stepped, tmp_path, capsys):
    store = ["--store", str(stepped)]
    assert status([*store, "show"], capsys)[0] == ExitStatus.OK == 0
    assert status([*store, "compare", "v1", "v2", "--variance"], capsys)[0] == 0  # informs, never gates
    assert status([*store, "compare", "v2", "v1"], capsys)[0] == 0  # an improvement passes the gate
    assert status([*store, "compare", "v1", "v2"], capsys)[0] == ExitStatus.FOUND == 1
    code, err = status([*store, "compare", "v1"], capsys)
    assert code == ExitStatus.USAGE == 2 and "Missing argument 'B'" in err
    assert status([*store, "show", "--no-such-option"], capsys)[0] == 2
    # A version that is not stored is an error, never the gate's "regression found".
    code, err = status([*store, "compare", "v1", "nosuch"], capsys)
    assert code == ExitStatus.ERROR == 3 and err.startswith("error: ") and err.count("\n") == 1
    code, err = status(["--store", str(tmp_path / "none.db"), "summary"], capsys)
    assert code == 3 and "no results store at" in err
    # Runs that failed: 4, with the campaign's account on stdout.
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nname = "x"\nstore = "r.db"\n[defaults]\nruns = 1\niterations = 2\nwarmup = 0\n'
                   f'[[benchmark]]\nname = "f"\ncommand = ["{sys.executable}", "-c", "raise SystemExit(5)"]\n')
    assert main(["--config", str(cfg), "run"]) == ExitStatus.FAILED == 4
    assert "1 run failed:" in capsys.readouterr().out


def test_the_documented_table_is_the_one_implemented():
    doc = (ROOT / "docs" / "cli.md").read_text()
    section = doc.split("## Exit statuses", 1)[1].split("\n## ", 1)[0]
    documented = [int(m) for m in re.findall(r"^\| (\d+) \|", section, flags=re.M)]
    assert documented == sorted(int(s) for s in ExitStatus)
    assert "exit status 1;" not in doc  # the old claim that every error exits with 1
