"""Sources supply layers and the view indexes them: sources/ never imports view/ (at run time, at
any depth), so the two packages cannot form an import cycle. Parsed with ast, and checked by import."""

from __future__ import annotations

import subprocess
import sys

from importgraph import imports_of, modules


def _runtime_imports(path: str) -> set[str]:
    return imports_of(path, type_checking=False)


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
    all_modules = modules()
    graph: dict[str, set[str]] = {}
    sources = sorted(m for m in all_modules if m.startswith("imgcheck.sources"))
    assert "imgcheck.sources.registry" in sources and "imgcheck.sources.enroot" in sources
    for start in sources:
        reached = _reachable(start, all_modules, graph)
        into_view = sorted(m for m in reached if m.startswith("imgcheck.view"))
        if into_view:
            chain, step = [into_view[0]], into_view[0]
            while reached[step]:
                step = reached[step]
                chain.append(step)
            raise AssertionError(f"{start} imports the view: {' <- '.join(chain)}")


def test_the_view_depends_on_sources_only_one_way():
    """The view uses the sources' layer types; were sources to import the view too, this is the cycle."""
    all_modules = modules()
    view_imports = set().union(*(_runtime_imports(p) for m, p in all_modules.items() if m.startswith("imgcheck.view")))
    assert "imgcheck.sources.base" in view_imports  # what the view reads layers through


def test_importing_every_source_loads_no_view_module():
    code = (
        "import importlib, pkgutil, sys\nimport imgcheck.sources as s\n"
        "for m in pkgutil.iter_modules(s.__path__):\n    importlib.import_module('imgcheck.sources.' + m.name)\n"
        "print(sorted(n for n in sys.modules if n.startswith('imgcheck.view')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]"
