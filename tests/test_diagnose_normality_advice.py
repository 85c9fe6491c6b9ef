"""`diagnose` says run means "look normal" under a transform only where the transform passes the
test (a first-user probe: "under 1/x they look normal (p = 0.039)")."""

from __future__ import annotations

import dataclasses

import numpy as np

from regbench.diagnosis import _with_advice, diagnose
from regbench.model import RunRecord
from regbench.store import Store


def test_a_transform_that_still_fails_is_not_said_to_look_normal(tmp_path):
    rng = np.random.default_rng(0)
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("b", "v1", r, 1.0 + 0.01 * rng.standard_normal(10)) for r in range(8)])
        d = diagnose(store, "b")
    fails = dataclasses.replace(d, normality={"raw": 0.016, "log": 0.02, "1/x": 0.039}, best_transform="1/x")
    (said,) = [a for a in _with_advice(fails, n_runs=8).advice if a.startswith("Run means are not normal")]
    assert "look normal" not in said and "still not (p = 0.039)" in said
    passes = dataclasses.replace(d, normality={"raw": 0.016, "log": 0.2, "1/x": 0.1}, best_transform="log")
    (said,) = [a for a in _with_advice(passes, n_runs=8).advice if a.startswith("Run means are not normal")]
    assert "under log they look normal (p = 0.2)" in said
