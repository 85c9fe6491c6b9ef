"""A failing benchmark whose machine is retired, or whose configuration is removed, stops failing
(and gating) once the others measured on long enough without it; a machine merely slow to report
(a nightly batch, a queue) does not; one that comes back failing opens its alert again.  And two
failing benchmarks removed together from imported data (no suite recorded) stop failing once the
rest of their suite ran without them long enough.  docs/detection.md, "Failing benchmarks no longer
run"; :mod:`regbench.silence`.  On real stores (SQLite, or PostgreSQL with ``--store-url``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.config import parse_config
from regbench.errors import ConfigError
from regbench.inventory import scan_failures
from regbench.model import RunRecord, VersionInfo
from regbench.pipeline import detect_and_alert
from regbench.silence import LEAD_FACTOR, MIN_VERSIONS, Retirement, longest_lead, silence_needed
from regbench.store import Store
from regbench.store.alerts import alert_history, list_alerts

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
VERSIONS = [VersionInfo(f"v{k:02d}", timestamp=T0 + timedelta(hours=k)) for k in range(1, 80)]


def v(k: int) -> str:
    return f"v{k:02d}"


def _ok(name: str, k: int, machine: str = "m", config: str = "default") -> RunRecord:
    return RunRecord(name, v(k), 0, np.array([1.0, 1.1, 1.2]), machine=machine, config=config)


def _failed(name: str, k: int, machine: str = "m", config: str = "default") -> RunRecord:
    return RunRecord(name, v(k), 0, np.empty(0), status="failed", exit_code=2, machine=machine, config=config,
                     stderr_tail="goroutine 1\npanic: boom\n[regbench] exit status 2\n")


def _add(store: Store, runs: list[RunRecord], *, imported: bool = False) -> None:
    """Store ``runs`` as one finished campaign on their machine (as an import: no campaign)."""
    campaign = None if imported else store.start_campaign(seed=1, machine=runs[0].machine, fingerprint={},
                                                          command="regbench run", plan=None)
    store.add_runs([RunRecord(r.benchmark, r.version, r.run_index, r.samples, config=r.config, status=r.status,
                              exit_code=r.exit_code, machine=r.machine, campaign_id=campaign,
                              stderr_tail=r.stderr_tail) for r in runs], versions=VERSIONS)
    if campaign is not None:
        store.finish_campaign(campaign, "finished")


def _suite(store: Store, k: int, machine: str, *, b_fails: bool = False, config: str = "default") -> None:
    """One campaign of the suite (b, c) at version ``k``."""
    _add(store, [(_failed if b_fails else _ok)("b", k, machine, config), _ok("c", k, machine, config)])


def _detect(store: Store):
    return detect_and_alert(store, None, method="ci-overlap", fdr=None, jobs=1)


# ------------------------------------------------------------------------- the lead, alone
def test_the_lead_is_how_far_the_others_were_beyond_a_place_just_before_it_stored_again():
    # Others measured v0..v9, first at ids 10, 20, ..., 100; the place stored v0 (id 1), then v8
    # (id 105): just before, the others had stored v1..v9 beyond its v0: 9.  Then v9: 1.
    others = [(10 * (r + 1), r) for r in range(10)]
    assert longest_lead([(1, 0), (105, 8), (106, 9)], others) == 9
    assert longest_lead([(1, 0)], others) == 0  # one store: nothing to be behind before
    # Storing each version just before the others: never behind; just after them: one behind.
    assert longest_lead([(5 + 10 * r, r) for r in range(10)], others) == 0
    assert longest_lead([(15 + 10 * r, r) for r in range(10)], others) == 1
    # A store of a version off the history (a branch) proves it alive: the lead then counts.
    assert longest_lead([(1, 0), (85, None)], others) == 7
    # A back-fill of an old version moves nothing: still behind by the same versions.
    assert longest_lead([(1, 5), (95, 2), (96, 3)], others) == 3
    assert [silence_needed(lead) for lead in (0, 6, 7, 8, 40)] == [MIN_VERSIONS, 20, 21, 24, 120]
    with pytest.raises(ValueError, match="`lead` must be >= 0"):
        silence_needed(-1)


def _lead_by_definition(own, others) -> int:
    """The lead as its definition reads, by brute force: before each store of the place after
    its first at a version of the history, the versions beyond its newest stored before it."""
    lead, newest = 0, None
    for ident, rank in sorted(own):
        if newest is not None:
            lead = max(lead, sum(1 for i, r in others if i < ident and r > newest))
        if rank is not None:
            newest = rank if newest is None else max(newest, rank)
    return lead


def test_the_lead_agrees_with_its_definition_on_random_stores():
    rng = np.random.default_rng(7)
    for _ in range(500):
        n = int(rng.integers(0, 30))
        ids = rng.permutation(1000)[:n + int(rng.integers(0, 20))].tolist()
        others = [(ids[k], k) for k in range(n)]
        own = [(i, None if rng.random() < 0.2 else int(rng.integers(0, max(n, 1)))) for i in ids[n:]]
        assert longest_lead(own, others) == _lead_by_definition(own, others)


def test_the_store_says_when_a_machine_stored_what(store):
    _add(store, [_ok("b", 1), _ok("c", 1)])
    _add(store, [_ok("b", 2, config="asan"), _ok("b", 1, machine="n")])
    _add(store, [_failed("c", 2)])
    spans = store.run_spans("m")
    assert [(s.config, s.version) for s in spans] == [("asan", "v02"), ("default", "v01"), ("default", "v02")]
    (asan, one, two) = spans
    assert one.first < one.last < asan.first == asan.last < two.first == two.last
    assert [s.version for s in store.run_spans("m", config="default", benchmarks=["c"])] == ["v01", "v02"]
    assert store.run_spans("m", benchmarks=["x"]) == [] and store.run_spans("nowhere") == []
    assert store.first_runs() == {"v01": one.first, "v02": asan.first}
    _, second, third = (c.id for c in store.campaigns())
    assert store.measured_where(["v02", "v09"]) == {"v02": {("asan", "m", second), ("default", "m", third)}}


# -------------------------------------------------------------------------------- machines
def _retire_m(store: Store) -> int:
    """m and n run the suite at v01 and v02, where b fails on m; then n alone goes on to v21
    (19 versions: one short).  Returns the id of m's failure alert."""
    for k in (1, 2):
        _suite(store, k, "m", b_fails=k == 2)
        _suite(store, k, "n")
    [alert] = _detect(store).alerts.failures
    for k in range(3, 3 + MIN_VERSIONS - 1):
        _suite(store, k, "n")
    return alert.id


def test_a_failing_benchmark_on_a_retired_machine_stops_gating_and_its_alert_is_fixed(store, capsys):
    """m measured nothing since v02, where b failed, while n measured 20 later versions: m is
    retired, b on m no longer fails the gate and its alert is fixed, with no version that fixed
    it; ``detect --format json`` keeps its contract (changes only, failures only on request)."""
    alert = _retire_m(store)
    outcome = _detect(store)  # 19 later versions: not yet
    assert outcome.regressed and [f.series for f in outcome.failing] == [("b", "default", "m")]
    assert outcome.no_longer_run == () and outcome.alerts.fixed == ()

    _suite(store, 22, "n")
    capsys.readouterr()
    assert main(["--store", str(store.url), "detect", "--method", "ci-overlap", "--no-fdr", "--jobs", "1",
                 "--fail-on-regression"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("No longer run (its machine or configuration retired), so no longer failing: b on m (failing at v02, "
            "m measured nothing since v02, while other machines measured 20 later versions, up to v22) "
            "(`regbench alerts show ID` says why).") in out
    assert "removed from the suite, or renamed" not in out
    [fixed] = list_alerts(store, ids=[alert])
    assert (fixed.status, fixed.fixed_by, fixed.fixed_by_alert, fixed.no_longer_run) == ("fixed", None, None, True)
    assert alert_history(store, alert)[-1].why == (
        "no longer run: its machine is retired: m measured nothing since v02, while other machines measured 20 "
        "later versions, up to v22 (it was never more than 0 versions behind the others before it stored runs "
        "again); every run failed at v02, the newest it ran at")
    outcome = _detect(store)
    assert not outcome.regressed and outcome.failing == () and outcome.alerts.fixed == ()  # fixed once
    [gone] = outcome.no_longer_run
    assert (gone.series, gone.version, gone.by, gone.retired, gone.measured, gone.lead, gone.campaign) == (
        ("b", "default", "m"), "v02", "v22", "machine", 20, 0, None)
    for extra in ([], ["--json-failures"]):
        assert main(["--store", str(store.url), "detect", "--method", "ci-overlap", "--no-fdr", "--jobs", "1",
                     "--format", "json", "--fail-on-regression", *extra]) == 0
        assert json.loads(capsys.readouterr().out) == []
    assert main(["--store", str(store.url), "alerts", "show", str(alert), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["history"][-1]["why"].startswith(
        "no longer run: its machine is retired: m measured nothing since v02")


def test_a_retired_machine_that_comes_back_failing_opens_its_alert_again(store):
    alert = _retire_m(store)
    _suite(store, 22, "n")
    [fixed] = _detect(store).alerts.fixed
    assert fixed.id == alert
    _suite(store, 23, "m", b_fails=True)  # back, and b still fails: the same breakage
    outcome = _detect(store)
    assert outcome.regressed and outcome.no_longer_run == () and outcome.alerts.created == ()
    [again] = outcome.alerts.reopened
    assert (again.id, again.status, again.fixed_by) == (alert, "new", None)
    assert alert_history(store, alert)[-1].why == (
        "failing again: it runs again after it was no longer run, and every run failed at v23")
    _suite(store, 24, "m")
    [fixed] = _detect(store).alerts.fixed
    assert (fixed.id, fixed.fixed_by) == (alert, "v24")


def test_a_retired_machine_that_comes_back_without_the_failing_benchmark_does_not_say_it_runs_again(store):
    """m, retired while b failed there, comes back and runs c alone (no suite recorded): one such
    measurement does not show b gone yet (its own job may still be on its way), so b fails at the
    newest version it ran at again and its alert is open again, gating as before (docs/cli.md); but
    b did not run, and its history says what happened instead.  The next version of c alone
    shows b no longer run: fixed again."""
    alert = _retire_m(store)
    _suite(store, 22, "n")
    [fixed] = _detect(store).alerts.fixed
    assert fixed.id == alert
    _add(store, [_ok("c", 23, "m")])
    outcome = _detect(store)
    assert outcome.regressed and outcome.no_longer_run == ()
    assert [(f.series, f.version) for f in outcome.failing] == [(("b", "default", "m"), "v02")]
    [again] = outcome.alerts.reopened
    assert (again.id, again.status) == (alert, "new")
    assert alert_history(store, alert)[-1].why == (
        "failing again: m stored runs since it last ran (the last at v23), none of it, and nothing shows yet "
        "that it is no longer run; every run failed at v02, the newest version it ran at")
    _add(store, [_ok("c", 24, "m")])
    outcome = _detect(store)
    assert not outcome.regressed and [a.id for a in outcome.alerts.fixed] == [alert]
    assert alert_history(store, alert)[-1].why.startswith(
        "no longer run: v23 was measured on m with the 1 benchmark(s) run beside it at v02 (c), without it")


def test_a_machine_one_version_behind_is_not_retired(store):
    """Behind the others by one version, or by fewer than 20, a machine keeps its failing benchmark
    failing; nor do campaigns of other machines that did not finish count; 20 finished ones do."""
    for k in (1, 2):
        _suite(store, k, "m", b_fails=k == 2)
        _suite(store, k, "n")
    _suite(store, 3, "n")
    assert [f.series for f in scan_failures(store).failing] == [("b", "default", "m")]
    for k in range(4, 4 + MIN_VERSIONS):  # n goes on, but in campaigns that did not finish
        campaign = store.start_campaign(seed=1, machine="n", fingerprint={}, command="regbench run", plan=None)
        store.add_runs([RunRecord("d", v(k), 0, np.array([1.0]), machine="n", campaign_id=campaign)],
                       versions=VERSIONS)
        store.finish_campaign(campaign, "interrupted")
    scan = scan_failures(store)
    assert [f.series for f in scan.failing] == [("b", "default", "m")] and scan.no_longer_run == ()
    for k in range(4, 2 + MIN_VERSIONS):  # 19 finished after v02
        _suite(store, k, "n")
    assert [f.series for f in scan_failures(store).failing] == [("b", "default", "m")]
    _suite(store, 2 + MIN_VERSIONS, "n")
    scan = scan_failures(store)
    assert scan.failing == () and [(g.by, g.retired) for g in scan.no_longer_run] == [("v22", "machine")]


def test_a_machine_that_reports_in_nightly_batches_is_not_retired_by_the_commits_of_a_day(store):
    """m measures every version, but in batches of 8 stored after n measured them (a nightly
    job; by history order alone it skipped nothing): it was 8 versions behind before each batch,
    so 20 versions behind it is slow, not retired; at 3 x 8 = 24 it is."""
    for start in (1, 9, 17):
        for k in range(start, start + 8):
            _suite(store, k, "n")
        for k in range(start, start + 8):
            _suite(store, k, "m", b_fails=k == 24)
    [alert] = _detect(store).alerts.failures
    for k in range(25, 45):  # 20 versions after v24
        _suite(store, k, "n")
    outcome = _detect(store)
    assert outcome.regressed and outcome.no_longer_run == () and outcome.alerts.fixed == ()
    for k in range(45, 49):
        _suite(store, k, "n")
    outcome = _detect(store)
    assert not outcome.regressed and [f.id for f in outcome.alerts.fixed] == [alert.id]
    [gone] = outcome.no_longer_run
    assert (gone.by, gone.measured, gone.lead) == ("v48", 24, 8)


def test_a_machine_counts_as_silent_from_the_newest_version_it_stored_anything_at(store):
    """After b failed at v02, m stored one run of another benchmark, in another configuration, at
    v10, just after n had stored v03..v10: alive then, and 8 versions behind.  It is retired once
    n measured 3 x 8 = 24 versions after v10, not 20."""
    for k in (1, 2):
        _suite(store, k, "m", b_fails=k == 2)
        _suite(store, k, "n")
    for k in range(3, 11):
        _suite(store, k, "n")
    _add(store, [_failed("x", 10, "m", config="asan")])
    for k in range(11, 34):  # 23 versions after v10, 31 after v02
        _suite(store, k, "n")
    scan = scan_failures(store)
    assert [f.series for f in scan.failing] == [("b", "default", "m")] and scan.no_longer_run == ()
    _suite(store, 34, "n")
    scan = scan_failures(store)
    assert scan.failing == ()  # x failed at its only version: never ran, so never failing
    [g] = scan.no_longer_run
    assert (g.version, g.last, g.by, g.measured, g.lead, g.retired) == ("v02", "v10", "v34", 24, 8, "machine")
    assert g.silence() == "m measured nothing since v10, while other machines measured 24 later versions, up to v34"


# -------------------------------------------------------------------------- configurations
def test_a_failing_benchmark_in_a_removed_configuration_stops_gating_and_comes_back(store):
    """m runs the suite in py311 and py312; b fails in py311 at v02; then m measures py312 alone
    (py311 removed): after 20 versions, py311 on m is retired; back and failing, it opens again."""
    for k in (1, 2):
        _suite(store, k, "m", b_fails=k == 2, config="py311")
        _suite(store, k, "m", config="py312")
    [alert] = _detect(store).alerts.failures
    assert alert.config == "py311"
    for k in range(3, 3 + MIN_VERSIONS - 1):
        _suite(store, k, "m", config="py312")
    assert _detect(store).regressed
    _suite(store, 22, "m", config="py312")
    outcome = _detect(store)
    assert not outcome.regressed and outcome.failing == ()
    [gone] = outcome.no_longer_run
    assert (gone.series, gone.retired, gone.by, gone.measured) == (("b", "py311", "m"), "configuration", "v22", 20)
    [fixed] = outcome.alerts.fixed
    assert (fixed.id, fixed.fixed_by) == (alert.id, None)
    assert alert_history(store, alert.id)[-1].why == (
        "no longer run: its configuration is retired: m measured nothing in configuration py311 since v02, while "
        "it measured 20 later versions in other configurations, up to v22 (it was never more than 0 versions "
        "behind the others before it stored runs again); every run failed at v02, the newest it ran at")

    _suite(store, 23, "m", b_fails=True, config="py311")
    outcome = _detect(store)
    assert outcome.regressed and [a.id for a in outcome.alerts.reopened] == [alert.id]


# -------------------------------------------------------------------- removed together
def test_two_failing_benchmarks_removed_together_from_imports_stop_failing_after_the_rest_ran_alone(store):
    """Imports, no suite: b and c fail at v02 beside d and e; from v03 on, d and e alone.  One
    such measurement is what a selection (``-bench=D|E``) looks like too: so 20 of them, with
    every other benchmark that ran beside them, show both removed together.  A subset (d alone)
    is no such measurement."""
    _add(store, [_ok(n, 1) for n in "bcde"], imported=True)
    _add(store, [_failed("b", 2), _failed("c", 2), _ok("d", 2), _ok("e", 2)], imported=True)
    [one, two] = _detect(store).alerts.failures
    for k in range(3, 3 + MIN_VERSIONS - 1):
        _add(store, [_ok("d", k), _ok("e", k)], imported=True)
    _add(store, [_ok("d", 30)], imported=True)  # a subset: it shows nothing
    scan = scan_failures(store)
    assert [f.benchmark for f in scan.failing] == ["b", "c"] and scan.no_longer_run == ()
    _add(store, [_ok("d", 31), _ok("e", 31)], imported=True)
    outcome = _detect(store)
    assert not outcome.regressed and outcome.failing == ()
    assert [(g.benchmark, g.by, g.anchor, g.companions, g.together, g.measured, g.retired)
            for g in outcome.no_longer_run] == [("b", "v31", "v02", ("d", "e"), ("c",), 20, None),
                                                ("c", "v31", "v02", ("d", "e"), ("b",), 20, None)]
    assert sorted(a.id for a in outcome.alerts.fixed) == sorted([one.id, two.id])
    # A pass of one benchmark reads the others' failures too: it decides as a full pass does.
    alone = scan_failures(store, benchmark="b")
    assert alone.failing == () and [g.series for g in alone.no_longer_run] == [("b", "default", "m")]
    assert alert_history(store, one.id)[-1].why == (
        "no longer run: 20 versions up to v31 were measured on m with the 2 benchmark(s) run beside it at v02 "
        "(d, e), without it nor c, failing too (they were never more than 0 versions behind the rest before they "
        "stored runs again): removed together, or renamed; every run failed at v02, the newest it ran at")


# ------------------------------------------------------------------------------- settings
def _config(tmp_path, **detect):
    """``regbench.toml`` with these ``[detect]`` keys (no repository: every version, in stored order)."""
    return parse_config({"detect": detect}, path=tmp_path / "regbench.toml")


def test_the_retirement_settings_default_to_the_rule_of_the_docs_and_are_validated(tmp_path):
    assert Retirement() == Retirement(after=MIN_VERSIONS, lag_factor=LEAD_FACTOR) == Retirement(20, 3)
    settings = parse_config({}).detect
    assert (settings.retire_after, settings.retire_lag_factor) == (20, 3.0)
    assert Retirement.of(None) == Retirement() == Retirement.of(parse_config({}))
    got = _config(tmp_path, retire_after=5, retire_lag_factor=1.5)
    assert (got.detect.retire_after, got.detect.retire_lag_factor) == (5, 1.5)
    assert Retirement.of(got) == Retirement(5, 1.5)
    assert _config(tmp_path, retire_lag_factor=2).detect.retire_lag_factor == 2.0
    # max(after, ceil(factor x lead)): 1.1 x 10 is 11, not 11.000000000000002 rounded up.
    assert [Retirement(5, 1.5).needed(lead) for lead in (0, 3, 4, 7)] == [5, 5, 6, 11]
    assert Retirement(1, 1.1).needed(10) == 11 and Retirement().needed(8) == silence_needed(8) == 24
    for bad in (dict(after=0), dict(after=2.0), dict(lag_factor=0.5), dict(lag_factor=float("nan"))):
        with pytest.raises(ValueError, match="`after` must be an integer >= 1|`lag_factor` must be a number >= 1"):
            Retirement(**bad)


@pytest.mark.parametrize("detect, message", [
    ({"retire_after": 0}, "[detect] `retire_after` must be an integer of at least 1 (versions), got 0"),
    ({"retire_after": 2.5}, "[detect] `retire_after` must be an integer of at least 1 (versions), got 2.5"),
    ({"retire_after": True}, "[detect] `retire_after` must be an integer of at least 1 (versions), got true"),
    ({"retire_after": "20"}, "[detect] `retire_after` must be an integer of at least 1 (versions), got '20'"),
    ({"retire_after": 10**7}, "[detect] `retire_after` must be at most 1000000, got 10000000"),
    ({"retire_lag_factor": 0.5}, "[detect] `retire_lag_factor` must be a number of at least 1, got 0.5"),
    ({"retire_lag_factor": float("inf")}, "[detect] `retire_lag_factor` must be a number of at least 1, got inf"),
    ({"retire_lag_factor": float("nan")}, "[detect] `retire_lag_factor` must be a number of at least 1, got nan"),
    ({"retire_lag_factor": False}, "[detect] `retire_lag_factor` must be a number of at least 1, got false"),
    ({"retire_lag_factor": 1001}, "[detect] `retire_lag_factor` must be at most 1000, got 1001"),
    ({"retire_afterr": 3}, "[detect]: unknown key `retire_afterr` (expected confirm, confirm_budget, "
                           "confirm_max_pairs, confirm_as, retire_after, retire_lag_factor); did you mean "
                           "`retire_after`?"),
])
def test_a_bad_retirement_setting_is_one_line_naming_the_key_and_the_file(tmp_path, detect, message):
    with pytest.raises(ConfigError) as error:
        _config(tmp_path, **detect)
    assert str(error.value) == f"{tmp_path / 'regbench.toml'}: {message}"


def test_a_smaller_retire_after_retires_the_machine_sooner(store, tmp_path):
    """``retire_after = 10``: m, silent since v02 where b failed, is retired once n measured 10
    later versions, where the default waits for 20."""
    for k in (1, 2):
        _suite(store, k, "m", b_fails=k == 2)
        _suite(store, k, "n")
    config = _config(tmp_path, retire_after=10)
    [alert] = detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1).alerts.failures
    for k in range(3, 12):  # 9 versions after v02: not yet
        _suite(store, k, "n")
    outcome = detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1)
    assert outcome.regressed and outcome.no_longer_run == ()
    _suite(store, 12, "n")
    assert _detect(store).regressed  # by default, 10 versions are not enough
    outcome = detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1)
    assert not outcome.regressed and [a.id for a in outcome.alerts.fixed] == [alert.id]
    [gone] = outcome.no_longer_run
    assert (gone.retired, gone.by, gone.measured, gone.lead) == ("machine", "v12", 10, 0)
    assert alert_history(store, alert.id)[-1].why.startswith(
        "no longer run: its machine is retired: m measured nothing since v02, while other machines measured 10 "
        "later versions, up to v12")


def test_the_lag_factor_scales_the_lead_of_a_machine_that_reports_in_batches(store, tmp_path):
    """m reports in nightly batches of 8 (a lead of 8, as above): with ``retire_after = 10`` and
    ``retire_lag_factor = 1.5`` it is retired once n measured max(10, 1.5 x 8) = 12 versions after
    its newest, not 3 x 8 = 24."""
    for start in (1, 9, 17):
        for k in range(start, start + 8):
            _suite(store, k, "n")
        for k in range(start, start + 8):
            _suite(store, k, "m", b_fails=k == 24)
    config = _config(tmp_path, retire_after=10, retire_lag_factor=1.5)
    detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1)
    for k in range(25, 36):  # 11 versions after v24
        _suite(store, k, "n")
    assert detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1).regressed
    _suite(store, 36, "n")
    outcome = detect_and_alert(store, config, method="ci-overlap", fdr=None, jobs=1)
    assert not outcome.regressed
    [gone] = outcome.no_longer_run
    assert (gone.by, gone.measured, gone.lead) == ("v36", 12, 8)


# --- the note of a reopened alert (review, 2026-11-30) ---------------------------------------------

def _fixed_as_retired(store) -> int:
    alert = _retire_m(store)
    _suite(store, 22, "n")
    [fixed] = _detect(store).alerts.fixed
    assert fixed.id == alert and fixed.no_longer_run
    return alert


def test_a_machine_back_at_the_same_version_without_the_benchmark_does_not_say_it_runs_again(store):
    # m stores another run of c at v02, b's last version (a re-run): m is back, b did not run.
    alert = _fixed_as_retired(store)
    c = _ok("c", 2, "m")
    _add(store, [RunRecord(c.benchmark, c.version, 1, c.samples, machine="m")])
    assert [a.id for a in _detect(store).alerts.reopened] == [alert]
    why = alert_history(store, alert)[-1].why
    assert why.startswith("failing again: m stored runs since it last ran") and "none of it" in why, why


def test_a_machine_back_running_the_benchmark_then_others_says_it_runs_again(store):
    # m runs the suite at v23 (b fails again), then c alone at v24, before the next pass.
    alert = _fixed_as_retired(store)
    _suite(store, 23, "m", b_fails=True)
    _add(store, [_ok("c", 24, "m")])
    assert [a.id for a in _detect(store).alerts.reopened] == [alert]
    why = alert_history(store, alert)[-1].why
    assert why.startswith("failing again: it runs again after it was no longer run"), why
