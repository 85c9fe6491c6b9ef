"""Error messages show a value as the input file wrote it: TOML's and JSON's `true`, not Python's
`True` (a first-user probe: `runs = true` was "got True")."""

from __future__ import annotations

from regbench.cli.main import main
from regbench.errors import shown


def test_booleans_are_shown_as_toml_and_json_write_them():
    assert shown(True) == "true" and shown([1, False]) == "[1, false]" and shown("True") == "'True'"


def test_a_configuration_error_quotes_true_as_written(tmp_path, capsys):
    cfg = tmp_path / "regbench.toml"
    cfg.write_text('[defaults]\nruns = true\n[[benchmark]]\nname = "b"\ncommand = ["true"]\n')
    assert main(["--config", str(cfg), "show"]) == 3
    assert capsys.readouterr().err.strip().endswith("[defaults] `runs` must be a positive integer, got true")
