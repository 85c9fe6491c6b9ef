"""What a first-user probe of 2026-12-01 found (a real library's history, toolz): a repeated
`--benchmark` kept the last one silently (a CI gate compared one benchmark of two), and a
`[project] repo` that does not exist stored a failed run of every benchmark in a new store."""

from __future__ import annotations

import pytest

from regbench.cli.main import main


@pytest.mark.parametrize("command", [["compare", "A", "B"], ["summary"], ["detect"], ["show"], ["alerts", "list"]])
def test_a_repeated_benchmark_is_refused_where_one_is_taken(tmp_path, capsys, command):
    store = tmp_path / "s.db"
    assert main(["--store", str(store), *command, "--benchmark", "a", "--benchmark", "b"]) == 2
    err = capsys.readouterr().err
    assert "'--benchmark': given 2 times (a, b): this command takes one benchmark" in err
    assert not store.exists()


def test_run_still_takes_several_benchmarks(tmp_path, capsys):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\n[defaults]\nruns = 1\niterations = 2\nwarmup = 0\n'
                   '[[benchmark]]\nname = "a"\ncommand = ["sh", "-c", "echo 1; echo 1"]\n'
                   '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "echo 2; echo 2"]\n')
    assert main(["--config", str(cfg), "run", "--benchmark", "a", "--benchmark", "b"]) == 0
    assert "2 runs stored (2 ok)" in capsys.readouterr().out


def test_a_repo_that_is_not_a_folder_is_a_config_error_and_nothing_is_stored(tmp_path, capsys):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nrepo = "nope"\n[[benchmark]]\nname = "b"\ncommand = ["echo", "1"]\n')
    store = tmp_path / "st" / "r.db"
    assert main(["--config", str(cfg), "--store", str(store), "run", "--runs", "1"]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "[project] `repo`: no such directory:" in err[0] and err[0].endswith("nope")
    assert not store.exists() and not store.parent.exists()
    (tmp_path / "nope").write_text("a file")
    assert main(["--config", str(cfg), "--store", str(store), "run", "--runs", "1"]) == 3
    assert not store.exists()


def test_compare_from_a_version_that_did_not_build_says_so(tmp_path, capsys, monkeypatch):
    # A probe: with A's build failed, compare said only "no benchmark has runs of both" (B's failed
    # build already had its line).
    import json
    import subprocess
    import sys

    repo = tmp_path / "proj"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", *args], check=True)

    git("init", "-q", "-b", "main")
    (repo / "src.txt").write_text("syntax error here\n")
    git("add", ".")
    git("commit", "-q", "-m", "broken")
    (repo / "src.txt").write_text("fine\n")
    git("commit", "-q", "-am", "fixed")
    build = "import sys; sys.exit(2) if 'syntax' in open('src.txt').read() else None"
    (tmp_path / "regbench.toml").write_text(
        f'[project]\nrepo = "proj"\nbuild = {json.dumps([sys.executable, "-c", build])}\n'
        '[defaults]\nruns = 2\nwarmup = 0\niterations = 2\n'
        '[[benchmark]]\nname = "work"\ncommand = ["sh", "-c", "echo 1; echo 1"]\n')
    monkeypatch.chdir(tmp_path)
    main(["run", "--versions", "HEAD~1,HEAD"])
    capsys.readouterr()
    assert main(["compare", "HEAD~1", "HEAD"]) == 3
    err = capsys.readouterr().err
    assert "no benchmark has runs of both" in err and "did not build: exit status 2; `regbench show --version" in err
    # `show --version` names that version's failed build alone (a second probe: another's too).
    assert main(["show", "--version", "HEAD"]) == 0
    assert "build failed" not in capsys.readouterr().out
    assert main(["show", "--version", "HEAD~1"]) == 0
    assert "build failed at" in capsys.readouterr().out


def test_a_store_under_a_file_is_said_so(tmp_path, capsys):
    (tmp_path / "results.toml").write_text("")
    csv = tmp_path / "r.csv"
    csv.write_text("benchmark,version,run,iteration,value\nb,v1,0,0,1.0\n")
    assert main(["--store", str(tmp_path / "results.toml" / "r.db"), "import", str(csv)]) == 3
    err = capsys.readouterr().err.strip()
    assert err.endswith("results.toml is a file, not a folder: the store " + str(tmp_path / "results.toml" / "r.db")
                        + " cannot be created under it")


def test_show_lists_failed_runs_by_benchmark_version_and_run_not_as_they_ended(tmp_path, capsys):
    import numpy as np

    from regbench.model import RunRecord, VersionInfo
    from regbench.store import Store

    db = tmp_path / "s.db"
    with Store(db) as store:
        store.ensure_versions([VersionInfo("v1"), VersionInfo("v2")])
        for bench, version, index in (("b", "v2", 1), ("a", "v2", 0), ("b", "v1", 0), ("a", "v1", 1), ("b", "v2", 0)):
            store.add_run(RunRecord(bench, version, index, np.empty(0), status="failed", exit_code=1,
                                    stderr_tail=f"boom {bench}{version}{index}"))
    assert main(["--store", str(db), "show"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("Failed runs"):]
    rows = [line.split()[:3] for line in table.splitlines() if line[:2] in ("a ", "b ")]
    assert rows == [["a", "v1", "1"], ["a", "v2", "0"], ["b", "v1", "0"], ["b", "v2", "0"], ["b", "v2", "1"]]


def test_a_series_failing_at_its_newest_version_is_failing_on_the_dashboard(tmp_path):
    # A probe: benchmarks that crashed, hung or printed garbage from their first run were "too
    # noisy to judge" in the dashboard and the API.
    import numpy as np

    from regbench.model import RunRecord, VersionInfo
    from regbench.store import Store
    from regbench.web.data import STATES, Dashboard

    with Store(tmp_path / "s.db") as store:
        store.ensure_versions([VersionInfo(f"v{k}") for k in range(3)])
        rng = np.random.default_rng(1)
        for k in range(3):
            for r in range(3):
                store.add_run(RunRecord("steady", f"v{k}", r, 1.0 + rng.normal(0, 0.001, 5)))
                store.add_run(RunRecord("never", f"v{k}", r, np.empty(0), status="crashed", exit_code=-11))
                failed = k == 2
                store.add_run(RunRecord("broke", f"v{k}", r, np.empty(0) if failed else 1.0 + rng.normal(0, 0.001, 5),
                                        status="failed" if failed else "ok", exit_code=1 if failed else 0))
        dash = Dashboard(store).load()
        states = {s.benchmark: s.state for s in dash.by_id.values()}
        index = dash.index_payload()
    assert states == {"steady": "stable", "never": "failing", "broke": "failing"}
    assert index["states"][:3] == ["changed", "stable", "noisy"] and "failing" in STATES


def test_diagnose_shows_its_result_in_the_unit_summary_uses(tmp_path, capsys):
    # A probe: diagnose printed "0.000646 s +- 0.00118" where summary printed "646 ± 1,180 us".
    import numpy as np

    rng = np.random.default_rng(3)
    rows = ["benchmark,version,run,iteration,value,unit"]
    for r in range(4):
        level = 646e-6 * (1 + rng.normal(0, 0.05))
        rows += [f"b,v1,{r},{i},{level * (1 + rng.normal(0, 0.01)):.9g},s" for i in range(10)]
    csv = tmp_path / "r.csv"
    csv.write_text("\n".join(rows) + "\n")
    db = str(tmp_path / "s.db")
    assert main(["--store", db, "import", str(csv)]) == 0
    capsys.readouterr()
    main(["--store", db, "diagnose", "b"])
    out = capsys.readouterr().out
    result = next(line for line in out.splitlines() if line.strip().startswith("result ("))
    assert " us " in result and "±" in result and "+-" not in result and "0.000" not in result


@pytest.mark.parametrize("ident", [2**31, 2**63, 10**20])
def test_an_id_past_any_rows_names_no_alert_nor_token(store_url, ident):
    # A probe: `alerts show 2147483648` and `token revoke 2147483648` ended in a traceback on
    # PostgreSQL (integer out of range), 10**20 on SQLite (too large for its INTEGER), and the
    # API answered 500.
    from regbench.detect.alerts import set_status
    from regbench.errors import NotFoundError
    from regbench.store import Store
    from regbench.store.alerts import get_alert
    from regbench.store.tokens import revoke_token

    with Store(store_url) as store:
        with pytest.raises(NotFoundError, match=f"no alert #{ident} in the store"):
            get_alert(store, ident)
        with pytest.raises(NotFoundError, match=f"no alert #{ident} in the store"):
            set_status(store, [ident], "acknowledged", who="me")
        with pytest.raises(NotFoundError, match="no live token"):
            revoke_token(store, str(ident))


def test_the_command_line_says_an_id_past_any_rows_is_no_alert(tmp_path, capsys):
    csv = tmp_path / "r.csv"
    csv.write_text("benchmark,version,run,iteration,value\nb,v1,0,0,1.0\n")
    db = str(tmp_path / "s.db")
    assert main(["--store", db, "import", str(csv)]) == 0
    capsys.readouterr()
    assert main(["--store", db, "alerts", "show", "99999999999999999999"]) == 3
    assert capsys.readouterr().err.strip() == "error: no alert #99999999999999999999 in the store"
    assert main(["--store", db, "token", "revoke", "2147483648"]) == 3
    assert "no live token '2147483648'" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["SECRETX é", "SECRETX\nrest", "SECRETX a", "SECRETX\x07"])
def test_push_refuses_a_token_that_cannot_go_in_a_header_without_printing_it(tmp_path, capsys, monkeypatch, value):
    # A probe: a non-ASCII token was a traceback; one with a line break was printed six times in
    # "cannot reach" retries, into the CI log.
    csv = tmp_path / "r.csv"
    csv.write_text("benchmark,version,run,iteration,value\nb,v1,0,0,1.0\n")
    monkeypatch.setenv("T", value)
    code = main(["push", "--server", "http://127.0.0.1:9", "--token-env", "T", "--format", "csv", "--machine", "m",
                 "--attempts", "1", str(csv)])
    err = capsys.readouterr().err
    assert code == 3 and "--token-env: the environment variable T is no API token" in err
    assert "SECRETX" not in err and "cannot reach" not in err
    if "\n" not in value:  # (a file's first line is the token: a second line is not part of it)
        (tmp_path / "t.txt").write_text(value + "\n")
        assert main(["push", "--server", "http://127.0.0.1:9", "--token-file", str(tmp_path / "t.txt"), "--format",
                     "csv", "--machine", "m", "--attempts", "1", str(csv)]) == 3
        err = capsys.readouterr().err
        assert f"--token-file: the first line of {tmp_path / 't.txt'} is no API token" in err and "SECRETX" not in err


@pytest.mark.parametrize("machine", ["", "   "])
def test_a_token_bound_to_a_blank_machine_is_refused(tmp_path, capsys, machine):
    db = tmp_path / "s.db"
    assert main(["--store", str(db), "token", "create", "--name", "z", "--scope", "submit", "--machine", machine]) == 2
    assert "is blank: give the machine's name" in capsys.readouterr().err
    assert not db.exists()


@pytest.mark.parametrize("url", ["http://", "http://127.0.0.1:99999/x", "https://:80/x", "http://h:port/x"])
def test_a_webhook_url_without_a_host_or_with_a_bad_port_is_a_config_error(tmp_path, capsys, url):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(f'[project]\n[[benchmark]]\nname = "b"\ncommand = ["echo", "1"]\n'
                   f'[[notify]]\ntype = "webhook"\nurl = "{url}"\n')
    assert main(["--config", str(cfg), "alerts", "notify"]) == 3
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"[[notify]] #1 (webhook): `url` must be an http:// or https:// URL with a host (and a port "
                        f"from 0 to 65535), got '{url}'")


def test_optimize_refuses_a_session_as_its_full_campaign(tmp_path, capsys):
    # A probe: `optimize --campaign 7` of a bisect session stored a plan of 39 runs a version.
    import numpy as np

    from regbench.model import SESSION_SCHEDULE, RunRecord
    from regbench.store import Store

    db = tmp_path / "s.db"
    with Store(db) as store:
        session = store.start_campaign(seed=1, machine="m", fingerprint={}, command="regbench bisect a b",
                                       plan={"schedule": SESSION_SCHEDULE, "benchmarks": ["b"]})
        store.add_runs([RunRecord("b", "v1", r, np.full(5, 1.0 + r / 100), machine="m", campaign_id=session)
                        for r in range(6)])
        store.finish_campaign(session, "finished")
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(f'[project]\nstore = "{db}"\n[[benchmark]]\nname = "b"\ncommand = ["echo", "1"]\n')
    assert main(["--config", str(cfg), "optimize", "--campaign", str(session)]) == 3
    err = capsys.readouterr().err
    assert f"--campaign: campaign {session} is a session (regbench bisect a b), not a full campaign" in err


def test_bisect_says_which_end_did_not_build_and_when_both_ends_are_one_commit(tmp_path, capsys, monkeypatch):
    # A probe: "GOOD or BAD did not build" without saying which; `bisect main main` asked whether
    # the range was reversed.
    import json
    import subprocess
    import sys

    repo = tmp_path / "proj"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q", "-b", "main")
    (repo / "src.txt").write_text("syntax error here\n")
    git("add", ".")
    git("commit", "-q", "-m", "broken")
    for k in range(2):
        (repo / "src.txt").write_text(f"fine {k}\n")
        git("commit", "-q", "-am", f"fixed {k}")
    build = "import sys; sys.exit(2) if 'syntax' in open('src.txt').read() else None"
    (tmp_path / "regbench.toml").write_text(
        f'[project]\nrepo = "proj"\nbuild = {json.dumps([sys.executable, "-c", build])}\n'
        '[defaults]\nruns = 2\nwarmup = 0\niterations = 3\n'
        '[[benchmark]]\nname = "work"\ncommand = ["sh", "-c", "echo 1; echo 1; echo 1"]\n')
    monkeypatch.chdir(tmp_path)
    main(["bisect", "HEAD~2", "HEAD", "--benchmark", "work"])
    out = capsys.readouterr().out
    assert f"GOOD ({git('rev-parse', '--short=10', 'HEAD~2')}) did not build: nothing to bisect" in out
    assert main(["bisect", "main", "main", "--benchmark", "work"]) == 3
    assert "both ends are the same commit" in capsys.readouterr().err


def test_an_unknown_base_branch_names_the_option(tmp_path, capsys, monkeypatch):
    import subprocess

    repo = tmp_path / "r"
    repo.mkdir()
    subprocess.run(["git", "-C", str(repo), "init", "-q", "-b", "main"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q",
                    "--allow-empty", "-m", "one"], check=True)
    (tmp_path / "regbench.toml").write_text('[project]\nrepo = "r"\n[[benchmark]]\nname = "b"\ncommand = ["echo", "1"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--base", "merge-base", "--base-branch", "nope"]) == 3
    assert capsys.readouterr().err.strip().startswith("error: --base-branch nope: ")


def test_serve_on_a_port_in_use_says_so_before_any_address(tmp_path, capsys):
    # A probe: it printed "regbench dashboard on http://...:PORT/" and then the bind error.
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["--store", str(tmp_path / "s.db"), "serve", "--port", str(port)]) == 3
    captured = capsys.readouterr()
    assert "dashboard on" not in captured.err + captured.out
    assert f"--host 127.0.0.1 --port {port}: cannot listen there" in captured.err
