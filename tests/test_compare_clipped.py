"""An interval cut at -100% bounds nothing below: with 0 in it, `compare` says `inconclusive`,
not `no change` (a first-user probe: B 3-8x slower in every run, three runs a side, was "no
change" with [-100.00%, +1956.15%])."""

from __future__ import annotations

import pytest

from regbench.cli.main import main
from regbench.stats.compare import verdict


@pytest.mark.parametrize(("low", "high", "direction", "expected"), [
    (-1.0, 19.56, "lower", "inconclusive"),
    (-1.0, 19.56, "higher", "inconclusive"),
    (-0.5, 0.5, "lower", "no change"),
    (-0.999, 0.5, "lower", "no change"),
    (-1.0, -0.4, "lower", "improvement"),     # cut below, but better whatever its size
    (-1.0, -0.4, "higher", "regression"),
    (-1.0, -1.0, "lower", "improvement"),     # a count that fell to 0 in every run
])
def test_verdicts_of_intervals_cut_at_minus_100(low, high, direction, expected):
    assert verdict(low, high, direction=direction) == expected


def test_compare_of_three_noisy_runs_of_a_much_slower_b_is_inconclusive(tmp_path, capsys):
    runs = {("A", 0): [1.137, 1.721, 1.277, 1.184, 1.24], ("A", 1): [1.503, 1.636, 1.492, 1.546, 1.564],
            ("A", 2): [1.508, 1.518, 1.597, 1.524, 1.506], ("B", 0): [5.722, 5.7, 3.762, 6.742, 9.179],
            ("B", 1): [9.521, 12.834, 17.01, 13.027, 4.838], ("B", 2): [4.871, 4.632, 4.797, 4.851, 4.853]}
    csv = tmp_path / "gate.csv"
    csv.write_text("benchmark,version,run,iteration,value\n" + "".join(
        f"work,{v},{r},{i},{x / 1000}\n" for (v, r), xs in runs.items() for i, x in enumerate(xs)))
    db = str(tmp_path / "s.db")
    assert main(["--store", db, "import", str(csv)]) == 0
    capsys.readouterr()
    assert main(["--store", db, "compare", "A", "B"]) == 0
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("work")][0]
    assert "[-100.00%" in row and row.rstrip().endswith("inconclusive")
