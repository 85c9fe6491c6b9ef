"""How ``detect --confirm`` and ``bisect`` compare runs: the confirmation follows what the detection
summarised each run by (its location, and mode by mode for a change found in one mode), or what
``--confirm-as`` says; ``bisect --location``/``--measure`` decide every step on that value.  Real
processes on generated git repositories, as tests/test_confirm.py and tests/test_bisect.py."""

from __future__ import annotations

import pytest

from regbench.cli.main import main
from regbench.config import COMPARE_AS, DetectSettings, load_config, parse_config
from regbench.demo_project import create_step_repo
from regbench.detect.base import REGISTRY, Change, Detector
from regbench.errors import ConfigError
from regbench.pipeline import detect_and_alert
from regbench.report.changes import confirmation_line
from regbench.run.bisect import bisect
from regbench.run.campaign import run_campaign
from regbench.run.confirm import ConfirmOptions
from regbench.run.rerun import comparison_of
from regbench.stats.runs import _location_reason
from regbench.store import Store
from regbench.store.alerts import list_alerts

LOW = _location_reason("low", {"mean": 4.0, "median": 2.0, "low": 1.0}, 1.5)
MEDIAN = _location_reason("median", {"mean": 4.0, "median": 1.0, "low": 2.0}, 0.1)
MEAN = _location_reason("mean", {"mean": 1.0, "median": 2.0, "low": 3.0}, 0.0)


def change(estimator: str | None = None, detail: str | None = None) -> Change:
    return Change("b", "default", "m", "v2", "v1", 0.1, 0.05, 0.15, "regression", "auto", estimator=estimator,
                  detail=detail)


def test_follow_takes_the_location_and_the_mode_the_detection_used():
    assert comparison_of(change(LOW)) == {"by_mode": False, "measure": None, "location": "low"}
    assert comparison_of(change(MEDIAN)) == {"by_mode": False, "measure": None, "location": "median"}
    assert comparison_of(change(MEAN)) == {"by_mode": False, "measure": None, "location": "mean"}
    assert comparison_of(change(None)) == {"by_mode": False, "measure": None, "location": "mean"}
    # A throughput searched on its reciprocal's 10% quantile: compared on its floor too, which for a
    # benchmark where higher is better `run_value` takes as its 90% quantile.
    from regbench.detect.auto import RECIPROCAL_NOTE

    assert comparison_of(change(f"{LOW}; {RECIPROCAL_NOTE} (the time of one operation)"))["location"] == "low"
    assert comparison_of(change(f"{MEAN}; {RECIPROCAL_NOTE} (the time of one operation)"))["location"] == "mean"
    moved = change("the mean of each run's samples in each mode: a multimodal benchmark",
                   "mode 2 of 2 (0.0123 to 0.0456)")
    assert comparison_of(moved) == {"by_mode": True, "measure": None, "location": "mean"}
    # Told one way, every change is compared that way.
    assert comparison_of(change(LOW), "mean")["location"] == "mean"
    assert comparison_of(change(LOW), "by-mode")["by_mode"] is True
    assert comparison_of(change(LOW), "instructions") == {"by_mode": False, "measure": "instructions",
                                                           "location": "mean"}
    with pytest.raises(ConfigError, match="`confirm_as` must be one of follow, mean"):
        comparison_of(change(LOW), "fastest")
    with pytest.raises(ConfigError, match="`confirm_as` must be one of"):
        ConfirmOptions(compare_as="fastest")


def test_the_detect_table_takes_confirm_as():
    assert parse_config({"detect": {"confirm_as": "low"}}).detect == DetectSettings(confirm_as="low")
    assert parse_config({}).detect.confirm_as == "follow" and "follow" in COMPARE_AS
    with pytest.raises(ConfigError, match=r"^regbench.toml: \[detect\] `confirm_as` must be one of follow, mean, "
                                          r"median, low, by-mode, instructions, got 'lowest'"):
        parse_config({"detect": {"confirm_as": "lowest"}})


class LowQuantileStep(Detector):
    """Reports the planted step (commit 6 of 8) as ``auto`` would under a floor with slower
    interference: found on each run's 10% quantile."""

    name = "test-low-quantile-step"
    at = 5  # the index of the version it reports the change at

    def detect(self, series):
        prev, ver = series.versions[self.at - 1].name, series.versions[self.at].name
        return [Change(series.benchmark, series.config, series.machine, ver, prev, 0.25, 0.15, 0.35, "regression",
                       self.name, estimator=LOW)]


def test_a_confirmation_follows_the_detection_and_records_what_it_compared(tmp_path, monkeypatch):
    monkeypatch.setitem(REGISTRY, LowQuantileStep.name, LowQuantileStep)
    repo = create_step_repo(tmp_path / "repo", commits=8, steps={6: 1.25})
    config = load_config(repo.config_path)
    with Store(tmp_path / "r.db") as store:
        run_campaign(config, store, revisions=",".join(repo.commits), seed=1)
        out = detect_and_alert(store, config, method=LowQuantileStep.name, min_change=0.05, fdr=None, jobs=1,
                               confirm=ConfirmOptions(seed=2))
        (entry,) = out.changes
        conf = entry.confirmation
        assert conf.status == "confirmed" and conf.verdict == "regression"
        assert conf.compared_by == "pairs of interleaved runs, log ratio of runs' 10% quantiles (a floor: " \
                                   "interference only adds time)"
        assert "Compared pairs of interleaved runs, log ratio of runs' 10% quantiles" in confirmation_line(entry)
        plan = store.campaigns()[-1].plan["confirm"]
        assert plan["compare_as"] == "follow"
        assert plan["changes"][0]["compared_as"] == {"by_mode": False, "measure": None, "location": "low"}
        # Stored with the alert, and read back the same.
        (alert,) = list_alerts(store)
        assert alert.confirmation.compared_by == conf.compared_by
        # Told to compare run means instead (the same change is already an alert: a dry run
        # with a fresh store of the same campaign is not needed, the option is checked directly).
    with Store(tmp_path / "r2.db") as store:
        run_campaign(config, store, revisions=",".join(repo.commits), seed=1)
        out = detect_and_alert(store, config, method=LowQuantileStep.name, min_change=0.05, fdr=None, jobs=1,
                               confirm=ConfirmOptions(seed=2, compare_as="mean"), dry_run=True)
        (entry,) = out.changes
        assert entry.confirmation.compared_by == "pairs of interleaved runs, log ratio of run means"


def test_cli_confirm_as_and_duet_need_what_they_apply_to(tmp_path, capsys):
    store = ["--store", str(tmp_path / "r.db")]
    Store(tmp_path / "r.db").close()
    assert main([*store, "detect", "--confirm-as", "low"]) == 2
    assert "--confirm-as needs --confirm" in capsys.readouterr().err
    assert main([*store, "detect", "--duet"]) == 2
    assert "--duet/--no-duet needs --confirm or --bisect" in capsys.readouterr().err
    assert main([*store, "detect", "--confirm", "--confirm-as", "lowest"]) == 2
    assert "'lowest' is not one of" in capsys.readouterr().err


#: A floor (runs spread 0.3%) with slower interference on 30% of iterations (exponential, 20% on
#: average): what a busy machine does to a CPU-bound benchmark, printed so that a test sees the
#: same numbers every time (seeded by the version and the run index).
SKEWED_PROGRAM = ("import os, random\n"
                  "level = float(open('level.txt').read())\n"
                  "r = random.Random(os.environ['REGBENCH_VERSION'] + '/' + os.environ['REGBENCH_RUN_INDEX'])\n"
                  "run = level * r.lognormvariate(0, 0.003)\n"
                  "for _ in range(int(os.environ['REGBENCH_ITERATIONS'])):\n"
                  "    print(run * (1 + (r.expovariate(5) if r.random() < 0.3 else 0)))\n")


def test_bisect_on_the_low_quantile_finds_the_culprit_in_fewer_runs_than_on_the_mean(tmp_path, capsys):
    repo = create_step_repo(tmp_path / "repo", commits=8, steps={5: 1.12}, program=SKEWED_PROGRAM, iterations=10)
    config = load_config(repo.config_path)
    shas = list(repo.commits)
    with Store(tmp_path / "r.db") as store:
        low = bisect(config, store, shas[0], shas[-1], benchmark="b", threshold=0.02, seed=3, location="low")
        mean = bisect(config, store, shas[0], shas[-1], benchmark="b", threshold=0.02, seed=3)
    assert low.status == "found" and shas[4].startswith(low.culprit)
    assert low.total.location == "low" and low.culprit_change.location == "low" and mean.total.location == "mean"
    assert low.runs < mean.runs
    # The command says so (on the three commits around the culprit: the same search, fewer steps).
    code = main(["--store", str(tmp_path / "r2.db"), "--config", str(repo.config_path), "bisect", shas[3], shas[5],
                 "--benchmark", "b", "--threshold", "0.02", "--seed", "3", "--location", "low"])
    out = capsys.readouterr().out
    assert code == 0 and "Every comparison and step on runs' 10% quantiles" in out
    assert main(["--store", str(tmp_path / "r2.db"), "--config", str(repo.config_path), "bisect", shas[0], shas[-1],
                 "--benchmark", "b", "--location", "low", "--measure", "instructions"]) == 2  # usage
    assert "Error: --location low applies to time, not to --measure instructions" in capsys.readouterr().err


def test_detect_bisect_follows_the_location_of_the_change(tmp_path, monkeypatch):
    """``detect --bisect`` bisects a change found on the 10% quantile on the 10% quantile."""

    class Nightly(LowQuantileStep):
        name = "test-low-quantile-nightly"
        at = 2

    monkeypatch.setitem(REGISTRY, Nightly.name, Nightly)
    repo = create_step_repo(tmp_path / "repo", commits=8, steps={6: 1.25})
    config = load_config(repo.config_path)
    shas = list(repo.commits)
    with Store(tmp_path / "r.db") as store:
        # Nightly snapshots: commits 1, 4 and 8 only, so the change lies between 4 and 8.
        run_campaign(config, store, revisions=",".join([shas[0], shas[3], shas[7]]), seed=1)
        out = detect_and_alert(store, config, method=Nightly.name, min_change=0.05, fdr=None, jobs=1,
                               bisect=True)
    (entry,) = out.changes
    assert entry.bisection is not None and entry.bisection.total.location == "low"
    assert entry.bisection.status == "found" and shas[5].startswith(entry.bisection.culprit)



def test_a_throughput_detected_on_its_own_low_quantile_is_confirmed_on_medians():
    # A series where higher is better with a negative sample is not searched as its reciprocal,
    # and `auto` may choose its own 10% quantile (its slow tail); a comparison's `low` of such a
    # benchmark is its 90% quantile, so the nearest location it can take is the median.
    assert comparison_of(change(LOW), direction="higher")["location"] == "median"
    assert comparison_of(change(LOW), direction="lower")["location"] == "low"
