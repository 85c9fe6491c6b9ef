"""The configuration space of a system (seed 002 s.2, the QA task model): options, their levels,
the constraints between them, and how each option reaches a benchmark.

``regbench.toml``::

    [screen]
    template = { source = "pragmas.sql.in", env = "PRAGMAS_FILE" }   # optional
    constraints = ['not (journal == "wal" and sync == "off")']

    [[screen.option]]
    name = "journal"
    levels = ["delete", "wal"]       # the first is the low (-) level, the second the high (+)
    env = "JOURNAL_MODE"             # exactly one of env, arg, template, build

A constraint is a Python-like boolean expression over option names and constants, parsed with
:mod:`ast` and *checked*, never evaluated as code: only comparisons, ``and``/``or``/``not``,
names of options and literal constants are accepted (a call, an attribute, a subscript or any
other node is a one-line error naming the constraint).  The parsed tree is then walked by
:func:`_evaluate`, which knows only those nodes.

Nothing here imports the store, the run core or the CLI: a space is pure data.
"""

from __future__ import annotations

import ast
import itertools
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from ..errors import ConfigError, shown

#: How an option reaches a benchmark (exactly one per option).
APPLY_KINDS = ("env", "arg", "template", "build")
#: Level values a TOML file may give.
Level = str | int | float | bool
#: Configurations checked at most when deciding whether the constraints leave any (only the
#: options the constraints name are enumerated, so real spaces stay far below).
MAX_CHECKED = 2_000_000
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYWORDS = {"and", "or", "not", "True", "False", "None", "in", "is"}

_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


@dataclass(frozen=True)
class Option:
    """One configuration option.

    Attributes
    ----------
    name : str
        Its name (an identifier: constraints name it).
    levels : tuple
        Its settings; for a two-level option, ``levels[0]`` is the low (-1) level and
        ``levels[1]`` the high (+1) one.
    apply : str
        One of :data:`APPLY_KINDS`.
    target : str
        For ``env``, the variable's name; for ``arg`` and ``build``, the argument with
        ``{value}`` where the level goes; for ``template``, the placeholder's name (the option's).
    """

    name: str
    levels: tuple[Level, ...]
    apply: str
    target: str

    @property
    def binary(self) -> bool:
        return len(self.levels) == 2

    def render(self, level: Level) -> str:
        """The level as text (TOML booleans as ``true``/``false``, as the file writes them)."""
        if isinstance(level, bool):
            return "true" if level else "false"
        return str(level)


@dataclass(frozen=True)
class Constraint:
    """A parsed constraint: its text and its checked expression tree."""

    text: str
    tree: ast.Expression
    names: frozenset[str]

    def holds(self, config: Mapping[str, Level]) -> bool:
        return bool(_evaluate(self.tree.body, config))


@dataclass(frozen=True)
class Template:
    """A file rendered per configuration from ``source`` (``${option}`` placeholders,
    :class:`string.Template`), its path given to the benchmark in the variable ``env``."""

    source: str
    env: str


@dataclass(frozen=True)
class ConfigurationSpace:
    """Options, constraints and the template of one system (``[screen]``)."""

    options: tuple[Option, ...]
    constraints: tuple[Constraint, ...] = ()
    template: Template | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        raise ConfigError(f"[screen]: unknown option {name!r} (options: {', '.join(self.names)})")

    @property
    def size(self) -> int:
        """Configurations in the unconstrained space."""
        return math.prod(len(o.levels) for o in self.options)

    def valid(self, config: Mapping[str, Level]) -> bool:
        """Whether every constraint holds for ``config`` (a level for every option)."""
        return all(c.holds(config) for c in self.constraints)

    def violated(self, config: Mapping[str, Level]) -> tuple[str, ...]:
        """The texts of the constraints ``config`` breaks."""
        return tuple(c.text for c in self.constraints if not c.holds(config))

    def check_config(self, config: Mapping[str, object], where: str = "configuration") -> dict[str, Level]:
        """``config`` with every option at a known level, or a one-line error naming the first
        unknown option or level."""
        out: dict[str, Level] = {}
        for name, level in config.items():
            option = self.option(name)
            if level not in option.levels or isinstance(level, bool) != any(isinstance(x, bool) for x in option.levels):
                raise ConfigError(f"{where}: option {name!r} has no level {shown(level)} "
                                  f"(levels: {', '.join(option.render(x) for x in option.levels)})")
            out[name] = level  # type: ignore[assignment]
        missing = [n for n in self.names if n not in out]
        if missing:
            raise ConfigError(f"{where}: no level given for option {missing[0]!r}")
        return out


# ----------------------------------------------------------------------------- parsing
def parse_space(table: object, *, where: str = "regbench.toml") -> ConfigurationSpace:
    """The ``[screen]`` table as a :class:`ConfigurationSpace`.

    Raises
    ------
    ConfigError
        One line naming the file, the table and the key: an option without levels, a duplicate
        option or level, an option applied in no way or in two, a constraint that does not parse,
        names an unknown option or compares to a level the option does not have, or constraints
        that no configuration satisfies.
    """
    def fail(msg: str) -> NoReturn:
        raise ConfigError(f"{where}: {msg}")

    if not isinstance(table, dict):
        fail("[screen] must be a table")
    bad = set(table) - {"option", "constraints", "template"}
    if bad:
        fail(f"[screen]: unknown key `{sorted(bad)[0]}` (expected option, constraints, template)")
    raw = table.get("option", [])
    if not isinstance(raw, list) or not raw:
        fail("[screen] needs at least one [[screen.option]]")
    options: list[Option] = []
    for k, item in enumerate(raw, start=1):
        options.append(_option(item, f"[[screen.option]] #{k}", fail))
        if sum(o.name == options[-1].name for o in options) > 1:
            fail(f"[[screen.option]] #{k}: duplicate option name {options[-1].name!r}")
    template = None
    if "template" in table:
        t = table["template"]
        if not isinstance(t, dict) or set(t) != {"source", "env"} or not all(
                isinstance(v, str) and v for v in t.values()):
            fail("[screen] `template` must be a table { source = \"FILE\", env = \"VARIABLE\" }")
        if not _NAME.match(t["env"]):
            fail(f"[screen] `template`: `env` must be a variable name, got {shown(t['env'])}")
        template = Template(source=t["source"], env=t["env"])
    if any(o.apply == "template" for o in options) and template is None:
        name = next(o.name for o in options if o.apply == "template")
        fail(f"[[screen.option]] {name!r}: applied through the template, but [screen] has no `template`")
    texts = table.get("constraints", [])
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(c, str) for c in texts):
        fail("[screen] `constraints` must be a list of expressions (strings)")
    space = ConfigurationSpace(tuple(options), template=template)
    constraints = tuple(parse_constraint(text, space, where=f"{where}: [screen] constraint {k}")
                        for k, text in enumerate(texts, start=1))
    space = ConfigurationSpace(tuple(options), constraints, template)
    check_not_empty(space, where=where)
    return space


def _option(item: object, label: str, fail: Callable[[str], NoReturn]) -> Option:
    if not isinstance(item, dict):
        fail(f"{label} must be a table")
    bad = set(item) - {"name", "levels", *APPLY_KINDS}
    if bad:
        fail(f"{label}: unknown key `{sorted(bad)[0]}` (expected name, levels, and one of {', '.join(APPLY_KINDS)})")
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.match(name) or name in _KEYWORDS:
        fail(f"{label}: `name` must be an identifier (letters, digits, _), got {shown(name)}")
    label = f"[[screen.option]] {name!r}"
    levels = item.get("levels")
    if (not isinstance(levels, list) or len(levels) < 2
            or not all(isinstance(x, str | int | float) for x in levels)):
        fail(f"{label}: `levels` must be a list of at least two strings, numbers or booleans")
    if len({(type(x), x) for x in levels}) != len(levels):
        fail(f"{label}: `levels` has a duplicate level")
    kinds = [k for k in APPLY_KINDS if k in item]
    if len(kinds) != 1:
        fail(f"{label}: give exactly one of {', '.join(APPLY_KINDS)} (how the option reaches the benchmark)")
    kind = kinds[0]
    target = item[kind]
    if kind == "env":
        if not isinstance(target, str) or not _NAME.match(target):
            fail(f"{label}: `env` must be a variable name, got {shown(target)}")
    elif kind == "template":
        if target is not True:
            fail(f"{label}: `template` must be true (the level replaces ${{{name}}} in the template)")
        target = name
    elif not isinstance(target, str) or "{value}" not in target:
        fail(f"{label}: `{kind}` must be a string with {{value}} where the level goes, "
             f"such as \"--{name}={{value}}\", got {shown(target)}")
    return Option(name=name, levels=tuple(levels), apply=kind, target=str(target))


def parse_constraint(text: str, space: ConfigurationSpace, *, where: str = "constraint") -> Constraint:
    """Parse one constraint over ``space``'s options.

    Only these nodes are accepted: a boolean operation (``and``, ``or``), ``not``, a comparison
    (``== != < <= > >= in`` and ``not in``), the name of an option, a constant (string, number,
    boolean) and a tuple or list of constants (for ``in``).  A comparison of an option with a
    constant that is not one of its levels is refused (it is a typo: the constraint would never,
    or always, hold).

    Raises
    ------
    ConfigError
        ``WHERE: cannot parse ...`` or ``WHERE: ... not allowed`` in one line.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ConfigError(f"{where}: cannot parse {shown(text)}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError):
        raise ConfigError(f"{where}: cannot parse {shown(text)}") from None
    names: set[str] = set()
    _check(tree.body, space, names, text, where)
    return Constraint(text=text, tree=tree, names=frozenset(names))


def _check(node: ast.AST, space: ConfigurationSpace, names: set[str], text: str, where: str) -> None:
    def refuse(what: str) -> NoReturn:
        raise ConfigError(f"{where}: {what} is not allowed in a constraint ({shown(text)}); use option names, "
                          "constants, comparisons, and, or, not")

    if isinstance(node, ast.BoolOp):
        for v in node.values:
            _check(v, space, names, text, where)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.Not):
            refuse(f"the operator {type(node.op).__name__}")
        _check(node.operand, space, names, text, where)
    elif isinstance(node, ast.Compare):
        if not all(type(op) in _COMPARE for op in node.ops):
            refuse("`is`")
        operands = [node.left, *node.comparators]
        for v in operands:
            _check(v, space, names, text, where)
        # An option compared with a constant: the constant must be one of its levels.
        for a, b in itertools.pairwise(operands):
            for opt_node, const in ((a, b), (b, a)):
                if isinstance(opt_node, ast.Name) and isinstance(const, ast.Constant):
                    option = space.option(opt_node.id)
                    if not any(const.value == x and type(const.value) is type(x) for x in option.levels):
                        raise ConfigError(f"{where}: option {option.name!r} has no level {shown(const.value)} "
                                          f"(levels: {', '.join(option.render(x) for x in option.levels)})")
    elif isinstance(node, ast.Name):
        if node.id not in space.names:
            raise ConfigError(f"{where}: unknown option {node.id!r} in {shown(text)} "
                              f"(options: {', '.join(space.names)})")
        names.add(node.id)
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, str | int | float | bool):
            refuse(f"the constant {shown(node.value)}")
    elif isinstance(node, ast.Tuple | ast.List):
        for v in node.elts:
            if not isinstance(v, ast.Constant):
                refuse("a collection of anything but constants")
            _check(v, space, names, text, where)
    else:
        refuse(f"`{type(node).__name__}`")


def _evaluate(node: ast.AST, config: Mapping[str, Level]) -> object:
    # Walks only the nodes _check accepted; anything else cannot reach here.
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_evaluate(v, config) for v in node.values)
        return any(_evaluate(v, config) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return not _evaluate(node.operand, config)
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, config)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node, config)
            try:
                if not _COMPARE[type(op)](left, right):
                    return False
            except TypeError:  # "wal" < 3: a constraint comparing unlike things never holds
                return False
            left = right
        return True
    if isinstance(node, ast.Name):
        return config[node.id]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_evaluate(v, config) for v in node.elts)
    raise AssertionError(f"unchecked node {type(node).__name__}")  # pragma: no cover


def check_not_empty(space: ConfigurationSpace, *, where: str = "regbench.toml") -> None:
    """Raise a one-line :class:`ConfigError` when no configuration satisfies the constraints.

    Only the options some constraint names are enumerated (the others are free), so the check
    costs the product of their level counts, at most :data:`MAX_CHECKED`.
    """
    if not space.constraints:
        return
    named = [o for o in space.options if any(o.name in c.names for c in space.constraints)]
    count = math.prod(len(o.levels) for o in named)
    if count > MAX_CHECKED:
        raise ConfigError(f"{where}: [screen] constraints name options spanning {count} combinations, more than "
                          f"{MAX_CHECKED} can be checked for an empty space")
    for combo in itertools.product(*(o.levels for o in named)):
        if space.valid(dict(zip((o.name for o in named), combo, strict=True))):
            return
    raise ConfigError(f"{where}: [screen] constraints leave no valid configuration "
                      f"({'; '.join(c.text for c in space.constraints)})")


def configurations(space: ConfigurationSpace, coded: Sequence[Sequence[int]] | np.ndarray) -> list[dict[str, Level]]:
    """Design rows (one column per option, each entry a level index) as configurations."""
    return [{o.name: o.levels[int(i)] for o, i in zip(space.options, row, strict=True)} for row in coded]
