"""Two wrong results of a first-user probe of campaigns (/tmp/probe-ci), on real git repositories
and benchmark processes.

1. The runs of sessions (``compare --run``, ``bisect``) that an edit of a benchmark superseded
   were never taken back when the edit was reverted: sessions recorded no definition, and a
   revert takes back the runs of those that ran the definition it has again.  Sessions record the
   definitions of what they run now, so they are origins like campaigns; and the campaign after a
   session that ran another definition settles its runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from projecttools import empty_commits_project
from projecttools import run_cli as run

from regbench.cli.main import main
from regbench.model import SUPERSEDED
from regbench.store import Store

CONFIG = ('[project]\nrepo = "r"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo {value}; done"]\n')


def store_of(tmp_path: Path) -> Store:
    return Store(tmp_path / ".regbench" / "results.db")


def statuses(tmp_path: Path) -> dict[int, set[str]]:
    """The statuses of b's runs, by the campaign (or session) that stored them."""
    with store_of(tmp_path) as store:
        out: dict[int, set[str]] = {}
        for r in store.runs(benchmark="b"):
            out.setdefault(r.campaign_id, set()).add(r.status)
        return out


def session(cfg: Path, capsys, kind: str) -> None:
    """A session of ``kind`` (``compare --run`` or ``bisect``) over the project's last two
    commits, storing runs of b (its verdict does not matter here)."""
    if kind == "compare":
        args = ["compare", "HEAD~1", "HEAD", "--run", "--benchmark", "b", "--max-pairs", "3", "--seed", "1"]
    else:
        args = ["bisect", "HEAD~2", "HEAD", "--benchmark", "b", "--max-pairs", "3", "--seed", "1"]
    main(["--config", str(cfg), *args])
    capsys.readouterr()


@pytest.mark.parametrize("kind", ["compare", "bisect"])
def test_a_reverted_edit_takes_back_the_runs_of_a_session(tmp_path, capsys, kind):
    # repro-8.sh: a campaign, a session, an edit (the next run supersedes both's runs), the
    # revert: the session's runs stayed superseded for ever (summary lost them).
    cfg = empty_commits_project(tmp_path, 3)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~2,HEAD~1,HEAD")  # campaign 1
    session(cfg, capsys, kind)  # 2
    assert statuses(tmp_path)[2] == {"ok"}
    cfg.write_text(CONFIG.format(value="0.020"))
    said = run(cfg, capsys, "run", "--versions", "HEAD")  # campaign 3 supersedes 1's and 2's
    assert "b: its command changed since" in said
    assert statuses(tmp_path) == {1: {SUPERSEDED}, 2: {SUPERSEDED}, 3: {"ok"}}

    cfg.write_text(CONFIG.format(value="0.010"))  # reverted
    said = run(cfg, capsys, "run", "--versions", "HEAD")  # campaign 4
    assert "changed since campaign 3, which ran it: its 2 runs stored before" in said
    assert "ran the definition it has again (1, 2) are back in the analyses" in said
    assert "0 runs stored" in said  # HEAD's runs of campaign 1 count again
    assert statuses(tmp_path) == {1: {"ok"}, 2: {"ok"}, 3: {SUPERSEDED}}
    summary = run(cfg, capsys, "summary", "--format", "json")
    rows = json.loads(summary[summary.index("["):summary.rindex("]") + 1])
    with store_of(tmp_path) as store:
        per_version = {v: sum(r.version == v and r.status == "ok" for r in store.runs(benchmark="b"))
                       for v in {r["version"] for r in rows}}
    assert {r["version"]: r["runs"] for r in rows} == per_version  # the session's runs are counted again
    with store_of(tmp_path) as store:  # the session recorded what it ran, beside what it recorded before
        (made,) = [c for c in store.campaigns() if c.id == 2]
        assert made.session and made.definitions == {"b": made.plan["definitions"]["b"]}
        assert made.definitions["b"]["command"][-1] == "for i in 1 2 3; do echo 0.010; done"
        if kind == "compare":
            assert made.plan["benchmarks"] == ["b"]
        else:
            assert made.plan["bisect"]["benchmark"] == "b"


def test_a_session_that_ran_the_edit_keeps_its_runs_at_the_next_campaign(tmp_path, capsys):
    # The edit was made, then compared by a session, then run by a campaign: the session's runs
    # measure the definition the campaign runs, and were superseded with those of the old one.
    cfg = empty_commits_project(tmp_path, 2)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # campaign 1
    cfg.write_text(CONFIG.format(value="0.020"))
    session(cfg, capsys, "compare")  # 2, of the new definition
    said = run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # 3
    assert "changed since campaign 1, which ran it: its 4 runs stored before" in said
    assert statuses(tmp_path) == {1: {SUPERSEDED}, 2: {"ok"}, 3: {"ok"}}


def test_a_session_of_an_edit_reverted_since_is_superseded_by_the_next_campaign(tmp_path, capsys):
    # The edit compared by a session, then reverted before any campaign: the campaign runs the
    # definition its last campaign ran, but the session's runs measure another and were left in
    # every analysis that reads sessions (summary, compare).
    cfg = empty_commits_project(tmp_path, 2)
    cfg.write_text(CONFIG.format(value="0.010"))
    run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # campaign 1
    cfg.write_text(CONFIG.format(value="0.020"))
    session(cfg, capsys, "compare")  # 2
    cfg.write_text(CONFIG.format(value="0.010"))
    said = run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")  # 3
    assert "b: its command changed since session 2, which ran it" in said
    assert "4 runs already stored" in said  # campaign 1's runs are of this definition: nothing to run
    assert statuses(tmp_path) == {1: {"ok"}, 2: {SUPERSEDED}}
    with store_of(tmp_path) as store:
        (series,) = store.load_series("b")
        assert {float(x) for runs in series.runs for r in runs for x in r} == {0.01}
    # Said once: the next campaign has nothing to supersede.
    assert "Definition changed" not in run(cfg, capsys, "run", "--versions", "HEAD~1,HEAD")


def test_the_definitions_a_campaign_compares_with_when_sessions_ran_last(tmp_path):
    # definition_history / changed_definitions on recorded plans alone: the last campaign and the
    # sessions since it are compared; sessions before the last campaign, and plans without
    # definitions (sessions before they recorded them), are not.
    from regbench.config import BenchmarkSpec
    from regbench.run.definitions import changed_definitions, definition, definition_history

    one, two = (BenchmarkSpec(name="b", kind="command", command=("echo", v)) for v in ("1", "2"))
    d1, d2 = definition(one), definition(two)

    def campaign(store: Store, d: dict) -> int:
        return store.start_campaign(seed=1, machine="m", fingerprint={}, command="run",
                                    plan={"config": "default", "benchmarks": {"b": {"definition": d}}})

    def sess(store: Store, d: dict | None) -> int:
        plan = {"config": "default", "schedule": "sequential-pairs", "benchmarks": ["b"]}
        return store.start_campaign(seed=1, machine="m", fingerprint={}, command="compare --run",
                                    plan={**plan, "definitions": {"b": d}} if d is not None else plan)

    def changes(store: Store, spec: BenchmarkSpec):
        return [(c.since, c.session, c.origins) for c in changed_definitions(store, [spec], machine="m",
                                                                            config_name="default")]

    with Store(tmp_path / "a.db") as store:
        s1 = sess(store, d1)  # sessions only: they are compared
        assert changes(store, one) == [] and changes(store, two) == [(s1, True, ())]
        c2 = campaign(store, d2)
        s3 = sess(store, d2)
        assert [r.campaign_id for r in definition_history(store, machine="m", config_name="default")["b"]] == [s1, c2, s3]
        assert changes(store, two) == []  # s1 is before the last campaign: settled by it
        assert changes(store, one) == [(s3, True, (s1,))]
        sess(store, None)  # a session of an older regbench: no definition, nothing compared
        assert changes(store, two) == []
        c5 = campaign(store, d1)
        assert changes(store, one) == []
        assert changes(store, two) == [(c5, False, (c2, s3))]
