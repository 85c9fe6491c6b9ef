"""Errors about one entry of an array of tables in ``regbench.toml`` name that entry, on one line,
and a benchmark's own ``env`` cannot be silently overridden by ``[project] benchmark_dir``.

1. A benchmark whose ``env`` sets ``PYTHONPATH`` (or ``REGBENCH_BENCHMARK_DIR``) beside
   ``[project] benchmark_dir`` ran with the folder's value instead (regbench sets both in every
   run, after the benchmark's variables): the variable came out inert, silently.  It is refused
   when the file is loaded, with a one-line error naming the benchmark, as the same variable is
   for a ``[[screen.option]]`` and the ``[screen] template`` (docs/configuration.md, ``benchmark_dir``).
2. A NUL character in a ``[[screen.option]]`` entry was said to be in "[screen] `option`" (no
   entry), a NUL in a key of an inline table did not name the key, and a benchmark whose measure
   collides with another benchmark's name was named without its index.

Real files in ``tmp_path``, the real ``regbench`` command line, in this process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.config import load_config
from regbench.errors import ConfigError, ExitStatus
from regbench.store import Store

PY = sys.executable
#: A command benchmark that says the PYTHONPATH it was given, on stderr (kept as the run's tail).
SHOWS_PATH = ("import os, sys; sys.stderr.write('PYTHONPATH=' + os.environ.get('PYTHONPATH', '') + '\\n'); "
              "[print(1.0) for _ in range(int(os.environ['REGBENCH_ITERATIONS']))]")
#: What regbench says after the variable's name when [project] benchmark_dir overrides it.
OVERRIDES = ("is set by regbench itself in every run when [project] `benchmark_dir` is set ({what}), which would "
             "override")


def project(tmp_path: Path, *, benchmark_dir: bool, env: dict[str, str]) -> Path:
    """``tmp_path/regbench.toml`` of two command benchmarks, the second with ``env``, and the
    folder ``bd`` as ``benchmark_dir`` when asked."""
    (tmp_path / "bd").mkdir(exist_ok=True)
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[project]\nname = "pp"\n' + ('benchmark_dir = "bd"\n' if benchmark_dir else "")
                   + '\n[defaults]\nruns = 1\niterations = 2\nwarmup = 0\n\n'
                   f'[[benchmark]]\nname = "a"\ncommand = {json.dumps([PY, "-c", SHOWS_PATH])}\n\n'
                   f'[[benchmark]]\nname = "b"\ncommand = {json.dumps([PY, "-c", SHOWS_PATH])}\n'
                   f'env = {{ {", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())} }}\n',
                   encoding="utf-8")
    return cfg


def error_of(cfg: Path, capsys, *command: str) -> str:
    """What ``regbench --config CFG --store ... COMMAND`` writes on stderr; it must fail as a
    reported problem (status 3) with one line, and create no store."""
    db = cfg.parent / "r.db"
    capsys.readouterr()
    rc = main(["--config", str(cfg), "--store", str(db), *command])
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert not db.exists()
    return err


# ------------------------------------------------------- 1: a benchmark's env beside benchmark_dir

@pytest.mark.parametrize("variable, what", [("PYTHONPATH", "the folder first on the path"),
                                            ("REGBENCH_BENCHMARK_DIR", "the folder")])
def test_a_benchmark_env_that_benchmark_dir_overrides_is_a_one_line_error_naming_the_benchmark(tmp_path, capsys,
                                                                                                 variable, what):
    cfg = project(tmp_path, benchmark_dir=True, env={"OTHER": "1", variable: "extra"})
    message = (f"[[benchmark]] #2 ('b') `env`: {variable} {OVERRIDES.format(what=what)} the benchmark's value: put "
               "what it needs in the folder, or give it in another variable")
    for command in (["run"], ["run", "--benchmark", "a"]):  # the file is refused, whatever is run
        assert error_of(cfg, capsys, *command) == f"error: {cfg}: {message}\n"
    with pytest.raises(ConfigError) as caught:
        load_config(cfg)
    assert str(caught.value) == f"{cfg}: {message}"


def test_without_benchmark_dir_a_benchmark_env_pythonpath_reaches_its_run(tmp_path):
    """The refusal is of the combination only: without benchmark_dir the benchmark's PYTHONPATH
    is its runs' (and benchmark_dir alone is every run's)."""
    cfg = project(tmp_path, benchmark_dir=False, env={"PYTHONPATH": "extra"})
    db = tmp_path / "r.db"
    done = subprocess.run([PY, "-m", "regbench.cli.main", "--config", str(cfg), "--store", str(db), "run"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with Store(db) as store:
        seen = {r.benchmark: (r.stderr_tail or "").strip() for r in store.runs()}
    assert seen["b"] == "PYTHONPATH=extra"

    bd = project(tmp_path, benchmark_dir=True, env={"OTHER": "1"})
    assert load_config(bd).benchmarks[1].env == {"OTHER": "1"}


# ------------------------------------------------------------ 2: an entry named in every message

B = '[[benchmark]]\nname = "a"\ncommand = ["true"]\n'
OPTION = '[[screen.option]]\nname = "{name}"\nlevels = ["x", "y"]\nenv = "{env}"\n'

CASES = {
    # Fixed: these did not name the entry (or the key).
    "NUL in a screen option": (B + OPTION.format(name="a", env="A") + OPTION.format(name="b", env="B\\u0000"),
                               "[[screen.option]] #2 ('b') `env`: contains a NUL character"),
    "NUL in a level": (B + OPTION.format(name="a", env="A").replace('"x"', '"x\\u0000"'),
                       "[[screen.option]] #1 ('a') `levels`: contains a NUL character"),
    "NUL in a benchmark": (B + '[[benchmark]]\nname = "b"\ncommand = ["true", "\\u0000"]\n',
                           "[[benchmark]] #2 ('b') `command`: contains a NUL character"),
    "NUL in an env name": (B + 'env = { "X\\u0000" = "1" }\n',
                           "[[benchmark]] #1 ('a') `env`: a key contains a NUL character"),
    "NUL in a sink": (B + '[[notify]]\ntype = "json"\npath = "a\\u0000"\n',
                      "[[notify]] #1 `path`: contains a NUL character"),
    "a measure named as a benchmark": (B + 'measures = ["cpu"]\n[[benchmark]]\nname = "a:cpu"\ncommand = ["true"]\n',
                                       "[[benchmark]] #1 ('a'): its measure 'cpu' is stored as the series 'a:cpu', "
                                       "which is also the name of a benchmark"),
    # Already named: kept so.
    "not a table": ("benchmark = [{ name = \"a\", command = [\"true\"] }, 3]\n", "[[benchmark]] #2 must be a table"),
    "no name": (B + '[[benchmark]]\ncommand = ["true"]\n',
                "[[benchmark]] #2: `name` is required and must be a non-empty string"),
    "a name of the wrong type": ('[[benchmark]]\nname = 3\ncommand = ["true"]\n',
                                 "[[benchmark]] #1: `name` is required and must be a non-empty string"),
    "an unknown key": (B.replace("command", "comand = 1\ncommand"),
                       "[[benchmark]] #1 ('a'): unknown key `comand`; did you mean `command`?"),
    "a duplicate name": (B + B, "[[benchmark]] #2 ('a'): duplicate benchmark name 'a'"),
    "a wrong type": (B + 'runs = "3"\n', "[[benchmark]] #1 ('a') `runs` must be a positive integer, got '3'"),
    "a sink of no type": (B + '[[notify]]\ntype = "slack"\n',
                          "[[notify]] #1: `type` must be one of terminal, json, markdown, webhook, email, got 'slack'"),
    "a sink missing a key": (B + '[[notify]]\ntype = "json"\n', "[[notify]] #1 (json): `path` is required"),
    "two sinks of one name": (B + '[[notify]]\ntype = "terminal"\n' * 2,
                              "[[notify]] #2 (terminal): another sink is named 'terminal'"),
    "an option twice": (B + OPTION.format(name="a", env="A") + OPTION.format(name="a", env="B"),
                        "[[screen.option]] #2: duplicate option name 'a'"),
}


@pytest.mark.parametrize("text, message", CASES.values(), ids=CASES.keys())
def test_an_error_in_an_entry_names_the_entry_on_one_line(tmp_path, capsys, text, message):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(text, encoding="utf-8")
    err = error_of(cfg, capsys, "run")
    assert err.startswith(f"error: {cfg}: {message}"), err
