"""Validation of the matrix files against schema.json: one message per problem, never an exception."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Set
from typing import Any

from ..versions.ecosystems import numeric_tuple
from ..versions.mlnx import parse_mlnx
from .refs import ref_maps, reference_problems

# How the engine names a row it needs: its key field's value, or a tuple of its key fields' values
RowKey = str | tuple[str, ...]

_DATE = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?$")
_ALWAYS_ALLOWED = {"note"}
# Nullable types where null means "not known": such a row must say why in `note`.
_NULL_NEEDS_NOTE = {"version", "mlnx_version", "date"}
_RULE_TEXT_FIELDS = ("title", "predicted_error", "mechanism")


def _json(files: dict[str, bytes], path: str, problems: list[str]) -> Any:
    if path not in files:
        problems.append(f"{path}: missing")
        return None
    try:
        return json.loads(files[path])
    except (ValueError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: not valid JSON ({exc})")
        return None


def _check_value(kind: str, value: Any, schema: dict[str, Any]) -> str | None:
    """None if value fits kind, else what is wrong."""
    if kind == "string":
        return None if isinstance(value, str) and value.strip() else "expected a non-empty string"
    if kind == "int":
        return None if isinstance(value, int) and not isinstance(value, bool) else "expected an integer"
    if kind == "scalar":
        return (
            None
            if isinstance(value, (str, int, float)) and not isinstance(value, bool)
            else "expected a number or string"
        )
    if kind == "version":
        if not isinstance(value, str) or not numeric_tuple(value):
            return f"version {value!r} does not parse (expected dotted numbers)"
        return None
    if kind == "mlnx_version":
        return None if isinstance(value, str) and parse_mlnx(value) else f"MLNX version {value!r} does not parse"
    if kind == "date":
        return None if isinstance(value, str) and _DATE.match(value) else f"date {value!r} is not YYYY-MM[-DD]"
    if kind == "severity":
        return (
            None if value in schema.get("severities", ()) else f"severity {value!r} not in {schema.get('severities')}"
        )
    if kind == "text_list":
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            return "expected a list of non-empty strings"
        return None
    if kind == "int_list":
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return "expected a list of integers"
        return None
    if kind == "object":
        return None if isinstance(value, dict) else "expected an object"
    return f"unknown field type {kind!r} in schema.json"


def _check_source(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return None
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return None
    return "needs a source (URL or repo@tag:path, or a non-empty list of them)"


def _check_template(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    try:
        list(string.Formatter().parse(text))
    except ValueError as exc:
        return f"bad {{placeholder}} syntax ({exc})"
    return None


def _check_rule(
    where: str, row: dict[str, Any], fields: dict[str, str], schema: dict[str, Any], problems: list[str]
) -> None:
    for name in _RULE_TEXT_FIELDS:
        if msg := _check_template(row.get(name)):
            problems.append(f"{where}: {name}: {msg}")
    variants = row.get("variants") or {}
    if not isinstance(variants, dict):
        return
    for vname, override in variants.items():
        vwhere = f"{where}: variant {vname!r}"
        if not isinstance(override, dict):
            problems.append(f"{vwhere}: expected an object")
            continue
        for key, value in override.items():
            if key == "confidence":
                if value not in schema["confidences"]:
                    problems.append(f"{vwhere}: confidence {value!r} not in {schema['confidences']}")
                continue
            kind = fields.get(key)
            if kind is None or key in ("id", "family", "variants"):
                problems.append(f"{vwhere}: field {key!r} cannot be overridden")
                continue
            if value is None and kind.endswith("?"):
                continue
            if msg := _check_value(kind.rstrip("?"), value, schema):
                problems.append(f"{vwhere}: {key}: {msg}")
            if msg := _check_template(value):
                problems.append(f"{vwhere}: {key}: {msg}")


def _check_references(tables: dict[str, list[Any]], problems: list[str]) -> None:
    """Every {map[key]} in a rule text names an existing matrix value (matrix/refs.py)."""
    maps = ref_maps(tables)
    for i, row in enumerate(tables.get("rules", ())):
        if not isinstance(row, dict):
            continue
        parts = [(None, row)] + [(name, v) for name, v in (row.get("variants") or {}).items() if isinstance(v, dict)]
        for variant, part in parts:
            texts = [part.get(f) for f in _RULE_TEXT_FIELDS] + list(part.get("fixes") or [])
            where = f"rules.json: row {i} ({row.get('id')})" + (f": variant {variant!r}" if variant else "")
            for text in texts:
                problems.extend(f"{where}: {msg}" for msg in reference_problems(text, maps))


def validate_files(files: dict[str, bytes], required: Mapping[str, Set[RowKey]] | None = None) -> list[str]:
    """Problems with the matrix files, one line each (empty list: valid).

    `required` maps a table to keys the engine looks up (e.g. {"rules": {"RDMA-PABI-MISMATCH"}}).
    """
    problems: list[str] = []
    manifest = _json(files, "matrix.json", problems)
    if isinstance(manifest, dict):
        if not isinstance(manifest.get("version"), str) or not numeric_tuple(manifest["version"]):
            problems.append("matrix.json: 'version' must be a dotted version string")
    elif manifest is not None:
        problems.append("matrix.json: expected a JSON object")
    schema = _json(files, "schema.json", problems)
    if not isinstance(schema, dict) or not isinstance(schema.get("tables"), dict):
        if schema is not None:
            problems.append("schema.json: expected an object with 'tables'")
        return problems
    confidences = schema.get("confidences") or []
    described = {"matrix.json", "schema.json"}
    loaded: dict[str, list[Any]] = {}
    for table, spec in schema["tables"].items():
        path = spec.get("file")
        described.add(path)
        doc = _json(files, path, problems)
        if doc is None:
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            problems.append(f"{path}: expected an object with a 'rows' list")
            continue
        if doc.get("table") != table:
            problems.append(f"{path}: 'table' is {doc.get('table')!r}, schema.json expects {table!r}")
        loaded[table] = doc["rows"]
        fields: dict[str, str] = spec.get("fields", {})
        source_field = spec.get("source_field", "source")
        key = spec.get("key")
        key_fields = [key] if isinstance(key, str) else list(key or [])
        seen: set[Any] = set()
        for i, row in enumerate(doc["rows"]):
            label = row.get(key_fields[0]) if isinstance(row, dict) and key_fields else None
            where = f"{path}: row {i}" + (f" ({label})" if label is not None else "")
            if not isinstance(row, dict):
                problems.append(f"{where}: expected an object")
                continue
            if msg := _check_source(row.get(source_field)):
                problems.append(f"{where}: {msg}")
            if row.get("confidence") not in confidences:
                problems.append(f"{where}: confidence {row.get('confidence')!r} not in {confidences}")
            for name, kind in fields.items():
                if name == source_field:
                    continue
                optional = kind.endswith("?")
                base = kind.rstrip("?")
                if name not in row:
                    if not optional:
                        problems.append(f"{where}: missing field {name!r}")
                    continue
                value = row[name]
                if value is None:
                    if not optional:
                        problems.append(f"{where}: {name} must not be null")
                    elif base in _NULL_NEEDS_NOTE and not row.get("note"):
                        problems.append(f"{where}: {name} is null without a 'note' saying why")
                    continue
                if msg := _check_value(base, value, schema):
                    problems.append(f"{where}: {name}: {msg}")
            for name in row:
                if name not in fields and name not in (source_field, "confidence") and name not in _ALWAYS_ALLOWED:
                    problems.append(f"{where}: unknown field {name!r} (not in schema.json)")
            if key_fields:
                ident = tuple(row.get(k) for k in key_fields)
                if ident in seen:
                    problems.append(f"{where}: duplicate key {ident if len(ident) > 1 else ident[0]!r}")
                seen.add(ident)
            if table == "rules":
                _check_rule(where, row, fields, schema, problems)
        for want in sorted((required or {}).get(table, ()), key=str):
            want_t = want if isinstance(want, tuple) else (want,)
            if want_t not in seen:
                problems.append(f"{path}: the engine needs a row {want!r}, which is missing")
    _check_references(loaded, problems)
    for path in sorted(files):
        if path not in described and not path.endswith(".md"):  # Markdown is documentation for editors
            problems.append(f"{path}: not described by schema.json")
    return problems
