"""conda packages: each environment's conda-meta/<name>-<version>-<build>.json, read as installed-package facts.

conda writes one JSON record per package it links into an environment (conda/conda `conda/core/prefix_data.py`,
the `PrefixRecord`): `name`, `version`, `build` (the build string: `py3.10_cuda11.8_cudnn8.7.0_0`), `channel`,
`subdir`. The file name is the same three fields joined by '-' (names may hold '-', versions and builds do not),
so a record too large to keep is still named. Records under conda's package cache (`pkgs/`) are not environments.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from ..model.image import Package
from ..view.fileview import FileView
from ..view.wants import ANY_DIRS, Want

_RECORD = ANY_DIRS + r"conda-meta/[^/]+-[^/-]+-[^/-]+\.json"
# a record lists every file of its package: a large package's record is megabytes; the name is read from the path then
WANTS = (Want(_RECORD, content=True, max_bytes=2 * 1024 * 1024),)
_NAME = re.compile(r"(?P<name>.+)-(?P<version>[^-]+)-(?P<build>[^-]+)\.json")


def _record(data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return {}  # an image's record is untrusted text: fall back to the file name
    return doc if isinstance(doc, dict) else {}


def _text(doc: dict[str, Any], key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) and value else None


def prefix_of(record_path: str) -> str:
    """The environment a record belongs to: the directory holding conda-meta/ (no leading slash)."""
    return posixpath.dirname(posixpath.dirname(record_path))


def extract(view: FileView) -> list[Package]:
    found: list[Package] = []
    for path in view.paths(_RECORD):
        if "/pkgs/" in "/" + path:
            continue  # conda's package cache: unpacked packages, not an environment
        named = _NAME.fullmatch(posixpath.basename(path))
        if named is None:
            continue
        ref = view.file(path)
        doc = _record(ref.data if ref is not None else None)
        found.append(
            Package(
                name=_text(doc, "name") or named.group("name"),
                version=_text(doc, "version") or named.group("version"),
                db="conda",
                path="/" + path,
                layer=view.entries[path].layer if path in view.entries else None,
                build=_text(doc, "build") or named.group("build"),
                channel=_text(doc, "channel"),
            )
        )
    return found
