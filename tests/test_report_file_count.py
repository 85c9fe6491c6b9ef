"""`regbench report` says how many files it wrote, all of them (a first-user probe: "10 files"
where 18 were written: the static files and the diagnosis plots were not counted)."""

from __future__ import annotations

import re

import numpy as np

from regbench.cli.main import main
from regbench.model import RunRecord
from regbench.store import Store


def test_the_count_is_every_file_of_the_report(tmp_path, capsys):
    rng = np.random.default_rng(0)
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("b", v, r, 1.0 + 0.01 * rng.standard_normal(10)) for v in ("v1", "v2")
                        for r in range(3)])
    out = tmp_path / "site"
    capsys.readouterr()
    assert main(["--store", str(tmp_path / "r.db"), "report", "-o", str(out)]) == 0
    said = int(re.search(r"\((\d+) files\)", capsys.readouterr().out).group(1))
    assert said == sum(1 for f in out.rglob("*") if f.is_file())
    assert any(out.glob("diagnosis/*/*.png")) and any(out.glob("static/*"))
