"""imgcheck's own import graph, read with ast (nothing imported): which imgcheck modules each module names."""

from __future__ import annotations

import ast
import os

import imgcheck

PACKAGE = os.path.dirname(imgcheck.__file__)


def module_name(path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(PACKAGE))[: -len(".py")].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def modules() -> dict[str, str]:
    """{dotted module name: path} for every .py file under src/imgcheck (namespace packages included)."""
    out = {}
    for root, _dirs, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                out[module_name(path)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: str, *, type_checking: bool) -> set[str]:
    """Every imgcheck module `path` names in an import: module level and inside functions; the names imported
    only for type checkers too when `type_checking` (a type named across layers couples them as much as a call)."""
    module = module_name(path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not type_checking:
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
