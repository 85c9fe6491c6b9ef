"""The detection driver: one entry point over any source, the ABC as the only contract, sharing."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

from regbench.detect import REGISTRY, Change, Detector
from regbench.detect.driver import DetectionResult, SeriesSource, Tally, detect_changes, save_detection_state
from regbench.errors import ConfigError, StoreError
from regbench.model import RunRecord, Series, VersionInfo
from regbench.store import Store


def stepped_series(name: str, *, n: int = 30, at: int | None = 15, seed: int = 0) -> Series:
    rng = np.random.default_rng(seed)
    s = Series(name, "default", "m", "s", "lower")
    for k in range(n):
        level = 1.2 if at is not None and k >= at else 1.0
        s.versions.append(VersionInfo(f"v{k:02d}", k + 1))
        s.runs.append([level * (1 + rng.normal(0, 0.01)) * (1 + rng.normal(0, 0.01, 5)) for _ in range(4)])
        s.failed.append(0)
        s.warmup.append(0)
    return s


class ListSource:
    """A source that is not a store: the driver needs only the protocol."""

    shareable = False

    def __init__(self, series: list[Series], states: dict | None = None):
        self.series = series
        self.states = states or {}

    def load_series(self, benchmark=None, *, config=None, machine=None, versions=None):
        names = None if benchmark is None else ({benchmark} if isinstance(benchmark, str) else set(benchmark))
        out = []
        for s in self.series:
            if names is not None and s.benchmark not in names:
                continue
            keep = [j for j, v in enumerate(s.versions) if versions is None or v.name in set(versions)]
            out.append(Series(s.benchmark, s.config, s.machine, s.unit, s.direction, [s.versions[j] for j in keep],
                              [s.runs[j] for j in keep], [s.failed[j] for j in keep], [s.warmup[j] for j in keep]))
        return out

    def benchmark_names(self):
        return sorted({s.benchmark for s in self.series})

    def versions(self):
        return self.series[0].versions

    def load_detection_states(self, method, options):
        return self.states


def test_a_source_that_is_not_a_store_and_series_at_hand_give_the_same_answer():
    series = [stepped_series("b", seed=1), stepped_series("a", at=None, seed=2), stepped_series("c", at=20, seed=3)]
    source = ListSource(series)
    assert isinstance(source, SeriesSource) and not isinstance(series, SeriesSource)
    from_source = detect_changes(source, batch=2)
    at_hand = detect_changes(series, batch=2)
    assert from_source == at_hand
    # sorted by series, whatever order the series came in; the planted steps found
    found = [(c.benchmark, c.version) for c in at_hand.changes]
    assert found == sorted(found) and {("b", "v15"), ("c", "v20")} <= set(found)
    assert at_hand.n_series == 3 and len(at_hand.states) == 3


def test_an_incremental_pass_from_the_saved_states_of_a_full_one():
    full = detect_changes([stepped_series("b", n=25, seed=1)])
    longer = ListSource([stepped_series("b", n=30, seed=1)], states=dict(full.states))
    inc = detect_changes(longer, incremental=True)
    assert inc.incremental and inc.n_series == 1 and inc.n_tests == 5  # one hypothesis per new version
    assert dict(inc.states)[("b", "default", "m")]["last_version"] == "v29"


def test_the_detector_contract_is_all_the_driver_uses(monkeypatch):
    calls = []

    class Counting(Detector):
        name = "test-driver-counting"
        incremental = True

        def detect(self, series):
            return []

        def detect_with_state(self, series):
            calls.append(("full", series.benchmark))
            return [], 1, {"last_version": series.versions[-1].name}

        def check_new_many(self, items):
            calls.append(("many", [s.benchmark for _, s in items]))
            return [([], len(s), {"last_version": s.versions[-1].name}) for _, s in items]

    monkeypatch.setitem(REGISTRY, Counting.name, Counting)
    states = {("a", "default", "m"): {"last_version": "v24"}}
    source = ListSource([stepped_series("a"), stepped_series("b")], states=states)
    res = detect_changes(source, method="test-driver-counting", incremental=True)
    assert calls == [("many", ["a"]), ("full", "b")]  # one pooled call for the series with a state
    assert res.n_tests == 5 + 1 and res.n_series == 2


def test_tallies_merge_in_order():
    c = Change("b", "default", "m", "v1", "v0", 0.1, 0.05, 0.15, "regression", "auto")
    a, b = Tally((c,), 3, 1, ((("b", "default", "m"), {}),)), Tally((), 2, 4)
    assert Tally.merge([a, b]) == Tally((c,), 5, 5, a.states)
    assert Tally.merge([]) == Tally()


@pytest.mark.parametrize("kwargs, match", [({"jobs": 0}, "`jobs` must be a positive integer"),
                                           ({"batch": 0}, "`batch` must be a positive integer"),
                                           ({"batch": 2.5}, "`batch` must be a positive integer")])
def test_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        detect_changes([], **kwargs)


def test_incremental_needs_a_method_that_has_it():
    with pytest.raises(ConfigError, match="no incremental mode"):
        detect_changes([], method="ci-overlap", incremental=True)


def test_saving_needs_to_know_the_options():
    result = DetectionResult("auto", (), (), 1, 0, None, False, states=((("b", "c", "m"), {}),))
    with pytest.raises(ValueError, match="`result`"):
        save_detection_state(None, result)


def test_a_store_pickles_as_its_url_and_an_in_memory_one_does_not(tmp_path):
    with Store(tmp_path / "r.db") as store:
        store.add_runs([RunRecord("b", "v0", 0, np.ones(3))])
        again = pickle.loads(pickle.dumps(store))
        assert isinstance(store, SeriesSource) and store.shareable
        assert again.url == store.url and again.benchmark_names() == ["b"]
        again.close()
    memory = Store("sqlite:///:memory:")
    assert not memory.shareable
    with pytest.raises(StoreError, match="another process cannot open it"):
        pickle.dumps(memory)
    memory.add_runs([RunRecord("b", f"v{k}", r, np.full(3, 1.0 + 0.5 * (k > 1))) for k in range(4) for r in range(3)])
    # jobs > 1 on an in-memory store runs here, in one process
    assert [c.version for c in detect_changes(memory, method="ci-overlap", jobs=2, batch=1).changes] == ["v2"]


def test_detect_and_stats_do_not_import_the_store():
    code = ("import sys, regbench.detect.driver, regbench.detect.alerts, regbench.detect.auto, "
            "regbench.stats.segments; "
            "print([m for m in sys.modules if m.startswith('regbench.store') or m == 'sqlalchemy'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
