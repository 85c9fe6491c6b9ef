"""Counts exactly 0 (Go's allocs/op of an allocation-free loop) that step to above 0 or back:
the driver's pre-pass (regbench.detect.zeros) and its exact test (regbench.stats.zeros)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from scipy import stats as st

from regbench.detect.driver import detect_changes, save_detection_state
from regbench.model import RunRecord, Series, VersionInfo
from regbench.stats.zeros import NO_DATA, run_kind, run_kinds, zero_steps
from regbench.store import Store

RUNS, ITERS = 5, 10


def runs_of(level, rng, runs=RUNS):
    """One version's runs: a constant count, ``"noisy"`` (1 to 3 in each iteration), or
    ``"flaky"`` (each run 0 in every iteration or 1 in some, as a count that is sometimes taken)."""
    out = []
    for _ in range(runs):
        if level == "noisy":
            out.append(rng.integers(1, 4, ITERS).astype(float))
        elif level == "flaky":
            out.append((rng.random(ITERS) < 0.1).astype(float) if rng.random() < 0.5 else np.zeros(ITERS))
        else:
            out.append(np.full(ITERS, float(level)))
    return out


def series(levels, *, seed=0, runs=RUNS, direction="lower") -> Series:
    rng = np.random.default_rng(seed)
    s = Series("go/BenchmarkX-2 [allocs/op]", "default", "local", "allocs/op", direction)
    for k, level in enumerate(levels):
        s.versions.append(VersionInfo(f"v{k:03d}", id=k + 1))
        s.runs.append(runs_of(level, rng, runs))
        s.failed.append(0)
        s.warmup.append(0)
    return s


# ------------------------------------------------------------------------- the exact test
def test_the_p_value_is_fisher_s_exact_test_times_the_positions():
    # 3 versions of 5 runs all 0, then 2 versions of 5 runs all above 0: a perfectly separated
    # 2 x 2 table of runs, whose one-sided Fisher p-value is 1 / C(25, 10), times 4 positions.
    runs = [[np.zeros(4)] * 5] * 3 + [[np.ones(4)] * 5] * 2
    (step,) = zero_steps(runs).tested
    fisher = st.fisher_exact([[15, 0], [0, 10]], alternative="greater").pvalue
    assert step.p_value == pytest.approx(4 * fisher, rel=1e-9) == pytest.approx(4 / math.comb(25, 10), rel=1e-9)
    assert (step.index, step.previous, step.upward, step.runs_before, step.runs_after) == (3, 2, True, 15, 10)
    # A version of runs of both kinds, or with no data, is no evidence: it breaks or is skipped.
    mixed = [[np.zeros(4)] * 5] * 3 + [[np.zeros(4), np.ones(4)]] + [[np.ones(4)] * 5] * 2
    assert zero_steps(mixed).tested == ()
    gap = [[np.zeros(4)] * 5] * 3 + [[]] + [[np.ones(4)] * 5] * 2
    assert [(s.index, s.previous) for s in zero_steps(gap).steps] == [(4, 2)]


def test_the_runs_kinds_at_once_are_each_run_s_kind():
    """run_kinds (one pass over all samples) against run_kind (one run at a time), on runs of
    zeros, positives, negatives, NaN and infinities, empty runs and 2-D samples."""
    rng = np.random.default_rng(0)
    runs = [[], [np.nan], [-0.0], [np.inf, 0.0], [-1e-300, 0.0], np.zeros((2, 3)), -np.ones((2, 2))]
    runs += [rng.choice([0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 2.5], size=rng.integers(0, 6)) for _ in range(2000)]
    assert list(run_kinds(runs)) == [run_kind(r) for r in runs]
    assert run_kinds([]).size == 0 and list(run_kinds([[], []])) == [NO_DATA, NO_DATA]


def test_one_version_each_side_is_not_enough_and_alpha_is_validated():
    assert zero_steps([[np.zeros(3)] * 5, [np.ones(3)] * 5]).steps == ()  # 1 / C(10, 5) = 0.004
    with pytest.raises(ValueError, match="`alpha` must be in"):
        zero_steps([], alpha=0)


def test_a_flaky_count_rarely_passes_the_test():
    # Each run 0 or not by a fair coin, 20 versions of 5 runs: whole versions of one kind next to
    # each other do happen, but rarely enough runs of them to pass (the bound holds for any
    # share of zero runs).
    rng = np.random.default_rng(7)
    hits = sum(bool(zero_steps([[np.full(4, float(rng.random() < 0.5)) for _ in range(5)] for _ in range(20)]).steps)
               for _ in range(1000))
    assert hits <= 10


# ------------------------------------------------------------------------- full passes
@pytest.mark.parametrize("after", [1, 48, "noisy"])
def test_a_count_from_exactly_0_is_a_certain_regression_at_the_right_version(after):
    res = detect_changes([series([0] * 8 + [after] * 4)])
    (c,) = res.changes
    assert (c.version, c.previous, c.kind, c.method) == ("v008", "v007", "regression", "auto")
    assert c.change == c.ci_low == c.ci_high == math.inf
    assert c.p_value < 1e-10 and c.q_value is not None
    assert c.estimator == ("whether each run is exactly 0: 40 runs of 8 version(s) all 0, "
                           "then 20 runs of 4 all above 0")


def test_back_to_exactly_0_is_minus_100_percent_at_the_right_version():
    # auto alone placed it two versions early, at -67% (the runs had no variance to refine by).
    (c,) = detect_changes([series([1] * 8 + [0] * 4)]).changes
    assert (c.version, c.change, c.kind) == ("v008", -1.0, "improvement")


def test_changes_between_two_steps_are_left_to_the_detector():
    # 0, then 100 allocations with noise, then 200: the step from 0 is the pre-pass's, the
    # doubling the detector's, found in the stretch after the step.
    levels = [0] * 6 + [100] * 6 + [200] * 6
    found = [(c.version, c.change) for c in detect_changes([series(levels)]).changes]
    assert found == [("v006", math.inf), ("v012", pytest.approx(1.0))]


@pytest.mark.parametrize("seed", range(5))
def test_a_flaky_count_is_not_a_change(seed):
    assert detect_changes([series(["flaky"] * 16, seed=seed)]).changes == ()


def test_a_series_exactly_0_throughout_is_not_searched_and_higher_is_better_is_left_alone():
    res = detect_changes([series([0] * 10)])
    assert res.changes == () and res.n_tests == 0
    # A throughput of 0 measured nothing (auto leaves such samples out): no step from 0.
    assert detect_changes([series([0] * 8 + [5] * 4, direction="higher")]).changes == ()


def test_versions_exactly_0_are_not_searched_by_the_detector_before_the_step_is_significant():
    """One run a version: a step from 0 to noisy counts needs several versions to be significant.
    Until then the detector searched the zeros with the counts and reported changes of a few
    percent at p = 0 among the counts; it now searches the counts alone, which hold none."""
    for k in range(9, 16):
        s = series([0] * 8 + ["noisy"] * (k - 7), seed=k + 1, runs=1)
        assert detect_changes([s]).changes == (), k
    (c,) = detect_changes([series([0] * 8 + ["noisy"] * 9, seed=17, runs=1)]).changes
    assert (c.version, c.change) == ("v008", math.inf)


def test_the_fdr_control_counts_every_pair_where_a_step_from_0_could_be():
    # 12 versions, 8 at 0 then 4 above: 11 neighbouring pairs, whether their runs separated or
    # not, besides what the detector tested on the stretch above 0.
    assert detect_changes([series([0] * 8 + [1] * 4)]).n_tests == 11 + detect_changes([series([1] * 4)]).n_tests


def test_a_method_without_p_values_reports_the_step_too():
    (c,) = detect_changes([series([0] * 8 + [1] * 4)], method="ci-overlap").changes
    assert (c.version, c.change, c.p_value) == ("v008", math.inf, None)


# --------------------------------------------------------------- a store, full and incremental
def fill(store: Store, levels: dict[str, list], start: int, stop: int, *, runs: int = RUNS) -> None:
    rng = np.random.default_rng(stop)
    versions = [VersionInfo(f"v{k:03d}", timestamp_text=f"2024-01-01T00:{k:02d}:00Z") for k in range(start, stop)]
    store.add_runs([RunRecord(benchmark=b, version=f"v{k:03d}", run_index=r, samples=x)
                    for b, lv in levels.items() for k in range(start, stop)
                    for r, x in enumerate(runs_of(lv[k], rng, runs))], versions=versions)


LEVELS = {"up": [0] * 8 + [1] * 4, "up-noisy": [0] * 8 + ["noisy"] * 4, "down": [1] * 8 + [0] * 4,
          "flaky": ["flaky"] * 12, "zero": [0] * 12}


def found(result) -> list[tuple[str, str, float]]:
    return [(c.benchmark, c.version, c.change) for c in result.changes]


@pytest.mark.parametrize("runs", [5, 2])
def test_incremental_passes_find_what_a_full_pass_finds(store, runs):
    fill(store, LEVELS, 0, 8, runs=runs)
    save_detection_state(store, detect_changes(store))
    incremental = []
    for k in range(8, 12):  # one new version at a time, as CI adds commits
        fill(store, LEVELS, k, k + 1, runs=runs)
        res = detect_changes(store, incremental=True)
        assert res.incremental
        save_detection_state(store, res)
        incremental += found(res)
    full = found(detect_changes(store))
    expected = [("down", "v008", -1.0), ("up", "v008", math.inf), ("up-noisy", "v008", math.inf)]
    assert full == expected
    assert sorted(incremental) == expected  # each once
    if runs == 5:  # one new version of 5 runs is enough: found as it arrives
        assert detect_changes(store, incremental=True).changes == ()


def test_detect_json_is_strict_and_alerts_show_the_step(store_url):
    with Store(store_url) as s:
        fill(s, LEVELS, 0, 12)
    def cli(*args):
        out = subprocess.run([sys.executable, "-m", "regbench.cli.main", "--store", store_url, *args],
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def strict(text):
        return json.loads(text, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))

    doc = strict(cli("detect", "--format", "json"))
    by = {c["benchmark"]: c for c in doc}
    assert set(by) == {"up", "up-noisy", "down"}
    # From exactly 0 the change is infinite: the contract's number is the largest double.
    assert (by["up"]["change"], by["up"]["kind"], by["down"]["change"]) == (sys.float_info.max, "regression", -1.0)
    table = cli("alerts", "list")
    assert "+∞" in table and "-100.00%" in table
    assert {a["benchmark"]: a["change"] for a in strict(cli("alerts", "list", "--format", "json"))}["up"] is None


def test_the_dashboard_calls_a_count_exactly_0_stable_and_shows_a_step_from_0(store):
    from regbench.detect.alerts import record_alerts
    from regbench.web.data import Dashboard

    fill(store, {**LEVELS, "noisy": ["noisy"] * 12}, 0, 12)
    record_alerts(store, detect_changes(store).changes)
    dash = Dashboard(store).load()  # warnings are errors in this suite: none on 0 / 0
    state = {s.benchmark: s.state for s in dash.series}
    # Exactly 0 (or one constant) in every run: intervals of no width, stable; 1-3 allocations
    # at random: too noisy to judge, as before.
    assert (state["zero"], state["noisy"], state["up"], state["down"]) == ("stable", "noisy", "changed", "changed")
    (up,) = dash.series_payload(next(s.id for s in dash.series if s.benchmark == "up"))["changes"]
    assert (up["change"], up["from_zero"], up["kind"]) == (None, True, "regression")
    json.dumps(dash.series_payload(next(s.id for s in dash.series if s.benchmark == "up")), allow_nan=False)


def test_a_change_from_0_is_delivered_by_every_sink(store, tmp_path):
    """A +inf change reaches the JSON file, the webhook (a real HTTP server on loopback) and the
    Markdown file as strict JSON / readable text: before, the JSON sinks refused every queued alert."""
    from test_notify import webhook

    from regbench.detect.alerts import record_alerts
    from regbench.notify.jsonfile import JsonSink
    from regbench.notify.markdown import MarkdownSink
    from regbench.notify.outbox import notify_pending

    fill(store, LEVELS, 0, 12)
    record_alerts(store, detect_changes(store).changes)
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"])),
                                       parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        sinks = [JsonSink("json", path=tmp_path / "alerts.json"), MarkdownSink("md", path=tmp_path / "alerts.md"),
                 webhook(f"http://127.0.0.1:{server.server_address[1]}/hook")]
        report = notify_pending(store, sinks)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert all(not s.failed for s in report.sinks), report
    doc = json.loads((tmp_path / "alerts.json").read_text(), parse_constant=lambda c: pytest.fail(c))
    alerts = doc["alerts"] if isinstance(doc, dict) else doc
    up = next(a for a in alerts if a["benchmark"] == "up")
    assert up["change"] is None and up["kind"] == "regression" and up["machines"][0]["change"] is None
    assert len(received) == 3 and "+∞" in (tmp_path / "alerts.md").read_text()
