"""`regbench optimize` and `show --plans` on stores built directly (probe findings of 2026-11-30):
what they refuse, name and say."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from regbench.cli.main import main
from regbench.errors import ConfigError, NotFoundError
from regbench.model import RunRecord, VersionInfo
from regbench.optimize.plans import OptimizeOptions, derive_plans
from regbench.store import Store

FAST = OptimizeOptions(metric="rmad", threshold=0.05, n_resamples=100, run_cost=False)


def _campaign(store: Store, benchmarks: dict[str, str], *, runs: int = 4, iterations: int = 6,
              version: str = "v1", seed: int = 1, commit: str | None = None) -> int:
    """A finished campaign of ``runs`` runs of each benchmark (name -> status) at ``version`` (one of
    another version is another campaign, not one resumed)."""
    cid = store.start_campaign(seed=seed, machine="m", fingerprint={}, command="x", plan={"versions": [version]})
    rng = np.random.default_rng(seed)
    for b, status in benchmarks.items():
        for r in range(runs):
            samples = 1 + 0.001 * rng.standard_normal(iterations) if status == "ok" else np.array([])
            store.add_runs([RunRecord(b, version, r, samples, machine="m", campaign_id=cid, duration=1.0,
                                      status=status)],
                           versions=[VersionInfo(version, commit=commit, timestamp=datetime(2024, 1, 1))])
    store.finish_campaign(cid, "finished")
    return cid


def _cli(tmp_path: Path, capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["--store", str(tmp_path / "s.db"), *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture
def here(tmp_path, monkeypatch) -> Path:
    """A folder without a regbench.toml (nor one above it), as the current directory."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---------------------------------------------------------------- a benchmark without an ok run
def test_a_benchmark_without_an_ok_run_is_an_error_naming_it(store):
    _campaign(store, {"quiet": "ok", "broken": "failed"})
    with pytest.raises(ConfigError, match=r"benchmark 'broken': campaign 1, the last finished one, at version v1 "
                                          r"has no ok run \(4 failed\)"):
        derive_plans(store, options=FAST)
    with pytest.raises(ConfigError, match="benchmark 'broken'"):
        derive_plans(store, benchmarks=["broken"], options=FAST)
    assert derive_plans(store, benchmarks=["quiet"], options=FAST).derived  # the others still can be


def test_a_tools_failed_invocations_beside_its_series_are_not_an_error(store):
    # A tool's invocations that failed as a whole are stored under its configured name.
    _campaign(store, {"go": "failed", "go/BenchmarkX": "ok"})
    result = derive_plans(store, options=FAST)
    assert [d.plan.benchmark for d in result.derived] == ["go/BenchmarkX"]


def test_optimize_benchmark_without_an_ok_run_exits_3(here, capsys):
    with Store(here / "s.db") as s:
        _campaign(s, {"quiet": "ok", "broken": "failed"})
    rc, out, err = _cli(here, capsys, "optimize", "--benchmark", "broken")
    assert rc == 3 and err.count("\n") == 1 and "benchmark 'broken'" in err and "no ok run" in err


# ---------------------------------------------------------------- kept plans of another metric
def test_kept_plans_of_another_metric_say_so_and_how_to_apply_it(store, capsys):
    from regbench.report.plans import print_optimize

    _campaign(store, {"a": "ok", "b": "ok"})
    derive_plans(store, options=FAST)
    result = derive_plans(store, options=OptimizeOptions(metric="cv", threshold=0.5, n_resamples=100,
                                                         run_cost=False))
    assert not result.derived and [p.metric for p in result.kept] == ["rmad", "rmad"]
    print_optimize(result)
    assert " ".join(capsys.readouterr().out.split()) == (
        "2 current plans kept (no change detected since; derived with --metric rmad --threshold 0.05, not this "
        "command's --metric cv --threshold 0.5: --refresh derives them with it)")
    print_optimize(derive_plans(store, options=FAST))  # the same options: nothing to say of them
    assert "(no change detected since; --refresh derives them again)" in capsys.readouterr().out


def test_optimize_json_has_what_show_plans_json_has_and_the_documented_more(here, capsys):
    with Store(here / "s.db") as s:
        _campaign(s, {"a": "ok"})
    rc, out, err = _cli(here, capsys, "optimize", "--metric", "rmad", "--format", "json")
    assert rc == 0, err
    (derived,) = json.loads(out)["derived"]
    rc, out, err = _cli(here, capsys, "show", "--plans", "--format", "json")
    assert rc == 0, err
    (shown,) = json.loads(out)
    assert set(derived) - set(shown) == {"shifted", "unsettled"} and not set(shown) - set(derived)
    docs = (Path(__file__).parents[1] / "docs" / "cli.md").read_text()
    section = docs[docs.index("## `regbench optimize`"):docs.index("## `regbench summary`")]
    assert "`shifted`" in section and "`unsettled`" in section


# ---------------------------------------------------------------- optimize --forget
def _planned(here: Path, names=("a", "b", "c")) -> None:
    with Store(here / "s.db") as s:
        _campaign(s, dict.fromkeys(names, "ok"))
        derive_plans(s, options=FAST)


def _current(here: Path) -> list[str]:
    from regbench.store.plans import load_plans

    with Store(here / "s.db") as s:
        return [p.benchmark for p in load_plans(s)]


def test_forget_is_repeatable_and_speaks_json(here, capsys):
    _planned(here)
    rc, out, err = _cli(here, capsys, "optimize", "--forget", "a", "--forget", "b")
    assert rc == 0, err
    assert out.splitlines() == ["1 plans of a deleted", "1 plans of b deleted"]
    assert _current(here) == ["c"]
    rc, out, err = _cli(here, capsys, "optimize", "--forget", "c", "--format", "json")
    assert rc == 0 and json.loads(out) == {"format_version": 1, "deleted": {"c": 1}}


def test_forget_of_a_name_without_a_plan_deletes_nothing(here, capsys):
    _planned(here)
    rc, _, err = _cli(here, capsys, "optimize", "--forget", "a", "--forget", "nosuch")
    assert rc == 3 and err.count("\n") == 1
    assert "--forget 'nosuch': no plan of this benchmark is stored; no plan was deleted" in err
    assert _current(here) == ["a", "b", "c"]


@pytest.mark.parametrize(("extra", "flag"), [(["--refresh"], "--refresh"), (["--threshold", "0.5"], "--threshold"),
                                             (["--campaign", "99"], "--campaign"),
                                             (["--no-run-cost"], "--run-cost/--no-run-cost")])
def test_forget_with_another_option_is_a_usage_error(here, capsys, extra, flag):
    _planned(here)
    rc, _, err = _cli(here, capsys, "optimize", "--forget", "a", *extra)
    assert rc == 2 and f"Error: {flag} does not go with --forget" in err
    assert _current(here) == ["a", "b", "c"]


# ---------------------------------------------------------------- show --plans
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_show_plans_of_an_unknown_benchmark_is_an_error(here, capsys, fmt):
    _planned(here, names=("count",))
    rc, out, err = _cli(here, capsys, "show", "--plans", "--benchmark", "cuont", "--format", fmt)
    assert rc == 3 and not out and err == "error: no benchmark named 'cuont' in the store (did you mean 'count'?)\n"


def test_show_plans_of_a_tool_by_its_configured_name(here, capsys):
    _planned(here, names=("go/BenchmarkX", "go/BenchmarkY", "other"))
    rc, out, err = _cli(here, capsys, "show", "--plans", "--benchmark", "go", "--format", "json")
    assert rc == 0, err
    assert [p["benchmark"] for p in json.loads(out)] == ["go/BenchmarkX", "go/BenchmarkY"]


@pytest.mark.parametrize(("args", "message"), [
    (["--plans", "--version", "nosuch"], "--version does not go with --plans"),
    (["--plans", "--runs"], "--runs does not go with --plans"),
    (["--format", "json"], "--format json is of --plans"),
])
def test_show_options_that_do_not_go_together_are_usage_errors(here, capsys, args, message):
    _planned(here, names=("count",))
    rc, _, err = _cli(here, capsys, "show", *args)
    assert rc == 2 and f"Error: {message}" in err


# ---------------------------------------------------------------- --min-runs above the campaign's runs
def test_min_runs_above_the_campaigns_runs_is_a_note(store):
    _campaign(store, {"a": "ok", "b": "ok"}, runs=4)
    result = derive_plans(store, options=dataclasses.replace(FAST, min_runs=6))
    assert {d.plan.runs for d in result.derived} == {4}
    assert "--min-runs 6 is more than the campaign's ok runs of 2 benchmarks: their plans keep all of them " \
           "(a: 4, b: 4)" in result.notes
    result = derive_plans(store, options=dataclasses.replace(FAST, min_runs=4), refresh=True)
    assert not any("--min-runs" in n for n in result.notes)


# ---------------------------------------------------------------- --version as other commands take it
def test_version_is_named_as_show_and_compare_take_it(store):
    sha = "c5a32fbc6e" + "0" * 30
    _campaign(store, {"a": "ok"}, version="c5a32fbc6e", commit=sha)
    assert derive_plans(store, version="c5a32", options=FAST).derived[0].plan.version == "c5a32fbc6e"
    store.revisions = lambda name: sha if name == "HEAD" else None  # git's answer, as `regbench` asks it
    assert derive_plans(store, version="HEAD", options=FAST, refresh=True).derived[0].plan.version == "c5a32fbc6e"
    with pytest.raises(NotFoundError, match="no version named 'nosuch' in the store"):
        derive_plans(store, version="nosuch", options=FAST)


# ---------------------------------------------------------------- a campaign too small for several
def test_every_benchmark_with_too_few_repetitions_is_named(store):
    cid = store.start_campaign(seed=1, machine="m", fingerprint={}, command="x", plan={})
    shapes = {"few-iters": (3, 2), "few-runs": (2, 3), "quiet": (3, 3), "none": (0, 0)}
    for b, (runs, iterations) in shapes.items():
        for r in range(runs):
            store.add_runs([RunRecord(b, "v1", r, 1 + 0.01 * np.arange(iterations), machine="m", campaign_id=cid)],
                           versions=[VersionInfo("v1", timestamp=datetime(2024, 1, 1))])
    store.add_runs([RunRecord("none", "v1", 0, np.array([]), machine="m", campaign_id=cid, status="failed")])
    store.finish_campaign(cid, "finished")
    with pytest.raises(ConfigError) as info:
        derive_plans(store, options=FAST)
    message = str(info.value)
    assert message.startswith("benchmark 'few-iters': campaign 1, the last finished one, at version v1 has 3 ok runs "
                              "of at least 2 measured iterations")
    assert message.endswith("; and too few of 2 more benchmarks: 'few-runs' (2 ok runs of 3 measured iterations), "
                            "'none' (no ok run, 1 failed)")
    assert "\n" not in message and "--campaign" not in message  # no other campaign to name


def test_the_other_campaign_is_named_plainly(store):
    _campaign(store, {"a": "ok"}, runs=3)
    _campaign(store, {"a": "ok"}, runs=2, seed=2, version="v2")
    with pytest.raises(ConfigError, match=r"\(`--campaign 1` optimizes from the other finished full campaign; run a"):
        derive_plans(store, options=FAST)
    _campaign(store, {"a": "ok"}, runs=2, seed=3, version="v3")
    with pytest.raises(ConfigError, match=r"\(`--campaign ID` optimizes from another finished full campaign \(1, 2\);"):
        derive_plans(store, options=FAST)


# ---------------------------------------------------------------- a benchmark removed from regbench.toml
def test_optimize_leaves_out_what_regbench_toml_no_longer_configures(store):
    from regbench.config import BenchmarkSpec
    from regbench.optimize.plans import plans_for_campaign
    from regbench.store.plans import forget_plans_of

    _campaign(store, {"quiet": "ok", "gone": "ok", "go/BenchmarkX": "ok"})
    derive_plans(store, options=FAST)  # while all three were configured
    specs = [BenchmarkSpec(name="quiet", kind="command"), BenchmarkSpec(name="go", kind="command")]
    with pytest.raises(ConfigError, match="plan of benchmark 'gone': no such benchmark in regbench.toml"):
        plans_for_campaign(store, ["quiet", "go"], machine="m")
    assert forget_plans_of(store, ["gone"]) == {"gone": 1}
    # The next plain optimize, even --refresh, does not give it a plan again from the old campaign.
    result = derive_plans(store, options=FAST, specs=specs, refresh=True)
    assert sorted(d.plan.benchmark for d in result.derived) == ["go/BenchmarkX", "quiet"]
    assert "1 benchmark of the campaign left out, no longer in regbench.toml: gone" in result.notes
    assert plans_for_campaign(store, ["quiet", "go"], machine="m").unplanned == ()
    # Before --forget, the note says how to delete its plan.
    notes = derive_plans(store, options=FAST, specs=specs[:1]).notes
    with pytest.raises(NotFoundError, match=r"--benchmark 'gone': no such benchmark in regbench.toml \(any more\)"):
        derive_plans(store, options=FAST, specs=specs, benchmarks=["gone"])
    assert any(n.startswith("2 benchmarks of the campaign left out, no longer in regbench.toml: go, gone")
               and n.endswith("(`regbench optimize --forget go` deletes its stored plans)") for n in notes)
