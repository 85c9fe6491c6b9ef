"""Saved incremental states belong to the release of regbench that saved them: after an upgrade
the first incremental pass is a full one, so new rules see the whole history."""

from __future__ import annotations

import json

import numpy as np
import pytest

import regbench
from regbench.detect.driver import detect_changes, options_key, save_detection_state
from regbench.model import RunRecord
from regbench.store import Store
from regbench.store.state import load_states, save_states


def _fill(store: Store, levels: dict[str, list[float]], start: int = 0, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for k in range(max(len(v) for v in levels.values())):
        version = f"v{start + k:03d}"
        for name, values in levels.items():
            if k < len(values):
                store.add_runs([RunRecord(benchmark=name, version=version, run_index=r,
                                          samples=values[k] * (1 + 0.005 * rng.standard_normal(10)))
                                for r in range(5)])


def test_the_key_names_the_release():
    key = json.loads(options_key("auto", None, 0.99, {}))
    assert key["regbench"] == regbench.__version__


def test_a_key_of_another_release_differs(monkeypatch):
    now = options_key("auto", None, 0.99, {})
    monkeypatch.setattr(regbench, "__version__", "0.0.1")
    assert options_key("auto", None, 0.99, {}) != now


@pytest.mark.parametrize("saved_by", ["0.0.1", None])
def test_states_saved_by_another_release_give_a_full_pass(tmp_path, saved_by):
    # None: a state saved before the release was part of the key (every store of an earlier release).
    path = tmp_path / "s.db"
    key = options_key("auto", None, 0.99, {})
    other = json.loads(key)
    if saved_by is None:
        other.pop("regbench")
    else:
        other["regbench"] = saved_by
    other_key = json.dumps(other, sort_keys=True)
    with Store(path) as s:
        _fill(s, {"a": [1.0] * 12 + [1.2] * 12, "b": [1.0] * 24})
        full = detect_changes(s)
        save_states(s, "auto", other_key, full.states)
        _fill(s, {"a": [1.2] * 2, "b": [1.0] * 2}, start=24, seed=3)
        after_upgrade = detect_changes(s, incremental=True)
        save_detection_state(s, after_upgrade)
        assert set(load_states(s, "auto", key)) == {k for k, _ in full.states}
        _fill(s, {"a": [1.2], "b": [1.0]}, start=26, seed=4)
        next_pass = detect_changes(s, incremental=True)
    # The pass after the upgrade searched both histories whole (a full pass tests every split it
    # tries, many per series); the one after it tests each series' one new version.
    assert after_upgrade.n_tests > 10
    assert next_pass.incremental and next_pass.n_tests == 2
    assert [(c.benchmark, c.version) for c in full.changes] == [("a", "v012")]


def test_states_of_the_same_release_are_used(tmp_path):
    path = tmp_path / "s.db"
    with Store(path) as s:
        _fill(s, {"a": [1.0] * 24})
        save_detection_state(s, detect_changes(s))
        _fill(s, {"a": [1.0]}, start=24, seed=2)
        inc = detect_changes(s, incremental=True)
    assert inc.incremental and inc.n_tests == 1
