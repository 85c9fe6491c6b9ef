"""`regbench init` in a subfolder of a project says that the new file now shadows the project's
for commands run there (a first-user probe: it did so silently)."""

from __future__ import annotations

from regbench.cli.main import main


def test_init_below_a_project_names_the_configuration_it_shadows(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert "note:" not in capsys.readouterr().err  # nothing above it
    sub = tmp_path / "bench"
    sub.mkdir()
    monkeypatch.chdir(sub)
    assert main(["init"]) == 0
    err = capsys.readouterr().err
    assert f"note: {tmp_path / 'regbench.toml'} is above it: commands run in {sub} or below now read this one" in err
