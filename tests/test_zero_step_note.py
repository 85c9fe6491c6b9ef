"""A count that went from exactly 0 in every run to above 0 in every run, with too few runs for
the driver's exact test at 0.001: `detect` says so, instead of nothing (a first-user probe: 0 -> 1 s
with three runs of two versions a side, which `compare` calls a certain +inf)."""

from __future__ import annotations

import numpy as np

from regbench.cli.main import main
from regbench.detect import get_detector
from regbench.detect.notes import series_notes
from regbench.detect.zeros import detect_series
from regbench.model import Series, VersionInfo


def history(per_version: list[list[float]]) -> Series:
    s = Series("allocs", "default", "m", "B/op", "lower")
    for k, runs in enumerate(per_version):
        s.versions.append(VersionInfo(name=f"v{k + 1}", id=k + 1))
        s.runs.append([np.full(5, x) for x in runs])
        s.failed.append(0)
        s.warmup.append(0)
    return s


def notes_of(s: Series):
    auto = get_detector("auto")
    changes, n_tests, state = detect_series(auto, s)  # the driver's pass, with its steps from 0
    return changes, [n for n in series_notes(auto, s, changes, n_tests, state) if n.kind == "zero step"]


def test_a_short_step_from_zero_is_named_with_its_p_value():
    changes, notes = notes_of(history([[0, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 1]]))
    assert changes == []
    (n,) = notes
    assert n.reason.startswith("every run from 0 to above 0 at v3 (since v2), 6 runs before against 6 after")
    assert "p = 0.0032" in n.reason


def test_a_flaky_count_and_a_step_found_say_nothing():
    _, notes = notes_of(history([[0], [1], [0], [1], [0], [1]]))
    assert notes == []  # each pair p = 0.5: no step to run again
    changes, notes = notes_of(history([[0, 0, 0]] * 4 + [[1, 1, 1]] * 4))
    assert len(changes) == 1 and notes == []  # reported: nothing to add


def test_detect_prints_it(tmp_path, capsys):
    csv = tmp_path / "z.csv"
    csv.write_text("benchmark,version,run,iteration,value\n" + "".join(
        f"allocs,v{k + 1},{r},{i},{0.0 if k < 2 else 1.0}\n" for k in range(4) for r in range(3) for i in range(5)))
    db = str(tmp_path / "s.db")
    assert main(["--store", db, "import", str(csv)]) == 0
    capsys.readouterr()
    assert main(["--store", db, "detect", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "A step from or to exactly 0 that too few runs show to be sure (1 series): allocs: every run from 0" in out
