"""A benchmark edited between campaigns (its command, env, ...): the campaign that first runs the
new definition says so, since the runs stored before measure the old one and are not run again
(a first-user probe: two empty commits were "+100% regression" after the command was edited, and
nothing said why)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from regbench.cli.main import main
from regbench.store import Store

CONFIG = ('[project]\nrepo = "r"\n[defaults]\nruns = 2\niterations = 3\nwarmup = 0\n'
          '[[benchmark]]\nname = "b"\ncommand = ["sh", "-c", "for i in 1 2 3; do echo {value}; done"]\n{more}')


def project(tmp_path: Path) -> Path:
    repo = tmp_path / "r"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q",
                                                 "--allow-empty", "-m", "one"],
                 ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "two"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    return tmp_path / "regbench.toml"


def campaign(cfg: Path, capsys, versions: str) -> str:
    capsys.readouterr()
    assert main(["--config", str(cfg), "run", "--versions", versions]) == 0
    out = capsys.readouterr()
    return out.out + out.err


def test_an_edited_command_is_said_once_and_how_often_it_runs_is_not_a_definition(tmp_path, capsys):
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(value="0.010", more=""))
    assert "Definition changed" not in campaign(cfg, capsys, "HEAD~1")
    cfg.write_text(CONFIG.format(value="0.010", more="iterations = 5\n"))  # how often: not what
    assert "Definition changed" not in campaign(cfg, capsys, "HEAD~1")
    cfg.write_text(CONFIG.format(value="0.020", more="iterations = 5\n"))
    said = campaign(cfg, capsys, "HEAD~1,HEAD")
    assert "Definition changed: b: its command changed since campaign 2, which ran it" in said
    assert "its 2 runs stored before measure the old one and are superseded" in said
    assert "Definition changed" not in campaign(cfg, capsys, "HEAD~1,HEAD")  # said once
    cfg.write_text(CONFIG.format(value="0.020", more='env = { SIZE = "2" }\n'))
    assert "Definition changed: b: its env changed since campaign 4" in campaign(cfg, capsys, "HEAD")
    with Store(tmp_path / ".regbench" / "results.db") as store:
        plans = [c.plan["benchmarks"]["b"]["definition"] for c in store.campaigns()]
    assert plans[0]["command"][-1].endswith("echo 0.010; done")
    assert list(plans[-1]["env"]) == ["SIZE"] and "2" not in plans[-1]["env"].values()  # a digest, not the value


def test_auto_warmup_over_few_iterations_is_said(tmp_path, capsys):
    cfg = project(tmp_path)
    cfg.write_text(CONFIG.format(value="0.010", more='warmup = "auto"\niterations = 12\n'))
    said = campaign(cfg, capsys, "HEAD")
    assert 'Settings: b: warmup = "auto" over 12 iterations finds a warm-up poorly' in said
    cfg.write_text(CONFIG.format(value="0.010", more='warmup = "auto"\niterations = 20\n'))
    assert "Settings:" not in campaign(cfg, capsys, "HEAD~1")


def test_the_variables_regbench_sets_are_not_part_of_a_definition():
    # An optimized plan's forks (REGBENCH_FORKS) are how often a JMH benchmark runs, not what:
    # alternating `run` and `run --plan optimized` must not say the definition changed.
    import dataclasses

    from regbench.config import BenchmarkSpec
    from regbench.run.definitions import definition
    from regbench.run.execute import FORKS_ENV, SELECT_ENV

    spec = BenchmarkSpec(name="b", kind="command", command=("java", "-jar", "b.jar"), env={"SIZE": "2"})
    planned = dataclasses.replace(spec, env={**spec.env, FORKS_ENV: "1", SELECT_ENV: "b.x"}, runs=3)
    assert definition(planned) == definition(spec)
    assert definition(dataclasses.replace(spec, env={"SIZE": "3"})) != definition(spec)
