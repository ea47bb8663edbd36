"""The message catalogs' formats are what printf prints: an <inttypes.h> macro completes the conversion its "%"
opened ("%" PRIu64 is %lu, not the literal "%lu" a doubled "%%" would mean), so lines with 64-bit numbers match."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from importlib import resources

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools")


def _format_of():
    """tools/printf_formats.py, loaded from its path (tools/ is not a package the tests install)."""
    spec = importlib.util.spec_from_file_location("printf_formats", os.path.join(TOOLS, "printf_formats.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.format_of


def test_inttypes_macros_complete_the_conversion():
    format_of = _format_of()
    assert format_of('"CQ credits %" PRId64 " insufficient"') == "CQ credits %ld insufficient"
    assert format_of('"addr %08" PRIx64 " flags %" PRIu32') == "addr %08lx flags %u"
    assert format_of('"count " SOME_STRING_MACRO " left"') == "count %s left"  # any other macro is a string


def _formats(doc):
    if isinstance(doc, dict):
        if isinstance(doc.get("format"), str):
            yield doc["format"], doc.get("regex")
        for value in doc.values():
            yield from _formats(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _formats(value)


def test_no_catalog_format_prints_a_doubled_percent_before_a_number():
    doubled = re.compile(r"%%l?[uxdi]\b")
    for name in ("nccl_messages.json", "fabric_messages.json"):
        doc = json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text(encoding="utf-8"))
        bad = [fmt for fmt, _ in _formats(doc) if doubled.search(fmt)]
        assert not bad, f"{name}: {bad[:3]}"


def test_a_64_bit_counter_line_is_matched():
    doc = json.loads(resources.files("imgcheck.data.triage").joinpath("nccl_messages.json").read_text(encoding="utf-8"))
    rx = next(m["regex"] for m in doc["messages"] if m["format"].startswith("RAS collective %s:%lu timeout error"))
    assert re.search(rx, "RAS collective 10.0.0.1:4242 timeout error (5s) -- giving up on 2 missing responses")
