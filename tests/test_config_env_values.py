"""A benchmark's `env` holds what its process will see: a TOML boolean or a nan is refused (it
would arrive as Python's spelling of it), and so are the variables regbench sets itself in every
run, whose value the benchmark's would never reach."""

from __future__ import annotations

import pytest

from regbench.config import load_config
from regbench.errors import ConfigError

HEAD = '[project]\nname = "p"\n[[benchmark]]\nname = "a"\ncommand = ["true"]\n'


def _load(tmp_path, env: str):
    path = tmp_path / "regbench.toml"
    path.write_text(HEAD + f"env = {{ {env} }}\n")
    return load_config(path)


@pytest.mark.parametrize("env, value", [("X = true", "true"), ("X = false", "false"), ("X = nan", "nan"),
                                        ("X = inf", "inf"), ("X = -inf", "-inf")])
def test_booleans_and_non_finite_numbers_are_refused(tmp_path, env, value):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, env)
    message = str(err.value)
    assert "\n" not in message
    assert "[[benchmark]] #1 ('a') `env`: X = " in message and "quote it" in message


@pytest.mark.parametrize("variable", ["REGBENCH_ITERATIONS", "REGBENCH_WARMUP", "REGBENCH_RUN_INDEX",
                                      "REGBENCH_VERSION", "REGBENCH_ENV_PAD"])
def test_variables_regbench_sets_in_every_run_are_refused(tmp_path, variable):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, f'{variable} = "5"')
    message = str(err.value)
    assert "\n" not in message
    assert f"`env`: {variable} is set by regbench itself" in message and "give it another name" in message


@pytest.mark.parametrize("env, seen", [('X = "1"', "1"), ("X = 3", "3"), ("X = 0.5", "0.5"),
                                       ('REGBENCH_FORKS = "2"', "2")])
def test_strings_finite_numbers_and_a_forks_default_are_kept(tmp_path, env, seen):
    # REGBENCH_FORKS is set only by an optimized plan's invocation: the benchmark's own value is the
    # full run's default (docs/optimize.md), so it stays allowed.
    cfg = _load(tmp_path, env)
    (name, value), = cfg.benchmarks[0].env.items()
    assert value == seen or str(value) == seen
