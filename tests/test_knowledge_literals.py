"""No version number, threshold or driver floor is written in the engine, triage or knowledge code:
each is a sourced matrix row (compat_matrix/), read through imgcheck.knowledge. This test fails when
a version-like literal appears in their Python code (docstrings and comments are free text)."""

from __future__ import annotations

import ast
import pathlib
import re

import imgcheck

SRC = pathlib.Path(imgcheck.__file__).parent
AREAS = ("engine", "triage", "knowledge")
# dotted numbers not glued to a name (IBVERBS_1.8 and MLX5_1.x are symbol-version names, not versions)
VERSION = re.compile(r"(?<![\w.])\d+\.\d+(?:\.\d+)*(?![\w])")
# True constants: (file, literal) pairs that are not knowledge about releases.
ALLOWED: set[tuple[str, str]] = {
    ("triage/render.py", "8"),
    ("triage/render.py", "20"),  # how many lines a rendering shows
}
SMALL_INT = 3  # comparisons with 0..3 are counts and indexes, not thresholds


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def literals_in(path: pathlib.Path, rel: str | None = None) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    skip = _docstrings(tree)
    rel = rel or str(path.relative_to(SRC))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for m in VERSION.findall(node.value):
                if (rel, m) not in ALLOWED:
                    found.append(f"{rel}:{node.lineno}: {m!r} in {node.value[:60]!r}")
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                if (
                    isinstance(side, ast.Constant)
                    and isinstance(side.value, (int, float))
                    and not isinstance(side.value, bool)
                    and abs(side.value) > SMALL_INT
                    and (rel, str(side.value)) not in ALLOWED
                ):
                    found.append(f"{rel}:{node.lineno}: compares with {side.value}")
    return found


def test_no_version_literals_in_engine_triage_knowledge():
    files = [p for area in AREAS for p in sorted((SRC / area).rglob("*.py"))]
    assert len(files) > 10
    hits = [hit for p in files for hit in literals_in(p)]
    assert not hits, "move these into a sourced matrix row:\n" + "\n".join(hits)


def test_the_scan_finds_a_planted_literal(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""Docstring naming 2.13 is free text."""\nFLOOR = "5.12"\nNAME = "IBVERBS_1.8"\n\n'
        "def f(x):\n    return x < 525\n"
    )
    hits = literals_in(planted, "knowledge/planted.py")
    assert len(hits) == 2 and any("'5.12'" in h for h in hits) and any("525" in h for h in hits)
