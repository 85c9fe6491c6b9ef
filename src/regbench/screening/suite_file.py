"""A screening suite as what ``regbench run`` benchmarks per version (seed 002 s.4.6).

``regbench screen --design suite --important A --important B --save-suite FILE`` writes the
suite's configurations (every combination of the important options' levels, the others at the
fixed random valid levels drawn with the seed) to a TOML file::

    # A screening suite (Yilmaz et al. 2007, s.4.6), written by `regbench screen --design suite`
    important = ["a", "b"]
    seed = 0

    [[config]]
    name = "a=off,b=slow,c=small,d=0"
    levels = { a = "off", b = "slow", c = "small", d = 0 }

``regbench run --suite FILE`` (or ``[screen] suite = "FILE"`` in ``regbench.toml``) then runs
every configured benchmark in each configuration of the suite, for each version: one campaign
per configuration (:func:`run_suite`), each through :func:`regbench.run.campaign.run_campaign`
with the benchmarks as the configuration applies them (:func:`~regbench.screening.campaign.applied_spec`:
variables, arguments, the rendered template) and its runs stored under the configuration's
name, the one screening gives it (:func:`~regbench.screening.campaign.configuration_name`).  So
detection sees one series per configuration of the suite, and the suite's runs and a screen's are
the same runs where the configurations coincide.  The file is read against the ``[screen]``
space of ``regbench.toml``: an unknown option or level, a missing option, a configuration that
breaks a constraint or whose name is not its levels' is a one-line error naming the file and the
entry, before anything runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ..errors import ConfigError, shown
from .campaign import ScreenPoint, applied_spec, configuration_name
from .space import ConfigurationSpace, Level

if TYPE_CHECKING:
    from ..config import ProjectConfig
    from ..run.campaign import CampaignResult
    from ..store import Store

HEADER = ("# A screening suite (Yilmaz et al. 2007, s.4.6), written by `regbench screen --design suite`:\n"
          "# every combination of the important options, the others at fixed random valid levels.\n"
          "# `regbench run --suite FILE` (or [screen] suite = \"FILE\") benchmarks every version in each.\n")


def _toml_value(value: Level) -> str:
    """One level as a TOML value.

    Written by hand: the standard library reads TOML (``tomllib``) but does not write it, and no
    TOML writer is among regbench's dependencies for these few scalars; :func:`write_suite`
    reads the text back with ``tomllib`` and compares, so a value this got wrong is an error,
    never a wrong file.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    # A JSON string is a TOML basic string, but for DEL, which TOML wants escaped.
    return json.dumps(str(value), ensure_ascii=False).replace("\x7f", "\\u007f")


def suite_text(space: ConfigurationSpace, points: Sequence[ScreenPoint], *, important: Sequence[str],
               seed: int) -> str:
    """The suite file's text for the valid ``points``."""
    lines = [HEADER, f"important = [{', '.join(_toml_value(n) for n in important)}]", f"seed = {int(seed)}", ""]
    for p in points:
        if not p.valid:
            continue
        levels = ", ".join(f"{o.name} = {_toml_value(p.levels[o.name])}" for o in space.options)
        lines += ["[[config]]", f"name = {_toml_value(p.name)}", f"levels = {{ {levels} }}", ""]
    return "\n".join(lines)


def write_suite(path: str | os.PathLike, space: ConfigurationSpace, points: Sequence[ScreenPoint], *,
                important: Sequence[str], seed: int) -> int:
    """Write the suite's valid configurations to ``path`` (atomically: the old file or the new
    one, never half of one) and return how many.

    Raises
    ------
    ConfigError
        The file cannot be written, or its text would not read back as written.
    """
    path = Path(path)
    text = suite_text(space, points, important=important, seed=seed)
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - _toml_value writes valid TOML
        raise ConfigError(f"--save-suite {path}: cannot write the suite as TOML: {exc}") from None
    valid = [p for p in points if p.valid]
    if [(c["name"], c["levels"]) for c in parsed.get("config", [])] != [(p.name, dict(p.levels)) for p in valid]:
        raise ConfigError(f"--save-suite {path}: a level does not read back as written")  # pragma: no cover
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"--save-suite {path}: cannot write: {exc.strerror or exc}") from None
    return len(valid)


def read_suite(path: str | os.PathLike, space: ConfigurationSpace) -> list[ScreenPoint]:
    """The configurations of a suite file, checked against ``space``.

    Raises
    ------
    ConfigError
        One line naming the file (and the ``[[config]]`` entry): unreadable, not TOML, an
        unknown key, no configuration, an unknown option or level, a missing option, a broken
        constraint, a name that is not the configuration's levels', a configuration twice.
    """
    path = Path(path)

    def fail(msg: str) -> NoReturn:
        raise ConfigError(f"{path}: {msg}")

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        fail("no such suite file (write it with `regbench screen --design suite --important OPTION "
             f"--save-suite {path}`)")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read the suite: {exc}")
    except tomllib.TOMLDecodeError as exc:
        fail(f"not TOML: {exc}")
    bad = set(data) - {"important", "seed", "config"}
    if bad:
        fail(f"unknown key `{sorted(bad)[0]}` (expected important, seed, [[config]])")
    important = data.get("important", [])
    if not isinstance(important, list) or not all(isinstance(n, str) for n in important):
        fail(f"`important` must be a list of option names, got {shown(important)}")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        fail(f"`seed` must be a non-negative integer, got {shown(seed)}")
    entries = data.get("config")
    if not isinstance(entries, list) or not entries:
        fail("no [[config]] entry: a suite needs at least one configuration")
    out: list[ScreenPoint] = []
    seen: set[str] = set()
    for k, entry in enumerate(entries, start=1):
        where = f"{path}: [[config]] #{k}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: must be a table with `name` and `levels = {{ OPTION = LEVEL, ... }}`, "
                              f"got {shown(entry)}")
        extra = set(entry) - {"name", "levels"}
        if extra:
            raise ConfigError(f"{where}: unknown key `{sorted(extra)[0]}` (expected name, levels)")
        for key in ("name", "levels"):
            if key not in entry:
                raise ConfigError(f"{where}: `{key}` is required")
        if not isinstance(entry["name"], str):
            raise ConfigError(f"{where}: `name` must be a string (the name of its levels), got {shown(entry['name'])}")
        if not isinstance(entry["levels"], dict):
            raise ConfigError(f"{where}: `levels` must be a table {{ OPTION = LEVEL, ... }}, got {shown(entry['levels'])}")
        levels = space.check_config(entry["levels"], where=where)
        name = configuration_name(levels, space)
        if entry["name"] != name:
            raise ConfigError(f"{where}: `name` {entry['name']!r} is not its levels' name {name!r}")
        violated = space.violated(levels)
        if violated:
            raise ConfigError(f"{where}: {name} breaks the constraint {violated[0]}")
        if name in seen:
            raise ConfigError(f"{where}: {name} is in the suite twice")
        seen.add(name)
        out.append(ScreenPoint(row=k - 1, levels=levels, name=name))
    return out


def suite_path(config: ProjectConfig, given: str | os.PathLike | None) -> Path | None:
    """The suite ``regbench run`` runs: ``given`` (``--suite FILE``, relative to the current
    folder), else ``[screen] suite`` (relative to ``regbench.toml``'s folder), else None."""
    if given is not None:
        return Path(given)
    if config.screen is not None and config.screen.suite is not None:
        return config.root / config.screen.suite
    return None


def suite_configs(config: ProjectConfig, points: Sequence[ScreenPoint], *, template_dir: Path,
                  benchmarks: Sequence[str] | None = None) -> list[tuple[ScreenPoint, ProjectConfig]]:
    """Per configuration of the suite, ``config`` with its benchmarks as that configuration
    applies them (only ``benchmarks`` when given).

    Raises
    ------
    ConfigError
        No ``[screen]`` table, or an option passed as an argument (``arg``) to a Python benchmark.
    """
    space = config.screen
    if space is None:
        raise ConfigError(f"{config.path or 'regbench.toml'}: a suite needs the [screen] table whose options its "
                          "levels set")
    specs = [b for b in config.benchmarks if benchmarks is None or b.name in benchmarks]
    for spec in specs:
        if spec.kind != "command" and any(o.apply == "arg" for o in space.options):
            raise ConfigError(f"benchmark {spec.name!r} is a Python benchmark: options applied as command-line "
                              "arguments (`arg`) need a command benchmark")
    return [(p, dataclasses.replace(config, benchmarks=tuple(
                applied_spec(s, space, p, template_dir=template_dir, root=config.root) if s in specs else s
                for s in config.benchmarks)))
            for p in points]


def run_suite(config: ProjectConfig, store: Store, points: Sequence[ScreenPoint], *,
              run: Callable[[ProjectConfig, str], CampaignResult],
              template_dir: Path, benchmarks: Sequence[str] | None = None,
              check: Callable[[ProjectConfig], None] | None = None) -> list[tuple[str, CampaignResult]]:
    """Run a campaign per configuration of the suite: ``run(applied_config, config_name)`` (the
    caller's :func:`~regbench.run.campaign.run_campaign` with its options), after storing every
    configuration with its levels.  ``check(applied_config)`` is called for each configuration
    before anything is stored: what the campaigns would refuse, so that a refused suite writes
    nothing.  Returns each configuration's name and campaign, in order."""
    applied = suite_configs(config, points, template_dir=template_dir, benchmarks=benchmarks)
    if check is not None:
        for _, cfg in applied:
            check(cfg)

    def named(conn) -> None:  # the levels travel with the configuration's name, as a screen's do
        for p, _ in applied:
            store.ensure_config(conn, p.name, params=dict(p.levels))

    store.write(named)
    return [(p.name, run(cfg, p.name)) for p, cfg in applied]


__all__ = ["read_suite", "run_suite", "suite_configs", "suite_path", "suite_text", "write_suite"]
