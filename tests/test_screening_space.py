"""The configuration space of regbench.toml ([screen]): options, levels, constraints parsed safely."""

from __future__ import annotations

import pytest

from regbench.config import parse_config
from regbench.errors import ConfigError
from regbench.screening.space import parse_constraint, parse_space


def _space(**extra):
    table = {"option": [{"name": "journal", "levels": ["delete", "wal"], "env": "JOURNAL"},
                        {"name": "sync", "levels": ["off", "normal", "full"], "arg": "--sync={value}"},
                        {"name": "cache", "levels": [100, 2000], "env": "CACHE"}]}
    table.update(extra)
    return parse_space(table, where="regbench.toml")


def test_a_space_with_levels_constraints_and_ways_to_apply():
    space = _space(constraints=['not (journal == "wal" and sync == "off")', "cache >= 100"])
    assert space.names == ("journal", "sync", "cache")
    assert space.size == 12
    assert space.option("sync").apply == "arg" and not space.option("sync").binary
    assert space.valid({"journal": "wal", "sync": "normal", "cache": 100})
    assert not space.valid({"journal": "wal", "sync": "off", "cache": 100})
    assert space.violated({"journal": "wal", "sync": "off", "cache": 2000}) == (
        'not (journal == "wal" and sync == "off")',)


def test_membership_and_chained_comparisons():
    space = _space(constraints=['sync in ("normal", "full") or cache < 2000'])
    assert space.valid({"journal": "wal", "sync": "off", "cache": 100})
    assert not space.valid({"journal": "wal", "sync": "off", "cache": 2000})


def test_the_config_file_carries_the_space():
    cfg = parse_config({"benchmark": [{"name": "b", "command": ["true"]}],
                        "screen": {"option": [{"name": "x", "levels": [0, 1], "env": "X"}]}})
    assert cfg.screen is not None and cfg.screen.names == ("x",)
    assert parse_config({}).screen is None


@pytest.mark.parametrize("constraint, message", [
    ("__import__('os').system('true')", r"constraint 1: `Call` is not allowed"),
    ("journal.upper() == 'WAL'", "`Call` is not allowed"),
    ("journal[0] == 'w'", "`Subscript` is not allowed"),
    ("(lambda: 1)()", "is not allowed"),
    ("journal == ", "cannot parse"),
    ("jornal == 'wal'", "unknown option 'jornal'"),
    ("journal == 'WAL'", "option 'journal' has no level 'WAL'"),
    ("journal is None", "`is` is not allowed"),
    ("-cache > 0", "operator USub is not allowed"),
])
def test_a_constraint_that_is_not_a_plain_expression_is_a_one_line_error(constraint, message):
    with pytest.raises(ConfigError, match=message) as info:
        _space(constraints=[constraint])
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("regbench.toml: [screen] constraint 1")


def test_a_constraint_leaving_no_configuration_is_an_error():
    with pytest.raises(ConfigError, match="constraints leave no valid configuration"):
        _space(constraints=['journal == "wal"', 'journal == "delete"'])


@pytest.mark.parametrize("option, message", [
    ({"name": "x", "levels": [1], "env": "X"}, "at least two"),
    ({"name": "x", "levels": [1, 1], "env": "X"}, "duplicate level"),
    ({"name": "x", "levels": [0, 1]}, "exactly one of env, arg, template, build"),
    ({"name": "x", "levels": [0, 1], "env": "X", "arg": "--x={value}"}, "exactly one of"),
    ({"name": "x", "levels": [0, 1], "arg": "--x"}, r"with \{value\}"),
    ({"name": "not", "levels": [0, 1], "env": "X"}, "must be an identifier"),
    ({"name": "x", "levels": [0, 1], "env": "X", "colour": 1}, "unknown key `colour`"),
    ({"name": "x", "levels": [0, 1], "template": True}, "has no `template`"),
])
def test_bad_options_are_one_line_errors(option, message):
    with pytest.raises(ConfigError, match=message):
        parse_space({"option": [option]}, where="regbench.toml")


def test_unknown_option_or_level_in_a_configuration():
    space = _space()
    with pytest.raises(ConfigError, match="unknown option 'jounral'"):
        space.check_config({"jounral": "wal"})
    with pytest.raises(ConfigError, match="option 'sync' has no level 'fast'"):
        space.check_config({"journal": "wal", "sync": "fast", "cache": 100})
    with pytest.raises(ConfigError, match="no level given for option 'cache'"):
        space.check_config({"journal": "wal", "sync": "off"})


def test_an_empty_space_and_unknown_keys():
    with pytest.raises(ConfigError, match=r"needs at least one \[\[screen.option\]\]"):
        parse_space({}, where="regbench.toml")
    with pytest.raises(ConfigError, match="unknown key `designs`"):
        parse_space({"option": [{"name": "x", "levels": [0, 1], "env": "X"}], "designs": 1})


def test_constraints_are_checked_not_evaluated():
    """The parsed tree is walked by regbench's evaluator, which knows only comparisons, boolean
    operations, names and constants; nothing of Python's evaluation runs."""
    space = _space()
    c = parse_constraint("journal == 'wal' and cache == 100", space)
    assert c.names == {"journal", "cache"}
    assert c.holds({"journal": "wal", "sync": "off", "cache": 100})


def test_the_pure_screening_modules_load_no_store_cli_or_cluster():
    """STYLE.md habit 1: designs, words, effects, suites and recalibration import numpy, scipy
    and pyDOE3 only; checked in a fresh interpreter."""
    import subprocess
    import sys

    code = ("import sys\n"
            "import regbench.screening.space, regbench.screening.base, regbench.screening.fractional\n"
            "import regbench.screening.full_factorial, regbench.screening.plackett_burman\n"
            "import regbench.screening.effects, regbench.screening.terms, regbench.screening.doptimal\n"
            "import regbench.screening.suite, regbench.screening.recalibrate\n"
            "bad = [m for m in ('sqlalchemy', 'rich', 'click', 'distributed', 'matplotlib', 'regbench.store',\n"
            "                   'regbench.run') if m in sys.modules]\n"
            "print(bad)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_oversized_spaces_and_constraints_are_one_line_errors():
    with pytest.raises(ConfigError, match="more than 512"):
        parse_space({"option": [{"name": f"o{i}", "levels": [0, 1], "env": "X"} for i in range(513)]})
    with pytest.raises(ConfigError, match="more than 1000"):
        parse_space({"option": [{"name": "x", "levels": list(range(1001)), "env": "X"}]})
    with pytest.raises(ConfigError, match="longer than 2000 characters"):
        _space(constraints=["cache == 100 or " * 200 + "cache == 100"])
    from regbench.screening.base import get_design
    with pytest.raises(ConfigError, match="searching generators for 200 options is not supported"):
        get_design("fractional").build([2] * 200)
