"""Triage is registered like the engine: code that names a signature id or a join-note template
that signatures.json lacks fails here, and every join module declares what it handles."""

from __future__ import annotations

import ast
import json
import pathlib
import re
from importlib import resources

from imgcheck.triage import decide, joins
from imgcheck.triage.signatures import load_signatures

TRIAGE = pathlib.Path(decide.__file__).parent
SIG_ID = re.compile(r"^[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+$")
NOTE_KEY = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\.[a-z0-9]+(?:-[a-z0-9]+)*$")
NOT_IDS = {"DMA-BUF"}  # words of log text that look like ids


def _constants(path: pathlib.Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def _template_keys(path: pathlib.Path):
    """The keys passed to JoinContext.note(topic, status, KEY, ...) and .text(KEY, ...)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("note", "text"):
            pos = 2 if node.func.attr == "note" else 0
            if len(node.args) > pos:
                arg = node.args[pos]
                assert isinstance(arg, ast.Constant) and NOTE_KEY.match(arg.value), f"{path.name}: key not a literal"
                yield arg.value


def _doc() -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath("signatures.json").read_text("utf-8"))


def test_every_signature_id_named_in_code_exists():
    ids = {s.id for s in load_signatures().signatures}
    named = {
        (p.relative_to(TRIAGE).as_posix(), c)
        for p in TRIAGE.rglob("*.py")
        for c in _constants(p)
        if SIG_ID.match(c) and c not in NOT_IDS
    }
    assert named, "the scan found no ids: the pattern is wrong"
    missing = sorted(f"{where}: {sid}" for where, sid in named if sid not in ids)
    assert not missing, "code names signature ids that signatures.json lacks: " + ", ".join(missing)


def test_join_modules_declare_known_signatures():
    ids = {s.id for s in load_signatures().signatures}
    for mod in joins.JOINERS:
        assert callable(mod.join), mod.__name__
        assert isinstance(mod.SIGNATURES, tuple), mod.__name__
        assert mod.SIGNATURES or getattr(mod, "ALWAYS", False), f"{mod.__name__} would never run"
        assert set(mod.SIGNATURES) <= ids, f"{mod.__name__}: {set(mod.SIGNATURES) - ids}"
    names = [s for m in joins.JOINERS for s in m.SIGNATURES]
    assert len(names) == len(set(names)), "two join modules claim the same signature"


def test_note_templates_used_and_defined():
    templates = _doc()["join_notes"]["templates"]
    used = {key for p in (TRIAGE / "joins").glob("*.py") if p.name != "context.py" for key in _template_keys(p)}
    assert used
    assert used - set(templates) == set(), "a join names a template signatures.json lacks"
    assert set(templates) - used == set(), "a template no join module uses"
