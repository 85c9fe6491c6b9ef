"""The structure docs/architecture.md describes, checked from the code's own imports.

Every rule here reads the sources with :mod:`ast` (imports inside functions count: a lazy import
is still a dependency; imports under ``if TYPE_CHECKING:`` do not, since they never run).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import regbench
from regbench import errors

ROOT = Path(regbench.__file__).parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


SOURCES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py")) if "migrations" not in p.parts}


def _is_package(name: str) -> bool:
    return SOURCES[name].name == "__init__.py"


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement except those under ``if TYPE_CHECKING:``."""
    out: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                out.append(child)
            visit(child)

    visit(tree)
    return out


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".") if _is_package(importer) else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(name: str) -> list[tuple[str, str | None]]:
    """``(module, imported name or None)`` for every runtime import of a regbench module; a name
    that is itself a submodule is given as the module."""
    tree = ast.parse(SOURCES[name].read_text(encoding="utf-8"))
    out: list[tuple[str, str | None]] = []
    for node in _runtime_imports(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
            continue
        module = _resolve(name, node)
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            out.append((sub, None) if sub in SOURCES else (module, alias.name))
    return out


def regbench_graph() -> dict[str, set[str]]:
    return {name: {m for m, _ in imports_of(name) if m in SOURCES and m != name} for name in SOURCES}


def test_no_import_cycle():
    graph = regbench_graph()
    # Tarjan's strongly connected components: a component of two or more modules is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    assert cycles == []


def _package_of(name: str) -> str:
    return name if _is_package(name) else name.rsplit(".", 1)[0]


def test_no_module_imports_another_modules_private_name():
    wrong = []
    for name in SOURCES:
        for module, imported in imports_of(name):
            if not module.startswith("regbench"):
                continue
            if imported is not None and imported.startswith("_") and not imported.startswith("__"):
                wrong.append(f"{name} imports {imported} from {module}")
            # A private module (``_jsonstream``) belongs to its package: nobody outside imports it.
            leaf = module.rsplit(".", 1)[-1]
            if imported is None and leaf.startswith("_") and module in SOURCES and not leaf.startswith("__") \
                    and _package_of(module) != _package_of(name):
                wrong.append(f"{name} imports the private module {module}")
    assert wrong == []


#: What each layer may not import (DESIGN.md "Architecture"; STYLE.md habits 1, 8, 14).
FORBIDDEN = {
    "regbench.stats": ("regbench.", "sqlalchemy", "rich", "click", "dask", "pandas"),
    "regbench.detect": ("regbench.store", "regbench.run", "regbench.cli", "regbench.report", "regbench.notify",
                        "sqlalchemy", "rich", "click"),
    "regbench.adapters": ("regbench.store", "regbench.run", "regbench.detect", "regbench.cli", "regbench.report",
                          "sqlalchemy", "rich", "click"),
    "regbench.model": ("regbench.", "sqlalchemy", "rich", "click"),
    "regbench.errors": ("regbench.", "sqlalchemy", "rich", "click"),
    "regbench.failures": ("regbench.", "sqlalchemy", "rich", "click"),
    "regbench.store": ("regbench.run", "regbench.detect", "regbench.cli", "regbench.report", "regbench.notify",
                       "rich", "click"),
}
#: Modules a layer may import although a rule above forbids their prefix.
ALLOWED = {
    "regbench.stats": ("regbench.stats",),
    "regbench.model": (),
    "regbench.errors": (),
    "regbench.failures": (),
}


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layers_import_one_way(layer):
    wrong = []
    for name in SOURCES:
        if name != layer and not name.startswith(layer + "."):
            continue
        for module, _ in imports_of(name):
            if any(module.startswith(a) for a in ALLOWED.get(layer, (layer,))):
                continue
            if any(module == f.rstrip(".") or module.startswith(f if f.endswith(".") else f + ".") or module == f
                   for f in FORBIDDEN[layer]):
                wrong.append(f"{name} imports {module}")
    assert wrong == []


def test_only_the_cli_and_report_layers_import_rich():
    wrong = [f"{name} imports {module}" for name in SOURCES for module, _ in imports_of(name)
             if module.split(".")[0] == "rich" and not name.startswith(("regbench.cli", "regbench.report"))]
    assert wrong == []


@pytest.mark.parametrize("package", ["regbench.run", "regbench.detect", "regbench.store", "regbench.stats",
                                     "regbench.adapters", "regbench.notify", "regbench.report",
                                     "regbench.evaluate"])
def test_every_module_of_a_package_is_in_its_docstring_table(package):
    doc = importlib.import_module(package).__doc__ or ""
    modules = [m.name for m in pkgutil.iter_modules([str(SOURCES[package].parent)])
               if not m.name.startswith("_") and m.name != "migrations"]
    missing = [m for m in modules if not re.search(rf"``{m}``", doc)]
    assert missing == [], f"{package}'s docstring does not list {missing}"


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _all_subclasses(sub)
    return out


def test_the_error_tree_in_errors_docstring_lists_every_error():
    for name in SOURCES:  # every module, so that every subclass anywhere is defined
        if not name.endswith(("__main__", ".worker")):
            importlib.import_module(name)
    classes = _all_subclasses(errors.RegbenchError)
    assert {c.__module__ for c in classes} == {"regbench.errors"}, "every error is defined in regbench.errors"
    drawn = re.findall(r"[├└]── (\w+)", errors.__doc__ or "")
    assert sorted(drawn) == sorted(c.__name__ for c in classes)
    # Drawn under its parent: the indentation of a class is one step more than its base's.
    depth = {m.group(2): len(m.group(1)) for m in re.finditer(r"^([ │]*)[├└]── (\w+)", errors.__doc__ or "", re.M)}
    for c in classes:
        base = c.__bases__[0]
        if base is not errors.RegbenchError:
            assert depth[c.__name__] > depth[base.__name__], c


PUBLIC_PACKAGES = ["regbench.stats", "regbench.detect", "regbench.store", "regbench.run", "regbench.adapters",
                   "regbench.notify", "regbench.evaluate"]


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_the_public_surface_is_listed_and_every_listed_name_exists(package):
    """As httpx's test_exported_members: what a package offers is exactly its ``__all__``."""
    mod = importlib.import_module(package)
    listed = list(mod.__all__)
    assert len(listed) == len(set(listed)), f"{package}.__all__ lists a name twice"
    for name in listed:
        assert getattr(mod, name) is not None
    # Names bound in the package that are neither listed nor submodules nor private leak out.
    leaked = [n for n, v in vars(mod).items()
              if not n.startswith("_") and n not in listed and not inspect.ismodule(v)
              and n not in {"annotations", "importlib"}]
    assert leaked == [], f"{package} binds {leaked} without listing them in __all__"
