"""A D-optimal follow-up adds configurations the design does not have (a probe: after a full
design, `--augment 2` added two it had, whose stored runs were then counted twice: "16 already
stored" of 12, twice the residual degrees of freedom, an effect's p-value 0.126 -> 0.031), and
refuses a model it cannot estimate or a main effect given as a term."""

from __future__ import annotations

import pytest

from regbench.config import load_config
from regbench.errors import ConfigError
from regbench.screening.campaign import augmented_design, parse_terms
from regbench.screening.effects import Term
from regbench.screening.base import get_design

from test_screening_campaign import project, screen


def space_of(tmp_path, constraints: str = ""):
    return load_config(project(tmp_path, constraints=constraints)).screen


def test_a_follow_up_of_a_full_design_has_nothing_to_add(tmp_path, capsys):
    space = space_of(tmp_path)
    full = get_design("full").build([2] * len(space.options))
    model = [Term((i,), n) for i, n in enumerate(space.names)] + parse_terms(["a*b"], space)
    with pytest.raises(ConfigError, match=r"--augment 2: every valid configuration is in the design already \(16\)"):
        augmented_design(space, full, model, 2)


def test_added_configurations_are_new_ones(tmp_path):
    space = space_of(tmp_path)
    fraction = get_design("fractional", generators=["D = ABC"]).build([2] * 4)
    model = [Term((i,), n) for i, n in enumerate(space.names)] + parse_terms(["a*b", "c*d"], space)
    design = augmented_design(space, fraction, model, 8, seed=3)
    rows = {tuple(r) for r in design.levels.tolist()}
    assert len(rows) == len(design.levels) == 16  # the other half of the full factorial, no repeat
    with pytest.raises(ConfigError, match=r"the constraints leave 8 valid configurations outside the design: "
                                          r"give --augment 8 at most"):
        augmented_design(space, fraction, model, 9)


def test_a_main_effect_as_a_term_is_refused(tmp_path, capsys):
    cfg = project(tmp_path)
    assert screen(cfg, "--runs", "1", "--augment", "2", "--term", "a", "--dry-run") == 3
    assert "term 'a' is a main effect, always in the model: --term names an interaction" in capsys.readouterr().err


def test_a_model_the_constraints_confound_is_refused(tmp_path):
    # With a constraint that a and b never both be high, a*b's column is confounded: no follow-up
    # separates it.
    space = space_of(tmp_path, constraints="constraints = ['not (a == \"on\" and b == \"fast\")']")
    fraction = get_design("fractional", generators=["D = ABC"]).build([2] * 4)
    model = [Term((i,), n) for i, n in enumerate(space.names)] + parse_terms(["a*b"], space)
    with pytest.raises(ConfigError, match=r"the model \(a\*b beside the main effects\) is not estimable"):
        augmented_design(space, fraction, model, 2)


def test_a_dry_run_refuses_the_benchmark_the_run_would_refuse(tmp_path, capsys):
    # A probe: `screen --benchmark nope --dry-run` printed the design and exited 0.
    cfg = project(tmp_path)
    assert screen(cfg, "--benchmark", "nope", "--dry-run") == 3
    assert "nope" in capsys.readouterr().err
    assert screen(cfg, "--dry-run") == 0  # the only benchmark configured
    cfg.write_text(cfg.read_text().replace('[screen]', '[[benchmark]]\nname = "other"\ncommand = ["echo", "1"]\n[screen]'))
    assert screen(cfg, "--dry-run") == 3
    assert "give --benchmark NAME: screening measures one benchmark (2 are configured)" in capsys.readouterr().err
