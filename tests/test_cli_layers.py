"""The command shell stays thin (STYLE.md habits 14 and 21), proved on the sources with `ast`:
commands do not import commands, only `cli/` and `report/` import rich, and every subcommand
has working help and is documented in docs/cli.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from regbench.cli.main import _register, cli

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "regbench"
PRESENTATION = ("regbench.cli", "regbench.report")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module a source file imports (absolute names; ``from M import x`` gives M and M.x)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)
    return out


def sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_import_parser_resolves_relative_imports():
    found = imported(PACKAGE / "cli" / "cmd_detect.py")
    assert "regbench.detect" in found and "regbench.pipeline" in found and "regbench.report.changes" in found


@pytest.mark.parametrize("path", sorted((PACKAGE / "cli").glob("cmd_*.py")), ids=lambda p: p.stem)
def test_commands_do_not_import_commands(path):
    others = {m for m in imported(path) if re.fullmatch(r"regbench\.cli\.cmd_\w+", m)} - {module_name(path)}
    assert not others, f"{path.name} imports {sorted(others)}: shared rendering belongs in regbench.report"


def test_only_cli_and_report_import_rich():
    offenders = {module_name(p): sorted(m for m in imported(p) if under(m, "rich"))
                 for p in sources() if not under(module_name(p), *PRESENTATION)}
    assert not {k: v for k, v in offenders.items() if v}


def test_report_does_not_import_the_cli():
    offenders = {module_name(p) for p in (PACKAGE / "report").rglob("*.py")
                 if any(under(m, "regbench.cli") for m in imported(p))}
    assert not offenders


@pytest.mark.parametrize("module", ["pipeline", "inventory"])
def test_plain_functions_present_nothing(module):
    found = imported(PACKAGE / f"{module}.py")
    assert not {m for m in found if under(m, "click", "rich", *PRESENTATION)}


def subcommands():
    _register()
    return [(group, name) for group, cmd in sorted(cli.commands.items()) if hasattr(cmd, "commands")
            for name in sorted(cmd.commands)]


@pytest.mark.parametrize("group, name", subcommands())
def test_every_subcommand_has_help_and_is_documented(group, name):
    doc = (ROOT / "docs" / "cli.md").read_text()
    assert f"regbench {group} {name}" in doc, f"docs/cli.md does not document `regbench {group} {name}`"
    out = CliRunner().invoke(cli, [group, name, "--help"], prog_name="regbench")
    assert out.exit_code == 0, out.output
    assert f"Usage: regbench {group} {name}" in out.output
    for opt in re.findall(r"^\s+(--[a-z][a-z-]*)", out.output, flags=re.M):
        if opt != "--help":
            assert opt in doc, f"docs/cli.md does not mention {opt} of `regbench {group} {name}`"
