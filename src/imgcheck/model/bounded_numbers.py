"""Versions read from an image or a facts file are bounded before anything parses them.

A version with a longer run of digits than MAX_DIGITS is a bad value: an image's is reported in its notes and
treated as unknown, a facts file's is refused with one line.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

from ..versions.ecosystems import MAX_DIGITS

_TOO_LONG = re.compile(rf"\d{{{MAX_DIGITS + 1}}}")

T = TypeVar("T")


def too_long(text: str) -> bool:
    """A run of more digits than any real number has."""
    return bool(_TOO_LONG.search(text))


def is_version_field(name: str) -> bool:
    return name == "version" or name.endswith("_version") or name == "version_id"


def drop_bad_versions(obj: T, where: str, notes: list[str]) -> T:
    """`obj` (a tree of frozen dataclasses and tuples) with every version field holding a too-long number set to
    None, each named in `notes`."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if isinstance(value, str) and is_version_field(f.name) and too_long(value):
                notes.append(
                    f"{where}.{f.name}: {value[:24]}... is not a version (a number of more than {MAX_DIGITS} digits)"
                )
                changes[f.name] = None if "None" in str(f.type) else ""  # a required version is left empty
            elif dataclasses.is_dataclass(value) or isinstance(value, tuple):
                new = drop_bad_versions(value, f"{where}.{f.name}", notes)
                if new is not value:
                    changes[f.name] = new
        return dataclasses.replace(obj, **changes) if changes else obj
    if isinstance(obj, tuple):
        items = tuple(drop_bad_versions(v, f"{where}[{i}]", notes) for i, v in enumerate(obj))
        return items if any(a is not b for a, b in zip(items, obj)) else obj  # type: ignore[return-value]  # a tuple of the same element types: still T
    return obj


def first_bad_version(obj: Any, where: str) -> str | None:
    """Where a version field holds a too-long number, or None."""
    notes: list[str] = []
    drop_bad_versions(obj, where, notes)
    return notes[0] if notes else None
