"""`imgcheck catalog import FILE`: a team's base images as catalog rows (JSON or YAML), without inspecting them.

The rows have the shape of the shipped base_images rows (compat_matrix/schema.json) and may be partial: a
field left out is unknown, and an image whose rdma-core is unknown is listed but never recommended (the
engine cannot judge it). Each row is checked field by field against the schema types before anything is
written, so a bad file changes nothing and says which row and field are wrong, in one line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..errors import BadInputError
from ..fsutil import atomic_write, reading_input
from ..matrix.load import read_files
from ..matrix.schema import _check_value  # the matrix validator's own type checks, so imports obey the same rules
from ..model.report import CONFIDENCES
from .convert import FLAVORS

MAX_IMPORT_BYTES = 8 << 20  # thousands of rows fit; a hostile or mistaken file is refused before parsing
DEFAULT_CONFIDENCE = "reported"  # a team stating what its own image carries
_REQUIRED = ("image",)
NCCL_ORIGINS = ("library", "dpkg", "rpm", "pip")  # how NCCL is installed: decides which one torch loads


def _schema_fields(matrix_path: str | None = None) -> tuple[dict[str, str], dict[str, Any]]:
    files, _ = read_files(matrix_path)
    schema = json.loads(files["schema.json"])
    return schema["tables"]["base_images"]["fields"], schema


def _loader() -> Any:  # a yaml.SafeLoader subclass (yaml ships no type hints)
    """yaml.SafeLoader that keeps numbers as written: `cuda: 12.10` is the version "12.10", not the float 12.1,
    and `tag: 24.10` is the tag "24.10". Only null and booleans are still resolved."""
    import yaml  # type: ignore[import-untyped]  # ships no type hints

    class VersionsAsText(yaml.SafeLoader):  # type: ignore[misc]  # SafeLoader is Any: yaml ships no type hints
        pass

    VersionsAsText.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in ("tag:yaml.org,2002:float", "tag:yaml.org,2002:int")]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return VersionsAsText


def parse_rows(data: bytes, where: str) -> list[Any]:
    """JSON or YAML: a list of rows, or an object with a 'rows' list (the shipped catalog's own shape)."""
    import yaml

    text = data.decode("utf-8", errors="strict") if isinstance(data, bytes) else data
    try:
        doc = json.loads(text)
    except ValueError:
        try:
            doc = yaml.load(text, Loader=_loader())  # a SafeLoader: plain data only, never Python objects
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = f" (line {mark.line + 1})" if mark is not None else ""
            raise BadInputError(f"{where}: neither JSON nor YAML{at}") from None
    rows = doc.get("rows") if isinstance(doc, dict) else doc
    if not isinstance(rows, list) or not rows:
        raise BadInputError(f"{where}: expected a non-empty list of rows (or an object with a 'rows' list)")
    return rows


def check_row(row: object, index: int, where: str, fields: dict[str, str], schema: dict[str, Any]) -> dict[str, Any]:
    """The row with defaults filled (release from tag, confidence, source); BadInputError on the first problem."""
    label = f"{where}: row {index + 1}"
    if not isinstance(row, dict):
        raise BadInputError(f"{label}: expected a mapping of field: value")
    for name in _REQUIRED:
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise BadInputError(f"{label}: needs '{name}' (the image repository, e.g. registry.example/team/base)")
    label = f"{label} ({row['image']})"
    if not row.get("release") and not row.get("tag"):
        raise BadInputError(f"{label}: needs 'tag' or 'release'")
    allowed = set(fields) | {"source", "confidence", "note"}
    for name, value in row.items():
        if name not in allowed:
            raise BadInputError(f"{label}: unknown field {name!r} (known: {', '.join(sorted(allowed))})")
        if value is None or name in ("source", "confidence", "note"):
            continue
        kind = fields[name].rstrip("?")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and kind in ("version", "string"):
            value = row[name] = str(value)  # a JSON number; YAML rows keep numbers as text already
        msg = _check_value(kind, value, schema)
        if msg:
            raise BadInputError(f"{label}: {name}: {msg}")
    if row.get("rdma_flavor") is not None and row["rdma_flavor"] not in FLAVORS:
        raise BadInputError(f"{label}: rdma_flavor {row['rdma_flavor']!r} is not one of {', '.join(FLAVORS)}")
    if row.get("nccl_origin") is not None and row["nccl_origin"] not in NCCL_ORIGINS:
        raise BadInputError(f"{label}: nccl_origin {row['nccl_origin']!r} is not one of {', '.join(NCCL_ORIGINS)}")
    confidence = row.get("confidence", DEFAULT_CONFIDENCE)
    if confidence not in CONFIDENCES:
        raise BadInputError(f"{label}: confidence {confidence!r} is not one of {', '.join(CONFIDENCES)}")
    if row.get("note") is not None and not isinstance(row["note"], str):
        raise BadInputError(f"{label}: note must be text")
    source = row.get("source")
    if source is not None and not (isinstance(source, str) and source.strip()):
        raise BadInputError(f"{label}: source must be a non-empty string (URL, wiki page, Dockerfile path)")
    out = dict(row)
    out["release"] = str(row.get("release") or row["tag"])
    out["confidence"] = confidence
    out["source"] = source or f"imported from {os.path.basename(where)}"
    return out


def read_import(path: str, matrix_path: str | None = None) -> list[dict[str, Any]]:
    with reading_input(path, "a catalog file (JSON or YAML rows)") as fh:
        data = fh.read(MAX_IMPORT_BYTES + 1)
    if len(data) > MAX_IMPORT_BYTES:
        raise BadInputError(f"{path}: larger than {MAX_IMPORT_BYTES // (1 << 20)} MiB; not a catalog of base images")
    try:
        rows = parse_rows(data, path)
    except UnicodeDecodeError:
        raise BadInputError(f"{path}: not UTF-8 text") from None
    fields, schema = _schema_fields(matrix_path)
    checked = [check_row(row, i, path, fields, schema) for i, row in enumerate(rows)]
    seen: set[tuple[str, str]] = set()
    for row in checked:
        key = (row["image"], row.get("tag") or row["release"])
        if key in seen:
            raise BadInputError(f"{path}: {key[0]}:{key[1]} appears twice")
        seen.add(key)
    return checked


def store_rows(
    rows: list[dict[str, Any]], directory: str, imported_from: str, file_name: Callable[[str, str | None], str]
) -> list[str]:
    """One file per image reference (re-importing the same reference replaces it); returns the paths."""
    os.makedirs(directory, exist_ok=True)
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    paths = []
    for row in rows:
        reference = f"{row['image']}:{row.get('tag') or row['release']}"
        doc = {
            "schema_version": 1,
            "reference": reference,
            "added_at": now,
            "imported_from": os.path.abspath(imported_from),
            "row": row,
        }
        path = os.path.join(directory, file_name(reference, None))
        atomic_write(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")
        paths.append(path)
    return paths
