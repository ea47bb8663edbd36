"""Image facts from JSON written by hand or by `imgcheck inspect -o json`: a left-out key is unknown."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, get_args, get_origin, get_type_hints

from ..errors import BadInputError
from .bounded_numbers import first_bad_version
from .image import IMAGE_SCHEMA_VERSION, ImageFacts
from .serde import from_dict

# Bookkeeping, not facts about the image's software: leaving them out says nothing.
_NOT_FACTS = {
    "reference",
    "digest",
    "platform",
    "layers",
    "notes",
    "schema_version",
    "unknown",
    "path",
    "layer",
    "origin",
    "source",
    "ofed_source",
    "soname",
    "driver_file",
    "compat_path",
    "pretty_name",
}


def _dataclass_of(tp: Any) -> type | None:
    """The dataclass inside `X | None`, or None."""
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # hints are classes, never instances
        return tp
    for arg in get_args(tp) if get_origin(tp) is not None else ():
        if isinstance(arg, type) and dataclasses.is_dataclass(arg):
            return arg
    return None


def missing_facts(cls: type, doc: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of the fact fields `doc` leaves out, down through objects it gives (not list items)."""
    out: list[str] = []
    hints = get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name in _NOT_FACTS:
            continue
        path = f"{prefix}{f.name}"
        if f.name not in doc:
            out.append(path)
            continue
        inner = _dataclass_of(hints[f.name])
        if inner is not None and isinstance(doc[f.name], dict):
            out.extend(missing_facts(inner, doc[f.name], path + "."))
    return out


def parse_image_facts(doc: Any, where: str) -> ImageFacts:
    """ImageFacts from parsed JSON; every fact the document leaves out is recorded in `unknown`."""
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: expected a JSON object with image facts")
    version = doc.get("schema_version", IMAGE_SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version > IMAGE_SCHEMA_VERSION:
        raise BadInputError(
            f"{where}: image facts schema_version {version!r} is newer than this imgcheck "
            f"understands ({IMAGE_SCHEMA_VERSION}); upgrade imgcheck"
        )
    facts = from_dict(ImageFacts, doc, where=where)
    bad = first_bad_version(facts, where)
    if bad is not None:
        raise BadInputError(bad)
    left_out = {path: f"not given in {where}" for path in missing_facts(ImageFacts, doc)}
    if not left_out:
        return facts
    return dataclasses.replace(facts, unknown={**left_out, **facts.unknown})
