"""Sources supply layers and the view indexes them: sources/ never imports view/ (at run time, at
any depth), so the two packages cannot form an import cycle. Parsed with ast, and checked by import."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import imgcheck

PACKAGE = os.path.dirname(imgcheck.__file__)


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(PACKAGE))[: -len(".py")].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(path: str) -> set[str]:
    """Every imgcheck module `path` imports when it runs: module level and inside functions, not
    the names imported only for type checkers."""
    module = _module_name(path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # `from . import x` names a module
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {name for name in found if name == "imgcheck" or name.startswith("imgcheck.")}


def _modules() -> dict[str, str]:
    out = {}
    for root, _dirs, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                out[_module_name(path)] = path
    return out


def _reachable(start: str, modules: dict[str, str], graph: dict[str, set[str]]) -> dict[str, str]:
    """{module reachable from `start`: the module that imports it} over run-time imports."""
    seen = {start: ""}
    todo = [start]
    while todo:
        current = todo.pop()
        for target in graph.setdefault(current, _runtime_imports(modules[current]) if current in modules else set()):
            if target in modules and target not in seen:
                seen[target] = current
                todo.append(target)
    return seen


def test_no_source_module_reaches_the_view_at_run_time():
    modules = _modules()
    graph: dict[str, set[str]] = {}
    sources = sorted(m for m in modules if m.startswith("imgcheck.sources"))
    assert "imgcheck.sources.registry" in sources and "imgcheck.sources.enroot" in sources
    for start in sources:
        reached = _reachable(start, modules, graph)
        into_view = sorted(m for m in reached if m.startswith("imgcheck.view"))
        if into_view:
            chain, step = [into_view[0]], into_view[0]
            while reached[step]:
                step = reached[step]
                chain.append(step)
            raise AssertionError(f"{start} imports the view: {' <- '.join(chain)}")


def test_the_view_depends_on_sources_only_one_way():
    """The view uses the sources' layer types; were sources to import the view too, this is the cycle."""
    modules = _modules()
    view_imports = set().union(*(_runtime_imports(p) for m, p in modules.items() if m.startswith("imgcheck.view")))
    assert "imgcheck.sources.base" in view_imports  # what the view reads layers through


def test_importing_every_source_loads_no_view_module():
    code = (
        "import importlib, pkgutil, sys\nimport imgcheck.sources as s\n"
        "for m in pkgutil.iter_modules(s.__path__):\n    importlib.import_module('imgcheck.sources.' + m.name)\n"
        "print(sorted(n for n in sys.modules if n.startswith('imgcheck.view')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
