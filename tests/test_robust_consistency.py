"""The robust result (Kalibera et al. 2005, s.4.2: medians of resampled run statistics) of one
experiment does not depend on what else is summarised with it: `summary` of every benchmark,
`summary` of one and `diagnose` give the same numbers (a first-user probe: 912 against 835 ops/s,
intervals up to 2.5x apart with three runs)."""

from __future__ import annotations

import numpy as np
import pytest

from regbench.analysis import summarize
from regbench.diagnosis import diagnose
from regbench.model import RunRecord
from regbench.store import Store


def test_summary_of_one_of_all_and_diagnose_agree(tmp_path):
    rng = np.random.default_rng(3)
    with Store(tmp_path / "r.db") as store:
        for name, k in (("a", 12), ("b", 12), ("c", 7)):
            store.add_runs([RunRecord(name, v, r, 1.0 + 0.05 * rng.standard_exponential(k))
                            for v in ("v1", "v2") for r in range(3)])
        every = {(e.benchmark, e.version): e.robust for e in summarize(store)}
        alone = {(e.benchmark, e.version): e.robust for e in summarize(store, benchmark="b")}
        told = diagnose(store, "b", version="v2").robust
    for key in alone:
        assert alone[key].mean == every[key].mean and alone[key].half_width == every[key].half_width
    assert told.mean == pytest.approx(every[("b", "v2")].mean, rel=1e-12)
    assert told.half_width == pytest.approx(every[("b", "v2")].half_width, rel=1e-12)
