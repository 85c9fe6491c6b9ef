"""Every error about a suite file's [[config]] entry (`regbench run --suite`) names the file and
the entry on one line, and its `important` and `seed` are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from regbench.cli.main import main
from regbench.errors import ExitStatus

CFG = '''[project]
name = "screened"
[[benchmark]]
name = "work"
command = ["true"]
[screen]
constraints = ['not (a == "on" and d == 1)']
[[screen.option]]
name = "a"
levels = ["off", "on"]
env = "OPT_A"
[[screen.option]]
name = "d"
levels = [0, 1]
env = "OPT_D"
'''
GOOD = '[[config]]\nname = "a=on,d=0"\nlevels = { a = "on", d = 0 }\n'
CASES = {
    # Fixed by the patch.
    "an unknown option": (GOOD.replace("d = 0 }", "d = 0, z = 1 }"), "[[config]] #1: unknown option 'z' (options: a, d)"),
    "an unknown key": (GOOD.replace("levels", "runs = 3\nlevels"), "[[config]] #1: unknown key `runs` (expected name, levels)"),
    "no name": (GOOD.replace('name = "a=on,d=0"\n', ""), "[[config]] #1: `name` is required"),
    "no levels": ('[[config]]\nname = "a=on,d=0"\n', "[[config]] #1: `levels` is required"),
    "a name of the wrong type": (GOOD.replace('"a=on,d=0"', "3"), "[[config]] #1: `name` must be a string"),
    "levels of the wrong type": (GOOD.replace('{ a = "on", d = 0 }', '"a=on"'),
                                 "[[config]] #1: `levels` must be a table { OPTION = LEVEL, ... }, got 'a=on'"),
    "important of the wrong type": ("important = 3\n" + GOOD, "`important` must be a list of option names, got 3"),
    "seed of the wrong type": ('seed = "x"\n' + GOOD, "`seed` must be a non-negative integer, got 'x'"),
    # Named before.
    "not a table": ("config = [1]\n", "[[config]] #1: must be a table"),
    "an unknown level": (GOOD.replace('a = "on"', 'a = "maybe"'), "[[config]] #1: option 'a' has no level 'maybe'"),
    "a broken constraint": (GOOD.replace("d=0", "d=1").replace("d = 0", "d = 1"),
                            "[[config]] #1: a=on,d=1 breaks the constraint"),
    "a configuration twice": (GOOD + '[[config]]\nname = "a=off,d=0"\nlevels = { a = "off", d = 0 }\n' + GOOD,
                              "[[config]] #3: a=on,d=0 is in the suite twice"),
}


@pytest.mark.parametrize("text, message", CASES.values(), ids=CASES.keys())
def test_an_error_in_a_suite_entry_names_the_file_and_the_entry_on_one_line(tmp_path: Path, capsys, text, message):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text(CFG, encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text(text, encoding="utf-8")
    db = tmp_path / "r.db"
    rc = main(["--config", str(cfg), "--store", str(db), "run", "--suite", str(suite), "--versions", "HEAD"])
    err = capsys.readouterr().err
    assert rc == ExitStatus.ERROR and err.count("\n") == 1, err
    assert err.startswith(f"error: {suite}: {message}"), err
    assert not db.exists()
