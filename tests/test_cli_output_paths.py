"""Output paths the machine refuses: one line naming the path and exit 3, never a traceback
(a first-user probe found `report -o`, `diagnose --plots` and `export -o` crashing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from regbench.cli.main import main


@pytest.fixture
def store(tmp_path) -> Path:
    rows = ["benchmark,version,run,iteration,value"]
    for v, level in (("v1", 1.0), ("v2", 1.0), ("v3", 1.5)):
        for r in range(3):
            rows += [f"work,{v},{r},{i},{level * (1 + 0.01 * ((r + i) % 3))}" for i in range(5)]
    csv = tmp_path / "runs.csv"
    csv.write_text("\n".join(rows) + "\n")
    db = tmp_path / "s.db"
    assert main(["--store", str(db), "import", str(csv)]) == 0
    return db


@pytest.mark.parametrize("args", [
    ["report", "-o", "{file}/site"],
    ["diagnose", "work", "--plots", "{file}/plots"],
    ["export", "-o", "{file}/x.csv"],
])
def test_a_path_under_a_file_is_one_line_and_exit_3(store, tmp_path, capsys, args):
    afile = tmp_path / "README"
    afile.write_text("a file, not a folder\n")
    capsys.readouterr()
    code = main(["--store", str(store), *[a.format(file=afile) for a in args]])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3
    assert len(err) == 1 and err[0].startswith("error: ") and str(afile) in err[0]
    assert "Traceback" not in err[0]
    assert afile.read_text() == "a file, not a folder\n"


def test_an_export_into_a_folder_no_one_may_write_names_the_target_not_a_temporary(store, capsys):
    # /proc takes no new files, not even from root.
    capsys.readouterr()
    assert main(["--store", str(store), "export", "-o", "/proc/x.csv"]) == 3
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: /proc/x.csv: cannot write in /proc") and ".regbench-export-" not in err


def test_importing_a_device_says_what_it_is_not(tmp_path, capsys):
    # /dev/null exists: "no such file" sent people looking for a typo.
    assert main(["--store", str(tmp_path / "s.db"), "import", "/dev/null"]) == 3
    assert capsys.readouterr().err.strip() == "error: /dev/null: not a regular file (a device or a pipe: save it to a file first)"
    assert main(["--store", str(tmp_path / "s.db"), "import", str(tmp_path / "none.csv")]) == 3
    assert capsys.readouterr().err.strip().endswith("none.csv: no such file")
