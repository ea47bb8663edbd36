"""The package graph has no circle and no arrow up (issue 38).

Every import between imgcheck's top-level packages and modules, at run time, inside functions and for type
checkers alike, goes from a higher tier of LAYERS to a lower one or within a tier, and the graph of those
imports has no cycle. A new top-level package must be placed in a tier here; moving one is a design decision
(CONTRIBUTING.md, "Code layout").
"""

from __future__ import annotations

from importgraph import imports_of, modules

# Lowest first. A package may import its own tier and the tiers below it, never one above.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "foundations",
        frozenset(
            {
                "errors",
                "streams",
                "user_text",
                "home",
                "elf",
                "versions",
                "inroot",
                "deadline",
                "fsutil",
                "safejson",
                "driver_dirs",
            }
        ),
    ),
    ("facts and image sources", frozenset({"model", "sources"})),
    ("reading, tables and specs", frozenset({"view", "matrix", "job", "facts_cache"})),
    ("extractors and knowledge", frozenset({"extractors", "knowledge", "shared_cache"})),
    ("engine and node probe", frozenset({"engine", "node"})),
    ("recommend", frozenset({"recommend"})),
    ("library calls", frozenset({"api"})),
    ("uses of the library", frozenset({"recommend_entry", "triage", "verify", "formats"})),
    ("shells", frozenset({"cli", "service"})),
)
TIER = {name: i for i, (_, names) in enumerate(LAYERS) for name in names}


def _top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _package_edges() -> dict[tuple[str, str], list[str]]:
    """{(importer, imported) top-level names: ['module -> module', ...]} for every cross-package import."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module, path in modules().items():
        src = _top(module)
        for target in imports_of(path, type_checking=True):
            dst = _top(target)
            if src and dst and src != dst:
                edges.setdefault((src, dst), []).append(f"{module} -> {target}")
    return edges


def test_every_top_level_package_has_a_tier():
    tops = {_top(m) for m in modules()} - {None}
    missing = sorted(t for t in tops if t not in TIER)
    assert not missing, f"place these in LAYERS (tests/test_architecture.py): {missing}"
    gone = sorted(set(TIER) - tops)
    assert not gone, f"LAYERS names packages that no longer exist: {gone}"


def test_no_arrow_up():
    up = [
        f"{src} (tier {LAYERS[TIER[src]][0]!r}) imports {dst} (tier {LAYERS[TIER[dst]][0]!r}): {sites[0]}"
        for (src, dst), sites in sorted(_package_edges().items())
        if src in TIER and dst in TIER and TIER[dst] > TIER[src]
    ]
    assert not up, "imports from a lower layer to a higher one:\n" + "\n".join(up)


def test_no_circle_between_packages():
    graph: dict[str, set[str]] = {}
    for src, dst in _package_edges():
        graph.setdefault(src, set()).add(dst)
    path: list[str] = []
    done: set[str] = set()

    def walk(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            cycle = walk(nxt)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = walk(start)
        assert cycle is None, "import cycle between packages: " + " -> ".join(cycle)


def test_the_checks_see_type_only_imports():
    """read_options once named the view's types under TYPE_CHECKING: a cycle only a type checker sees."""
    found = imports_of(modules()["imgcheck.sources.read_options"], type_checking=True)
    assert not any(name.startswith("imgcheck.view") for name in found)
    plain = imports_of(modules()["imgcheck.formats.read_stats"], type_checking=True)
    assert "imgcheck.sources.read_options" in plain or "imgcheck.sources.read_options.ReadStats" in plain
